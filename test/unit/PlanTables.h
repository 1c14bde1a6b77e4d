//===- PlanTables.h - Hand-built plan tables for runtime tests --*- C++ -*-===//
//
// The metadata tables of include/synpl/Runtime/PlanFormat.h, built in a test
// the way --synpl-convert-l0-plan-to-llvm writes them, so the executor can
// be run without the compiler.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TEST_UNIT_PLANTABLES_H
#define SYNPL_TEST_UNIT_PLANTABLES_H

#include "synpl/Runtime/PlanFormat.h"

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace synpl::test {

struct Tables {
  std::vector<int64_t> words;
  std::string strings;
  std::vector<void *> kernels;
  void *programs[1] = {nullptr};
  synpl_plan_desc desc{};
  synpl_plan_header &header() {
    return *reinterpret_cast<synpl_plan_header *>(words.data());
  }
  template <typename R> R *record(int section, int64_t i) {
    return reinterpret_cast<R *>(words.data() + header().section[section][0]) + i;
  }
};

/// Appends `s` (NUL-terminated) to `strings`; its byte offset.
inline int64_t str(std::string &strings, const char *s) {
  int64_t off = strings.size();
  strings += s;
  strings.push_back('\0');
  return off;
}

/// A host kernel record of one iteration: `args` buffers from KERNEL_ARGS
/// entry `first`, the first `inputs` of them read.
inline synpl_plan_kernel hostKernel(std::string &strings, const char *name, int64_t first,
                                    int64_t args, int64_t inputs) {
  synpl_plan_kernel k{};
  k.name = str(strings, name);
  k.first_arg = first;
  k.num_args = args;
  k.num_inputs = inputs;
  k.iterations = 1;
  k.grain = 1;
  k.target = SYNPL_PLAN_TARGET_HOST;
  k.entry = -1;
  return k;
}

/// Collects records per section, then lays out the table.
struct TableBuilder {
  std::vector<std::vector<int64_t>> sections =
      std::vector<std::vector<int64_t>>(SYNPL_PLAN_NUM_SECTIONS);
  std::vector<int64_t> recordWords =
      std::vector<int64_t>(SYNPL_PLAN_NUM_SECTIONS, 1);

  template <typename R> void add(int section, const R &rec) {
    const int64_t *w = reinterpret_cast<const int64_t *>(&rec);
    sections[section].insert(sections[section].end(), w, w + sizeof(rec) / 8);
    recordWords[section] = sizeof(rec) / 8;
  }
  /// `t.words`: the header (magic, version, `name`, pipeline depth 1, the
  /// default evaluation split, one rank), then every section.
  void finish(Tables &t, int64_t name) const {
    t.words.assign(SYNPL_PLAN_HEADER_WORDS, 0);
    t.header().magic = SYNPL_PLAN_MAGIC;
    t.header().version = SYNPL_PLAN_VERSION;
    t.header().name = name;
    t.header().pipeline_depth = 1;
    t.header().evaluate = -1;
    t.header().ranks = 1;
    for (int s = 0; s < SYNPL_PLAN_NUM_SECTIONS; ++s) {
      t.header().section[s][0] = t.words.size();
      t.header().section[s][1] = sections[s].size() / recordWords[s];
      t.words.insert(t.words.end(), sections[s].begin(), sections[s].end());
    }
  }
};

/// Points `t.desc` at the tables (the string blob NUL-terminated).
inline void bindTables(Tables &t) {
  t.desc.table = t.words.data();
  t.desc.table_words = (int64_t)t.words.size();
  if (t.strings.empty() || t.strings.back() != '\0')
    t.strings.push_back('\0');
  t.desc.strings = t.strings.data();
  t.desc.strings_size = (int64_t)t.strings.size();
  t.desc.kernels = t.kernels.data();
  t.desc.num_kernels = (int64_t)t.kernels.size();
  t.desc.programs = t.programs;
  t.desc.num_programs = t.header().section[SYNPL_PLAN_PROGRAMS][1];
}

/// synpl_rt_main over `desc` with the command line `args` (args[0] the name).
inline int runDesc(const synpl_plan_desc &desc, std::vector<const char *> args) {
  std::vector<char *> argv;
  for (const char *a : args)
    argv.push_back(const_cast<char *>(a));
  argv.push_back(nullptr);
  return synpl_rt_main((int)args.size(), argv.data(), &desc);
}

/// synpl_rt_main over `t` with the command line `args` (args[0] the name).
inline int runMain(Tables &t, std::vector<const char *> args) {
  bindTables(t);
  return runDesc(t.desc, std::move(args));
}

/// How synpl_rt_main over `t` ended in a child process (a refused run ends
/// with exit(1); a signal may kill it). SIGTERM, SIGINT and SIGHUP are at their
/// default actions, or `ignored` ignored, as a shell would start it; stdout
/// is discarded and stderr captured through the file `errPath`.
struct Ended {
  int status = -1;  ///< the exit status; -1: it did not exit
  int signal = 0;   ///< the signal that killed it
  std::string err;  ///< what it wrote to stderr
};
inline Ended runMainInChild(Tables &t, const std::vector<const char *> &args,
                            const std::string &errPath, int ignored = 0) {
  Ended e;
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) {
    e.err = "fork failed";
    return e;
  }
  if (pid == 0) {
    std::signal(SIGTERM, ignored == SIGTERM ? SIG_IGN : SIG_DFL);
    std::signal(SIGINT, ignored == SIGINT ? SIG_IGN : SIG_DFL);
    std::signal(SIGHUP, ignored == SIGHUP ? SIG_IGN : SIG_DFL);
    int err = ::open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int null = ::open("/dev/null", O_WRONLY);
    if (err < 0 || null < 0)
      ::_exit(99);
    ::dup2(err, 2);
    ::dup2(null, 1);
    int rc = runMain(t, args);
    std::fflush(nullptr);
    ::_exit(rc);
  }
  int ws = 0;
  if (::waitpid(pid, &ws, 0) != pid) {
    e.err = "waitpid failed";
    return e;
  }
  if (WIFEXITED(ws))
    e.status = WEXITSTATUS(ws);
  if (WIFSIGNALED(ws))
    e.signal = WTERMSIG(ws);
  std::ifstream in(errPath, std::ios::binary);
  e.err.assign(std::istreambuf_iterator<char>(in), {});
  ::unlink(errPath.c_str());
  return e;
}

//===----------------------------------------------------------------------===//
// A data-parallel plan (RuntimeDataParallelTest.cpp, and the MPI program
// RuntimeMpiTest.cpp, which runs it on several ranks)
//===----------------------------------------------------------------------===//

/// The batch of the plan built last, and what its accumulate kernel left
/// in this process.
inline int64_t dpBatch = 4;
inline float dpAcc[2] = {0, 0};
inline int64_t dpSteps = 0;

/// g = sum(x), g2 = 2 sum(x) over this rank's batch.
inline void dpBatchSum(void *const *args, int64_t, int64_t) {
  const float *x = static_cast<const float *>(args[0]);
  float s = 0;
  for (int64_t i = 0; i < dpBatch; ++i)
    s += x[i];
  *static_cast<float *>(args[1]) = s;
  *static_cast<float *>(args[2]) = 2 * s;
}

/// acc += (g, g2), once the bucket (g, g2) is reduced.
inline void dpAccumulate(void *const *args, int64_t, int64_t) {
  float *acc = static_cast<float *>(args[2]);
  acc[0] += *static_cast<const float *>(args[0]);
  acc[1] += *static_cast<const float *>(args[1]);
  dpAcc[0] = acc[0];
  dpAcc[1] = acc[1];
  ++dpSteps;
}

/// One ingest of `batch` f32 samples per rank (the i32 IDX file
/// `train-x`, bound with --data), sharded when `sharded`; kernels
/// batch_sum(x -> g, g2), then accumulate(g, g2 -> acc), and between them
/// the collective `bucket`: an all_reduce (`reduce`) of (g, g2) that
/// completes before accumulate (`completeBefore` 2; -1: at once). Placed
/// on `ranks` ranks; g is the `loss` report.
inline Tables dataParallelPlan(int64_t ranks, int64_t batch, int64_t sharded = 1,
                               int64_t reduce = SYNPL_PLAN_REDUCE_MEAN,
                               int64_t completeBefore = 2) {
  Tables t;
  TableBuilder tb;
  dpBatch = batch;
  dpAcc[0] = dpAcc[1] = 0;
  dpSteps = 0;
  auto kernel = [&](const char *name, int64_t first, int64_t args, int64_t inputs) {
    return hostKernel(t.strings, name, first, args, inputs);
  };
  tb.add(SYNPL_PLAN_POOLS, synpl_plan_pool{str(t.strings, "state"), SYNPL_PLAN_POOL_PERSISTENT,
                                           SYNPL_PLAN_SPACE_HOST, 64, 64});
  tb.add(SYNPL_PLAN_POOLS, synpl_plan_pool{str(t.strings, "work"), SYNPL_PLAN_POOL_ARENA,
                                           SYNPL_PLAN_SPACE_HOST, 4 * batch + 128, 64});
  int64_t gAt = (4 * batch + 63) / 64 * 64;
  tb.add(SYNPL_PLAN_SLOTS, synpl_plan_slot{str(t.strings, "x"), 1, 0, 4 * batch,
                                           SYNPL_PLAN_F32, batch, 0});
  tb.add(SYNPL_PLAN_SLOTS,
         synpl_plan_slot{str(t.strings, "g"), 1, gAt, 4, SYNPL_PLAN_F32, 1, 0});
  tb.add(SYNPL_PLAN_SLOTS,
         synpl_plan_slot{str(t.strings, "g2"), 1, gAt + 64, 4, SYNPL_PLAN_F32, 1, 0});
  tb.add(SYNPL_PLAN_SLOTS,
         synpl_plan_slot{str(t.strings, "acc"), 0, 0, 8, SYNPL_PLAN_F32, 2, 0});
  tb.add(SYNPL_PLAN_KERNELS, kernel("batch_sum", 0, 3, 1));
  tb.add(SYNPL_PLAN_KERNELS, kernel("accumulate", 3, 3, 2));
  for (int64_t slot : {0, 1, 2, 1, 2, 3})
    tb.add(SYNPL_PLAN_KERNEL_ARGS, synpl_plan_kernel_arg{slot});
  tb.add(SYNPL_PLAN_STREAMS, synpl_plan_stream{str(t.strings, "s0"), 0, 3});
  tb.add(SYNPL_PLAN_STREAM_ENTRIES, synpl_plan_entry{SYNPL_PLAN_ENTRY_KERNEL, 0});
  tb.add(SYNPL_PLAN_STREAM_ENTRIES, synpl_plan_entry{SYNPL_PLAN_ENTRY_COLLECTIVE, 0});
  tb.add(SYNPL_PLAN_STREAM_ENTRIES, synpl_plan_entry{SYNPL_PLAN_ENTRY_KERNEL, 1});
  tb.add(SYNPL_PLAN_COLLECTIVES,
         synpl_plan_collective{str(t.strings, "bucket"), SYNPL_PLAN_ALL_REDUCE, reduce, 0, 0, 2,
                               completeBefore});
  tb.add(SYNPL_PLAN_COLLECTIVE_SLOTS, synpl_plan_collective_slot{1});
  tb.add(SYNPL_PLAN_COLLECTIVE_SLOTS, synpl_plan_collective_slot{2});
  tb.add(SYNPL_PLAN_INITS, synpl_plan_init{SYNPL_PLAN_INIT_ZEROS, 3, 0, 0, 0, -1});
  tb.add(SYNPL_PLAN_INGESTS, synpl_plan_ingest{str(t.strings, "data"), SYNPL_PLAN_FORMAT_IDX,
                                               batch, 1, 1, 7, 0, 1, 1, sharded});
  tb.add(SYNPL_PLAN_INGEST_FIELDS,
         synpl_plan_ingest_field{0, str(t.strings, "train-x"), 0, 0x0C01, 0});
  tb.add(SYNPL_PLAN_REPORTS, synpl_plan_report{str(t.strings, "loss"), 1});
  tb.finish(t, str(t.strings, "dp_plan"));
  t.header().ranks = ranks;
  t.kernels = {reinterpret_cast<void *>(&dpBatchSum), reinterpret_cast<void *>(&dpAccumulate)};
  return t;
}

//===----------------------------------------------------------------------===//
// A tensor-parallel plan (RuntimeDataParallelTest.cpp alone, RuntimeMpiTest
// .cpp on its ranks)
//===----------------------------------------------------------------------===//

/// Its slots, in record order.
enum TpSlot : int64_t { kTpX, kTpLoss, kTpW, kTpV, kTpRank };
/// A rank's blocks: w is 3 rows x 4 columns (kaiming, fan_in 8, seed 11),
/// v 2 x 3 (xavier, fan_in 2, seed 12); the full tensors are `ranks` times
/// as wide.
constexpr int64_t kTpWRows = 3, kTpWCols = 4, kTpVRows = 2, kTpVCols = 3;
constexpr int64_t kTpBatch = 4;

/// What the `observe` kernel of the plan built last saw at its first step
/// in this process (w's and v's values, the rank slot), and its steps.
inline std::vector<float> tpW, tpV;
inline float tpRank = -1;
inline int64_t tpSteps = 0;
inline int64_t tpWElements = 0, tpVElements = 0;

/// observe(x, w, v, rank -> loss): records the state at the first step;
/// loss = sum(x).
inline void tpObserve(void *const *args, int64_t, int64_t) {
  const float *x = static_cast<const float *>(args[0]);
  const float *w = static_cast<const float *>(args[1]);
  const float *v = static_cast<const float *>(args[2]);
  if (tpSteps++ == 0) {
    tpW.assign(w, w + tpWElements);
    tpV.assign(v, v + tpVElements);
    tpRank = *static_cast<const float *>(args[3]);
  }
  float sum = 0;
  for (int64_t i = 0; i < kTpBatch; ++i)
    sum += x[i];
  *static_cast<float *>(args[4]) = sum;
}

/// A plan whose parameters w and v are split across `ranks` ranks
/// (shard_rows, header ranks `ranks`), with a `rank` slot and an unsharded
/// ingest of kTpBatch samples (the i32 IDX file `train-x`, bound with
/// --data); its one kernel is observe. Not `split`: the one-process plan of
/// the same full tensors (the same inits, header ranks 1), whose values the
/// split plan's blocks are cut from.
inline Tables tensorParallelPlan(int64_t ranks, bool split = true) {
  Tables t;
  TableBuilder tb;
  int64_t widen = split ? 1 : ranks, rows = split ? 1 : 0;
  tpWElements = kTpWRows * kTpWCols * widen;
  tpVElements = kTpVRows * kTpVCols * widen;
  tpW.clear();
  tpV.clear();
  tpRank = -1;
  tpSteps = 0;
  int64_t wBytes = 4 * tpWElements, vBytes = 4 * tpVElements;
  int64_t vAt = (wBytes + 63) / 64 * 64, rankAt = vAt + (vBytes + 63) / 64 * 64;
  tb.add(SYNPL_PLAN_POOLS, synpl_plan_pool{str(t.strings, "state"), SYNPL_PLAN_POOL_PERSISTENT,
                                           SYNPL_PLAN_SPACE_HOST, rankAt + 64, 64});
  tb.add(SYNPL_PLAN_POOLS, synpl_plan_pool{str(t.strings, "work"), SYNPL_PLAN_POOL_ARENA,
                                           SYNPL_PLAN_SPACE_HOST, 128, 64});
  tb.add(SYNPL_PLAN_SLOTS, synpl_plan_slot{str(t.strings, "x"), 1, 0, 4 * kTpBatch,
                                           SYNPL_PLAN_F32, kTpBatch, 0});
  tb.add(SYNPL_PLAN_SLOTS,
         synpl_plan_slot{str(t.strings, "loss"), 1, 64, 4, SYNPL_PLAN_F32, 1, 0});
  tb.add(SYNPL_PLAN_SLOTS, synpl_plan_slot{str(t.strings, "w"), 0, 0, wBytes, SYNPL_PLAN_F32,
                                           tpWElements, rows * kTpWRows});
  tb.add(SYNPL_PLAN_SLOTS, synpl_plan_slot{str(t.strings, "v"), 0, vAt, vBytes,
                                           SYNPL_PLAN_F32, tpVElements, rows * kTpVRows});
  tb.add(SYNPL_PLAN_SLOTS,
         synpl_plan_slot{str(t.strings, "rank"), 0, rankAt, 4, SYNPL_PLAN_F32, 1, 0});
  tb.add(SYNPL_PLAN_KERNELS, hostKernel(t.strings, "observe", 0, 5, 4));
  for (int64_t slot : {kTpX, kTpW, kTpV, kTpRank, kTpLoss})
    tb.add(SYNPL_PLAN_KERNEL_ARGS, synpl_plan_kernel_arg{slot});
  tb.add(SYNPL_PLAN_STREAMS, synpl_plan_stream{str(t.strings, "s0"), 0, 1});
  tb.add(SYNPL_PLAN_STREAM_ENTRIES, synpl_plan_entry{SYNPL_PLAN_ENTRY_KERNEL, 0});
  tb.add(SYNPL_PLAN_INITS, synpl_plan_init{SYNPL_PLAN_INIT_KAIMING, kTpW, 8, 11, 0, -1});
  tb.add(SYNPL_PLAN_INITS, synpl_plan_init{SYNPL_PLAN_INIT_XAVIER, kTpV, 2, 12, 0, -1});
  tb.add(SYNPL_PLAN_INITS, synpl_plan_init{SYNPL_PLAN_INIT_RANK, kTpRank, 0, 0, 0, -1});
  tb.add(SYNPL_PLAN_INGESTS, synpl_plan_ingest{str(t.strings, "data"), SYNPL_PLAN_FORMAT_IDX,
                                               kTpBatch, 1, 1, 7, 0, 1, 1, 0});
  tb.add(SYNPL_PLAN_INGEST_FIELDS,
         synpl_plan_ingest_field{kTpX, str(t.strings, "train-x"), 0, 0x0C01, 0});
  tb.add(SYNPL_PLAN_REPORTS, synpl_plan_report{str(t.strings, "loss"), kTpLoss});
  tb.finish(t, str(t.strings, "tp_plan"));
  t.header().ranks = split ? ranks : 1;
  t.kernels = {reinterpret_cast<void *>(&tpObserve)};
  return t;
}

/// Rank `rank`'s block (rows x cols of `ranks` blocks side by side) of the
/// row-major full tensor `full`, cut by hand.
inline std::vector<float> tpBlock(const std::vector<float> &full, int64_t rows, int64_t cols,
                                  int64_t rank, int64_t ranks) {
  std::vector<float> block;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      block.push_back(full[(size_t)(i * ranks * cols + rank * cols + j)]);
  return block;
}

/// Writes `dir`/train-x: a 1-D i32 IDX file of the samples 1, 2, ..., n
/// (their sum n (n + 1) / 2 whatever the order).
inline bool writeDataParallelSamples(const std::string &dir, int64_t n) {
  std::FILE *f = std::fopen((dir + "/train-x").c_str(), "wb");
  if (!f)
    return false;
  auto be32 = [&](uint32_t v) {
    unsigned char b[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 8), (unsigned char)v};
    std::fwrite(b, 1, 4, f);
  };
  be32(0x00000C01);
  be32((uint32_t)n);
  for (int64_t i = 1; i <= n; ++i)
    be32((uint32_t)i);
  return std::fclose(f) == 0;
}

} // namespace synpl::test

#endif // SYNPL_TEST_UNIT_PLANTABLES_H
