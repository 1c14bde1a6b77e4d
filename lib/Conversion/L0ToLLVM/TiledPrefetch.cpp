//===- TiledPrefetch.cpp - Software prefetches of the tiled lowering ------===//
//
// The tiled lowering (TiledKernel.cpp) asks for lines before its loops
// need them: a row block's epilogue lines before its last k loop
// (prefetchEpilogue), and a lane run's first and last lines, which the
// next pack's prefetches use too (prefetchLanes).
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"

namespace synpl::l0tollvm {

void KernelBuilder::prefetchEpilogue(const TilePlan &plan,
                                     ArrayRef<Operation *> epilogue,
                                     MutableArrayRef<LaneMap> rows,
                                     Value mask) {
  llvm::DenseSet<Operation *> inEpilogue(epilogue.begin(), epilogue.end());
  SmallVector<LaneMap> ahead(rows.begin(), rows.end());
  for (Operation *op : epilogue) {
    if (!isa<LoadOp, StoreOp>(op))
      continue;
    Value ptr = op->getOperand(0);
    Type elem = isa<LoadOp>(op) ? op->getResult(0).getType()
                                : op->getOperand(1).getType();
    if (!elem.isIntOrFloat() || elem.getIntOrFloatBitWidth() % 8 != 0)
      continue;
    // The address's slice: index arithmetic over what the block already
    // has (the row, the lanes, constants and the code before the loop).
    SmallVector<Operation *> slice;
    llvm::DenseSet<Operation *> seen;
    SmallVector<Value> work{ptr};
    bool ok = true;
    while (!work.empty() && ok) {
      Value v = work.pop_back_val();
      if (isa<BufType>(v.getType()) || ahead[0].count(v))
        continue;
      Operation *def = v.getDefiningOp();
      if (!def || !inEpilogue.contains(def) ||
          !isa<IndexOp, ConstOp, AddOp, MulOp, NegOp>(def)) {
        ok = false;
        break;
      }
      if (!seen.insert(def).second)
        continue;
      slice.push_back(def);
      for (Value operand : def->getOperands())
        work.push_back(operand);
    }
    if (!ok)
      continue;
    llvm::sort(slice, [](Operation *x, Operation *y) {
      return x->isBeforeInBlock(y);
    });
    int64_t bytes = elem.getIntOrFloatBitWidth() / 8;
    for (unsigned r = 0; r < ahead.size(); ++r) {
      for (Operation *s : slice)
        if (failed(lowerTiledOp(s, plan, ahead, r, mask)))
          return;
      auto it = ahead[r].find(ptr);
      if (it == ahead[r].end() ||
          !isa<LLVM::LLVMPointerType>(it->second.v.getType()))
        continue;
      if (r > 0 && !plan.rowDependent.contains(ptr))
        break;
      prefetchLanes(op->getLoc(), it->second, bytes, plan.laneCount,
                    isa<StoreOp>(op) ? 1 : 0, /*locality=*/3);
    }
  }
}

void KernelBuilder::prefetchLanes(Location loc, const LaneValue &ptr, int64_t bytes,
                                  unsigned lanes, int32_t write, int32_t locality) {
  LLVM::Prefetch::create(b, loc, ptr.v, write, locality, 1);
  int64_t span = (int64_t(lanes) - 1) * ptr.stride * bytes;
  if (span >= 64 || span <= -64)
    LLVM::Prefetch::create(
        b, loc,
        LLVM::GEPOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext()), b.getI8Type(),
                            ptr.v, ValueRange{i64Const(loc, span)}),
        write, locality, 1);
}

} // namespace synpl::l0tollvm
