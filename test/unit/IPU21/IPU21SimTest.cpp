// The ipu21 simulator's values: each codelet against a double-precision
// reference, a two-superstep program through exchanges and buffers, If and
// Repeat, host streams, memory maps and the report.
#include "IPU21Builder.h"

#include "synpl/Target/IPU21/ProgramFile.h"
#include "synpl/Target/IPU21/Simulator.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <tuple>

using namespace ipu21test;

namespace {

std::vector<double> randomValues(size_t n, std::mt19937 &rng, double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v(n);
  for (double &x : v)
    x = d(rng);
  return v;
}

struct Matmul {
  std::vector<double> in, w, before, after;
};

/// One AMP vertex on tile 0 over tensors in [m,k], w [k,n], out [m,n].
Matmul runMatmul(ElemType inType, ElemType outType, int64_t m, int64_t k, int64_t n,
                 bool accumulate, uint32_t seed) {
  Program p = makeProgram("matmul");
  int32_t a = addTensor(p, "in", inType, {m, k}, 0, m * k, 0x80000);
  int32_t w = addTensor(p, "w", inType, {k, n}, 0, k * n, 0x90000);
  int32_t o = addTensor(p, "out", outType, {m, n}, 0, m * n, 0xA0000);
  int32_t c = addCodelet(p, "amp", CodeletKind::AmpMatmul, inType, outType);
  int32_t cs = addComputeSet(
      p, "mm",
      {vertex(c, tiles(0, 1),
              {tensorField(a, 0, m * k), tensorField(w, 0, k * n), tensorField(o, 0, m * n)},
              {m, n, k, accumulate ? 1 : 0})});
  p.main.body = {executeStep(cs)};
  Simulator sim(p, ipu21Facts());
  std::mt19937 rng(seed);
  set(sim, "in", randomValues(size_t(m * k), rng));
  set(sim, "w", randomValues(size_t(k * n), rng));
  set(sim, "out", randomValues(size_t(m * n), rng, -4, 4));
  Matmul r{get(sim, "in"), get(sim, "w"), get(sim, "out"), {}};
  std::string error;
  REQUIRE(sim.run(error));
  r.after = get(sim, "out");
  return r;
}

/// For each output, the reference in double and the sum of |products|
/// (with |initial| when accumulating), the scale of the rounding error.
void reference(const Matmul &r, int64_t m, int64_t k, int64_t n, bool accumulate,
               std::vector<double> &exact, std::vector<double> &scale) {
  exact.assign(size_t(m * n), 0);
  scale.assign(size_t(m * n), 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = accumulate ? r.before[i * n + j] : 0, mag = std::fabs(s);
      for (int64_t kk = 0; kk < k; ++kk) {
        s += r.in[i * k + kk] * r.w[kk * n + j];
        mag += std::fabs(r.in[i * k + kk] * r.w[kk * n + j]);
      }
      exact[i * n + j] = s;
      scale[i * n + j] = mag;
    }
}

} // namespace

TEST_CASE("ipu21 AMP matmul values against a double reference") {
  for (bool accumulate : {false, true}) {
    INFO("accumulate = " << accumulate);
    SECTION("f32 inputs, f32 partials") {
      int64_t m = 5, k = 37, n = 19;
      Matmul r = runMatmul(ElemType::F32, ElemType::F32, m, k, n, accumulate, 1);
      std::vector<double> exact, scale;
      reference(r, m, k, n, accumulate, exact, scale);
      // Float summation of k + 1 terms errs by at most about (k + 1) × 2^-24
      // of the sum of their magnitudes: below 1e-5 of it.
      for (size_t i = 0; i < exact.size(); ++i)
        CHECK(std::fabs(r.after[i] - exact[i]) <= 1e-5 * scale[i]);
    }
    SECTION("f16 inputs, f32 partials") {
      int64_t m = 4, k = 40, n = 16;
      Matmul r = runMatmul(ElemType::F16, ElemType::F32, m, k, n, accumulate, 2);
      std::vector<double> exact, scale;
      reference(r, m, k, n, accumulate, exact, scale);
      for (size_t i = 0; i < exact.size(); ++i)
        CHECK(std::fabs(r.after[i] - exact[i]) <= 1e-5 * scale[i]);
    }
    SECTION("f16 inputs, f16 partials") {
      int64_t m = 6, k = 40, n = 17;
      Matmul r = runMatmul(ElemType::F16, ElemType::F16, m, k, n, accumulate, 3);
      std::vector<double> exact, scale;
      reference(r, m, k, n, accumulate, exact, scale);
      // The running sum is rounded to half once per 16-channel pass: ceil(k /
      // 16) = 3 roundings, each within half a unit in the last place of
      // binary16 (2^-11 relative) of a partial sum no larger than the sum of
      // magnitudes; the float sums inside a pass add ~2^-24 per term.
      double bound = 3 * std::ldexp(1.0, -11) + double(k + 1) * std::ldexp(1.0, -24);
      for (size_t i = 0; i < exact.size(); ++i)
        CHECK(std::fabs(r.after[i] - exact[i]) <= bound * scale[i]);
    }
  }
}

TEST_CASE("ipu21 AMP f16 partials round to half after each 16-channel pass") {
  // One output: 1 + 2^-11 after the first pass rounds (to even) to 1, and
  // again after the second; rounding once at the end would give 1 + 2^-10.
  Program p = makeProgram("passes");
  int64_t k = 32;
  int32_t a = addTensor(p, "in", ElemType::F16, {1, k}, 0, k, 0x80000);
  int32_t w = addTensor(p, "w", ElemType::F16, {k, 1}, 0, k, 0x90000);
  int32_t o = addTensor(p, "out", ElemType::F16, {1, 1}, 0, 1, 0xA0000);
  int32_t c = addCodelet(p, "amp", CodeletKind::AmpMatmul, ElemType::F16, ElemType::F16);
  int32_t cs = addComputeSet(p, "mm", {vertex(c, tiles(0, 1),
                                              {tensorField(a, 0, k), tensorField(w, 0, k),
                                               tensorField(o, 0, 1)},
                                              {1, 1, k, 0})});
  p.main.body = {executeStep(cs)};
  Simulator sim(p, ipu21Facts());
  std::vector<double> in(k, 0.0), ones(k, 1.0);
  in[0] = 1;
  in[1] = std::ldexp(1.0, -11);
  in[16] = std::ldexp(1.0, -11);
  set(sim, "in", in);
  set(sim, "w", ones);
  std::string error;
  REQUIRE(sim.run(error));
  CHECK(get(sim, "out")[0] == 1.0);
}

TEST_CASE("ipu21 ReduceAdd sums columns, Copy converts, Fill writes") {
  std::string error;
  SECTION("ReduceAdd") {
    for (bool accumulate : {false, true}) {
      Program p = makeProgram("reduce");
      int32_t part = addTensor(p, "partials", ElemType::F32, {3, 5}, 0, 15, 0x80000);
      int32_t out = addTensor(p, "out", ElemType::F32, {5}, 0, 5, 0x90000);
      int32_t c = addCodelet(p, "reduce", CodeletKind::ReduceAdd, ElemType::F32, ElemType::F32);
      int32_t cs = addComputeSet(
          p, "r", {vertex(c, tiles(0, 1), {tensorField(part, 0, 15), tensorField(out, 0, 5)},
                          {3, 5, accumulate ? 1 : 0})});
      p.main.body = {executeStep(cs)};
      Simulator sim(p, ipu21Facts());
      std::vector<double> partials = {1, 2, 3, 4, 5, 10, 20, 30, 40, 50, 0.5, 0.25, -3, 8, -1};
      set(sim, "partials", partials);
      set(sim, "out", {100, 200, 300, 400, 500});
      REQUIRE(sim.run(error));
      std::vector<double> got = get(sim, "out");
      for (int j = 0; j < 5; ++j) {
        double expect = partials[j] + partials[5 + j] + partials[10 + j] +
                        (accumulate ? 100.0 * (j + 1) : 0);
        CHECK(got[j] == expect);
      }
    }
  }
  SECTION("Copy f32 -> f16 -> f32 rounds 1/3 to 0.333251953125") {
    Program p = makeProgram("copy");
    int32_t a = addTensor(p, "a", ElemType::F32, {2}, 0, 2, 0x80000);
    int32_t b = addTensor(p, "b", ElemType::F16, {2}, 0, 2, 0x90000);
    int32_t c = addTensor(p, "c", ElemType::F32, {2}, 0, 2, 0xA0000);
    int32_t down = addCodelet(p, "down", CodeletKind::Copy, ElemType::F32, ElemType::F16);
    int32_t up = addCodelet(p, "up", CodeletKind::Copy, ElemType::F16, ElemType::F32);
    int32_t cs1 = addComputeSet(
        p, "down", {vertex(down, tiles(0, 1), {tensorField(a, 0, 2), tensorField(b, 0, 2)}, {2})});
    int32_t cs2 = addComputeSet(
        p, "up", {vertex(up, tiles(0, 1), {tensorField(b, 0, 2), tensorField(c, 0, 2)}, {2})});
    p.main.body = {executeStep(cs1), executeStep(cs2)};
    Simulator sim(p, ipu21Facts());
    set(sim, "a", {1.0 / 3.0, 70000.0});
    CHECK(get(sim, "a")[0] == double(float(1.0 / 3.0)));
    REQUIRE(sim.run(error));
    CHECK(get(sim, "b")[0] == 0.333251953125);
    CHECK(get(sim, "c")[0] == 0.333251953125);
    CHECK(std::isinf(get(sim, "c")[1])); // past f16's largest finite value, 65504
  }
  SECTION("Fill through a tile's non-contiguous intervals") {
    // Tile 0 holds elements [0, 2) and [4, 6), tile 1 holds [2, 4): tile 0's
    // local elements 1 and 2 are logical elements 1 and 4.
    Program p = makeProgram("fill");
    Tensor t;
    t.name = "t";
    t.type = ElemType::F16;
    t.shape = {6};
    t.mapping = {{0, 0, 2}, {0, 4, 6}, {1, 2, 4}};
    t.address = 0x80000;
    p.tensors.push_back(t);
    int32_t c = addCodelet(p, "fill", CodeletKind::Fill, ElemType::F16, ElemType::F16);
    int32_t cs = addComputeSet(
        p, "fill",
        {vertex(c, tiles(0, 1), {tensorField(0, 1, 2)}, fillParams(2, 2.5)),
         vertex(c, tiles(1, 2), {tensorField(0, 0, 2)}, fillParams(2, 1.0 / 3.0))});
    p.main.body = {executeStep(cs)};
    Simulator sim(p, ipu21Facts());
    REQUIRE(sim.run(error));
    std::vector<double> got = get(sim, "t");
    std::vector<double> third(2, 0.333251953125);
    CHECK(got == std::vector<double>{0, 2.5, third[0], third[1], 2.5, 0});
  }
}

TEST_CASE("ipu21 two supersteps: scatter to buffers, matmul, gather back") {
  const Facts f = ipu21Facts();
  Program p = makeProgram("two-supersteps");
  int32_t x = addTensor(p, "x", ElemType::F32, {4, 16}, 0, 16, 0x80000); // a row per tile 0..3
  int32_t w = addTensor(p, "w", ElemType::F32, {16, 16}, 4, 256, 0x90000);
  int32_t y = addTensor(p, "y", ElemType::F32, {4, 16}, 0, 16, 0xA0000);
  TileSet workers = tiles(10, 14);
  int32_t xb = addBuffer(p, "xb", ElemType::F32, workers, 16, 0xB0000);
  int32_t wb = addBuffer(p, "wb", ElemType::F32, workers, 256, 0xB1000);
  int32_t yb = addBuffer(p, "yb", ElemType::F32, workers, 16, 0xB2000);
  std::vector<Send> scatter, gather;
  for (int r = 0; r < 4; ++r) {
    scatter.push_back({tensorEnd(x, 16 * r), bufferEnd(xb, 0, tileList({10 + r})), 16});
    gather.push_back({bufferEnd(yb, 0, tileList({10 + r})), tensorEnd(y, 16 * r), 16});
  }
  scatter.push_back({tensorEnd(w, 0), bufferEnd(wb, 0, workers), 256});
  int32_t sx = addExchange(p, "scatter", scatter);
  int32_t gx = addExchange(p, "gather", gather);
  int32_t amp = addCodelet(p, "amp", CodeletKind::AmpMatmul, ElemType::F32, ElemType::F32);
  int32_t cs = addComputeSet(
      p, "mm", {vertex(amp, workers,
                       {bufferField(xb, 0, 16), bufferField(wb, 0, 256), bufferField(yb, 0, 16)},
                       {1, 16, 16, 0})});
  p.main.body = {copyStep(sx), syncStep(), executeStep(cs), syncStep(), copyStep(gx), syncStep()};

  Simulator sim(scheduled(p), f);
  std::mt19937 rng(7);
  set(sim, "x", randomValues(64, rng));
  set(sim, "w", randomValues(256, rng));
  std::vector<double> xv = get(sim, "x"), wv = get(sim, "w");
  std::string error;
  REQUIRE(sim.run(error));
  std::vector<double> yv = get(sim, "y");
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 16; ++j) {
      double s = 0, mag = 0;
      for (int k = 0; k < 16; ++k) {
        s += xv[i * 16 + k] * wv[k * 16 + j];
        mag += std::fabs(xv[i * 16 + k] * wv[k * 16 + j]);
      }
      CHECK(std::fabs(yv[i * 16 + j] - s) <= 1e-5 * mag);
    }

  // Scatter: tile 4 sends w's 1024 bytes once, which bounds the phase at
  // 256 cycles; tiles 10..13 (two whole pairs) each receive 64 + 1024 / 2
  // bytes' worth. But a tile cannot take its own x row (a transfer for it
  // alone takes its whole bus) in a round where it takes a packet of w
  // (shared by its pair): the x rows need rounds of their own, 64 bytes,
  // 16 cycles. Gather: 64 bytes per tile, at once.
  const SimReport &r = sim.report();
  REQUIRE(r.phases.size() == 4);
  CHECK(r.phases[0].name == "scatter");
  CHECK(r.phases[0].cycles == (1024 + 64) / f.exchangeBytesPerCycle);
  CHECK(r.phases[0].boundCycles == 1024 / f.exchangeBytesPerCycle);
  CHECK(r.phases[1].name == "sync");
  CHECK(r.phases[1].runs == 3);
  CHECK(r.phases[2].name == "mm");
  int64_t mm = f.ampCallOverheadCycles + f.ampBlockReloadCycles + 2 * 8;
  CHECK(r.phases[2].cycles == mm);
  CHECK(r.phases[2].utilisation == Approx(4.0 / 1472.0));
  CHECK(r.phases[3].name == "gather");
  CHECK(r.phases[3].cycles == 64 / f.exchangeBytesPerCycle);
  CHECK(r.phases[3].boundCycles == 64 / f.exchangeBytesPerCycle);
  CHECK(r.totalCycles == 272 + mm + 16 + 3 * f.syncCycles);
}

TEST_CASE("ipu21 If takes the body on a nonzero flag, else elseBody") {
  const Facts f = ipu21Facts();
  Program p = makeProgram("if");
  int32_t flag = addTensor(p, "flag", ElemType::I32, {1}, 0, 1, 0x80000);
  int32_t t = addTensor(p, "t", ElemType::F32, {64}, 0, 64, 0x90000);
  int32_t fill = addCodelet(p, "fill", CodeletKind::Fill, ElemType::F32, ElemType::F32);
  int32_t all = addComputeSet(p, "all", {vertex(fill, tiles(0, 1), {tensorField(t, 0, 64)},
                                                fillParams(64, 1.0))});
  int32_t half = addComputeSet(p, "half", {vertex(fill, tiles(0, 1), {tensorField(t, 0, 32)},
                                                  fillParams(32, 2.0))});
  p.main.body = {repeatStep(3, {executeStep(all)}),
                 ifStep(flag, {executeStep(half)}, {syncStep()})};
  int64_t allCost = f.supervisorOverheadCycles + 64 * 4 / f.memcpyBytesPerCycle;
  int64_t halfCost = f.supervisorOverheadCycles + 32 * 4 / f.memcpyBytesPerCycle;

  Simulator sim(p, f);
  std::string error;
  REQUIRE(sim.run(error)); // flag 0: the else branch syncs
  CHECK(sim.report().totalCycles == 3 * allCost + f.syncCycles);
  CHECK(get(sim, "t") == std::vector<double>(64, 1.0));
  set(sim, "flag", {-5});
  REQUIRE(sim.run(error));
  CHECK(sim.report().totalCycles == 2 * 3 * allCost + f.syncCycles + halfCost);
  std::vector<double> got = get(sim, "t");
  CHECK(got[0] == 2.0);
  CHECK(got[31] == 2.0);
  CHECK(got[32] == 1.0);
  CHECK(sim.report().runs == 2);

  SECTION("timing only cannot test a flag") {
    Simulator timing(p, f, SimOptions{false});
    CHECK_FALSE(timing.run(error));
    CHECK(error.find("timing only") != std::string::npos);
    CHECK_FALSE(timing.getTensor("t", got, error));
  }
}

TEST_CASE("ipu21 host streams feed and drain tensors") {
  Program p = makeProgram("streams");
  int32_t t = addTensor(p, "t", ElemType::F16, {4}, 0, 2, 0x80000);
  p.main.body = {streamStep(StepKind::StreamIn, t, "in"),
                 streamStep(StepKind::StreamOut, t, "out")};
  Simulator sim(p, ipu21Facts());
  std::string error;
  CHECK_FALSE(sim.run(error));
  CHECK(error.find("no stream source") != std::string::npos);

  std::vector<std::vector<double>> feed = {{1, 2, 3, 1.0 / 3.0}, {1, 2}};
  std::vector<std::vector<double>> drained;
  sim.setStreamSource([&](std::string_view stream, std::vector<double> &out) {
    if (stream != "in" || feed.empty())
      return false;
    out = feed.front();
    feed.erase(feed.begin());
    return true;
  });
  sim.setStreamSink([&](std::string_view stream, const std::vector<double> &v) {
    CHECK(stream == "out");
    drained.push_back(v);
  });
  REQUIRE(sim.run(error));
  REQUIRE(drained.size() == 1);
  CHECK(drained[0] == std::vector<double>{1, 2, 3, 0.333251953125});
  CHECK_FALSE(sim.run(error)); // the second transfer has 2 values, not 4
  CHECK(error == "stream 'in' gave 2 values; tensor 't' has 4 elements");
  CHECK_FALSE(sim.run(error));
  CHECK(error == "stream 'in' has no more data for tensor 't'");
}

TEST_CASE("ipu21 memory map of a tile lists its objects by address") {
  Program p = makeProgram("memory");
  Tensor t;
  t.name = "t";
  t.type = ElemType::F16;
  t.shape = {64};
  t.mapping = {{0, 0, 48}, {1, 48, 64}};
  t.address = 0x80000;
  p.tensors.push_back(t);
  Tensor u = t; // inside t's memory on tile 0 (a lifetime disjoint from t's)
  u.name = "u";
  u.shape = {16};
  u.mapping = {{0, 0, 16}};
  u.address = 0x80040;
  p.tensors.push_back(u);
  int32_t b = addBuffer(p, "b", ElemType::F16, tiles(0, 2), 100, 0x90000);
  int32_t fill = addCodelet(p, "fill", CodeletKind::Fill, ElemType::F16, ElemType::F16, 1000,
                            0x4C000);
  int32_t cs = addComputeSet(p, "init", {vertex(fill, tiles(0, 1), {tensorField(0, 0, 48)},
                                                fillParams(48, 0.0), 0x7F000, 32)});
  // t's first 10 elements (on tile 0) to b on tile 1: both tiles hold descriptors.
  int32_t x = addExchange(p, "move", {{tensorEnd(0, 0), bufferEnd(b, 0, tileList({1})), 10}},
                          0x7E000, 64);
  p.main.body = {executeStep(cs), copyStep(x)};
  Simulator sim(scheduled(p), ipu21Facts());
  std::string error;
  INFO(error);
  REQUIRE(sim.valid(error));

  auto row = [](MemoryKind kind, const char *name, int64_t address, int64_t bytes) {
    return std::make_tuple(kind, std::string(name), address, bytes);
  };
  auto rows = [](const std::vector<MemoryObject> &map) {
    std::vector<std::tuple<MemoryKind, std::string, int64_t, int64_t>> out;
    for (const MemoryObject &m : map)
      out.emplace_back(m.kind, m.name, m.address, m.bytes);
    return out;
  };
  CHECK(rows(sim.memoryMap(0)) ==
        std::vector<std::tuple<MemoryKind, std::string, int64_t, int64_t>>{
            row(MemoryKind::Code, "fill", 0x4C000, 1000),
            row(MemoryKind::Descriptors, "move", 0x7E000, 64),
            row(MemoryKind::VertexState, "init[0] fill", 0x7F000, 32),
            row(MemoryKind::Tensor, "t", 0x80000, 96),
            row(MemoryKind::Tensor, "u", 0x80040, 32),
            row(MemoryKind::Buffer, "b", 0x90000, 200)});
  CHECK(rows(sim.memoryMap(1)) ==
        std::vector<std::tuple<MemoryKind, std::string, int64_t, int64_t>>{
            row(MemoryKind::Descriptors, "move", 0x7E000, 64),
            row(MemoryKind::Tensor, "t", 0x80000, 32),
            row(MemoryKind::Buffer, "b", 0x90000, 200)});
  CHECK(sim.memoryMap(2).empty());
  CHECK(sim.memoryMap(-1).empty());
  CHECK(sim.memoryMap(1472).empty());
  // Tile 0 is the busiest; u lies inside t and counts once.
  CHECK(sim.report().maxTile == 0);
  CHECK(sim.report().maxTileBytes == 1000 + 64 + 32 + 96 + 200);
}

TEST_CASE("ipu21 report as text and JSON, and refused programs") {
  Program p = makeProgram("rep\"ort");
  int32_t t = addTensor(p, "t", ElemType::F32, {8}, 0, 8);
  int32_t fill = addCodelet(p, "fill", CodeletKind::Fill, ElemType::F32, ElemType::F32);
  int32_t cs = addComputeSet(p, "fill \"all\"", {vertex(fill, tiles(0, 1), {tensorField(t, 0, 8)},
                                                        fillParams(8, 1.0))});
  p.main.body = {executeStep(cs), syncStep()};
  Simulator sim(p, ipu21Facts());
  std::string error;
  REQUIRE(sim.run(error));
  std::string text = formatReport(sim.report(), p, false);
  CHECK(text.find("placeholder") != std::string::npos);
  CHECK(text.find("total cycles: 615") != std::string::npos); // 11 + 32/8 + 600
  std::string json = formatReport(sim.report(), p, true);
  CHECK(json.find("\"program\": \"rep\\\"ort\"") != std::string::npos);
  CHECK(json.find("\"syncCyclesPlaceholder\": true") != std::string::npos);
  CHECK(json.find("{\"name\": \"fill \\\"all\\\"\", \"kind\": \"execute\", \"runs\": 1, "
                  "\"cycles\": 15") != std::string::npos);

  SECTION("a broken program") {
    Program bad = p;
    bad.computeSets[0].vertices[0].fields[0].count = 9;
    Simulator s(bad, ipu21Facts());
    CHECK_FALSE(s.valid(error));
    CHECK_FALSE(s.run(error));
    CHECK(error == "compute set 0 'fill \"all\"' vertex 0 field 0: 9 elements; the params say 8");
  }
  SECTION("FP8 on the AMP needs ipu21") {
    Program f8 = makeProgram("f8", ipu2Facts());
    int32_t a = addTensor(f8, "a", ElemType::F8E4M3, {16}, 0, 16);
    int32_t o = addTensor(f8, "o", ElemType::F16, {1}, 0, 1, 0x90000);
    int32_t amp = addCodelet(f8, "amp8", CodeletKind::AmpMatmul, ElemType::F8E4M3, ElemType::F16);
    int32_t c = addComputeSet(f8, "mm", {vertex(amp, tiles(0, 1),
                                                {tensorField(a, 0, 16), tensorField(a, 0, 16),
                                                 tensorField(o, 0, 1)},
                                                {1, 1, 16, 0})});
    f8.main.body = {executeStep(c)};
    CHECK(Simulator(f8, ipu21Facts()).valid(error));
    CHECK_FALSE(Simulator(f8, ipu2Facts()).valid(error));
    CHECK(error.find("FP8 AMP") != std::string::npos);
  }
  SECTION("too many bytes of values") {
    SimOptions small;
    small.maxBytes = 16;
    Simulator s(p, ipu21Facts(), small);
    CHECK_FALSE(s.valid(error));
    CHECK(error.find("the program's values need 32 bytes") != std::string::npos);
  }
  SECTION("tensor access by name") {
    std::vector<double> v;
    CHECK_FALSE(sim.setTensor("t", {1, 2}, error));
    CHECK(error == "tensor 't' has 8 elements, not 2");
    CHECK_FALSE(sim.getTensor("nope", v, error));
    CHECK(error == "no tensor named 'nope'");
  }
}
