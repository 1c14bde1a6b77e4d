//===- L0UOpCollective.cpp - Collectives across the ranks of a run --------===//
//
// `l0uop.collective` on its own: what it does to its slots, and the rows it
// checks by itself (kinds, element types, sizes, the plan's ranks). The
// stream rows (L0.3 in flight, L0.7 one stream) are the plan's, in
// L0UOpPlan.cpp, beside the other stream checks.
//
//===----------------------------------------------------------------------===//
#include "synpl/Dialect/L0UOp/L0UOpOps.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l0uop;

static bool takesPairs(CollectiveKind kind) {
  return kind == CollectiveKind::all_gather || kind == CollectiveKind::reduce_scatter;
}

static bool reduces(CollectiveKind kind) {
  return kind == CollectiveKind::all_reduce || kind == CollectiveKind::reduce_scatter;
}

void CollectiveOp::getAccesses(SmallVectorImpl<StringAttr> &reads,
                               SmallVectorImpl<StringAttr> &writes) {
  ArrayRef<Attribute> slots = getSlots().getValue();
  for (size_t i = 0; i < slots.size(); ++i) {
    StringAttr name = cast<FlatSymbolRefAttr>(slots[i]).getAttr();
    // Pairs: the source is read, the destination written; in place: both.
    if (!takesPairs(getKind()) || i % 2 == 0)
      reads.push_back(name);
    if (!takesPairs(getKind()) || i % 2 == 1)
      writes.push_back(name);
  }
}

LogicalResult CollectiveOp::verify() {
  StringRef kind = stringifyCollectiveKind(getKind());
  if (getSlots().empty())
    return emitOpError("combines no slot");
  if (takesPairs(getKind()) && getSlots().size() % 2 != 0)
    return emitOpError() << kind << " takes (source, destination) pairs; it names "
                         << getSlots().size() << " slots";
  if (reduces(getKind()) && !getReduce())
    return emitOpError() << kind << " needs how to combine the ranks' values "
                         << "(sum, mean, max or min)";
  if (!reduces(getKind()) && getReduce())
    return emitOpError() << kind << " combines nothing; drop `"
                         << stringifyCollectiveReduce(*getReduce()) << "`";
  if (getRoot() && getKind() != CollectiveKind::broadcast)
    return emitOpError() << "only a broadcast has a root; " << kind << " has none";
  if (std::optional<int64_t> root = getRoot(); root && *root < 0)
    return emitOpError("root must be a rank (>= 0), got ") << *root;
  return success();
}

LogicalResult CollectiveOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto plan = (*this)->getParentOfType<PlanOp>();
  int64_t ranks = plan ? plan.getRanks().value_or(1) : 1;
  if (ranks < 2)
    return emitOpError("combines the work of several ranks, but plan @")
           << (plan ? plan.getSymName() : StringRef("?"))
           << " is placed on one process (its `ranks` is " << ranks << ")";
  if (std::optional<int64_t> root = getRoot(); root && *root >= ranks)
    return emitOpError("broadcasts from rank ")
           << *root << ", but the plan has " << ranks << " ranks";
  llvm::SmallDenseSet<Attribute> seen;
  SmallVector<SlotOp> slots;
  for (Attribute a : getSlots()) {
    auto ref = cast<FlatSymbolRefAttr>(a);
    auto slot = symbols.lookupNearestSymbolFrom<SlotOp>(*this, ref);
    if (!slot)
      return emitOpError("names ") << ref << ", which is not an l0uop.slot";
    if (!seen.insert(a).second)
      return emitOpError("names slot ") << ref << " twice";
    Type elt = slot.getBufType().getElementType();
    if (!elt.isF32() && !elt.isF64() && !elt.isSignlessInteger(32) &&
        !elt.isSignlessInteger(64))
      return emitOpError("combines f32, f64, i32 or i64 values; slot ")
             << ref << " holds " << slot.getBufType();
    if (getReduce() && *getReduce() == CollectiveReduce::mean && !isa<FloatType>(elt))
      return emitOpError("takes the mean of slot ")
             << ref << ", which holds integers (" << slot.getBufType() << ")";
    slots.push_back(slot);
  }
  if (!takesPairs(getKind()))
    return success();
  for (size_t i = 0; i + 1 < slots.size(); i += 2) {
    BufType src = slots[i].getBufType(), dst = slots[i + 1].getBufType();
    if (src.getElementType() != dst.getElementType())
      return emitOpError("pair (")
             << getSlots()[i] << ", " << getSlots()[i + 1] << ") mixes " << src
             << " and " << dst;
    bool gather = getKind() == CollectiveKind::all_gather;
    uint64_t part = gather ? src.getNumElements() : dst.getNumElements();
    uint64_t whole = gather ? dst.getNumElements() : src.getNumElements();
    if (whole != part * uint64_t(ranks))
      return emitOpError("pair (")
             << getSlots()[i] << ", " << getSlots()[i + 1] << "): "
             << stringifyCollectiveKind(getKind()) << " over " << ranks
             << " ranks needs the " << (gather ? "destination" : "source") << " to hold "
             << ranks << " x " << part << " elements, not " << whole;
  }
  return success();
}
