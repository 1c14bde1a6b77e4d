//===- Lifetimes.h - Lifetime and byte-range interval arithmetic -*- C++ -*-===//
//
// The memory-plan checks of the L0 phase-2 verifier (rows L0.2, L0.5, L0.6)
// reduce to three questions about slots laid out in pools:
//
//   * do two slots live at the same time?        (closed lifetime intervals)
//   * do two slots share bytes of a pool?        (half-open byte ranges)
//   * how many bytes are live at the worst time? (a sweep over lifetimes)
//
// This header answers them on plain integers, so the memory planner and the
// verifier share one definition. All sums saturate (synpl/Support/Units.h):
// a plan whose sizes overflow 64 bits compares as larger than any pool.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_ANALYSIS_LIFETIMES_H
#define SYNPL_ANALYSIS_LIFETIMES_H

#include "llvm/ADT/ArrayRef.h"
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace synpl {

/// A lifetime in plan time: the slot is live at every time t with
/// `first <= t <= last` (both ends included, as the spec's
/// `lifetime: (first_use, last_use)`). Well-formed when first <= last.
struct Lifetime {
  uint64_t first = 0;
  uint64_t last = 0;

  bool isValid() const { return first <= last; }
  bool contains(uint64_t t) const { return first <= t && t <= last; }
};

/// True when some time t lies in both lifetimes.
bool lifetimesOverlap(Lifetime a, Lifetime b);

/// Bytes [offset, offset + size) of a pool. The end saturates at UINT64_MAX.
struct ByteRange {
  uint64_t offset = 0;
  uint64_t size = 0;

  uint64_t end() const;
  bool isEmpty() const { return size == 0; }
};

/// True when the ranges share at least one byte (empty ranges share none).
bool byteRangesOverlap(ByteRange a, ByteRange b);

/// True when the range lies inside [0, capacity).
bool byteRangeFits(ByteRange r, uint64_t capacity);

/// Rounds `bytes` up to a multiple of `align` (a power of two, or 0/1 for no
/// rounding), saturating at UINT64_MAX.
uint64_t alignUpSaturating(uint64_t bytes, uint64_t align);

/// One allocation as the sweep sees it: its lifetime and its byte count.
struct LiveInterval {
  Lifetime life;
  uint64_t bytes = 0;
};

/// The worst moment of a sweep: the earliest time at which the live bytes
/// reach their maximum, that maximum (saturating), and which intervals (by
/// index into the input) are live then. `bytes == 0` and no live intervals
/// when the input is empty or all sizes are 0.
struct PeakUsage {
  uint64_t time = 0;
  uint64_t bytes = 0;
  std::vector<size_t> live;
};

/// Sweeps the lifetimes (O(n log n)) and returns the peak of the summed live
/// bytes. Intervals with first > last are ignored.
PeakUsage peakLiveBytes(llvm::ArrayRef<LiveInterval> intervals);

/// The indices of the intervals live at time t.
std::vector<size_t> liveAt(llvm::ArrayRef<LiveInterval> intervals, uint64_t t);

/// One placed allocation: a lifetime and a byte range of the same pool.
struct Placement {
  Lifetime life;
  ByteRange range;
};

/// Every pair (i, j), i < j, of placements that share bytes while both are
/// live: the conflicts of row L0.2. Sorted by (i, j). Sweep over offsets, so
/// the cost is O(n log n + pairs of byte-overlapping placements).
std::vector<std::pair<size_t, size_t>>
findConflicts(llvm::ArrayRef<Placement> placements);

} // namespace synpl

#endif // SYNPL_ANALYSIS_LIFETIMES_H
