//===- L2ToL1.cpp - Place an L2 method on an L1 system --------------------===//
//
// --synpl-l2-to-l1: the L3 program + one l2.methods + one l1.system become a
// standalone L1 training program (include/synpl/Conversion/Passes.td, L2ToL1;
// docs/l2-to-l1.md). The pass
//
//   1. checks that every method is one it lowers (sample epoch_shuffle,
//      backward autodiff(reverse), an update chain UpdateRules.cpp knows) and
//      that the #[l1::on] hatches name compute nodes;
//   2. binds the data fields the model and the loss read to storage;
//   3. searches the placement (Placement.cpp);
//   4. builds the actor (parameters, optimizer state, window, handler), the
//      training graph (Autodiff.cpp), the stages, pipelines and schedule;
//   5. erases the l3 and l2 ops.
//
// Anything it cannot lower is a located error before step 4 changes the
// module, or (the training graph) an error after which everything built is
// erased: never a partial program.
//
//===----------------------------------------------------------------------===//
#include "L2ToL1Impl.h"

#include "synpl/Conversion/L2ToL1/TrainingGraph.h"
#include "synpl/Conversion/Passes.h"
#include "synpl/Dialect/L1/L1Dialect.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Dialect/L2/L2Model.h"
#include "synpl/Dialect/L2/L2Ops.h"
#include "synpl/Dialect/L3/L3Ops.h"
#include "synpl/Support/Property.h"
#include "synpl/Support/Units.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

namespace synpl {
#define GEN_PASS_DEF_L2TOL1
#include "synpl/Conversion/Passes.h.inc"
} // namespace synpl

using namespace mlir;
using namespace synpl;
using namespace synpl::l2tol1;

namespace {

/// The names the L1 program uses (mnist.py's).
constexpr llvm::StringLiteral kActor = "model_state";
constexpr llvm::StringLiteral kWindow = "weights";
// The runtime's train/eval flag (random layers read it with kStepField).
constexpr llvm::StringLiteral kTrainingField = "training";
// Tensor parallelism: this process's rank (split linears read it).
constexpr llvm::StringLiteral kHandler = "GradUpdate";
constexpr llvm::StringLiteral kGraph = "forward_backward";
constexpr llvm::StringLiteral kLoad = "load_data";
constexpr llvm::StringLiteral kTrain = "train";
constexpr llvm::StringLiteral kGradReturn = "grad_return";

std::string printed(Attribute attr) {
  std::string s;
  llvm::raw_string_ostream os(s);
  attr.print(os);
  return s;
}

/// One data field the model or the loss reads.
struct BoundField {
  l3::FieldOp field;
  mlir::SymbolRefAttr ref;   // @data::@field
  RankedTensorType sample;   // one sample, the L3 domain's type
  std::string storage;       // l1.at, or "" (the search's storage node)
  std::string path;          // l1.path, or "" (bound when the program runs)
  l1::DataFormat format = l1::DataFormat::idx; // l1.format, idx when absent
  /// A sequence field read as text: the graph also takes the window shifted
  /// by one (the next element at every position), the field `<name>_next`.
  bool text = false;
};

/// Why a sample method is not lowered (nullopt: it is).
std::optional<std::string> whySampleNotLowered(Attribute sample) {
  return llvm::TypeSwitch<Attribute, std::optional<std::string>>(sample)
      .Case<l2::EpochShuffleAttr>([](auto) { return std::nullopt; })
      .Case<l2::StreamWindowAttr>([](auto) { return std::nullopt; })
      .Case<l2::CurriculumAttr>([](auto) {
        return std::string("l1.read_batch cannot filter examples by a predicate "
                           "or switch phases by step");
      })
      .Case<l2::ReplayAttr>([](auto) {
        return std::string("L1 has no replay buffer to draw batches from");
      })
      .Case<l2::DistributedShardAttr>([](l2::DistributedShardAttr shard) {
        // Each replica reads its shard as the inner method would.
        if (!isa<l2::EpochShuffleAttr>(shard.getMethod()))
          return std::optional<std::string>(
              "a shard reads its slice of each global batch of the epoch's order; its "
              "inner method must be epoch_shuffle, not " +
              printed(shard.getMethod()));
        return std::optional<std::string>();
      })
      .Default([](Attribute) {
        return std::string("not a sample method this lowering knows");
      });
}

std::optional<std::string> whyBackwardNotLowered(Attribute backward) {
  if (auto ad = dyn_cast<l2::AutodiffAttr>(backward)) {
    if (ad.getMode() == l2::AutodiffMode::reverse)
      return std::nullopt;
    return std::string("forward-mode autodiff is not expanded: the training "
                       "graph is one reverse sweep giving every parameter's "
                       "gradient (use mode = reverse)");
  }
  return std::string("only autodiff(mode: reverse) is expanded into an "
                     "explicit backward graph");
}

struct L2ToL1Pass : public synpl::impl::L2ToL1Base<L2ToL1Pass> {
  using L2ToL1Base::L2ToL1Base;
  void runOnOperation() override;

private:
  LogicalResult lower(ModuleOp module);
};

} // namespace

/// An escape hatch no lowering honours is an error, never dropped: a
/// user-supplied kernel (#[l0::...]) on a layer, and any hatch on an L3
/// declaration that no pass reads (every one on a data source or a loss;
/// an l1 or l0 one on the model, whose l2 hatches the L3 -> L2 search
/// reads).
static LogicalResult refuseUnreadHints(Operation *op, ArrayAttr hints, bool l2Read) {
  if (!hints)
    return success();
  for (Attribute a : hints) {
    auto hint = dyn_cast<l3::HintAttr>(a);
    if (!hint || (l2Read && hint.getLayer() == "l2"))
      continue;
    // #[l0::kernel] on a layer is read by backward expansion (UserKernel.cpp).
    if (hint.getLayer() == "l0" && hint.getDirective() == "kernel" && l2Read &&
        op->getDialect() && op->getDialect()->getNamespace() == "l2")
      continue;
    if (hint.getLayer() == "l0")
      return op->emitError() << "escape hatch " << hint.spelled()
                             << " is not lowered: "
                             << (hint.getDirective() == "kernel"
                                     ? "#[l0::kernel] replaces a layer's kernel; put it on "
                                       "a layer of the infer DAG"
                                     : "the L0 hatch this compiler reads is "
                                       "#[l0::kernel(\"file\")] on a layer");
    if (isa<l3::DataOp, l3::LossOp, l3::ModelOp>(op))
      return op->emitError() << "escape hatch " << hint.spelled()
                             << " is not lowered: no lowering reads "
                             << hint.getLayer() << " hatches on an l3."
                             << op->getName().stripDialect()
                             << (hint.getLayer() == "l1"
                                     ? " (#[l1::on(<node>)] places a layer: write it on "
                                       "the layer in a methods block)"
                                     : "");
  }
  return success();
}

/// The l1::on hatch of a layer op: the node name, or nullopt. Other
/// directives of l1, and l0 hatches, are errors; l2 hatches are not this
/// pass's.
static FailureOr<std::optional<std::string>> placementHint(Operation *layer) {
  auto hints = layer->getAttrOfType<ArrayAttr>("hints");
  if (!hints)
    return std::optional<std::string>();
  if (failed(refuseUnreadHints(layer, hints, /*l2Read=*/true)))
    return failure();
  std::optional<std::string> node;
  for (Attribute a : hints) {
    auto hint = dyn_cast<l3::HintAttr>(a);
    if (!hint || hint.getLayer() != "l1")
      continue;
    if (hint.getDirective() != "on") {
      layer->emitError() << "escape hatch #[l1::" << hint.getDirective()
                         << "] is not lowered: the L2 -> L1 lowering knows "
                            "#[l1::on(<node>)] only";
      return failure();
    }
    StringRef name = hint.getArgs().trim();
    name.consume_front("@");
    name = name.trim().trim('"');
    node = name.str();
  }
  return node;
}

/// Data parallelism: the report stage's arguments (loss, the gradients,
/// [correct]) replaced by their sum across the replicas. The whole batch's
/// loss and gradient, as one process would compute them, are the replicas'
/// sums because each replica's loss and seed carry 1 / replicas
/// (TrainingGraphSpec::replicas): no pass over the gradients divides them,
/// and the loss and the hit count (the forward pass's) share the first
/// gradients' bucket. One all-reduce per gradient, the last parameters'
/// first (the backward pass produces them first);
/// --synpl-l1-bucket-all-reduce merges them into buckets. Under update
/// sharding the gradients of the `sharded` parameters (indices) are
/// reduce-scattered instead: each replica keeps the block of rows it
/// updates.
static void allReduceOutputs(OpBuilder &b, Location loc, SmallVectorImpl<Value> &args,
                             size_t numGrads, bool hasCorrect, ArrayRef<unsigned> sharded,
                             int64_t replicas) {
  auto reduce = [&](size_t i) {
    if (i >= 1 && i <= numGrads && llvm::is_contained(sharded, unsigned(i - 1))) {
      auto t = cast<l1::BufType>(args[i].getType());
      SmallVector<int64_t> block(t.getTensor().getShape());
      block[0] /= replicas;
      auto bt = l1::BufType::get(
          b.getContext(), t.getNode(),
          RankedTensorType::get(block, t.getTensor().getElementType()));
      args[i] = l1::ReduceScatterOp::create(b, loc, bt, l1::ReduceKind::sum, args[i]);
      return;
    }
    args[i] = l1::AllReduceOp::create(b, loc, l1::ReduceKind::sum, ValueRange{args[i]})
                  .getResult(0);
  };
  reduce(0);
  if (hasCorrect)
    reduce(1 + numGrads);
  for (size_t g = numGrads; g >= 1; --g)
    reduce(g);
}

LogicalResult L2ToL1Pass::lower(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  // An L1 program (no l3 or l2 op) is already placed: nothing to do, so the
  // pass is idempotent on its own output.
  if (llvm::none_of(module.getBody()->getOperations(), [](Operation &op) {
        StringRef ns = op.getName().getDialectNamespace();
        return ns == "l3" || ns == "l2";
      }))
    return success();
  SmallVector<l2::MethodsOp> methodsOps;
  SmallVector<l1::SystemOp> systems;
  SmallVector<Operation *> sourceOps; // l3 and l2 ops, erased at the end
  for (Operation &op : module.getBody()->getOperations()) {
    if (auto m = dyn_cast<l2::MethodsOp>(op))
      methodsOps.push_back(m);
    if (auto s = dyn_cast<l1::SystemOp>(op)) {
      systems.push_back(s);
      continue;
    }
    StringRef ns = op.getName().getDialectNamespace();
    if (ns == "l3" || ns == "l2") {
      sourceOps.push_back(&op);
      continue;
    }
    return op.emitError()
           << "not lowered: " << op.getName()
           << ": the input of --synpl-l2-to-l1 is an L3 program, one l2.methods "
              "and one l1.system";
  }
  if (methodsOps.size() != 1)
    return module.emitError() << "--synpl-l2-to-l1 needs exactly one l2.methods, found "
                              << methodsOps.size();
  if (systems.size() != 1)
    return module.emitError() << "--synpl-l2-to-l1 needs exactly one l1.system (the "
                                 "target hardware), found "
                              << systems.size();
  l2::MethodsOp methods = methodsOps.front();
  l1::SystemOp system = systems.front();
  for (Operation *op : sourceOps) {
    LogicalResult refused = success();
    if (auto data = dyn_cast<l3::DataOp>(op))
      refused = refuseUnreadHints(op, data.getHintsAttr(), /*l2Read=*/false);
    else if (auto loss = dyn_cast<l3::LossOp>(op))
      refused = refuseUnreadHints(op, loss.getHintsAttr(), /*l2Read=*/false);
    else if (auto m = dyn_cast<l3::ModelOp>(op))
      refused = refuseUnreadHints(op, m.getHintsAttr(), /*l2Read=*/true);
    if (failed(refused))
      return failure();
  }

  // The model, the loss the goal minimizes.
  auto model = dyn_cast_or_null<l3::ModelOp>(
      SymbolTable::lookupSymbolIn(module, methods.getModelAttr()));
  if (!model)
    return methods.emitError() << "l2.methods is for " << methods.getModelAttr()
                               << ", which is not an l3.model";
  auto goals = llvm::to_vector(module.getOps<l3::GoalOp>());
  if (goals.size() != 1)
    return module.emitError() << "--synpl-l2-to-l1 needs the L3 goal (one l3.goal)";
  l3::GoalOp goal = goals.front();
  l3::LossOp loss;
  if (goal.getKind() == l3::GoalKind::Minimize && goal.getTargets().size() == 1)
    loss = dyn_cast_or_null<l3::LossOp>(SymbolTable::lookupSymbolIn(
        module, cast<SymbolRefAttr>(goal.getTargets()[0])));
  if (!loss)
    return goal.emitError()
           << "not lowered: " << goal->getName()
           << ": the training graph minimizes one whole loss (minimize(<loss>)); "
              "maximize, pareto and single loss terms have no L1 form yet";

  // The methods: every one must be one this pass lowers.
  SmallVector<l2::ParamInfo> l2Params = l2::collectParams(methods);
  FailureOr<SmallVector<TrainableParam>> params = collectTrainableParams(methods);
  if (failed(params))
    return failure();
  if (params->size() != l2Params.size())
    return methods.emitError() << "backward expansion lists " << params->size()
                               << " parameters, the L2 model has " << l2Params.size();
  SmallVector<UpdateParam> updateParams;
  for (auto [tp, info] : llvm::zip(*params, l2Params))
    updateParams.push_back({tp.state, info.name, tp.shape});
  {
    struct Why {
      const char *slot;
      std::optional<std::string> why; // "<method>: <reason>"
    };
    auto with = [](Attribute method, std::optional<std::string> why) {
      return why ? std::optional<std::string>(printed(method) + ": " + *why) : why;
    };
    Why whys[] = {
        {"sample", with(methods.getSample(), whySampleNotLowered(methods.getSample()))},
        {"backward",
         with(methods.getBackward(), whyBackwardNotLowered(methods.getBackward()))},
        // The update chain names its innermost method at fault itself.
        {"update", whyUpdateNotLowered(methods.getUpdate(), updateParams)},
    };
    unsigned lowered = llvm::count_if(whys, [](const Why &w) { return !w.why; });
    if (lowered != std::size(whys)) {
      InFlightDiagnostic diag = methods.emitError()
                                << "lowered " << lowered << " of " << std::size(whys)
                                << " methods of @" << methods.getSymName()
                                << "; not lowered:";
      bool first = true;
      for (const Why &w : whys)
        if (w.why) {
          diag << (first ? " " : "; ") << w.slot << " " << *w.why;
          first = false;
        }
      return diag;
    }
  }

  // Escape hatches: #[l1::on(node)] names a compute node; one node for the
  // whole model (it is one tensor graph).
  std::optional<std::string> forced;
  Operation *forcedBy = nullptr;
  WalkResult hinted = methods.getInfer().walk([&](Operation *op) -> WalkResult {
    FailureOr<std::optional<std::string>> hint = placementHint(op);
    if (failed(hint))
      return WalkResult::interrupt();
    if (!*hint)
      return WalkResult::advance();
    l1::NodeOp node = system.lookupNode(**hint);
    if (!node) {
      emitCheckError(op, Property::Safety, "L1.2")
          << "escape hatch #[l1::on(" << **hint << ")] names @" << **hint
          << ", which is not a node of system @" << system.getSymName();
      return WalkResult::interrupt();
    }
    if (node.getKind() != l1::NodeKind::compute) {
      emitCheckError(op, Property::Safety, "L1.1")
          << "escape hatch #[l1::on(" << **hint << ")] places the layer on @"
          << **hint << ", a " << l1::stringifyNodeKind(node.getKind())
          << " node; work runs on compute nodes";
      return WalkResult::interrupt();
    }
    if (forced && *forced != **hint) {
      InFlightDiagnostic d =
          op->emitError() << "escape hatch #[l1::on(" << **hint
                          << ")] is not lowered: the model is one tensor graph, "
                             "and another layer is forced onto @"
                          << *forced << " (splitting a model across nodes is not searched)";
      d.attachNote(forcedBy->getLoc()) << "forced onto @" << *forced << " here";
      return WalkResult::interrupt();
    }
    forced = **hint;
    forcedBy = op;
    return WalkResult::advance();
  });
  if (hinted.wasInterrupted())
    return failure();

  // Data binding: the fields the model and the loss read, model input first.
  int64_t batch = l2::sampleBatch(methods.getSample());
  auto shuffle = dyn_cast<l2::EpochShuffleAttr>(methods.getSample());
  if (auto sharded = dyn_cast<l2::DistributedShardAttr>(methods.getSample()))
    shuffle = dyn_cast<l2::EpochShuffleAttr>(sharded.getMethod());
  auto stream = dyn_cast<l2::StreamWindowAttr>(methods.getSample());
  SmallVector<BoundField> fields;
  auto bind = [&](SymbolRefAttr ref) -> LogicalResult {
    auto field = dyn_cast_or_null<l3::FieldOp>(SymbolTable::lookupSymbolIn(module, ref));
    if (!field || llvm::any_of(fields, [&](const BoundField &f) { return f.field == field; }))
      return success();
    BoundField f;
    f.field = field;
    f.ref = ref;
    Type domain = field.getDomain();
    if (auto fmt = field->getAttrOfType<StringAttr>("l1.format")) {
      std::optional<l1::DataFormat> parsed = l1::symbolizeDataFormat(fmt.getValue());
      if (!parsed)
        return field.emitError() << "data field @" << field.getSymName()
                                 << " has format \"" << fmt.getValue()
                                 << "\"; expected idx, raw or text";
      f.format = *parsed;
    }
    if (auto t = dyn_cast<RankedTensorType>(domain); t && t.hasStaticShape())
      f.sample = t;
    else if (auto s = dyn_cast<l3::ScalarType>(domain))
      f.sample = RankedTensorType::get({}, s.getDtype());
    else if (auto seq = dyn_cast<l3::SequenceType>(domain)) {
      // A sequence of bytes is stored as text: windows of max_len bytes.
      auto elt = dyn_cast<l3::ScalarType>(seq.getElementDomain());
      if (!seq.isBounded())
        return field.emitError() << "data field @" << field.getSymName()
                                 << " is not lowered: an unbounded sequence has no "
                                    "window length";
      if (!elt || !elt.getDtype().isUnsignedInteger(8))
        return field.emitError() << "data field @" << field.getSymName()
                                 << " is not lowered: a sequence field is read "
                                    "from a text file as bytes, sequence(scalar(u8), "
                                    "n); its domain is "
                                 << domain;
      if (f.format != l1::DataFormat::text)
        return field.emitError() << "data field @" << field.getSymName()
                                 << " is not lowered: a sequence field is read from a "
                                    "text file; bind it with `format: text`";
      f.sample = RankedTensorType::get({seq.getMaxLen()}, elt.getDtype());
      f.text = true;
    } else
      return field.emitError() << "data field @" << field.getSymName()
                               << " is not lowered: its domain " << domain
                               << " has no L1 storage form (tensor and scalar "
                                  "fields are read by l1.read_batch, sequences "
                                  "of bytes as text)";
    if (f.format == l1::DataFormat::text && !f.text)
      return field.emitError() << "data field @" << field.getSymName()
                               << " is not lowered: format text holds a "
                                  "sequence(scalar(u8), n); the field's domain is "
                               << domain;
    if (auto at = field->getAttrOfType<FlatSymbolRefAttr>("l1.at")) {
      l1::NodeOp node = system.lookupNode(at.getValue());
      if (!node || node.getKind() != l1::NodeKind::storage)
        return emitCheckError(field, Property::Safety, node ? "L1.1" : "L1.2")
               << "data field @" << field.getSymName() << " is bound to " << at
               << ", which is "
               << (node ? "a " + l1::stringifyNodeKind(node.getKind()).str() + " node"
                        : std::string("not a node"))
               << (node ? "; data lives at rest on storage nodes" : "")
               << (node ? std::string() : " of system @" + system.getSymName().str());
      f.storage = at.getValue().str();
    }
    if (auto path = field->getAttrOfType<StringAttr>("l1.path"))
      f.path = path.getValue().str();
    if (f.text && f.path.empty())
      return field.emitError() << "data field @" << field.getSymName()
                               << " is not lowered: a text field names its file "
                                  "(`@ <node>, path: \"...\", format: text`)";
    fields.push_back(std::move(f));
    return success();
  };
  if (failed(bind(model.getInRef())))
    return failure();
  WalkResult walked = loss.walk([&](Operation *term) -> WalkResult {
    for (NamedAttribute attr : term->getAttrs()) {
      SmallVector<SymbolRefAttr> refs;
      if (auto r = dyn_cast<SymbolRefAttr>(attr.getValue()))
        refs.push_back(r);
      else if (auto arr = dyn_cast<ArrayAttr>(attr.getValue()))
        for (Attribute e : arr)
          if (auto r = dyn_cast<SymbolRefAttr>(e))
            refs.push_back(r);
      for (SymbolRefAttr r : refs)
        if (failed(bind(r)))
          return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (walked.wasInterrupted())
    return failure();
  if (fields.empty())
    return model.emitError() << "not lowered: the model reads no data field "
                                "(its `in` must name an l3.field)";
  auto dataOf = [](BoundField f) { return f.field->getParentOfType<l3::DataOp>(); };
  // A stream window reads text; its window is the sequence's length.
  bool anyText = llvm::any_of(fields, [](const BoundField &f) { return f.text; });
  for (BoundField &f : fields) {
    if (anyText && !f.text)
      return f.field.emitError()
             << "data field @" << f.field.getSymName()
             << " is not lowered: one batch reads text windows and records of "
                "another format, whose samples are not counted alike";
    if (stream && !f.text)
      return methods.emitError()
             << "sample " << printed(stream) << " is not lowered: a stream window "
             << "reads text (a sequence(scalar(u8), n) field with format: text); @"
             << f.field.getSymName() << " is " << f.field.getDomain();
    if (stream && f.sample.getDimSize(0) != stream.getWindow())
      return methods.emitError()
             << "sample " << printed(stream) << " is not lowered: its window ("
             << stream.getWindow() << ") is the length of the sequences it serves, "
             << "and @" << f.field.getSymName() << " holds sequences of "
             << f.sample.getDimSize(0);
  }
  int64_t windowStride = stream ? stream.getStride() : 1;
  for (BoundField &f : fields)
    if (dataOf(f) != dataOf(fields.front()))
      return f.field.emitError()
             << "data field @" << f.field.getSymName()
             << " is not lowered: one batch reads one data source, and the model "
                "reads @"
             << dataOf(fields.front()).getSymName();

  // The placement search.
  FailureOr<l2::ResourceEstimate> est = l2::estimateResources(methods);
  if (failed(est))
    return methods.emitError() << "not lowered: the L2 resource estimate failed "
                                  "(a cycle, an unbounded recurrence or a count past 2^64)";
  // Data parallelism: distributed_shard fixes the replicas (its batch is
  // each one's); otherwise the search may split the batch among replicas.
  // The problem describes the global batch's step: under distributed_shard
  // the estimate's batch-sized terms are one replica's.
  auto shard = dyn_cast<l2::DistributedShardAttr>(methods.getSample());
  uint64_t replicasInEstimate = shard ? uint64_t(shard.getShards()) : 1;
  auto global = [&](uint64_t v) { return saturatingMul(v, replicasInEstimate); };
  PlacementProblem problem;
  problem.system = system;
  problem.persistentBytes = saturatingAdd(est->paramBytes, est->optimizerStateBytes);
  problem.gradientBytes = est->gradientBytes;
  problem.activationBytes = global(est->activationBytes);
  problem.gradientTemporaryBytes = global(saturatingMul(est->largestComputedBytes, 2));
  problem.contractionFlops = global(est->contractionFlopsPerStep);
  problem.elementwiseStreamBytes = global(est->elementwiseStreamBytes);
  problem.updateStreamBytes = est->updateStreamBytes;
  problem.largestComputedBytes = est->largestComputedBytes;
  problem.kernelsPerStep =
      saturatingAdd(saturatingMul(est->forwardLayerOps, 6), uint64_t(params->size()));
  for (const TrainableParam &tp : *params)
    if (tp.layer == params->front().layer) // f32, as the update keeps them
      problem.lastGradientBytes = saturatingAdd(
          problem.lastGradientBytes,
          saturatingMul(uint64_t(llvm::product_of(tp.shape)), 4));
  problem.reportBytes = 2 * 4; // loss and correct, f32 scalars
  for (BoundField &f : fields) {
    uint64_t bits = f.sample.getElementTypeBitWidth();
    uint64_t bytes = saturatingMul(uint64_t(f.sample.getNumElements()), (bits + 7) / 8);
    problem.batchBytes = saturatingAdd(
        problem.batchBytes, global(saturatingMul(bytes, uint64_t(f.text ? 2 * batch : batch))));
    if (f.storage.empty())
      problem.hasUnboundFields = true;
    else if (!llvm::is_contained(problem.storageNodes, f.storage))
      problem.storageNodes.push_back(f.storage);
  }
  problem.forcedNode = forced;
  problem.graphIsa = graphIsa;
  problem.shards = shard ? shard.getShards() : 0;
  problem.globalBatch = shard ? batch * shard.getShards() : batch;
  // Tensor parallelism: the linears a split may divide.
  problem.splittable = splittableLinears(*params);
  if (std::optional<std::string> why = tensorParallelObstacle(methods))
    problem.tensorParallelObstacle = *why;
  if (est->paramBytes) {
    problem.optimizerStatePerParam =
        double(est->optimizerStateBytes) / double(est->paramBytes);
    problem.updateBytesPerParamByte =
        double(est->updateStreamBytes) / double(est->paramBytes);
  }
  loss.walk([&](l3::NormOp) { ++problem.scalarSums; });
  // Update sharding: which parameters qualify is the replica count's.
  for (const TrainableParam &tp : *params)
    problem.paramRowsAndElements.push_back(
        {tp.shape.empty() ? 0 : tp.shape.front(), llvm::product_of(tp.shape)});
  if (std::optional<std::string> why = updateShardingObstacle(methods.getUpdate()))
    problem.updateShardingObstacle = *why;
  if (updateSharding == "on")
    problem.updateSharding = UpdateSharding::On;
  else if (updateSharding == "off")
    problem.updateSharding = UpdateSharding::Off;
  else if (updateSharding != "auto")
    return emitError(methods.getLoc())
           << "update-sharding is auto, on or off, not '" << updateSharding << "'";
  FailureOr<Placement> placed = searchPlacement(methods.getLoc(), problem);
  if (failed(placed))
    return failure();
  Placement p = *placed;
  SmallVector<SplitLinear> splits;
  if (p.shardCount() > 1) {
    splits = splitLinears(problem.splittable, p.shardCount());
    shardParams(splits, p.shardCount(), *params, updateParams);
  }
  // update-sharding=on that the placement's replicas cannot honour.
  if (problem.updateSharding == UpdateSharding::On && p.replicaCount() > 1 &&
      !p.shardedUpdate)
    return emitError(methods.getLoc())
           << "update-sharding=on: the " << p.replicaCount()
           << " replicas cannot shard this update: "
           << whyUpdateNotSharded(problem, p.replicaCount())
                  .value_or("the search chose replicas that update it whole");
  // Update sharding: each replica gets its block of the qualifying
  // parameters' gradients and updates those rows.
  SmallVector<unsigned> shardedUpdate;
  if (p.shardedUpdate) {
    shardedUpdate = shardedUpdateParams(problem.paramRowsAndElements, p.replicaCount());
    for (unsigned i : shardedUpdate) {
      updateParams[i].shape[0] /= p.replicaCount();
      updateParams[i].replicaBlocks = p.replicaCount();
    }
  }
  if (p.replicaCount() > 1 && !shard) {
    // Each replica reads and computes its slice of the batch.
    batch = problem.globalBatch / p.replicaCount();
    if (failed(l2::rebatchInfer(methods, batch)))
      return failure();
  }

  // Build. Everything created goes into `created`, erased on failure.
  SmallVector<Operation *> created;
  auto fail = [&]() {
    for (Operation *op : llvm::reverse(created))
      op->erase();
    return failure();
  };
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  Location loc = methods.getLoc();
  Type f32 = b.getF32Type();
  auto sym = [&](StringRef name) { return FlatSymbolRefAttr::get(ctx, name); };
  auto tensor = [&](ArrayRef<int64_t> shape) { return RankedTensorType::get(shape, f32); };
  auto buf = [&](StringRef node, Type t) {
    return l1::BufType::get(ctx, sym(node), cast<RankedTensorType>(t));
  };

  std::string reportName = p.needsTransfer() ? "transfer_grads" : "report_and_send";
  std::string transferName = "transfer_to_" + p.compute;

  // The actor: parameters, window, update handler.
  bool draws = drawsRandomNumbers(methods);
  auto actor = l1::ActorOp::create(b, loc, kActor, p.compute);
  created.push_back(actor);
  actor.getBody().push_back(new Block());
  {
    OpBuilder ab = OpBuilder::atBlockEnd(&actor.getBody().front());
    SmallVector<Attribute> fieldRefs;
    for (const TrainableParam &tp : *params) {
      Location ploc = tp.layer ? tp.layer->getLoc() : loc;
      l1::StateOp::create(ab, ploc, tp.state, tensor(tp.shape), tp.init,
                          tp.shard ? ab.getI64IntegerAttr(*tp.shard) : IntegerAttr());
      fieldRefs.push_back(sym(tp.state));
    }
    // A model that draws random numbers (dropout) reads the update step as
    // the draws' counter (so each step draws anew, and a resumed run draws
    // what an uninterrupted one would) and the runtime's train/eval flag.
    if (draws) {
      l1::StateOp::create(ab, loc, kStepField, tensor({}), l1::InitKind::zeros, IntegerAttr());
      l1::StateOp::create(ab, loc, kTrainingField, tensor({}), l1::InitKind::training_mode,
                          IntegerAttr());
      fieldRefs.push_back(sym(kStepField));
      fieldRefs.push_back(sym(kTrainingField));
    }
    // Tensor parallelism: the split linears read the rank to take their
    // block of the output's gradient.
    if (p.shardCount() > 1) {
      l1::StateOp::create(ab, loc, kRankField, tensor({}), l1::InitKind::rank, IntegerAttr());
      fieldRefs.push_back(sym(kRankField));
    }
    l1::WindowOp::create(ab, loc, kWindow, ab.getArrayAttr(fieldRefs),
                         ab.getArrayAttr({sym(kGraph)}));
  }
  if (failed(materializeUpdate(actor, kHandler, methods.getUpdate(), updateParams, loc, {},
                               /*countSteps=*/draws)))
    return fail();

  // The training graph.
  SymbolRefAttr windowRef = SymbolRefAttr::get(ctx, kActor, {sym(kWindow)});
  auto graph = l1::TensorGraphOp::create(b, loc, kGraph, p.compute,
                                         b.getArrayAttr({windowRef}), sym(reportName));
  created.push_back(graph);
  Block *graphEntry = new Block();
  graph.getBody().push_back(graphEntry);
  SmallVector<Type> batchTypes;
  TrainingGraphSpec spec;
  spec.model = model;
  spec.loss = loss;
  spec.methods = methods;
  spec.window = windowRef;
  if (draws) {
    spec.stepField = kStepField.str();
    spec.trainingField = kTrainingField.str();
  }
  spec.replicas = p.replicaCount();
  if (p.shardCount() > 1) {
    spec.ranks = p.shardCount();
    spec.rankField = kRankField.str();
    for (const SplitLinear &s : splits) {
      if (s.blockOut)
        spec.blockOutputs.insert(s.layer);
      if (s.blockIn)
        spec.blockInputs.insert(s.layer);
    }
  }
  // The read fields: every bound field, then the next-element view of each
  // text field (the targets of next-token prediction).
  struct ReadField {
    BoundField *bound;
    bool next;
    std::string name;
  };
  SmallVector<ReadField> reads;
  for (BoundField &f : fields)
    reads.push_back({&f, false, f.field.getSymName().str()});
  for (BoundField &f : fields)
    if (f.text)
      reads.push_back({&f, true, f.field.getSymName().str() + "_next"});
  for (ReadField &r : reads) {
    BoundField &f = *r.bound;
    SmallVector<int64_t> shape{batch};
    llvm::append_range(shape, f.sample.getShape());
    batchTypes.push_back(RankedTensorType::get(shape, f.sample.getElementType()));
    graphEntry->addArgument(batchTypes.back(), f.field.getLoc());
    if (r.next)
      spec.nextInputs.push_back({f.ref, unsigned(spec.inputFields.size())});
    spec.inputFields.push_back(
        r.next ? SymbolRefAttr::get(f.ref.getRootReference(),
                                    {FlatSymbolRefAttr::get(ctx, r.name)})
               : f.ref);
  }
  FailureOr<TrainingGraphOutputs> outputs = buildTrainingGraph(graph, spec, *params);
  if (failed(outputs))
    return fail();

  // Data sources: the bound fields, at rest on storage.
  l3::DataOp l3data = dataOf(fields.front());
  auto data = l1::DataOp::create(b, l3data.getLoc(), l3data.getSymName());
  created.push_back(data);
  data.getBody().push_back(new Block());
  {
    OpBuilder db = OpBuilder::atBlockEnd(&data.getBody().front());
    for (ReadField &r : reads) {
      BoundField &f = *r.bound;
      IntegerAttr shift, stride;
      if (f.text) {
        shift = r.next ? db.getI64IntegerAttr(1) : IntegerAttr();
        stride = windowStride != 1 ? db.getI64IntegerAttr(windowStride) : IntegerAttr();
      }
      l1::FieldOp::create(db, f.field.getLoc(), db.getStringAttr(r.name),
                          TypeAttr::get(f.sample),
                          sym(f.storage.empty() ? p.storage : f.storage),
                          db.getStringAttr(f.path),
                          l1::DataFormatAttr::get(ctx, f.format), shift, stride);
    }
  }

  // @load_data: one shuffled batch into staging memory.
  SmallVector<Type> stagedTypes, deviceTypes;
  for (Type t : batchTypes) {
    stagedTypes.push_back(buf(p.staging, t));
    deviceTypes.push_back(buf(p.deviceMem, t));
  }
  SmallVector<Operation *> stages; // in dataflow order
  auto makeStage = [&](StringRef name, TypeRange args, Location sloc) {
    auto stage = l1::StageOp::create(b, sloc, name, p.host, b.getArrayAttr({}));
    created.push_back(stage);
    stages.push_back(stage);
    Block *entry = new Block();
    stage.getBody().push_back(entry);
    for (Type t : args)
      entry->addArgument(t, sloc);
    return std::pair(stage, OpBuilder::atBlockEnd(entry));
  };
  {
    auto [stage, sb] = makeStage(kLoad, {}, loc);
    SmallVector<Attribute> fieldRefs;
    for (ReadField &r : reads)
      fieldRefs.push_back(sym(r.name));
    // A stream window draws whole windows at random (every step full).
    bool dropLast = shuffle ? shuffle.getDropLast() : true;
    auto rb = l1::ReadBatchOp::create(
        sb, loc, stagedTypes, sym(l3data.getSymName()), sb.getArrayAttr(fieldRefs),
        sb.getI64IntegerAttr(batch),
        l1::BatchOrderAttr::get(ctx, l1::BatchOrder::shuffle),
        dropLast ? sb.getUnitAttr() : UnitAttr(), sb.getI64IntegerAttr(0));
    l1::ForwardOp::create(sb, loc, sym(p.needsTransfer() ? StringRef(transferName) : StringRef(kGraph)),
                          rb.getResults());
  }
  // @transfer_to_<node>: staging memory -> the graph's memory.
  if (p.needsTransfer()) {
    auto [stage, sb] = makeStage(transferName, stagedTypes, loc);
    SmallVector<Value> moved;
    for (auto [arg, t] : llvm::zip(stage.getEntry().getArguments(), deviceTypes))
      moved.push_back(l1::TransferOp::create(sb, loc, t, arg));
    l1::ForwardOp::create(sb, loc, sym(kGraph), moved);
  }
  // The report stage: loss and correct reported (from staging memory), the
  // gradients sent to the actor (they stay on its node).
  {
    SmallVector<Type> outTypes;
    for (Type t : graph.getOutputTypes())
      outTypes.push_back(buf(p.deviceMem, t));
    auto [stage, sb] = makeStage(reportName, outTypes, loc);
    SmallVector<Value> args(stage.getEntry().getArguments().begin(),
                            stage.getEntry().getArguments().end());
    size_t numGrads = params->size();
    if (p.replicaCount() > 1)
      allReduceOutputs(sb, loc, args, numGrads, outputs->hasCorrect, shardedUpdate,
                       p.replicaCount());
    SmallVector<std::pair<StringRef, Value>> metrics{{"loss", args[0]}};
    if (outputs->hasCorrect)
      metrics.push_back({"correct", args[1 + numGrads]});
    for (auto [metric, value] : metrics) {
      Value v = value;
      if (p.needsTransfer())
        v = l1::TransferOp::create(
            sb, loc, buf(p.staging, cast<l1::BufType>(v.getType()).getTensor()), v);
      l1::ReportOp::create(sb, loc, metric, v);
      l1::DropOp::create(sb, loc, v);
    }
    l1::SendOp::create(sb, loc, SymbolRefAttr::get(ctx, kActor, {sym(kHandler)}),
                       ArrayRef<Value>(args).slice(1, numGrads));
    l1::EndOp::create(sb, loc);
  }

  // Pipelines and schedule.
  SmallVector<Attribute> chain{sym(kLoad)};
  if (p.needsTransfer())
    chain.push_back(sym(transferName));
  chain.push_back(sym(kGraph));
  SmallVector<Operation *> tail;
  tail.push_back(l1::PipelineOp::create(b, loc, kTrain, b.getArrayAttr(chain)));
  tail.push_back(
      l1::PipelineOp::create(b, loc, kGradReturn, b.getArrayAttr({sym(reportName)})));
  // The schedule's replicas or shards, if any.
  auto nodeRefs = [&](ArrayRef<std::string> nodes) {
    return nodes.empty() ? ArrayAttr()
                         : b.getArrayAttr(llvm::to_vector(llvm::map_range(
                               nodes, [&](const std::string &n) -> Attribute { return sym(n); })));
  };
  // The training loop (`train loop<...>`), when L2 states one, becomes the
  // schedule's defaults for the compiled program.
  IntegerAttr epochs, checkpointEvery, steps;
  StringAttr evaluate;
  if (auto loop = dyn_cast_or_null<l2::TrainLoopAttr>(methods.getTrainAttr())) {
    epochs = b.getI64IntegerAttr(loop.getEpochs());
    checkpointEvery = b.getI64IntegerAttr(loop.getCheckpointEvery());
    if (loop.getSteps() > 0)
      steps = b.getI64IntegerAttr(loop.getSteps());
    if (!loop.getEvaluate().empty())
      evaluate = b.getStringAttr(loop.getEvaluate());
  }
  tail.push_back(l1::ScheduleOp::create(
      b, loc, b.getArrayAttr({sym(kTrain), sym(kGradReturn)}),
      b.getArrayAttr({sym(kActor)}), b.getI64IntegerAttr(p.depth), epochs, evaluate,
      checkpointEvery, steps, nodeRefs(p.replicas), nodeRefs(p.shards)));

  // The source program is now the L1 program.
  for (Operation *op : llvm::reverse(sourceOps))
    op->erase();
  // Reading order: system, data, actor, the stages and the graph in
  // dataflow order, pipelines, schedule.
  SmallVector<Operation *> order{system, data, actor};
  order.append(stages.begin(), stages.end() - 1);
  order.push_back(graph);
  order.push_back(stages.back());
  order.append(tail);
  Block *body = module.getBody();
  for (Operation *op : order)
    op->moveBefore(body, body->end());
  return success();
}

void L2ToL1Pass::runOnOperation() {
  if (failed(lower(getOperation())))
    signalPassFailure();
}
