//===- MemoryPackingTest.cpp - Offline packing of buffers into a pool -----===//
#include "synpl/Analysis/MemoryPacking.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace synpl;

namespace {
/// Brute force, independent of Lifetimes.h's sweep: every pair of buffers
/// live at a common tick must have disjoint byte ranges. Returns a
/// description of the first violation, or "".
std::string firstOverlap(const std::vector<PackBuffer> &buffers,
                         const std::vector<uint64_t> &offsets) {
  for (size_t i = 0; i < buffers.size(); ++i)
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      const PackBuffer &a = buffers[i], &b = buffers[j];
      if (a.size == 0 || b.size == 0)
        continue;
      bool sameTick = false;
      for (uint64_t t = a.life.first; t <= a.life.last && !sameTick; ++t)
        sameTick = b.life.first <= t && t <= b.life.last;
      if (!sameTick)
        continue;
      bool disjoint = offsets[i] + a.size <= offsets[j] ||
                      offsets[j] + b.size <= offsets[i];
      if (!disjoint)
        return "buffers " + std::to_string(i) + " and " + std::to_string(j);
    }
  return "";
}

/// Brute-force lower bound, tick by tick: the live bytes, with every live
/// buffer but the one with the most padding rounded up to the pool's
/// alignment.
uint64_t bruteLowerBound(const std::vector<PackBuffer> &buffers,
                         uint64_t poolAlign) {
  uint64_t best = 0, maxTick = 0;
  for (const PackBuffer &b : buffers)
    maxTick = std::max(maxTick, b.life.last);
  for (uint64_t t = 0; t <= maxTick; ++t) {
    uint64_t sum = 0, padded = 0, maxPad = 0;
    for (const PackBuffer &b : buffers)
      if (b.life.first <= t && t <= b.life.last) {
        sum += b.size;
        uint64_t up = (b.size + poolAlign - 1) / poolAlign * poolAlign;
        padded += up;
        maxPad = std::max(maxPad, up - b.size);
      }
    best = std::max({best, sum, padded - maxPad});
  }
  return best;
}

std::vector<PackBuffer> randomInstance(std::mt19937_64 &rng, size_t n,
                                       uint64_t ticks, uint64_t maxSize,
                                       bool withAlignment) {
  std::uniform_int_distribution<uint64_t> size(1, maxSize);
  std::uniform_int_distribution<uint64_t> tick(0, ticks - 1);
  std::uniform_int_distribution<int> alignLog(0, 6);
  std::vector<PackBuffer> buffers(n);
  for (PackBuffer &b : buffers) {
    b.size = size(rng);
    uint64_t x = tick(rng), y = tick(rng);
    b.life = {std::min(x, y), std::max(x, y)};
    b.alignment = withAlignment ? (uint64_t{1} << alignLog(rng)) : 1;
  }
  return buffers;
}
} // namespace

TEST_CASE("packing never overlaps live buffers", "[packing]") {
  std::mt19937_64 rng(20261129);
  const PackOrder orders[] = {PackOrder::Size, PackOrder::Breadth,
                              PackOrder::Area, PackOrder::Start};
  for (int trial = 0; trial < 400; ++trial) {
    size_t n = 1 + trial % 40;
    uint64_t ticks = 1 + trial % 17;
    bool aligned = trial % 2 == 1;
    uint64_t poolAlign = aligned ? (uint64_t{1} << (trial % 9)) : 1;
    std::vector<PackBuffer> buffers =
        randomInstance(rng, n, ticks, 1 + trial * 37 % 5000, aligned);
    uint64_t lower = bruteLowerBound(buffers, poolAlign);
    INFO("trial " << trial << ", " << n << " buffers, pool alignment "
                  << poolAlign);

    auto checkOne = [&](const PackResult &r) {
      REQUIRE(r.offsets.size() == buffers.size());
      CHECK(firstOverlap(buffers, r.offsets) == "");
      uint64_t peak = 0;
      for (size_t i = 0; i < buffers.size(); ++i) {
        uint64_t align = std::max(buffers[i].alignment, poolAlign);
        CHECK(r.offsets[i] % align == 0);
        peak = std::max(peak, r.offsets[i] + buffers[i].size);
      }
      CHECK(r.peak == peak);
      CHECK(r.lowerBound == lower);
      CHECK(r.peak >= r.lowerBound);
    };
    for (PackOrder order : orders)
      checkOne(packBuffersWith(buffers, poolAlign, order));
    PackResult best = packBuffers(buffers, poolAlign);
    checkOne(best);
    // The combined result is the best single ordering.
    for (PackOrder order : orders)
      CHECK(best.peak <= packBuffersWith(buffers, poolAlign, order).peak);
  }
}

TEST_CASE("packing is never worse than stacking every buffer", "[packing]") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<PackBuffer> buffers =
        randomInstance(rng, 1 + trial % 30, 1 + trial % 11, 4096, false);
    uint64_t sum = 0;
    for (const PackBuffer &b : buffers)
      sum += b.size;
    CHECK(packBuffers(buffers, 1).peak <= sum);
  }
}

TEST_CASE("disjoint lifetimes share bytes and meet the lower bound",
          "[packing]") {
  // One buffer per tick: the peak is the largest buffer.
  std::vector<PackBuffer> buffers = {
      {512, 1, {0, 0}}, {1024, 1, {1, 1}}, {256, 1, {2, 2}}, {768, 1, {3, 3}}};
  PackResult r = packBuffers(buffers, 1);
  CHECK(r.lowerBound == 1024);
  CHECK(r.peak == 1024);
  for (uint64_t offset : r.offsets)
    CHECK(offset == 0);

  // Random chains of back-to-back lifetimes: at most one buffer live at a
  // time, so the optimum is the largest buffer and the packer finds it.
  std::mt19937_64 rng(99);
  std::uniform_int_distribution<uint64_t> size(1, 100000);
  std::uniform_int_distribution<uint64_t> len(0, 3);
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<PackBuffer> chain;
    uint64_t t = 0;
    for (int i = 0; i < 20; ++i) {
      uint64_t l = len(rng);
      chain.push_back({size(rng), 1, {t, t + l}});
      t += l + 1;
    }
    PackResult c = packBuffers(chain, 1);
    CHECK(c.peak == c.lowerBound);
  }
}

TEST_CASE("everything live at once stacks exactly", "[packing]") {
  // All live together: the optimum is the sum (no padding at alignment 1).
  std::vector<PackBuffer> buffers = {
      {100, 1, {0, 5}}, {300, 1, {0, 5}}, {200, 1, {0, 5}}};
  PackResult r = packBuffers(buffers, 1);
  CHECK(r.peak == 600);
  CHECK(r.lowerBound == 600);
  // Largest first: 300 at 0, 200 at 300, 100 at 500.
  CHECK(r.offsets == std::vector<uint64_t>{500, 0, 300});
}

TEST_CASE("a dead buffer's bytes are reused (best fit)", "[packing]") {
  // A (0..2) and C (3..5) never meet, so C takes A's bytes; B lives
  // throughout and sits beside them.
  std::vector<PackBuffer> buffers = {
      {512, 1, {0, 2}}, {256, 1, {0, 5}}, {512, 1, {3, 5}}};
  PackResult r = packBuffers(buffers, 1);
  CHECK(r.peak == 768);
  CHECK(r.offsets[0] == r.offsets[2]);

  // Best fit takes the smallest gap that holds the buffer, not the first.
  // Start order places the tick-0 buffers largest first: F1 [0,300) and
  // F2 [500,600) die at tick 0, P [300,500) and Q [600,650) live on. At tick
  // 5 a 90-byte buffer fits the gaps [0,300) and [500,600): best fit takes
  // the 100-byte one.
  std::vector<PackBuffer> gaps = {{300, 1, {0, 0}}, // F1
                                  {200, 1, {0, 9}}, // P
                                  {100, 1, {0, 0}}, // F2
                                  {50, 1, {0, 9}},  // Q
                                  {90, 1, {5, 5}}}; // X
  PackResult g = packBuffersWith(gaps, 1, PackOrder::Start);
  CHECK(firstOverlap(gaps, g.offsets) == "");
  CHECK(g.offsets == std::vector<uint64_t>{0, 300, 500, 600, 500});
  CHECK(g.peak == 650);
}

TEST_CASE("offsets respect buffer and pool alignment", "[packing]") {
  std::vector<PackBuffer> buffers = {
      {10, 1, {0, 3}}, {10, 64, {0, 3}}, {10, 1, {0, 3}}};
  PackResult r = packBuffers(buffers, 16);
  CHECK(firstOverlap(buffers, r.offsets) == "");
  CHECK(r.offsets[0] % 16 == 0);
  CHECK(r.offsets[1] % 64 == 0);
  CHECK(r.offsets[2] % 16 == 0);
  // Two of the three live buffers sit below another, at a multiple of 16:
  // the bound counts their padding (16 + 16 + 10 = 42, not 30 live bytes).
  CHECK(r.lowerBound == 42);
  CHECK(r.peak >= 42);
  CHECK(r.peak <= 64 + 10 + 16 + 10);
  CHECK(packingLowerBound(buffers) == 30); // no alignment: live bytes

  // Largest first leaves the one padded buffer on top, where its padding
  // costs nothing: the peak meets the alignment-aware bound.
  std::vector<PackBuffer> params = {
      {40, 1, {0, 9}}, {1024, 1, {0, 9}}, {4096, 1, {0, 9}}};
  PackResult p = packBuffers(params, 256);
  CHECK(p.lowerBound == 256 + 1024 + 4096 - 216);
  CHECK(p.peak == p.lowerBound);
  CHECK(p.offsets == std::vector<uint64_t>{5120, 4096, 0});
}

TEST_CASE("packing is deterministic and ignores nothing but the input",
          "[packing]") {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<PackBuffer> buffers =
        randomInstance(rng, 25, 8, 10000, trial % 2 == 0);
    PackResult a = packBuffers(buffers, 256);
    PackResult b = packBuffers(buffers, 256);
    CHECK(a.offsets == b.offsets);
    CHECK(a.peak == b.peak);
    CHECK(a.order == b.order);
  }
  // Equal buffers tie-break by index: the first goes lowest.
  std::vector<PackBuffer> twins = {{64, 1, {0, 1}}, {64, 1, {0, 1}}};
  CHECK(packBuffers(twins, 1).offsets == std::vector<uint64_t>{0, 64});
}

TEST_CASE("degenerate buffers", "[packing]") {
  CHECK(packBuffers({}, 256).peak == 0);
  CHECK(packBuffers({}, 256).offsets.empty());
  // Zero-size and malformed-lifetime buffers conflict with nothing.
  std::vector<PackBuffer> odd = {
      {0, 1, {0, 9}}, {128, 1, {5, 1}}, {64, 1, {0, 9}}};
  PackResult r = packBuffers(odd, 1);
  CHECK(r.offsets[0] == 0);
  CHECK(r.offsets[1] == 0);
  CHECK(r.lowerBound == 64);
  // Sizes near the top of uint64 saturate instead of wrapping.
  std::vector<PackBuffer> huge = {{UINT64_MAX - 10, 1, {0, 1}},
                                  {100, 1, {0, 1}}};
  PackResult h = packBuffers(huge, 1);
  CHECK(h.peak == UINT64_MAX);
  CHECK(h.lowerBound == UINT64_MAX);
}

TEST_CASE("placementPeak is max offset + size", "[packing]") {
  std::vector<PackBuffer> buffers = {{10, 1, {0, 0}}, {20, 1, {0, 0}}};
  CHECK(placementPeak(buffers, {0, 10}) == 30);
  CHECK(placementPeak(buffers, {100, 0}) == 110);
  CHECK(placementPeak({}, {}) == 0);
}

TEST_CASE("equal sizes pack to the lower bound", "[packing]") {
  // Equal sizes make packing interval-graph colouring, which the linear
  // scan (start order, first free range) solves exactly: the peak is the
  // most buffers live at once times the size.
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<PackBuffer> buffers =
        randomInstance(rng, 1 + trial % 50, 1 + trial % 23, 1, false);
    for (PackBuffer &b : buffers)
      b.size = 256;
    PackResult r = packBuffers(buffers, 256);
    INFO("trial " << trial);
    CHECK(r.peak == r.lowerBound);
    CHECK(firstOverlap(buffers, r.offsets) == "");
  }
}

TEST_CASE("placeInOrder places in the order given", "[packing]") {
  // Three buffers live together: the order alone decides who goes lowest.
  std::vector<PackBuffer> buffers = {
      {100, 1, {0, 1}}, {200, 1, {0, 1}}, {300, 1, {0, 1}}};
  PackResult r = placeInOrder(buffers, 1, {2, 0, 1});
  CHECK(r.offsets == std::vector<uint64_t>{300, 400, 0});
  CHECK(r.peak == 600);
  // The same buffers through the size ordering: largest first.
  CHECK(packBuffersWith(buffers, 1, PackOrder::Size).offsets ==
        std::vector<uint64_t>{500, 300, 0});
}

TEST_CASE("the lower bound holds against the exhaustive optimum", "[packing]") {
  // Tiny instances solved exactly. Any layout can be pushed down, lowest
  // buffer first, until each buffer sits at 0 or at the aligned end of a
  // buffer below it that it conflicts with, without raising the peak; so
  // trying every order of the buffers with those positions finds the
  // optimum. It is never under the (alignment-aware) bound, and the packer
  // is never under it.
  std::mt19937_64 rng(42);
  int packerOptimal = 0;
  const int trials = 150;
  for (int trial = 0; trial < trials; ++trial) {
    uint64_t align = trial % 3 == 0 ? 1 : (trial % 3 == 1 ? 64 : 128);
    std::vector<PackBuffer> buffers =
        randomInstance(rng, 2 + trial % 5, 1 + trial % 6, 300, false);
    PackResult r = packBuffers(buffers, align);
    size_t n = buffers.size();
    uint64_t best = r.peak;
    std::vector<uint64_t> off(n);
    std::vector<bool> used(n, false);
    std::vector<size_t> placed;
    std::function<void(uint64_t)> search = [&](uint64_t top) {
      if (top >= best)
        return;
      if (placed.size() == n) {
        best = top;
        return;
      }
      for (size_t i = 0; i < n; ++i) {
        if (used[i])
          continue;
        std::vector<uint64_t> candidates = {0};
        for (size_t j : placed)
          candidates.push_back((off[j] + buffers[j].size + align - 1) / align *
                               align);
        for (uint64_t o : candidates) {
          bool free = true;
          for (size_t j : placed)
            if (lifetimesOverlap(buffers[i].life, buffers[j].life) &&
                o < off[j] + buffers[j].size && off[j] < o + buffers[i].size)
              free = false;
          if (!free)
            continue;
          off[i] = o;
          used[i] = true;
          placed.push_back(i);
          search(std::max(top, o + buffers[i].size));
          placed.pop_back();
          used[i] = false;
        }
      }
    };
    search(0);
    INFO("trial " << trial << ", alignment " << align);
    CHECK(best >= r.lowerBound);
    CHECK(r.peak >= best);
    packerOptimal += r.peak == best;
  }
  // Not exact (pack-memory.mlir's @kept is a 7-buffer counterexample), but
  // with its local search it solves nearly every instance this small; the
  // four greedy orderings alone solve about 70%.
  CHECK(packerOptimal >= trials * 19 / 20);
}

TEST_CASE("the local search beats the greedy orderings", "[packing]") {
  // Every greedy ordering needs 10 bytes here; the optimum is the bound, 9.
  std::vector<PackBuffer> buffers = {{2, 1, {1, 3}},
                                     {1, 1, {1, 2}},
                                     {3, 1, {2, 3}},
                                     {4, 1, {3, 4}},
                                     {4, 1, {0, 1}}};
  for (PackOrder order :
       {PackOrder::Size, PackOrder::Breadth, PackOrder::Area, PackOrder::Start})
    CHECK(packBuffersWith(buffers, 1, order).peak == 10);
  PackResult r = packBuffers(buffers, 1);
  CHECK(r.lowerBound == 9);
  CHECK(r.peak == 9);
  CHECK(r.refined);
  CHECK(firstOverlap(buffers, r.offsets) == "");
}
