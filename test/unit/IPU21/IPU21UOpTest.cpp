// The generic (UOp) codelet on the ipu21 simulator: kernels built by hand,
// split over tiles with windows, checked element by element against C++
// references computed here in the same order and precision; faults that
// stop a run with an error; the cycles counted from the instructions run.
#include "IPU21UOpBuilder.h"

#include "synpl/Target/IPU21/CostModel.h"
#include "synpl/Target/IPU21/ProgramFile.h"
#include "synpl/Target/IPU21/Simulator.h"

#include <catch2/catch.hpp>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

using namespace ipu21test;

namespace {

std::vector<double> randomFloats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-3, 3);
  std::vector<double> v(n);
  for (double &x : v)
    x = d(rng);
  return v;
}

/// y[i, j] = x[i, j] * s[i] + b[j] over rows [0, M) (a parallel range) and
/// columns [0, N) (a loop).
UOpBody scaleShift() {
  UOpBody k("scale_shift");
  int32_t x = k.field("x", ElemType::F32, {6, 5});
  int32_t s = k.field("s", ElemType::F32, {6});
  int32_t b = k.field("b", ElemType::F32, {5});
  int32_t y = k.field("y", ElemType::F32, {6, 5}, true);
  int32_t i = k.range(0, 6, 0);
  int32_t j = k.range(0, 5);
  int32_t xv = k.load(x, k.index(x, {i, j}));
  int32_t sv = k.load(s, k.index(s, {i}));
  int32_t bv = k.load(b, k.index(b, {j}));
  int32_t t = k.compute(UOpcode::Mul, UType::F32, xv, sv);
  int32_t yv = k.compute(UOpcode::Add, UType::F32, t, bv);
  k.store(y, k.index(y, {i, j}), yv);
  k.end(j);
  k.end(i);
  return k;
}

/// The scale-shift kernel over 2 tiles, rows [3t, 3t + 3) on tile t: x and
/// y 15 elements per tile, s 3, and b replicated (a [2, 5] tensor, one row
/// per tile).
Program scaleShiftProgram() {
  Program p = makeProgram("scale-shift");
  int32_t x = addTensor(p, "x", ElemType::F32, {6, 5}, 0, 15, 0x80000);
  int32_t s = addTensor(p, "s", ElemType::F32, {6}, 0, 3, 0x81000);
  int32_t b = addTensor(p, "b", ElemType::F32, {2, 5}, 0, 5, 0x82000);
  int32_t y = addTensor(p, "y", ElemType::F32, {6, 5}, 0, 15, 0x83000);
  int32_t k = addUOpCodelet(p, scaleShift());
  std::vector<Vertex> vs;
  for (int64_t t = 0; t < 2; ++t)
    vs.push_back(vertex(k, tiles(t, t + 1),
                        {tensorField(x, 0, 15), tensorField(s, 0, 3), tensorField(b, 0, 5),
                         tensorField(y, 0, 15)},
                        {3 * t, 3 * t + 3,         // rows
                         3 * t, 3, 0, 5,           // x's window
                         3 * t, 3,                 // s's
                         0, 5,                     // b's
                         3 * t, 3, 0, 5}));        // y's
  p.main.body = {executeStep(addComputeSet(p, "scale_shift", vs))};
  return p;
}

std::string runError(const Program &p, SimOptions options = {}) {
  Simulator sim(p, ipu21Facts(), options);
  std::string error;
  if (!sim.valid(error))
    return "invalid: " + error;
  if (sim.run(error))
    return "";
  return error;
}

} // namespace

TEST_CASE("ipu21 UOp elementwise kernel split over 2 tiles with windows") {
  Program p = scaleShiftProgram();
  Simulator sim(p, ipu21Facts());
  std::string error;
  INFO(error);
  REQUIRE(sim.valid(error));
  std::vector<double> x = randomFloats(30, 1), s = randomFloats(6, 2), b = randomFloats(5, 3);
  std::vector<double> b2 = b;
  b2.insert(b2.end(), b.begin(), b.end());
  set(sim, "x", x);
  set(sim, "s", s);
  set(sim, "b", b2);
  REQUIRE(sim.run(error));
  std::vector<double> y = get(sim, "y");
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 5; ++j) {
      float t = float(x[i * 5 + j]) * float(s[i]);
      float want = t + float(b[j]);
      INFO("y[" << i << ", " << j << "]");
      CHECK(y[i * 5 + j] == double(want));
    }

  // Each tile's vertex is a MultiVertex: its 3 rows are cut into 3 worker
  // parts of one row, each 98 issue slots (1 for the row range, 1 for the
  // column range's start, 5 × 19 for the body -- Index 2 per dimension --
  // and 1 for the row range's End). The parts run at once, each issuing
  // one slot every 6 cycles: max(98 × 6, 3 × 98).
  CHECK(phaseCycles(sim, "scale_shift") == 98 * 6);
  REQUIRE(sim.run(error));
  CHECK(phaseCycles(sim, "scale_shift") == 2 * 98 * 6);
  CHECK(sim.report().phases[0].utilisation == Approx(2.0 / 1472));

  // On a target of one worker per tile the vertex runs as one part of
  // 1 + 3 × 97 = 292 slots (the row range starts once), numbers unchanged.
  Program one = scaleShiftProgram();
  one.target.workers = 1;
  Simulator single(one, ipu21Facts());
  set(single, "x", x);
  set(single, "s", s);
  set(single, "b", b2);
  REQUIRE(single.run(error));
  CHECK(get(single, "y") == y);
  CHECK(phaseCycles(single, "scale_shift") == 292 * 6);
}

TEST_CASE("ipu21 UOp worker cycles: max(longest part x workers, total)") {
  const Facts f = ipu21Facts();
  CHECK(cost::workerCycles(f, 10, 10) == 60);
  CHECK(cost::workerCycles(f, 10, 60) == 60);
  CHECK(cost::workerCycles(f, 10, 70) == 70);
  CHECK(cost::workerCycles(f, 0, 0) == 0);

  // v vertices on tile 0, each writing 2 elements: a MultiVertex of 2
  // worker parts (one element each) of 1 (range) + 2 (index) + 1 (store) +
  // 1 (end) = 5 slots; Const costs nothing. All 2v parts of the tile share
  // its workers: max(5 × 6, 5 × 2v). On a target of one worker each vertex
  // is one part of 1 + 2 × 4 = 9 slots: max(9 × 6, 9v).
  UOpBody k("fill2");
  int32_t y = k.field("y", ElemType::F32, {2}, true);
  int32_t one = k.constF(1);
  int32_t i = k.range(0, 2, 0);
  k.store(y, k.index(y, {i}), one);
  k.end(i);
  for (int64_t workers : {6, 1})
    for (int v : {1, 2, 3, 6, 7, 12}) {
      INFO(v << " vertices, " << workers << " workers");
      Program p = makeProgram("workers");
      p.target.workers = workers;
      int32_t buf = addBuffer(p, "buf", ElemType::F32, tiles(0, 1), 24);
      int32_t c = addUOpCodelet(p, k);
      std::vector<Vertex> vs;
      for (int n = 0; n < v; ++n)
        vs.push_back(vertex(c, tiles(0, 1), {bufferField(buf, 2 * n, 2)}, {0, 2, 0, 2},
                            0x7F000 + 64 * n));
      // A Fill vertex on the same tile adds its own cost.
      int32_t fill = addCodelet(p, "fill", CodeletKind::Fill, ElemType::F32, ElemType::F32, 64,
                                0x4D000);
      vs.push_back(vertex(fill, tiles(0, 1), {bufferField(buf, 0, 8)}, fillParams(8, 0.0),
                          0x7E000));
      p.main.body = {executeStep(addComputeSet(p, "cs", vs))};
      Simulator sim(p, f);
      std::string error;
      INFO(error);
      REQUIRE(sim.run(error));
      int64_t fillCycles = cost::memcpyCycles(f, 32);
      int64_t want = workers == 6 ? std::max<int64_t>(5 * 6, 5 * 2 * v)
                                  : std::max<int64_t>(9 * 6, 9 * v);
      CHECK(phaseCycles(sim, "cs") == fillCycles + want);
    }
}

TEST_CASE("ipu21 UOp row reductions: sum and max in float order") {
  UOpBody k("rows");
  int32_t x = k.field("x", ElemType::F32, {4, 7});
  int32_t sum = k.field("sum", ElemType::F32, {4}, true);
  int32_t mx = k.field("mx", ElemType::F32, {4}, true);
  int32_t prod = k.field("prod", ElemType::F32, {4}, true);
  int32_t zero = k.constF(0), ninf = k.constF(-INFINITY), one = k.constF(1);
  int32_t i = k.range(0, 4, 0);
  int32_t j = k.range(0, 7);
  int32_t xv = k.load(x, k.index(x, {i, j}));
  k.end(j);
  int32_t s = k.reduce(0, UType::F32, xv, j, zero);
  int32_t m = k.reduce(2, UType::F32, xv, j, ninf);
  int32_t q = k.reduce(1, UType::F32, xv, j, one);
  k.store(sum, k.index(sum, {i}), s);
  k.store(mx, k.index(mx, {i}), m);
  k.store(prod, k.index(prod, {i}), q);
  k.end(i);
  Program p = oneTile(k, {0, 4});
  Simulator sim(p, ipu21Facts());
  std::vector<double> xs = randomFloats(28, 7);
  set(sim, "x", xs);
  std::string error;
  INFO(error);
  REQUIRE(sim.run(error));
  std::vector<double> gs = get(sim, "sum"), gm = get(sim, "mx"), gp = get(sim, "prod");
  for (int r = 0; r < 4; ++r) {
    float acc = 0, best = -INFINITY, pr = 1;
    for (int c = 0; c < 7; ++c) {
      acc += float(xs[r * 7 + c]);
      best = std::max(best, float(xs[r * 7 + c]));
      pr *= float(xs[r * 7 + c]);
    }
    CHECK(gs[r] == double(acc));
    CHECK(gm[r] == double(best));
    CHECK(gp[r] == double(pr));
  }
}

TEST_CASE("ipu21 UOp Reduce over an empty range is its initial value") {
  UOpBody k("empty");
  int32_t y = k.field("y", ElemType::I32, {1}, true);
  int32_t init = k.constI(42, UType::I32), zero = k.constI(0);
  int32_t r = k.range(5, 5);
  int32_t v = k.convert(UOpcode::Cast, UType::I32, UType::Index, r);
  k.end(r);
  int32_t s = k.reduce(0, UType::I32, v, r, init);
  k.store(y, zero, s, UType::I32);
  Program p = oneTile(k);
  Simulator sim(p, ipu21Facts());
  std::string error;
  REQUIRE(sim.run(error));
  CHECK(get(sim, "y") == std::vector<double>{42});
}

TEST_CASE("ipu21 UOp If runs its body only when the condition holds") {
  // y[i] = x[i], and then 2 x[i] when 0 < x[i].
  UOpBody k("relu2");
  int32_t x = k.field("x", ElemType::F32, {8});
  int32_t y = k.field("y", ElemType::F32, {8}, true);
  int32_t zero = k.constF(0), two = k.constF(2);
  int32_t i = k.range(0, 8);
  int32_t xv = k.load(x, k.index(x, {i}));
  int32_t iy = k.index(y, {i});
  k.store(y, iy, xv);
  int32_t pos = k.convert(UOpcode::CmpLt, UType::I1, UType::F32, zero, xv);
  k.if_(pos);
  k.store(y, iy, k.compute(UOpcode::Mul, UType::F32, xv, two));
  k.endIf();
  k.end(i);
  Program p = oneTile(k);
  Simulator sim(p, ipu21Facts());
  std::vector<double> xs = {-1.5, 2.25, 0, -0.0, 3, -7, 0.125, 1e-3};
  set(sim, "x", xs);
  std::string error;
  REQUIRE(sim.run(error));
  std::vector<double> ys = get(sim, "y");
  int positive = 0;
  for (size_t n = 0; n < xs.size(); ++n) {
    float want = 0 < float(xs[n]) ? float(xs[n]) * 2.0f : float(xs[n]);
    positive += 0 < xs[n];
    CHECK(ys[n] == double(want));
  }
  // Slots: 1 (range) + 8 × (index 2, load 1, index 2, store 1, cmplt 1, if
  // 1, end 1) + per positive x (mul 1, store 1); EndIf and Const are free.
  CHECK(phaseCycles(sim, "cs") == (1 + 8 * 9 + 2 * positive) * 6);
}

TEST_CASE("ipu21 UOp casts, comparisons, Where and integer arithmetic") {
  UOpBody k("casts");
  int32_t x = k.field("x", ElemType::F32, {6});
  int32_t a = k.field("a", ElemType::I32, {6}, true);
  int32_t u = k.field("u", ElemType::U8, {6}, true);
  int32_t w = k.field("w", ElemType::I32, {5}, true);
  int32_t h = k.field("h", ElemType::F16, {2}, true);
  int32_t zero = k.constF(0);
  int32_t i = k.range(0, 6);
  int32_t xv = k.load(x, k.index(x, {i}));
  int32_t q = k.convert(UOpcode::Cast, UType::I32, UType::F32, xv);
  int32_t neg = k.convert(UOpcode::CmpLt, UType::I1, UType::F32, xv, zero);
  int32_t mq = k.compute(UOpcode::Neg, UType::I32, q);
  k.store(a, k.index(a, {i}), k.compute(UOpcode::Where, UType::I32, neg, mq, q), UType::I32);
  int32_t q8 = k.convert(UOpcode::Cast, UType::U8, UType::F32, xv);
  k.store(u, k.index(u, {i}), q8, UType::U8);
  k.end(i);
  // w = {100 + 100 in i8, bits of 1.0f, 7 / -2, 7 % -2, 3 != 3}.
  auto at = [&](int64_t n) { return k.constI(n); };
  int32_t hundred = k.constI(100, UType::I8);
  int32_t wrapped = k.compute(UOpcode::Add, UType::I8, hundred, hundred);
  int32_t seven = k.constI(7, UType::I32), m2 = k.constI(-2, UType::I32);
  int32_t ne = k.convert(UOpcode::CmpNe, UType::I1, UType::I32, seven, seven);
  int32_t ws[] = {k.convert(UOpcode::Cast, UType::I32, UType::I8, wrapped),
                  k.convert(UOpcode::Bitcast, UType::I32, UType::F32, k.constF(1)),
                  k.compute(UOpcode::Div, UType::I32, seven, m2),
                  k.compute(UOpcode::Mod, UType::I32, seven, m2),
                  k.convert(UOpcode::Cast, UType::I32, UType::I1, ne)};
  for (int64_t n = 0; n < 5; ++n) {
    int32_t offset = at(n);
    k.store(w, offset, ws[n], UType::I32);
  }
  // h = {0.1 as f16 (rounded once from the f32 0.1), 1 + 2^-11 in f16
  // (ties to even: 1)}.
  int32_t tenth = k.constF(0.1);
  int32_t h0 = k.convert(UOpcode::Cast, UType::F16, UType::F32, tenth), o0 = at(0);
  k.store(h, o0, h0, UType::F16);
  int32_t one = k.constF(1, UType::F16), tiny = k.constF(std::ldexp(1.0, -11), UType::F16);
  int32_t h1 = k.compute(UOpcode::Add, UType::F16, one, tiny), o1 = at(1);
  k.store(h, o1, h1, UType::F16);

  Program p = oneTile(k);
  Simulator sim(p, ipu21Facts());
  set(sim, "x", {-2.7, 2.7, 3e9, -3e9, std::nan(""), 0.5});
  std::string error;
  INFO(error);
  REQUIRE(sim.run(error));
  // Float to int truncates toward zero and saturates, NaN to 0; negating
  // INT32_MIN wraps to itself.
  CHECK(get(sim, "a") == std::vector<double>{2, 2, 2147483647, -2147483648.0, 0, 0});
  CHECK(get(sim, "u") == std::vector<double>{0, 2, 255, 0, 0, 0});
  CHECK(get(sim, "w") == std::vector<double>{-56, 1065353216, -3, 1, 0});
  CHECK(get(sim, "h") == std::vector<double>{roundToElem(ElemType::F16, double(0.1f)), 1});
}

TEST_CASE("ipu21 UOp Exp2 flushes results below the smallest normal to zero") {
  UOpBody k("exp2");
  int32_t x = k.field("x", ElemType::F32, {5});
  int32_t y = k.field("y", ElemType::F32, {5}, true);
  int32_t h = k.field("h", ElemType::F16, {5}, true);
  int32_t i = k.range(0, 5);
  int32_t ix = k.index(x, {i});
  k.store(y, k.index(y, {i}), k.compute(UOpcode::Exp2, UType::F32, k.load(x, ix)));
  int32_t xh = k.load(x, ix, UType::F16); // an f32 field read as f16
  k.store(h, k.index(h, {i}), k.compute(UOpcode::Exp2, UType::F16, xh), UType::F16);
  k.end(i);
  Program p = oneTile(k);
  Simulator sim(p, ipu21Facts());
  set(sim, "x", {-126.5, -126, -10, -14.5, -14});
  std::string error;
  REQUIRE(sim.run(error));
  CHECK(get(sim, "y") ==
        std::vector<double>{0, double(FLT_MIN), std::ldexp(1.0, -10),
                            double(float(std::exp2(-14.5))), std::ldexp(1.0, -14)});
  CHECK(get(sim, "h") == std::vector<double>{0, 0, roundToElem(ElemType::F16, std::exp2(-10.0)),
                                             0, std::ldexp(1.0, -14)});
}

TEST_CASE("ipu21 UOp faults stop the run with an error") {
  SECTION("an index outside its window") {
    // The loop walks 8 rows; the vertex's window of y holds rows [2, 6).
    UOpBody k("walk");
    int32_t y = k.field("y", ElemType::F32, {8}, true);
    int32_t one = k.constF(1);
    int32_t i = k.range(2, 8);
    k.store(y, k.index(y, {i}), one);
    k.end(i);
    Program p = makeProgram("fault");
    int32_t t = addTensor(p, "y", ElemType::F32, {8}, 0, 8);
    int32_t c = addUOpCodelet(p, k);
    p.main.body = {executeStep(
        addComputeSet(p, "cs", {vertex(c, tiles(0, 1), {tensorField(t, 2, 4)}, {2, 4})}))};
    CHECK(runError(p) == "compute set 0 'cs' vertex 0 on tile 0: codelet 'walk': UOp 2 "
                         "(index): field 0 'y' dimension 0: index 6 is outside the window "
                         "[2, 6)");
    // A vertex that faults writes nothing back.
    Simulator sim(p, ipu21Facts());
    std::string error;
    CHECK_FALSE(sim.run(error));
    CHECK(get(sim, "y") == std::vector<double>(8, 0.0));
  }
  SECTION("an offset outside its field") {
    UOpBody k("off");
    int32_t y = k.field("y", ElemType::F32, {4}, true);
    int32_t four = k.constI(4), one = k.constF(1);
    k.store(y, four, one);
    CHECK(runError(oneTile(k)).find("UOp 2 (store): offset 4 is outside field 0 'y''s 4 "
                                    "elements") != std::string::npos);
  }
  SECTION("integer division by zero") {
    UOpBody k("div");
    int32_t y = k.field("y", ElemType::I32, {1}, true);
    int32_t seven = k.constI(7, UType::I32), zero = k.constI(0, UType::I32);
    int32_t at = k.constI(0), mod = k.compute(UOpcode::Mod, UType::I32, seven, zero);
    k.store(y, at, mod, UType::I32);
    CHECK(runError(oneTile(k)) == "compute set 0 'cs' vertex 0 on tile 0: codelet 'div': UOp 3 "
                                  "(mod): 7 % 0: integer division by zero");
    CHECK(mod == 3);
  }
  SECTION("a loop that runs too long") {
    SimOptions options;
    options.maxUOpSteps = 100;
    CHECK(runError(scaleShiftProgram(), options).find("ran past 100 UOps and issue slots on one tile") !=
          std::string::npos);
  }
  SECTION("timing only refuses UOp vertices") {
    CHECK(runError(scaleShiftProgram(), SimOptions{false}).find("timing only") !=
          std::string::npos);
  }
}

TEST_CASE("ipu21 UOp fields bound to the same elements share their values") {
  // y and x are the same 4 elements: y = x + 1, then y = 2 x reads the new x.
  UOpBody k("alias");
  int32_t x = k.field("x", ElemType::F32, {4});
  int32_t y = k.field("y", ElemType::F32, {4}, true);
  int32_t one = k.constF(1), two = k.constF(2);
  int32_t i = k.range(0, 4);
  int32_t ix = k.index(x, {i}), iy = k.index(y, {i});
  k.store(y, iy, k.compute(UOpcode::Add, UType::F32, k.load(x, ix), one));
  k.store(y, iy, k.compute(UOpcode::Mul, UType::F32, k.load(x, ix), two));
  k.end(i);
  Program p = makeProgram("alias");
  int32_t t = addTensor(p, "t", ElemType::F32, {6}, 0, 6);
  int32_t c = addUOpCodelet(p, k);
  p.main.body = {executeStep(addComputeSet(
      p, "cs", {vertex(c, tiles(0, 1), {tensorField(t, 1, 4), tensorField(t, 1, 4)},
                       {0, 4, 0, 4})}))};
  {
    Simulator sim(p, ipu21Facts());
    set(sim, "t", {1, 2, 3, 4, 5, 6});
    std::string error;
    INFO(error);
    REQUIRE(sim.run(error));
    CHECK(get(sim, "t") == std::vector<double>{1, 6, 8, 10, 12, 6});
  }
  // Overlapping but different elements are refused.
  p.computeSets[0].vertices[0].fields[0].offset = 2;
  CHECK(runError(p) == "invalid: compute set 0 'cs' vertex 0: fields 0 'x' and 1 'y' overlap "
                       "without binding the same elements");
  // Disjoint fields: x is an input, never written back.
  p.computeSets[0].vertices[0].fields[0].offset = 0;
  p.computeSets[0].vertices[0].fields[1].offset = 2;
  p.computeSets[0].vertices[0].fields[1].count = 4;
  p.computeSets[0].vertices[0].fields[0].count = 4;
  CHECK(runError(p).find("overlap") != std::string::npos);
  p.computeSets[0].vertices[0].fields[1].offset = 4;
  p.computeSets[0].vertices[0].fields[1].count = 4;
  p.tensors[0].shape = {8};
  p.tensors[0].mapping = {{0, 0, 8}};
  Simulator sim(p, ipu21Facts());
  set(sim, "t", {1, 2, 3, 4, 5, 6, 7, 8});
  std::string error;
  INFO(error);
  REQUIRE(sim.run(error));
  CHECK(get(sim, "t") == std::vector<double>{1, 2, 3, 4, 2, 4, 6, 8});
}

TEST_CASE("ipu21 UOp overlapping fields: every pair with an output is checked") {
  // a = [0, 3) and b = [1, 4) are inputs (their overlap is harmless); c
  // binds b's elements exactly, as an output, and so overlaps a partially.
  UOpBody k("three");
  int32_t a = k.field("a", ElemType::F32, {3});
  k.field("b", ElemType::F32, {3});
  int32_t c = k.field("c", ElemType::F32, {3}, true);
  int32_t zero = k.constI(0);
  k.store(c, zero, k.load(a, zero));
  Program p = makeProgram("three");
  int32_t t = addTensor(p, "t", ElemType::F32, {8}, 0, 8);
  int32_t kc = addUOpCodelet(p, k);
  p.main.body = {executeStep(addComputeSet(
      p, "cs",
      {vertex(kc, tiles(0, 1), {tensorField(t, 0, 3), tensorField(t, 1, 3), tensorField(t, 1, 3)},
              {0, 3, 0, 3, 0, 3})}))};
  CHECK(runError(p) == "invalid: compute set 0 'cs' vertex 0: fields 0 'a' and 2 'c' overlap "
                       "without binding the same elements");
  p.computeSets[0].vertices[0].fields[0].offset = 4; // a moves clear of b and c
  CHECK(runError(p).empty());
  p.codelets[kc].uopFields[2].output = false; // c an input too: no output, no store
  CHECK(runError(p).find("stores into field 'c', which is not an output") != std::string::npos);
  // Only a UOp codelet has a UOp body.
  Program q = makeProgram("fill");
  addCodelet(q, "fill", CodeletKind::Fill, ElemType::F32, ElemType::F32);
  q.codelets[0].uop.push_back(UInst());
  std::string error;
  CHECK_FALSE(checkProgram(q, error));
  CHECK(error == "codelet 0 'fill': only a UOp codelet has UOp fields and a UOp body");
}
