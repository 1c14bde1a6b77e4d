//===- L1Verify.cpp - The l1 verifiers that follow symbol references ------===//
//
// Phase-1 checks that look past one op: topology (L1.1), ref resolution
// (L1.2), forwarding signatures (L1.3), window separation (L1.4), region
// provenance (L1.6), persistent memory (L1.9) and cycles in the dataflow
// graph (L1.10). All run from SymbolUserOpInterface::verifySymbolUses, read
// only, and tolerate unresolved references (they report, never dereference).
//
//===----------------------------------------------------------------------===//
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Dialect/L1/L1Program.h"
#include "synpl/Support/Property.h"
#include "synpl/Support/Units.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l1;

//===----------------------------------------------------------------------===//
// The dataflow graph: stage -> forward target, graph -> then target,
// stage -> handler (send).
//===----------------------------------------------------------------------===//

static StringRef symName(Operation *op) {
  if (auto attr = op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
    return attr.getValue();
  return "?";
}

static Dataflow buildDataflow(SymbolTableCollection &tables, Operation *from) {
  return Dataflow::build(tables, from);
}

/// L1.10 for the forward graph: reported once, by the cycle's first member in
/// program order.
static LogicalResult checkDataflowCycle(SymbolTableCollection &tables, Operation *op) {
  Dataflow df = buildDataflow(tables, op);
  SmallVector<Operation *> cycle = df.cycleThrough(op);
  if (cycle.empty())
    return success();
  for (Operation *n : df.getNodes()) {
    if (!llvm::is_contained(cycle, n))
      continue;
    if (n != op)
      return success(); // an earlier member reports it
    break;
  }
  InFlightDiagnostic d = emitCheckError(op, Property::Resource, "L1.10")
                         << "the dataflow among stages and tensor graphs has a cycle: ";
  llvm::interleave(
      cycle, d, [&](Operation *n) { d << "@" << symName(n); }, " -> ");
  return d;
}

//===----------------------------------------------------------------------===//
// Placement and buffers
//===----------------------------------------------------------------------===//

/// L1.2: `ref` is a node; L1.1: of kind compute (work runs on processors).
static FailureOr<NodeOp> checkPlacement(Operation *op, FlatSymbolRefAttr ref,
                                        StringRef what) {
  NodeOp node = lookupNode(op, ref);
  if (!node) {
    emitCheckError(op, Property::Safety, "L1.2")
        << what << " is placed on " << ref << ", which is not a node of "
        << (getSystem(op) ? "the program's l1.system" : "any l1.system (there is none)");
    return failure();
  }
  if (node.getKind() != NodeKind::compute) {
    InFlightDiagnostic d = emitCheckError(op, Property::Safety, "L1.1")
                           << what << " is placed on " << ref << ", a "
                           << stringifyNodeKind(node.getKind())
                           << " node; work runs on compute nodes";
    return failure();
  }
  return node;
}

/// L1.2 / L1.1: the node of a buffer type resolves and can hold buffers.
static LogicalResult checkBufNode(Operation *op, BufType type) {
  NodeOp node = lookupNode(op, type.getNode());
  if (!node)
    return emitCheckError(op, Property::Safety, "L1.2")
           << "buffer type " << type << " names node " << type.getNode()
           << ", which does not exist";
  if (!node.holdsBuffers()) {
    InFlightDiagnostic d = emitCheckError(op, Property::Safety, "L1.1")
                           << "buffer type " << type << " lives on " << type.getNode()
                           << ", a " << stringifyNodeKind(node.getKind())
                           << " node without memory (use a memory node or a "
                              "compute node with vram)";
    return d;
  }
  return success();
}

static LogicalResult checkPath(Operation *op, FlatSymbolRefAttr from,
                               FlatSymbolRefAttr to, StringRef what) {
  SystemOp system = getSystem(op);
  if (!system || !system.lookupNode(from.getValue()) || !system.lookupNode(to.getValue()))
    return success(); // reported as L1.2 where the nodes are named
  if (!system.hasPath(from.getValue(), to.getValue()))
    return emitCheckError(op, Property::Safety, "L1.1")
           << what << ": no path of edges from " << from << " to " << to
           << " in system @" << system.getSymName();
  return success();
}

//===----------------------------------------------------------------------===//
// Forwarding signatures (L1.3), provenance (L1.6)
//===----------------------------------------------------------------------===//

namespace {
/// What a forward, send or `then` delivers to.
struct Entry {
  Operation *op = nullptr;
  std::string what;          // "stage @x", "tensor graph @y", "handler @a::@h"
  FlatSymbolRefAttr node;    // where the target runs
  SmallVector<Type> inputs;  // entry block argument types
  bool takesBuffers = false; // stage: inputs are buffer types
};
} // namespace

static std::optional<Entry> entryOf(Operation *target) {
  Entry e;
  e.op = target;
  if (auto stage = dyn_cast<StageOp>(target)) {
    e.what = ("stage @" + stage.getSymName()).str();
    e.node = stage.getNodeAttr();
    e.takesBuffers = true;
    if (stage.getBody().empty())
      return std::nullopt;
    e.inputs = llvm::to_vector(stage.getEntry().getArgumentTypes());
    return e;
  }
  if (auto graph = dyn_cast<TensorGraphOp>(target)) {
    e.what = ("tensor graph @" + graph.getSymName()).str();
    e.node = graph.getNodeAttr();
    if (graph.getBody().empty())
      return std::nullopt;
    e.inputs = llvm::to_vector(graph.getEntry().getArgumentTypes());
    return e;
  }
  if (auto handler = dyn_cast<HandlerOp>(target)) {
    auto actor = handler->getParentOfType<ActorOp>();
    if (!actor || handler.getBody().empty())
      return std::nullopt;
    e.what = ("handler @" + actor.getSymName() + "::@" + handler.getSymName()).str();
    e.node = actor.getNodeAttr();
    e.inputs = llvm::to_vector(handler.getEntry().getArgumentTypes());
    return e;
  }
  return std::nullopt;
}

/// Whether a buffer on `have` is where work expecting it on `want` finds it:
/// the same node, or a compute node without memory of its own (no vram) and
/// a memory node it has an edge to (a CPU's tensor graphs and actors take and
/// return their buffers in the RAM they are attached to).
static bool sameRegion(Operation *op, FlatSymbolRefAttr have, FlatSymbolRefAttr want) {
  if (have == want)
    return true;
  SystemOp system = getSystem(op);
  if (!system || !have || !want)
    return false;
  NodeOp a = system.lookupNode(have.getValue()), b = system.lookupNode(want.getValue());
  if (!a || !b)
    return false;
  if (a.getKind() == NodeKind::compute)
    std::swap(a, b);
  if (a.getKind() != NodeKind::memory || b.getKind() != NodeKind::compute ||
      b.holdsBuffers())
    return false;
  return llvm::any_of(system.getBody().front().getOps<EdgeOp>(), [&](EdgeOp e) {
    return (e.getFrom() == a.getSymName() && e.getTo() == b.getSymName()) ||
           (e.getFrom() == b.getSymName() && e.getTo() == a.getSymName());
  });
}

/// Checks buffers of types `delivered`, sent from `fromNode`, against the
/// target's entry signature.
static LogicalResult checkDelivery(Operation *site, StringRef verb, const Entry &target,
                                   ArrayRef<Type> delivered, FlatSymbolRefAttr fromNode) {
  if (delivered.size() != target.inputs.size()) {
    InFlightDiagnostic d = emitCheckError(site, Property::Safety, "L1.3")
                           << verb << " " << delivered.size() << " buffer"
                           << (delivered.size() == 1 ? "" : "s") << " to " << target.what
                           << ", which takes " << target.inputs.size();
    d.attachNote(target.op->getLoc()) << target.what << " is declared here";
    return d;
  }
  for (auto [i, pair] : llvm::enumerate(llvm::zip(delivered, target.inputs))) {
    auto [got, want] = pair;
    auto buf = dyn_cast<BufType>(got);
    if (!buf)
      return failure();
    RankedTensorType wantTensor;
    FlatSymbolRefAttr wantNode;
    if (target.takesBuffers) {
      auto wantBuf = dyn_cast<BufType>(want);
      if (!wantBuf)
        return failure(); // the target's own verifier reports
      wantTensor = wantBuf.getTensor();
      wantNode = wantBuf.getNode();
    } else {
      wantTensor = dyn_cast<RankedTensorType>(want);
      wantNode = target.node;
    }
    if (buf.getTensor() != wantTensor) {
      InFlightDiagnostic d = emitCheckError(site, Property::Safety, "L1.3")
                             << verb << " " << buf.getTensor() << " as argument #" << i
                             << " of " << target.what << ", which takes " << wantTensor;
      d.attachNote(target.op->getLoc()) << target.what << " is declared here";
      return d;
    }
    if (!sameRegion(site, buf.getNode(), wantNode)) {
      InFlightDiagnostic d = emitCheckError(site, Property::Consistency, "L1.6")
                             << "buffer #" << i << " lives on " << buf.getNode() << " but "
                             << target.what << " (on " << target.node << ") takes it on "
                             << wantNode;
      d.attachNote(target.op->getLoc()) << target.what << " is declared here";
      return d;
    }
  }
  if (fromNode && target.node)
    return checkPath(site, fromNode, target.node,
                     (verb.consume_back(" as") ? "forwards results" : verb).str() +
                         " to " + target.what);
  return success();
}

static StageOp enclosingStage(Operation *op) { return op->getParentOfType<StageOp>(); }

LogicalResult ForwardOp::verifySymbolUses(SymbolTableCollection &tables) {
  Operation *target = lookupInProgram(tables, *this, getTargetAttr());
  if (!isa_and_nonnull<StageOp, TensorGraphOp>(target))
    return emitCheckError(*this, Property::Safety, "L1.2")
           << "forward target " << getTargetAttr()
           << (target ? " is not a stage or tensor graph" : " does not exist");
  auto entry = entryOf(target);
  if (!entry)
    return failure();
  StageOp stage = enclosingStage(*this);
  SmallVector<Type> types = llvm::to_vector(getArgs().getTypes());
  return checkDelivery(*this, "forwards", *entry, types,
                       stage ? stage.getNodeAttr() : FlatSymbolRefAttr());
}

LogicalResult SendOp::verifySymbolUses(SymbolTableCollection &tables) {
  Operation *target = lookupInProgram(tables, *this, getTargetAttr());
  if (!isa_and_nonnull<HandlerOp>(target))
    return emitCheckError(*this, Property::Safety, "L1.2")
           << "message target " << getTargetAttr()
           << (target ? " is not an actor handler" : " does not exist");
  auto entry = entryOf(target);
  if (!entry)
    return failure();
  StageOp stage = enclosingStage(*this);
  SmallVector<Type> types = llvm::to_vector(getArgs().getTypes());
  return checkDelivery(*this, "sends", *entry, types,
                       stage ? stage.getNodeAttr() : FlatSymbolRefAttr());
}

//===----------------------------------------------------------------------===//
// Reads of windows (L1.2, L1.4)
//===----------------------------------------------------------------------===//

/// Each `reads` entry is a window that lists `reader` among its readers.
static LogicalResult checkReads(SymbolTableCollection &tables, Operation *reader,
                                ArrayAttr reads) {
  for (Attribute a : reads) {
    auto ref = cast<SymbolRefAttr>(a);
    auto window = dyn_cast_or_null<WindowOp>(lookupInProgram(tables, reader, ref));
    if (!window)
      return emitCheckError(reader, Property::Safety, "L1.2")
             << "reads " << ref << ", which is not an actor window";
    bool listed = llvm::any_of(window.getReaders(), [&](Attribute r) {
      return cast<FlatSymbolRefAttr>(r).getValue() == symName(reader);
    });
    if (!listed) {
      InFlightDiagnostic d = emitCheckError(reader, Property::Safety, "L1.4")
                             << "@" << symName(reader) << " reads window " << ref
                             << " but is not among its readers, so nothing orders it "
                                "against the actor's handlers";
      d.attachNote(window.getLoc()) << "window declared here";
      return d;
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Stages, graphs, actors
//===----------------------------------------------------------------------===//

LogicalResult StageOp::verifySymbolUses(SymbolTableCollection &tables) {
  if (failed(checkPlacement(*this, getNodeAttr(), ("stage @" + getSymName()).str())))
    return failure();
  if (failed(checkReads(tables, *this, getReads())))
    return failure();
  // Every buffer type in the stage names a node that holds buffers.
  llvm::DenseSet<Type> checked;
  auto checkType = [&](Operation *at, Type t) -> LogicalResult {
    auto buf = dyn_cast<BufType>(t);
    if (!buf || !checked.insert(t).second)
      return success();
    return checkBufNode(at, buf);
  };
  for (Block &block : getBody())
    for (BlockArgument arg : block.getArguments())
      if (failed(checkType(*this, arg.getType())))
        return failure();
  WalkResult walk = getBody().walk([&](Operation *op) {
    for (Type t : op->getResultTypes())
      if (failed(checkType(op, t)))
        return WalkResult::interrupt();
    if (auto transfer = dyn_cast<TransferOp>(op))
      if (failed(checkPath(op, transfer.getSource().getType().getNode(),
                           transfer.getResult().getType().getNode(), "transfer")))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return checkDataflowCycle(tables, *this);
}

LogicalResult TensorGraphOp::verifySymbolUses(SymbolTableCollection &tables) {
  std::string what = ("tensor graph @" + getSymName()).str();
  if (failed(checkPlacement(*this, getNodeAttr(), what)))
    return failure();
  if (failed(checkReads(tables, *this, getReads())))
    return failure();
  if (auto then = getThenAttr()) {
    Operation *target = lookupInProgram(tables, *this, then);
    if (!isa_and_nonnull<StageOp, TensorGraphOp>(target))
      return emitCheckError(*this, Property::Safety, "L1.2")
             << what << " forwards its results to " << then
             << (target ? ", which is not a stage or tensor graph" : ", which does not exist");
    auto entry = entryOf(target);
    if (!entry)
      return failure();
    // Results leave the graph as buffers on its node.
    SmallVector<Type> delivered;
    for (Type t : getOutputTypes())
      if (auto r = dyn_cast<RankedTensorType>(t))
        delivered.push_back(BufType::get(getContext(), getNodeAttr(), r));
    if (failed(checkDelivery(*this, "forwards its results as", *entry, delivered,
                             getNodeAttr())))
      return failure();
  } else {
    // A pure graph whose results go nowhere computes nothing anyone uses.
    return emitCheckError(*this, Property::Liveness, "L1.8")
           << what << " returns " << getOutputTypes().size()
           << " value(s) but forwards them nowhere (name the consumer with `then`)";
  }
  return checkDataflowCycle(tables, *this);
}

LogicalResult ReadBatchOp::verifySymbolUses(SymbolTableCollection &tables) {
  auto data = dyn_cast_or_null<DataOp>(lookupInProgram(tables, *this, getSourceAttr()));
  if (!data)
    return emitCheckError(*this, Property::Safety, "L1.2")
           << "data source " << getSourceAttr() << " does not exist";
  if (getFields().size() != getResults().size())
    return emitCheckError(*this, Property::Safety, "L1.3")
           << "reads " << getFields().size() << " fields into " << getResults().size()
           << " buffers";
  for (auto [attr, result] : llvm::zip(getFields(), getResults())) {
    auto ref = cast<FlatSymbolRefAttr>(attr);
    auto field = dyn_cast_or_null<FieldOp>(SymbolTable::lookupSymbolIn(data, ref.getAttr()));
    if (!field)
      return emitCheckError(*this, Property::Safety, "L1.2")
             << "data source " << getSourceAttr() << " has no field " << ref;
    auto buf = cast<BufType>(result.getType());
    auto sample = dyn_cast<RankedTensorType>(field.getType());
    if (!sample)
      return failure();
    SmallVector<int64_t> shape{static_cast<int64_t>(getBatch())};
    llvm::append_range(shape, sample.getShape());
    auto want = RankedTensorType::get(shape, sample.getElementType());
    if (buf.getTensor() != want)
      return emitCheckError(*this, Property::Consistency, "L1.5")
             << "a batch of " << getBatch() << " of field " << ref << " ("
             << field.getType() << ") is " << want << ", not " << buf.getTensor();
    if (failed(checkBufNode(*this, buf)) ||
        failed(checkPath(*this, field.getNodeAttr(), buf.getNode(),
                         ("read of field " + ref.getValue()).str())))
      return failure();
    // One batch draws the same sample indices for every field: text
    // windows and IDX records are not counted alike, and text fields must
    // agree on the window and its spacing.
    auto first = cast<FieldOp>(SymbolTable::lookupSymbolIn(
        data, cast<FlatSymbolRefAttr>(getFields()[0]).getAttr()));
    bool text = field.getFormat() == DataFormat::text;
    if (text != (first.getFormat() == DataFormat::text))
      return emitCheckError(*this, Property::Consistency, "L1.5")
             << "reads text field " << (text ? ref : getFields()[0])
             << " with non-text field " << (text ? getFields()[0] : ref)
             << " in one batch; their samples are not counted alike";
    if (text && (field.getType() != first.getType() ||
                 field.getStride().value_or(1) != first.getStride().value_or(1) ||
                 field.getPath() != first.getPath()))
      return emitCheckError(*this, Property::Consistency, "L1.5")
             << "text fields " << getFields()[0] << " and " << ref
             << " of one batch must read the same file in windows of the same "
                "length and stride";
  }
  return success();
}

LogicalResult FieldOp::verify() {
  bool text = getFormat() == DataFormat::text;
  if (!text && (getShift() || getStride()))
    return emitOpError("shift and stride are attributes of a text field; field @")
           << getSymName() << " has format " << stringifyDataFormat(getFormat());
  if (!text)
    return success();
  auto type = cast<RankedTensorType>(getType());
  if (type.getRank() != 1 || !type.getElementType().isUnsignedInteger(8))
    return emitCheckError(*this, Property::Consistency, "L1.5")
           << "text field @" << getSymName()
           << " holds windows of bytes, tensor<N x ui8>, not " << type;
  if (getShift().value_or(0) > 1)
    return emitCheckError(*this, Property::Consistency, "L1.5")
           << "text field @" << getSymName() << " has shift " << *getShift()
           << "; a window of N + 1 bytes holds shifts 0 (the inputs) and 1 (the "
              "next bytes)";
  return success();
}

LogicalResult FieldOp::verifySymbolUses(SymbolTableCollection &) {
  NodeOp node = lookupNode(*this, getNodeAttr());
  if (!node)
    return emitCheckError(*this, Property::Safety, "L1.2")
           << "field @" << getSymName() << " is stored at " << getNodeAttr()
           << ", which is not a node";
  if (node.getKind() != NodeKind::storage) {
    InFlightDiagnostic d = emitCheckError(*this, Property::Safety, "L1.1")
                           << "field @" << getSymName() << " is stored at "
                           << getNodeAttr() << ", a " << stringifyNodeKind(node.getKind())
                           << " node; data rests on storage nodes";
    return d;
  }
  return success();
}

/// Resolves a window field read from `reader` (a tensor graph or a stage),
/// reporting L1.2 / L1.5; returns the window, or null after a report.
static WindowOp checkWindowField(SymbolTableCollection &tables, Operation *op,
                                 Operation *reader, ArrayAttr reads,
                                 SymbolRefAttr windowRef, FlatSymbolRefAttr field,
                                 Type tensorType) {
  if (!llvm::is_contained(reads, windowRef)) {
    emitCheckError(op, Property::Safety, "L1.2")
        << "reads window " << windowRef << ", which @" << symName(reader)
        << " does not list in its reads";
    return {};
  }
  auto window = dyn_cast_or_null<WindowOp>(lookupInProgram(tables, op, windowRef));
  if (!window) {
    emitCheckError(op, Property::Safety, "L1.2") << windowRef << " is not an actor window";
    return {};
  }
  if (!llvm::is_contained(window.getFields(), field)) {
    emitCheckError(op, Property::Safety, "L1.2")
        << "window " << windowRef << " does not contain field " << field;
    return {};
  }
  auto actor = window->getParentOfType<ActorOp>();
  auto state =
      dyn_cast_or_null<StateOp>(SymbolTable::lookupSymbolIn(actor, field.getAttr()));
  if (!state)
    return {}; // the window reports its bad field
  if (state.getType() != tensorType) {
    emitCheckError(op, Property::Consistency, "L1.5")
        << "field " << field << " is " << state.getType() << ", read as " << tensorType;
    return {};
  }
  return window;
}

LogicalResult WindowReadOp::verifySymbolUses(SymbolTableCollection &tables) {
  auto graph = (*this)->getParentOfType<TensorGraphOp>();
  if (!graph)
    return failure();
  return success(checkWindowField(tables, *this, graph, graph.getReads(),
                                  getWindowAttr(), getFieldAttr(),
                                  getResult().getType()));
}

LogicalResult WindowCopyOp::verifySymbolUses(SymbolTableCollection &tables) {
  auto stage = (*this)->getParentOfType<StageOp>();
  if (!stage)
    return failure();
  BufType buf = getResult().getType();
  WindowOp window = checkWindowField(tables, *this, stage, stage.getReads(),
                                     getWindowAttr(), getFieldAttr(), buf.getTensor());
  if (!window)
    return failure();
  auto actor = window->getParentOfType<ActorOp>();
  if (!sameRegion(*this, buf.getNode(), actor.getNodeAttr()))
    return emitCheckError(*this, Property::Consistency, "L1.6")
           << "the copy of " << getFieldAttr() << " is made where actor @"
           << actor.getSymName() << " keeps it, on " << actor.getNodeAttr()
           << ", not on " << buf.getNode();
  return success();
}

template <typename OpT>
static LogicalResult checkStateAccess(OpT op, Type type, StringRef verb) {
  auto actor = op->template getParentOfType<ActorOp>();
  if (!actor)
    return failure();
  auto state = dyn_cast_or_null<StateOp>(
      SymbolTable::lookupSymbolIn(actor, op.getFieldAttr().getAttr()));
  if (!state)
    return emitCheckError(op, Property::Safety, "L1.2")
           << verb << " " << op.getFieldAttr() << ", which is not a state field of actor @"
           << actor.getSymName();
  if (state.getType() != type)
    return emitCheckError(op, Property::Consistency, "L1.5")
           << "state field " << op.getFieldAttr() << " is " << state.getType() << ", not "
           << type;
  return success();
}

LogicalResult StateReadOp::verifySymbolUses(SymbolTableCollection &) {
  return checkStateAccess(*this, getResult().getType(), "reads");
}

LogicalResult StateWriteOp::verifySymbolUses(SymbolTableCollection &) {
  return checkStateAccess(*this, getValue().getType(), "writes");
}

//===----------------------------------------------------------------------===//
// Windows: separation (L1.4)
//===----------------------------------------------------------------------===//

/// Whether `to` can run after `from` in one execution of a stage (a later op
/// of the same block, or an op of a block reachable from `from`'s block).
static bool mayFollow(Operation *from, Operation *to) {
  Block *a = from->getBlock(), *b = to->getBlock();
  if (a == b)
    return from->isBeforeInBlock(to);
  llvm::DenseSet<Block *> seen;
  SmallVector<Block *> work(a->getSuccessors().begin(), a->getSuccessors().end());
  while (!work.empty()) {
    Block *n = work.pop_back_val();
    if (n == b)
      return true;
    if (seen.insert(n).second)
      llvm::append_range(work, n->getSuccessors());
  }
  return false;
}

/// A stage that both reads `window` and messages its writer must finish its
/// copies before the message (the handler may start as soon as it is sent).
static LogicalResult checkCopiesBeforeSends(WindowOp window, StageOp stage,
                                            HandlerOp writer) {
  auto actor = window->getParentOfType<ActorOp>();
  SmallVector<WindowCopyOp> copies;
  SmallVector<SendOp> sends;
  stage.getBody().walk([&](Operation *op) {
    if (auto copy = dyn_cast<WindowCopyOp>(op)) {
      SymbolRefAttr ref = copy.getWindowAttr();
      if (ref.getRootReference() == actor.getSymNameAttr() &&
          ref.getLeafReference() == window.getSymNameAttr())
        copies.push_back(copy);
    } else if (auto send = dyn_cast<SendOp>(op)) {
      SymbolRefAttr ref = send.getTargetAttr();
      if (ref.getRootReference() == actor.getSymNameAttr() &&
          ref.getLeafReference() == writer.getSymNameAttr())
        sends.push_back(send);
    }
  });
  for (SendOp send : sends)
    for (WindowCopyOp copy : copies)
      if (mayFollow(send, copy)) {
        InFlightDiagnostic d = emitCheckError(copy, Property::Safety, "L1.4")
                               << "stage @" << stage.getSymName() << " reads window @"
                               << actor.getSymName() << "::@" << window.getSymName()
                               << " after messaging its writer @" << actor.getSymName()
                               << "::@" << writer.getSymName()
                               << "; the handler may already be running";
        d.attachNote(send.getLoc()) << "the message is sent here";
        return d;
      }
  return success();
}

LogicalResult WindowOp::verifySymbolUses(SymbolTableCollection &tables) {
  auto actor = (*this)->getParentOfType<ActorOp>();
  if (!actor)
    return failure();
  for (Attribute a : getFields()) {
    auto ref = cast<FlatSymbolRefAttr>(a);
    if (!isa_and_nonnull<StateOp>(SymbolTable::lookupSymbolIn(actor, ref.getAttr())))
      return emitCheckError(*this, Property::Safety, "L1.2")
             << "window @" << getSymName() << " names " << ref
             << ", which is not a state field of actor @" << actor.getSymName();
  }
  SmallVector<Operation *> readers;
  for (Attribute a : getReaders()) {
    auto ref = cast<FlatSymbolRefAttr>(a);
    Operation *reader = lookupInProgram(tables, actor, ref);
    if (!isa_and_nonnull<StageOp, TensorGraphOp>(reader))
      return emitCheckError(*this, Property::Safety, "L1.2")
             << "window reader " << ref
             << (reader ? " is not a stage or tensor graph" : " does not exist");
    readers.push_back(reader);
  }
  // The writers of this window: handlers that write one of its fields.
  SmallVector<HandlerOp> writers;
  for (auto handler : actor.getBody().front().getOps<HandlerOp>())
    if (llvm::any_of(getFields(), [&](Attribute f) {
          return handler.writes(cast<FlatSymbolRefAttr>(f).getValue());
        }))
      writers.push_back(handler);
  if (writers.empty() || readers.empty())
    return success();
  Dataflow df = buildDataflow(tables, actor);
  for (Operation *reader : readers)
    for (HandlerOp writer : writers)
      for (Operation *sender : df.getSenders(writer)) {
        if (sender == reader) {
          if (failed(checkCopiesBeforeSends(*this, cast<StageOp>(reader), writer)))
            return failure();
          continue;
        }
        if (df.reaches(reader, sender))
          continue;
        InFlightDiagnostic d =
            emitCheckError(*this, Property::Safety, "L1.4")
            << "reader @" << symName(reader) << " of window @" << actor.getSymName()
            << "::@" << getSymName() << " may run concurrently with its writer @"
            << actor.getSymName() << "::@" << writer.getSymName()
            << ": stage @" << symName(sender)
            << " messages the writer but does not follow the reader in the dataflow";
        d.attachNote(sender->getLoc()) << "the message comes from here";
        d.attachNote(reader->getLoc()) << "the reader";
        return d;
      }
  return success();
}

//===----------------------------------------------------------------------===//
// Actors: persistent memory (L1.9)
//===----------------------------------------------------------------------===//

LogicalResult ActorOp::verifySymbolUses(SymbolTableCollection &) {
  FailureOr<NodeOp> node = checkPlacement(*this, getNodeAttr(),
                                          ("actor @" + getSymName()).str());
  if (failed(node))
    return failure();
  Operation *scope = getProgramScope(*this);
  if (!scope)
    return success();
  // Sum the state of every actor on this node; the first one reports.
  uint64_t total = 0;
  SmallVector<ActorOp> sharing;
  for (auto actor : scope->getRegion(0).front().getOps<ActorOp>())
    if (actor.getNode() == getNode()) {
      sharing.push_back(actor);
      total = saturatingAdd(total, actor.getStateBytes());
    }
  if (sharing.front() != *this)
    return success();
  std::optional<uint64_t> capacity = node->getMemoryBytes();
  std::string source = capacity ? (node->getVram() ? "vram" : "capacity") : "";
  if (!capacity) {
    // A compute node without its own memory keeps state in the memory nodes
    // it is connected to.
    SystemOp system = getSystem(*this);
    uint64_t sum = 0;
    bool any = false;
    for (auto edge : system.getBody().front().getOps<EdgeOp>()) {
      StringRef other;
      if (edge.getFrom() == getNode())
        other = edge.getTo();
      else if (edge.getTo() == getNode())
        other = edge.getFrom();
      else
        continue;
      NodeOp mem = system.lookupNode(other);
      if (mem && mem.getKind() == NodeKind::memory)
        if (auto c = mem.getMemoryBytes()) {
          sum = saturatingAdd(sum, *c);
          any = true;
        }
    }
    if (!any)
      return emitCheckError(*this, Property::Resource, "L1.9")
             << "actor @" << getSymName() << " is on " << getNodeAttr()
             << ", which has no memory of its own (vram) and no edge to a memory node";
    capacity = sum;
    source = "connected memory";
  }
  if (total > *capacity) {
    InFlightDiagnostic d = emitCheckError(*this, Property::Resource, "L1.9")
                           << "actor state on " << getNodeAttr() << " is "
                           << formatBytes(total) << ", more than its " << source << " of "
                           << formatBytes(*capacity);
    for (ActorOp actor : sharing)
      d.attachNote(actor.getLoc()) << "actor @" << actor.getSymName() << " holds "
                                   << formatBytes(actor.getStateBytes());
    return d;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Pipelines and schedule
//===----------------------------------------------------------------------===//

LogicalResult PipelineOp::verifySymbolUses(SymbolTableCollection &tables) {
  SmallVector<Operation *> elements;
  for (Attribute a : getElements()) {
    auto ref = cast<FlatSymbolRefAttr>(a);
    Operation *op = lookupInProgram(tables, *this, ref);
    if (!isa_and_nonnull<StageOp, TensorGraphOp>(op))
      return emitCheckError(*this, Property::Safety, "L1.2")
             << "pipeline element " << ref
             << (op ? " is not a stage or tensor graph" : " does not exist");
    if (llvm::is_contained(elements, op)) {
      InFlightDiagnostic d = emitCheckError(*this, Property::Resource, "L1.10")
                             << "pipeline @" << getSymName() << " has a cycle: ";
      auto first = llvm::find(elements, op);
      for (auto it = first; it != elements.end(); ++it)
        d << "@" << symName(*it) << " -> ";
      d << "@" << symName(op);
      return d;
    }
    elements.push_back(op);
  }
  Dataflow df = buildDataflow(tables, *this);
  for (size_t i = 0; i + 1 < elements.size(); ++i)
    if (!llvm::is_contained(df.getSuccessors(elements[i]), elements[i + 1]))
      return emitCheckError(*this, Property::Safety, "L1.2")
             << "pipeline link @" << symName(elements[i]) << " -> @"
             << symName(elements[i + 1]) << " is not a dataflow edge (@"
             << symName(elements[i]) << " does not forward to @"
             << symName(elements[i + 1]) << ")";
  return success();
}

/// The replica count of the schedule `op`'s stage collective (`what`)
/// combines over: at least 2 (L1.2), else an error.
static FailureOr<int64_t> replicasOf(Operation *op, StringRef what) {
  Operation *scope = getProgramScope(op);
  ScheduleOp schedule;
  if (scope)
    for (auto s : scope->getRegion(0).front().getOps<ScheduleOp>())
      schedule = s;
  int64_t replicas = schedule && schedule.getReplicas() ? schedule.getReplicas()->size() : 0;
  if (replicas < 2)
    return emitCheckError(op, Property::Safety, "L1.2")
           << what << " combines the buffers of the schedule's replicas, but "
           << (schedule ? "the l1.schedule lists " + std::to_string(replicas) + " (at least 2)"
                        : std::string("the program has no l1.schedule"));
  return replicas;
}

LogicalResult AllReduceOp::verifySymbolUses(SymbolTableCollection &) {
  return failure(failed(replicasOf(*this, "an all-reduce")));
}

LogicalResult ReduceScatterOp::verifySymbolUses(SymbolTableCollection &) {
  FailureOr<int64_t> count = replicasOf(*this, "a reduce-scatter");
  if (failed(count))
    return failure();
  int64_t replicas = *count;
  int64_t in = getBuffer().getType().getTensor().getDimSize(0);
  int64_t out = getResult().getType().getTensor().getDimSize(0);
  if (in != out * replicas)
    return emitCheckError(*this, Property::Consistency, "L1.5")
           << "reduce_scatter: the schedule lists " << replicas
           << " replicas, so each keeps " << in << " / " << replicas
           << " rows of the first axis, not " << out;
  return success();
}

/// The schedule's replicas: distinct compute nodes of one isa, each joined
/// to the next by a path of edges, the first running the tensor graphs.
/// A tensor-parallel schedule's `shards` obey the same rules (`what` is
/// "replica" or "shard").
static LogicalResult checkReplicas(ScheduleOp schedule, ArrayAttr replicas,
                                   StringRef what = "replica") {
  SmallVector<NodeOp> nodes;
  for (Attribute a : replicas) {
    auto ref = cast<FlatSymbolRefAttr>(a);
    FailureOr<NodeOp> node = checkPlacement(schedule, ref, (what + " " + ref.getValue()).str());
    if (failed(node))
      return failure();
    if (llvm::is_contained(nodes, *node))
      return emitCheckError(schedule, Property::Safety, "L1.2")
             << "the schedule lists " << what << " " << ref << " twice";
    auto isa = [](NodeOp n) { return n.getIsa().value_or("").str(); };
    if (!nodes.empty() && isa(*node) != isa(nodes.front()))
      return emitCheckError(schedule, Property::Safety, "L1.1")
             << what << " " << ref << " has isa '" << isa(*node) << "' but " << what << " @"
             << nodes.front().getSymName() << " has '" << isa(nodes.front())
             << "': every " << what << " runs the same code";
    if (!nodes.empty() &&
        failed(checkPath(schedule, FlatSymbolRefAttr::get(nodes.back().getSymNameAttr()), ref,
                         ("the " + what + "s' collectives").str())))
      return failure();
    nodes.push_back(*node);
  }
  if (nodes.size() < 2)
    return emitCheckError(schedule, Property::Safety, "L1.2")
           << "a " << (what == "replica" ? "data" : "tensor") << "-parallel schedule lists at least two " << what << "s, got " << nodes.size();
  Operation *scope = getProgramScope(schedule);
  if (!scope)
    return success();
  for (auto graph : scope->getRegion(0).front().getOps<TensorGraphOp>())
    if (graph.getNode() != nodes.front().getSymName())
      return emitCheckError(schedule, Property::Safety, "L1.2")
             << "tensor graph @" << graph.getSymName() << " runs on @" << graph.getNode()
             << ", but the " << what << "s start at @" << nodes.front().getSymName()
             << " (the program is written for the first " << what << ")";
  return success();
}

LogicalResult ScheduleOp::verifySymbolUses(SymbolTableCollection &tables) {
  if (ArrayAttr replicas = getReplicasAttr())
    if (failed(checkReplicas(*this, replicas)))
      return failure();
  if (ArrayAttr shards = getShardsAttr()) {
    if (getReplicasAttr())
      return emitCheckError(*this, Property::Safety, "L1.2")
             << "a schedule lists replicas (data parallel) or shards (tensor parallel), "
                "not both";
    if (failed(checkReplicas(*this, shards, "shard")))
      return failure();
    if (getPipelineDepth() > 1)
      return emitCheckError(*this, Property::Safety, "L1.4")
             << "a tensor-parallel schedule runs one step at a time (pipeline_depth 1, not "
             << getPipelineDepth() << "): every rank meets each step's collectives in order";
  } else if (Operation *scope = getProgramScope(*this)) {
    // Under replicas, a sharded field is update sharding's: the replica's
    // block of the optimizer state.
    if (!getReplicasAttr())
      for (auto actor : scope->getRegion(0).front().getOps<ActorOp>())
        for (auto state : actor.getBody().front().getOps<StateOp>())
          if (state.getShard())
            return emitCheckError(state, Property::Safety, "L1.2")
                   << "state @" << state.getSymName()
                   << " holds one shard per rank, but the l1.schedule lists no shards or "
                      "replicas";
  }
  for (Attribute a : getPipelines()) {
    auto ref = cast<FlatSymbolRefAttr>(a);
    if (!isa_and_nonnull<PipelineOp>(lookupInProgram(tables, *this, ref)))
      return emitCheckError(*this, Property::Safety, "L1.2")
             << "schedule names pipeline " << ref << ", which does not exist";
  }
  llvm::DenseSet<Operation *> fenced;
  for (Attribute a : getActors()) {
    auto ref = cast<FlatSymbolRefAttr>(a);
    Operation *actor = lookupInProgram(tables, *this, ref);
    if (!isa_and_nonnull<ActorOp>(actor))
      return emitCheckError(*this, Property::Safety, "L1.2")
             << "schedule names actor " << ref << ", which does not exist";
    fenced.insert(actor);
  }
  for (Operation &sibling : (*this)->getBlock()->getOperations()) {
    if (&sibling == getOperation())
      break;
    if (isa<ScheduleOp>(sibling))
      return emitOpError("a program has one l1.schedule");
  }
  if (getPipelineDepth() <= 1)
    return success();
  Operation *scope = getProgramScope(*this);
  if (!scope)
    return success();
  for (auto actor : scope->getRegion(0).front().getOps<ActorOp>()) {
    if (fenced.contains(actor))
      continue;
    for (auto window : actor.getBody().front().getOps<WindowOp>()) {
      if (window.getReaders().empty())
        continue;
      InFlightDiagnostic d =
          emitCheckError(*this, Property::Safety, "L1.4")
          << "at pipeline_depth " << getPipelineDepth() << ", step N+1's readers of "
          << "window @" << actor.getSymName() << "::@" << window.getSymName()
          << " may overlap step N's handlers: list actor @" << actor.getSymName()
          << " in the schedule's actors so that it fences the steps";
      d.attachNote(window.getLoc()) << "window declared here";
      return d;
    }
  }
  return success();
}
