//===- ExecutorImpl.h - The executor's tables, options and state -*- C++ -*-===//
//
// The types the host executor (Executor.cpp) shares with the files that
// grow it: the bound plan tables (PlanTables.cpp), the command-line options
// (Options.cpp), the inits and the decoded data of every ingest (Ingest.cpp:
// IDX records; Text.cpp's windows of a text file) and the Executor class
// (its CUDA device in ExecutorCuda.cpp, its checkpoints in
// ExecutorCheckpoint.cpp, the epoch loop in EpochLoop.cpp, the text loop
// in StreamLoop.cpp). Internal to lib/Runtime.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_RUNTIME_EXECUTORIMPL_H
#define SYNPL_RUNTIME_EXECUTORIMPL_H

#include "Comm.h"
#include "Cuda.h"
#include "Internal.h"
#include "Nccl.h"
#include "synpl/Runtime/PlanFormat.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace synpl::rt::exec {

//===----------------------------------------------------------------------===//
// The tables
//===----------------------------------------------------------------------===//

template <typename T> struct Section {
  const T *data = nullptr;
  int64_t size = 0;
  const T &operator[](int64_t i) const { return data[i]; }
};

struct Plan {
  const synpl_plan_desc *desc;
  const synpl_plan_header *header;
  const char *strings;
  int64_t stringsBytes = 0;
  Section<synpl_plan_pool> pools;
  Section<synpl_plan_slot> slots;
  Section<synpl_plan_kernel> kernels;
  Section<synpl_plan_kernel_arg> kernelArgs;
  Section<synpl_plan_transfer> transfers;
  Section<synpl_plan_stream> streams;
  Section<synpl_plan_entry> entries;
  Section<synpl_plan_event> events;
  Section<synpl_plan_sync> syncs;
  Section<synpl_plan_init> inits;
  Section<synpl_plan_ingest> ingests;
  Section<synpl_plan_ingest_field> ingestFields;
  Section<synpl_plan_report> reports;
  Section<synpl_plan_region> regions;
  Section<synpl_plan_program> programs;
  Section<synpl_plan_program_region> programRegions;
  Section<synpl_plan_collective> collectives;
  Section<synpl_plan_collective_slot> collectiveSlots;

  const char *str(int64_t off) const { return strings + off; }
};

using KernelFn = void (*)(void *const *, int64_t, int64_t);
using ProgramFn = void (*)(...);

/// PlanTables.cpp: the tables of `desc` bound into `p`, every record
/// checked (an index out of range, a slot outside its pool, a kernel with
/// no function: a one-line "corrupt" error).
int32_t loadPlan(const synpl_plan_desc *desc, Plan &p);
int32_t badTable(const char *what);
using synpl::rt::elementBytes;
bool fileExists(const std::string &path);

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

struct Options {
  int64_t epochs = 1;
  std::string dataDir;
  int64_t threads = 0;
  int64_t maxSteps = -1; // per epoch; -1: all batches
  int64_t evalBatches = -1;
  int64_t reportEvery = 0; // a text program's step= lines; 0: a fifth of the run
  double progressInterval = 1.0;
  bool quiet = false;
  bool profile = false;
  bool noGraphs = false; // --no-cuda-graphs
  bool checkFinite = false; // --check-finite: every kernel's float outputs
  bool evaluate = true;
  bool epochsGiven = false;
  std::string testPrefix = "t10k"; // replaces `train` in the test split's names
  std::string checkpointPath;      // --checkpoint; "": none
  int64_t checkpointEvery = -1;    // --checkpoint-every; -1: the plan's
  std::string resumePath;          // --resume
  std::string saveWeightsPath;     // --save-weights
  std::string metricsPath;         // --metrics; "": none
  /// The process's place in the world (synpl_rt_main sets it before the
  /// command line is parsed): only rank 0 prints usage, progress, lines,
  /// notes and writes files.
  int64_t rank = 0, ranks = 1;
  bool lead() const { return rank == 0; }
};

//===----------------------------------------------------------------------===//
// Metrics: --metrics FILE, one JSON object per line
//===----------------------------------------------------------------------===//

/// The run's numbers for programs that read them (the Python package's
/// training iterator, plots): a line per update step, evaluation, epoch and
/// the end of a text run, each flushed when written so a reader can follow
/// the file while the program trains. NaN is written as null.
class MetricsLog {
public:
  MetricsLog() = default;
  MetricsLog(const MetricsLog &) = delete;
  MetricsLog &operator=(const MetricsLog &) = delete;
  ~MetricsLog();
  /// Opens `path` for appending; SYNPL_RT_ERR_IO when it cannot.
  int32_t open(const std::string &path, int64_t samplesPerStep);
  bool enabled() const { return file != nullptr; }
  /// The epoch's throughput counts from here.
  void beginEpoch(int64_t firstStep);
  /// `{"kind":"step","step":S,"epoch":E,"loss":L,"samples_per_s":R,"time_s":T}`
  void step(int64_t step, int64_t epoch, double loss);
  /// `{"kind":"epoch","epoch":E,"step":S,"loss":L,"test_accuracy":A,"samples_per_s":R,"time_s":T}`
  void epoch(int64_t epoch, int64_t step, double loss, double accuracy,
             double samplesPerS);
  /// A text program's validation: `{"kind":"eval","step":S,"loss":L,"val_loss":V,"tokens_per_s":R,"time_s":T}`
  void eval(int64_t step, double loss, double valLoss, double tokensPerS);
  /// A text program's end: `{"kind":"done","step":S,"val_loss":V,"val_bits_per_byte":B,"tokens_per_s":R,"time_s":T}`
  void done(int64_t steps, double valLoss, double tokensPerS);

private:
  void line(const char *text);
  std::FILE *file = nullptr;
  int64_t samplesPerStep = 1;
  uint64_t startNs = 0, epochNs = 0;
  int64_t epochFirstStep = 0;
};

/// Options.cpp: `--help` for the program `argv0` (with the plan's defaults
/// when it is bound).
void usage(const char *argv0, const Plan *p);
/// Options.cpp: the command line into `o`. 0: run, 1: exit 0 (help), 2:
/// exit 2 (bad usage, reported).
int parseOptions(int argc, char **argv, Options &o, const Plan &plan);

//===----------------------------------------------------------------------===//
// Ingest: decoded files, the epoch order, gathering a batch
//===----------------------------------------------------------------------===//

struct Field {
  int64_t slot;
  std::string path;
  synpl_rt_idx idx{};
  int64_t sampleBytes = 0;
  /// How a float field's samples are made from the file's integers, one
  /// batch at a time as they are gathered (None: copied as they are):
  /// unsigned bytes scale to [0, 1] (x / 255), other integers keep their
  /// value (docs/data-binding.md). A converted field's sampleStep is the
  /// size of a sample in the file.
  enum class Convert { None, U8Unit, I8, I32 } convert = Convert::None;
  /// A text field: the split's bytes; sample k starts at byte
  /// k * sampleStep + shift of them.
  std::vector<uint8_t> text;
  int64_t shift = 0;
  int64_t sampleStep = 0; ///< bytes between sample starts; 0: sampleBytes
  const uint8_t *samples() const {
    if (!text.empty())
      return text.data() + shift;
    return idx.data;
  }
  int64_t step() const { return sampleStep ? sampleStep : sampleBytes; }
};

struct Split {
  std::vector<Field> fields;
  int64_t samples = 0;
  std::vector<uint32_t> order;
  /// The test (validation) split of its ingest.
  bool test = false;
  /// A training split: the epoch (1-based) the batches gathered now belong
  /// to, set by the training loop as each epoch (a text run: each pass over
  /// the windows) begins. It names the batch in SYNPL_RT_TRACE_BATCHES.
  int64_t epoch = 1;
  /// A sharded ingest's split (PlanFormat.h's `sharded`) in a world of
  /// `shardRanks`: this process reads slice `shardRank` of every global
  /// batch. 0 of 1: the whole batch.
  int64_t shardRank = 0, shardRanks = 1;
};

//===----------------------------------------------------------------------===//
// The shard arithmetic of a data-parallel run
//===----------------------------------------------------------------------===//
//
// Every rank draws the same epoch order; an epoch's steps are counted in
// global batches of `ranks` x `batch` samples, and at step `step` rank
// `rank` reads the positions [(step ranks + rank) batch, (step ranks + rank
// + 1) batch) of the order. Positions past the split's end are padding
// (zeros; a label's 255), as the last batch of a split without drop_last.

/// Steps per epoch over `samples` samples: floor(samples / (ranks batch))
/// with drop_last, else ceil (the last global batch padded).
inline int64_t shardBatches(int64_t samples, int64_t batch, int64_t ranks, bool dropLast) {
  int64_t global = batch * ranks;
  return dropLast ? samples / global : (samples + global - 1) / global;
}
/// The first position of the order rank `rank` reads at step `step`.
inline int64_t shardFirst(int64_t step, int64_t batch, int64_t rank, int64_t ranks) {
  return (step * ranks + rank) * batch;
}
/// How many of those `batch` positions are samples (the rest: padding).
inline int64_t shardRows(int64_t samples, int64_t step, int64_t batch, int64_t rank,
                         int64_t ranks) {
  int64_t first = shardFirst(step, batch, rank, ranks);
  return std::max<int64_t>(0, std::min<int64_t>(batch, samples - first));
}

/// Serial or parallel, per kernel (and per batch gather), decided by
/// measuring: a kernel too small to pay for waking the workers runs on the
/// calling thread. The first kTrial calls after a warm-up alternate the two
/// ways; serial wins only when its median is clearly (20%) faster, since
/// the first steps are noisy (cold caches, page faults). Both ways give the
/// same bits: chunks split the kernel's parallel split range, never a
/// reduction.
struct Dispatch {
  static constexpr int kWarmup = 3, kTrial = 10;
  int calls = 0;
  uint64_t serial[kTrial / 2] = {}, parallel[kTrial / 2] = {};
  int decided = -1; // -1: measuring; 0: serial; 1: parallel

  bool parallelNext() const {
    if (decided >= 0)
      return decided == 1;
    if (calls < kWarmup)
      return true;
    return (calls - kWarmup) % 2 == 1;
  }
  void record(uint64_t nanos) {
    if (decided >= 0)
      return;
    int t = calls - kWarmup;
    if (t >= 0)
      (t % 2 ? parallel : serial)[t / 2] = nanos;
    if (++calls == kWarmup + kTrial) {
      std::sort(serial, serial + kTrial / 2);
      std::sort(parallel, parallel + kTrial / 2);
      decided = serial[kTrial / 4] * 5 < parallel[kTrial / 4] * 4 ? 0 : 1;
    }
  }
};

struct Ingest {
  const synpl_plan_ingest *desc;
  Split train, test;
  bool hasTest = false;
  /// Its batch gather's rows over the pool, or not (decided as a kernel's
  /// split is).
  Dispatch gather;
};

/// EpochLoop.cpp: `v` printed with `format`, or `none` for NaN, which
/// stands for a value not measured (no evaluation: --no-eval, the split
/// `none`, no `correct` report; no `loss` report; no step since the last
/// line): the epoch and step lines never say nan.
std::string orNone(double v, const char *format);

/// Text.cpp: decodes the split of the text file `path` an ingest of format
/// text reads (the first 90% of its bytes for training, the last 10% for
/// validation) into `split`, one field per slot at its shift. A missing,
/// unreadable or empty file, or a split shorter than one window of N + 1
/// bytes, is a one-line error naming the file.
int32_t openTextSplit(const Plan &p, const synpl_plan_ingest &g,
                      const std::string &path, bool validation, Split &split);
/// Whether any ingest of the plan reads text (the run is then a stream of
/// steps with periodic validation: StreamLoop.cpp).
bool planReadsText(const Plan &p);
// Ingest.cpp: inits, data paths and splits.
/// Fills `addr` with `init`'s values for a slot of the shape `s` (zeros,
/// ones, the random fills, a file's contents read from `dataDir` when it is
/// set). `s` is the init's slot, or the full tensor of a split one
/// (Shards.cpp's fillInit).
int32_t runInit(const Plan &p, const synpl_plan_init &init, const synpl_plan_slot &s,
                uint8_t *addr, const std::string &dataDir);

/// A compiled-in data path, or the file of the same name under `dataDir`.
std::string resolve(const std::string &compiled, const std::string &dataDir);
/// Whether a compiled-in path is a run-time binding that needs `--data`.
bool needsDataDir(const std::string &compiled, const std::string &dataDir);
/// The test split's file for a training file (`train` -> `prefix`), or "".
std::string testPathOf(const std::string &trainPath, const std::string &prefix);
/// Decodes every field of a split from `paths` and checks it against its
/// slot.
int32_t openSplit(const Plan &p, const synpl_plan_ingest &g,
                  const std::vector<std::string> &paths, Split &split);
void closeSplit(Split &s);
/// Batches (steps) per epoch of a split: of global batches when sharded.
int64_t numBatches(const Split &s, int64_t batch, bool dropLast);
/// Gathers batch `b` of the split's epoch order into the slots at `addr`
/// (a sharded split: this rank's slice of global batch `b`), its rows
/// split among the threads of `workers` when it has more than one (the
/// same bytes either way).
void gather(const Split &s, int64_t batch, int64_t b, const std::vector<uint8_t *> &addr,
            synpl_rt_workers *workers = nullptr);
/// The samples (not padding) batch `b` of the split gathers on this rank.
inline int64_t batchRows(const Split &s, int64_t batch, int64_t b) {
  return shardRows(s.samples, b, batch, s.shardRank, s.shardRanks);
}
/// A whole decimal integer (flags, environment variables).
bool parseInt(const char *s, int64_t &out);
/// Testing aid: the update step after which the run raises SIGKILL (a crash
/// at a known point), from SYNPL_RT_KILL_AFTER_STEPS; -1 when unset.
int64_t killAfterSteps();

//===----------------------------------------------------------------------===//
// Tensor parallelism: split slots (Shards.cpp)
//===----------------------------------------------------------------------===//
//
// A slot with shard_rows > 0 holds rank r's block of a tensor the plan's
// `ranks` times larger (PlanFormat.h): the full tensor is rows x (ranks x
// w) row-major, the block rows x w, its row i columns [r w, (r + 1) w) of
// the full tensor's row i. Inits fill the block with the full tensor's
// values; checkpoints and weight files hold the full tensor.

/// Where a split slot's block lies in its full tensor.
struct ShardShape {
  int64_t rows = 0;     ///< shard_rows
  int64_t rowBytes = 0; ///< a row of the block: w elements
  int64_t ranks = 1;    ///< the plan header's
  int64_t blockBytes() const { return rows * rowBytes; }
  int64_t fullBytes() const { return ranks * blockBytes(); }
  /// Copies `rows` rows of rank `rank`'s block out of the full tensor's
  /// same rows (`full` points at the first of them) into `block`.
  void take(const uint8_t *full, int64_t rank, int64_t rows, uint8_t *block) const;
  /// The reverse: `rows` rows of `block` into rank `rank`'s columns of the
  /// full tensor's same rows.
  void place(const uint8_t *block, int64_t rank, int64_t rows, uint8_t *full) const;
};
/// Slot `slot`'s block in its full tensor (a slot with shard_rows > 0).
ShardShape shardShape(const Plan &p, int64_t slot);
inline bool isSharded(const Plan &p, int64_t slot) { return p.slots[slot].shard_rows > 0; }
/// Whether the plan splits any slot across its ranks (tensor parallelism's
/// parameters, update sharding's optimizer state): it then runs on exactly
/// the header's `ranks` ranks.
bool planSplitsSlots(const Plan &p);
/// Whether the plan is tensor parallel: it splits slots and its ranks read
/// the whole batch (under update sharding, a data-parallel plan splits
/// slots and each rank reads its slice).
bool planIsTensorParallel(const Plan &p);
/// Whether a `rank` init fills slot `slot` (its value is the process's, not
/// state a checkpoint restores).
bool holdsRank(const Plan &p, int64_t slot);
/// Fills the slot of `init` at `addr` on rank `rank`: runInit's values, the
/// rank for a `rank` init, and of a split slot rank `rank`'s block of the
/// values runInit gives its full tensor (bit for bit a one-process run's).
int32_t fillInit(const Plan &p, const synpl_plan_init &init, int64_t rank, uint8_t *addr,
                 const std::string &dataDir);

struct KernelStats {
  uint64_t calls = 0;
  uint64_t nanos = 0;
};


class Executor {
public:
  /// `device`: the plan's steps run there (synpl_rt_main_device), not as
  /// its kernels; null for a compiled program.
  Executor(const Plan &p, const Options &o, const synpl_rt_device *device = nullptr)
      : p(p), o(o), device(device) {}
  ~Executor();
  /// The world the run is part of (synpl_rt_main's communicator); without
  /// one, setUp makes the one-process world.
  void setWorld(Comm *world) { comm = world; }
  int32_t setUp();
  /// The training loop (EpochLoop.cpp): the exit status, 0 when the run
  /// ended, 128 + the signal when SIGTERM or SIGINT stopped it
  /// (Signals.h; the caller installs the handlers).
  int run();
  /// The training loop of a program that reads text: `steps` update steps
  /// of random windows, a validation loss every report interval and at the
  /// end (StreamLoop.cpp).
  int runStream();

private:
  int32_t allocatePools();
  int32_t allocateRegions();
  /// Ingest.cpp: every ingest's training split and, when the run
  /// evaluates, its test split (missing test files are an error then).
  int32_t openData();
  /// One step on `stream`: returns the reports.
  int32_t step(int64_t stream, int64_t batch, bool train, Split Ingest::*split);
  void runKernel(int64_t k, int64_t stream);
  int32_t dispatch(int64_t batch, int64_t &stream, int64_t &outBatch);
  /// The control program picks the step's stream and batch, then the step
  /// runs on the training or the test split.
  int32_t dispatchAndStep(int64_t batch, bool train, int64_t &stream) {
    int64_t picked;
    if (int32_t st = dispatch(batch, stream, picked))
      return st;
    stepBatch = batch;
    stepTrain = train;
    return step(stream, picked, train, train ? &Ingest::train : &Ingest::test);
  }
  uint8_t *slotAddr(int64_t slot, int64_t stream) const {
    return addr[stream][slot];
  }

  // CUDA (a plan with CUDA kernels; `cuda` is null otherwise).
  int32_t setUpCuda();
  /// Device pool `i`: device memory, its slots' addresses.
  int32_t allocateDevicePool(int64_t i);
  int32_t launchCuda(int64_t k, int64_t stream);
  int32_t transferCuda(int64_t t, int64_t stream);
  /// Waits for the stream's work; a failure names `lastKernel`.
  int32_t syncStream(int64_t stream);
  bool onDevice(int64_t slot) const { return device || (cuda && slotOnDevice[slot]); }
  static CUdeviceptr dptr(const uint8_t *a) { return (CUdeviceptr)(uintptr_t)a; }
  /// Host <-> slot copies that work for device slots too (synchronous).
  int32_t readSlot(int64_t slot, int64_t stream, void *dst, uint64_t bytes) const;
  int32_t writeSlot(int64_t slot, int64_t stream, const void *src, uint64_t bytes);
  /// The value of report `report` (an index, e.g. lossReport) after a step.
  double reportValue(int64_t report, int64_t stream) const;
  void printProfile(double trainSeconds, int64_t trainSteps) const;
  /// Writes `value` into every one-f32 slot of the runtime-filled init kind
  /// `kind` (planned_steps, training_mode).
  int32_t fillScalarInits(int64_t kind, float value);
  /// Writes 1 (training) or 0 (evaluating) into every `training_mode` slot.
  /// Only between steps: every step in flight must have been drained.
  int32_t setTrainingMode(bool training);
  /// Writes the run's length into every `planned_steps` slot.
  void fillPlannedSteps(int64_t planned);
  /// Checkpoints: the position given, the data order, the state's bytes.
  /// Every rank calls it at the same point; rank 0 writes the file.
  int32_t saveCheckpoint(const std::string &path, int64_t epoch0, int64_t batch,
                         int64_t globalStep, int64_t stepsPerEpoch,
                         double lossSum, int64_t lossCount);
  /// Reads `path`, checks it belongs to this program and run, restores it.
  int32_t restoreCheckpoint(const std::string &path, int64_t stepsPerEpoch,
                            Checkpoint &c);
  /// Tensor parallel (Shards.cpp): every rank sends its block of split
  /// slot `slot`, rank 0 receives the full tensor in `full` (the others
  /// leave it empty). Every rank calls it at the same point.
  int32_t gatherShard(int64_t slot, std::vector<uint8_t> &full);

  const Plan &p;
  const Options &o;

  // The world of a data-parallel run (ExecutorCollectives.cpp).
  Comm *comm = nullptr;
  std::unique_ptr<Comm> ownComm; ///< the self world, when none was given
  int64_t ranks() const { return comm->size(); }
  /// Rank 0: the process that prints and writes files.
  bool lead() const { return comm->rank() == 0; }
  /// Samples of the world per sample of this rank's batch: the world size
  /// when the first ingest is sharded (its rate and counts are global).
  int64_t sampleScale() const {
    return !ingests.empty() && ingests[0].desc->sharded ? ranks() : 1;
  }
  /// Sums `n` doubles over the world, in place (one rank: as they are).
  int32_t sumOverRanks(double *v, int n);
  /// The stop signal (Signals.h) as every rank sees it: the largest of the
  /// ranks' (a signal may reach the ranks between different steps; they
  /// stop after the same one).
  int agreedStop(int local);
  /// A plan collective's run-time state.
  struct CollectiveRun {
    std::vector<uint8_t> staging; ///< an all_reduce bucket of several slots, packed
    CommRequest req;
    int64_t stream = -1;
    uint64_t startNs = 0;
  };
  std::vector<CollectiveRun> collectiveRuns; // per collective
  /// Per collective: its slots are device memory (a CUDA plan's; NCCL on
  /// the step's stream), not host memory (Comm's).
  std::vector<bool> collectiveOnDevice;
  /// Starts device collective `c` on `stream` (ExecutorCollectives.cpp):
  /// NCCL, or a world of one's identity.
  int32_t startDeviceCollective(int64_t c, int64_t stream);
  std::vector<int64_t> pendingCollectives;   // started, not complete
  uint64_t collectiveCalls = 0;
  uint64_t collectiveWaitNanos = 0;   ///< the host blocked in a collective
  uint64_t collectiveFlightNanos = 0; ///< from each start to its completion
  /// The slots collective `c` reads and writes (its in-place slots both).
  void collectiveAccess(int64_t c, std::vector<int64_t> &reads,
                        std::vector<int64_t> &writes) const;
  /// Checks the collectives against the world (a gather's sizes, a
  /// broadcast's root) and sizes their staging.
  int32_t setUpCollectives();
  /// Collective `c` on `stream`'s slots: started (an all_reduce; complete
  /// at once when its complete_before is -1) or run (the others).
  int32_t startCollective(int64_t c, int64_t stream);
  /// Waits for collective `c` and unpacks its bucket.
  int32_t completeCollective(int64_t c);
  /// Completes the collectives due before stream entry `entry` (-1: all).
  int32_t completeCollectives(int64_t entry);
  /// Drives MPI's progress on the collectives in flight (between kernels).
  int32_t pollCollectives();

  synpl_rt_workers *workers = nullptr;
  std::vector<synpl_rt_region *> poolRegions;
  std::vector<std::vector<uint8_t *>> addr; // [stream][slot]
  std::vector<void *> regionMem;
  std::vector<synpl_rt_queue *> queues;
  std::vector<std::vector<void *>> programArgs;
  std::vector<Ingest> ingests;
  std::vector<bool> writesState; // per kernel / transfer entry
  std::vector<bool> evalNeeded;  // per entry: runs while evaluating
  std::vector<KernelStats> kernelStats;
  std::vector<Dispatch> dispatchOf; // per kernel
  int32_t workerCount = 1;
  uint64_t transferNanos = 0, ingestNanos = 0, controlNanos = 0;
  int64_t depth = 1;
  int64_t lossReport = -1, correctReport = -1;
  /// The `correct` report's slot is the output of one of the plan's
  /// all_reduces: each rank's value is already the world's hits (times
  /// this factor: 1 for a sum, the world size for a mean); 0: it is the
  /// rank's own (the epoch line sums the ranks').
  int64_t correctWorldFactor = 0;
  /// Evaluation reads the loss (a text program's validation loss).
  bool evalLoss = false;
  /// The program reads text (StreamLoop.cpp's run of steps, no epochs).
  bool textRun = false;

  // Non-finite numbers (Finite.cpp).
  /// --check-finite: per kernel, its float output slots (f32, f64, f16,
  /// bf16); empty without the flag.
  std::vector<std::vector<int64_t>> finiteOutputs;
  /// The step being issued (the messages name it).
  int64_t stepBatch = 0;
  bool stepTrain = true;
  void setUpFiniteChecks();
  /// Where a run is, as the messages say it: "step 15 (epoch 2, batch 5)"
  /// ("step 15" in a text program) for training step `step` (1-based, of
  /// the run) on batch `batch` (0-based) of its epoch; "evaluation after
  /// epoch 2 (step 20), test batch 3" ("validation after step 20, batch
  /// 3") for an evaluation step after training step `step`.
  std::string stepLabel(bool train, int64_t step, int64_t epoch, int64_t batch) const;
  /// The step being issued (stepBatch, stepTrain), as stepLabel says it.
  std::string currentStepLabel() const;
  /// "; rerun with --check-finite ..." without the flag, else "".
  const char *finiteHint() const;
  /// The first NaN or infinity of slot `slot`'s values at `bytes` (a host
  /// copy of a device slot), its value in `*value`; -1: none (or an integer
  /// slot). A large slot is scanned by the worker pool.
  /// `fullTensor`: `bytes` hold a split slot's full tensor (a checkpoint's
  /// blob), not the slot's block.
  int64_t scanSlot(int64_t slot, const uint8_t *bytes, double *value,
                   bool fullTensor = false) const;
  /// --check-finite, after kernel `k` ran on `stream` (a CUDA kernel: its
  /// stream synchronized): its float outputs hold no NaN or infinity.
  int32_t checkKernelFinite(int64_t k, int64_t stream);
  /// --check-finite, after ingest `g` gathered a batch of `split` into
  /// `dst` (float data files can hold NaN).
  int32_t checkBatchFinite(const Ingest &g, const Split &split,
                           const std::vector<uint8_t *> &dst);
  /// `bytes` of actor-state slot `slot` hold no NaN or infinity; else an
  /// error "<where>: actor state S holds nan at element K; <consequence>".
  int32_t checkStateBytes(int64_t slot, const uint8_t *bytes, const std::string &where,
                          const std::string &consequence, bool fullTensor = false) const;
  /// The end of epoch `epoch` (after update step `step`): its mean loss
  /// and every float actor-state slot are finite.
  int32_t checkEpochFinite(int64_t epoch, int64_t step, double lossSum,
                           int64_t lossCount) const;
  /// Every float actor-state slot (read back from the GPU when there).
  int32_t checkStateFinite(const std::string &where, const std::string &consequence) const;

  std::unique_ptr<CudaDevice> cuda;
  /// The NCCL communicator of a CUDA plan's device collectives on several
  /// ranks (null otherwise). Declared after `cuda`: destroyed before the
  /// context is released.
  std::unique_ptr<NcclComm> nccl;
  /// The device every slot lives on (synpl_rt_main_device); null otherwise.
  const synpl_rt_device *device = nullptr;
  /// A failed device call as the run's error.
  int32_t deviceFailed(int32_t status, const char *doing) const;
  std::vector<bool> slotOnDevice;
  std::vector<CUstream> cuStreams;    // per plan stream
  std::vector<CUevent> cuEvents;      // per plan event
  std::vector<CUfunction> cuFunctions; // per kernel (CUDA ones)
  std::vector<CUdeviceptr> deviceMemory; // every allocation, freed at the end
  std::vector<void *> pinnedHost;     // host pools registered with the driver
  std::vector<std::vector<int64_t>> waitsBefore, recordsAfter; // per entry: events
  std::vector<std::vector<uint8_t>> deviceStaging; // per slot: ingest of a device slot
  std::vector<int64_t> lastKernel;    // per stream: the last CUDA kernel launched
  bool syncEach = false;              // SYNPL_CUDA_SYNC=1: check every launch
  /// CUDA graphs: per stream, the training step and the evaluation step,
  /// captured on their second run and replayed after.
  struct StepGraph {
    int runs = 0;
    CUgraphExec exec = nullptr;
    bool failed = false; // capture or instantiation failed: launch directly
  };
  bool useGraphs = false;
  std::vector<bool> graphable;            // per stream: device work only
  std::vector<StepGraph> graphs;          // [2 * stream + evaluating]
  /// The stream's entries of a step, in order; `capturing` leaves out the
  /// plan's events (a step is synchronized as a whole anyway).
  int32_t issueEntries(int64_t stream, bool train, bool capturing);
  /// The step's device work as a graph: captured, instantiated, launched.
  int32_t runGraph(int64_t stream, bool train, bool &ran);

  /// Steps in flight, oldest first. On the host a step is done when step()
  /// returns; on a GPU (with `overlap`) its stream runs on while the next
  /// step's control program, gather and launches proceed on the host, and
  /// the step is retired (synchronized, its reports read) when its stream
  /// is needed again or the run needs the numbers.
  struct InFlight {
    int64_t stream;
    int64_t batch; ///< the batch of its epoch (0-based)
  };
  /// Where retired steps' reports go.
  struct Tally {
    bool train = true;
    double lossSum = 0;
    int64_t lossCount = 0;
    double correct = 0;
    int64_t retired = 0;  ///< steps retired into this tally
    int64_t stepBase = 0; ///< update steps before the tally's first
    int64_t epoch = 0;
    synpl_rt_progress *progress = nullptr;
  };
  std::deque<InFlight> inFlight;
  Tally *tally = nullptr;
  /// --metrics FILE (disabled without it).
  MetricsLog metrics;
  bool overlap = false;
  /// With `overlap`, the GPU still runs steps one after the other: each
  /// step's stream waits for the previous step's `stepDone` event (on top
  /// of the plan's own record/wait points).
  std::vector<CUevent> stepDone; // per stream
  int64_t lastStream = -1;
  /// Retires the oldest step in flight: waits for its stream, reads its
  /// reports into `tally` (a diverged loss is an error).
  int32_t retireOne();
  int32_t drain() {
    while (!inFlight.empty())
      if (int32_t st = retireOne())
        return st;
    return SYNPL_RT_OK;
  }
  /// Retires steps until none in flight uses `stream`.
  int32_t freeStream(int64_t stream) {
    for (;;) {
      bool busy = false;
      for (const InFlight &f : inFlight)
        busy |= f.stream == stream;
      if (!busy)
        return SYNPL_RT_OK;
      if (int32_t st = retireOne())
        return st;
    }
  }
  /// A step of the run: dispatched, stepped, in flight (retired at once
  /// unless `overlap`).
  int32_t runStep(int64_t batch, bool train) {
    int64_t stream;
    if (int32_t st = dispatchAndStep(batch, train, stream))
      return st;
    inFlight.push_back({stream, batch});
    return overlap ? SYNPL_RT_OK : drain();
  }
};

} // namespace synpl::rt::exec

#endif // SYNPL_RUNTIME_EXECUTORIMPL_H
