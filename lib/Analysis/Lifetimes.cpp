//===- Lifetimes.cpp - Lifetime and byte-range interval arithmetic --------===//
#include "synpl/Analysis/Lifetimes.h"
#include "synpl/Support/Units.h"

#include <algorithm>
#include <numeric>

using namespace synpl;

bool synpl::lifetimesOverlap(Lifetime a, Lifetime b) {
  if (!a.isValid() || !b.isValid())
    return false;
  return a.first <= b.last && b.first <= a.last;
}

uint64_t ByteRange::end() const { return saturatingAdd(offset, size); }

bool synpl::byteRangesOverlap(ByteRange a, ByteRange b) {
  if (a.isEmpty() || b.isEmpty())
    return false;
  return a.offset < b.end() && b.offset < a.end();
}

bool synpl::byteRangeFits(ByteRange r, uint64_t capacity) {
  return r.offset <= capacity && r.size <= capacity - r.offset;
}

uint64_t synpl::alignUpSaturating(uint64_t bytes, uint64_t align) {
  if (align <= 1)
    return bytes;
  uint64_t rem = bytes % align;
  if (rem == 0)
    return bytes;
  return saturatingAdd(bytes, align - rem);
}

PeakUsage synpl::peakLiveBytes(llvm::ArrayRef<LiveInterval> intervals) {
  // Events: +bytes at `first`, -bytes after `last`. Because lifetimes are
  // closed, an interval ending at t and one starting at t are both live at t:
  // at equal times, starts sort before ends (ends are placed at last + 1).
  struct Event {
    uint64_t time;
    bool isStart; // ends at the same time come first: they happen at last+1
    size_t index;
  };
  std::vector<Event> events;
  events.reserve(intervals.size() * 2);
  for (size_t i = 0, e = intervals.size(); i < e; ++i) {
    const LiveInterval &iv = intervals[i];
    if (!iv.life.isValid())
      continue;
    events.push_back({iv.life.first, true, i});
    if (iv.life.last != UINT64_MAX)
      events.push_back({iv.life.last + 1, false, i});
  }
  std::sort(events.begin(), events.end(), [](const Event &a, const Event &b) {
    if (a.time != b.time)
      return a.time < b.time;
    return !a.isStart && b.isStart; // ends (at last+1) before starts
  });

  // Saturating sums cannot be undone by subtraction, so count saturated
  // contributors separately: the live sum is saturated while any is live.
  PeakUsage best;
  uint64_t sum = 0;
  size_t saturatedLive = 0;
  std::vector<uint64_t> contributed(intervals.size(), 0);
  std::vector<bool> wasSaturating(intervals.size(), false);
  bool haveBest = false;
  for (size_t k = 0; k < events.size();) {
    uint64_t t = events[k].time;
    for (; k < events.size() && events[k].time == t; ++k) {
      const Event &ev = events[k];
      uint64_t bytes = intervals[ev.index].bytes;
      if (ev.isStart) {
        if (sum > UINT64_MAX - bytes) {
          wasSaturating[ev.index] = true;
          ++saturatedLive;
        } else {
          sum += bytes;
          contributed[ev.index] = bytes;
        }
      } else if (wasSaturating[ev.index]) {
        --saturatedLive;
      } else {
        sum -= contributed[ev.index];
      }
    }
    uint64_t now = saturatedLive != 0 ? UINT64_MAX : sum;
    if (!haveBest || now > best.bytes) {
      best.time = t;
      best.bytes = now;
      haveBest = true;
    }
  }
  if (!haveBest || best.bytes == 0)
    return PeakUsage{};
  best.live = liveAt(intervals, best.time);
  return best;
}

std::vector<size_t> synpl::liveAt(llvm::ArrayRef<LiveInterval> intervals,
                                  uint64_t t) {
  std::vector<size_t> live;
  for (size_t i = 0, e = intervals.size(); i < e; ++i)
    if (intervals[i].life.isValid() && intervals[i].life.contains(t))
      live.push_back(i);
  return live;
}

std::vector<std::pair<size_t, size_t>>
synpl::findConflicts(llvm::ArrayRef<Placement> placements) {
  // Sort by offset; for each placement, only those starting before its end
  // can share bytes with it.
  std::vector<size_t> order(placements.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (placements[a].range.offset != placements[b].range.offset)
      return placements[a].range.offset < placements[b].range.offset;
    return a < b;
  });
  std::vector<std::pair<size_t, size_t>> conflicts;
  for (size_t x = 0; x < order.size(); ++x) {
    const Placement &a = placements[order[x]];
    if (a.range.isEmpty())
      continue;
    for (size_t y = x + 1; y < order.size(); ++y) {
      const Placement &b = placements[order[y]];
      if (b.range.offset >= a.range.end())
        break;
      if (byteRangesOverlap(a.range, b.range) &&
          lifetimesOverlap(a.life, b.life))
        conflicts.emplace_back(std::min(order[x], order[y]),
                               std::max(order[x], order[y]));
    }
  }
  std::sort(conflicts.begin(), conflicts.end());
  return conflicts;
}
