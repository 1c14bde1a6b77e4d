// A UOp vertex is a MultiVertex: all the workers of its tile run it, its
// slice of the parallel ranges cut into worker parts by one exact rule
// (UOp.h: uopWorkerParts; the compiler's planner cuts by the same rule),
// and the tile costs workerCycles over all its UOp vertices' parts. The
// rule is checked directly, then through the simulator: the cycles against
// per-part issue slots counted here by hand, the numbers against a run on
// a target of one worker.
#include "IPU21UOpBuilder.h"
#include "UOp.h"

#include "synpl/Target/IPU21/CostModel.h"
#include "synpl/Target/IPU21/ProgramFile.h"
#include "synpl/Target/IPU21/Simulator.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

using namespace ipu21test;

namespace {

using Parts = std::vector<std::pair<int64_t, int64_t>>;

/// The [lo, hi) of slot `w.slot` in each part.
Parts partsOf(const UOpWorkerParts &w) {
  Parts out;
  for (uint64_t k = 0; k < w.count(); ++k) {
    int64_t lo, hi;
    w.part(k, lo, hi);
    out.push_back({lo, hi});
  }
  return out;
}

/// A body of nested parallel ranges, one per (static [lo, hi), step).
Codelet parallelRanges(const std::vector<std::pair<std::pair<int64_t, int64_t>, int64_t>> &rs,
                       UType type = UType::Index) {
  UOpBody k("ranges");
  std::vector<int32_t> open;
  for (size_t i = 0; i < rs.size(); ++i) {
    open.push_back(k.range(rs[i].first.first, rs[i].first.second, int32_t(i), rs[i].second));
    k.codelet.uop.back().type = type;
  }
  for (size_t i = open.size(); i-- > 0;)
    k.end(open[i]);
  return k.codelet;
}

/// Runs `body` on targets of 6 and 1 workers with `inputs` set; checks that
/// every tensor ends the same, returns the 6-worker run's tensors and the
/// cycles of both runs.
struct Both {
  std::vector<std::vector<double>> values;
  int64_t cycles = 0, singleCycles = 0;
};
Both runBoth(const UOpBody &body, const std::vector<int64_t> &ranges,
             const std::vector<std::pair<std::string, std::vector<double>>> &inputs = {},
             SimOptions options = {}) {
  Both out;
  std::vector<std::vector<double>> single;
  for (int64_t workers : {6, 1}) {
    Program p = oneTile(body, ranges, workers);
    Simulator sim(p, ipu21Facts(), options);
    std::string error;
    for (const auto &in : inputs) {
      INFO(error);
      REQUIRE(sim.setTensor(in.first, in.second, error));
    }
    INFO(error);
    REQUIRE(sim.run(error));
    auto &values = workers == 6 ? out.values : single;
    for (const UOpField &f : body.codelet.uopFields)
      values.push_back(get(sim, f.name));
    (workers == 6 ? out.cycles : out.singleCycles) = phaseCycles(sim, "cs");
  }
  CHECK(out.values == single);
  return out;
}

/// y[i] = float(i) for i in [0, 14) step 2, its values taken from the
/// params: 1 (range) + 5 slots per iteration (Index 2, Cast, Store, End).
UOpBody iota(int32_t par = 0) {
  UOpBody k("iota");
  int32_t y = k.field("y", ElemType::F32, {14}, true);
  int32_t i = k.range(0, 14, par, 2);
  int32_t v = k.convert(UOpcode::Cast, UType::F32, UType::Index, i);
  k.store(y, k.index(y, {i}), v);
  k.end(i);
  return k;
}

} // namespace

TEST_CASE("ipu21 UOp worker parts: the split rule") {
  SECTION("n = 7 on 6 workers: each = 2, parts of 2, 2, 2, 1") {
    UOpWorkerParts w = uopWorkerParts(parallelRanges({{{0, 7}, 1}}), {0, 7}, 6);
    CHECK(w.slot == 0);
    CHECK(w.iterations == 7);
    CHECK(w.each == 2);
    CHECK(partsOf(w) == Parts{{0, 2}, {2, 4}, {4, 6}, {6, 7}});
  }
  SECTION("n = 12 on 6 workers: 6 parts of 2; n = 3: 3 parts of 1") {
    Codelet c = parallelRanges({{{0, 20}, 1}});
    CHECK(partsOf(uopWorkerParts(c, {4, 16}, 6)) ==
          Parts{{4, 6}, {6, 8}, {8, 10}, {10, 12}, {12, 14}, {14, 16}});
    CHECK(partsOf(uopWorkerParts(c, {4, 7}, 6)) == Parts{{4, 5}, {5, 6}, {6, 7}});
    CHECK(partsOf(uopWorkerParts(c, {4, 7}, 1)) == Parts{{4, 7}});
    CHECK(partsOf(uopWorkerParts(c, {4, 7}, 0)) == Parts{{4, 7}}); // 0 workers run as 1
  }
  SECTION("the widest slot is cut, the lowest on ties") {
    Codelet c = parallelRanges({{{0, 8}, 1}, {{0, 8}, 1}});
    UOpWorkerParts w = uopWorkerParts(c, {1, 3, 0, 6}, 6);
    CHECK(w.slot == 1);
    CHECK(partsOf(w) == Parts{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}});
    w = uopWorkerParts(c, {0, 4, 2, 6}, 6);
    CHECK(w.slot == 0);
    CHECK(partsOf(w) == Parts{{0, 1}, {1, 2}, {2, 3}, {3, 4}});
    // Iterations, not extents, are compared: [0, 8) step 4 has 2.
    Codelet d = parallelRanges({{{0, 8}, 4}, {{0, 8}, 1}});
    w = uopWorkerParts(d, {0, 8, 0, 3}, 6);
    CHECK(w.slot == 1);
    CHECK(partsOf(w) == Parts{{0, 1}, {1, 2}, {2, 3}});
  }
  SECTION("steps: parts start on the range's own values") {
    Codelet c = parallelRanges({{{0, 14}, 2}});
    UOpWorkerParts w = uopWorkerParts(c, {1, 14}, 6); // 1, 3, ..., 13
    CHECK(w.iterations == 7);
    CHECK(partsOf(w) == Parts{{1, 5}, {5, 9}, {9, 13}, {13, 14}});
    CHECK(partsOf(uopWorkerParts(c, {1, 14}, 3)) == Parts{{1, 7}, {7, 13}, {13, 14}});
    Codelet d = parallelRanges({{{0, 10}, 3}}); // 0, 3, 6, 9
    CHECK(partsOf(uopWorkerParts(d, {0, 10}, 6)) == Parts{{0, 3}, {3, 6}, {6, 9}, {9, 10}});
    CHECK(partsOf(uopWorkerParts(d, {0, 10}, 2)) == Parts{{0, 6}, {6, 10}});
  }
  SECTION("no parallel slot: one part; an empty slice: none") {
    UOpWorkerParts w = uopWorkerParts(parallelRanges({}), {}, 6);
    CHECK(w.slot == -1);
    CHECK(w.count() == 1);
    w = uopWorkerParts(parallelRanges({{{0, 8}, 1}, {{0, 8}, 1}}), {3, 3, 5, 5}, 6);
    CHECK(w.slot == 0);
    CHECK(w.count() == 0);
  }
  SECTION("the whole int64 range: no overflow") {
    const int64_t lo = std::numeric_limits<int64_t>::min();
    const int64_t hi = std::numeric_limits<int64_t>::max();
    Codelet c = parallelRanges({{{lo, hi}, 1}}, UType::I64);
    UOpWorkerParts w = uopWorkerParts(c, {lo, hi}, 6);
    CHECK(w.iterations == ~uint64_t(0));
    Parts parts = partsOf(w);
    REQUIRE(parts.size() == 6);
    CHECK(parts.front().first == lo);
    CHECK(parts.back().second == hi);
    for (size_t k = 0; k + 1 < parts.size(); ++k)
      CHECK(parts[k].second == parts[k + 1].first);
    Codelet big = parallelRanges({{{lo, hi}, hi}}, UType::I64); // lo, lo + hi, lo + 2 hi
    CHECK(partsOf(uopWorkerParts(big, {lo, hi}, 6)) ==
          Parts{{lo, lo + hi}, {lo + hi, hi - 1}, {hi - 1, hi}});
  }
}

TEST_CASE("ipu21 UOp MultiVertex: n = 7 on 6 workers runs parts of 2, 2, 2, 1") {
  // y[i] = 2 x[i] where 0 < x[i]: 6 slots per iteration (Index 2, Load,
  // CmpLt, If, End), 4 more when x[i] > 0 (Index 2, Mul, Store).
  UOpBody k("pos2");
  int32_t x = k.field("x", ElemType::F32, {7});
  int32_t y = k.field("y", ElemType::F32, {7}, true);
  int32_t zero = k.constF(0), two = k.constF(2);
  int32_t i = k.range(0, 7, 0);
  int32_t xv = k.load(x, k.index(x, {i}));
  k.if_(k.convert(UOpcode::CmpLt, UType::I1, UType::F32, zero, xv));
  k.store(y, k.index(y, {i}), k.compute(UOpcode::Mul, UType::F32, xv, two));
  k.endIf();
  k.end(i);
  const std::vector<double> xs = {-1, 0.5, 2, 3, -4, -5, 6};
  Both r = runBoth(k, {0, 7}, {{"x", xs}});
  for (size_t n = 0; n < xs.size(); ++n)
    CHECK(r.values[1][n] == (xs[n] > 0 ? 2 * xs[n] : 0));

  // By hand: each part is 1 (its range's start) plus its iterations' slots.
  std::vector<int64_t> iter;
  for (double v : xs)
    iter.push_back(6 + (v > 0 ? 4 : 0));
  std::vector<int64_t> parts;
  for (auto [lo, hi] : Parts{{0, 2}, {2, 4}, {4, 6}, {6, 7}})
    parts.push_back(1 + std::accumulate(iter.begin() + lo, iter.begin() + hi, int64_t(0)));
  CHECK(parts == std::vector<int64_t>{17, 21, 13, 11});
  const int64_t longest = *std::max_element(parts.begin(), parts.end());
  const int64_t total = std::accumulate(parts.begin(), parts.end(), int64_t(0));
  CHECK(r.cycles == cost::workerCycles(ipu21Facts(), longest, total));
  CHECK(r.cycles == 21 * 6); // a cut into 2, 1, 1, 1, 1, 1 would take 17 × 6
  // One worker: one part of 1 + 58 slots.
  CHECK(r.singleCycles == (1 + 58) * 6);
}

TEST_CASE("ipu21 UOp MultiVertex: two slots, the wider second one is cut") {
  // y[i, j] = x[i, j] + 1 over rows [1, 3) and columns [0, 6): 12 slots per
  // iteration (Index 4 twice, Load, Add, Store, End).
  UOpBody k("add2d");
  int32_t x = k.field("x", ElemType::F32, {3, 6});
  int32_t y = k.field("y", ElemType::F32, {3, 6}, true);
  int32_t one = k.constF(1);
  int32_t i = k.range(0, 3, 0);
  int32_t j = k.range(0, 6, 1);
  int32_t v = k.compute(UOpcode::Add, UType::F32, k.load(x, k.index(x, {i, j})), one);
  k.store(y, k.index(y, {i, j}), v);
  k.end(j);
  k.end(i);
  std::vector<double> xs(18);
  std::iota(xs.begin(), xs.end(), 0.25);
  Both r = runBoth(k, {1, 3, 0, 6}, {{"x", xs}});
  for (size_t n = 0; n < xs.size(); ++n)
    CHECK(r.values[1][n] == (n < 6 ? 0 : xs[n] + 1));
  // 6 parts, one column each: 1 (row range) + 2 × (1 (column range) + 12 +
  // 1 (row End)) = 29 slots; max(29 × 6, 6 × 29). Cut along the rows it
  // would be 2 parts of 75: 450.
  CHECK(r.cycles == cost::workerCycles(ipu21Facts(), 29, 6 * 29));
  CHECK(r.cycles == 174);
  CHECK(r.singleCycles == (1 + 2 * (1 + 6 * 12 + 1)) * 6);
}

TEST_CASE("ipu21 UOp MultiVertex: step 2 ranges, the target's worker count") {
  // Values 1, 3, ..., 13: n = 7. On 6 workers parts of 2, 2, 2, 1
  // iterations (11, 11, 11, 6 slots); on 3 workers 3, 3, 1 (16, 16, 6).
  Both r = runBoth(iota(), {1, 14});
  std::vector<double> want(14, 0);
  for (int64_t v = 1; v < 14; v += 2)
    want[v] = double(v);
  CHECK(r.values[0] == want);
  CHECK(r.cycles == cost::workerCycles(ipu21Facts(), 11, 3 * 11 + 6));
  CHECK(r.cycles == 66);
  CHECK(r.singleCycles == (1 + 7 * 5) * 6);

  // The cut follows program.target.workers; Facts::workers (6) times it.
  Program p = oneTile(iota(), {1, 14}, 3);
  Simulator sim(p, ipu21Facts());
  std::string error;
  INFO(error);
  REQUIRE(sim.run(error));
  CHECK(get(sim, "y") == want);
  CHECK(phaseCycles(sim, "cs") == cost::workerCycles(ipu21Facts(), 16, 16 + 16 + 6));
  CHECK(phaseCycles(sim, "cs") == 96);
}

TEST_CASE("ipu21 UOp MultiVertex: no parallel slot runs as one part") {
  Both r = runBoth(iota(-1), {});
  std::vector<double> want(14, 0);
  for (int64_t v = 0; v < 14; v += 2)
    want[v] = double(v);
  CHECK(r.values[0] == want);
  CHECK(r.cycles == (1 + 7 * 5) * 6);
  CHECK(r.singleCycles == r.cycles);
}

TEST_CASE("ipu21 UOp MultiVertex: an empty slice runs no part") {
  // Code outside the range (the store of 7 at 0) runs in every part; with
  // no part it does not run at all, and the vertex costs nothing.
  UOpBody k = iota();
  int32_t at = k.constI(0), seven = k.constF(7);
  k.store(0, at, seven);
  Both r = runBoth(k, {5, 5});
  CHECK(r.values[0] == std::vector<double>(14, 0));
  CHECK(r.cycles == 0);
  CHECK(r.singleCycles == 0);
  // With one value the store outside the range runs once, after it.
  r = runBoth(k, {5, 6});
  std::vector<double> want(14, 0);
  want[0] = 7, want[5] = 5;
  CHECK(r.values[0] == want);
  CHECK(r.cycles == (1 + 5 + 1) * 6);
}

TEST_CASE("ipu21 UOp MultiVertex: maxUOpSteps bounds the vertex, all its parts") {
  // Each part of m iterations executes 1 + 4 m UOps taking 1 + 5 m slots:
  // 20, 20, 20 and 11 steps, 71 in all.
  SimOptions options;
  options.maxUOpSteps = 71;
  Both r = runBoth(iota(), {1, 14}, {}, options);
  CHECK(r.cycles == 66);
  options.maxUOpSteps = 70;
  Program p = oneTile(iota(), {1, 14}, 6);
  Simulator sim(p, ipu21Facts(), options);
  std::string error;
  CHECK_FALSE(sim.run(error));
  CHECK(error == "compute set 0 'cs' vertex 0 on tile 0: codelet 'iota': ran past 70 UOps "
                 "and issue slots on one tile (SimOptions::maxUOpSteps): a loop that does "
                 "not end?");
  // A vertex that faults writes nothing back.
  CHECK(get(sim, "y") == std::vector<double>(14, 0));
}

TEST_CASE("ipu21 UOp MultiVertex: a target of more than 64 workers is refused") {
  Program p = oneTile(iota(), {1, 14}, 65);
  std::string error;
  CHECK_FALSE(checkProgram(p, error));
  CHECK(error == "target: 65 workers; a target has 0 to 64");
  p.target.workers = 64;
  CHECK(checkProgram(p, error));
}
