//===- L3ToL2.cpp - --synpl-l3-to-l2: search an L2 method per model --------===//
//
// For every l3.model without an l2.methods, searches
//
//   sample x architecture x backward x update
//
// with synpl::search: enumerate (Grammar.cpp), filter with the L2 verifiers
// (each candidate is built as a real l2.methods op in a scratch module and
// verified; a rejection is charged to the check its diagnostic names),
// score (CostModel.cpp), select. The winner is written after the last op of
// the module as `l2.methods @<model>_method for @<model>`; a failed search
// is a SearchFailure at the model.
//
//===----------------------------------------------------------------------===//
#include "L3ToL2.h"

#include "synpl/Conversion/Passes.h"
#include "synpl/Dialect/L2/L2Dialect.h"
#include "synpl/Support/Property.h"
#include "synpl/Support/Units.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringSwitch.h"

#include <memory>

namespace synpl {
#define GEN_PASS_DEF_L3TOL2
#include "synpl/Conversion/Passes.h.inc"
} // namespace synpl

using namespace mlir;
using namespace synpl;
using namespace synpl::l3tol2;

namespace {

/// What the L2 verifiers said about one candidate.
struct Verdict {
  std::string check;  ///< empty: it verified
  std::string reason; ///< the verifier's message
  l2::ResourceEstimate est;
};

struct Candidate {
  Choice choice;
  /// Filled by the first filter that looks (the filters see the candidate
  /// as const); shared by the copies the driver makes.
  mutable std::shared_ptr<Verdict> verdict;
};

/// The search's checks: the L2 verification rows, split where a row checks
/// several constraints, so that a failure names the binding one.
constexpr llvm::StringLiteral kChecks[] = {
    "shape",          // L2.1
    "output-domain",  // L2.2
    "depth",          // L2.2
    "width",          // L2.2
    "param_budget",   // L2.2
    "causal",         // L2.2
    "hint",           // L2.2 (escape hatches)
    "backward",       // L2.3
    "update",         // L2.4
    "sample-data",    // L2.5
    "acyclic",        // L2.6
    "latency_budget", // L2.7
    "estimate",       // L2.7 (overflow)
    "verifier",       // anything else an op verifier rejects
};

/// The check a verifier diagnostic (`[consistency] L2.2: ...`) belongs to.
StringRef classify(StringRef message) {
  size_t row = message.find("L2.");
  StringRef id = row == StringRef::npos ? "" : message.substr(row, 4);
  if (id == "L2.1")
    return "shape";
  if (id == "L2.2") {
    if (message.contains("stages (linear"))
      return "depth";
    if (message.contains(" wide, but"))
      return "width";
    if (message.contains("param_budget"))
      return "param_budget";
    if (message.contains("is causal"))
      return "causal";
    if (message.contains("escape hatch"))
      return "hint";
    return "output-domain";
  }
  if (id == "L2.3")
    return "backward";
  if (id == "L2.4")
    return "update";
  if (id == "L2.5")
    return "sample-data";
  if (id == "L2.6")
    return "acyclic";
  if (id == "L2.7")
    return message.contains("latency_budget") ? "latency_budget" : "estimate";
  return "verifier";
}

/// Builds candidates in a scratch module that holds copies of the L3
/// declarations they refer to, and runs the L2 verifiers on them.
class Evaluator {
public:
  Evaluator(ModuleOp source, const Problem &problem)
      : problem(problem), builder(source.getContext()) {
    scratch = ModuleOp::create(source.getLoc());
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(scratch->getBody());
    for (Operation &op : *source.getBody())
      if (isa<l3::DataOp>(op) || &op == problem.model.getOperation())
        builder.clone(op);
  }

  const Verdict &evaluate(const Candidate &c) {
    if (c.verdict)
      return *c.verdict;
    c.verdict = std::make_shared<Verdict>();
    Verdict &v = *c.verdict;
    MLIRContext *ctx = builder.getContext();
    std::string first;
    ScopedDiagnosticHandler capture(ctx, [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error && first.empty())
        first = diag.str();
      return success();
    });
    // The enumeration varies backward and update fastest: the infer DAG of
    // the previous candidate is reused when only those differ.
    std::string key = c.choice.arch.str();
    l2::MethodsOp methods = last;
    if (!methods || key != lastKey || c.choice.sample != methods.getSample()) {
      if (last)
        last.erase();
      last = nullptr;
      builder.setInsertionPointToEnd(scratch->getBody());
      FailureOr<l2::MethodsOp> built =
          buildMethods(builder, problem.model.getLoc(),
                       (problem.model.getSymName() + "_method").str(), problem, c.choice);
      if (failed(built)) {
        v.check = "shape";
        v.reason = first.empty() ? std::string("the infer DAG does not build") : first;
        return v;
      }
      methods = *built;
      last = methods;
      lastKey = key;
    } else {
      methods.setBackwardAttr(c.choice.backward);
      methods.setUpdateAttr(c.choice.update);
    }
    bool ok = succeeded(mlir::verify(methods));
    if (ok) {
      SymbolTableCollection symbols;
      ok = succeeded(methods.verifySymbolUses(symbols));
    }
    if (ok) {
      FailureOr<l2::ResourceEstimate> est = l2::estimateResources(methods);
      if (succeeded(est))
        v.est = *est;
      else
        first = "L2.7: the resource estimate does not fit in 64 bits", ok = false;
    }
    if (!ok) {
      v.check = classify(first).str();
      v.reason = first.empty() ? std::string("rejected by a verifier") : first;
    }
    return v;
  }

private:
  const Problem &problem;
  OpBuilder builder;
  OwningOpRef<ModuleOp> scratch;
  l2::MethodsOp last; ///< the previous candidate, kept for reuse
  std::string lastKey;
};

std::string shortUpdate(Attribute update) {
  if (auto s = dyn_cast<l2::ScheduleAttr>(update))
    return "schedule(" + shortUpdate(s.getInner()) + ")";
  std::string text = methodString(update);
  return text.substr(0, text.find('<'));
}

std::string describe(const Choice &c) {
  std::string s = methodString(c.sample);
  s = s.substr(0, s.find('<')) + "(" + std::to_string(batchOf(c.sample)) + ") " +
      c.arch.str() + " " + methodString(c.backward) + " " + shortUpdate(c.update);
  return s;
}

/// A grammar family whose bounds leave no architecture at all: says what
/// the smallest one needs.
LogicalResult emitEmptyGrammar(l3::ModelOp model, const Problem &p) {
  search::SearchFailure failure;
  failure.kind = search::SearchFailure::Kind::NoCandidates;
  failure.boundary = ("L3->L2 @" + model.getSymName()).str();
  std::string why;
  llvm::raw_string_ostream os(why);
  os << "the grammar has no architecture within depth(" << p.maxDepth << ") and width("
     << p.maxWidth << "): ";
  switch (p.family) {
  case Family::Chain:
    os << "a chain needs depth(1)";
    break;
  case Family::Conv:
    os << "a conv stack needs depth(2) (conv, head) and width(" << kGrammarMinWidth << ")";
    break;
  case Family::Transformer:
    os << "a decoder-only transformer needs depth(5) (embed, attn, the MLP's two linears, "
          "head) and width("
       << 4 * kGrammarMinWidth << ") (its MLP is 4 x dim wide, dim >= " << kGrammarMinWidth
       << ")";
    break;
  }
  failure.reason = why;
  return search::emitSearchFailure(model, failure);
}

struct L3ToL2Pass : public synpl::impl::L3ToL2Base<L3ToL2Pass> {
  using L3ToL2Base::L3ToL2Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::DenseSet<Attribute> lowered;
    for (auto methods : module.getOps<l2::MethodsOp>())
      lowered.insert(methods.getModelAttr().getAttr());
    SmallVector<l3::ModelOp> models;
    for (auto model : module.getOps<l3::ModelOp>())
      if (!lowered.contains(model.getSymNameAttr()))
        models.push_back(model); // idempotent: a model with a method is done
    bool failedAny = false;
    for (l3::ModelOp model : models)
      failedAny |= failed(lowerModel(module, model));
    if (failedAny)
      signalPassFailure();
  }

  /// The escape hatches l2::sample / l2::backward / l2::update.
  LogicalResult readHints(l3::ModelOp model, const Problem &problem, Attribute &sample,
                          Attribute &backward, Attribute &update,
                          std::shared_ptr<const InferHint> &infer,
                          SmallVectorImpl<std::string> &spelled) {
    ArrayAttr hints = model.getHintsAttr();
    if (!hints)
      return success();
    for (Attribute entry : hints) {
      auto hint = dyn_cast<l3::HintAttr>(entry);
      if (!hint || hint.getLayer() != "l2")
        continue;
      std::string written =
          ("#[l2::" + hint.getDirective() + "(" + hint.getArgs() + ")]").str();
      auto fail = [&]() { return emitCheckError(model, Property::Consistency, "L2.2"); };
      if (hint.getDirective() == "infer") {
        if (infer)
          return fail() << "escape hatch " << written << ": a second l2::infer hint on @"
                        << model.getSymName();
        std::string error;
        std::optional<HintValue> tree = parseLayerCall(hint.getArgs(), error);
        if (!tree)
          return fail() << "escape hatch " << written << " is not an infer method: " << error;
        auto parsed = std::make_shared<InferHint>();
        parsed->text = written;
        parsed->tree = std::make_shared<HintValue>(std::move(*tree));
        infer = parsed;
        spelled.push_back(written);
        continue;
      }
      Attribute *slot = llvm::StringSwitch<Attribute *>(hint.getDirective())
                            .Case("sample", &sample)
                            .Case("backward", &backward)
                            .Case("update", &update)
                            .Default(nullptr);
      if (!slot)
        return fail() << "escape hatch " << written << ": the L3->L2 search takes "
                      << "l2::sample, l2::infer, l2::backward and l2::update; '"
                      << hint.getDirective() << "' is none of them";
      if (*slot)
        return fail() << "escape hatch " << written << ": a second l2::"
                      << hint.getDirective() << " hint on @" << model.getSymName();
      std::string error;
      Attribute method =
          parseHintMethod(model.getContext(), hint.getArgs(), problem.outWidth, error);
      if (!method)
        return fail() << "escape hatch " << written << " is not a valid L2 method: "
                      << error;
      bool family = hint.getDirective() == "sample"     ? l2::isSampleMethod(method)
                    : hint.getDirective() == "backward" ? l2::isBackwardMethod(method)
                                                        : l2::isUpdateMethod(method);
      if (!family)
        return fail() << "escape hatch " << written << " names " << method
                      << ", which is not a " << hint.getDirective() << " method";
      *slot = method;
      spelled.push_back(written);
    }
    return success();
  }

  LogicalResult lowerModel(ModuleOp module, l3::ModelOp model) {
    SymbolTableCollection symbols;
    FailureOr<Problem> analyzed = analyzeModel(model, symbols);
    if (failed(analyzed))
      return failure();
    const Problem &problem = *analyzed;
    MLIRContext *ctx = model.getContext();

    Attribute forcedSample, forcedBackward, forcedUpdate;
    std::shared_ptr<const InferHint> forcedInfer;
    SmallVector<std::string> spelled;
    if (failed(readHints(model, problem, forcedSample, forcedBackward, forcedUpdate,
                         forcedInfer, spelled)))
      return failure();
    if (!forcedInfer && countArchitectures(problem) == 0)
      return emitEmptyGrammar(model, problem);

    // The independent axes.
    SmallVector<Attribute> samples, backwards, updates;
    // Token sequences are read as windows of a stream (a text file):
    // stream_window over the sequence length, in batches of 32 or 64
    // windows. Other data is shuffled by epoch.
    bool tokens = problem.family == Family::Transformer;
    if (forcedSample)
      samples.push_back(forcedSample);
    else if (tokens)
      for (int64_t batch : kWindowBatches)
        samples.push_back(l2::StreamWindowAttr::get(ctx, problem.inShape.front(), 1, batch));
    else
      for (int64_t batch : kBatches)
        samples.push_back(l2::EpochShuffleAttr::get(ctx, batch, /*drop_last=*/true));
    if (forcedBackward)
      backwards.push_back(forcedBackward);
    else
      backwards.push_back(l2::AutodiffAttr::get(ctx, l2::AutodiffMode::reverse, nullptr));
    if (forcedUpdate) {
      updates.push_back(forcedUpdate);
    } else {
      // A transformer over a stream trains for a number of steps, not
      // epochs: a short warmup and a larger Adam step (the usual recipe of
      // small decoder-only models).
      auto scheduled = [&](Attribute inner) {
        return l2::ScheduleAttr::get(ctx, tokens ? 100 : 1000, l2::DecayKind::cosine, inner);
      };
      llvm::APFloat b1(0.9), b2(0.999), eps(1e-8);
      updates.push_back(
          scheduled(l2::AdamAttr::get(ctx, llvm::APFloat(tokens ? 1e-3 : 3e-4), b1, b2, eps)));
      updates.push_back(scheduled(
          l2::LionAttr::get(ctx, llvm::APFloat(1e-4), llvm::APFloat(0.9), llvm::APFloat(0.99))));
      updates.push_back(scheduled(l2::SgdAttr::get(ctx, llvm::APFloat(1e-2))));
    }

    Evaluator evaluator(module, problem);
    search::SearchSpec<Candidate> spec;
    spec.name = "L3->L2 @" + model.getSymName().str();
    spec.countCandidates = [&]() -> std::optional<uint64_t> {
      uint64_t axes = samples.size() * backwards.size() * updates.size();
      return saturatingMul(forcedInfer ? 1 : countArchitectures(problem), axes);
    };
    spec.enumerate = [&](llvm::function_ref<bool(Candidate)> yield) {
      auto each = [&](const Architecture &arch) {
        for (Attribute s : samples)
          for (Attribute b : backwards)
            for (Attribute u : updates)
              if (!yield(Candidate{Choice{s, arch, b, u}, nullptr}))
                return false;
        return true;
      };
      if (forcedInfer) {
        Architecture arch;
        arch.family = problem.family;
        arch.hinted = forcedInfer;
        each(arch);
        return;
      }
      enumerateArchitectures(problem, each);
    };
    for (StringRef check : kChecks)
      spec.filters.push_back(
          {check.str(), [&evaluator, check](const Candidate &c) -> std::optional<std::string> {
             const Verdict &v = evaluator.evaluate(c);
             if (v.check != check)
               return std::nullopt;
             return v.reason;
           }});
    spec.score = [&](const Candidate &c) {
      return scoreChoice(problem, c.choice, c.verdict->est);
    };
    spec.describe = [](const Candidate &c) { return describe(c.choice); };

    search::SearchOptions options;
    options.candidateCap = maxCandidates;
    options.budget = std::chrono::milliseconds(budgetMs);
    search::SearchResult<Candidate> result = search::search(spec, options);
    if (!result.succeeded()) {
      const search::SearchFailure &why = result.failure();
      // A forced method that no architecture can take: the hatch is at fault.
      bool hintBinding =
          why.kind == search::SearchFailure::Kind::NoCandidates &&
          ((forcedBackward && why.bindingCheck == "backward") ||
           (forcedUpdate && why.bindingCheck == "update") ||
           (forcedSample && why.bindingCheck == "sample-data") ||
           why.bindingCheck == "hint" || forcedInfer);
      if (hintBinding) {
        const search::FilterStat *stat = nullptr;
        for (const search::FilterStat &f : result.report.filters)
          if (f.name == why.bindingCheck)
            stat = &f;
        InFlightDiagnostic diag = emitCheckError(model, Property::Consistency, "L2.2");
        diag << "escape hatch ";
        llvm::interleaveComma(spelled, diag);
        if (forcedInfer && why.bindingCheck == "shape" && stat) {
          // The hinted DAG itself does not build: its first error says why.
          diag << " does not build: " << stat->firstReason;
        } else {
          diag << (forcedInfer ? " violates the constraints of @" + model.getSymName().str()
                               : std::string(" is incompatible with every candidate "
                                             "architecture"))
               << ": check '" << why.bindingCheck << "' rejected "
               << (stat ? stat->rejected : 0) << " of " << result.report.enumerated;
          if (stat)
            diag << " (first: " << stat->firstRejected << ": " << stat->firstReason << ")";
        }
      } else {
        InFlightDiagnostic diag = search::emitSearchFailure(model, why, &result.report);
        if (why.kind == search::SearchFailure::Kind::TooManyCandidates &&
            (!problem.depthBounded || !problem.widthBounded)) {
          Diagnostic &note = diag.attachNote(model.getLoc());
          note << "@" << model.getSymName() << " declares no "
               << (!problem.depthBounded && !problem.widthBounded ? "depth(n) or width(n)"
                   : !problem.depthBounded                        ? "depth(n)"
                                                                  : "width(n)")
               << "; the grammar's own bounds apply (" << kGrammarMaxDepth << " stages, width "
               << kGrammarMaxWidth << ")";
        }
      }
      search::recordSearchReport(std::move(result.report));
      return failure();
    }
    search::recordSearchReport(result.report);

    // Write the winner after the last op of the module.
    OpBuilder builder(ctx);
    builder.setInsertionPointToEnd(module.getBody());
    std::string base = (model.getSymName() + "_method").str(), name = base;
    for (unsigned k = 1; SymbolTable::lookupSymbolIn(module, name); ++k)
      name = base + "_" + std::to_string(k);
    FailureOr<l2::MethodsOp> built =
        buildMethods(builder, model.getLoc(), name, problem, result.winner->choice);
    if (failed(built))
      return failure(); // the winner was built once already; cannot happen
    l2::MethodsOp methods = *built;
    // The training loop: how long to train is a prior of the search, not a
    // choice it scores (docs/training.md); the program's --epochs overrides.
    // A stream of windows has no test split of files: it trains for a
    // number of steps and validates on the stream's own held-out tail.
    if (problem.family == Family::Transformer)
      methods.setTrainAttr(l2::TrainLoopAttr::get(ctx, 1, "", 0, kStreamSteps));
    else if (epochs > 0)
      methods.setTrainAttr(l2::TrainLoopAttr::get(ctx, epochs, "t10k", 0));
    if (summary) {
      const search::SearchReport &r = result.report;
      methods.emitRemark() << "L3->L2 chose " << describe(result.winner->choice) << " out of "
                           << r.enumerated << " candidates (" << r.survivors << " verified) in "
                           << r.elapsed.count() << " us";
    }
    return success();
  }
};

} // namespace
