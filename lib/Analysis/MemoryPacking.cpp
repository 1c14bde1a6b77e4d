//===- MemoryPacking.cpp - Offline packing of buffers into a pool ---------===//
#include "synpl/Analysis/MemoryPacking.h"
#include "synpl/Support/Units.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <numeric>
#include <random>

using namespace synpl;

namespace {
bool conflicts(const PackBuffer &b) { return b.size != 0 && b.life.isValid(); }

/// The alignment a buffer's offset must satisfy within the pool.
uint64_t effectiveAlignment(uint64_t a, uint64_t b) {
  a = std::max<uint64_t>(a, 1);
  b = std::max<uint64_t>(b, 1);
  if (llvm::isPowerOf2_64(a) && llvm::isPowerOf2_64(b))
    return std::max(a, b);
  // Not powers of two (the L0 verifier rejects them, the packer copes): the
  // lcm, or the larger one when the lcm does not fit.
  uint64_t g = std::gcd(a, b);
  uint64_t q = a / g;
  if (q > UINT64_MAX / b)
    return std::max(a, b);
  return q * b;
}

/// For each buffer, the most bytes live at any tick of its lifetime. The
/// live sum only rises at a start tick, so the maximum over [first, last] is
/// reached at the start of some buffer inside it.
std::vector<uint64_t> breadths(llvm::ArrayRef<PackBuffer> buffers) {
  std::vector<uint64_t> starts;
  for (const PackBuffer &b : buffers)
    if (conflicts(b))
      starts.push_back(b.life.first);
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  std::vector<uint64_t> liveAtStart(starts.size(), 0);
  for (size_t s = 0; s < starts.size(); ++s)
    for (const PackBuffer &b : buffers)
      if (conflicts(b) && b.life.contains(starts[s]))
        liveAtStart[s] = saturatingAdd(liveAtStart[s], b.size);
  std::vector<uint64_t> result(buffers.size(), 0);
  for (size_t i = 0; i < buffers.size(); ++i) {
    const PackBuffer &b = buffers[i];
    if (!conflicts(b))
      continue;
    auto lo = std::lower_bound(starts.begin(), starts.end(), b.life.first);
    auto hi = std::upper_bound(starts.begin(), starts.end(), b.life.last);
    for (auto it = lo; it != hi; ++it)
      result[i] = std::max(result[i], liveAtStart[it - starts.begin()]);
  }
  return result;
}

std::vector<size_t> placementOrder(llvm::ArrayRef<PackBuffer> buffers,
                                   PackOrder order) {
  std::vector<size_t> idx(buffers.size());
  std::iota(idx.begin(), idx.end(), 0);
  auto duration = [&](size_t i) -> uint64_t {
    const Lifetime &l = buffers[i].life;
    return l.isValid() ? saturatingAdd(l.last - l.first, 1) : 0;
  };
  std::vector<uint64_t> key(buffers.size(), 0);
  switch (order) {
  case PackOrder::Size:
    for (size_t i : idx)
      key[i] = buffers[i].size;
    break;
  case PackOrder::Breadth:
    key = breadths(buffers);
    break;
  case PackOrder::Area:
    for (size_t i : idx)
      key[i] = saturatingMul(buffers[i].size, duration(i));
    break;
  case PackOrder::Start:
    break;
  }
  // Every comparator ends at the index: a strict total order, so the sort
  // (and the placement) depends on nothing but the input.
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    const PackBuffer &x = buffers[a], &y = buffers[b];
    if (order == PackOrder::Start) {
      if (x.life.first != y.life.first)
        return x.life.first < y.life.first;
    } else if (key[a] != key[b]) {
      return key[a] > key[b];
    }
    if (x.size != y.size)
      return x.size > y.size;
    if (x.life.first != y.life.first)
      return x.life.first < y.life.first;
    if (x.life.last != y.life.last)
      return x.life.last > y.life.last;
    return a < b;
  });
  return idx;
}
} // namespace

uint64_t synpl::packingLowerBound(llvm::ArrayRef<PackBuffer> buffers,
                                  uint64_t poolAlignment) {
  std::vector<LiveInterval> live;
  live.reserve(buffers.size());
  for (const PackBuffer &b : buffers)
    live.push_back({b.life, b.size});
  uint64_t bound = peakLiveBytes(live).bytes;
  if (poolAlignment <= 1 || bound == UINT64_MAX)
    return bound;

  // Sorted by offset, the buffers live at tick t each start at a multiple of
  // the pool's alignment at or above the previous one's end, so all but the
  // topmost take their size rounded up:
  //   peak >= sum(alignUp(size)) - max(alignUp(size) - size).
  // The live set only grows at a start tick, and so does this sum.
  std::vector<uint64_t> starts;
  for (const PackBuffer &b : buffers)
    if (conflicts(b))
      starts.push_back(b.life.first);
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  for (uint64_t t : starts) {
    uint64_t sum = 0, maxPad = 0;
    for (const PackBuffer &b : buffers) {
      if (!conflicts(b) || !b.life.contains(t))
        continue;
      uint64_t padded = alignUpSaturating(b.size, poolAlignment);
      sum = saturatingAdd(sum, padded);
      maxPad = std::max(maxPad, padded - b.size);
    }
    if (sum == UINT64_MAX)
      return UINT64_MAX;
    bound = std::max(bound, sum - maxPad);
  }
  return bound;
}

uint64_t synpl::placementPeak(llvm::ArrayRef<PackBuffer> buffers,
                              llvm::ArrayRef<uint64_t> offsets) {
  uint64_t peak = 0;
  for (size_t i = 0, e = std::min(buffers.size(), offsets.size()); i < e; ++i)
    peak = std::max(peak, saturatingAdd(offsets[i], buffers[i].size));
  return peak;
}

static PackResult place(llvm::ArrayRef<PackBuffer> buffers,
                        uint64_t poolAlignment, llvm::ArrayRef<size_t> order);

PackResult synpl::packBuffersWith(llvm::ArrayRef<PackBuffer> buffers,
                                  uint64_t poolAlignment, PackOrder order) {
  PackResult result =
      placeInOrder(buffers, poolAlignment, placementOrder(buffers, order));
  result.order = order;
  return result;
}

PackResult synpl::placeInOrder(llvm::ArrayRef<PackBuffer> buffers,
                               uint64_t poolAlignment,
                               llvm::ArrayRef<size_t> order) {
  PackResult result = place(buffers, poolAlignment, order);
  result.lowerBound = packingLowerBound(buffers, poolAlignment);
  return result;
}

/// placeInOrder without the lower bound, which the callers that place many
/// orders compute once.
static PackResult place(llvm::ArrayRef<PackBuffer> buffers,
                        uint64_t poolAlignment, llvm::ArrayRef<size_t> order) {
  PackResult result;
  result.offsets.assign(buffers.size(), 0);

  std::vector<size_t> placed; // indices, in placement order
  placed.reserve(buffers.size());
  std::vector<size_t> conflicting;
  for (size_t i : order) {
    const PackBuffer &b = buffers[i];
    if (!conflicts(b))
      continue; // offset 0: it shares no tick or no byte with anything
    uint64_t align = effectiveAlignment(b.alignment, poolAlignment);

    // The placed buffers live at some tick of b's lifetime, by offset.
    conflicting.clear();
    for (size_t p : placed)
      if (lifetimesOverlap(b.life, buffers[p].life))
        conflicting.push_back(p);
    std::sort(conflicting.begin(), conflicting.end(), [&](size_t x, size_t y) {
      if (result.offsets[x] != result.offsets[y])
        return result.offsets[x] < result.offsets[y];
      return x < y;
    });

    // Best fit: the smallest free gap between them that holds b (aligned);
    // the lowest such gap on a tie. With none, b goes above all of them.
    uint64_t cursor = 0; // end of the bytes taken below the current gap
    bool found = false;
    uint64_t bestOffset = 0, bestGap = 0;
    for (size_t p : conflicting) {
      uint64_t pOffset = result.offsets[p];
      uint64_t candidate = alignUpSaturating(cursor, align);
      if (pOffset > cursor && saturatingAdd(candidate, b.size) <= pOffset) {
        uint64_t gap = pOffset - cursor;
        if (!found || gap < bestGap) {
          found = true;
          bestGap = gap;
          bestOffset = candidate;
        }
      }
      cursor = std::max(cursor, saturatingAdd(pOffset, buffers[p].size));
    }
    result.offsets[i] = found ? bestOffset : alignUpSaturating(cursor, align);
    placed.push_back(i);
  }
  result.peak = placementPeak(buffers, result.offsets);
  return result;
}

PackResult synpl::packBuffers(llvm::ArrayRef<PackBuffer> buffers,
                              uint64_t poolAlignment) {
  uint64_t lowerBound = packingLowerBound(buffers, poolAlignment);
  PackResult best;
  std::vector<size_t> bestOrder;
  bool have = false;
  for (PackOrder order : {PackOrder::Size, PackOrder::Breadth, PackOrder::Area,
                          PackOrder::Start}) {
    std::vector<size_t> idx = placementOrder(buffers, order);
    PackResult r = place(buffers, poolAlignment, idx);
    r.order = order;
    r.lowerBound = lowerBound;
    if (!have || r.peak < best.peak) {
      best = std::move(r);
      bestOrder = std::move(idx);
      have = true;
    }
    if (best.peak <= best.lowerBound)
      return best; // optimal: no ordering can do better
  }

  // Local search on the best order: swap two random positions, re-place,
  // keep the order unless the peak rises (sideways moves let it drift off
  // plateaus). Placement is O(n^2), so the rounds shrink for big pools. A
  // fixed-seed mt19937_64 (whose output the standard fixes) keeps the result
  // a function of the input alone.
  size_t n = buffers.size();
  if (n < 2)
    return best;
  constexpr uint64_t kWorkBudget = 40'000'000; // ~ n^2 per round
  uint64_t rounds = std::min<uint64_t>(
      kPackRefineRounds, kWorkBudget / (static_cast<uint64_t>(n) * n));
  std::mt19937_64 rng(0x5EED);
  for (uint64_t k = 0; k < rounds && best.peak > best.lowerBound; ++k) {
    std::vector<size_t> trial = bestOrder;
    for (int swaps = 0; swaps < 2; ++swaps) {
      size_t a = rng() % n;
      size_t b = rng() % n;
      std::swap(trial[a], trial[b]);
    }
    PackResult r = place(buffers, poolAlignment, trial);
    if (r.peak <= best.peak) {
      r.order = best.order;
      r.lowerBound = lowerBound;
      r.refined = best.refined || r.peak < best.peak;
      best = std::move(r);
      bestOrder = std::move(trial);
    }
  }
  return best;
}
