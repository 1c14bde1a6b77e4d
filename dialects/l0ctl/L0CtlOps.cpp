//===- L0CtlOps.cpp - The l0ctl dialect's operations and verifiers -----------===//
//
// The structural checks of the Control IR: regions resolve, accesses respect
// the region's access mode, size and alignment, queues are only reached by
// queue ops, and a program's CFG is acyclic.
//
//===----------------------------------------------------------------------===//
#include "synpl/Dialect/L0Ctl/L0CtlOps.h"
#include "synpl/Support/Property.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l0ctl;

//===----------------------------------------------------------------------===//
// Custom directive: `[` (%off (`+` disp)? | disp)? `]`
//===----------------------------------------------------------------------===//

static ParseResult
parseRegionAddress(OpAsmParser &parser,
                   std::optional<OpAsmParser::UnresolvedOperand> &offset,
                   IntegerAttr &disp) {
  if (parser.parseLSquare())
    return failure();
  int64_t value = 0;
  OpAsmParser::UnresolvedOperand operand;
  OptionalParseResult hasOperand = parser.parseOptionalOperand(operand);
  if (hasOperand.has_value()) {
    if (failed(*hasOperand))
      return failure();
    offset = operand;
    if (succeeded(parser.parseOptionalPlus()) && parser.parseInteger(value))
      return failure();
  } else if (parser.parseInteger(value)) {
    return failure();
  }
  disp = parser.getBuilder().getI64IntegerAttr(value);
  return parser.parseRSquare();
}

static void printRegionAddress(OpAsmPrinter &p, Operation *, Value offset,
                               IntegerAttr disp) {
  p << "[";
  if (offset) {
    p << offset;
    if (disp.getInt() != 0)
      p << " + " << disp.getInt();
  } else {
    p << disp.getInt();
  }
  p << "]";
}

#include "synpl/Dialect/L0Ctl/L0CtlEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "synpl/Dialect/L0Ctl/L0CtlAttrs.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "synpl/Dialect/L0Ctl/L0CtlTypes.cpp.inc"
#define GET_OP_CLASSES
#include "synpl/Dialect/L0Ctl/L0CtlOps.cpp.inc"

void L0CtlDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "synpl/Dialect/L0Ctl/L0CtlAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// RegionOp
//===----------------------------------------------------------------------===//

LogicalResult RegionOp::verify() {
  if (getSize() <= 0)
    return emitOpError("region size must be positive, got ") << getSize();
  int64_t align = getAlignment();
  if (align <= 0 || !llvm::isPowerOf2_64(align))
    return emitOpError("region alignment must be a power of two, got ") << align;
  if (std::optional<int64_t> entry = getQueueEntry()) {
    if (*entry != 1 && *entry != 2 && *entry != 4 && *entry != 8)
      return emitOpError("queue entries are 1, 2, 4 or 8 bytes, got ") << *entry;
    if (getSize() % *entry != 0)
      return emitOpError("queue size ")
             << getSize() << " is not a whole number of " << *entry
             << "-byte entries";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ProgramOp
//===----------------------------------------------------------------------===//

static std::string blockName(Block *block) {
  Region *region = block->getParent();
  unsigned index = 0;
  for (Block &b : *region) {
    if (&b == block)
      break;
    ++index;
  }
  return "^bb" + std::to_string(index);
}

LogicalResult ProgramOp::verifyRegions() {
  Region &body = getBody();
  Block &entry = body.front();
  if (entry.getNumArguments() != 0)
    return emitOpError("the entry block takes no arguments: a program's state "
                       "lives in regions");
  for (Block &block : body) {
    for (BlockArgument arg : block.getArguments())
      if (!arg.getType().isSignlessInteger(1) &&
          !arg.getType().isSignlessInteger(8) &&
          !arg.getType().isSignlessInteger(16) &&
          !arg.getType().isSignlessInteger(32) &&
          !arg.getType().isSignlessInteger(64))
        return emitOpError("block argument #")
               << arg.getArgNumber() << " of " << blockName(&block)
               << " has type " << arg.getType()
               << "; registers are i1, i8, i16, i32 or i64";
    for (Operation &op : block)
      if (op.getDialect() != getOperation()->getDialect())
        return op.emitOpError("is not a control op; an l0ctl.program holds "
                              "only l0ctl operations");
  }

  // Machine IR has no loops: find a back edge with an iterative DFS.
  enum Color : uint8_t { White, Grey, Black };
  llvm::DenseMap<Block *, Color> color;
  llvm::SmallVector<Block *> path;
  llvm::SmallVector<std::pair<Block *, unsigned>> stack;
  stack.push_back({&entry, 0});
  color[&entry] = Grey;
  path.push_back(&entry);
  while (!stack.empty()) {
    auto &[block, next] = stack.back();
    Operation *term = block->getTerminator();
    if (!term || next >= term->getNumSuccessors()) {
      color[block] = Black;
      path.pop_back();
      stack.pop_back();
      continue;
    }
    Block *succ = term->getSuccessor(next++);
    Color c = color.lookup(succ);
    if (c == Grey) {
      std::string cycle;
      bool in = false;
      for (Block *b : path) {
        if (b == succ)
          in = true;
        if (in)
          cycle += blockName(b) + " -> ";
      }
      cycle += blockName(succ);
      return term->emitOpError("closes the control-flow cycle ")
             << cycle << "; Machine IR has no loops (a program runs to "
             << "termination in a bounded number of blocks)";
    }
    if (c == White) {
      color[succ] = Grey;
      path.push_back(succ);
      stack.push_back({succ, 0});
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ConstOp
//===----------------------------------------------------------------------===//

LogicalResult ConstOp::verify() {
  if (!llvm::isa<IntegerAttr>(getValue()))
    return emitOpError("immediate must be an integer");
  return success();
}

//===----------------------------------------------------------------------===//
// Region accesses
//===----------------------------------------------------------------------===//

static FailureOr<RegionOp> resolveRegion(Operation *op, FlatSymbolRefAttr ref,
                                         SymbolTableCollection &symbols) {
  Operation *def = symbols.lookupNearestSymbolFrom(op, ref);
  if (!def)
    return op->emitOpError("names region ") << ref << ", which does not exist";
  auto region = llvm::dyn_cast<RegionOp>(def);
  if (!region)
    return op->emitOpError("names ")
           << ref << ", which is a '" << def->getName()
           << "', not an l0ctl.region";
  return region;
}

static unsigned widthBytes(Type t) { return t.getIntOrFloatBitWidth() / 8; }

/// Checks a load/store: not a queue, and a static offset in bounds and
/// naturally aligned.
static LogicalResult verifyAddress(Operation *op, RegionOp region,
                                   Value offset, int64_t disp, Type word) {
  if (region.isQueue())
    return op->emitOpError("reaches queue region @")
           << region.getSymName()
           << " with a plain access; queues take only queue_push/queue_pop";
  if (disp < 0)
    return op->emitOpError("displacement must not be negative, got ") << disp;
  int64_t bytes = widthBytes(word);
  if (bytes > region.getAlignment())
    return op->emitOpError("accesses ")
           << bytes << " bytes but region @" << region.getSymName()
           << " is only aligned to " << region.getAlignment()
           << "; accesses are naturally aligned";

  bool isStatic = !offset;
  int64_t start = disp;
  if (offset)
    if (auto c = offset.getDefiningOp<ConstOp>()) {
      int64_t v = llvm::cast<IntegerAttr>(c.getValue()).getInt();
      if (v < 0)
        return op->emitOpError("offset ") << v << " is negative";
      isStatic = true;
      start = v + disp;
    }
  if (start > region.getSize() - bytes)
    return op->emitOpError("accesses bytes [")
           << start << ", " << start + bytes << ") of region @"
           << region.getSymName() << ", which has " << region.getSize()
           << " bytes";
  if (isStatic && start % bytes != 0)
    return op->emitOpError("accesses ")
           << bytes << " bytes at offset " << start
           << ", which is not a multiple of " << bytes;
  return success();
}

LogicalResult LoadOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<RegionOp> region = resolveRegion(*this, getRegionAttr(), symbols);
  if (failed(region))
    return failure();
  if (!region->isReadable())
    return emitOpError("loads from write-only region @")
           << region->getSymName();
  return verifyAddress(*this, *region, getOffset(), getDisp(), getType());
}

LogicalResult StoreOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<RegionOp> region = resolveRegion(*this, getRegionAttr(), symbols);
  if (failed(region))
    return failure();
  if (region->getAccess() != Access::rw)
    return emitOpError("stores into region @")
           << region->getSymName() << ", whose access is "
           << stringifyAccess(region->getAccess()) << "; stores need rw";
  return verifyAddress(*this, *region, getOffset(), getDisp(),
                       getValue().getType());
}

static LogicalResult verifyQueue(Operation *op, RegionOp region, Type word,
                                 bool push) {
  if (!region.isQueue())
    return op->emitOpError("names region @")
           << region.getSymName() << ", which is not a queue";
  if (push ? !region.isWritable() : !region.isReadable())
    return op->emitOpError(push ? "pushes onto" : "pops from")
           << " queue @" << region.getSymName() << ", whose access is "
           << stringifyAccess(region.getAccess());
  if (widthBytes(word) != static_cast<unsigned>(*region.getQueueEntry()))
    return op->emitOpError("moves ")
           << widthBytes(word) << "-byte values but queue @"
           << region.getSymName() << " holds " << *region.getQueueEntry()
           << "-byte entries";
  return success();
}

LogicalResult QueuePushOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<RegionOp> region = resolveRegion(*this, getQueueAttr(), symbols);
  if (failed(region))
    return failure();
  return verifyQueue(*this, *region, getValue().getType(), /*push=*/true);
}

LogicalResult QueuePopOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<RegionOp> region = resolveRegion(*this, getQueueAttr(), symbols);
  if (failed(region))
    return failure();
  return verifyQueue(*this, *region, getType(), /*push=*/false);
}

//===----------------------------------------------------------------------===//
// Branches
//===----------------------------------------------------------------------===//

SuccessorOperands BranchOp::getSuccessorOperands(unsigned index) {
  return SuccessorOperands(index == 0 ? getTrueDestOperandsMutable()
                                      : getFalseDestOperandsMutable());
}

Block *BranchOp::getSuccessorForOperands(ArrayRef<Attribute> operands) {
  if (auto cond = llvm::dyn_cast_or_null<IntegerAttr>(operands.front()))
    return cond.getValue().isOne() ? getTrueDest() : getFalseDest();
  return nullptr;
}

SuccessorOperands JumpOp::getSuccessorOperands(unsigned) {
  return SuccessorOperands(getDestOperandsMutable());
}
