//===- TrainCampaign.cpp - synpl-diff-fuzz --kind=train -------------------===//
#include "TrainCampaign.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace mlir;
using namespace synpl;
using namespace synpl::difffuzz;

namespace {

struct Totals {
  int64_t programs = 0, steps = 0, invalid = 0, failing = 0;
};

/// One recipe's text compiled for one placement and one step checked.
std::vector<Finding> checkText(MLIRContext *ctx, const std::string &syn, StringRef name,
                               bool cuda, Oracle &oracle, Totals &totals) {
  std::string why;
  OwningOpRef<ModuleOp> l1 = compileTraining(ctx, syn, name, cuda, why);
  std::string placement = cuda ? "compiled for the GPU" : "compiled for the CPU";
  if (!l1)
    return {{Finding::CompileError, name.str(), placement, why}};
  StepCase step;
  // The step's state and batch: one fixed seed, so that a reproducer file
  // draws the numbers its campaign drew.
  if (!referenceStep(*l1, /*seed=*/1, step, why)) {
    ++totals.invalid;
    return {{Finding::ReferenceError, name.str(), placement, why}};
  }
  ++totals.steps;
  std::vector<Finding> findings = oracle.checkCases(*l1, {step});
  for (Finding &f : findings)
    f.graph = name.str();
  return findings;
}

/// The findings that count as failures (a program that is not a valid
/// test is counted apart).
std::vector<Finding> failures(std::vector<Finding> findings) {
  std::vector<Finding> out;
  for (Finding &f : findings)
    if (f.kind != Finding::ReferenceError && f.kind != Finding::Refused)
      out.push_back(std::move(f));
  return out;
}

std::string describe(const Finding &f) {
  std::string s = Finding::kindName(f.kind);
  if (!f.config.empty())
    s += " (" + f.config + ")";
  return s + ": " + f.message;
}

void writeReproducer(int64_t seed, const TrainRecipe &original, const TrainRecipe &reduced,
                     const Finding &f, const TrainCampaignOptions &options) {
  std::string path = options.out + "/diff-train-seed-" + std::to_string(seed) + ".syn";
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    llvm::errs() << "synpl-diff-fuzz: cannot write " << path << ": " << ec.message() << "\n";
    return;
  }
  const std::string &plant = options.oracle.plant;
  os << "// Found by synpl-diff-fuzz --kind=train, seed " << seed << ": " << describe(f) << "\n";
  os << "// Reduced from " << original.summary() << "\n";
  os << "// RUN: " << (plant.empty() ? "" : "not ") << "synpl-diff-fuzz --check %s"
     << reproduceFlags(f, options.narrowTo(f)) << (plant.empty() ? "" : " --plant=" + plant)
     << "\n";
  os << reduced.syn();
  llvm::outs() << "  reproducer: " << path << "\n";
}

} // namespace

TrainRecipe synpl::difffuzz::reduceTraining(
    const TrainRecipe &recipe, const std::function<bool(const TrainRecipe &)> &stillFails,
    int maxCandidates, int &candidates) {
  TrainRecipe best = recipe;
  auto smaller = [](const TrainRecipe &r) {
    std::vector<TrainRecipe> out;
    for (size_t i = 0; i < r.layers.size(); ++i) {
      TrainRecipe c = r;
      c.layers.erase(c.layers.begin() + i);
      out.push_back(c);
      for (size_t j = 0; r.layers[i].body.size() > 1 && j < r.layers[i].body.size(); ++j) {
        TrainRecipe d = r;
        d.layers[i].body.erase(d.layers[i].body.begin() + j);
        out.push_back(d);
      }
    }
    if (r.penalty > 0) {
      TrainRecipe c = r;
      c.penalty = 0;
      out.push_back(c);
    }
    for (size_t i = 0; i < r.update.wrappers.size(); ++i) {
      TrainRecipe c = r;
      c.update.wrappers.erase(c.update.wrappers.begin() + i);
      out.push_back(c);
    }
    if (r.update.base != UpdateSpec::Sgd) {
      TrainRecipe c = r;
      c.update.base = UpdateSpec::Sgd;
      c.update.lr = 0.05;
      out.push_back(c);
    }
    auto shrink = [&](auto field) {
      for (int64_t to : {int64_t(1), int64_t(2)}) {
        TrainRecipe c = r;
        int64_t &v = field(c);
        if (v > to) {
          v = to;
          out.push_back(c);
        }
      }
      TrainRecipe c = r;
      int64_t &v = field(c);
      if (v > 2) {
        v = v / 2;
        out.push_back(c);
      }
    };
    shrink([](TrainRecipe &c) -> int64_t & { return c.batch; });
    if (r.classes > 2) {
      TrainRecipe c = r;
      c.classes = 2;
      out.push_back(c);
    }
    for (size_t d = 0; d < r.in.size(); ++d)
      shrink([d](TrainRecipe &c) -> int64_t & { return c.in[d]; });
    for (size_t i = 0; i < r.layers.size(); ++i)
      if (r.layers[i].kind == TrainLayer::Linear || r.layers[i].kind == TrainLayer::Conv)
        shrink([i](TrainRecipe &c) -> int64_t & { return c.layers[i].n; });
    return out;
  };
  for (bool progress = true; progress && candidates < maxCandidates;) {
    progress = false;
    for (const TrainRecipe &c : smaller(best)) {
      std::string why;
      if (!c.outShape(why))
        continue;
      if (++candidates > maxCandidates)
        break;
      if (stillFails(c)) {
        best = c;
        progress = true;
        break;
      }
    }
  }
  return best;
}

int64_t synpl::difffuzz::runTrainingCampaign(MLIRContext *ctx,
                                             const TrainCampaignOptions &options) {
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  Oracle oracle(options.oracle);
  Totals totals;
  for (int64_t seed = options.first; seed < options.end; ++seed) {
    if (options.seconds > 0 && elapsed() > options.seconds)
      break;
    TrainRecipe recipe = generateTraining(uint64_t(seed));
    std::string name = "t" + std::to_string(seed);
    ++totals.programs;
    std::vector<Finding> found;
    bool gpuTurn = options.cuda && (seed - options.first) % std::max(1u, options.cudaEvery) == 0;
    for (bool cuda : {false, true}) {
      if (cuda ? !gpuTurn : !options.cpu)
        continue;
      for (Finding &f : checkText(ctx, recipe.syn(), name, cuda, oracle, totals)) {
        if (f.kind == Finding::ReferenceError)
          llvm::outs() << "seed " << seed << ": " << describe(f) << "\n";
        else if (f.kind != Finding::Refused)
          found.push_back(std::move(f));
      }
    }
    if (!found.empty()) {
      ++totals.failing;
      const Finding &f = found.front();
      llvm::outs() << "seed " << seed << ": " << describe(f) << "\n  program: "
                   << recipe.summary() << "\n";
      if (options.reduce) {
        OracleOptions narrow = options.narrowTo(f);
        bool cuda = onGpu(f);
        int candidates = 0;
        TrainRecipe small = reduceTraining(
            recipe,
            [&](const TrainRecipe &c) {
              Oracle alone(narrow);
              Totals ignored;
              // The same kind of failure; a compile error in the same phase
              // (the front end, a search, the lowering).
              auto phase = [](const Finding &x) { return StringRef(x.message).split(':').first; };
              for (const Finding &g : failures(checkText(ctx, c.syn(), name, cuda, alone, ignored)))
                if (g.kind == f.kind && (f.kind != Finding::CompileError || phase(g) == phase(f)))
                  return true;
              return false;
            },
            120, candidates);
        llvm::outs() << "  reduced to " << small.summary() << " (" << candidates
                     << " candidates)\n";
        writeReproducer(seed, recipe, small, f, options);
      }
    }
    const OracleStats &s = oracle.stats();
    llvm::outs() << "seed " << seed << ": " << totals.programs << " programs, " << totals.steps
                 << " steps checked in " << s.runs << " runs, " << s.elements
                 << " elements compared (" << s.unbounded << " without a finite bound), "
                 << totals.invalid << " not valid tests, "
                 << totals.failing << " failing, " << llvm::format("%.0f", elapsed()) << " s\n";
    llvm::outs().flush();
    if (options.stopAtFirst && totals.failing)
      break;
  }
  llvm::outs() << totals.programs << " training programs, " << totals.failing << " failing\n";
  return totals.failing;
}

int synpl::difffuzz::checkTrainingFile(MLIRContext *ctx, StringRef path,
                                       const TrainCampaignOptions &options) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    llvm::errs() << "synpl-diff-fuzz: cannot read " << path << ": "
                 << buffer.getError().message() << "\n";
    return 2;
  }
  Oracle oracle(options.oracle);
  Totals totals;
  std::vector<Finding> all;
  for (bool cuda : {false, true}) {
    if (cuda ? !options.cuda : !options.cpu)
      continue;
    for (Finding &f : checkText(ctx, (*buffer)->getBuffer().str(), path, cuda, oracle, totals))
      all.push_back(std::move(f));
  }
  for (const Finding &f : all)
    llvm::outs() << path << ": " << describe(f) << "\n";
  std::vector<Finding> failed = failures(all);
  const OracleStats &s = oracle.stats();
  llvm::outs() << "checked " << totals.steps << " training steps in " << s.runs << " runs, "
               << s.elements << " elements (" << s.unbounded << " without a finite bound): "
               << (!failed.empty() ? "FAILED" : totals.steps ? "all agree" : "not a valid test")
               << "\n";
  return failed.empty() && totals.steps ? 0 : 1;
}
