//===- L2Verify.cpp - The rows an l2.methods op checks on its own --------===//
//
// L2.3 backward compatibility, L2.4 update shape match, the batch half of
// L2.5 and the acyclicity of the infer DAG (L2.6), plus the overflow half of
// L2.7. The rows that read the L3 program are in L2Spec.cpp.
//
//===----------------------------------------------------------------------===//
#include "synpl/Dialect/L2/L2Model.h"
#include "synpl/Dialect/L2/L2Ops.h"
#include "synpl/Support/Property.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l2;

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(shape, os);
  os << "]";
  return s;
}

//===----------------------------------------------------------------------===//
// L2.3 backward compatibility
//===----------------------------------------------------------------------===//

static bool containsStraightThrough(Attribute method) {
  if (isa<StraightThroughAttr>(method))
    return true;
  if (auto hybrid = dyn_cast<HybridAttr>(method))
    return containsStraightThrough(hybrid.getPrimary()) ||
           containsStraightThrough(hybrid.getAux());
  return false;
}

/// Whether `op` or an op nested in it holds parameters.
static bool holdsParams(Operation *op) {
  bool found = false;
  op->walk([&](Operation *inner) { found |= !layerParamSlots(inner).empty(); });
  return found;
}

/// A parameter-holding op upstream of `value` (gradients from the output
/// reach it only through the value's producer), or null. A breadth-first
/// walk over producers, so that deep DAGs need no deep native stack.
static Operation *paramsUpstream(Value value) {
  SmallVector<Value> worklist{value};
  llvm::DenseSet<Value> seen{value};
  auto push = [&](Value v) {
    if (seen.insert(v).second)
      worklist.push_back(v);
  };
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (auto result = dyn_cast<OpResult>(v)) {
      Operation *op = result.getOwner();
      if (holdsParams(op))
        return op;
      op->walk([&](Operation *inner) {
        for (Value operand : inner->getOperands())
          push(operand);
      });
      continue;
    }
    Operation *parent = cast<BlockArgument>(v).getOwner()->getParentOp();
    if (!parent || isa<MethodsOp>(parent))
      continue;
    // A recurrent cell's state is also its own previous output: the cell's
    // parameters are upstream across steps.
    if (isa<RecurrentOp>(parent) && holdsParams(parent))
      return parent;
    for (Value operand : parent->getOperands())
      push(operand);
  }
  return nullptr;
}

/// Gradient-based methods need every op between a parameter and the output
/// to be differentiable, unless a straight-through estimator stands in.
static LogicalResult checkDifferentiable(MethodsOp methods, StringRef method) {
  if (containsStraightThrough(methods.getBackward()))
    return success();
  LogicalResult result = success();
  methods.getInfer().walk([&](QuantizeOp q) {
    if (failed(result))
      return;
    Operation *layer = paramsUpstream(q.getInput());
    if (!layer)
      return; // quantizing an input no parameter depends on is fine
    InFlightDiagnostic diag = emitCheckError(q, Property::Consistency, "L2.3");
    diag << method << " cannot differentiate through 'l2.quantize' (its derivative is "
         << "zero almost everywhere), and the parameters of " << describeLayer(layer)
         << " lie upstream of it; use straight_through(estimator: ...) or a "
            "gradient-free backward method";
    diag.attachNote(layer->getLoc()) << "parameters upstream of the quantize";
    result = failure();
  });
  return result;
}

/// DFA sends the output error straight to every layer: it can drive only a
/// plain chain, where each layer has exactly one path to the output.
static LogicalResult checkDfa(MethodsOp methods, DfaAttr dfa) {
  Block &block = methods.getInferBlock();
  auto fail = [&](Operation *at) {
    return emitCheckError(at, Property::Consistency, "L2.3")
           << "dfa(feedback_dim: " << dfa.getFeedbackDim() << ") drives a plain chain "
           << "of layers only; ";
  };
  for (Operation &op : block.without_terminator()) {
    if (isa<RecurrentOp, MixtureOp, GraphOp, DiffusionChainOp>(op))
      return fail(&op) << describeLayer(&op) << " holds a sub-DAG";
    if (isa<AddOp>(op))
      return fail(&op) << describeLayer(&op) << " merges two paths";
  }
  auto numUses = [](Value v) { return std::distance(v.use_begin(), v.use_end()); };
  for (BlockArgument arg : block.getArguments())
    if (!arg.hasOneUse())
      return fail(methods) << "infer input #" << arg.getArgNumber() << " has "
                           << numUses(arg) << " uses";
  for (Operation &op : block.without_terminator())
    for (Value result : op.getResults())
      if (!result.hasOneUse())
        return fail(&op) << "the output of " << describeLayer(&op) << " has "
                         << numUses(result) << " uses";
  YieldOp yield = methods.getInferYield();
  auto out = cast<RankedTensorType>(yield.getValues()[0].getType());
  if (out.getRank() < 1 || out.getShape().back() != dfa.getFeedbackDim())
    return emitCheckError(methods, Property::Consistency, "L2.3")
           << "dfa feedback_dim " << dfa.getFeedbackDim()
           << " must be the width of the output error, the last dimension of " << out;
  return success();
}

static LogicalResult checkBackward(MethodsOp methods, Attribute method) {
  return llvm::TypeSwitch<Attribute, LogicalResult>(method)
      .Case([&](AutodiffAttr a) -> LogicalResult {
        if (ArrayAttr checkpoint = a.getCheckpoint(); checkpoint && !checkpoint.empty()) {
          if (a.getMode() != AutodiffMode::reverse)
            return emitCheckError(methods, Property::Consistency, "L2.3")
                   << "checkpoint applies to reverse-mode autodiff only; forward mode "
                      "keeps no activations";
          llvm::StringSet<> names;
          for (auto &[op, name] : layerNames(methods))
            names.insert(name);
          for (Attribute ref : checkpoint) {
            StringRef name = cast<StringAttr>(ref).getValue();
            if (!names.contains(name))
              return emitCheckError(methods, Property::Consistency, "L2.3")
                     << "autodiff checkpoint names layer \"" << name
                     << "\", which is not in the infer DAG (label a layer with "
                        "`as \"" << name << "\"`)";
          }
        }
        return checkDifferentiable(methods, "autodiff");
      })
      .Case([&](ReinforceAttr) -> LogicalResult {
        YieldOp yield = methods.getInferYield();
        Operation *last = yield.getValues()[0].getDefiningOp();
        if (!isa_and_nonnull<SoftmaxOp>(last))
          return emitCheckError(methods, Property::Consistency, "L2.3")
                 << "reinforce samples from the model's output distribution, but the "
                    "infer DAG does not end in l2.softmax";
        return checkDifferentiable(methods, "reinforce");
      })
      .Case([&](DfaAttr d) -> LogicalResult {
        if (failed(checkDfa(methods, d)))
          return failure();
        return checkDifferentiable(methods, "dfa");
      })
      .Case([&](HybridAttr h) -> LogicalResult {
        if (failed(checkBackward(methods, h.getPrimary())))
          return failure();
        return checkBackward(methods, h.getAux());
      })
      .Default([](Attribute) { return success(); }); // gradient-free or STE
}

//===----------------------------------------------------------------------===//
// L2.4 update shape match
//===----------------------------------------------------------------------===//

static void collectOverrides(Attribute method, SmallVectorImpl<ParamOverrideAttr> &out) {
  llvm::TypeSwitch<Attribute>(method)
      .Case([&](ScheduleAttr s) { collectOverrides(s.getInner(), out); })
      .Case([&](GradientClipAttr g) { collectOverrides(g.getInner(), out); })
      .Case([&](EmaAttr e) { collectOverrides(e.getInner(), out); })
      .Case([&](PerParamAttr p) {
        collectOverrides(p.getOthers(), out);
        if (p.getMatrix())
          collectOverrides(p.getMatrix(), out);
        if (ArrayAttr overrides = p.getOverrides())
          for (Attribute entry : overrides) {
            auto o = cast<ParamOverrideAttr>(entry);
            out.push_back(o);
            collectOverrides(o.getUpdate(), out);
          }
      });
}

/// The optimizer (sgd, adam, muon, lion) that finally updates `param`.
static Attribute leafUpdate(Attribute method, const ParamInfo &param) {
  return llvm::TypeSwitch<Attribute, Attribute>(method)
      .Case([&](ScheduleAttr s) { return leafUpdate(s.getInner(), param); })
      .Case([&](GradientClipAttr g) { return leafUpdate(g.getInner(), param); })
      .Case([&](EmaAttr e) { return leafUpdate(e.getInner(), param); })
      .Case([&](PerParamAttr p) -> Attribute {
        if (ArrayAttr overrides = p.getOverrides())
          for (Attribute entry : overrides)
            if (auto o = cast<ParamOverrideAttr>(entry); o.getParam() == param.name)
              return leafUpdate(o.getUpdate(), param);
        if (p.getMatrix() && param.shape.size() >= 2)
          return leafUpdate(p.getMatrix(), param);
        return leafUpdate(p.getOthers(), param);
      })
      .Default([](Attribute a) { return a; });
}

static LogicalResult checkUpdate(MethodsOp methods) {
  SmallVector<ParamInfo> params = collectParams(methods);
  llvm::StringMap<const ParamInfo *> byName;
  for (const ParamInfo &p : params)
    byName[p.name] = &p;

  SmallVector<ParamOverrideAttr> overrides;
  collectOverrides(methods.getUpdate(), overrides);
  for (ParamOverrideAttr o : overrides) {
    const ParamInfo *param = byName.lookup(o.getParam());
    if (!param) {
      InFlightDiagnostic diag = emitCheckError(methods, Property::Consistency, "L2.4");
      diag << "the update chain overrides parameter \"" << o.getParam()
           << "\", which the infer DAG does not have; its parameters are ";
      llvm::interleaveComma(llvm::map_range(params, [](const ParamInfo &p) {
                              return "\"" + p.name + "\"";
                            }),
                            diag);
      return diag;
    }
    if (ArrayRef<int64_t>(param->shape) != o.getShape()) {
      InFlightDiagnostic diag = emitCheckError(methods, Property::Consistency, "L2.4");
      diag << "the update of \"" << o.getParam() << "\" produces a "
           << shapeString(o.getShape()) << " parameter, but "
           << describeLayer(param->layer) << " has it as " << shapeString(param->shape);
      diag.attachNote(param->layer->getLoc()) << "the layer that owns \"" << param->name
                                              << "\"";
      return diag;
    }
  }

  for (const ParamInfo &p : params) {
    if (!isa<MuonAttr>(leafUpdate(methods.getUpdate(), p)) || p.shape.size() >= 2)
      continue;
    InFlightDiagnostic diag = emitCheckError(methods, Property::Consistency, "L2.4");
    diag << "muon produces orthogonalized matrix updates, but parameter \"" << p.name
         << "\" has shape " << shapeString(p.shape)
         << "; route vectors elsewhere, e.g. per_param<others = adam<...>, "
            "matrix = muon<...>>";
    diag.attachNote(p.layer->getLoc()) << "the layer that owns \"" << p.name << "\"";
    return diag;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// l2.methods region verifier
//===----------------------------------------------------------------------===//

LogicalResult MethodsOp::verifyRegions() {
  if (!isSampleMethod(getSample()))
    return emitOpError("sample must be a sample method (#l2.epoch_shuffle, ...), got ")
           << getSample();
  if (!isBackwardMethod(getBackward()))
    return emitOpError("backward must be a backward method (#l2.autodiff, ...), got ")
           << getBackward();
  if (!isUpdateMethod(getUpdate()))
    return emitOpError("update must be an update method (#l2.adam, ...), got ")
           << getUpdate();

  Block &block = getInferBlock();
  if (block.getNumArguments() == 0)
    return emitOpError("the infer region must take the model's inputs as block arguments");
  for (BlockArgument arg : block.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.hasStaticShape())
      return emitOpError("infer input #")
             << arg.getArgNumber() << " must be a statically shaped tensor, got "
             << arg.getType();
  }
  YieldOp yield = getInferYield();
  if (!yield || yield.getValues().empty())
    return emitOpError("the infer region must end in l2.yield of the model output");

  // L2.6: the infer DAG is a DAG.
  if (failed(verifyAcyclic(block, *this)))
    return failure();

  // L2.5 (batch half): every input is one batch of the sample method.
  int64_t batch = sampleBatch(getSample());
  for (BlockArgument arg : block.getArguments()) {
    auto type = cast<RankedTensorType>(arg.getType());
    if (type.getRank() == 0 || type.getDimSize(0) != batch)
      return emitCheckError(*this, Property::Consistency, "L2.5")
             << "infer input #" << arg.getArgNumber() << " has type " << type
             << ", but the sample method " << getSample() << " gives batches of "
             << batch << " examples; its leading dimension must be " << batch;
  }

  if (failed(checkBackward(*this, getBackward())) || failed(checkUpdate(*this)))
    return failure();

  // L2.7 (overflow half): the estimate must be finite and known.
  if (failed(estimateResources(*this)))
    return emitCheckError(*this, Property::Resource, "L2.7")
           << "the resource estimate (parameters, FLOPs per step, memory) of this "
              "method does not fit in 64 bits";
  return success();
}
