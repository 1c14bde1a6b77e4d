//===- LifetimesTest.cpp - Lifetime and byte-range interval arithmetic ----===//
#include "synpl/Analysis/Lifetimes.h"

#include <catch2/catch.hpp>
#include <cstdint>

using namespace synpl;

TEST_CASE("lifetimes are closed intervals", "[lifetimes]") {
  CHECK(lifetimesOverlap({0, 3}, {3, 5}));  // both live at t = 3
  CHECK_FALSE(lifetimesOverlap({0, 2}, {3, 5}));
  CHECK(lifetimesOverlap({2, 2}, {0, 9}));
  CHECK(lifetimesOverlap({0, UINT64_MAX}, {UINT64_MAX, UINT64_MAX}));
  // A malformed lifetime overlaps nothing.
  CHECK_FALSE(lifetimesOverlap({5, 1}, {0, 9}));
}

TEST_CASE("byte ranges are half open", "[lifetimes]") {
  CHECK_FALSE(byteRangesOverlap({0, 16}, {16, 16}));
  CHECK(byteRangesOverlap({0, 17}, {16, 16}));
  CHECK(byteRangesOverlap({8, 4}, {0, 64}));
  CHECK_FALSE(byteRangesOverlap({8, 0}, {0, 64})); // empty shares no byte
  // The end saturates instead of wrapping to a small number.
  ByteRange huge{UINT64_MAX - 4, 100};
  CHECK(huge.end() == UINT64_MAX);
  CHECK(byteRangesOverlap(huge, {UINT64_MAX - 1, 1}));
  CHECK_FALSE(byteRangesOverlap(huge, {0, 8}));
}

TEST_CASE("byte ranges fit a capacity", "[lifetimes]") {
  CHECK(byteRangeFits({0, 1024}, 1024));
  CHECK_FALSE(byteRangeFits({1, 1024}, 1024));
  CHECK(byteRangeFits({1024, 0}, 1024));
  CHECK_FALSE(byteRangeFits({UINT64_MAX - 4, 100}, UINT64_MAX));
}

TEST_CASE("alignment rounds up and saturates", "[lifetimes]") {
  CHECK(alignUpSaturating(0, 256) == 0);
  CHECK(alignUpSaturating(1, 256) == 256);
  CHECK(alignUpSaturating(256, 256) == 256);
  CHECK(alignUpSaturating(257, 256) == 512);
  CHECK(alignUpSaturating(13, 1) == 13);
  CHECK(alignUpSaturating(UINT64_MAX - 3, 256) == UINT64_MAX);
}

TEST_CASE("peak sweep finds the earliest worst time", "[lifetimes]") {
  // t:      0   1   2   3   4
  // a(100)  [-------]
  // b(50)       [-----------]
  // c(70)           [---]
  std::vector<LiveInterval> ivs = {{{0, 2}, 100}, {{1, 4}, 50}, {{2, 3}, 70}};
  PeakUsage p = peakLiveBytes(ivs);
  CHECK(p.time == 2);
  CHECK(p.bytes == 220);
  CHECK(p.live == std::vector<size_t>{0, 1, 2});

  // Ties keep the earliest time.
  std::vector<LiveInterval> tie = {{{0, 0}, 10}, {{5, 5}, 10}};
  CHECK(peakLiveBytes(tie).time == 0);

  // Back-to-back lifetimes share their boundary tick.
  std::vector<LiveInterval> touch = {{{0, 3}, 8}, {{3, 6}, 8}};
  CHECK(peakLiveBytes(touch).bytes == 16);
  std::vector<LiveInterval> apart = {{{0, 2}, 8}, {{3, 6}, 8}};
  CHECK(peakLiveBytes(apart).bytes == 8);
}

TEST_CASE("peak sweep saturates and recovers", "[lifetimes]") {
  std::vector<LiveInterval> ivs = {{{0, 1}, UINT64_MAX - 1},
                                   {{1, 1}, 10},
                                   {{2, 3}, 5}};
  PeakUsage p = peakLiveBytes(ivs);
  CHECK(p.time == 1);
  CHECK(p.bytes == UINT64_MAX);
  // After the saturating pair ends, the sum is exact again.
  std::vector<LiveInterval> later = {{{0, 1}, UINT64_MAX - 1},
                                     {{1, 1}, 10},
                                     {{2, 3}, 5},
                                     {{3, 3}, 6}};
  CHECK(peakLiveBytes(later).bytes == UINT64_MAX);
  CHECK(liveAt(later, 3) == std::vector<size_t>{2, 3});
}

TEST_CASE("peak sweep on nothing", "[lifetimes]") {
  CHECK(peakLiveBytes({}).bytes == 0);
  std::vector<LiveInterval> bad = {{{4, 1}, 100}};
  CHECK(peakLiveBytes(bad).bytes == 0);
  CHECK(peakLiveBytes(bad).live.empty());
}

TEST_CASE("conflicts need shared bytes and shared time", "[lifetimes]") {
  std::vector<Placement> ps = {
      {{0, 4}, {0, 100}},   // 0
      {{5, 9}, {0, 100}},   // 1: same bytes, later: reuse is fine
      {{3, 6}, {50, 100}},  // 2: overlaps 0 and 1 in bytes and time
      {{0, 9}, {150, 10}},  // 3: bytes after everything
      {{0, 9}, {100, 50}},  // 4: bytes [100,150) overlap 2 only
  };
  auto c = findConflicts(ps);
  REQUIRE(c.size() == 3);
  CHECK(c[0] == std::make_pair<size_t, size_t>(0, 2));
  CHECK(c[1] == std::make_pair<size_t, size_t>(1, 2));
  CHECK(c[2] == std::make_pair<size_t, size_t>(2, 4));
  CHECK(findConflicts({}).empty());
}

TEST_CASE("sweeps agree with brute force on random plans", "[lifetimes]") {
  // A small linear congruential generator keeps the test deterministic.
  uint64_t state = 12345;
  auto next = [&](uint64_t bound) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % bound;
  };
  for (int round = 0; round < 200; ++round) {
    size_t n = 1 + next(12);
    std::vector<Placement> ps;
    std::vector<LiveInterval> ivs;
    for (size_t i = 0; i < n; ++i) {
      uint64_t first = next(10), last = first + next(6);
      Placement p{{first, last}, {next(8) * 64, next(5) * 64}};
      ps.push_back(p);
      ivs.push_back({p.life, p.range.size});
    }
    // Conflicts: every pair that shares a byte and a tick.
    std::vector<std::pair<size_t, size_t>> expect;
    for (size_t i = 0; i < n; ++i)
      for (size_t j = i + 1; j < n; ++j)
        if (byteRangesOverlap(ps[i].range, ps[j].range) &&
            lifetimesOverlap(ps[i].life, ps[j].life))
          expect.emplace_back(i, j);
    CHECK(findConflicts(ps) == expect);

    // Peak: the largest sum over every tick, at its earliest tick.
    uint64_t bestBytes = 0, bestTime = 0;
    for (uint64_t t = 0; t < 20; ++t) {
      uint64_t sum = 0;
      for (size_t i : liveAt(ivs, t))
        sum += ivs[i].bytes;
      if (sum > bestBytes)
        bestBytes = sum, bestTime = t;
    }
    PeakUsage peak = peakLiveBytes(ivs);
    CHECK(peak.bytes == bestBytes);
    if (bestBytes != 0)
      CHECK(peak.time == bestTime);
  }
}
