//===- PackMemory.cpp - Re-pack the static slots of L0 plans --------------===//
//
// The L0 rewrite "memory packing (minimize peak by reordering lifetimes)".
// The packing itself is synpl/Analysis/MemoryPacking.h; this pass reads each
// persistent and arena pool's slots out of the plan, packs them, and writes
// the offsets back. Freelist pools get their offsets at run time.
//
// The pass never makes a pool worse, nor moves slots for nothing: a valid
// existing layout whose peak is no higher than the packer's is kept. Its output
// depends only on sizes, lifetimes and alignments, so it is idempotent.
//
//===----------------------------------------------------------------------===//
#include "synpl/Transforms/Passes.h"

#include "synpl/Analysis/Lifetimes.h"
#include "synpl/Analysis/MemoryPacking.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Support/Property.h"
#include "synpl/Support/Units.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/Support/MathExtras.h"

namespace synpl {
#define GEN_PASS_DEF_L0PACKMEMORY
#include "synpl/Transforms/Passes.h.inc"
} // namespace synpl

using namespace mlir;
using namespace synpl;
using namespace synpl::l0uop;

namespace {

/// Checks what the verifier would, for the pool and its slots, without
/// relying on it (the pass may run on a plan parsed without verification):
/// the packer needs positive sizes and well-formed lifetimes.
LogicalResult checkPackable(PoolOp pool, MutableArrayRef<SlotOp> slots) {
  if (pool.getCapacity() <= 0 || pool.getAlignment() <= 0 ||
      !llvm::isPowerOf2_64(pool.getAlignment()))
    return pool.emitError("cannot pack pool @")
           << pool.getSymName()
           << ": its capacity must be positive and its alignment a power of "
              "two";
  for (SlotOp slot : slots)
    if (slot.getSize() <= 0 || slot.getFirstUse() < 0 ||
        slot.getLastUse() < slot.getFirstUse())
      return slot.emitError("cannot pack slot @")
             << slot.getSymName()
             << ": it needs a positive size and a lifetime (first_use, "
                "last_use) with 0 <= first_use <= last_use";
  return success();
}

/// The peak of the slots' current offsets if they form a valid layout of the
/// pool (every slot placed, aligned, inside the pool, and no two live slots
/// sharing a byte: rows L0.2 and L0.5), else nothing.
std::optional<uint64_t> validExistingPeak(PoolOp pool,
                                          MutableArrayRef<SlotOp> slots,
                                          ArrayRef<PackBuffer> buffers) {
  uint64_t capacity = pool.getCapacity();
  uint64_t align = pool.getAlignment();
  std::vector<uint64_t> offsets;
  std::vector<Placement> placements;
  for (auto [slot, buffer] : llvm::zip_equal(slots, buffers)) {
    std::optional<int64_t> offset = slot.getOffset();
    if (!offset || *offset < 0 || *offset % align != 0)
      return std::nullopt;
    ByteRange range{static_cast<uint64_t>(*offset), buffer.size};
    if (!byteRangeFits(range, capacity))
      return std::nullopt;
    offsets.push_back(range.offset);
    placements.push_back({buffer.life, range});
  }
  if (!findConflicts(placements).empty())
    return std::nullopt;
  return placementPeak(buffers, offsets);
}

struct L0PackMemoryPass
    : public synpl::impl::L0PackMemoryBase<L0PackMemoryPass> {
  using L0PackMemoryBase::L0PackMemoryBase;

  void runOnOperation() override {
    bool ok = true;
    getOperation().walk<WalkOrder::PreOrder>([&](PlanOp plan) {
      ok &= succeeded(packPlan(plan));
      return WalkResult::skip(); // nothing to pack inside a plan's items
    });
    if (!ok)
      signalPassFailure();
  }

  LogicalResult packPlan(PlanOp plan) {
    // Pools and their slots, both in op order (the packer breaks ties by
    // input index, so this order makes the result reproducible).
    llvm::DenseMap<StringAttr, PoolOp> poolsByName;
    llvm::MapVector<Operation *, SmallVector<SlotOp>> slotsByPool;
    Block &body = plan.getBody().front();
    for (Operation &op : body)
      if (auto pool = llvm::dyn_cast<PoolOp>(op)) {
        poolsByName.try_emplace(pool.getSymNameAttr(), pool);
        slotsByPool[pool];
      }
    for (Operation &op : body)
      if (auto slot = llvm::dyn_cast<SlotOp>(op))
        if (PoolOp pool = poolsByName.lookup(slot.getPoolAttr().getAttr()))
          slotsByPool[pool].push_back(slot);

    bool ok = true;
    for (auto &[op, slots] : slotsByPool) {
      auto pool = llvm::cast<PoolOp>(op);
      if (pool.getKind() == PoolKind::freelist)
        ok &= succeeded(reportFreelist(plan, pool, slots));
      else
        ok &= succeeded(packPool(pool, slots));
    }
    return success(ok);
  }

  /// Freelist slots get their offsets at run time; report the peak the
  /// verifier holds them to (rows L0.5 and L0.6) so every pool has one.
  LogicalResult reportFreelist(PlanOp plan, PoolOp pool,
                               MutableArrayRef<SlotOp> slots) {
    if (failed(checkPackable(pool, slots)))
      return failure();
    std::vector<LiveInterval> live;
    for (SlotOp slot : slots)
      live.push_back({{static_cast<uint64_t>(slot.getFirstUse()),
                       static_cast<uint64_t>(slot.getLastUse())},
                      alignUpSaturating(slot.getSize(), pool.getAlignment())});
    uint64_t peak = peakLiveBytes(live).bytes;
    auto remark = pool.emitRemark()
                  << "pool @" << pool.getSymName() << ": " << slots.size()
                  << (slots.size() == 1 ? " slot" : " slots")
                  << " placed at run time, peak " << formatBytes(peak)
                  << " per step";
    if (int64_t depth = plan.getPipelineDepth(); depth > 1)
      remark << ", "
             << formatBytes(saturatingMul(peak, static_cast<uint64_t>(depth)))
             << " at pipeline_depth " << depth;
    return success();
  }

  LogicalResult packPool(PoolOp pool, MutableArrayRef<SlotOp> slots) {
    if (failed(checkPackable(pool, slots)))
      return failure();
    uint64_t capacity = pool.getCapacity();
    uint64_t align = pool.getAlignment();

    std::vector<PackBuffer> buffers;
    buffers.reserve(slots.size());
    for (SlotOp slot : slots)
      buffers.push_back({static_cast<uint64_t>(slot.getSize()),
                         align,
                         {static_cast<uint64_t>(slot.getFirstUse()),
                          static_cast<uint64_t>(slot.getLastUse())}});

    if (slots.empty()) {
      pool.emitRemark() << "pool @" << pool.getSymName() << ": no slots";
      return success();
    }
    std::optional<uint64_t> before = validExistingPeak(pool, slots, buffers);
    bool allPlaced =
        llvm::all_of(slots, [](SlotOp s) { return s.getOffset().has_value(); });
    PackResult packed = packBuffers(buffers, align);

    // Offsets change only when that lowers the peak: no churn, and a
    // better hand (or earlier) layout survives.
    bool keep = before && *before <= packed.peak;
    uint64_t peak = keep ? *before : packed.peak;
    if (!keep && packed.peak > capacity) {
      auto diag = emitCheckError(pool, Property::Resource, "L0.5")
                  << "pool @" << pool.getSymName() << " needs " << packed.peak
                  << " bytes once packed, past its capacity of " << capacity
                  << " bytes";
      std::vector<LiveInterval> live;
      for (const PackBuffer &b : buffers)
        live.push_back({b.life, b.size});
      PeakUsage worst = peakLiveBytes(live);
      if (worst.bytes > capacity) {
        // No layout fits: show the slots of the worst tick.
        diag << " (at t=" << worst.time << " its live slots alone sum to "
             << worst.bytes << " bytes)";
        for (size_t i : worst.live)
          diag.attachNote(slots[i].getLoc())
              << "live at t=" << worst.time << ": " << buffers[i].size
              << " bytes";
      } else if (packed.lowerBound > capacity) {
        diag << " (its live slots sum to at most " << worst.bytes
             << " bytes, but with the padding its alignment of " << align
             << " forces no layout takes less than " << packed.lowerBound
             << ")";
      } else {
        diag << " (its live slots never sum to more than " << packed.lowerBound
             << " bytes, but the packer found no layout that fits)";
      }
      return failure();
    }

    if (!keep) {
      Builder b(pool.getContext());
      for (auto [slot, offset] : llvm::zip_equal(slots, packed.offsets))
        slot.setOffsetAttr(b.getI64IntegerAttr(static_cast<int64_t>(offset)));
    }

    auto remark = pool.emitRemark()
                  << "pool @" << pool.getSymName() << ": " << slots.size()
                  << (slots.size() == 1 ? " slot" : " slots") << ", peak "
                  << formatBytes(peak) << ", lower bound "
                  << formatBytes(packed.lowerBound) << ", ";
    if (before)
      remark << "was " << formatBytes(*before) << " before packing";
    else if (allPlaced)
      remark << "no valid layout before packing";
    else
      remark << "unplaced before packing";
    if (keep)
      remark << " (layout kept: the packer's best was "
             << formatBytes(packed.peak) << ")";

    if (shrinkPools && peak > 0) {
      uint64_t shrunk = alignUpSaturating(peak, align);
      if (shrunk < capacity) {
        pool.setCapacityAttr(
            Builder(pool.getContext())
                .getI64IntegerAttr(static_cast<int64_t>(shrunk)));
        remark << "; capacity " << formatBytes(capacity) << " -> "
               << formatBytes(shrunk);
      }
    }
    return success();
  }
};
} // namespace
