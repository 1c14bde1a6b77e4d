//===- RuntimeNcclTest.cpp - Data-parallel CUDA runs: NCCL, fake GPUs ----===//
//
// synpl-runtime-nccl-test MODE [ARGS]: the collectives of GPU memory of a
// data-parallel CUDA plan (lib/Runtime/Nccl.cpp, ExecutorCollectives.cpp)
// on the fake CUDA driver (test/lib/FakeCuda) and the fake NCCL
// (test/lib/FakeNccl, which really combines the ranks over shared memory).
// ctest runs it as a driver that starts itself and checks what happened:
//
//   alone FAKECUDA            one process, no mpirun: the plan runs with no
//                             NCCL at all (SYNPL_NCCL_LIB names nothing)
//   driver MPIRUN NP FAKECUDA FAKENCCLDIR
//                             under mpirun (Open MPI, as root here:
//                             --allow-run-as-root --oversubscribe): the
//                             checks below, each one mpirun of this program;
//                             the fake NCCL found as libnccl.so.2 on
//                             LD_LIBRARY_PATH
//   collectives               (a rank) NcclComm over the fake: all_reduce
//                             sum / avg / max / min of f32, f64, i32, i64
//                             (one larger than the fake's slot), a group,
//                             all_gather, reduce_scatter, broadcast
//   train REDUCE ARGS...      (a rank) synpl_rt_main on PlanTables.h's
//                             data-parallel plan with its pools on the GPU
//                             and its kernels CUDA kernels (the fake driver
//                             runs their host fallbacks), the bucket an
//                             all_reduce of REDUCE (mean, sum); checks the
//                             accumulated values
//
// A failing check prints what it expected and exits 1.
//
//===----------------------------------------------------------------------===//
#include "synpl/Runtime/PlanFormat.h"
#include "synpl/Runtime/Runtime.h"

#include "../../lib/Runtime/Comm.h"
#include "../../lib/Runtime/Internal.h"
#include "../../lib/Runtime/Nccl.h"
#include "MpiHarness.h"
#include "PlanTables.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>
#include <vector>

using namespace synpl::rt;
using namespace synpl::test;

namespace {

//===----------------------------------------------------------------------===//
// A rank: NcclComm on the fake
//===----------------------------------------------------------------------===//

int rankCollectives() {
  std::unique_ptr<Comm> world;
  if (openComm(world) != SYNPL_RT_OK) {
    std::fprintf(stderr, "openComm: %s\n", synpl_rt_last_error());
    return 1;
  }
  std::unique_ptr<NcclComm> nc;
  if (NcclComm::open(*world, nc) != SYNPL_RT_OK) {
    std::fprintf(stderr, "NcclComm::open: %s\n", synpl_rt_last_error());
    world->abort(1);
  }
  const int r = world->rank(), n = world->size();
  const double sum = n * (n + 1) / 2.0;
  CUstream s = nullptr; // the fake runs each call when it is made
  EXPECT(nc->hasAvg(), "the fake's version %d", nc->version());
  {
    std::vector<float> f(300000, float(r + 1)); // 1.2 MB: two of the fake's chunks
    f[0] = -float(r + 1);
    EXPECT(nc->allReduce(f.data(), (int64_t)f.size(), SYNPL_PLAN_F32, SYNPL_PLAN_REDUCE_SUM,
                         s) == 0,
           "%s", synpl_rt_last_error());
    EXPECT(f[0] == -float(sum) && f[1] == float(sum) && f.back() == float(sum),
           "f32 sum %g %g %g", f[0], f[1], f.back());
    double d[2] = {double(r + 1), double(10 * r)};
    EXPECT(nc->allReduce(d, 2, SYNPL_PLAN_F64, SYNPL_PLAN_REDUCE_MEAN, s) == 0, "%s",
           synpl_rt_last_error());
    EXPECT(d[0] == sum / n && d[1] == 10.0 * (n - 1) / 2, "f64 mean %g %g", d[0], d[1]);
    // A bucket: one group, one call per buffer.
    int32_t i[2] = {r + 1, -(r + 1)};
    int64_t l[1] = {int64_t(r + 1) << 40};
    EXPECT(nc->groupStart() == 0, "%s", synpl_rt_last_error());
    EXPECT(nc->allReduce(i, 2, SYNPL_PLAN_I32, SYNPL_PLAN_REDUCE_MAX, s) == 0, "%s",
           synpl_rt_last_error());
    EXPECT(nc->allReduce(l, 1, SYNPL_PLAN_I64, SYNPL_PLAN_REDUCE_MIN, s) == 0, "%s",
           synpl_rt_last_error());
    EXPECT(nc->groupEnd() == 0, "%s", synpl_rt_last_error());
    EXPECT(i[0] == n && i[1] == -1, "i32 max %d %d", i[0], i[1]);
    EXPECT(l[0] == int64_t(1) << 40, "i64 min %lld", (long long)l[0]);
    // A type NCCL does not reduce.
    uint8_t u[1] = {1};
    EXPECT(nc->allReduce(u, 1, SYNPL_PLAN_U8, SYNPL_PLAN_REDUCE_SUM, s) != 0,
           "a u8 all_reduce is refused");
  }
  {
    int32_t mine[2] = {10 * r, 10 * r + 1};
    std::vector<int32_t> all(2 * n, -1);
    EXPECT(nc->allGather(mine, all.data(), 2, SYNPL_PLAN_I32, s) == 0, "%s",
           synpl_rt_last_error());
    for (int k = 0; k < n; ++k)
      EXPECT(all[2 * k] == 10 * k && all[2 * k + 1] == 10 * k + 1, "gather block %d: %d %d",
             k, all[2 * k], all[2 * k + 1]);
  }
  {
    std::vector<double> src(3 * n);
    for (int k = 0; k < n; ++k)
      for (int e = 0; e < 3; ++e)
        src[3 * k + e] = k + r + e;
    double dst[3] = {};
    EXPECT(nc->reduceScatter(src.data(), dst, 3, SYNPL_PLAN_F64, SYNPL_PLAN_REDUCE_SUM, s) == 0,
           "%s", synpl_rt_last_error());
    for (int e = 0; e < 3; ++e)
      EXPECT(dst[e] == n * (r + e) + n * (n - 1) / 2.0, "reduce_scatter %d: %g", e, dst[e]);
  }
  {
    int64_t v[3] = {r, r, r};
    int root = n - 1;
    EXPECT(nc->broadcast(v, 3, SYNPL_PLAN_I64, root, s) == 0, "%s", synpl_rt_last_error());
    EXPECT(v[0] == root && v[2] == root, "broadcast %lld", (long long)v[0]);
    EXPECT(nc->broadcast(v, 3, SYNPL_PLAN_I64, n, s) != 0, "a root past the world");
  }
  EXPECT(nc->checkAsync("at the end") == 0, "%s", synpl_rt_last_error());
  nc.reset();
  world->finalize();
  if (failures)
    std::fprintf(stderr, "rank %d of %d: %d check(s) failed\n", r, n, failures);
  return failures ? 1 : 0;
}

//===----------------------------------------------------------------------===//
// A rank: the executor on a data-parallel CUDA plan
//===----------------------------------------------------------------------===//

const char kPtx[] = ".version 7.0\n.target sm_80\n.address_size 64\n"
                    ".visible .entry dp_batch_sum(\n\t.param .u64 a,\n\t.param .u64 b,\n"
                    "\t.param .u64 c\n)\n{\n\tret;\n}\n"
                    ".visible .entry dp_accumulate(\n\t.param .u64 a,\n\t.param .u64 b,\n"
                    "\t.param .u64 c\n)\n{\n\tret;\n}\n";

/// PlanTables.h's data-parallel plan on a GPU: both pools device memory
/// (the ingest gathers into a device slot), both kernels CUDA kernels whose
/// host fallbacks are the plan's functions, the bucket (g, g2) an
/// all_reduce of device memory.
synpl::test::Tables cudaDataParallelPlan(int64_t ranks, int64_t batch, int64_t reduce) {
  synpl::test::Tables t =
      synpl::test::dataParallelPlan(ranks, batch, /*sharded=*/1, reduce, /*completeBefore=*/2);
  for (int64_t i = 0; i < t.header().section[SYNPL_PLAN_POOLS][1]; ++i)
    t.record<synpl_plan_pool>(SYNPL_PLAN_POOLS, i)->space = SYNPL_PLAN_SPACE_DEVICE;
  const char *entries[] = {"dp_batch_sum", "dp_accumulate"};
  for (int64_t k = 0; k < 2; ++k) {
    int64_t entry = synpl::test::str(t.strings, entries[k]);
    synpl_plan_kernel *kr = t.record<synpl_plan_kernel>(SYNPL_PLAN_KERNELS, k);
    kr->target = SYNPL_PLAN_TARGET_CUDA;
    kr->entry = entry;
    kr->grid[0] = kr->grid[1] = kr->grid[2] = 1;
    kr->block[0] = kr->block[1] = kr->block[2] = 1;
  }
  t.header().device_arch = 80;
  t.header().min_driver = 11000;
  t.desc.device_ptx = kPtx;
  t.desc.device_ptx_size = sizeof kPtx - 1;
  return t;
}

int rankTrain(int argc, char **argv) {
  if (argc < 1) {
    std::fprintf(stderr, "train: REDUCE (mean, sum) first\n");
    return 2;
  }
  bool mean = !std::strcmp(argv[0], "mean");
  synpl::test::Tables t = cudaDataParallelPlan(
      /*ranks=*/2, /*batch=*/2, mean ? SYNPL_PLAN_REDUCE_MEAN : SYNPL_PLAN_REDUCE_SUM);
  std::string dir = tempDir("synpl-nccl");
  if (!synpl::test::writeDataParallelSamples(dir, 16))
    return 1;
  std::vector<const char *> args = {"dp_cuda_prog", "--data", dir.c_str()};
  for (int i = 1; i < argc; ++i)
    args.push_back(argv[i]);
  int64_t epochs = 1;
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--epochs") && i + 1 < argc)
      epochs = std::atoll(argv[i + 1]);
  int rc = synpl::test::runMain(t, args);
  if (rc != 0)
    return rc;
  // Each epoch the world's batches cover the 16 samples once: the bucket's
  // sums add up to 136 (a mean: 136 / N); g2 is twice g.
  float want = float(epochs) * 136.0f / (mean ? float(worldSize()) : 1.0f);
  EXPECT(std::fabs(synpl::test::dpAcc[0] - want) <= 1e-4f * want, "acc %g, expected %g",
         synpl::test::dpAcc[0], want);
  EXPECT(std::fabs(synpl::test::dpAcc[1] - 2 * want) <= 2e-4f * want, "acc2 %g, expected %g",
         synpl::test::dpAcc[1], 2 * want);
  int64_t steps = epochs * (16 / (2 * worldSize()));
  EXPECT(synpl::test::dpSteps == steps, "steps %lld, expected %lld",
         (long long)synpl::test::dpSteps, (long long)steps);
  return failures ? 1 : 0;
}

//===----------------------------------------------------------------------===//
// The driver
//===----------------------------------------------------------------------===//

std::vector<std::string> readLines(const std::string &path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string l; std::getline(in, l);)
    lines.push_back(l);
  return lines;
}

size_t countLines(const std::vector<std::string> &lines, const std::string &text) {
  size_t n = 0;
  for (const std::string &l : lines)
    n += l == text;
  return n;
}

int alone(const std::string &self, const std::string &fakeCuda) {
  // No launcher, no NCCL: the collectives of one process are the identity.
  Env env = {{"SYNPL_CUDA_DRIVER", fakeCuda}, {"SYNPL_NCCL_LIB", "/nonexistent/libnccl.so.2"}};
  Outcome o = runCommand(envPrefix(env) + "timeout 120 " + self +
                         " train mean --epochs 2 --progress 0 2>&1");
  EXPECT(o.status == 0, "one process needs no NCCL");
  EXPECT(has(o, "synpl: data parallel: 1 rank x batch 2 = global batch 2 (self)"),
         "the start line");
  EXPECT(!has(o, "NCCL"), "no word of NCCL");
  if (failures)
    show(o);
  std::fprintf(stderr, "driver: alone: %s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}

int driver(const std::string &launcher, int np, const std::string &self,
           const std::string &fakeCuda, const std::string &fakeNcclDir) {
  std::string dir = tempDir("synpl-nccl");
  std::string ldPath = fakeNcclDir;
  if (const char *old = std::getenv("LD_LIBRARY_PATH"); old && *old)
    ldPath += std::string(":") + old;
  const Env fakes = {{"SYNPL_CUDA_DRIVER", fakeCuda}, {"LD_LIBRARY_PATH", ldPath}};
  auto with = [&](Env more) {
    Env e = fakes;
    e.insert(e.end(), more.begin(), more.end());
    return e;
  };
  {
    Outcome o = mpirun(launcher, np, self, "collectives", fakes);
    EXPECT(o.status == 0, "NcclComm's collectives on %d ranks", np);
    if (o.status)
      show(o);
  }
  {
    // Training: the values, the start lines, the calls the fake saw.
    std::string log = dir + "/nccl.log";
    Outcome o = mpirun(launcher, np, self, "train mean --epochs 2 --progress 0",
                       with({{"SYNPL_FAKE_NCCL_LOG", log}}));
    EXPECT(o.status == 0, "training on %d ranks", np);
    std::string start = "synpl: data parallel: " + std::to_string(np) +
                        " ranks x batch 2 = global batch " + std::to_string(2 * np) + " (MPI)";
    EXPECT(has(o, start), "the start line: %s", start.c_str());
    EXPECT(has(o, "(rank 0 on GPU 0 of 1, compute capability"), "the GPU line");
    EXPECT(has(o, "synpl: collectives of GPU memory: NCCL 2.23.4 (libnccl.so.2)"),
           "the NCCL line");
    std::vector<std::string> lines = readLines(log);
    int64_t steps = 2 * (16 / (2 * np));
    for (int r = 0; r < np; ++r) {
      std::string call = "ncclAllReduce count=1 type=float32 op=avg rank=" + std::to_string(r) +
                         " nranks=" + std::to_string(np);
      EXPECT(countLines(lines, call) == (size_t)(2 * steps), "%zu x '%s', expected %lld",
             countLines(lines, call), call.c_str(), (long long)(2 * steps));
      std::string init = "ncclCommInitRank rank=" + std::to_string(r) +
                         " nranks=" + std::to_string(np);
      EXPECT(countLines(lines, init) == 1, "'%s' once", init.c_str());
      std::string destroy = "ncclCommDestroy rank=" + std::to_string(r) +
                            " nranks=" + std::to_string(np);
      EXPECT(countLines(lines, destroy) == 1, "'%s' once", destroy.c_str());
    }
    // The bucket of two slots is one group per step on every rank.
    EXPECT(countLines(lines, "ncclGroupStart") == (size_t)(np * steps) &&
               countLines(lines, "ncclGroupEnd") == (size_t)(np * steps),
           "%zu groups started, %zu ended, expected %lld",
           countLines(lines, "ncclGroupStart"), countLines(lines, "ncclGroupEnd"),
           (long long)(np * steps));
    EXPECT(lines.size() == (size_t)(np * (2 + 4 * steps)), "%zu log lines", lines.size());
    if (failures)
      show(o);
  }
  {
    // A sum bucket, NCCL named by SYNPL_NCCL_LIB.
    Outcome o = mpirun(launcher, np, self, "train sum --quiet",
                       {{"SYNPL_CUDA_DRIVER", fakeCuda},
                        {"SYNPL_NCCL_LIB", fakeNcclDir + "/libnccl.so.2"}});
    EXPECT(o.status == 0, "a sum bucket on %d ranks", np);
    if (o.status)
      show(o);
  }
  {
    // One rank under mpirun: no NCCL needed.
    Outcome o = mpirun(launcher, 1, self, "train mean --quiet",
                       {{"SYNPL_CUDA_DRIVER", fakeCuda},
                        {"SYNPL_NCCL_LIB", "/nonexistent/libnccl.so.2"}});
    EXPECT(o.status == 0, "one rank needs no NCCL");
    if (o.status)
      show(o);
  }
  if (np > 1) {
    // No NCCL: every rank says what it tried and where to get one.
    Outcome o = mpirun(launcher, np, self, "train mean --quiet",
                       {{"SYNPL_CUDA_DRIVER", fakeCuda},
                        {"SYNPL_NCCL_LIB", "/nonexistent/libnccl.so.2"}});
    EXPECT(o.status != 0, "a run without NCCL fails");
    EXPECT(has(o, "of " + std::to_string(np) +
                      ": cannot load NCCL: tried /nonexistent/libnccl.so.2 ("),
           "the missing-library line");
    EXPECT(has(o, "nvidia-nccl-cu12") && has(o, "SYNPL_NCCL_LIB"), "where to get one");
    EXPECT(o.seconds < 60, "ended after %.1f s", o.seconds);
    if (failures)
      show(o);
  }
  if (np > 1) {
    // An NCCL call that fails ends the run, naming the call and NCCL's text.
    Outcome o = mpirun(launcher, np, self, "train mean --quiet",
                       with({{"SYNPL_FAKE_NCCL", "fail=3"}}));
    EXPECT(o.status != 0, "a failed NCCL call fails the run");
    EXPECT(has(o, ": step 2 (epoch 1, batch 2): collective bucket (all_reduce): ncclAllReduce "
                  "failed: unhandled system error"),
           "the failed call's line");
    EXPECT(o.seconds < 60, "ended after %.1f s", o.seconds);
    if (failures)
      show(o);
    // An asynchronous error is found when the stream is synchronized.
    Outcome a = mpirun(launcher, np, self, "train mean --quiet",
                       with({{"SYNPL_FAKE_NCCL", "async-error=2"}}));
    EXPECT(a.status != 0, "an asynchronous NCCL error fails the run");
    EXPECT(has(a, "NCCL reported an asynchronous error (ncclCommGetAsyncError) on stream s0: "
                  "remote process exited or there was a network error"),
           "the asynchronous error's line");
    if (failures)
      show(a);
    // An NCCL without ncclAvg refuses a mean bucket before training.
    Outcome v = mpirun(launcher, np, self, "train mean --quiet",
                       with({{"SYNPL_FAKE_NCCL", "version=2804"}}));
    EXPECT(v.status != 0 && has(v, "NCCL 2.8.4 (libnccl.so.2) has no ncclAvg"),
           "an NCCL older than 2.10");
    if (failures)
      show(v);
  }
  std::fprintf(stderr, "driver: %d ranks: %s\n", np, failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s alone FAKECUDA | driver MPIRUN NP FAKECUDA FAKENCCLDIR | "
                         "collectives | train REDUCE ARGS...\n", argv[0]);
    return 2;
  }
  std::string mode = argv[1];
  if (mode == "alone" && argc == 3)
    return alone(argv[0], argv[2]);
  if (mode == "driver" && argc == 6)
    return driver(argv[2], std::atoi(argv[3]), argv[0], argv[4], argv[5]);
  if (mode == "collectives")
    return rankCollectives();
  if (mode == "train")
    return rankTrain(argc - 2, argv + 2);
  std::fprintf(stderr, "%s: unknown mode %s\n", argv[0], mode.c_str());
  return 2;
}
