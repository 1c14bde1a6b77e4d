// The ipu21 simulator's cycle counts: the AMP against the measured
// 331 + 4·N fit, the other vertices and the exchange rules against formulas
// computed here from the Facts fields.
#include "IPU21Builder.h"

#include "synpl/Target/IPU21/ProgramFile.h"
#include "synpl/Target/IPU21/Simulator.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <string>

using namespace ipu21test;

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// One AMP matmul vertex [m,k]×[k,n] on each tile of [0, tileCount), on
/// buffers; returns the cycles of the one Execute step.
int64_t ampCycles(int64_t m, int64_t k, int64_t n, ElemType in, ElemType out, int64_t tileCount,
                  bool values, double *utilisation = nullptr) {
  Program p = makeProgram("amp");
  TileSet on = tiles(0, tileCount);
  int32_t a = addBuffer(p, "in", in, on, m * k, 0x80000);
  int32_t w = addBuffer(p, "weights", in, on, k * n, 0xA0000);
  int32_t o = addBuffer(p, "out", out, on, m * n, 0xB0000);
  int32_t c = addCodelet(p, "amp", CodeletKind::AmpMatmul, in, out);
  int32_t cs = addComputeSet(
      p, "matmul",
      {vertex(c, on, {bufferField(a, 0, m * k), bufferField(w, 0, k * n), bufferField(o, 0, m * n)},
              {m, n, k, 0})});
  p.main.body = {executeStep(cs)};
  SimOptions options;
  options.values = values;
  Simulator sim(p, ipu21Facts(), options);
  std::string error;
  REQUIRE(sim.run(error));
  const SimReport &r = sim.report();
  REQUIRE(r.phases.size() == 1);
  CHECK(r.phases[0].name == "matmul");
  CHECK(r.phases[0].kind == StepKind::Execute);
  CHECK(r.phases[0].runs == 1);
  CHECK(r.totalCycles == r.phases[0].cycles);
  if (utilisation)
    *utilisation = r.phases[0].utilisation;
  return r.phases[0].cycles;
}

/// The Execute cycles of `vertices` (a compute set) on the ipu21.
int64_t computeSetCycles(Program p, std::vector<Vertex> vertices, double *utilisation = nullptr) {
  int32_t cs = addComputeSet(p, "cs", std::move(vertices));
  p.main.body = {executeStep(cs)};
  Simulator sim(p, ipu21Facts());
  std::string error;
  REQUIRE(sim.run(error));
  if (utilisation)
    *utilisation = sim.report().phases.at(0).utilisation;
  return sim.report().phases.at(0).cycles;
}

/// The cycles of one exchange of `sends` in `p`.
int64_t exchangeCycles(Program p, std::vector<Send> sends) {
  int32_t x = addExchange(p, "x", std::move(sends));
  p.main.body = {copyStep(x)};
  Simulator sim(scheduled(p), ipu21Facts());
  std::string error;
  REQUIRE(sim.valid(error));
  REQUIRE(sim.run(error));
  REQUIRE(sim.report().phases.size() == 1);
  CHECK(sim.report().phases[0].kind == StepKind::Copy);
  return sim.report().phases[0].cycles;
}

} // namespace

TEST_CASE("ipu21 AMP matmul [N,16]x[16,16] on all 1472 tiles costs 331 + 4N cycles") {
  // The target: the all-tile FP16 ConvPartial1x1 microbenchmark's fit.
  for (int64_t n = 16; n <= 2048; n *= 2) {
    double utilisation = 0;
    int64_t cycles = ampCycles(n, 16, 16, ElemType::F16, ElemType::F16, 1472, false, &utilisation);
    double fit = 331.0 + 4.0 * double(n);
    INFO("N = " << n << ": " << cycles << " cycles, the fit " << fit);
    CHECK(std::fabs(double(cycles) - fit) <= 0.1 * fit);
    CHECK(cycles == int64_t(fit)); // exact by construction
    CHECK(utilisation == Approx(1.0));
  }
  // Keeping the values costs the same cycles.
  CHECK(ampCycles(64, 16, 16, ElemType::F16, ElemType::F16, 1472, true) == 331 + 4 * 64);
}

TEST_CASE("ipu21 AMP cost with several weight blocks follows the Facts fields") {
  const Facts f = ipu21Facts();
  SECTION("f16, k = 32, n = 48: six 16x16 blocks") {
    int64_t m = 100, k = 32, n = 48;
    int64_t blocks = ceilDiv(k, f.ampInChansF16) * ceilDiv(n, f.ampOutChans);
    CHECK(blocks == 6);
    int64_t expected = f.ampCallOverheadCycles + (blocks - 1) * f.ampBlockReloadCycles +
                       blocks * f.ampCyclesPer16x16Row * m;
    CHECK(ampCycles(m, k, n, ElemType::F16, ElemType::F16, 4, false) == expected);
    CHECK(ampCycles(m, k, n, ElemType::F16, ElemType::F32, 4, false) == expected);
    CHECK(ampCycles(m, k, n, ElemType::F8E4M3, ElemType::F16, 4, false) == expected);
  }
  SECTION("f32, k = 20, n = 20: 8-channel passes at the f32 MAC rate") {
    int64_t m = 10, k = 20, n = 20;
    int64_t blocks = ceilDiv(k, f.ampInChansF32) * ceilDiv(n, f.ampOutChans);
    CHECK(blocks == 6);
    int64_t rowCycles = f.ampInChansF32 * f.ampOutChans / f.ampF32MacsPerCycle;
    CHECK(rowCycles == 8);
    int64_t expected = f.ampCallOverheadCycles + (blocks - 1) * f.ampBlockReloadCycles +
                       blocks * rowCycles * m;
    CHECK(ampCycles(m, k, n, ElemType::F32, ElemType::F32, 4, false) == expected);
  }
}

TEST_CASE("ipu21 ReduceAdd, Copy and Fill vertex costs") {
  const Facts f = ipu21Facts();
  Program p = makeProgram();
  int32_t part = addBuffer(p, "partials", ElemType::F32, tiles(0, 2), 400);
  int32_t out32 = addBuffer(p, "out32", ElemType::F32, tiles(0, 2), 100, 0xA0000);
  int32_t out16 = addBuffer(p, "out16", ElemType::F16, tiles(0, 2), 100, 0xB0000);
  const CodeletKind reduce = CodeletKind::ReduceAdd;
  int32_t reduce32 = addCodelet(p, "reduce32", reduce, ElemType::F32, ElemType::F32);
  int32_t reduce16 = addCodelet(p, "reduce16", reduce, ElemType::F32, ElemType::F16);
  int32_t copy = addCodelet(p, "copy", CodeletKind::Copy, ElemType::F32, ElemType::F16);
  int32_t fill = addCodelet(p, "fill", CodeletKind::Fill, ElemType::F16, ElemType::F16);

  // ReduceAdd: supervisor overhead + workers × ceil(p·n / (lanes × workers)).
  auto reduceCycles = [&](ElemType out, int64_t pp, int64_t n) {
    int64_t lanes = f.vectorBytes / elemBytes(out);
    return f.supervisorOverheadCycles + f.workers * ceilDiv(pp * n, lanes * f.workers);
  };
  CHECK(computeSetCycles(p, {vertex(reduce32, tiles(0, 1),
                                    {bufferField(part, 0, 400), bufferField(out32, 0, 100)},
                                    {4, 100, 0})}) == reduceCycles(ElemType::F32, 4, 100));
  CHECK(reduceCycles(ElemType::F32, 4, 100) == 11 + 6 * 34);
  CHECK(computeSetCycles(p, {vertex(reduce16, tiles(0, 1),
                                    {bufferField(part, 0, 400), bufferField(out16, 0, 100)},
                                    {4, 100, 0})}) == reduceCycles(ElemType::F16, 4, 100));
  // Copy and Fill: supervisor overhead + bytes at the memcpy rate (a
  // converting copy moves the wider element).
  CHECK(computeSetCycles(p, {vertex(copy, tiles(0, 1),
                                    {bufferField(out32, 0, 100), bufferField(out16, 0, 100)},
                                    {100})}) ==
        f.supervisorOverheadCycles + ceilDiv(100 * 4, f.memcpyBytesPerCycle));
  CHECK(computeSetCycles(p, {vertex(fill, tiles(0, 1), {bufferField(out16, 0, 100)},
                                    fillParams(100, 1.0))}) ==
        f.supervisorOverheadCycles + ceilDiv(100 * 2, f.memcpyBytesPerCycle));

  SECTION("a tile sums its vertices; the compute set costs the slowest tile") {
    int64_t fillCost = f.supervisorOverheadCycles + ceilDiv(100 * 2, f.memcpyBytesPerCycle);
    int64_t copyCost = f.supervisorOverheadCycles + ceilDiv(100 * 4, f.memcpyBytesPerCycle);
    double utilisation = 0;
    // Tile 0 runs the fill and the copy, tile 1 only the fill.
    int64_t cycles = computeSetCycles(
        p,
        {vertex(fill, tiles(0, 2), {bufferField(out16, 0, 50)}, fillParams(50, 1.0)),
         vertex(copy, tiles(0, 1), {bufferField(out32, 0, 100), bufferField(out16, 0, 100)},
                {100}),
         vertex(fill, tiles(0, 2), {bufferField(out16, 50, 50)}, fillParams(50, 2.0))},
        &utilisation);
    int64_t half = f.supervisorOverheadCycles + ceilDiv(50 * 2, f.memcpyBytesPerCycle);
    CHECK(cycles == 2 * half + copyCost);
    CHECK(utilisation == Approx(double(cycles + 2 * half) / (1472.0 * double(cycles))));
    (void)fillCost;
  }
}

TEST_CASE("ipu21 exchange cycles: fan-out, pair broadcast, the busiest tile") {
  const Facts f = ipu21Facts();
  REQUIRE(f.exchangeBytesPerCycle == 4);
  REQUIRE(f.tilesPerExchangeBus == 2);
  Program p = makeProgram("exchange");
  int32_t a = addTensor(p, "a", ElemType::F32, {100}, 0, 100);  // 400 bytes on tile 0
  int32_t b = addTensor(p, "b", ElemType::F32, {200}, 1, 200, 0x81000); // 800 bytes on tile 1
  int32_t land = addBuffer(p, "land", ElemType::F32, tiles(0, 64), 300);

  SECTION("a single source to one tile") {
    CHECK(exchangeCycles(p, {{tensorEnd(a, 0), bufferEnd(land, 0, tileList({5})), 100}}) ==
          400 / f.exchangeBytesPerCycle);
  }
  SECTION("fan-out to 8 tiles: the source pays once") {
    // Odd tiles: no two share a bus, so each receiver pays all 400 bytes;
    // the source pays 400 once (not 8 × 400).
    CHECK(exchangeCycles(p, {{tensorEnd(a, 0),
                              bufferEnd(land, 0, tileList({1, 3, 5, 7, 9, 11, 13, 15})), 100}}) ==
          100);
    // Four whole pairs: each receiver pays half, the source still 400.
    CHECK(exchangeCycles(p, {{tensorEnd(a, 0), bufferEnd(land, 0, tiles(16, 24)), 100}}) == 100);
  }
  SECTION("pair broadcast: tiles 2 and 3 receive the same sends, each pays half") {
    int32_t c = addTensor(p, "c", ElemType::F32, {100}, 1, 100, 0x82000); // 400 bytes on tile 1
    // Tiles 0 and 1 each send 400 bytes to both tiles of the pair {2, 3}:
    // each receives 800 bytes at the doubled rate, paying 400.
    CHECK(exchangeCycles(p, {{tensorEnd(a, 0), bufferEnd(land, 0, tiles(2, 4)), 100},
                             {tensorEnd(c, 0), bufferEnd(land, 100, tiles(2, 4)), 100}}) ==
          400 / f.exchangeBytesPerCycle);
    // Tiles 3 and 4 sit on different buses: each pays all 800 bytes.
    CHECK(exchangeCycles(p, {{tensorEnd(a, 0), bufferEnd(land, 0, tiles(3, 5)), 100},
                             {tensorEnd(c, 0), bufferEnd(land, 100, tiles(3, 5)), 100}}) ==
          800 / f.exchangeBytesPerCycle);
  }
  SECTION("the exchange costs its busiest tile, sending or receiving") {
    // Tile 0 sends 400 bytes, tile 1 sends 800: the step costs tile 1's.
    CHECK(exchangeCycles(p, {{tensorEnd(a, 0), bufferEnd(land, 0, tileList({5})), 100},
                             {tensorEnd(b, 0), bufferEnd(land, 0, tileList({7})), 200}}) ==
          800 / f.exchangeBytesPerCycle);
    // Three tiles send 400 bytes each to one tile: it receives 1200.
    int32_t spread = addTensor(p, "spread", ElemType::F32, {300}, 20, 100, 0x83000);
    int32_t gathered = addTensor(p, "gathered", ElemType::F32, {300}, 30, 300, 0x84000);
    CHECK(exchangeCycles(p, {{tensorEnd(spread, 0), tensorEnd(gathered, 0), 300}}) ==
          1200 / f.exchangeBytesPerCycle);
    // A rounded-up cycle: 6 bytes at 4 bytes per cycle.
    int32_t h = addTensor(p, "h", ElemType::F16, {3}, 40, 3, 0x85000);
    int32_t hl = addBuffer(p, "hl", ElemType::F16, tileList({41}), 3, 0xA0000);
    CHECK(exchangeCycles(p, {{tensorEnd(h, 0), bufferEnd(hl, 0, tileList({41})), 3}}) == 2);
  }
}

TEST_CASE("ipu21 Repeat charges its body every time, as do Sync and streams") {
  const Facts f = ipu21Facts();
  Program p = makeProgram("repeat");
  int32_t t = addTensor(p, "t", ElemType::F32, {64}, 0, 64);
  int32_t fill = addCodelet(p, "fill", CodeletKind::Fill, ElemType::F32, ElemType::F32);
  int32_t cs = addComputeSet(p, "fill", {vertex(fill, tiles(0, 1), {tensorField(t, 0, 64)},
                                                fillParams(64, 3.0))});
  int64_t once = f.supervisorOverheadCycles + ceilDiv(64 * 4, f.memcpyBytesPerCycle);
  p.main.body = {repeatStep(3, {executeStep(cs)}),
                 repeatStep(2, {repeatStep(4, {executeStep(cs)}), syncStep()}),
                 streamStep(StepKind::StreamOut, t, "out")};
  Simulator sim(p, f, SimOptions{false});
  std::string error;
  REQUIRE(sim.run(error));
  const SimReport &r = sim.report();
  REQUIRE(r.phases.size() == 3);
  CHECK(r.phases[0].name == "fill");
  CHECK(r.phases[0].runs == 3 + 2 * 4);
  CHECK(r.phases[0].cycles == 11 * once);
  CHECK(r.phases[1].name == "sync");
  CHECK(r.phases[1].runs == 2);
  CHECK(r.phases[1].cycles == 2 * f.syncCycles);
  CHECK(r.syncs == 2);
  CHECK(r.phases[2].name == "stream out");
  CHECK(r.phases[2].kind == StepKind::StreamOut);
  // 256 bytes over the host link at the target's clock.
  int64_t stream = int64_t(std::ceil(256.0 * double(p.target.clockHz) / f.hostBytesPerSecond));
  CHECK(r.phases[2].cycles == stream);
  CHECK(r.totalCycles == 11 * once + 2 * f.syncCycles + stream);
  // A second run of main adds the same again.
  REQUIRE(sim.run(error));
  CHECK(sim.report().runs == 2);
  CHECK(sim.report().totalCycles == 2 * (11 * once + 2 * f.syncCycles + stream));
  CHECK(sim.report().phases[0].runs == 22);
}

TEST_CASE("ipu21 costing takes time in what a compute set or exchange touches, not the tiles") {
  // The fuzzer's finding (test/fuzz/regressions/ipu21): a 60 KB program file
  // of 5000 empty compute sets for a target of 2^20 tiles took the simulator
  // over a minute to set up, as each compute set and exchange was costed
  // over every tile of the target.
  const Facts f = ipu21Facts();
  Program p = makeProgram("many");
  p.target.tiles = kMaxTiles;
  const int64_t last = kMaxTiles - 1;
  int32_t a = addBuffer(p, "a", ElemType::F32, tileList({0, last}), 64, 0x80000);
  int32_t fill = addCodelet(p, "fill", CodeletKind::Fill, ElemType::F32, ElemType::F32);
  // Tile 0 runs one vertex, the last tile two: the compute set costs two.
  int32_t cs = addComputeSet(
      p, "fill",
      {vertex(fill, tileList({0, last}), {bufferField(a, 0, 64)}, fillParams(64, 1.0)),
       vertex(fill, tileList({last}), {bufferField(a, 0, 64)}, fillParams(64, 2.0))});
  int32_t x = addExchange(
      p, "x", {{bufferEnd(a, 0, tileList({0})), bufferEnd(a, 0, tileList({last})), 64}});
  for (int i = 0; i < 4000; ++i) {
    addComputeSet(p, "empty", {});
    addExchange(p, "empty", {});
  }
  p.main.body = {executeStep(cs), copyStep(x), executeStep(cs + 1), copyStep(x + 1)};
  scheduled(p);
  const auto start = std::chrono::steady_clock::now();
  Simulator sim(p, f, SimOptions{false});
  std::string error;
  REQUIRE(sim.valid(error));
  REQUIRE(sim.run(error));
  // Well under a second; the old costing took minutes under the sanitizers.
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));

  const SimReport &r = sim.report();
  REQUIRE(r.phases.size() == 4);
  int64_t once = f.supervisorOverheadCycles + ceilDiv(64 * 4, f.memcpyBytesPerCycle);
  CHECK(r.phases[0].cycles == 2 * once);
  CHECK(r.phases[0].utilisation == Approx(3.0 * once / (double(kMaxTiles) * 2 * once)));
  // The send costs what it costs between the first and last tile of the chip.
  Program chip = makeProgram("chip");
  int32_t b = addBuffer(chip, "a", ElemType::F32, tileList({0, f.tiles - 1}), 64, 0x80000);
  CHECK(r.phases[1].cycles ==
        exchangeCycles(chip, {{bufferEnd(b, 0, tileList({0})),
                               bufferEnd(b, 0, tileList({f.tiles - 1})), 64}}));
  CHECK(r.phases[1].cycles > 0);
  CHECK(r.phases[2].cycles == 0);
  CHECK(r.phases[3].cycles == 0);
}
