// The exchange schedule (ExchangeSchedule.h): the colouring against an
// independent pairwise check of the round rules written here, its cycles
// against the bound, the cases the bound cannot be reached in, the packets,
// and a program whose schedule breaks a rule refused by the reader and the
// simulator.
#include "IPU21Builder.h"

#include "synpl/Target/IPU21/ExchangeSchedule.h"
#include "synpl/Target/IPU21/ProgramFile.h"
#include "synpl/Target/IPU21/Simulator.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>

using namespace ipu21test;

namespace {

Transfer transfer(int64_t src, std::vector<int64_t> dst, int64_t bytes, int64_t bus = 2) {
  Transfer t;
  t.src = src;
  std::sort(dst.begin(), dst.end());
  t.dst = dst;
  std::set<int64_t> in(dst.begin(), dst.end());
  for (int64_t d : dst) {
    int64_t first = d - d % bus;
    bool whole = true;
    for (int64_t u = first; u < first + bus; ++u)
      whole = whole && in.count(u);
    t.shared.push_back(whole);
  }
  t.bytes = bytes;
  return t;
}

/// The round rules, checked pair by pair (no code shared with
/// checkSchedule): no two transfers of one round share a source; the
/// receive slots of one tile in one round (1 for a bus-shared transfer,
/// `bus` otherwise) add up to at most `bus`.
bool obeysRules(const std::vector<Transfer> &ts, const std::vector<int32_t> &rounds,
                int64_t bus = 2) {
  if (rounds.size() != ts.size())
    return false;
  std::map<std::pair<int32_t, int64_t>, int64_t> slots;
  for (size_t i = 0; i < ts.size(); ++i) {
    if (rounds[i] < 0)
      return false;
    for (size_t j = 0; j < i; ++j)
      if (rounds[i] == rounds[j] && ts[i].src == ts[j].src)
        return false;
    for (size_t k = 0; k < ts[i].dst.size(); ++k)
      if ((slots[{rounds[i], ts[i].dst[k]}] += ts[i].shared[k] ? 1 : bus) > bus)
        return false;
  }
  return true;
}

int64_t rounds(const std::vector<int32_t> &r) {
  return r.empty() ? 0 : *std::max_element(r.begin(), r.end()) + 1;
}

} // namespace

TEST_CASE("ipu21 exchange schedule: random exchanges obey the round rules") {
  const Facts f = ipu21Facts();
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<Transfer> ts;
    int tiles = 2 + int(rng() % 30), n = 1 + int(rng() % 120);
    for (int i = 0; i < n; ++i) {
      std::vector<int64_t> dst;
      int fan = 1 + int(rng() % (rng() % 4 == 0 ? 8 : 2));
      for (int k = 0; k < fan; ++k) {
        int64_t d = int64_t(rng() % uint32_t(tiles));
        if (std::find(dst.begin(), dst.end(), d) == dst.end())
          dst.push_back(d);
      }
      ts.push_back(transfer(int64_t(rng() % uint32_t(tiles)), dst, 4 + 4 * int64_t(rng() % 64)));
    }
    std::vector<int32_t> r = colourTransfers(ts, f.tilesPerExchangeBus);
    INFO("trial " << trial);
    CHECK(obeysRules(ts, r));
    CHECK(checkSchedule(ts, r, f.tilesPerExchangeBus).empty());
    CHECK(scheduleCycles(ts, r, f) >= lowerBoundCycles(ts, f));
    CHECK(rounds(r) <= int64_t(ts.size()));
  }
}

TEST_CASE("ipu21 exchange schedule: all-to-all of equal transfers reaches the bound") {
  // Every tile of 8 sends 400 bytes to each of 8 (itself too): 8 rounds of
  // 100 cycles, the most any tile sends or receives.
  const Facts f = ipu21Facts();
  std::vector<Transfer> ts;
  for (int64_t s = 0; s < 8; ++s)
    for (int64_t d = 0; d < 8; ++d)
      ts.push_back(transfer(s, {2 * d + 1}, 400)); // odd tiles: no shared bus
  std::vector<int32_t> r = colourTransfers(ts, f.tilesPerExchangeBus);
  CHECK(obeysRules(ts, r));
  CHECK(rounds(r) == 8);
  CHECK(lowerBoundCycles(ts, f) == 800);
  CHECK(scheduleCycles(ts, r, f) == 800);
}

TEST_CASE("ipu21 exchange schedule: fan-out where the bound cannot be reached") {
  const Facts f = ipu21Facts();
  SECTION("three broadcasts, each pair of which shares a receiver") {
    // 0 -> {5, 7}, 1 -> {7, 9}, 2 -> {9, 5}: every receiver takes 2 x 400
    // bytes (the bound, 200 cycles), but the three clash pairwise: 3 rounds.
    std::vector<Transfer> ts = {transfer(0, {5, 7}, 400), transfer(1, {7, 9}, 400),
                                transfer(2, {5, 9}, 400)};
    std::vector<int32_t> r = colourTransfers(ts, f.tilesPerExchangeBus);
    CHECK(obeysRules(ts, r));
    CHECK(lowerBoundCycles(ts, f) == 200);
    CHECK(scheduleCycles(ts, r, f) == 300);
  }
  SECTION("two broadcasts to one pair share a round; to tiles of two buses they do not") {
    std::vector<Transfer> pair = {transfer(0, {2, 3}, 400), transfer(1, {2, 3}, 400)};
    std::vector<int32_t> r = colourTransfers(pair, f.tilesPerExchangeBus);
    CHECK(rounds(r) == 1);
    CHECK(scheduleCycles(pair, r, f) == 100);
    std::vector<Transfer> apart = {transfer(0, {3, 4}, 400), transfer(1, {3, 4}, 400)};
    r = colourTransfers(apart, f.tilesPerExchangeBus);
    CHECK(rounds(r) == 2);
    CHECK(scheduleCycles(apart, r, f) == 200);
    CHECK(lowerBoundCycles(apart, f) == 200);
  }
}

TEST_CASE("ipu21 exchange schedule: a round lasts as long as its longest transfer") {
  const Facts f = ipu21Facts();
  // Tile 0 sends 800 bytes to tile 1 and 8 to tile 3; tile 2 sends 800 to
  // tile 3. The long ones share a round (200 cycles), the short one takes a
  // round of 2 cycles: not 200 + 200.
  std::vector<Transfer> ts = {transfer(0, {1}, 800), transfer(0, {3}, 8), transfer(2, {3}, 800)};
  std::vector<int32_t> r = colourTransfers(ts, f.tilesPerExchangeBus);
  CHECK(obeysRules(ts, r));
  CHECK(r[0] == r[2]);
  CHECK(scheduleCycles(ts, r, f) == 202);
}

TEST_CASE("ipu21 exchange schedule: checkSchedule names the broken rule") {
  const int64_t bus = 2;
  std::vector<Transfer> ts = {transfer(0, {5}, 40), transfer(0, {7}, 40), transfer(1, {5}, 40),
                              transfer(2, {8, 9}, 40), transfer(3, {8, 9}, 40),
                              transfer(4, {9}, 40)};
  CHECK(checkSchedule(ts, {0, 1, 1, 0, 0, 1}, bus).empty());
  CHECK(checkSchedule(ts, {0, 0, 1, 0, 0, 1}, bus) == "round 0: tile 0 sends transfers 0 and 1");
  CHECK(checkSchedule(ts, {0, 1, 0, 0, 0, 1}, bus) ==
        "round 0: tile 5 receives more than its exchange bus holds (transfers 0 and 2)");
  // Two pair broadcasts fit tile 9's bus; a third transfer for it alone does not.
  CHECK(checkSchedule(ts, {0, 1, 1, 0, 0, 0}, bus) ==
        "round 0: tile 9 receives more than its exchange bus holds (transfers 4 and 5)");
  CHECK(checkSchedule(ts, {0, 1, 1, 0, -1, 1}, bus) ==
        "transfer 4 has round -1; the rounds are 0 to 5");
  CHECK(checkSchedule(ts, {0, 1, 1, 0, 6, 1}, bus) ==
        "transfer 4 has round 6; the rounds are 0 to 5");
  CHECK(checkSchedule(ts, {0, 1}, bus) == "the schedule places 2 transfers; the exchange has 6");
}

TEST_CASE("ipu21 exchange schedule: sends cut into transfers and packets") {
  const Facts f = ipu21Facts();
  Program p = makeProgram("cut");
  // 96 elements of f32: 48 on tile 0, 48 on tile 1 (addTensor spreads them).
  int32_t a = addTensor(p, "a", ElemType::F32, {96}, 0, 48);
  int32_t b = addTensor(p, "b", ElemType::F32, {96}, 4, 24, 0x81000); // tiles 4..7
  int32_t land = addBuffer(p, "land", ElemType::F32, tiles(10, 12), 96);
  int32_t x = addExchange(p, "x",
                          {{tensorEnd(a, 0), tensorEnd(b, 0), 96},
                           {tensorEnd(a, 0), bufferEnd(land, 0, tiles(10, 12)), 96}});
  p.main.body = {copyStep(x)};
  std::string error;
  INFO(error);
  REQUIRE(checkProgram(p, error, CheckSchedules::No));
  std::vector<Transfer> ts = exchangeTransfers(p, p.exchanges[size_t(x)], 0, f);
  // Whole, the first send is 0->4, 0->5, 1->6, 1->7 (96 bytes each), the
  // second 0->{10,11} and 1->{10,11} (192 each, shared by the pair). Tile 0
  // sends 384 bytes: a packet is ceil(384 / kPacketsPerBusiestTile) bytes
  // rounded up to a word, at least kMinPacketBytes, and every transfer is
  // cut into such packets.
  const int64_t packet = std::max<int64_t>(kMinPacketBytes, 4 * ((384 / kPacketsPerBusiestTile + 3) / 4));
  CHECK(packet == 32);
  int64_t sent0 = 0, total = 0;
  std::set<std::vector<int64_t>> reached;
  for (const Transfer &t : ts) {
    CHECK(t.bytes <= packet);
    CHECK(t.bytes % 4 == 0);
    sent0 += t.src == 0 ? t.bytes : 0;
    total += t.bytes;
    reached.insert(t.dst);
  }
  CHECK(sent0 == 384);
  CHECK(total == 768);
  CHECK(reached == std::set<std::vector<int64_t>>{{4}, {5}, {6}, {7}, {10, 11}});
  CHECK(lowerBoundCycles(ts, f) == 384 / 4);
}

TEST_CASE("ipu21 exchange schedule: programs carry it, a broken one is refused") {
  Program p = makeProgram("sched");
  int32_t a = addTensor(p, "a", ElemType::F32, {8}, 0, 4); // tiles 0, 1
  int32_t land = addBuffer(p, "land", ElemType::F32, tileList({5}), 8);
  int32_t x = addExchange(p, "x", {{tensorEnd(a, 0), bufferEnd(land, 0, tileList({5})), 8}});
  p.main.body = {copyStep(x)};
  std::string error;
  CHECK_FALSE(checkProgram(p, error));
  CHECK(error == "exchange 0 'x' has no schedule (scheduleExchanges writes one)");
  scheduled(p);
  REQUIRE(p.exchanges[0].schedule.size() == 1);
  // Tiles 0 and 1 both send to tile 5, which takes one at a time.
  const std::vector<int32_t> good = p.exchanges[0].schedule[0];
  REQUIRE(good.size() == 2);
  CHECK(good[0] != good[1]);
  CHECK(checkProgram(p, error));

  p.exchanges[0].schedule[0] = {0, 0};
  CHECK_FALSE(checkProgram(p, error));
  CHECK(error == "exchange 0 'x': schedule: round 0: tile 5 receives more than its exchange bus "
                 "holds (transfers 0 and 1)");
  // A file holding it is refused as it is read; the simulator refuses it too.
  std::string bytes = writeProgram(p);
  Program q;
  CHECK_FALSE(readProgram(bytes.data(), bytes.size(), q, error));
  CHECK(error.find("tile 5 receives more") != std::string::npos);
  Simulator sim(p, ipu21Facts());
  CHECK_FALSE(sim.valid(error));

  p.exchanges[0].schedule = {good, good};
  CHECK_FALSE(checkProgram(p, error));
  CHECK(error == "exchange 0 'x': its schedule has rounds for 2 runs, not 1 (one per run of the "
                 "Repeat around an advancing send, else one)");
}

TEST_CASE("ipu21 exchange schedule: an advancing exchange has one per run") {
  Program p = makeProgram("advance");
  int32_t a = addTensor(p, "a", ElemType::F32, {64}, 0, 16); // tiles 0..3
  int32_t land = addBuffer(p, "land", ElemType::F32, tileList({9}), 16);
  Send s{tensorEnd(a, 0), bufferEnd(land, 0, tileList({9})), 16};
  s.advance = 16;
  int32_t x = addExchange(p, "x", {s});
  p.main.body = {repeatStep(4, {copyStep(x)})};
  scheduled(p);
  REQUIRE(p.exchanges[0].schedule.size() == 4);
  // Run k reads a[16k, 16k + 16), all of it on tile k.
  for (int64_t run = 0; run < 4; ++run) {
    std::vector<Transfer> ts = exchangeTransfers(p, p.exchanges[0], run, ipu21Facts());
    REQUIRE_FALSE(ts.empty());
    for (const Transfer &t : ts)
      CHECK(t.src == run);
  }
  Simulator sim(p, ipu21Facts());
  std::string error;
  REQUIRE(sim.valid(error));
  REQUIRE(sim.run(error));
  CHECK(sim.report().phases[0].runs == 4);
  CHECK(sim.report().phases[0].cycles == 4 * 16);
  CHECK(sim.report().phases[0].boundCycles == 4 * 16);
}
