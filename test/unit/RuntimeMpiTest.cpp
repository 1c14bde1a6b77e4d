//===- RuntimeMpiTest.cpp - The runtime on several ranks under mpirun -----===//
//
// synpl-runtime-mpi-test MODE [ARGS]: one program, run by ctest as a driver
// that starts itself under mpirun (Open MPI, as root here:
// --allow-run-as-root --oversubscribe) and checks what the ranks did:
//
//   driver MPIRUN NP  the checks below, each one mpirun of this program;
//                     exit 0 when all pass
//   collectives       (a rank) Comm over MPI: all_reduce sum / mean / max /
//                     min of f32, f64, i32, i64, a started all_reduce and
//                     its wait, all_gather, reduce_scatter, broadcast,
//                     barrier, each checked against what every rank sent
//   train ARGS...     (a rank) synpl_rt_main on PlanTables.h's data-parallel
//                     plan (placed on 2 ranks, a sharded ingest of the
//                     samples 1..16, an all_reduce mean bucket), then checks
//                     the accumulated means: the whole data's sum / N per
//                     epoch
//   fail-rank1        (a rank) the same plan, whose kernel fails on rank 1
//                     at its second step (synpl_rt_check, a compiled
//                     program's failure path) while rank 0 waits for it in
//                     the bucket's all_reduce
//   one-process       (a rank) a plan placed on one process
//   tp PLANNED [--expect FILE] ARGS...
//                     (a rank) synpl_rt_main on PlanTables.h's
//                     tensor-parallel plan placed on PLANNED ranks; with
//                     --expect, checks that the kernel saw this rank's
//                     blocks of the full tensors in the weight file FILE
//                     and its own rank, and (unless resumed) a step per
//                     whole batch
//   tp-whole NP ARGS... (run alone) the one-process plan of the same full
//                     tensors
//
// A failing check prints what it expected and exits 1.
//
//===----------------------------------------------------------------------===//
#include "synpl/Runtime/PlanFormat.h"
#include "synpl/Runtime/Runtime.h"

#include "../../lib/Runtime/Comm.h"
#include "../../lib/Runtime/Internal.h"
#include "MpiHarness.h"
#include "PlanTables.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace synpl::rt;
using namespace synpl::test;

namespace {

//===----------------------------------------------------------------------===//
// A rank: the communicator's collectives
//===----------------------------------------------------------------------===//

/// Drives a started collective as the executor does (tests between
/// kernels, then the wait).
void finish(Comm &c, CommRequest &req) {
  bool done = false;
  for (int k = 0; k < 100 && !done; ++k)
    EXPECT(c.test(req, done) == 0, "%s", synpl_rt_last_error());
  EXPECT(c.wait(req) == 0, "%s", synpl_rt_last_error());
}

int rankCollectives() {
  std::unique_ptr<Comm> c;
  if (openComm(c) != SYNPL_RT_OK) {
    std::fprintf(stderr, "openComm: %s\n", synpl_rt_last_error());
    return 1;
  }
  const int r = c->rank(), n = c->size();
  EXPECT(std::string(c->backend()) == "MPI", "backend %s", c->backend());
  // Rank r contributes r + 1 (and -(r + 1)): sum n (n + 1) / 2.
  const double sum = n * (n + 1) / 2.0;
  {
    float f[2] = {float(r + 1), -float(r + 1)};
    EXPECT(c->allReduce(f, 2, SYNPL_PLAN_F32, SYNPL_PLAN_REDUCE_SUM) == 0, "%s",
           synpl_rt_last_error());
    EXPECT(f[0] == float(sum) && f[1] == -float(sum), "f32 sum %g %g", f[0], f[1]);
    double d[1] = {double(r + 1)};
    EXPECT(c->allReduce(d, 1, SYNPL_PLAN_F64, SYNPL_PLAN_REDUCE_MEAN) == 0, "%s",
           synpl_rt_last_error());
    EXPECT(d[0] == sum / n, "f64 mean %g, expected %g", d[0], sum / n);
    int32_t i[2] = {r + 1, -(r + 1)};
    EXPECT(c->allReduce(i, 2, SYNPL_PLAN_I32, SYNPL_PLAN_REDUCE_MAX) == 0, "%s",
           synpl_rt_last_error());
    EXPECT(i[0] == n && i[1] == -1, "i32 max %d %d", i[0], i[1]);
    int64_t l[1] = {int64_t(r + 1) << 40};
    EXPECT(c->allReduce(l, 1, SYNPL_PLAN_I64, SYNPL_PLAN_REDUCE_MIN) == 0, "%s",
           synpl_rt_last_error());
    EXPECT(l[0] == int64_t(1) << 40, "i64 min %lld", (long long)l[0]);
  }
  {
    // Started, overlapped with work, waited for: a mean, through the ring
    // the runtime picks for Open MPI's non-blocking all-reduce (unless the
    // launcher's environment set one), over a count no rank count divides.
    const char *algorithm = std::getenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm");
    EXPECT(algorithm && std::string(algorithm) == "1", "libnbc iallreduce algorithm %s",
           algorithm ? algorithm : "(unset)");
    const char *copy = std::getenv("OMPI_MCA_btl_vader_single_copy_mechanism");
    EXPECT(copy && std::string(copy) == "none", "vader single copy %s",
           copy ? copy : "(unset)");
    std::vector<float> big(100003);
    for (size_t i = 0; i < big.size(); ++i)
      big[i] = float(r + 1) * float(i % 7);
    CommRequest req;
    EXPECT(c->startAllReduce(big.data(), (int64_t)big.size(), SYNPL_PLAN_F32,
                             SYNPL_PLAN_REDUCE_MEAN, req) == 0,
           "%s", synpl_rt_last_error());
    finish(*c, req);
    for (size_t i = 0; i < big.size(); ++i)
      EXPECT(big[i] == float(sum) * float(i % 7) / float(n), "iallreduce mean [%zu] %g", i,
             big[i]);
  }
  {
    int32_t mine[2] = {10 * r, 10 * r + 1};
    std::vector<int32_t> all(2 * n, -1);
    EXPECT(c->allGather(mine, all.data(), sizeof mine) == 0, "%s", synpl_rt_last_error());
    for (int k = 0; k < n; ++k)
      EXPECT(all[2 * k] == 10 * k && all[2 * k + 1] == 10 * k + 1, "gather block %d: %d %d",
             k, all[2 * k], all[2 * k + 1]);
  }
  {
    // Block k of rank r holds k + r: the reduction of block r is sum over
    // ranks of (r + q) = n r + n (n - 1) / 2.
    std::vector<double> src(3 * n);
    for (int k = 0; k < n; ++k)
      for (int e = 0; e < 3; ++e)
        src[3 * k + e] = k + r + e;
    double dst[3] = {};
    EXPECT(c->reduceScatter(src.data(), dst, 3, SYNPL_PLAN_F64, SYNPL_PLAN_REDUCE_SUM) == 0,
           "%s", synpl_rt_last_error());
    for (int e = 0; e < 3; ++e)
      EXPECT(dst[e] == n * (r + e) + n * (n - 1) / 2.0, "reduce_scatter %d: %g", e, dst[e]);
    // Started (update sharding's, during the backward pass): the same
    // blocks after the wait, a mean divided there.
    double started[3] = {-1, -1, -1};
    CommRequest req;
    EXPECT(c->startReduceScatter(src.data(), started, 3, SYNPL_PLAN_F64,
                                 SYNPL_PLAN_REDUCE_MEAN, req) == 0,
           "%s", synpl_rt_last_error());
    finish(*c, req);
    for (int e = 0; e < 3; ++e)
      EXPECT(started[e] == (n * (r + e) + n * (n - 1) / 2.0) / n,
             "started reduce_scatter mean %d: %g", e, started[e]);
  }
  {
    int64_t v[3] = {r, r, r};
    int root = n - 1;
    EXPECT(c->broadcast(v, sizeof v, root) == 0, "%s", synpl_rt_last_error());
    EXPECT(v[0] == root && v[2] == root, "broadcast %lld", (long long)v[0]);
    EXPECT(c->broadcast(v, sizeof v, n) != 0, "a root past the world");
  }
  EXPECT(c->barrier() == 0, "%s", synpl_rt_last_error());
  c->finalize();
  if (failures)
    std::fprintf(stderr, "rank %d of %d: %d check(s) failed\n", r, n, failures);
  return failures ? 1 : 0;
}

//===----------------------------------------------------------------------===//
// A rank: the executor
//===----------------------------------------------------------------------===//

int runPlan(synpl::test::Tables &t, std::vector<const char *> args) {
  // Every rank writes the same samples to a folder of its own.
  std::string dir = tempDir("synpl-mpi");
  if (!synpl::test::writeDataParallelSamples(dir, 16))
    return 1;
  args.insert(args.begin(), {"dp_prog", "--data", dir.c_str()});
  return synpl::test::runMain(t, args);
}

int rankTrain(int argc, char **argv) {
  synpl::test::Tables t = synpl::test::dataParallelPlan(/*ranks=*/2, /*batch=*/2);
  std::vector<const char *> args(argv, argv + argc);
  int rc = runPlan(t, args);
  if (rc != 0)
    return rc;
  // Each epoch: the sum of the means of the ranks' slices = 136 / N; g2
  // twice that. (A resumed run's kernel saw only the steps after it.)
  bool resumed = false;
  int64_t epochs = 1;
  for (int i = 0; i < argc; ++i) {
    resumed |= !std::strcmp(argv[i], "--resume");
    if (!std::strcmp(argv[i], "--epochs") && i + 1 < argc)
      epochs = std::atoll(argv[i + 1]);
  }
  if (!resumed) {
    float want = float(epochs) * 136.0f / float(worldSize());
    EXPECT(std::fabs(synpl::test::dpAcc[0] - want) <= 1e-4f * want, "acc %g, expected %g",
           synpl::test::dpAcc[0], want);
    EXPECT(std::fabs(synpl::test::dpAcc[1] - 2 * want) <= 2e-4f * want, "acc2 %g",
           synpl::test::dpAcc[1]);
    int64_t steps = epochs * (16 / (2 * worldSize()));
    EXPECT(synpl::test::dpSteps == steps, "steps %lld, expected %lld",
           (long long)synpl::test::dpSteps, (long long)steps);
  }
  return failures ? 1 : 0;
}

/// batch_sum, failing on rank 1 at its second call.
void failingBatchSum(void *const *args, int64_t begin, int64_t end) {
  static int calls = 0;
  if (++calls == 2 && worldRank() == 1)
    synpl_rt_check(fail(SYNPL_RT_ERR_INVALID, "injected failure in batch_sum"));
  synpl::test::dpBatchSum(args, begin, end);
}

int rankFail() {
  synpl::test::Tables t = synpl::test::dataParallelPlan(2, 2);
  t.kernels[0] = reinterpret_cast<void *>(&failingBatchSum);
  return runPlan(t, {"--quiet"});
}

int rankOneProcess() {
  synpl::test::Tables t = synpl::test::dataParallelPlan(/*ranks=*/1, 2);
  return runPlan(t, {"--quiet"});
}

//===----------------------------------------------------------------------===//
// A rank: a tensor-parallel plan
//===----------------------------------------------------------------------===//

/// Slot `slot`'s blob in the checkpoint `c` as floats (empty: none).
std::vector<float> blobFloats(const Checkpoint &c, int64_t slot) {
  for (const CheckpointBlob &b : c.blobs)
    if (b.id == (uint64_t)slot) {
      std::vector<float> v(b.bytes.size() / 4);
      std::memcpy(v.data(), b.bytes.data(), v.size() * 4);
      return v;
    }
  return {};
}

int rankTensorParallel(int argc, char **argv) {
  if (argc < 1)
    return 2;
  int64_t planned = std::atoll(argv[0]);
  std::string expect;
  bool resumed = false;
  int64_t epochs = 1;
  std::vector<const char *> args;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--expect") && i + 1 < argc) {
      expect = argv[++i];
      continue;
    }
    resumed |= !std::strcmp(argv[i], "--resume");
    if (!std::strcmp(argv[i], "--epochs") && i + 1 < argc)
      epochs = std::atoll(argv[i + 1]);
    args.push_back(argv[i]);
  }
  synpl::test::Tables t = synpl::test::tensorParallelPlan(planned);
  int rc = runPlan(t, args);
  if (rc != 0 || expect.empty())
    return rc;
  // The kernel saw this rank's columns of the file's full tensors (cut by
  // hand here), and this process's rank however the state was made.
  Checkpoint c;
  if (readCheckpoint(expect.c_str(), c) != SYNPL_RT_OK) {
    std::fprintf(stderr, "%s\n", synpl_rt_last_error());
    return 1;
  }
  int r = worldRank(), n = worldSize();
  EXPECT(synpl::test::tpW == synpl::test::tpBlock(blobFloats(c, synpl::test::kTpW),
                                                  synpl::test::kTpWRows,
                                                  synpl::test::kTpWCols, r, n),
         "rank %d: w is not its block of %s", r, expect.c_str());
  EXPECT(synpl::test::tpV == synpl::test::tpBlock(blobFloats(c, synpl::test::kTpV),
                                                  synpl::test::kTpVRows,
                                                  synpl::test::kTpVCols, r, n),
         "rank %d: v is not its block of %s", r, expect.c_str());
  EXPECT(synpl::test::tpRank == float(r), "rank %d: the rank slot holds %g", r,
         synpl::test::tpRank);
  // Every rank reads every sample: 16 / batch 4 steps an epoch.
  if (!resumed)
    EXPECT(synpl::test::tpSteps == 4 * epochs, "rank %d: %lld steps, expected %lld", r,
           (long long)synpl::test::tpSteps, (long long)(4 * epochs));
  return failures ? 1 : 0;
}

int rankTensorParallelWhole(int argc, char **argv) {
  if (argc < 1)
    return 2;
  synpl::test::Tables t = synpl::test::tensorParallelPlan(std::atoll(argv[0]), false);
  return runPlan(t, std::vector<const char *>(argv + 1, argv + argc));
}

//===----------------------------------------------------------------------===//
// The driver
//===----------------------------------------------------------------------===//

/// Whether the checkpoints `a` and `b` hold the same state blocks, byte for
/// byte (`what` names the pair when not).
bool sameBlobs(const std::string &a, const std::string &b, const char *what) {
  Checkpoint x, y;
  if (readCheckpoint(a.c_str(), x) != 0 || readCheckpoint(b.c_str(), y) != 0) {
    EXPECT(false, "%s: %s", what, synpl_rt_last_error());
    return false;
  }
  bool same = x.blobs.size() == y.blobs.size() && !x.blobs.empty();
  for (size_t i = 0; same && i < x.blobs.size(); ++i)
    same = x.blobs[i].id == y.blobs[i].id && x.blobs[i].bytes == y.blobs[i].bytes;
  EXPECT(same, "%s: %s and %s hold different state", what, a.c_str(), b.c_str());
  return same;
}

/// The tensor-parallel checks on `np` ranks (np > 1).
void driveTensorParallel(const std::string &launcher, int np, const std::string &self,
                         const std::string &dir) {
  std::string n = std::to_string(np);
  std::string whole = dir + "/tp-whole.ckpt", split = dir + "/tp-split.ckpt",
              edited = dir + "/tp-edited.ckpt", again = dir + "/tp-again.ckpt";
  // One process, the full tensors: the reference.
  Outcome a = runCommand("SYNPL_COMM=self " + self + " tp-whole " + n +
                         " --quiet --save-weights " + whole + " 2>&1");
  EXPECT(a.status == 0, "the one-process run of the full tensors");
  // np ranks: each inits its blocks of those values; rank 0 writes the
  // full tensors, the same bytes as the one process.
  Outcome b = mpirun(launcher, np, self,
                     "tp " + n + " --expect " + whole + " --progress 0 --save-weights " + split);
  EXPECT(b.status == 0, "the tensor-parallel run on %d ranks", np);
  std::string start = "synpl: tensor parallel: " + n + " ranks, each holds 1/" + n +
                      " of the split parameters (MPI)";
  EXPECT(has(b, start), "the start line: %s", start.c_str());
  EXPECT(!has(b, "data parallel"), "a tensor-parallel run is not called data parallel");
  size_t lines = 0;
  for (size_t at = 0; (at = b.out.find("epoch=", at)) != std::string::npos; ++at)
    ++lines;
  EXPECT(lines == 1, "%zu epoch lines, expected 1 (rank 0's)", lines);
  sameBlobs(whole, split, "a tensor-parallel run's weights");
  // Loading: other full tensors in the file; each rank restores its
  // blocks (and keeps its rank: the file's is rank 0's), and rank 0 writes
  // the same file back.
  Checkpoint c;
  EXPECT(readCheckpoint(split.c_str(), c) == 0, "%s", synpl_rt_last_error());
  for (CheckpointBlob &blob : c.blobs) {
    if (blob.id != synpl::test::kTpW && blob.id != synpl::test::kTpV)
      continue;
    std::vector<float> v(blob.bytes.size() / 4);
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = 100.0f * float(blob.id) + float(i);
    std::memcpy(blob.bytes.data(), v.data(), blob.bytes.size());
  }
  EXPECT(writeCheckpoint(edited.c_str(), c) == 0, "%s", synpl_rt_last_error());
  Outcome d = mpirun(launcher, np, self,
                     "tp " + n + " --expect " + edited + " --quiet --epochs 2 --resume " +
                         edited + " --save-weights " + again);
  EXPECT(d.status == 0, "the resumed tensor-parallel run on %d ranks", np);
  sameBlobs(edited, again, "a resumed tensor-parallel run's weights");
  // A non-finite value is found at its place in the full tensor (the last
  // element: past any one block's count).
  for (CheckpointBlob &blob : c.blobs)
    if (blob.id == synpl::test::kTpV) {
      float nan = NAN;
      std::memcpy(blob.bytes.data() + blob.bytes.size() - 4, &nan, 4);
    }
  std::string bad = dir + "/tp-nan.ckpt";
  EXPECT(writeCheckpoint(bad.c_str(), c) == 0, "%s", synpl_rt_last_error());
  Outcome g = mpirun(launcher, np, self, "tp " + n + " --quiet --epochs 2 --resume " + bad);
  std::string where = "checkpoint holds a non-finite value in actor state v: nan at element " +
                      std::to_string(synpl::test::kTpVRows * synpl::test::kTpVCols * np - 1);
  EXPECT(g.status != 0 && has(g, where), "a NaN in a split slot's file: %s", where.c_str());
  // Another world, or none: refused, naming the ranks to run it on.
  Outcome e = mpirun(launcher, np, self, "tp " + std::to_string(np + 1) + " --quiet");
  std::string refusal = "this program splits its parameters across " + std::to_string(np + 1) +
                        " ranks (tensor parallel); this run has " + n +
                        "; run it with mpirun -np " + std::to_string(np + 1);
  EXPECT(e.status != 0 && has(e, "synpl: error: rank ") && has(e, refusal),
         "the refusal of %d ranks: %s", np, refusal.c_str());
  Outcome f = runCommand("SYNPL_COMM=self " + self + " tp " + n + " --quiet 2>&1");
  std::string alone = "synpl: error: this program splits its parameters across " + n +
                      " ranks (tensor parallel); run it with mpirun -np " + n;
  EXPECT(f.status == 1 && has(f, alone), "the refusal to run alone: %s", alone.c_str());
  if (failures)
    for (const Outcome *o : {&a, &b, &d, &g, &e, &f})
      show(*o);
}

int driver(const std::string &launcher, int np, const std::string &self) {
  std::string dir = tempDir("synpl-mpi");
  {
    Outcome o = mpirun(launcher, np, self, "collectives");
    EXPECT(o.status == 0, "the collectives on %d ranks", np);
    if (o.status)
      show(o);
  }
  {
    // Two epochs: rank 0 alone prints the start line and the epoch lines.
    Outcome o = mpirun(launcher, np, self, "train --epochs 2 --progress 0");
    EXPECT(o.status == 0, "training on %d ranks", np);
    std::string start = "synpl: data parallel: " + std::to_string(np) + " ranks x batch 2 = " +
                        "global batch " + std::to_string(2 * np) + " (MPI)";
    EXPECT(has(o, start), "the start line: %s", start.c_str());
    size_t lines = 0;
    for (size_t at = 0; (at = o.out.find("epoch=", at)) != std::string::npos; ++at)
      ++lines;
    EXPECT(lines == 2, "%zu epoch lines, expected 2 (rank 0's)", lines);
    if (np != 2)
      EXPECT(has(o, "synpl: note: this program was placed on 2 ranks and runs on"), "the note");
    if (failures)
      show(o);
  }
  {
    // Resumed mid-epoch on the same world: the same state as the run
    // that was not interrupted.
    std::string whole = dir + "/whole.ckpt", part = dir + "/part.ckpt",
                resumed = dir + "/resumed.ckpt";
    Outcome a = mpirun(launcher, np, self, "train --quiet --epochs 2 --save-weights " + whole);
    int64_t perEpoch = 16 / (2 * np);
    Outcome b = mpirun(launcher, np, self,
                       "train --quiet --epochs 2 --checkpoint-every 1 --checkpoint " + part,
                       {{"SYNPL_RT_KILL_AFTER_STEPS", std::to_string(perEpoch + 1)}});
    // (The ranks die of SIGKILL after that step, its checkpoint written.)
    Outcome c = mpirun(launcher, np, self,
                       "train --quiet --epochs 2 --resume " + part + " --save-weights " + resumed);
    EXPECT(a.status == 0 && c.status == 0 && b.status != 0, "the three runs: %d %d %d",
           a.status, b.status, c.status);
    Checkpoint x, y;
    EXPECT(readCheckpoint(whole.c_str(), x) == 0 && readCheckpoint(resumed.c_str(), y) == 0,
           "%s", synpl_rt_last_error());
    EXPECT(x.blobs.size() == y.blobs.size() && !x.blobs.empty(), "the blobs");
    for (size_t i = 0; i < x.blobs.size() && i < y.blobs.size(); ++i)
      EXPECT(x.blobs[i].bytes == y.blobs[i].bytes, "blob %zu differs after the resume", i);
    EXPECT(x.data.size() == 3 && x.data[2] == (uint64_t)np, "the world size recorded");
    // Another world does not resume it.
    if (np > 1) {
      Outcome d = mpirun(launcher, 1, self, "train --quiet --epochs 2 --resume " + part);
      EXPECT(d.status != 0 && has(d, "checkpoint was written by a run of " +
                                         std::to_string(np) + " ranks; this run has 1"),
             "a resume on another world");
      if (failures)
        show(d);
    }
    if (failures) {
      show(a);
      show(b);
      show(c);
    }
  }
  if (np > 1) {
    // A rank that fails ends the run, quickly, naming itself.
    Outcome o = mpirun(launcher, np, self, "fail-rank1");
    EXPECT(o.status != 0, "a failed rank's run exits non-zero");
    std::string line = "synpl: error: rank 1 of " + std::to_string(np) +
                       ": injected failure in batch_sum";
    EXPECT(has(o, line), "the error line: %s", line.c_str());
    EXPECT(o.seconds < 60, "ended after %.1f s", o.seconds);
    if (failures)
      show(o);
    // A program placed on one process refuses several.
    Outcome one = mpirun(launcher, np, self, "one-process");
    EXPECT(one.status != 0 && has(one, ": this program was placed on one process; run it "
                                       "alone, or compile it for a system with several hosts"),
           "the one-process refusal");
    if (failures)
      show(one);
    driveTensorParallel(launcher, np, self, dir);
  }
  std::fprintf(stderr, "driver: %d ranks: %s\n", np, failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s driver MPIRUN NP | collectives | train ARGS... | "
                         "fail-rank1 | one-process | tp PLANNED [--expect FILE] ARGS... | "
                         "tp-whole NP ARGS...\n",
                 argv[0]);
    return 2;
  }
  std::string mode = argv[1];
  if (mode == "driver" && argc == 4)
    return driver(argv[2], std::atoi(argv[3]), argv[0]);
  if (mode == "collectives")
    return rankCollectives();
  if (mode == "train")
    return rankTrain(argc - 2, argv + 2);
  if (mode == "fail-rank1")
    return rankFail();
  if (mode == "one-process")
    return rankOneProcess();
  if (mode == "tp")
    return rankTensorParallel(argc - 2, argv + 2);
  if (mode == "tp-whole")
    return rankTensorParallelWhole(argc - 2, argv + 2);
  std::fprintf(stderr, "%s: unknown mode %s\n", argv[0], mode.c_str());
  return 2;
}
