//===- Autodiff.cpp - L2 -> L1 backward expansion -------------------------===//
//
// Expands `autodiff(mode: reverse)` into explicit l1 tensor ops: the forward
// pass of the L2 infer DAG (in topological order, recurrent cells unrolled,
// sub-graphs inlined), the L3 loss, and the reverse pass, which walks the
// recorded layer instances backwards, applies each one's VJP and sums the
// adjoints of values read more than once (a residual `l2.add`, a shared
// recurrent weight, a parameter that is also in a norm loss term).
//
// Nothing is emitted before every op and loss term is known to be lowerable;
// a graph that would be partial is an error `lowered N of M ops; not
// lowered: ...` instead. Values nothing reads are swept at the end (a tensor
// graph must consume every value, row L1.8).
//
//===----------------------------------------------------------------------===//
#include "GraphBuilder.h"

#include "synpl/Dialect/L2/L2Model.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace synpl;
using namespace synpl::l2tol1;
using namespace synpl::l2tol1::detail;

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<TrainableParam>>
synpl::l2tol1::collectTrainableParams(l2::MethodsOp methods) {
  SmallVector<TrainableParam> params;
  llvm::StringMap<Operation *> owners;
  for (auto &[op, name] : l2::layerNames(methods)) {
    SmallVector<l2::ParamSlot> slots = l2::layerParamSlots(op);
    if (slots.empty())
      continue;
    Type element = getElementTypeOrSelf(op->getResult(0).getType());
    if (!element.isF32())
      return op->emitError() << "L1 holds parameters as f32 tensors, but " << l2::describeLayer(op)
                             << " computes in " << element;
    for (l2::ParamSlot &slot : slots) {
      TrainableParam p;
      p.state = name + "_" + slot.slot.str();
      p.shape = slot.shape;
      p.layer = op;
      // Learned positions start at zero: at first the tokens' embedding
      // alone, which a kaiming matrix of positions would drown.
      if (slot.slot == "gain")
        p.init = l1::InitKind::ones;
      else if (slot.slot == "positions")
        p.init = l1::InitKind::zeros;
      else if (slot.shape.size() >= 2)
        p.init = l1::InitKind::kaiming;
      else
        p.init = l1::InitKind::zeros;
      auto [it, fresh] = owners.try_emplace(p.state, op);
      if (!fresh) {
        InFlightDiagnostic diag = op->emitError()
                                  << "two parameters would both be the actor state @" << p.state
                                  << "; give the layers distinct labels";
        diag.attachNote(it->second->getLoc()) << "the other layer";
        return diag;
      }
      params.push_back(std::move(p));
    }
  }
  return params;
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//


std::string synpl::l2tol1::detail::describeOp(Operation *op) {
  if (auto term = dyn_cast<l3::LossTermOpInterface>(op))
    return (op->getName().getStringRef() + " @" + term.getTermName()).str();
  return l2::describeLayer(op);
}

/// The ops of `block` (terminator excluded) in an order where every op comes
/// after the ops of the block whose results it (or an op nested in it)
/// reads. The infer body is a graph region: its textual order means nothing.
static SmallVector<Operation *> topologicalOrder(Block &block) {
  SmallVector<Operation *> order;
  llvm::DenseSet<Operation *> done, onStack;
  auto producers = [&](Operation *op) {
    SmallVector<Operation *> result;
    op->walk([&](Operation *user) {
      for (Value operand : user->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (def && op->isProperAncestor(def))
          continue;
        while (def && def->getBlock() != &block)
          def = def->getParentOp();
        if (def && def != op)
          result.push_back(def);
      }
    });
    return result;
  };
  struct Frame {
    Operation *op;
    SmallVector<Operation *> deps;
    size_t next = 0;
  };
  for (Operation &root : block.without_terminator()) {
    if (done.contains(&root))
      continue;
    SmallVector<Frame> stack;
    stack.push_back({&root, producers(&root)});
    onStack.insert(&root);
    while (!stack.empty()) {
      Frame &f = stack.back();
      if (f.next < f.deps.size()) {
        Operation *dep = f.deps[f.next++];
        // A cycle is rejected by the L2 verifier (row L2.6); skip it here.
        if (done.contains(dep) || onStack.contains(dep) || dep->hasTrait<OpTrait::IsTerminator>())
          continue;
        onStack.insert(dep);
        stack.push_back({dep, producers(dep)});
        continue;
      }
      done.insert(f.op);
      onStack.erase(f.op);
      order.push_back(f.op);
      stack.pop_back();
    }
  }
  return order;
}



//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

void GraphBuilder::scanInfer(Block &block, unsigned &count, unsigned &failed) {
  for (Operation &opRef : block.without_terminator()) {
    Operation *op = &opRef;
    ++count;
    auto nested = [&](Operation *region) {
      unsigned n = 0;
      region->walk([&](Operation *inner) {
        if (inner != region && !isa<l2::YieldOp>(inner))
          ++n;
      });
      return n;
    };
    auto reject = [&](std::string why) {
      problems.push_back({op, std::move(why)});
      unsigned inner = op->getNumRegions() ? nested(op) : 0;
      count += inner;
      failed += 1 + inner;
    };
    if (auto rec = dyn_cast<l2::RecurrentOp>(op)) {
      if (!rec.getSteps()) {
        reject("until(...) stops on a predicate, and a tensor graph has no control flow "
               "to test it (only recurrent(steps: n) is unrolled)");
        continue;
      }
      unsigned before = failed;
      scanInfer(rec.getCell().front(), count, failed);
      if (failed != before)
        ++failed; // the recurrence itself is then not lowered either
      continue;
    }
    if (auto g = dyn_cast<l2::GraphOp>(op)) {
      unsigned before = failed;
      scanInfer(g.getBody().front(), count, failed);
      if (failed != before)
        ++failed;
      continue;
    }
    if (auto mix = dyn_cast<l2::MixtureOp>(op)) {
      if (mix.getTopK()) {
        reject("top_k routing sends each example to its k best experts, which needs a "
               "sort and a gather of rows that L1 does not have (a mixture without top_k "
               "is lowered)");
        continue;
      }
      auto result = cast<RankedTensorType>(mix.getType());
      if (result.getRank() == 0 || result.getDimSize(0) != mix.getInput().getType().getDimSize(0)) {
        reject("the experts' outputs must keep the input's batch as their first dimension");
        continue;
      }
      unsigned before = failed;
      scanInfer(mix.getGate().front(), count, failed);
      for (Region &expert : mix.getExperts())
        scanInfer(expert.front(), count, failed);
      if (failed != before)
        ++failed;
      continue;
    }
    if (isa<l2::DiffusionChainOp>(op)) {
      reject("a diffusion chain's training step (a random noise level, Gaussian noise "
             "and the denoising objective) has no expansion yet");
      continue;
    }
    std::string why;
    if (!hasRule(op, why)) {
      reject(why);
      continue;
    }
    Type element = getElementTypeOrSelf(op->getResult(0).getType());
    if (!element.isF32()) {
      reject("it computes in " + [&] {
        std::string s;
        llvm::raw_string_ostream os(s);
        os << element;
        return s;
      }() + ", and backward expansion writes f32 tensor ops");
      continue;
    }
    // Its parameters must be among `params`, slot by slot.
    SmallVector<l2::ParamSlot> slots = l2::layerParamSlots(op);
    auto it = layerParams.find(op);
    size_t have = it == layerParams.end() ? 0 : it->second.size();
    if (have != slots.size()) {
      reject("its parameters are not among the trainable parameters given");
      continue;
    }
    for (size_t i = 0; i < slots.size(); ++i) {
      // A split parameter holds one rank's block of the slot's shape.
      SmallVector<int64_t, 4> need(slots[i].shape);
      if (std::optional<uint64_t> axis = params[it->second[i]].shard;
          axis && *axis < need.size() && spec.ranks > 1 && need[*axis] % spec.ranks == 0)
        need[*axis] /= spec.ranks;
      if (ArrayRef<int64_t>(params[it->second[i]].shape) != ArrayRef<int64_t>(need)) {
        reject("its parameter @" + params[it->second[i]].state +
               " does not have the shape the layer needs");
        break;
      }
    }
  }
}

Ref GraphBuilder::resolve(SymbolRefAttr ref) {
  Ref r;
  if (ref.getRootReference() == spec.model.getSymNameAttr() &&
      ref.getNestedReferences().size() == 1) {
    StringRef member = ref.getLeafReference().getValue();
    if (member == "out")
      r.kind = Ref::ModelOut;
    else if (member == "params")
      r.kind = Ref::ModelParams;
    else if (member == "in")
      return resolve(spec.model.getInRef());
    return r;
  }
  for (auto [i, field] : llvm::enumerate(spec.inputFields))
    if (field == ref) {
      r.kind = Ref::Input;
      r.input = static_cast<unsigned>(i);
    }
  return r;
}

void GraphBuilder::scanTerm(Operation *op) {
  auto refText = [](SymbolRefAttr ref) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << ref;
    return s;
  };
  auto unresolved = [&](SymbolRefAttr ref) {
    problems.push_back({op, "it reads " + refText(ref) +
                                ", which is neither the model's in, out or params nor "
                                "one of the graph's input fields"});
  };
  if (auto div = dyn_cast<l3::DivergenceOp>(op)) {
    Ref pred = resolve(div.getPredicted());
    Ref target = resolve(div.getTarget());
    if (pred.kind != Ref::ModelOut) {
      problems.push_back({op, "only a divergence of the model output is lowered; it "
                              "predicts " +
                                  refText(div.getPredicted())});
      return;
    }
    if (!outputDist()) {
      problems.push_back({op, "cross-entropy needs a dist(n) model output; L2 names no "
                              "divergence for other output domains"});
      return;
    }
    if (target.kind != Ref::Input) {
      unresolved(div.getTarget());
      return;
    }
    return;
  }
  if (auto norm = dyn_cast<l3::NormOp>(op)) {
    double p = norm.getP().convertToDouble();
    if (p < 1.0) {
      problems.push_back({op, "norm with p < 1 has an unbounded derivative at 0 (only "
                              "p >= 1 is lowered)"});
      return;
    }
    Ref target = resolve(norm.getTarget());
    if (target.kind == Ref::Unknown)
      unresolved(norm.getTarget());
    return;
  }
  if (auto rec = dyn_cast<l3::ReconstructionOp>(op)) {
    for (SymbolRefAttr ref : {rec.getInput(), rec.getDecoded()})
      if (resolve(ref).kind == Ref::Unknown || resolve(ref).kind == Ref::ModelParams) {
        unresolved(ref);
        return;
      }
    return;
  }
  if (isa<l3::ConstraintOp>(op)) {
    problems.push_back({op, "a constraint term is a predicate; turning it into a "
                            "differentiable penalty is a choice L2 does not record"});
    return;
  }
  if (isa<l3::ContrastiveOp>(op)) {
    problems.push_back({op, "a contrastive loss needs a distance and a margin or temperature "
                            "(and, for in-batch negatives, a pairing of rows), choices L2 "
                            "does not record"});
    return;
  }
  if (auto custom = dyn_cast<l3::CustomOp>(op)) {
    problems.push_back({op, "custom loss \"" + custom.getFn().str() +
                                "\" is opaque: there is no definition to differentiate"});
    return;
  }
  problems.push_back({op, "backward expansion has no rule for this loss term"});
}

LogicalResult GraphBuilder::validate() {
  l2::MethodsOp methods = spec.methods;
  Attribute backward = methods.getBackward();
  autodiff = dyn_cast<l2::AutodiffAttr>(backward);
  if (!autodiff) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << backward;
    return methods.emitError() << "backward method " << s
                               << " is not lowered: backward expansion derives the "
                                  "reverse-mode gradient of autodiff(mode: reverse) only";
  }
  if (autodiff.getMode() != l2::AutodiffMode::reverse)
    return methods.emitError()
           << "autodiff(mode: forward) is not lowered: forward mode needs one pass per "
              "parameter direction; backward expansion writes the reverse-mode pass only";

  names = l2::layerNames(methods);
  if (ArrayAttr list = autodiff.getCheckpoint()) {
    llvm::StringSet<> known;
    for (auto &entry : names)
      known.insert(entry.second);
    for (Attribute a : list) {
      auto name = dyn_cast<StringAttr>(a);
      if (!name || !known.contains(name.getValue()))
        return methods.emitError()
               << "checkpoint names " << a << ", which is no layer of the infer DAG";
      checkpointed.insert(name.getValue());
    }
  }

  for (auto [i, p] : llvm::enumerate(params)) {
    if (!p.layer)
      return graph.emitError() << "trainable parameter @" << p.state << " has no layer";
    layerParams[p.layer].push_back(static_cast<unsigned>(i));
  }

  Block &entry = graph.getEntry();
  if (entry.getNumArguments() != spec.inputFields.size())
    return graph.emitError() << "the graph takes " << entry.getNumArguments() << " arguments, but "
                             << spec.inputFields.size() << " input fields are listed";
  if (!entry.empty())
    return graph.emitError() << "the graph body must be empty before backward expansion";

  Block &infer = methods.getInferBlock();
  if (infer.getNumArguments() != 1 || !methods.getInferYield() ||
      methods.getInferYield().getValues().size() != 1)
    return methods.emitError()
           << "backward expansion needs an infer DAG with one input and one output";
  Ref in = resolve(spec.model.getInRef());
  if (in.kind != Ref::Input)
    return graph.emitError() << "the model's input " << spec.model.getInRef()
                             << " is not among the graph's input fields";
  auto argType = cast<RankedTensorType>(inputValue(in.input).getType());
  auto inferType = cast<RankedTensorType>(infer.getArgument(0).getType());
  if (argType.getShape() != inferType.getShape())
    return graph.emitError() << "the model input arrives as " << argType
                             << ", but the infer DAG takes " << inferType;

  scanInfer(infer, inferOps, inferFailed);
  llvm::SmallBitVector read(spec.inputFields.size());
  read.set(in.input);
  for (l3::LossTermOpInterface term : spec.loss.getTerms()) {
    scanTerm(term.getOperation());
    for (SymbolRefAttr ref : term.getReadRefs()) {
      Ref r = resolve(ref);
      if (r.kind == Ref::Input)
        read.set(r.input);
      if (isa<l3::DivergenceOp>(term) && r.kind == Ref::Input)
        read.set(targetInput(ref));
    }
  }
  if (problems.empty()) {
    // Every argument must be read (row L1.8: a graph consumes its inputs).
    for (auto [i, field] : llvm::enumerate(spec.inputFields))
      if (!read.test(i))
        return graph.emitError() << "input field " << field
                                 << " is read by neither the model nor the loss";
    return success();
  }

  SmallVector<NotLowered> failures;
  for (const Problem &p : problems)
    failures.push_back({p.op, p.why, /*dependent=*/false, describeOp(p.op)});
  reportNotLowered(inferOps - inferFailed, inferOps, failures);
  return failure();
}

//===----------------------------------------------------------------------===//
// Forward
//===----------------------------------------------------------------------===//

void GraphBuilder::recordInstance(Instance inst) {
  // An identity (dropout(0), a flatten of a 2-D value) adds nothing: its
  // output is its input, whose adjoint is the same accumulator.
  if (llvm::is_contained(inst.inputs, inst.output))
    return;
  bool isActive = !inst.params.empty() ||
                  llvm::any_of(inst.inputs, [&](Value v) { return active.contains(v); });
  if (isActive)
    active.insert(inst.output);
  tape.push_back(std::make_unique<Instance>(std::move(inst)));
}

LogicalResult GraphBuilder::lowerOp(Operation *op) {
  auto lookup = [&](Value v) { return mapped.lookup(v); };
  FailureOr<std::optional<UserKernelHint>> userKernel = userKernelHint(op);
  if (failed(userKernel))
    return failure();
  if (*userKernel && isa<l2::RecurrentOp, l2::GraphOp, l2::MixtureOp>(op))
    return op->emitError() << "#[l0::kernel] replaces one layer's kernel; this "
                           << op->getName() << " holds several: put the hatch on a "
                              "layer inside it";
  if (auto rec = dyn_cast<l2::RecurrentOp>(op)) {
    // Unrolled: the cell's ops once per step, reading the same weights.
    Block &cell = rec.getCell().front();
    Value state = lookup(rec.getInit());
    for (uint64_t step = 0; step < *rec.getSteps(); ++step) {
      mapped[cell.getArgument(0)] = state;
      if (failed(lowerBlock(cell)))
        return failure();
      state = lookup(cell.getTerminator()->getOperand(0));
    }
    mapped[rec.getResult()] = state;
    return success();
  }
  if (auto g = dyn_cast<l2::GraphOp>(op)) {
    // Inlined: its nodes are ordinary layers of the DAG.
    Block &body = g.getBody().front();
    for (auto [arg, in] : llvm::zip(body.getArguments(), g.getInputs()))
      mapped[arg] = lookup(in);
    if (failed(lowerBlock(body)))
      return failure();
    for (auto [res, out] : llvm::zip(g.getResults(), body.getTerminator()->getOperands()))
      mapped[res] = lookup(out);
    return success();
  }
  if (auto mix = dyn_cast<l2::MixtureOp>(op)) {
    // Every expert runs (no top_k); the combination is one instance whose
    // inputs are the gate's scores and the experts' outputs.
    Value in = lookup(mix.getInput());
    Instance inst;
    inst.op = op;
    auto lowerRegion = [&](Region &region) -> Value {
      Block &block = region.front();
      mapped[block.getArgument(0)] = in;
      if (failed(lowerBlock(block)))
        return Value();
      return lookup(block.getTerminator()->getOperand(0));
    };
    inst.inputs.push_back(lowerRegion(mix.getGate()));
    for (Region &expert : mix.getExperts())
      inst.inputs.push_back(lowerRegion(expert));
    if (llvm::is_contained(inst.inputs, Value()))
      return op->emitError("backward expansion: a mixture region was not lowered");
    lowerForward(e, inst);
    mapped[mix.getResult()] = inst.output;
    recordInstance(std::move(inst));
    return success();
  }
  Instance inst;
  inst.op = op;
  for (Value operand : op->getOperands())
    inst.inputs.push_back(lookup(operand));
  if (llvm::is_contained(inst.inputs, Value()))
    return op->emitError("backward expansion: an operand was not lowered");
  auto it = layerParams.find(op);
  if (it != layerParams.end())
    for (unsigned idx : it->second)
      inst.params.push_back(paramValues[idx]);
  // A split linear (tensor parallelism) reads the rank.
  if (it != layerParams.end() && !it->second.empty() && params[it->second.front()].shard) {
    if (!isa<l2::LinearOp>(op) || spec.rankField.empty() || spec.ranks < 2)
      return op->emitError("backward expansion: only a linear layer splits its parameters "
                           "over ranks, reading its rank through the window");
    if (!rankValue) {
      e.setLoc(op->getLoc());
      rankValue = e.windowRead(spec.window, spec.rankField, {});
    }
    inst.rank = rankValue;
    inst.ranks = spec.ranks;
    inst.byRows = *params[it->second.front()].shard == 0;
    inst.blockIn = spec.blockInputs.contains(op);
    inst.blockOut = spec.blockOutputs.contains(op);
  }
  if (auto d = dyn_cast<l2::DropoutOp>(op); d && d.getP().convertToDouble() > 0.0) {
    if (spec.stepField.empty() || spec.trainingField.empty())
      return op->emitError("backward expansion: dropout draws random numbers, and the "
                           "window holds no update step and training flag to draw them with");
    if (!randomCounter) {
      e.setLoc(op->getLoc());
      randomCounter = e.windowRead(spec.window, spec.stepField, {});
      trainingFlag = e.windowRead(spec.window, spec.trainingField, {});
    }
    inst.counter = randomCounter;
    inst.training = trainingFlag;
    inst.stream = nextStream++;
  }
  // Channels last between the layers of a convolution stack: a
  // convolution's output, and what activations and pooling make of it,
  // stay [N, spatial..., C] while every layer that reads them takes that
  // layout (channelsLastLayer); the first layer that does not gets them
  // channels first. Between convolutions this saves moving each activation
  // to channels first and its gradient back, and the windows of the next
  // convolution are runs of whole channels.
  if (channelsLastLayer(op)) {
    inst.inLast = channelsLast.contains(inst.inputs.front());
    Value result = op->getResult(0);
    inst.outLast = (isa<l2::ConvOp>(op) || inst.inLast) && !result.use_empty() &&
                   llvm::all_of(result.getUsers(), [](Operation *user) {
                     return channelsLastLayer(user);
                   });
  }
  lowerForward(e, inst);
  if (inst.outLast)
    channelsLast.insert(inst.output);
  if (*userKernel) {
    // The user's kernel computes the output; the backward reads it there.
    SmallVector<Value> operands(inst.inputs.begin(), inst.inputs.end());
    operands.append(inst.params.begin(), inst.params.end());
    e.setLoc(op->getLoc());
    Value out = emitUserKernel(e, **userKernel, operands, inst.output.getType());
    for (Value &saved : inst.saved)
      if (saved == inst.output)
        saved = out;
    inst.output = out;
  }
  mapped[op->getResult(0)] = inst.output;
  recordInstance(std::move(inst));
  return success();
}

LogicalResult GraphBuilder::lowerBlock(Block &block) {
  for (Operation *op : topologicalOrder(block))
    if (failed(lowerOp(op)))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

void GraphBuilder::sweepDeadOps() {
  Block &body = graph.getEntry();
  bool changed = true;
  while (changed) {
    changed = false;
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body))) {
      if (op.hasTrait<OpTrait::IsTerminator>() || !op.use_empty())
        continue;
      op.erase();
      changed = true;
    }
  }
}

FailureOr<TrainingGraphOutputs> GraphBuilder::run() {
  if (failed(validate()))
    return failure();

  Block &body = graph.getEntry();
  ob.setInsertionPointToStart(&body);
  e.setLoc(graph.getLoc());
  l2::MethodsOp methods = spec.methods;
  Block &infer = methods.getInferBlock();

  // Parameters, read through the window, in the order of the gradients.
  e.setLoc(methods.getLoc());
  for (const TrainableParam &p : params) {
    Value v = e.windowRead(spec.window, p.state, p.shape);
    paramValues.push_back(v);
    active.insert(v);
  }
  paramGrads.assign(params.size(), Value());

  // The model input, in the infer DAG's element type.
  Value in = inputValue(resolve(spec.model.getInRef()).input);
  Type inferElement = getElementTypeOrSelf(infer.getArgument(0).getType());
  if (getElementTypeOrSelf(in.getType()) != inferElement)
    in = e.cast(in, inferElement);
  mapped[infer.getArgument(0)] = in;

  auto abandon = [&]() -> FailureOr<TrainingGraphOutputs> {
    // Leave the body empty, as on any other failure.
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
      op.dropAllUses(), op.erase();
    return failure();
  };

  // Forward.
  if (failed(lowerBlock(infer)))
    return abandon();
  modelOutput = mapped.lookup(methods.getInferYield().getValues().front());
  for (const std::unique_ptr<Instance> &inst : tape)
    if (inst->output == modelOutput && isa<l2::SoftmaxOp>(inst->op))
      outputSoftmax = inst.get();

  // Loss terms.
  SmallVector<l3::LossTermOpInterface> termOps = spec.loss.getTerms();
  l3::Combinator combine = spec.loss.getCombine();
  SmallVector<Term> terms;
  TrainingGraphOutputs outputs;
  const Term *labelled = nullptr;
  for (l3::LossTermOpInterface termOp : termOps) {
    Term t;
    t.op = termOp.getOperation();
    double w = termOp.getWeightValue();
    switch (combine) {
    case l3::Combinator::WeightedSum:
    case l3::Combinator::Max:
      t.factor = w;
      break;
    case l3::Combinator::Sum:
      t.factor = 1.0;
      break;
    case l3::Combinator::Mean:
      t.factor = 1.0 / static_cast<double>(termOps.size());
      break;
    }
    e.setLoc(t.op->getLoc());
    if (auto div = dyn_cast<l3::DivergenceOp>(t.op)) {
      int64_t classes = outputDist().getNumClasses();
      t.predicted = modelOutput;
      int64_t rows = Emitter::numel(modelOutput) / classes;
      t.rows = static_cast<double>(rows);
      Value target = inputValue(targetInput(div.getTarget()));
      int64_t perRow = Emitter::numel(target) / rows;
      bool integer = isa<IntegerType>(getElementTypeOrSelf(target.getType()));
      if (Emitter::numel(target) % rows != 0 || perRow != (integer ? 1 : classes)) {
        div.emitError() << "the target arrives as " << target.getType() << ", which is not "
                        << (integer ? "one label" : "one distribution") << " per row of "
                        << modelOutput.getType();
        return abandon();
      }
      t.target = targetRows(target, rows, classes, t.integerLabels);
      if (outputSoftmax) {
        t.kind = TermKind::CrossEntropyLogits;
        t.softmax = outputSoftmax;
      } else {
        t.kind = TermKind::CrossEntropyProbs;
        t.probs = e.reshape(modelOutput, {rows, classes});
      }
    } else if (auto norm = dyn_cast<l3::NormOp>(t.op)) {
      t.p = norm.getP().convertToDouble();
      Ref r = resolve(norm.getTarget());
      if (r.kind == Ref::ModelParams) {
        t.kind = TermKind::NormParams;
      } else {
        // Activations (or an input): the batch mean of sum |x|^p.
        t.kind = TermKind::NormValue;
        t.normed = r.kind == Ref::ModelOut ? modelOutput : inputValue(r.input);
        if (!getElementTypeOrSelf(t.normed.getType()).isF32())
          t.normed = e.cast(t.normed, e.f32());
        ArrayRef<int64_t> s = Emitter::shape(t.normed);
        t.divisor = s.empty() ? 1.0 : static_cast<double>(s[0]);
      }
    } else if (auto rec = dyn_cast<l3::ReconstructionOp>(t.op)) {
      t.kind = TermKind::Reconstruction;
      auto valueOf = [&](SymbolRefAttr ref) {
        Ref r = resolve(ref);
        Value v = r.kind == Ref::ModelOut ? modelOutput : inputValue(r.input);
        return getElementTypeOrSelf(v.getType()).isF32() ? v : e.cast(v, e.f32());
      };
      t.input = valueOf(rec.getInput());
      t.decoded = valueOf(rec.getDecoded());
      if (Emitter::shape(t.input) != Emitter::shape(t.decoded)) {
        if (Emitter::numel(t.input) != Emitter::numel(t.decoded)) {
          rec.emitError() << "reconstruction compares " << t.input.getType() << " with "
                          << t.decoded.getType();
          return abandon();
        }
        t.input = e.reshape(t.input, Emitter::shape(t.decoded));
      }
      t.divisor = static_cast<double>(Emitter::numel(t.decoded));
    }
    terms.push_back(std::move(t));
  }
  for (Term &t : terms) {
    emitTerm(t);
    if (!labelled && t.integerLabels)
      labelled = &t;
  }

  // The loss, and the seed of every term.
  e.setLoc(spec.loss.getLoc());
  Value loss;
  SmallVector<Seed> seeds(terms.size());
  if (combine == l3::Combinator::Max) {
    for (Term &t : terms)
      loss = loss ? e.max(loss, t.value) : t.value;
    if (terms.size() > 1) {
      // d max / d term: 1 for the first term that attains the max.
      Value taken;
      for (auto [t, seed] : llvm::zip(terms, seeds)) {
        Value hit = e.cast(e.cmp(l1::CmpPredicate::ge, t.value, loss), e.f32());
        seed.ind = taken ? e.mul(hit, e.sub(e.cst(1.0), taken)) : hit;
        taken = taken ? e.add(taken, seed.ind) : seed.ind;
      }
    }
  } else {
    for (Term &t : terms)
      loss = loss ? e.add(loss, t.value) : t.value;
  }
  if (!loss)
    loss = e.cst(0.0);

  // correct: rows whose label's score is the row max (ties count as hits).
  Value correct;
  if (labelled) {
    e.setLoc(labelled->op->getLoc());
    Value scores, rowMaxB;
    if (labelled->softmax) {
      scores = labelled->softmax->saved[3];
      rowMaxB = labelled->softmax->saved[0];
    } else {
      scores = labelled->probs;
      rowMaxB = e.rowsBroadcast(e.rowMax(scores, 1), Emitter::shape(scores));
    }
    Value hits = e.cast(e.cmp(l1::CmpPredicate::ge, scores, rowMaxB), e.f32());
    correct = e.sum(e.mul(labelled->target, hits));
    outputs.hasCorrect = true;
  }

  // Reverse pass: the loss terms seed the adjoints, then every recorded
  // instance, last first.
  for (auto [t, seed] : llvm::zip(terms, seeds))
    backwardTerm(t, seed);
  for (const std::unique_ptr<Instance> &instPtr : llvm::reverse(tape)) {
    const Instance &inst = *instPtr;
    Value dy = adjoints.lookup(inst.output);
    if (!dy)
      continue;
    // A checkpointed layer (or one inside a checkpointed region) recomputes
    // its forward values here and differentiates the recomputed copy.
    const Instance *use = &inst;
    Instance recomputed;
    for (Operation *o = inst.op; o && o != methods.getOperation(); o = o->getParentOp()) {
      auto it = names.find(o);
      if (it != names.end() && checkpointed.contains(it->second)) {
        recomputed.op = inst.op;
        recomputed.inputs = inst.inputs;
        recomputed.params = inst.params;
        recomputed.counter = inst.counter;
        recomputed.training = inst.training;
        recomputed.stream = inst.stream; // the same draws: the same mask
        recomputed.rank = inst.rank;
        recomputed.ranks = inst.ranks;
        recomputed.byRows = inst.byRows;
        recomputed.blockIn = inst.blockIn;
        recomputed.blockOut = inst.blockOut;
        recomputed.inLast = inst.inLast;
        recomputed.outLast = inst.outLast;
        lowerForward(e, recomputed);
        use = &recomputed;
        break;
      }
    }
    SmallVector<bool, 2> need;
    for (Value v : inst.inputs)
      need.push_back(active.contains(v));
    SmallVector<Value, 2> dIn;
    SmallVector<Value, 4> dParams;
    lowerBackward(e, *use, dy, need, dIn, dParams);
    for (auto [v, d] : llvm::zip(inst.inputs, dIn))
      if (d)
        accumulate(v, d);
    auto it = layerParams.find(inst.op);
    if (it != layerParams.end())
      for (auto [idx, d] : llvm::zip(it->second, dParams))
        if (d)
          accumulateParam(idx, d);
  }

  // Results: loss, one gradient per parameter, correct. A replica's loss
  // is its share of the global batch's, as its gradients are: the
  // replicas' sum is the mean.
  e.setLoc(graph.getLoc());
  SmallVector<Value> results{spec.replicas > 1 ? e.scale(loss, 1.0 / double(spec.replicas))
                                               : loss};
  for (auto [i, g] : llvm::enumerate(paramGrads))
    results.push_back(g ? g : e.cst(0.0, params[i].shape));
  if (correct)
    results.push_back(correct);
  ob.setInsertionPointToEnd(&body);
  l1::ReturnOp::create(ob, graph.getLoc(), results);
  sweepDeadOps();
  return outputs;
}

FailureOr<TrainingGraphOutputs> synpl::l2tol1::buildTrainingGraph(l1::TensorGraphOp graph,
                                                                  const TrainingGraphSpec &spec,
                                                                  ArrayRef<TrainableParam> params) {
  GraphBuilder builder(graph, spec, params);
  return builder.run();
}

bool synpl::l2tol1::drawsRandomNumbers(l2::MethodsOp methods) {
  bool draws = false;
  methods.getInferBlock().walk([&](l2::DropoutOp d) {
    draws = draws || d.getP().convertToDouble() > 0.0;
  });
  return draws;
}
