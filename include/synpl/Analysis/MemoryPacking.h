//===- MemoryPacking.h - Offline packing of buffers into a pool -*- C++ -*-===//
//
// The L0 optimisation "memory packing (minimize peak by reordering
// lifetimes)": given buffers with sizes, alignments and closed lifetimes,
// choose byte offsets in one pool so that two buffers live at the same time
// never share a byte, and the pool's high-water mark (max offset + size) is
// as small as we can make it.
//
// Offline packing is NP-hard (dynamic storage allocation); this is the
// greedy heuristic of TFLite's arena planner ("greedy by size", Pisarchyk &
// Lee 2020): place buffers largest first, each into the smallest gap left by
// the already-placed buffers whose lifetimes conflict with it (best fit),
// or above all of them when no gap fits. A few orderings are tried (size,
// breadth, size x duration, start time) and the lowest peak kept, then a
// short local search over the order (seeded swaps) improves on it. Every
// choice breaks ties by input index and the search's seed is fixed, so the
// result is a pure function of the input.
//
// Plain integers only (no MLIR), so the L0 pass and the unit tests share it.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_ANALYSIS_MEMORYPACKING_H
#define SYNPL_ANALYSIS_MEMORYPACKING_H

#include "synpl/Analysis/Lifetimes.h"

#include "llvm/ADT/ArrayRef.h"
#include <cstdint>
#include <vector>

namespace synpl {

/// One buffer to place. It occupies [offset, offset + size) during `life`
/// (both ends included); its offset must be a multiple of `alignment` (a
/// power of two; 0 or 1 for none). A buffer with size 0 or a malformed
/// lifetime (first > last) conflicts with nothing and is placed at 0.
struct PackBuffer {
  uint64_t size = 0;
  uint64_t alignment = 1;
  Lifetime life;
};

/// The orderings the greedy placer can try (see packBuffers).
enum class PackOrder {
  /// Size descending, then earlier start, then input index: TFLite's
  /// greedy-by-size.
  Size,
  /// Breadth descending (the most bytes live at any tick of the buffer's
  /// lifetime), then size: buffers of the tightest moments first.
  Breadth,
  /// size x (last - first + 1) descending: big, long-lived buffers first.
  Area,
  /// Start ascending, then size descending: a linear scan.
  Start,
};

struct PackResult {
  /// offsets[i] is the offset of buffers[i].
  std::vector<uint64_t> offsets;
  /// max over buffers of offset + size (saturating); 0 for no buffers.
  uint64_t peak = 0;
  /// packingLowerBound(buffers, poolAlignment): no packing has a smaller
  /// peak.
  uint64_t lowerBound = 0;
  /// The ordering whose placement was kept (or the local search started
  /// from).
  PackOrder order = PackOrder::Size;
  /// True when the local search lowered the peak below every ordering's.
  bool refined = false;
};

/// Rounds of local search packBuffers runs at most (fewer for big pools).
constexpr unsigned kPackRefineRounds = 32;

/// A lower bound on the peak of every valid packing: the most bytes live at
/// any one tick (the sweep of Lifetimes.h), where every live buffer but the
/// topmost is rounded up to `poolAlignment` (the next one up starts at a
/// multiple of it), so the padding the live buffers cannot avoid counts.
/// With poolAlignment 0 or 1 it is exactly peakLiveBytes.
uint64_t packingLowerBound(llvm::ArrayRef<PackBuffer> buffers,
                           uint64_t poolAlignment = 1);

/// Places the buffers with one ordering. Every offset is a multiple of
/// lcm(buffer alignment, poolAlignment), and two buffers whose lifetimes
/// overlap get disjoint byte ranges.
PackResult packBuffersWith(llvm::ArrayRef<PackBuffer> buffers,
                           uint64_t poolAlignment, PackOrder order);

/// Places the buffers in the given order (a permutation of their indices),
/// each into the smallest gap among the placed buffers it conflicts with.
PackResult placeInOrder(llvm::ArrayRef<PackBuffer> buffers,
                        uint64_t poolAlignment, llvm::ArrayRef<size_t> order);

/// Tries every PackOrder (in declaration order, stopping early when a
/// placement meets the lower bound) and keeps the first with the lowest peak;
/// then, while above the bound, runs up to kPackRefineRounds rounds of local
/// search on that order (swap two positions at random from a fixed seed,
/// re-place, keep unless the peak rises). Deterministic.
PackResult packBuffers(llvm::ArrayRef<PackBuffer> buffers,
                       uint64_t poolAlignment);

/// The peak of an existing placement: max offset + size (saturating).
uint64_t placementPeak(llvm::ArrayRef<PackBuffer> buffers,
                       llvm::ArrayRef<uint64_t> offsets);

} // namespace synpl

#endif // SYNPL_ANALYSIS_MEMORYPACKING_H
