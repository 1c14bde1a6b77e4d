//===- synpl-diff-fuzz.cpp - Differential fuzzing of the lowerings --------===//
//
// Generates random well-formed L1 tensor graphs (Generator.h), runs each
// through the reference interpreter and through the host (every tile choice
// at 1 and 2 threads), IPU and CUDA lowerings (Oracle.h), compares within
// derived error bounds (Bounds.h), and shrinks what fails (Reducer.h) into a
// lit test candidate. --kind=train does the same for whole training steps of
// random `.syn` classifiers (Training.h, TrainCampaign.h). docs/fuzzing.md describes the campaign and the CI
// replay.
//
//===----------------------------------------------------------------------===//
#include "Generator.h"
#include "Oracle.h"
#include "Reducer.h"
#include "TrainCampaign.h"

#include "synpl/InitAll.h"
#include "synpl/Dialect/L1/L1Ops.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <map>
#include <set>

using namespace mlir;
using namespace synpl;
using namespace synpl::difffuzz;
namespace cl = llvm::cl;

static cl::OptionCategory category("synpl-diff-fuzz options");
static cl::opt<std::string> kindOpt(
    "kind",
    cl::desc("What to generate: graph (random L1 tensor graphs, many per module) or train "
             "(random .syn classifiers, one training step each); default graph"),
    cl::init("graph"), cl::cat(category));
static cl::opt<std::string> seedsOpt(
    "seeds", cl::desc("Program seeds to run, FIRST:END (END exclusive; default 0:64)"),
    cl::init("0:64"), cl::cat(category));
static cl::opt<unsigned> batchOpt(
    "batch", cl::desc("Programs compiled together in one module (default 16)"), cl::init(16),
    cl::cat(category));
static cl::opt<std::string> threadsOpt(
    "thread-counts", cl::desc("Worker threads to run the kernels with, comma-separated (default 1,2)"),
    cl::init("1,2"), cl::cat(category));
static cl::opt<std::string> tilesOpt(
    "tiles",
    cl::desc("Tile choices of the host lowering, LANESxROWS or `untiled`, comma-separated "
             "(default 16x6,8x3,untiled)"),
    cl::init("16x6,8x3,untiled"), cl::cat(category));
static cl::opt<bool> rotateTilesOpt(
    "rotate-tiles",
    cl::desc("Lower each batch under one of the --tiles choices in turn instead of all of "
             "them (a campaign covers them all at a third of the JIT time)"),
    cl::init(false), cl::cat(category));
static cl::opt<std::string> plantOpt(
    "plant",
    cl::desc("Plant a miscompile in L1 -> L0 (its test-plant-miscompile option, e.g. "
             "join-through-view): the fuzzer's self-test"),
    cl::init(""), cl::cat(category));
static cl::opt<std::string> targetsOpt(
    "targets",
    cl::desc("Targets to check, comma-separated: host (the JIT), ipu21 (the host plan on "
             "the IPU simulator), cuda (the SIMT interpreter); default host"),
    cl::init("host"), cl::cat(category));
static cl::opt<unsigned> cudaEveryOpt(
    "cuda-every",
    cl::desc("With --targets including cuda: check every Nth batch (with --kind=train, "
             "every Nth program) on the GPU too (its interpreter is slow; default 1)"),
    cl::init(1), cl::cat(category));
static cl::opt<bool> reduceOpt("reduce",
                               cl::desc("Shrink each failing program and write it to --out"),
                               cl::init(false), cl::cat(category));
static cl::opt<std::string> outOpt("out",
                                   cl::desc("Directory for reduced reproducers (default .)"),
                                   cl::init("."), cl::cat(category));
static cl::opt<int> maxOpsOpt("max-ops", cl::desc("Most idioms per program (default 14)"),
                              cl::init(14), cl::cat(category));
static cl::opt<double> timeOpt(
    "time", cl::desc("Stop after this many seconds, whatever the seed range (0: no limit)"),
    cl::init(0), cl::cat(category));
static cl::opt<bool> stopOpt("stop-at-first", cl::desc("Stop at the first failing batch"),
                             cl::init(false), cl::cat(category));
static cl::opt<std::string> checkOpt(
    "check",
    cl::desc("Check a reproducer instead of generating programs: the graphs of an L1 file, or "
             "one training step of a .syn program"),
    cl::init(""), cl::cat(category));
static cl::opt<int64_t> printOpt("print", cl::desc("Print the program of this seed and exit"),
                                 cl::init(-1), cl::cat(category));

namespace {

std::vector<int> parseThreads(const std::string &s) {
  std::vector<int> out;
  SmallVector<StringRef> parts;
  StringRef(s).split(parts, ',');
  for (StringRef part : parts)
    if (int n = 0; !part.trim().getAsInteger(10, n) && n > 0)
      out.push_back(n);
  return out;
}

bool parseTiles(const std::string &s, std::vector<std::pair<unsigned, unsigned>> &out) {
  SmallVector<StringRef> parts;
  StringRef(s).split(parts, ',');
  for (StringRef part : parts) {
    part = part.trim();
    if (part == "untiled") {
      out.push_back({0, 0});
      continue;
    }
    auto [l, r] = part.split('x');
    unsigned lanes = 0, rows = 0;
    if (l.getAsInteger(10, lanes) || r.getAsInteger(10, rows) || !lanes || !rows)
      return false;
    out.push_back({lanes, rows});
  }
  return !out.empty();
}

OracleOptions oracleOptions() {
  OracleOptions o;
  o.host = StringRef(targetsOpt).contains("host");
  o.ipu21 = StringRef(targetsOpt).contains("ipu21");
  o.threads = parseThreads(threadsOpt);
  o.tiles.clear();
  parseTiles(tilesOpt, o.tiles);
  o.plant = plantOpt;
  return o;
}


std::string describe(const Finding &f) {
  std::string s = std::string(Finding::kindName(f.kind));
  if (!f.graph.empty())
    s += " in @" + f.graph;
  if (!f.config.empty())
    s += " (" + f.config + ")";
  return s + ": " + f.message;
}

/// A module of `programs` (graph g<seed> each); the seeds that failed to
/// build are left out.
OwningOpRef<ModuleOp> buildModule(MLIRContext *ctx,
                                  const std::vector<std::pair<int64_t, Program>> &programs,
                                  const SizeLimits &limits, int64_t cores, bool cuda) {
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(ctx));
  buildSystem(*module, cuda, cores);
  for (auto &[seed, p] : programs) {
    BuiltGraph built;
    std::string why;
    if (!buildGraph(*module, p, "g" + std::to_string(seed), limits, built, why,
                    cuda ? "gpu_0" : "cpu_0"))
      llvm::errs() << "synpl-diff-fuzz: internal: seed " << seed
                   << " generated a program that does not build: " << why << "\n";
  }
  return module;
}

/// Whether `p` fails as `f` did, run alone under `f`'s configuration.
bool failsLike(MLIRContext *ctx, const Program &p, int64_t seed, int64_t cores,
               const Finding &f, const SizeLimits &limits, OracleOptions options) {
  OwningOpRef<ModuleOp> module = buildModule(ctx, {{seed, p}}, limits, cores, onGpu(f));
  Oracle oracle(options);
  for (const Finding &g : oracle.check(*module)) {
    if (g.kind != f.kind)
      continue;
    if (f.kind != Finding::CompileError)
      return true;
    // The same compile error: the same first words.
    if (StringRef(g.message).take_front(40).split(' ').first ==
        StringRef(f.message).take_front(40).split(' ').first)
      return true;
  }
  return false;
}

/// The options that reproduce `f` alone: its tile choice and thread count.
OracleOptions narrowTo(const Finding &f) {
  OracleOptions o = oracleOptions();
  StringRef config(f.config);
  for (const CudaConfig &c : o.cuda)
    if (c.str() == f.config) {
      o.cuda = {c};
      break;
    }
  for (const Ipu21Config &c : o.ipu21Configs)
    if (c.str() == f.config) {
      o.ipu21Configs = {c};
      o.host = false, o.ipu21 = true;
      break;
    }
  if (config.consume_front("host tile ")) {
    auto [tile, threads] = config.split(", ");
    std::vector<std::pair<unsigned, unsigned>> tiles;
    if (parseTiles(tile.str(), tiles))
      o.tiles = tiles;
    int n = 0;
    if (!threads.split(' ').first.getAsInteger(10, n))
      o.threads = {n};
  }
  return o;
}

void writeReproducer(MLIRContext *ctx, int64_t seed, int64_t cores, const Program &original,
                     const Program &reduced, const Finding &f, const SizeLimits &limits) {
  OwningOpRef<ModuleOp> module = buildModule(ctx, {{seed, reduced}}, limits, cores, onGpu(f));
  std::string path = outOpt + "/diff-seed-" + std::to_string(seed) + ".mlir";
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    llvm::errs() << "synpl-diff-fuzz: cannot write " << path << ": " << ec.message() << "\n";
    return;
  }
  os << "// Found by synpl-diff-fuzz, seed " << seed << ": " << describe(f) << "\n";
  os << "// Reduced from " << original.summary() << "\n//   to " << reduced.summary() << ".\n";
  std::string config = reproduceFlags(f, narrowTo(f));
  os << "// RUN: " << (plantOpt.empty() ? "" : "not ") << "synpl-diff-fuzz --check %s" << config
     << (plantOpt.empty() ? std::string() : " --plant=" + plantOpt) << "\n\n";
  module->print(os);
  llvm::outs() << "  reproducer: " << path << "\n";
}

int checkFile(MLIRContext &ctx) {
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(checkOpt, &ctx);
  if (!module) {
    llvm::errs() << "synpl-diff-fuzz: cannot parse " << checkOpt << "\n";
    return 2;
  }
  Oracle oracle(oracleOptions());
  std::vector<Finding> findings = oracle.check(*module);
  for (const Finding &f : findings)
    llvm::outs() << checkOpt << ": " << describe(f) << "\n";
  const OracleStats &s = oracle.stats();
  llvm::outs() << "checked " << s.graphs << " graphs in " << s.runs << " runs, " << s.elements
               << " elements: " << (findings.empty() ? "all agree" : "FAILED") << "\n";
  return findings.empty() ? 0 : 1;
}

TrainCampaignOptions trainOptions() {
  TrainCampaignOptions t;
  t.oracle = oracleOptions();
  t.cpu = t.oracle.host || t.oracle.ipu21;
  t.cuda = StringRef(targetsOpt).contains("cuda");
  t.cudaEvery = std::max(1u, unsigned(cudaEveryOpt));
  t.reduce = reduceOpt;
  t.stopAtFirst = stopOpt;
  t.out = outOpt;
  t.seconds = timeOpt;
  t.narrowTo = narrowTo;
  return t;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "synpl-diff-fuzz: differential fuzzing of the lowerings from L1\n\n"
      "Generates random well-formed L1 tensor graphs, one per seed, over the whole L1\n"
      "tensor vocabulary; runs each through the double-precision reference interpreter\n"
      "and through the targets of --targets (the host pipeline under every tile choice\n"
      "at 1 and 2 threads, the IPU simulator, the CUDA SIMT interpreter); and compares\n"
      "every result within an error bound derived from the graph's ops and sizes.\n"
      "With --kind=train each seed is instead a random classifier written in .syn\n"
      "(layers, loss, optimizer), compiled from L3 as synplc does; one training step\n"
      "is compared: loss, gradients and every state field after the update, each\n"
      "element within an error bound carried along the reference's own run.\n"
      "Exit status 1 when any program disagrees or fails to compile.\n\n"
      "  synpl-diff-fuzz --seeds=0:1000                  a campaign over 1000 programs\n"
      "  synpl-diff-fuzz --seeds=0:100000 --rotate-tiles a long one, a tile choice per batch\n"
      "  synpl-diff-fuzz --seeds=0:100 --targets=host,ipu21,cuda  every target\n"
      "  synpl-diff-fuzz --kind=train --seeds=0:50       50 training programs\n"
      "  synpl-diff-fuzz --seeds=0:1000 --reduce --out=D shrink each failure into D\n"
      "  synpl-diff-fuzz --check repro.mlir              re-run a reproducer (.mlir, .syn)\n"
      "  synpl-diff-fuzz --print 42                      the program of seed 42\n");

  DialectRegistry registry;
  registerHostCodegen(registry);
  registerCudaCodegen(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  ctx.disableMultithreading(); // the kernels' worker threads are the point
  // Generated programs are never printed with their diagnostics' notes.
  ScopedDiagnosticHandler quiet(&ctx, [](Diagnostic &) { return success(); });

  std::vector<std::pair<unsigned, unsigned>> tiles;
  if (parseThreads(threadsOpt).empty() || !parseTiles(tilesOpt, tiles)) {
    llvm::errs() << "synpl-diff-fuzz: --thread-counts takes counts like 1,2 and --tiles choices "
                    "like 16x6,8x3,untiled\n";
    return 2;
  }
  if (kindOpt != "graph" && kindOpt != "train") {
    llvm::errs() << "synpl-diff-fuzz: --kind takes graph or train, not '" << kindOpt << "'\n";
    return 2;
  }
  bool train = kindOpt == "train";
  if (!checkOpt.empty())
    return StringRef(checkOpt).ends_with(".syn")
               ? checkTrainingFile(&ctx, checkOpt, trainOptions())
               : checkFile(ctx);
  if (train && printOpt >= 0) {
    llvm::outs() << generateTraining(uint64_t(printOpt)).syn();
    return 0;
  }

  GenOptions gen;
  gen.maxOps = std::max(gen.minOps, int(maxOpsOpt));
  if (printOpt >= 0) {
    Program p = generate(&ctx, uint64_t(printOpt), gen);
    OwningOpRef<ModuleOp> module = buildModule(&ctx, {{printOpt, p}}, gen.limits, 1, false);
    llvm::outs() << "// " << p.summary() << "\n";
    module->print(llvm::outs());
    return 0;
  }

  int64_t first = 0, end = 0;
  {
    auto [a, b] = StringRef(seedsOpt).split(':');
    if (a.getAsInteger(10, first) || b.getAsInteger(10, end) || end < first) {
      llvm::errs() << "synpl-diff-fuzz: --seeds takes FIRST:END\n";
      return 2;
    }
  }
  if (reduceOpt && !llvm::sys::fs::is_directory(outOpt)) {
    llvm::errs() << "synpl-diff-fuzz: --out " << outOpt << " is not a directory\n";
    return 2;
  }

  if (train) {
    TrainCampaignOptions t = trainOptions();
    t.first = first, t.end = end;
    return runTrainingCampaign(&ctx, t) ? 1 : 0;
  }

  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  Oracle oracle(oracleOptions());
  bool checkHost =
      StringRef(targetsOpt).contains("host") || StringRef(targetsOpt).contains("ipu21");
  bool checkCuda = StringRef(targetsOpt).contains("cuda");
  int64_t programs = 0, ops = 0, failing = 0;
  std::map<std::string, int64_t> opCounts;
  unsigned batch = std::max(1u, unsigned(batchOpt));
  for (int64_t s = first; s < end; s += batch) {
    if (timeOpt > 0 && elapsed() > timeOpt)
      break;
    std::vector<std::pair<int64_t, Program>> batchPrograms;
    for (int64_t seed = s; seed < std::min<int64_t>(end, s + batch); ++seed) {
      batchPrograms.push_back({seed, generate(&ctx, uint64_t(seed), gen)});
      for (const Step &st : batchPrograms.back().second.steps)
        ++opCounts[opName(st.kind)], ++ops;
    }
    programs += batchPrograms.size();
    if (rotateTilesOpt) {
      OracleOptions o = oracleOptions();
      o.tiles = {o.tiles[size_t((s - first) / batch) % o.tiles.size()]};
      oracle.setOptions(o);
    }
    // The CPU's cores (1, 2, 4 or 8 by batch) change what the
    // split-reductions search chooses.
    int64_t cores = int64_t(1) << (llvm::hash_value(s) % 4);
    // Which programs failed: by graph, or each alone when the whole module
    // failed (a compile error names no graph).
    std::map<int64_t, Finding> failed;
    for (bool cuda : {false, true}) {
      if ((cuda ? !checkCuda : !checkHost) ||
          (cuda && ((s - first) / batch) % std::max(1u, unsigned(cudaEveryOpt)) != 0))
        continue;
      OwningOpRef<ModuleOp> module = buildModule(&ctx, batchPrograms, gen.limits, cores, cuda);
      std::vector<Finding> findings = oracle.check(*module);
      for (const Finding &f : findings) {
        if (!f.graph.empty()) {
          failed.emplace(std::stoll(f.graph.substr(1)), f);
          continue;
        }
        bool named = false;
        for (auto &[seed, p] : batchPrograms) {
          OwningOpRef<ModuleOp> one = buildModule(&ctx, {{seed, p}}, gen.limits, cores, cuda);
          Oracle alone(narrowTo(f));
          for (const Finding &g : alone.check(*one)) {
            Finding culprit = g;
            culprit.graph = "g" + std::to_string(seed);
            failed.emplace(seed, culprit);
            named = true;
          }
        }
        // Only the programs together fail: the batch is the reproducer.
        if (!named) {
          llvm::outs() << "seeds " << s << ".." << s + int64_t(batchPrograms.size()) - 1
                       << " together (each alone passes): " << describe(f) << "\n";
          ++failing;
        }
      }
    }
    for (auto &entry : failed) {
      int64_t seed = entry.first;
      const Finding &f = entry.second;
      ++failing;
      llvm::outs() << "seed " << seed << ": " << describe(f) << "\n";
      if (!reduceOpt)
        continue;
      const Program &p = std::find_if(batchPrograms.begin(), batchPrograms.end(),
                                      [&](auto &e) { return e.first == seed; })
                             ->second;
      OracleOptions narrow = narrowTo(f);
      ReduceStats stats;
      Program small = reduce(
          &ctx, p, gen.limits,
          [&](const Program &c) {
            return failsLike(&ctx, c, seed, cores, f, gen.limits, narrow);
          },
          300,
          stats);
      llvm::outs() << "  reduced to " << small.summary() << " (" << stats.candidates
                   << " candidates)\n";
      writeReproducer(&ctx, seed, cores, p, small, f, gen.limits);
    }
    const OracleStats &st = oracle.stats();
    llvm::outs() << "seeds " << s << ".." << std::min<int64_t>(end, s + batch) - 1 << ": "
                 << programs << " programs, " << ops << " ops, " << st.runs << " runs, "
                 << st.elements << " elements compared, " << st.refused
                 << " refused for resources, " << failing << " failing, "
                 << llvm::format("%.0f", elapsed()) << " s\n";
    llvm::outs().flush();
    if (stopOpt && failing)
      break;
  }
  llvm::outs() << "ops generated:";
  for (auto &[name, n] : opCounts)
    llvm::outs() << " " << name << "=" << n;
  llvm::outs() << "\n" << programs << " programs, " << failing << " failing\n";
  return failing ? 1 : 0;
}
