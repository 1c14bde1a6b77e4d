//===- RuntimeDataParallelTest.cpp - Several ranks' plans in one process ---===//
//
// The data- and tensor-parallel half of the runtime that one process can
// check: the self communicator's collectives (the identity of a world of
// one), the shard arithmetic (which positions of the epoch's order rank r
// of N reads at step i, the steps of an epoch with and without drop_last),
// the table checks of the collective records and of split slots, a plan
// with a collective run by the executor alone, the blocks every rank's
// inits give a split slot (against a one-process run of the full tensors)
// and the refusal of a tensor-parallel plan run alone. The same plans run
// on several ranks under mpirun in RuntimeMpiTest.cpp. Linked with
// SynplRuntime only (synpl-runtime-dp-tests).
//
//===----------------------------------------------------------------------===//
#include "synpl/Runtime/PlanFormat.h"
#include "synpl/Runtime/Runtime.h"

#include "../../lib/Runtime/Comm.h"
#include "../../lib/Runtime/ExecutorImpl.h"
#include "PlanTables.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

using namespace synpl::rt;
using synpl::test::Tables;

namespace {

std::string lastError() { return synpl_rt_last_error(); }

std::string tempDir() {
  char tmpl[] = "/tmp/synpl-dp-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  return tmpl;
}

/// synpl_rt_main on `t` (the self world: SYNPL_COMM=self whatever the
/// environment) with `args` after the program's name.
int run(Tables &t, std::vector<const char *> args) {
  ::setenv("SYNPL_COMM", "self", 1);
  args.insert(args.begin(), "dp_prog");
  int rc = synpl::test::runMain(t, args);
  ::unsetenv("SYNPL_COMM");
  return rc;
}

/// The table check's message for `what`.
std::string corrupt(const char *what) {
  return std::string("the program's plan tables are corrupt: ") + what;
}

} // namespace

TEST_CASE("comm: the self world's collectives are the identity", "[runtime][comm]") {
  std::unique_ptr<Comm> c = selfComm();
  REQUIRE(c->rank() == 0);
  REQUIRE(c->size() == 1);
  CHECK(std::string(c->backend()) == "self");

  float f[3] = {1.5f, -2.0f, 7.25f};
  for (int64_t reduce : {SYNPL_PLAN_REDUCE_SUM, SYNPL_PLAN_REDUCE_MEAN, SYNPL_PLAN_REDUCE_MAX,
                         SYNPL_PLAN_REDUCE_MIN}) {
    INFO("reduce " << reduce);
    REQUIRE(c->allReduce(f, 3, SYNPL_PLAN_F32, reduce) == SYNPL_RT_OK);
    CHECK(f[0] == 1.5f);
    CHECK(f[1] == -2.0f);
    CHECK(f[2] == 7.25f);
  }
  double d[2] = {0.1, 3.0};
  int32_t i32[2] = {-7, 9};
  int64_t i64[2] = {INT64_MAX, -3};
  REQUIRE(c->allReduce(d, 2, SYNPL_PLAN_F64, SYNPL_PLAN_REDUCE_MEAN) == SYNPL_RT_OK);
  REQUIRE(c->allReduce(i32, 2, SYNPL_PLAN_I32, SYNPL_PLAN_REDUCE_MEAN) == SYNPL_RT_OK);
  REQUIRE(c->allReduce(i64, 2, SYNPL_PLAN_I64, SYNPL_PLAN_REDUCE_SUM) == SYNPL_RT_OK);
  CHECK(d[0] == 0.1);
  CHECK(i32[0] == -7);
  CHECK(i64[0] == INT64_MAX);

  SECTION("a started all_reduce completes in its wait") {
    CommRequest req;
    REQUIRE(c->startAllReduce(f, 3, SYNPL_PLAN_F32, SYNPL_PLAN_REDUCE_MEAN, req) ==
            SYNPL_RT_OK);
    bool done = false;
    REQUIRE(c->test(req, done) == SYNPL_RT_OK);
    CHECK(done);
    REQUIRE(c->wait(req) == SYNPL_RT_OK);
    CHECK(f[2] == 7.25f);
    CHECK(c->wait(req) != SYNPL_RT_OK); // once
  }
  SECTION("a gather of one is a copy, a scatter of one too") {
    int32_t src[2] = {4, 5}, dst[2] = {0, 0};
    REQUIRE(c->allGather(src, dst, sizeof src) == SYNPL_RT_OK);
    CHECK(dst[0] == 4);
    CHECK(dst[1] == 5);
    float s[2] = {1, 2}, r[2] = {0, 0};
    REQUIRE(c->reduceScatter(s, r, 2, SYNPL_PLAN_F32, SYNPL_PLAN_REDUCE_MEAN) == SYNPL_RT_OK);
    CHECK(r[0] == 1);
    CHECK(r[1] == 2);
    // Started: the copy is there after the wait; a request starts once.
    float started[2] = {0, 0};
    CommRequest req;
    REQUIRE(c->startReduceScatter(s, started, 2, SYNPL_PLAN_F32, SYNPL_PLAN_REDUCE_SUM, req) ==
            SYNPL_RT_OK);
    CHECK(c->startReduceScatter(s, started, 2, SYNPL_PLAN_F32, SYNPL_PLAN_REDUCE_SUM, req) !=
          SYNPL_RT_OK);
    REQUIRE(c->wait(req) == SYNPL_RT_OK);
    CHECK(started[0] == 1);
    CHECK(started[1] == 2);
  }
  SECTION("broadcast from rank 0; rank 1 does not exist") {
    REQUIRE(c->broadcast(f, sizeof f, 0) == SYNPL_RT_OK);
    CHECK(c->broadcast(f, sizeof f, 1) == SYNPL_RT_ERR_INVALID);
    CHECK(lastError() == "broadcast from rank 1: the world has 1 rank");
    CHECK(c->barrier() == SYNPL_RT_OK);
  }
  SECTION("what cannot be reduced is refused") {
    uint8_t bytes[4] = {};
    CHECK(c->allReduce(bytes, 4, SYNPL_PLAN_U8, SYNPL_PLAN_REDUCE_SUM) == SYNPL_RT_ERR_INVALID);
    CHECK(c->allReduce(f, 3, SYNPL_PLAN_F32, 9) == SYNPL_RT_ERR_INVALID);
  }
}

TEST_CASE("comm: SYNPL_COMM picks the backend", "[runtime][comm]") {
  std::unique_ptr<Comm> c;
  ::setenv("SYNPL_COMM", "self", 1);
  REQUIRE(openComm(c) == SYNPL_RT_OK);
  CHECK(std::string(c->backend()) == "self");
  ::setenv("SYNPL_COMM", "pigeons", 1);
  CHECK(openComm(c) == SYNPL_RT_ERR_INVALID);
  CHECK(lastError() == "SYNPL_COMM=pigeons: expected self (one process) or mpi");
  // A launcher's world without a loadable MPI: the message names what was
  // tried and what to install.
  ::setenv("SYNPL_COMM", "mpi", 1);
  ::setenv("SYNPL_MPI_LIB", "/nonexistent/libmpi.so.40", 1);
  CHECK(openComm(c) == SYNPL_RT_ERR_COMM);
  std::string e = lastError();
  CHECK(e.find("cannot load Open MPI: tried /nonexistent/libmpi.so.40") == 0);
  CHECK(e.find("openmpi-bin and libopenmpi-dev") != std::string::npos);
  CHECK(e.find("SYNPL_MPI_LIB") != std::string::npos);
  ::unsetenv("SYNPL_MPI_LIB");
  ::unsetenv("SYNPL_COMM");
}

TEST_CASE("shards: which positions rank r of N reads at step i", "[runtime][shard]") {
  using namespace synpl::rt::exec;
  // 10 samples, batch 2 per rank, 2 ranks: global batches of 4.
  CHECK(shardBatches(10, 2, 2, /*dropLast=*/true) == 2);
  CHECK(shardBatches(10, 2, 2, /*dropLast=*/false) == 3);
  CHECK(shardBatches(8, 2, 2, true) == 2);
  CHECK(shardBatches(8, 2, 2, false) == 2);
  CHECK(shardBatches(3, 2, 2, true) == 0);
  CHECK(shardBatches(10, 2, 1, true) == 5); // one rank: the batches as before
  CHECK(shardBatches(10, 3, 1, false) == 4);
  // Step i, rank r: [(i N + r) b, (i N + r + 1) b).
  CHECK(shardFirst(0, 2, 0, 2) == 0);
  CHECK(shardFirst(0, 2, 1, 2) == 2);
  CHECK(shardFirst(1, 2, 0, 2) == 4);
  CHECK(shardFirst(1, 2, 1, 2) == 6);
  CHECK(shardFirst(2, 3, 2, 4) == 30);
  // The last global batch of 10 without drop_last: rank 0 reads 8, 9;
  // rank 1 only padding.
  CHECK(shardRows(10, 2, 2, 0, 2) == 2);
  CHECK(shardRows(10, 2, 2, 1, 2) == 0);
  CHECK(shardRows(9, 2, 2, 0, 2) == 1);
  CHECK(shardRows(10, 0, 2, 1, 2) == 2);

  SECTION("gather reads the rank's slice of the order, padding past the end") {
    Split s;
    s.samples = 10;
    s.order = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
    Field f;
    f.slot = 0;
    f.sampleBytes = 1; // a label field: padding is 255
    for (int i = 0; i < 10; ++i)
      f.text.push_back((uint8_t)(100 + i));
    s.fields.push_back(f);
    s.shardRanks = 2;
    uint8_t out[3];
    std::vector<uint8_t *> dst = {out};
    s.shardRank = 1;
    gather(s, 3, 0, dst); // positions 3, 4, 5 of the order: samples 6, 5, 4
    CHECK(out[0] == 106);
    CHECK(out[1] == 105);
    CHECK(out[2] == 104);
    CHECK(numBatches(s, 3, /*dropLast=*/false) == 2);
    CHECK(numBatches(s, 3, /*dropLast=*/true) == 1);
    gather(s, 3, 1, dst); // positions 9, 10, 11: sample 0, then padding
    CHECK(out[0] == 100);
    CHECK(out[1] == 255);
    CHECK(out[2] == 255);
    CHECK(batchRows(s, 3, 1) == 1);
    s.shardRank = 0;
    gather(s, 3, 1, dst); // positions 6, 7, 8
    CHECK(out[0] == 103);
    CHECK(out[2] == 101);
    CHECK(batchRows(s, 3, 1) == 3);
  }
}

TEST_CASE("plan tables: collective records are checked", "[runtime][plan]") {
  std::string dir = tempDir();
  REQUIRE(synpl::test::writeDataParallelSamples(dir, 16));
  auto refused = [&](Tables &t, const char *what) {
    CHECK(run(t, {"--quiet", "--data", dir.c_str()}) == 1);
    CHECK(lastError() == corrupt(what));
  };
  auto collective = [](Tables &t) {
    return t.record<synpl_plan_collective>(SYNPL_PLAN_COLLECTIVES, 0);
  };
  SECTION("the plan as built runs") {
    Tables t = synpl::test::dataParallelPlan(2, 4);
    CHECK(run(t, {"--quiet", "--data", dir.c_str()}) == 0);
  }
  SECTION("an unknown kind") {
    Tables t = synpl::test::dataParallelPlan(2, 4);
    collective(t)->kind = 4;
    refused(t, "a collective of an unknown kind");
  }
  SECTION("an unknown reduction") {
    Tables t = synpl::test::dataParallelPlan(2, 4);
    collective(t)->reduce = -1;
    refused(t, "a collective with an unknown reduction");
  }
  SECTION("slots past COLLECTIVE_SLOTS") {
    Tables t = synpl::test::dataParallelPlan(2, 4);
    collective(t)->num_slots = 3;
    refused(t, "a collective's slots outside COLLECTIVE_SLOTS");
  }
  SECTION("a slot index out of range") {
    Tables t = synpl::test::dataParallelPlan(2, 4);
    t.record<synpl_plan_collective_slot>(SYNPL_PLAN_COLLECTIVE_SLOTS, 1)->slot = 40;
    refused(t, "a collective slot");
  }
  SECTION("an all_gather of an odd slot count") {
    Tables t = synpl::test::dataParallelPlan(2, 4);
    collective(t)->kind = SYNPL_PLAN_ALL_GATHER;
    collective(t)->num_slots = 1;
    refused(t, "an all_gather or reduce_scatter whose slots are not (source, destination) "
               "pairs (an odd count)");
  }
  SECTION("a reduce_scatter of an odd slot count") {
    Tables t = synpl::test::dataParallelPlan(2, 4);
    collective(t)->kind = SYNPL_PLAN_REDUCE_SCATTER;
    collective(t)->num_slots = 1;
    refused(t, "an all_gather or reduce_scatter whose slots are not (source, destination) "
               "pairs (an odd count)");
  }
  SECTION("a bucket of two element types") {
    Tables t = synpl::test::dataParallelPlan(2, 4);
    t.record<synpl_plan_slot>(SYNPL_PLAN_SLOTS, 2)->element = SYNPL_PLAN_I32;
    refused(t, "a collective's slots of different element types");
  }
  SECTION("an all_reduce of bytes") {
    Tables t = synpl::test::dataParallelPlan(2, 4);
    t.record<synpl_plan_slot>(SYNPL_PLAN_SLOTS, 1)->element = SYNPL_PLAN_U8;
    t.record<synpl_plan_slot>(SYNPL_PLAN_SLOTS, 2)->element = SYNPL_PLAN_U8;
    refused(t, "an all_reduce or reduce_scatter of a slot that is not f32, f64, i32 or i64");
  }
  SECTION("a broadcast's root outside the planned ranks") {
    Tables t = synpl::test::dataParallelPlan(2, 4);
    collective(t)->kind = SYNPL_PLAN_BROADCAST;
    collective(t)->root = 2;
    refused(t, "a collective's root outside the planned ranks");
  }
  SECTION("a root on another collective") {
    Tables t = synpl::test::dataParallelPlan(2, 4);
    collective(t)->root = 1;
    refused(t, "a collective's root outside the planned ranks");
  }
  SECTION("complete_before at or before its entry, or past its stream") {
    for (int64_t before : {-2, 0, 1, 3}) {
      INFO("complete_before " << before);
      Tables t = synpl::test::dataParallelPlan(2, 4);
      collective(t)->complete_before = before;
      refused(t, "a collective's complete_before that is not a later entry of its stream");
    }
  }
  SECTION("a collective entry past COLLECTIVES") {
    Tables t = synpl::test::dataParallelPlan(2, 4);
    t.record<synpl_plan_entry>(SYNPL_PLAN_STREAM_ENTRIES, 1)->index = 1;
    refused(t, "stream entry");
  }
  SECTION("an entry of an unknown kind") {
    Tables t = synpl::test::dataParallelPlan(2, 4);
    t.record<synpl_plan_entry>(SYNPL_PLAN_STREAM_ENTRIES, 1)->kind = 3;
    refused(t, "stream entry");
  }
  SECTION("a header's ranks below 1") {
    Tables t = synpl::test::dataParallelPlan(2, 4);
    t.header().ranks = 0;
    refused(t, "a header's ranks outside [1, 2^31)");
  }
  SECTION("an ingest's sharded flag other than 0 or 1") {
    Tables t = synpl::test::dataParallelPlan(2, 4);
    t.record<synpl_plan_ingest>(SYNPL_PLAN_INGESTS, 0)->sharded = 2;
    refused(t, "an ingest's sharded flag that is not 0 or 1");
  }
  SECTION("a collective name outside the string blob") {
    Tables t = synpl::test::dataParallelPlan(2, 4);
    collective(t)->name = 1 << 20;
    refused(t, "a collective name outside the string blob");
  }
  SECTION("a plan of format 7 is told the version") {
    Tables t = synpl::test::dataParallelPlan(2, 4);
    t.header().version = 7;
    CHECK(run(t, {"--quiet"}) == 1);
    CHECK(lastError() == "the program's plan tables have version 7, this runtime reads "
                         "version 8 (relink with a matching runtime)");
  }
}

TEST_CASE("executor: a data-parallel plan runs alone", "[runtime][executor][dp]") {
  std::string dir = tempDir();
  // 16 samples 1..16 (sum 136), batch 4: one rank reads every sample once
  // an epoch, in 4 steps; the bucket's mean over one rank is its sum.
  REQUIRE(synpl::test::writeDataParallelSamples(dir, 16));
  for (int64_t before : {int64_t(2), int64_t(-1)})
    for (int64_t sharded : {0, 1}) {
      INFO("complete_before " << before << ", sharded " << sharded);
      Tables t = synpl::test::dataParallelPlan(/*ranks=*/2, 4, sharded,
                                               SYNPL_PLAN_REDUCE_MEAN, before);
      REQUIRE(run(t, {"--quiet", "--data", dir.c_str(), "--epochs", "2"}) == 0);
      CHECK(synpl::test::dpSteps == 8);
      CHECK(synpl::test::dpAcc[0] == 2 * 136.0f);
      CHECK(synpl::test::dpAcc[1] == 4 * 136.0f);
    }

  SECTION("--steps and drop_last count steps of the world's batch") {
    Tables t = synpl::test::dataParallelPlan(2, 5);
    REQUIRE(run(t, {"--quiet", "--data", dir.c_str()}) == 0);
    CHECK(synpl::test::dpSteps == 3); // floor(16 / 5)
    Tables u = synpl::test::dataParallelPlan(2, 4);
    REQUIRE(run(u, {"--quiet", "--data", dir.c_str(), "--steps", "3"}) == 0);
    CHECK(synpl::test::dpSteps == 3);
  }
  SECTION("a checkpoint records the world size, and resumes the same world") {
    std::string ckpt = dir + "/run.ckpt";
    Tables t = synpl::test::dataParallelPlan(2, 4);
    REQUIRE(run(t, {"--quiet", "--data", dir.c_str(), "--epochs", "2", "--checkpoint",
                    ckpt.c_str()}) == 0);
    Checkpoint c;
    REQUIRE(readCheckpoint(ckpt.c_str(), c) == SYNPL_RT_OK);
    REQUIRE(c.data.size() == 3); // seed, samples, then the world size
    CHECK(c.data[2] == 1);
    // A checkpoint of a world of 2 does not resume one of 1.
    c.data[2] = 2;
    REQUIRE(writeCheckpoint(ckpt.c_str(), c) == SYNPL_RT_OK);
    // (A refused resume exits: in a child.)
    Tables u = synpl::test::dataParallelPlan(2, 4);
    ::setenv("SYNPL_COMM", "self", 1);
    synpl::test::Ended e = synpl::test::runMainInChild(
        u, {"dp_prog", "--quiet", "--data", dir.c_str(), "--epochs", "3", "--resume",
            ckpt.c_str()},
        dir + "/stderr");
    ::unsetenv("SYNPL_COMM");
    CHECK(e.status == 1);
    CHECK(e.err == "synpl: error: " + ckpt +
                       ": checkpoint was written by a run of 2 ranks; this run has 1 (each "
                       "rank's share of the data depends on the world size: resume with 2, "
                       "e.g. mpirun -np 2)\n");
  }
  SECTION("the profile counts the collectives") {
    Tables t = synpl::test::dataParallelPlan(2, 4);
    std::string err = dir + "/stderr";
    ::setenv("SYNPL_COMM", "self", 1);
    synpl::test::Ended e = synpl::test::runMainInChild(
        t, {"dp_prog", "--progress", "0", "--data", dir.c_str(), "--profile"}, err);
    ::unsetenv("SYNPL_COMM");
    REQUIRE(e.status == 0);
    CHECK(e.err.find("synpl: data parallel: 1 rank x batch 4 = global batch 4 (self)") !=
          std::string::npos);
    CHECK(e.err.find("synpl: note: this program was placed on 2 ranks and runs on 1: its "
                     "global batch is 4, not the planned 8") != std::string::npos);
    CHECK(e.err.find("collectives (self, 1 rank): 4 calls") != std::string::npos);
  }
  SECTION("a program placed on one process runs as before, with no start line") {
    Tables t = synpl::test::dataParallelPlan(1, 4);
    std::string err = dir + "/stderr";
    ::setenv("SYNPL_COMM", "self", 1);
    synpl::test::Ended e =
        synpl::test::runMainInChild(t, {"dp_prog", "--data", dir.c_str()}, err);
    ::unsetenv("SYNPL_COMM");
    REQUIRE(e.status == 0);
    CHECK(e.err.find("data parallel") == std::string::npos);
  }
}

TEST_CASE("plan tables: split slots and the rank init are checked", "[runtime][plan][tp]") {
  std::string dir = tempDir();
  REQUIRE(synpl::test::writeDataParallelSamples(dir, 16));
  using synpl::test::kTpRank;
  using synpl::test::kTpV;
  using synpl::test::kTpW;
  auto refused = [&](Tables &t, const std::string &what) {
    CHECK(run(t, {"--quiet", "--data", dir.c_str()}) == 1);
    CHECK(lastError() == "the program's plan tables are corrupt: " + what);
  };
  auto slot = [](Tables &t, int64_t i) { return t.record<synpl_plan_slot>(SYNPL_PLAN_SLOTS, i); };
  SECTION("elements that are not whole rows") {
    Tables t = synpl::test::tensorParallelPlan(2);
    slot(t, kTpW)->shard_rows = 5; // 12 elements
    refused(t, "split slot w holds 12 elements, not a positive multiple of its shard_rows 5");
  }
  SECTION("a split slot of no elements") {
    Tables t = synpl::test::tensorParallelPlan(2);
    slot(t, kTpV)->elements = 0;
    refused(t, "split slot v holds 0 elements, not a positive multiple of its shard_rows 2");
  }
  SECTION("negative shard_rows") {
    Tables t = synpl::test::tensorParallelPlan(2);
    slot(t, kTpW)->shard_rows = -3;
    refused(t, "slot w has shard_rows -3, below 0");
  }
  SECTION("a split slot in a plan placed on one process") {
    Tables t = synpl::test::tensorParallelPlan(2);
    t.header().ranks = 1;
    refused(t, "slot w is split across ranks (shard_rows 3) in a plan placed on one process "
               "(header ranks 1)");
  }
  SECTION("a split slot of an element type without a size") {
    Tables t = synpl::test::tensorParallelPlan(2);
    slot(t, kTpV)->element = SYNPL_PLAN_OTHER;
    refused(t, "split slot v has no element type the runtime knows the size of");
  }
  SECTION("a full tensor too large to count its bytes") {
    Tables t = synpl::test::tensorParallelPlan(2);
    t.header().ranks = INT32_MAX;
    slot(t, kTpW)->elements = int64_t(3) << 32;
    slot(t, kTpW)->size = 4 * slot(t, kTpW)->elements;
    t.record<synpl_plan_pool>(SYNPL_PLAN_POOLS, 0)->capacity = INT64_MAX / 2;
    refused(t, "split slot w's full tensor (2147483647 ranks x 12884901888 elements) is too "
               "large");
  }
  SECTION("a rank init of several values, of a split slot, of an i32") {
    Tables t = synpl::test::tensorParallelPlan(2, /*split=*/false);
    t.record<synpl_plan_init>(SYNPL_PLAN_INITS, 2)->slot = kTpW;
    refused(t, "rank init of a slot that is not one f32");
    Tables u = synpl::test::tensorParallelPlan(2);
    slot(u, kTpRank)->shard_rows = 1;
    refused(u, "rank init of a slot that is not one f32");
    Tables v = synpl::test::tensorParallelPlan(2);
    slot(v, kTpRank)->element = SYNPL_PLAN_I32;
    refused(v, "rank init of a slot that is not one f32");
  }
  SECTION("an init kind past rank") {
    Tables t = synpl::test::tensorParallelPlan(2);
    t.record<synpl_plan_init>(SYNPL_PLAN_INITS, 2)->kind = SYNPL_PLAN_INIT_RANK + 1;
    refused(t, "init");
  }
  SECTION("split slots with a sharded ingest: update sharding, on exactly its ranks") {
    // Each rank reads its slice and holds a block of the split slots (a
    // data-parallel plan whose replicas shard their update): alone, it is
    // refused as a tensor-parallel plan is, naming what it splits.
    Tables t = synpl::test::tensorParallelPlan(2);
    t.record<synpl_plan_ingest>(SYNPL_PLAN_INGESTS, 0)->sharded = 1;
    CHECK(run(t, {"--quiet", "--data", dir.c_str()}) == 1);
    CHECK(lastError() == "this program splits its optimizer state across 2 data-parallel "
                         "ranks (update sharding); run it with mpirun -np 2 (or compile it "
                         "with synplc --update-sharding=off to run on any number)");
  }
}

TEST_CASE("shards: every rank's init of a split slot is its block of a one-process run's",
          "[runtime][shard][tp]") {
  using namespace synpl::rt::exec;
  using namespace synpl::test;
  std::string dir = tempDir();
  REQUIRE(writeDataParallelSamples(dir, 16));
  for (int64_t ranks : {2, 3}) {
    INFO(ranks << " ranks");
    // The full tensors as one process fills them (its rank slot: 0).
    Tables whole = tensorParallelPlan(ranks, /*split=*/false);
    REQUIRE(run(whole, {"--quiet", "--data", dir.c_str()}) == 0);
    CHECK(tpRank == 0.0f);
    CHECK(tpSteps == 4);
    std::vector<float> w = tpW, v = tpV;
    REQUIRE(w.size() == size_t(kTpWRows * kTpWCols * ranks));
    // Each rank's fill of the split plan's slots.
    Tables t = tensorParallelPlan(ranks);
    bindTables(t);
    Plan plan;
    REQUIRE(loadPlan(&t.desc, plan) == SYNPL_RT_OK);
    REQUIRE(planIsTensorParallel(plan));
    for (int64_t r = 0; r < ranks; ++r) {
      INFO("rank " << r);
      std::vector<float> wb(kTpWRows * kTpWCols), vb(kTpVRows * kTpVCols);
      float rank = -1;
      REQUIRE(fillInit(plan, plan.inits[0], r, reinterpret_cast<uint8_t *>(wb.data()), "") ==
              SYNPL_RT_OK);
      REQUIRE(fillInit(plan, plan.inits[1], r, reinterpret_cast<uint8_t *>(vb.data()), "") ==
              SYNPL_RT_OK);
      REQUIRE(fillInit(plan, plan.inits[2], r, reinterpret_cast<uint8_t *>(&rank), "") ==
              SYNPL_RT_OK);
      CHECK(wb == tpBlock(w, kTpWRows, kTpWCols, r, ranks));
      CHECK(vb == tpBlock(v, kTpVRows, kTpVCols, r, ranks));
      CHECK(rank == float(r));
    }
    // Values the same everywhere fill the block directly.
    synpl_plan_init ones{SYNPL_PLAN_INIT_CONSTANT, kTpW, 0, 0, 0, -1};
    double half = 0.5;
    std::memcpy(&ones.value, &half, sizeof half);
    std::vector<float> block(kTpWRows * kTpWCols, 0.0f);
    REQUIRE(fillInit(plan, ones, 1, reinterpret_cast<uint8_t *>(block.data()), "") ==
            SYNPL_RT_OK);
    CHECK(block == std::vector<float>(kTpWRows * kTpWCols, 0.5f));
  }

  SECTION("blocks placed side by side are the full tensor again") {
    Tables t = tensorParallelPlan(3);
    bindTables(t);
    Plan plan;
    REQUIRE(loadPlan(&t.desc, plan) == SYNPL_RT_OK);
    ShardShape shape = shardShape(plan, kTpV);
    CHECK(shape.rows == kTpVRows);
    CHECK(shape.rowBytes == 4 * kTpVCols);
    CHECK(shape.fullBytes() == 3 * 4 * kTpVRows * kTpVCols);
    std::vector<float> full(kTpVRows * kTpVCols * 3), again(full.size(), -1.0f);
    for (size_t i = 0; i < full.size(); ++i)
      full[i] = float(i);
    for (int64_t r = 0; r < 3; ++r) {
      std::vector<float> block(kTpVRows * kTpVCols);
      shape.take(reinterpret_cast<uint8_t *>(full.data()), r, shape.rows,
                 reinterpret_cast<uint8_t *>(block.data()));
      CHECK(block == tpBlock(full, kTpVRows, kTpVCols, r, 3));
      shape.place(reinterpret_cast<uint8_t *>(block.data()), r, shape.rows,
                  reinterpret_cast<uint8_t *>(again.data()));
    }
    CHECK(again == full);
  }
}

TEST_CASE("executor: a tensor-parallel plan refuses to run alone", "[runtime][executor][tp]") {
  std::string dir = tempDir();
  REQUIRE(synpl::test::writeDataParallelSamples(dir, 16));
  Tables t = synpl::test::tensorParallelPlan(2);
  ::setenv("SYNPL_COMM", "self", 1);
  synpl::test::Ended e = synpl::test::runMainInChild(
      t, {"tp_prog", "--quiet", "--data", dir.c_str()}, dir + "/stderr");
  ::unsetenv("SYNPL_COMM");
  CHECK(e.status == 1);
  CHECK(e.err == "synpl: error: this program splits its parameters across 2 ranks (tensor "
                 "parallel); run it with mpirun -np 2\n");
  CHECK(synpl::test::tpSteps == 0);
}
