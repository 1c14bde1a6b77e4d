//===- L1Ops.cpp - The l1 dialect's operations and local verifiers ------===//
//
// Custom syntax, the tensor ops' shape rules (L1.5), and the region verifiers
// that need nothing outside their op: buffer conservation over every CFG path
// of a stage (L1.7), tensor-graph cycles (L1.10) and reachability (L1.8).
// Checks that follow symbol references live in L1Verify.cpp.
//
//===----------------------------------------------------------------------===//
#include "synpl/Dialect/L1/L1Ops.h"
#include "L1TensorVerify.h"
#include "synpl/Dialect/L1/L1Program.h"
#include "synpl/Analysis/CFGPaths.h"
#include "synpl/Analysis/Shapes.h"
#include "synpl/Support/Property.h"
#include "synpl/Support/Units.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "llvm/ADT/StringExtras.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l1;
namespace sh = synpl::shapes;

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

Operation *synpl::l1::getProgramScope(Operation *op) {
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
    if (!isa_and_nonnull<L1Dialect>(p->getDialect()) &&
        p->hasTrait<OpTrait::SymbolTable>())
      return p;
  return nullptr;
}

SystemOp synpl::l1::getSystem(Operation *op) {
  Operation *scope = getProgramScope(op);
  if (!scope || scope->getNumRegions() == 0 || scope->getRegion(0).empty())
    return {};
  for (Operation &child : scope->getRegion(0).front())
    if (auto system = dyn_cast<SystemOp>(child))
      return system;
  return {};
}

NodeOp synpl::l1::lookupNode(Operation *from, FlatSymbolRefAttr ref) {
  if (!ref)
    return {};
  SystemOp system = getSystem(from);
  if (!system)
    return {};
  return system.lookupNode(ref.getValue());
}

Operation *synpl::l1::lookupInProgram(SymbolTableCollection &tables, Operation *from,
                                      SymbolRefAttr ref) {
  Operation *scope = getProgramScope(from);
  if (!scope || !ref)
    return nullptr;
  return tables.lookupSymbolIn(scope, ref);
}

std::string synpl::l1::valueName(Value value) {
  std::string s;
  llvm::raw_string_ostream os(s);
  // The value's op is being verified: printing must not verify it again.
  value.printAsOperand(os, OpPrintingFlags().assumeVerified());
  return s;
}

std::string synpl::l1::symbolString(SymbolRefAttr ref) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << ref;
  return s;
}

uint64_t synpl::l1::tensorBytes(RankedTensorType type) {
  auto n = sh::numElements(type.getShape());
  if (!n)
    return UINT64_MAX;
  unsigned bits = type.getElementType().getIntOrFloatBitWidth();
  return saturatingMul(*n, (bits + 7) / 8);
}

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

static ParseResult parseEdgeArrow(OpAsmParser &parser, UnitAttr &bidirectional) {
  if (succeeded(parser.parseOptionalLess())) {
    if (parser.parseArrow())
      return failure();
    bidirectional = parser.getBuilder().getUnitAttr();
    return success();
  }
  return parser.parseArrow();
}

static void printEdgeArrow(OpAsmPrinter &p, Operation *, UnitAttr bidirectional) {
  p << (bidirectional ? "<->" : "->");
}

static ParseResult parseChain(OpAsmParser &parser, ArrayAttr &elements) {
  SmallVector<Attribute> refs;
  do {
    FlatSymbolRefAttr ref;
    if (parser.parseAttribute(ref))
      return failure();
    refs.push_back(ref);
  } while (succeeded(parser.parseOptionalArrow()));
  elements = parser.getBuilder().getArrayAttr(refs);
  return success();
}

static void printChain(OpAsmPrinter &p, Operation *, ArrayAttr elements) {
  llvm::interleave(
      elements, p, [&](Attribute a) { p.printAttribute(a); }, " -> ");
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

#define GET_TYPEDEF_CLASSES
#include "synpl/Dialect/L1/L1Types.cpp.inc"

LogicalResult BufType::verify(function_ref<InFlightDiagnostic()> emitError,
                              FlatSymbolRefAttr node, RankedTensorType tensor) {
  if (!node)
    return emitError() << "buffer needs a node";
  if (!tensor || !tensor.hasStaticShape())
    return emitError() << "buffer tensors have a static shape, got " << tensor;
  if (!tensor.getElementType().isIntOrFloat())
    return emitError() << "buffer elements are integers or floats, got "
                       << tensor.getElementType();
  return success();
}

void L1Dialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "synpl/Dialect/L1/L1Types.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Function-like headers: stage, tensor graph, handler
//===----------------------------------------------------------------------===//

static ParseResult parseEntryAndBody(OpAsmParser &parser, OperationState &result) {
  SmallVector<OpAsmParser::Argument> args;
  if (parser.parseArgumentList(args, OpAsmParser::Delimiter::Paren,
                               /*allowType=*/true) ||
      parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  Region *body = result.addRegion();
  if (parser.parseRegion(*body, args, /*enableNameShadowing=*/false))
    return failure();
  if (body->empty())
    body->emplaceBlock();
  return success();
}

static void printEntryAndBody(OpAsmPrinter &p, Operation *op, Region &body,
                              ArrayRef<StringRef> elided) {
  p << '(';
  if (!body.empty())
    llvm::interleaveComma(body.front().getArguments(), p,
                          [&](BlockArgument arg) { p.printRegionArgument(arg); });
  p << ')';
  SmallVector<StringRef> names(elided.begin(), elided.end());
  p.printOptionalAttrDictWithKeyword(op->getDiscardableAttrDictionary().getValue(),
                                     names);
  p << ' ';
  p.printRegion(body, /*printEntryBlockArgs=*/false, /*printBlockTerminators=*/true);
}

static ParseResult parseOnAndReads(OpAsmParser &parser, OperationState &result,
                                   StringRef nodeName, StringRef readsName) {
  FlatSymbolRefAttr node;
  if (parser.parseKeyword("on") || parser.parseAttribute(node))
    return failure();
  result.addAttribute(nodeName, node);
  if (succeeded(parser.parseOptionalKeyword("reads"))) {
    ArrayAttr reads;
    if (parser.parseAttribute(reads))
      return failure();
    for (Attribute a : reads)
      if (!isa<SymbolRefAttr>(a))
        return parser.emitError(parser.getCurrentLocation(),
                                "reads lists window references");
    result.addAttribute(readsName, reads);
  }
  return success();
}

/// Prints ` @name on @node [reads [...]]`, the shared head of stages and
/// tensor graphs (the inverse of parseSymbolName + parseOnAndReads).
static void printNameOnAndReads(OpAsmPrinter &p, StringRef name,
                                FlatSymbolRefAttr node, ArrayAttr reads) {
  p << ' ';
  p.printSymbolName(name);
  p << " on ";
  p.printAttribute(node);
  if (!reads.empty()) {
    p << " reads ";
    p.printAttribute(reads);
  }
}

ParseResult StageOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr name;
  if (parser.parseSymbolName(name, getSymNameAttrName(result.name), result.attributes) ||
      parseOnAndReads(parser, result, getNodeAttrName(result.name),
                      getReadsAttrName(result.name)) ||
      parser.parseKeyword("process"))
    return failure();
  return parseEntryAndBody(parser, result);
}

void StageOp::print(OpAsmPrinter &p) {
  printNameOnAndReads(p, getSymName(), getNodeAttr(), getReads());
  p << " process";
  printEntryAndBody(p, *this, getBody(), {});
}

ParseResult TensorGraphOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr name;
  if (parser.parseSymbolName(name, getSymNameAttrName(result.name), result.attributes) ||
      parseOnAndReads(parser, result, getNodeAttrName(result.name),
                      getReadsAttrName(result.name)))
    return failure();
  if (succeeded(parser.parseOptionalKeyword("then"))) {
    FlatSymbolRefAttr then;
    if (parser.parseAttribute(then))
      return failure();
    result.addAttribute(getThenAttrName(result.name), then);
  }
  if (parser.parseKeyword("compute"))
    return failure();
  return parseEntryAndBody(parser, result);
}

void TensorGraphOp::print(OpAsmPrinter &p) {
  printNameOnAndReads(p, getSymName(), getNodeAttr(), getReads());
  if (getThenAttr()) {
    p << " then ";
    p.printAttribute(getThenAttr());
  }
  p << " compute";
  printEntryAndBody(p, *this, getBody(), {});
}

RegionKind TensorGraphOp::getRegionKind(unsigned) { return RegionKind::Graph; }

SmallVector<Type> TensorGraphOp::getOutputTypes() {
  if (getBody().empty() || getEntry().empty())
    return {};
  if (auto ret = dyn_cast<ReturnOp>(getEntry().back()))
    return llvm::to_vector(ret.getOperands().getTypes());
  return {};
}

ParseResult HandlerOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr name;
  if (parser.parseSymbolName(name, getSymNameAttrName(result.name), result.attributes))
    return failure();
  return parseEntryAndBody(parser, result);
}

void HandlerOp::print(OpAsmPrinter &p) {
  p << ' ';
  p.printSymbolName(getSymName());
  printEntryAndBody(p, *this, getBody(), {});
}

bool HandlerOp::writes(StringRef field) {
  bool found = false;
  getBody().walk([&](StateWriteOp w) {
    if (w.getField() == field)
      found = true;
  });
  return found;
}

//===----------------------------------------------------------------------===//
// Result names: values read from a field print under the field's name.
//===----------------------------------------------------------------------===//

void ReadBatchOp::getAsmResultNames(OpAsmSetValueNameFn setName) {
  for (auto [field, result] : llvm::zip(getFields(), getResults()))
    if (auto ref = dyn_cast<FlatSymbolRefAttr>(field))
      setName(result, ref.getValue());
}

void WindowCopyOp::getAsmResultNames(OpAsmSetValueNameFn setName) {
  setName(getResult(), getField());
}

void WindowReadOp::getAsmResultNames(OpAsmSetValueNameFn setName) {
  setName(getResult(), getField());
}

void StateReadOp::getAsmResultNames(OpAsmSetValueNameFn setName) {
  setName(getResult(), getField());
}

//===----------------------------------------------------------------------===//
// Topology
//===----------------------------------------------------------------------===//

NodeOp SystemOp::lookupNode(StringRef name) {
  return dyn_cast_or_null<NodeOp>(
      ::mlir::SymbolTable::lookupSymbolIn(getOperation(), name));
}

bool SystemOp::hasPath(StringRef from, StringRef to) {
  if (from == to)
    return true;
  llvm::StringMap<SmallVector<StringRef>> adj;
  for (auto edge : getBody().front().getOps<EdgeOp>()) {
    adj[edge.getFrom()].push_back(edge.getTo());
    if (edge.getBidirectional())
      adj[edge.getTo()].push_back(edge.getFrom());
  }
  llvm::StringSet<> seen;
  SmallVector<StringRef> work{from};
  seen.insert(from);
  while (!work.empty()) {
    StringRef n = work.pop_back_val();
    for (StringRef m : adj.lookup(n)) {
      if (m == to)
        return true;
      if (seen.insert(m).second)
        work.push_back(m);
    }
  }
  return false;
}

LogicalResult SystemOp::verify() {
  for (Operation &op : getBody().front())
    if (!isa<NodeOp, EdgeOp>(op))
      return op.emitOpError("is not allowed in l1.system (nodes and edges only)");
  if (Operation *parent = (*this)->getParentOp())
    for (Operation &sibling : (*this)->getBlock()->getOperations()) {
      if (&sibling == getOperation())
        break;
      if (isa<SystemOp>(sibling)) {
        InFlightDiagnostic d = emitOpError("a program has one l1.system");
        d.attachNote(sibling.getLoc()) << "the first one is here";
        (void)parent;
        return d;
      }
    }
  return success();
}

// `l1.node @gpu_0 compute {isa = "cuda", vram = "24GB", sm = 84}`: the
// properties print as the spec writes them (counts without `: i64`).
ParseResult NodeOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr name;
  StringRef kindWord;
  SMLoc kindLoc = parser.getCurrentLocation();
  if (parser.parseSymbolName(name, getSymNameAttrName(result.name), result.attributes) ||
      parser.parseKeyword(&kindWord))
    return failure();
  std::optional<NodeKind> kind = symbolizeNodeKind(kindWord);
  if (!kind)
    return parser.emitError(kindLoc, "node kind is storage, memory or compute, got '")
           << kindWord << "'";
  result.addAttribute(getKindAttrName(result.name),
                      parser.getBuilder().getI32IntegerAttr(static_cast<int32_t>(*kind)));
  SMLoc propsLoc = parser.getCurrentLocation();
  NamedAttrList props;
  if (parser.parseOptionalAttrDict(props))
    return failure();
  // Check the known properties' kinds here: a mistyped inherent attribute
  // would otherwise be dropped silently when it becomes a property.
  for (NamedAttribute attr : props) {
    StringRef key = attr.getName().getValue();
    bool isString = key == "capacity" || key == "isa" || key == "vram" ||
                    key == "arch";
    bool isCount = key == "cores" || key == "sm";
    if (isString && !isa<StringAttr>(attr.getValue()))
      return parser.emitError(propsLoc, "node property '")
             << key << "' is a string (e.g. \"32GB\"), got " << attr.getValue();
    if (isCount && !isa<IntegerAttr>(attr.getValue()))
      return parser.emitError(propsLoc, "node property '")
             << key << "' is an integer, got " << attr.getValue();
  }
  result.attributes.append(props);
  return success();
}

void NodeOp::print(OpAsmPrinter &p) {
  p << ' ';
  p.printSymbolName(getSymName());
  p << ' ' << stringifyNodeKind(getKind());
  SmallVector<NamedAttribute> props;
  for (NamedAttribute attr : (*this)->getAttrs())
    if (attr.getName() != getSymNameAttrName() && attr.getName() != getKindAttrName())
      props.push_back(attr);
  if (props.empty())
    return;
  p << " {";
  llvm::interleaveComma(props, p, [&](NamedAttribute attr) {
    p << attr.getName().getValue() << " = ";
    if (auto i = dyn_cast<IntegerAttr>(attr.getValue());
        i && i.getType().isSignlessInteger(64))
      p << i.getInt();
    else
      p.printAttribute(attr.getValue());
  });
  p << '}';
}

std::optional<uint64_t> NodeOp::getMemoryBytes() {
  if (auto c = getCapacity())
    return parseByteSize(*c);
  if (auto v = getVram())
    return parseByteSize(*v);
  return std::nullopt;
}

bool NodeOp::holdsBuffers() {
  return getKind() == NodeKind::memory ||
         (getKind() == NodeKind::compute && getVram().has_value());
}

LogicalResult NodeOp::verify() {
  for (NamedAttribute attr : (*this)->getDiscardableAttrs())
    return emitOpError("unknown node property '")
           << attr.getName().getValue()
           << "' (known: capacity, isa, vram, cores, sm, arch)";
  if (auto c = getCapacity(); c && !parseByteSize(*c))
    return emitOpError("capacity '") << *c << "' is not a byte size like 32GB";
  if (auto v = getVram(); v && !parseByteSize(*v))
    return emitOpError("vram '") << *v << "' is not a byte size like 24GB";
  switch (getKind()) {
  case NodeKind::storage:
    if (getIsa() || getVram() || getCores() || getSm() || getArch())
      return emitOpError("a storage node has no isa, vram, cores, sm or arch");
    break;
  case NodeKind::memory:
    if (!getCapacity())
      return emitOpError("a memory node needs a capacity");
    if (getIsa() || getVram() || getCores() || getSm() || getArch())
      return emitOpError("a memory node has no isa, vram, cores, sm or arch");
    break;
  case NodeKind::compute:
    if (!getIsa())
      return emitOpError("a compute node needs an isa");
    if (auto arch = getArch()) {
      if (*getIsa() != "cuda")
        return emitOpError("'arch' names a GPU architecture; it belongs on an "
                           "isa = \"cuda\" node");
      // The form only: which architectures exist is the CUDA sink's fact,
      // checked where it compiles for this node.
      StringRef digits = *arch;
      if (!digits.consume_front("sm_") || (digits.consume_back("a"), digits.empty()) ||
          !llvm::all_of(digits, llvm::isDigit))
        return emitOpError("arch '") << *arch
                                     << "' is not a CUDA architecture name like sm_90 or sm_90a";
    }
    break;
  }
  if ((getCores() && *getCores() <= 0) || (getSm() && *getSm() <= 0))
    return emitOpError("cores and sm are positive counts");
  return success();
}

LogicalResult EdgeOp::verify() {
  auto system = (*this)->getParentOfType<SystemOp>();
  if (!system)
    return failure();
  NodeOp ends[2];
  FlatSymbolRefAttr refs[2] = {getFromAttr(), getToAttr()};
  for (int i = 0; i < 2; ++i) {
    ends[i] = system.lookupNode(refs[i].getValue());
    if (!ends[i])
      return emitCheckError(*this, Property::Safety, "L1.1")
             << "edge names node " << refs[i] << ", which system @"
             << system.getSymName() << " does not have";
  }
  if (ends[0] == ends[1])
    return emitCheckError(*this, Property::Safety, "L1.1")
           << "edge connects node " << refs[0] << " to itself";
  if (ends[0].getKind() == NodeKind::storage && ends[1].getKind() == NodeKind::storage)
    return emitCheckError(*this, Property::Safety, "L1.1")
           << "edge connects two storage nodes (" << refs[0] << ", " << refs[1]
           << "); bytes between disks pass through memory";
  if (!parseBandwidth(getBandwidth()))
    return emitCheckError(*this, Property::Safety, "L1.1")
           << "bandwidth '" << getBandwidth() << "' is not a rate like 2GB/s";
  if (std::optional<StringRef> latency = getLatency(); latency && !parseDuration(*latency))
    return emitCheckError(*this, Property::Safety, "L1.1")
           << "latency '" << *latency << "' is not a duration like 2us";
  return success();
}

//===----------------------------------------------------------------------===//
// Actors
//===----------------------------------------------------------------------===//

uint64_t ActorOp::getStateBytes() {
  uint64_t total = 0;
  for (auto state : getBody().front().getOps<StateOp>())
    if (auto t = dyn_cast<RankedTensorType>(state.getType()))
      total = saturatingAdd(total, tensorBytes(t));
  return total;
}

/// `planned_steps`, `training_mode` and `rank` are numbers the runtime
/// writes as one f32; a shard axis is an axis of the field.
LogicalResult StateOp::verify() {
  bool runtimeNumber = getInit() == InitKind::planned_steps ||
                       getInit() == InitKind::training_mode || getInit() == InitKind::rank;
  if (std::optional<uint64_t> axis = getShard()) {
    auto t = dyn_cast<RankedTensorType>(getType());
    if (runtimeNumber)
      return emitOpError("init ") << stringifyInitKind(getInit())
                                  << " is one number per process; it has no shard";
    if (!t || *axis >= (uint64_t)t.getRank())
      return emitOpError("shard axis ") << *axis << " is not an axis of " << getType();
  }
  if (!runtimeNumber)
    return success();
  auto t = dyn_cast<RankedTensorType>(getType());
  if (!t || t.getRank() != 0 || !t.getElementType().isF32())
    return emitOpError("init ")
           << stringifyInitKind(getInit()) << " fills a rank-0 f32 (tensor<f32>), not "
           << getType();
  return success();
}

/// L1.8 for a straight-line or graph body: every argument and every value is
/// consumed or returned.
static LogicalResult verifyAllUsed(Operation *owner, Block &block, StringRef what) {
  for (BlockArgument arg : block.getArguments())
    if (arg.use_empty())
      return emitCheckError(owner, Property::Liveness, "L1.8")
             << what << " argument " << valueName(arg) << " (#" << arg.getArgNumber()
             << ") is never consumed";
  for (Operation &op : block)
    for (Value result : op.getResults())
      if (result.use_empty()) {
        InFlightDiagnostic d = emitCheckError(&op, Property::Liveness, "L1.8")
                               << "value " << valueName(result) << " of "
                               << op.getName() << " in " << what
                               << " is neither consumed nor returned";
        return d;
      }
  return success();
}

static bool isTensorComputeOp(Operation *op) { return op->hasTrait<TensorOpTrait>(); }

LogicalResult HandlerOp::verifyRegions() {
  Block &entry = getEntry();
  for (BlockArgument arg : entry.getArguments())
    if (!isa<RankedTensorType>(arg.getType()) ||
        !cast<RankedTensorType>(arg.getType()).hasStaticShape())
      return emitOpError("message arguments are static tensors, got ")
             << arg.getType();
  for (Operation &op : entry)
    if (!isTensorComputeOp(&op) && !isa<StateReadOp, StateWriteOp, ReturnOp>(op))
      return op.emitOpError("is not allowed in an actor handler");
  return verifyAllUsed(*this, entry, ("handler @" + getSymName()).str());
}

//===----------------------------------------------------------------------===//
// Stages: buffer conservation (L1.7) and loop freedom (L1.10)
//===----------------------------------------------------------------------===//

namespace {
/// Tracks live buffers along one CFG path of a stage.
class ConservationVisitor : public CFGPathVisitor {
public:
  explicit ConservationVisitor(StageOp stage) : stage(stage) {}

  LogicalResult visitBlock(Block *block, ArrayRef<Block *> path,
                           LiveValues &live) override {
    for (Operation &op : *block) {
      // Every use must see a live buffer: a second consumer consumes twice,
      // any other use reads a freed buffer.
      SmallVector<Value> consumes = consumed(&op);
      for (Value v : op.getOperands()) {
        if (!isa<BufType>(v.getType()) || live.contains(v))
          continue;
        if (isa<BranchOpInterface>(op) || llvm::is_contained(consumes, v))
          return reportTwice(&op, v, path);
        return reportDead(&op, v, path);
      }
      if (auto br = dyn_cast<BranchOpInterface>(op)) {
        for (unsigned i = 0, e = op.getNumSuccessors(); i < e; ++i) {
          llvm::SmallPtrSet<Value, 4> passed;
          for (Value v : br.getSuccessorOperands(i).getForwardedOperands())
            if (isa<BufType>(v.getType()) && !passed.insert(v).second)
              return reportTwice(&op, v, path);
        }
        continue; // visitEdge hands the operands on
      }
      for (Value v : consumes)
        if (!live.remove(v)) // the same buffer twice in one operand list
          return reportTwice(&op, v, path);
      for (Value r : op.getResults())
        if (isa<BufType>(r.getType()))
          live.insert(r);
    }
    return success();
  }

  void visitEdge(Operation *term, unsigned succIndex, LiveValues &live) override {
    if (auto br = dyn_cast<BranchOpInterface>(term))
      for (Value v : br.getSuccessorOperands(succIndex).getForwardedOperands())
        live.remove(v);
    for (BlockArgument arg : term->getSuccessor(succIndex)->getArguments())
      if (isa<BufType>(arg.getType()))
        live.insert(arg);
  }

  LogicalResult visitPathEnd(ArrayRef<Block *> path, const LiveValues &live) override {
    if (live.empty())
      return success();
    Operation *term = &path.back()->back();
    InFlightDiagnostic d = emitCheckError(term, Property::Liveness, "L1.7");
    d << "buffer" << (live.size() > 1 ? "s " : " ");
    llvm::interleaveComma(live, d, [&](Value v) { d << describe(v); });
    d << (live.size() > 1 ? " are" : " is") << " live at the end of path "
      << formatCFGPath(path) << " in stage @" << stage.getSymName()
      << " (forward, send, transfer or drop it)";
    for (Value v : live)
      if (Operation *def = v.getDefiningOp())
        d.attachNote(def->getLoc()) << valueName(v) << " is created here";
    return failure();
  }

private:
  static SmallVector<Value> consumed(Operation *op) {
    if (auto drop = dyn_cast<DropOp>(op))
      return {drop.getBuffer()};
    if (auto t = dyn_cast<TransferOp>(op))
      return {t.getSource()};
    if (auto r = dyn_cast<AllReduceOp>(op))
      return llvm::to_vector(r.getBuffers());
    if (auto r = dyn_cast<ReduceScatterOp>(op))
      return {r.getBuffer()};
    if (auto s = dyn_cast<SendOp>(op))
      return llvm::to_vector(s.getArgs());
    if (auto f = dyn_cast<ForwardOp>(op))
      return llvm::to_vector(f.getArgs());
    return {};
  }

  std::string describe(Value v) {
    std::string s = valueName(v);
    if (auto arg = dyn_cast<BlockArgument>(v))
      s += " (argument " + std::to_string(arg.getArgNumber()) + " of " +
           formatBlock(arg.getOwner()) + ")";
    else if (Operation *def = v.getDefiningOp())
      s += " (from " + def->getName().getStringRef().str() + ")";
    return s;
  }

  LogicalResult reportTwice(Operation *op, Value v, ArrayRef<Block *> path) {
    emitCheckError(op, Property::Liveness, "L1.7")
        << "buffer " << describe(v) << " is consumed twice on path "
        << formatCFGPath(path) << " in stage @" << stage.getSymName();
    return failure();
  }

  LogicalResult reportDead(Operation *op, Value v, ArrayRef<Block *> path) {
    emitCheckError(op, Property::Liveness, "L1.7")
        << "buffer " << describe(v) << " is used after it was consumed on path "
        << formatCFGPath(path) << " in stage @" << stage.getSymName();
    return failure();
  }

  StageOp stage;
};
} // namespace

LogicalResult StageOp::verifyRegions() {
  if (getBody().empty())
    return emitOpError("needs a body");
  for (BlockArgument arg : getEntry().getArguments())
    if (!isa<BufType>(arg.getType()))
      return emitOpError("receives buffers (!l1.buf<...>), got ") << arg.getType()
             << " for argument #" << arg.getArgNumber();
  for (Block &block : getBody()) {
    for (Operation &op : block)
      if (!isa<ReadBatchOp, WindowCopyOp, TransferOp, AllReduceOp, ReduceScatterOp, BatchFullOp,
               ReportOp,
               DropOp, SendOp, ForwardOp, EndOp, cf::BranchOp, cf::CondBranchOp>(op))
        return op.emitOpError("is not allowed in a stage");
    if (block.empty() || !block.back().hasTrait<OpTrait::IsTerminator>())
      return emitOpError("has a block without a terminator");
  }

  ConservationVisitor visitor(*this);
  LiveValues initial;
  for (BlockArgument arg : getEntry().getArguments())
    initial.insert(arg);
  // A block reached again with the same live buffers continues the same
  // way, so repeated states are walked once.
  CFGWalkOptions options;
  options.skipRepeatedStates = true;
  CFGWalkResult walk = walkCFGPaths(getBody(), visitor, initial, options);
  switch (walk.status) {
  case CFGWalkResult::Status::Done:
    return success();
  case CFGWalkResult::Status::Aborted:
    return failure();
  case CFGWalkResult::Status::BackEdge:
    return emitCheckError(*this, Property::Resource, "L1.10")
           << "stage @" << getSymName() << " has a control-flow cycle "
           << formatCFGPath(ArrayRef(walk.path)
                                .drop_front(llvm::find(walk.path, walk.path.back()) -
                                            walk.path.begin()))
           << " (stages are loop-free: a loop is unbounded execution)";
  case CFGWalkResult::Status::TooManyPaths:
    return emitCheckError(*this, Property::Liveness, "L1.7")
           << "stage @" << getSymName()
           << " has too many CFG paths to check buffer conservation (more than "
           << (walk.numPaths - 1) << ")";
  }
  return failure();
}

LogicalResult AllReduceOp::verify() {
  if (getBuffers().empty())
    return emitOpError("combines no buffer");
  for (auto [in, out] : llvm::zip(getBuffers().getTypes(), getResults().getTypes()))
    if (in != out)
      return emitCheckError(*this, Property::Consistency, "L1.5")
             << "an all-reduce keeps each buffer's type: " << in << " becomes " << out;
  if (getBuffers().size() != getResults().size())
    return emitOpError("has ") << getBuffers().size() << " buffers but "
                               << getResults().size() << " results";
  for (Type t : getBuffers().getTypes()) {
    Type elt = cast<BufType>(t).getTensor().getElementType();
    bool ok = elt.isF32() || elt.isF64() || elt.isSignlessInteger(32) ||
              elt.isSignlessInteger(64);
    if (!ok)
      return emitCheckError(*this, Property::Consistency, "L1.5")
             << "an all-reduce combines f32, f64, i32 or i64 buffers, not " << t;
    if (getReduce() == ReduceKind::mean && !isa<FloatType>(elt))
      return emitCheckError(*this, Property::Consistency, "L1.5")
             << "the mean of " << t << " is not an integer; reduce it with sum";
  }
  return success();
}

LogicalResult ReduceScatterOp::verify() {
  BufType in = getBuffer().getType(), out = getResult().getType();
  RankedTensorType a = in.getTensor(), r = out.getTensor();
  if (in.getNode() != out.getNode())
    return emitCheckError(*this, Property::Consistency, "L1.5")
           << "a reduce-scatter keeps its buffer on its node: " << in.getNode()
           << " becomes " << out.getNode();
  Type elt = a.getElementType();
  bool ok = elt.isF32() || elt.isF64() || elt.isSignlessInteger(32) ||
            elt.isSignlessInteger(64);
  if (!ok || r.getElementType() != elt)
    return emitCheckError(*this, Property::Consistency, "L1.5")
           << "a reduce-scatter combines f32, f64, i32 or i64 buffers into one of the same "
              "element type, not "
           << in << " into " << out;
  if (getReduce() == ReduceKind::mean && !isa<FloatType>(elt))
    return emitCheckError(*this, Property::Consistency, "L1.5")
           << "the mean of " << in << " is not an integer; reduce it with sum";
  bool blocks = a.getRank() >= 1 && a.getRank() == r.getRank() && r.getDimSize(0) > 0 &&
                a.getDimSize(0) % r.getDimSize(0) == 0 &&
                a.getShape().drop_front() == r.getShape().drop_front();
  if (!blocks)
    return emitCheckError(*this, Property::Consistency, "L1.5")
           << "a reduce-scatter keeps one block of the first axis: the result "
           << r << " should be the operand " << a
           << " with its first dimension divided by the replica count";
  return success();
}

LogicalResult TransferOp::verify() {
  auto from = getSource().getType(), to = getResult().getType();
  if (from.getTensor() != to.getTensor())
    return emitCheckError(*this, Property::Consistency, "L1.5")
           << "transfer keeps the tensor: " << from.getTensor() << " becomes "
           << to.getTensor();
  if (from.getNode() == to.getNode())
    return emitOpError("transfers to another node; source and result are on ")
           << from.getNode();
  return success();
}

//===----------------------------------------------------------------------===//
// Tensor graphs: cycles (L1.10) and reachability (L1.8)
//===----------------------------------------------------------------------===//

/// Finds a cycle of def-use edges among the ops of `block`; returns it as
/// the list of ops, first op repeated at the end, or empty.
static SmallVector<Operation *> findCycle(Block &block) {
  enum Color { White, Grey, Black };
  llvm::DenseMap<Operation *, Color> color;
  SmallVector<Operation *> stack;
  SmallVector<Operation *> cycle;
  std::function<bool(Operation *)> dfs = [&](Operation *op) {
    color[op] = Grey;
    stack.push_back(op);
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (!def || def->getBlock() != &block)
        continue;
      Color c = color.lookup(def);
      if (c == Grey) {
        auto it = llvm::find(stack, def);
        cycle.assign(it, stack.end());
        cycle.push_back(def);
        return true;
      }
      if (c == White && dfs(def))
        return true;
    }
    stack.pop_back();
    color[op] = Black;
    return false;
  };
  for (Operation &op : block)
    if (color.lookup(&op) == White && dfs(&op))
      break;
  return cycle;
}

LogicalResult TensorGraphOp::verifyRegions() {
  Block &entry = getEntry();
  for (BlockArgument arg : entry.getArguments())
    if (!isa<RankedTensorType>(arg.getType()) ||
        !cast<RankedTensorType>(arg.getType()).hasStaticShape())
      return emitOpError("inputs are static tensors, got ") << arg.getType();
  for (Operation &op : entry)
    if (!isTensorComputeOp(&op) && !isa<WindowReadOp, ReturnOp>(op))
      return op.emitOpError("is not allowed in a tensor graph");
  if (entry.empty() || !isa<ReturnOp>(entry.back()))
    return emitOpError("ends with l1.return");

  SmallVector<Operation *> cycle = findCycle(entry);
  if (!cycle.empty()) {
    // Operands point at definitions; print the cycle in dataflow order.
    std::reverse(cycle.begin(), cycle.end());
    InFlightDiagnostic d = emitCheckError(cycle.front(), Property::Resource, "L1.10")
                           << "tensor graph @" << getSymName() << " has a cycle: ";
    llvm::interleave(
        cycle, d,
        [&](Operation *op) {
          d << valueName(op->getResult(0)) << " (" << op->getName() << ")";
        },
        " -> ");
    return d;
  }
  return verifyAllUsed(*this, entry, ("tensor graph @" + getSymName()).str());
}

LogicalResult ReturnOp::verify() {
  if (isa<HandlerOp>((*this)->getParentOp()) && !getOperands().empty())
    return emitOpError("in a handler returns nothing (handlers write state)");
  return success();
}

#include "synpl/Dialect/L1/L1Enums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "synpl/Dialect/L1/L1Attrs.cpp.inc"
#define GET_OP_CLASSES
#include "synpl/Dialect/L1/L1Ops.cpp.inc"
