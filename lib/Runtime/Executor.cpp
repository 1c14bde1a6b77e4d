//===- Executor.cpp - Binds a compiled plan and trains --------------------===//
//
// synpl_rt_main: the host executor every compiled program's main() calls.
// It reads the metadata tables (include/synpl/Runtime/PlanFormat.h),
// checks them, allocates the pools, fills the inits, decodes the data of
// every ingest, and runs steps:
//
//   1. the control program decides the step: the runtime pushes the batch
//      index into its batch queue, calls it, and pops the launch descriptor
//      (bits 32 and up: the stream, low bits: the batch);
//   2. the ingests gather that batch of the epoch's sample order into their
//      slots (freelist slots are popped from their pool for the step);
//   3. the stream's entries run in order: kernels through the worker pool
//      (parallel_for over their split range; one chunk per thread for a
//      kernel with a grain), transfers as copies. On the
//      host one step finishes before the next begins, which every record /
//      wait pair of the plan allows;
//   4. the reports are read: `loss` (mean per epoch), `correct` (argmax
//      hits, for test accuracy).
//
// Evaluation runs the step on the test split with the actor state
// read-only, and only the entries the `correct` report depends on: the
// forward pass, not the backward pass or the handler's update. The test split's files are the training files' names with
// the prefix `train` replaced by `t10k` (the IDX naming of MNIST and
// Fashion-MNIST), in the same folder (the plan's `evaluate` prefix replaces
// `t10k`).
//
// A plan with CUDA kernels (header `device_arch` > 0) runs them on a GPU
// through the driver API (Cuda.cpp, loaded only then): device pools are
// device memory, host pools are pinned, every plan stream is a CUstream,
// the plan's record/wait points are CUevents, kernels are cuLaunchKernel of
// the embedded module's entries, transfers cuMemcpy*Async on the step's
// stream; a host kernel or an h2h copy first waits for the stream. Each
// stream keeps its freelist blocks; a step is in flight while the host
// prepares the next one and is retired (synchronized, its reports read)
// when its stream is needed again; the GPU still runs steps in order. A
// stream whose step is device work only is captured once as a CUDA graph
// and replayed. Inits are computed on the
// host and copied in; reports and checkpoints copy device slots back. See
// docs/runtime-cuda.md.
//
// The training loop's defaults (epochs, evaluation split, checkpoint
// interval) come from the plan header; the command line overrides them.
// Checkpoints (Checkpoint.cpp) hold the position in the run, the data order
// and every actor-state slot and control region; --resume continues at the
// exact next batch. See docs/training.md.
//
//===----------------------------------------------------------------------===//
#include "ExecutorImpl.h"
#include "Internal.h"
#include "synpl/Runtime/PlanFormat.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <csignal>

#include <sys/stat.h>
#include <unistd.h>

using namespace synpl::rt;

namespace {

//===----------------------------------------------------------------------===//
// Control-code ABI
//===----------------------------------------------------------------------===//

/// A queue region's first 8 bytes hold its synpl_rt_queue handle.
synpl_rt_queue *queueOf(void *region) {
  synpl_rt_queue *q;
  std::memcpy(&q, region, sizeof q);
  return q;
}

} // namespace

extern "C" void synpl_rt_ctl_queue_push(void *region, uint64_t value) {
  synpl_rt_queue *q = queueOf(region);
  uint8_t desc[8];
  std::memcpy(desc, &value, 8); // little-endian: the low bytes first
  if (synpl_rt_queue_push(q, desc) != SYNPL_RT_OK)
    synpl_rt_check(fail(SYNPL_RT_ERR_CLOSED, "control program pushed into a "
                                             "closed queue"));
}

extern "C" uint64_t synpl_rt_ctl_queue_pop(void *region) {
  synpl_rt_queue *q = queueOf(region);
  uint8_t desc[8] = {};
  if (synpl_rt_queue_pop(q, desc) != SYNPL_RT_OK)
    synpl_rt_check(fail(SYNPL_RT_ERR_CLOSED, "control program popped from an "
                                             "empty, closed queue"));
  uint64_t v = 0;
  std::memcpy(&v, desc, sizeof v);
  return v;
}

namespace synpl::rt::exec {


int32_t badTable(const char *what) {
  return fail(SYNPL_RT_ERR_FORMAT, "the program's plan tables are corrupt: %s",
              what);
}

template <typename T>
int32_t bindSection(const int64_t *table, const synpl_plan_header *h, int s,
                    Section<T> &out) {
  int64_t off = h->section[s][0], count = h->section[s][1];
  if (off < SYNPL_PLAN_HEADER_WORDS || count < 0 || count > (1 << 24))
    return badTable("section bounds");
  out.data = reinterpret_cast<const T *>(table + off);
  out.size = count;
  return SYNPL_RT_OK;
}

/// Reads and checks the tables: every index in range, every string inside
/// the string blob (its size is the last string's end; we check offsets
/// against the table's own largest string offset + NUL search bound).
int32_t loadPlan(const synpl_plan_desc *desc, Plan &p) {
  if (!desc || !desc->table || !desc->strings || !desc->kernels)
    return badTable("missing descriptor");
  p.desc = desc;
  p.header = reinterpret_cast<const synpl_plan_header *>(desc->table);
  p.strings = desc->strings;
  if (p.header->magic != SYNPL_PLAN_MAGIC)
    return badTable("bad magic");
  if (p.header->version != SYNPL_PLAN_VERSION)
    return fail(SYNPL_RT_ERR_FORMAT,
                "the program's plan tables have version %" PRId64
                ", this runtime reads version %d (relink with a matching "
                "runtime)",
                p.header->version, SYNPL_PLAN_VERSION);
  const int64_t *t = desc->table;
  const synpl_plan_header *h = p.header;
  int32_t st = SYNPL_RT_OK;
  st |= bindSection(t, h, SYNPL_PLAN_POOLS, p.pools);
  st |= bindSection(t, h, SYNPL_PLAN_SLOTS, p.slots);
  st |= bindSection(t, h, SYNPL_PLAN_KERNELS, p.kernels);
  st |= bindSection(t, h, SYNPL_PLAN_KERNEL_ARGS, p.kernelArgs);
  st |= bindSection(t, h, SYNPL_PLAN_TRANSFERS, p.transfers);
  st |= bindSection(t, h, SYNPL_PLAN_STREAMS, p.streams);
  st |= bindSection(t, h, SYNPL_PLAN_STREAM_ENTRIES, p.entries);
  st |= bindSection(t, h, SYNPL_PLAN_EVENTS, p.events);
  st |= bindSection(t, h, SYNPL_PLAN_SYNCS, p.syncs);
  st |= bindSection(t, h, SYNPL_PLAN_INITS, p.inits);
  st |= bindSection(t, h, SYNPL_PLAN_INGESTS, p.ingests);
  st |= bindSection(t, h, SYNPL_PLAN_INGEST_FIELDS, p.ingestFields);
  st |= bindSection(t, h, SYNPL_PLAN_REPORTS, p.reports);
  st |= bindSection(t, h, SYNPL_PLAN_REGIONS, p.regions);
  st |= bindSection(t, h, SYNPL_PLAN_PROGRAMS, p.programs);
  st |= bindSection(t, h, SYNPL_PLAN_PROGRAM_REGIONS, p.programRegions);
  if (st != SYNPL_RT_OK)
    return SYNPL_RT_ERR_FORMAT;
  auto in = [](int64_t i, int64_t n) { return i >= 0 && i < n; };
  for (int64_t i = 0; i < p.slots.size; ++i) {
    const synpl_plan_slot &s = p.slots[i];
    if (!in(s.pool, p.pools.size) || s.size <= 0)
      return badTable("slot pool");
    const synpl_plan_pool &pool = p.pools[s.pool];
    if (s.offset >= 0 && s.offset + s.size > pool.capacity)
      return badTable("slot outside its pool");
    if (s.offset < 0 && pool.kind != SYNPL_PLAN_POOL_FREELIST)
      return badTable("unplaced slot outside a freelist pool");
  }
  bool hasCuda = false;
  for (int64_t k = 0; k < p.kernels.size; ++k) {
    const synpl_plan_kernel &kr = p.kernels[k];
    bool cuda = kr.target == SYNPL_PLAN_TARGET_CUDA;
    hasCuda |= cuda;
    if (kr.num_args < 0 || kr.first_arg < 0 ||
        kr.first_arg + kr.num_args > p.kernelArgs.size || kr.num_args > SYNPL_PLAN_MAX_KERNEL_ARGS ||
        (kr.target != SYNPL_PLAN_TARGET_HOST && !cuda) || kr.grain < 1)
      return badTable("kernel");
    if (!cuda && (kr.iterations < 1 || !desc->kernels[k]))
      return badTable("host kernel without a function");
    if (cuda && (kr.entry < 0 || kr.shared_mem < 0 || kr.grid[0] < 1 ||
                 kr.grid[1] < 1 || kr.grid[2] < 1 || kr.block[0] < 1 ||
                 kr.block[1] < 1 || kr.block[2] < 1 ||
                 (desc->kernels[k] && kr.iterations < 1)))
      return badTable("CUDA kernel launch");
    for (int64_t a = 0; a < kr.num_args; ++a)
      if (!in(p.kernelArgs[kr.first_arg + a].slot, p.slots.size))
        return badTable("kernel argument");
  }
  for (int64_t i = 0; i < p.transfers.size; ++i) {
    const synpl_plan_transfer &tx = p.transfers[i];
    if (!in(tx.src, p.slots.size) || !in(tx.dst, p.slots.size) ||
        tx.bytes > p.slots[tx.src].size || tx.bytes > p.slots[tx.dst].size)
      return badTable("transfer");
  }
  for (int64_t s = 0; s < p.streams.size; ++s) {
    const synpl_plan_stream &sr = p.streams[s];
    if (sr.first_entry < 0 || sr.first_entry + sr.num_entries > p.entries.size)
      return badTable("stream");
  }
  for (int64_t e = 0; e < p.entries.size; ++e) {
    const synpl_plan_entry &en = p.entries[e];
    if (!in(en.index, en.kind == SYNPL_PLAN_ENTRY_KERNEL ? p.kernels.size
                                                         : p.transfers.size))
      return badTable("stream entry");
  }
  for (int64_t i = 0; i < p.inits.size; ++i) {
    if (!in(p.inits[i].slot, p.slots.size))
      return badTable("init");
    const synpl_plan_slot &s = p.slots[p.inits[i].slot];
    if ((p.inits[i].kind == SYNPL_PLAN_INIT_PLANNED_STEPS ||
         p.inits[i].kind == SYNPL_PLAN_INIT_TRAINING_MODE) &&
        (s.element != SYNPL_PLAN_F32 || s.elements != 1 || s.size < 4))
      return badTable(p.inits[i].kind == SYNPL_PLAN_INIT_PLANNED_STEPS
                          ? "planned_steps init of a slot that is not one f32"
                          : "training_mode init of a slot that is not one f32");
  }
  for (int64_t i = 0; i < p.ingests.size; ++i) {
    const synpl_plan_ingest &g = p.ingests[i];
    if (g.first_field < 0 || g.num_fields < 1 ||
        g.first_field + g.num_fields > p.ingestFields.size || g.batch < 1 ||
        (g.format != SYNPL_PLAN_FORMAT_IDX && g.format != SYNPL_PLAN_FORMAT_TEXT) ||
        g.stride < 1)
      return badTable("ingest");
  }
  for (int64_t i = 0; i < p.ingestFields.size; ++i)
    if (!in(p.ingestFields[i].slot, p.slots.size) || p.ingestFields[i].shift < 0 ||
        p.ingestFields[i].shift > 1)
      return badTable("ingest field");
  for (int64_t i = 0; i < p.reports.size; ++i)
    if (!in(p.reports[i].slot, p.slots.size) ||
        p.slots[p.reports[i].slot].element != SYNPL_PLAN_F32)
      return badTable("report");
  for (int64_t i = 0; i < p.programs.size; ++i) {
    const synpl_plan_program &pr = p.programs[i];
    if (pr.first_region < 0 ||
        pr.first_region + pr.num_regions > p.programRegions.size ||
        pr.num_regions > 8 || !desc->programs[i])
      return badTable("program");
    for (int64_t r = 0; r < pr.num_regions; ++r)
      if (!in(p.programRegions[pr.first_region + r].region, p.regions.size))
        return badTable("program region");
  }
  if (p.header->pipeline_depth < 1 || p.streams.size < 1)
    return badTable("no stream");
  if (hasCuda != (p.header->device_arch > 0) ||
      (hasCuda && !desc->device_ptx && !desc->device_cubin))
    return badTable("CUDA kernels without their module");
  for (int64_t i = 0; i < p.syncs.size; ++i) {
    const synpl_plan_sync &sy = p.syncs[i];
    if (!in(sy.event, p.events.size) || !in(sy.stream, p.streams.size) ||
        !in(sy.entry, p.streams[sy.stream].num_entries))
      return badTable("sync");
  }
  return SYNPL_RT_OK;
}

int64_t elementBytes(int64_t element) {
  switch (element) {
  case SYNPL_PLAN_F64:
  case SYNPL_PLAN_I64:
    return 8;
  case SYNPL_PLAN_F32:
  case SYNPL_PLAN_I32:
    return 4;
  case SYNPL_PLAN_F16:
  case SYNPL_PLAN_BF16:
  case SYNPL_PLAN_I16:
    return 2;
  default:
    return 1;
  }
}


void usage(const char *argv0, const Plan *p) {
  const char *evalSplit =
      p && p->header->evaluate >= 0 ? p->str(p->header->evaluate) : "t10k";
  bool evalNone = !std::strcmp(evalSplit, "none");
  std::printf(
      "usage: %s [options]\n\n"
      "Trains the compiled program%s%s%s on this host and prints, after each "
      "epoch,\n"
      "  epoch=E loss=L test_accuracy=A samples_per_s=S\n"
      "(L: the epoch's mean training loss; A: the fraction of the test split\n"
      "classified right; S: training samples per second). Progress lines go "
      "to stderr.\n\n"
      "options:\n"
      "  --epochs N        epochs to train (default 1)\n"
      "  --data DIR        read every data file from DIR (same file names as\n"
      "                    compiled in; required when a field was compiled\n"
      "                    without a path: field F is then DIR/train-F-idxN-\n"
      "                    ubyte[.gz]); the test split is the files named\n"
      "                    t10k-* next to the train-* ones\n"
      "  --threads N       spread every kernel over N threads (default: all\n"
      "                    cores, or SYNPL_NUM_THREADS, and each kernel runs\n"
      "                    spread or on one thread, whichever its first calls\n"
      "                    measure faster)\n"
      "  --steps N         at most N training steps per epoch\n"
      "  --eval-batches N  at most N test batches per evaluation (a text\n"
      "                    program: exactly N validation batches, default 20)\n"
      "  --report-every N  a text program: a step= line every N steps\n"
      "                    (default: a fifth of the run)\n"
      "  --no-eval         skip evaluation (test_accuracy=nan)\n"
      "  --progress SECS   seconds between progress lines (default 1; 0: every "
      "step)\n"
      "  --quiet           no progress lines\n"
      "  --profile         print a per-kernel time table at the end (stderr)\n"
      "  --no-cuda-graphs  on a GPU, launch every kernel of every step (by\n"
      "                    default a step is captured once as a CUDA graph\n"
      "                    and replayed; also SYNPL_CUDA_GRAPHS=0)\n"
      "  --checkpoint FILE write checkpoints to FILE (atomically: FILE.tmp,\n"
      "                    fsync, rename) at the end of every epoch and every\n"
      "                    --checkpoint-every steps (default FILE when that is\n"
      "                    above 0: <this program>.ckpt)\n"
      "  --checkpoint-every N  a checkpoint every N update steps (0: at epoch\n"
      "                    ends only; default: the compiled train loop's, %" PRId64 ")\n"
      "  --resume FILE     continue the run a checkpoint stopped: same program,\n"
      "                    same data, same --steps; at the exact next batch\n"
      "  --save-weights FILE  at the end, write the final state (the checkpoint\n"
      "                    format; --resume reads it)\n"
      "  --help            this text\n"
      "\nThe compiled train loop: %" PRId64 " epoch(s), %s%s%s.\n"
      "Testing aid: SYNPL_RT_KILL_AFTER_STEPS=N makes the program SIGKILL itself\n"
      "after update step N (after that step's checkpoint, if any).\n",
      argv0, p ? " (plan @" : "", p ? p->str(p->header->name) : "",
      p ? ")" : "", p ? p->header->checkpoint_every : 0,
      p && p->header->epochs > 0 ? p->header->epochs : 1,
      evalNone ? "no evaluation" : "evaluation on the ",
      evalNone ? "" : evalSplit, evalNone ? "" : " split");
  if (p && p->header->device_arch > 0)
    std::printf(
        "\nIts kernels run on a CUDA GPU (compute capability %d.%d or newer, a\n"
        "driver of CUDA %d.%d or newer), loaded at start-up from libcuda.so.1\n"
        "(SYNPL_CUDA_DRIVER names another). SYNPL_CUDA_SYNC=1 checks every launch;\n"
        "SYNPL_CUDA_GRAPHS=0 and SYNPL_CUDA_OVERLAP=0 turn off step graphs and\n"
        "the overlap of the host's and the GPU's work. See docs/runtime-cuda.md.\n",
        (int)(p->header->device_arch / 10), (int)(p->header->device_arch % 10),
        (int)(p->header->min_driver / 1000), (int)(p->header->min_driver % 1000 / 10));
}

bool parseInt(const char *s, int64_t &out) {
  if (!s || !*s)
    return false;
  char *end = nullptr;
  long long v = std::strtoll(s, &end, 10);
  if (*end || v < 0)
    return false;
  out = v;
  return true;
}

/// 0: run, 1: exit 0 (help), 2: exit 2 (bad usage).
int parseOptions(int argc, char **argv, Options &o, const Plan &plan) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *&v) {
      size_t eq = a.find('=');
      if (eq != std::string::npos) {
        v = argv[i] + eq + 1;
        a = a.substr(0, eq);
        return true;
      }
      if (i + 1 >= argc)
        return false;
      v = argv[++i];
      return true;
    };
    const char *v = nullptr;
    if (a == "--help" || a == "-h") {
      usage(argv[0], &plan);
      return 1;
    }
    if (a == "--quiet") {
      o.quiet = true;
      continue;
    }
    if (a == "--profile") {
      o.profile = true;
      continue;
    }
    if (a == "--no-cuda-graphs") {
      o.noGraphs = true;
      continue;
    }
    if (a == "--no-eval") {
      o.evaluate = false;
      continue;
    }
    std::string name = a.substr(0, a.find('='));
    bool ok = true;
    if (name == "--epochs") {
      ok = value(v) && parseInt(v, o.epochs) && o.epochs >= 1;
      o.epochsGiven = true;
    } else if (name == "--checkpoint-every")
      ok = value(v) && parseInt(v, o.checkpointEvery);
    else if (name == "--checkpoint" || name == "--resume" || name == "--save-weights") {
      ok = value(v) && *v;
      if (ok)
        (name == "--checkpoint" ? o.checkpointPath
         : name == "--resume"   ? o.resumePath
                                : o.saveWeightsPath) = v;
    }
    else if (name == "--data") {
      ok = value(v) && *v;
      if (ok)
        o.dataDir = v;
    }
    else if (name == "--threads")
      ok = value(v) && parseInt(v, o.threads) && o.threads >= 1;
    else if (name == "--steps")
      ok = value(v) && parseInt(v, o.maxSteps) && o.maxSteps >= 1;
    else if (name == "--eval-batches")
      ok = value(v) && parseInt(v, o.evalBatches) && o.evalBatches >= 1;
    else if (name == "--report-every")
      ok = value(v) && parseInt(v, o.reportEvery) && o.reportEvery >= 1;
    else if (name == "--progress") {
      ok = value(v);
      if (ok) {
        char *end = nullptr;
        o.progressInterval = std::strtod(v, &end);
        ok = *v && !*end && o.progressInterval >= 0;
      }
    } else {
      std::fprintf(stderr, "%s: error: unknown option '%s' (see --help)\n",
                   argv[0], argv[i]);
      return 2;
    }
    if (!ok) {
      bool path = name == "--data" || name == "--checkpoint" ||
                  name == "--resume" || name == "--save-weights";
      std::fprintf(stderr, "%s: error: option '%s' needs a %s value\n",
                   argv[0], name.c_str(),
                   path ? "non-empty"
                   : name == "--checkpoint-every" ? "non-negative integer"
                                                  : "positive");
      return 2;
    }
  }
  // The compiled train loop's defaults, where the command line is silent.
  const synpl_plan_header &h = *plan.header;
  if (!o.epochsGiven && h.epochs > 0)
    o.epochs = h.epochs;
  if (o.maxSteps < 0 && h.steps > 0)
    o.maxSteps = h.steps;
  if (o.checkpointEvery < 0)
    o.checkpointEvery = std::max<int64_t>(0, h.checkpoint_every);
  if (h.evaluate >= 0) {
    o.testPrefix = plan.str(h.evaluate);
    if (o.testPrefix == "none")
      o.evaluate = false;
  }
  if (o.checkpointPath.empty() && o.checkpointEvery > 0)
    o.checkpointPath = std::string(argv[0]) + ".ckpt";
  return 0;
}

//===----------------------------------------------------------------------===//
// Inits
//===----------------------------------------------------------------------===//

double uniform01(uint64_t &x) { return (splitmix64(x) >> 11) * 0x1.0p-53; }

bool fileExists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// A compiled-in data path, read from `dataDir` (same file name) when set.
/// A relative path is a field bound when the program runs (the L1 field had
/// no path): it names the file inside `dataDir`. Either way a missing file
/// is also looked for with `.gz` appended.
std::string resolve(const std::string &compiled, const std::string &dataDir) {
  std::string path = compiled;
  if (!dataDir.empty()) {
    size_t slash = compiled.rfind('/');
    path = dataDir + "/" +
           (slash == std::string::npos ? compiled : compiled.substr(slash + 1));
  }
  if (!fileExists(path) && fileExists(path + ".gz"))
    path += ".gz";
  return path;
}

/// Whether a compiled-in path is a run-time binding (relative) that needs
/// `--data DIR`.
bool needsDataDir(const std::string &compiled, const std::string &dataDir) {
  return dataDir.empty() && !compiled.empty() && compiled[0] != '/';
}

/// Fills a float slot. kaiming: He uniform, U(-b, b) with b = sqrt(6 /
/// fan_in) (variance 2 / fan_in); xavier: U(-b, b), b = sqrt(6 / (fan_in +
/// fan_out)), fan_out = elements / fan_in; uniform: U(-1, 1); normal:
/// N(0, 1) by Box-Muller. The stream of draws is splitmix64 from the seed.
int32_t runInit(const Plan &p, const synpl_plan_init &init, uint8_t *addr,
                const std::string &dataDir) {
  const synpl_plan_slot &s = p.slots[init.slot];
  int64_t n = s.elements;
  bool isF32 = s.element == SYNPL_PLAN_F32;
  switch (init.kind) {
  case SYNPL_PLAN_INIT_ZEROS:
    std::memset(addr, 0, s.size);
    return SYNPL_RT_OK;
  case SYNPL_PLAN_INIT_ONES:
  case SYNPL_PLAN_INIT_CONSTANT: {
    double v = 1.0;
    if (init.kind == SYNPL_PLAN_INIT_CONSTANT)
      std::memcpy(&v, &init.value, sizeof v);
    for (int64_t i = 0; i < n; ++i) {
      switch (s.element) {
      case SYNPL_PLAN_F32:
        reinterpret_cast<float *>(addr)[i] = (float)v;
        break;
      case SYNPL_PLAN_F64:
        reinterpret_cast<double *>(addr)[i] = v;
        break;
      case SYNPL_PLAN_I32:
        reinterpret_cast<int32_t *>(addr)[i] = (int32_t)v;
        break;
      case SYNPL_PLAN_I64:
        reinterpret_cast<int64_t *>(addr)[i] = (int64_t)v;
        break;
      case SYNPL_PLAN_I8:
      case SYNPL_PLAN_U8:
      case SYNPL_PLAN_I1:
        addr[i] = (uint8_t)v;
        break;
      default:
        return fail(SYNPL_RT_ERR_INVALID, "init of slot %s: unsupported element type",
                    p.str(s.name));
      }
    }
    return SYNPL_RT_OK;
  }
  case SYNPL_PLAN_INIT_KAIMING:
  case SYNPL_PLAN_INIT_XAVIER:
  case SYNPL_PLAN_INIT_UNIFORM:
  case SYNPL_PLAN_INIT_NORMAL: {
    if (!isF32)
      return fail(SYNPL_RT_ERR_INVALID, "init of slot %s: random inits fill f32 slots",
                  p.str(s.name));
    uint64_t state = (uint64_t)init.seed * 0xD1B54A32D192ED03ull + 1;
    double fanIn = init.fan_in > 0 ? (double)init.fan_in : 1.0;
    double bound = 1.0;
    if (init.kind == SYNPL_PLAN_INIT_KAIMING)
      bound = std::sqrt(6.0 / fanIn);
    else if (init.kind == SYNPL_PLAN_INIT_XAVIER)
      bound = std::sqrt(6.0 / (fanIn + (double)n / fanIn));
    float *f = reinterpret_cast<float *>(addr);
    for (int64_t i = 0; i < n; ++i) {
      if (init.kind == SYNPL_PLAN_INIT_NORMAL) {
        double u1 = uniform01(state), u2 = uniform01(state);
        f[i] = (float)(std::sqrt(-2.0 * std::log(u1 + 0x1.0p-60)) *
                       std::cos(6.283185307179586 * u2));
      } else {
        f[i] = (float)((2.0 * uniform01(state) - 1.0) * bound);
      }
    }
    return SYNPL_RT_OK;
  }
  case SYNPL_PLAN_INIT_PLANNED_STEPS:
    return SYNPL_RT_OK; // filled by fillPlannedSteps once the data is open
  case SYNPL_PLAN_INIT_TRAINING_MODE: {
    float one = 1.0f; // a run starts training (setTrainingMode switches)
    std::memcpy(addr, &one, sizeof one);
    return SYNPL_RT_OK;
  }
  case SYNPL_PLAN_INIT_DECODE_IDX: {
    if (init.path < 0)
      return badTable("decode_idx without a path");
    std::string path = resolve(p.str(init.path), dataDir);
    synpl_rt_idx idx;
    if (int32_t st = synpl_rt_idx_load(path.c_str(), &idx))
      return st;
    int32_t st = SYNPL_RT_OK;
    if ((int64_t)idx.bytes != s.size)
      st = fail(SYNPL_RT_ERR_FORMAT, "%s: holds %" PRIu64 " bytes of data, slot %s needs %" PRId64,
                path.c_str(), idx.bytes, p.str(s.name), s.size);
    else
      std::memcpy(addr, idx.data, idx.bytes);
    synpl_rt_idx_free(&idx);
    return st;
  }
  }
  return badTable("init kind");
}



/// The test split's file for a training file: `train` -> `prefix` (t10k by
/// default) in the file name; "" when the name does not start with `train`.
std::string testPathOf(const std::string &trainPath, const std::string &prefix) {
  size_t slash = trainPath.rfind('/');
  size_t base = slash == std::string::npos ? 0 : slash + 1;
  if (trainPath.compare(base, 5, "train") != 0)
    return "";
  std::string test = trainPath.substr(0, base) + prefix + trainPath.substr(base + 5);
  // train-x.gz <-> <prefix>-x, and the other way round.
  if (!fileExists(test)) {
    if (fileExists(test + ".gz"))
      return test + ".gz";
    if (test.size() > 3 && test.compare(test.size() - 3, 3, ".gz") == 0 &&
        fileExists(test.substr(0, test.size() - 3)))
      return test.substr(0, test.size() - 3);
  }
  return test;
}


/// The samples of an integer IDX file read into a float field: unsigned
/// bytes (pixels) are scaled to [0, 1] (x / 255), other integers keep their
/// value. This is the data-binding rule of docs/data-binding.md.
void convertToFloat(Field &field) {
  const synpl_rt_idx &idx = field.idx;
  field.converted.resize(idx.elements);
  for (uint64_t i = 0; i < idx.elements; ++i) {
    switch (idx.type) {
    case SYNPL_RT_IDX_U8:
      field.converted[i] = (float)idx.data[i] * (1.0f / 255.0f);
      break;
    case SYNPL_RT_IDX_I8:
      field.converted[i] = (float)(int8_t)idx.data[i];
      break;
    default: {
      int32_t v;
      std::memcpy(&v, idx.data + 4 * i, 4);
      field.converted[i] = (float)v;
    }
    }
  }
}

/// Decodes every field of a split and checks it against its slot.
int32_t openSplit(const Plan &p, const synpl_plan_ingest &g,
                  const std::vector<std::string> &paths, Split &split) {
  for (int64_t f = 0; f < g.num_fields; ++f) {
    const synpl_plan_ingest_field &fd = p.ingestFields[g.first_field + f];
    const synpl_plan_slot &slot = p.slots[fd.slot];
    Field field;
    field.slot = fd.slot;
    field.path = paths[f];
    // A float field takes any IDX element type (converted below): only the
    // file's rank is checked here.
    bool floatSlot = slot.element == SYNPL_PLAN_F32;
    if (int32_t st = synpl_rt_idx_load_expect(
            field.path.c_str(), floatSlot ? 0 : (uint32_t)fd.magic, &field.idx))
      return st;
    if (floatSlot && (field.idx.magic & 0xff) != ((uint64_t)fd.magic & 0xff)) {
      int32_t st = fail(SYNPL_RT_ERR_FORMAT,
                        "%s: an IDX file of %u dimensions, but field %s reads "
                        "samples of %u (the count, then the sample's dimensions)",
                        field.path.c_str(), field.idx.magic & 0xff, p.str(slot.name),
                        (unsigned)(fd.magic & 0xff));
      synpl_rt_idx_free(&field.idx);
      return st;
    }
    int64_t perSample = slot.elements / g.batch;
    int64_t count = field.idx.ndims ? field.idx.dims[0] : 0;
    int64_t sampleElems = count ? (int64_t)(field.idx.elements / count) : 0;
    int64_t eb = elementBytes(slot.element);
    bool typeOk = (field.idx.type == SYNPL_RT_IDX_U8 &&
                   (slot.element == SYNPL_PLAN_U8 || slot.element == SYNPL_PLAN_I8)) ||
                  (field.idx.type == SYNPL_RT_IDX_I8 && slot.element == SYNPL_PLAN_I8) ||
                  (field.idx.type == SYNPL_RT_IDX_I32 && slot.element == SYNPL_PLAN_I32) ||
                  (floatSlot && (field.idx.type == SYNPL_RT_IDX_F32 ||
                                 field.idx.type == SYNPL_RT_IDX_U8 ||
                                 field.idx.type == SYNPL_RT_IDX_I8 ||
                                 field.idx.type == SYNPL_RT_IDX_I32));
    int32_t st = SYNPL_RT_OK;
    if (!count)
      st = fail(SYNPL_RT_ERR_FORMAT, "%s: holds no samples", field.path.c_str());
    else if (!typeOk)
      st = fail(SYNPL_RT_ERR_FORMAT,
                "%s: IDX element type 0x%02x does not match slot %s", field.path.c_str(),
                field.idx.type, p.str(slot.name));
    else if (sampleElems != perSample)
      st = fail(SYNPL_RT_ERR_FORMAT,
                "%s: samples of %" PRId64 " elements, but the program reads %" PRId64
                " per sample into %s",
                field.path.c_str(), sampleElems, perSample, p.str(slot.name));
    else if (f > 0 && count != split.samples)
      st = fail(SYNPL_RT_ERR_FORMAT, "%s: %" PRId64 " samples, but %s has %" PRId64,
                field.path.c_str(), count, split.fields[0].path.c_str(), split.samples);
    field.sampleBytes = perSample * eb;
    if (!st && fd.classes > 0 && field.idx.type == SYNPL_RT_IDX_U8)
      for (uint64_t i = 0; i < field.idx.elements; ++i)
        if (field.idx.data[i] >= fd.classes) {
          st = fail(SYNPL_RT_ERR_FORMAT,
                    "%s: label %u of sample %" PRIu64 " is out of range [0, %" PRId64 ")",
                    field.path.c_str(), (unsigned)field.idx.data[i],
                    perSample ? i / perSample : i, fd.classes);
          break;
        }
    if (!st && floatSlot && field.idx.type != SYNPL_RT_IDX_F32)
      convertToFloat(field);
    if (st) {
      synpl_rt_idx_free(&field.idx);
      return st;
    }
    split.samples = count;
    split.fields.push_back(field);
  }
  if (split.samples > UINT32_MAX)
    return fail(SYNPL_RT_ERR_FORMAT, "%s: too many samples", split.fields[0].path.c_str());
  split.order.resize(split.samples);
  for (int64_t i = 0; i < split.samples; ++i)
    split.order[i] = (uint32_t)i;
  return SYNPL_RT_OK;
}

void closeSplit(Split &s) {
  for (Field &f : s.fields)
    synpl_rt_idx_free(&f.idx);
  s.fields.clear();
}

int64_t numBatches(const Split &s, int64_t batch, bool dropLast) {
  return dropLast ? s.samples / batch : (s.samples + batch - 1) / batch;
}

/// Gathers batch `b` into the slots: rows past the end of the split are
/// zero (a label slot's padding is 255, outside any class).
void gather(const Split &s, int64_t batch, int64_t b,
            const std::vector<uint8_t *> &addr) {
  for (size_t f = 0; f < s.fields.size(); ++f) {
    const Field &fd = s.fields[f];
    uint8_t *dst = addr[f];
    for (int64_t r = 0; r < batch; ++r) {
      int64_t i = b * batch + r;
      if (i < s.samples)
        std::memcpy(dst + r * fd.sampleBytes,
                    fd.samples() + (uint64_t)s.order[i] * fd.step(),
                    fd.sampleBytes);
      else
        std::memset(dst + r * fd.sampleBytes, fd.sampleBytes == 1 ? 0xFF : 0,
                    fd.sampleBytes);
    }
  }
}

//===----------------------------------------------------------------------===//
// The executor
//===----------------------------------------------------------------------===//


Executor::~Executor() {
  if (cuda) {
    for (CUstream st : cuStreams)
      if (st)
        cuda->cuStreamSynchronize(st);
    for (StepGraph &g : graphs)
      if (g.exec)
        cuda->cuGraphExecDestroy(g.exec);
    for (CUstream st : cuStreams)
      if (st)
        cuda->cuStreamDestroy(st);
    for (CUevent ev : cuEvents)
      if (ev)
        cuda->cuEventDestroy(ev);
    for (CUevent ev : stepDone)
      if (ev)
        cuda->cuEventDestroy(ev);
    for (CUdeviceptr m : deviceMemory)
      cuda->cuMemFree(m);
    for (void *h : pinnedHost)
      cuda->cuMemHostUnregister(h);
  }
  for (Ingest &g : ingests) {
    closeSplit(g.train);
    closeSplit(g.test);
  }
  for (synpl_rt_queue *q : queues)
    synpl_rt_queue_destroy(q);
  for (void *m : regionMem)
    alignedFree(m);
  for (synpl_rt_region *r : poolRegions)
    if (r)
      synpl_rt_region_destroy(r);
  if (workers)
    synpl_rt_workers_destroy(workers);
}

int32_t Executor::allocatePools() {
  depth = std::max<int64_t>(1, std::min<int64_t>(p.header->pipeline_depth,
                                                 p.streams.size));
  addr.assign(p.streams.size, std::vector<uint8_t *>(p.slots.size, nullptr));
  for (int64_t i = 0; i < p.pools.size; ++i) {
    const synpl_plan_pool &pool = p.pools[i];
    synpl_rt_region *r = nullptr;
    if (cuda && pool.space == SYNPL_PLAN_SPACE_DEVICE) {
      poolRegions.push_back(nullptr);
      if (int32_t st = allocateDevicePool(i))
        return st;
      continue;
    }
    if (pool.kind == SYNPL_PLAN_POOL_FREELIST) {
      // One block per run-time-placed slot per stream, each as large as the
      // pool's largest slot: a step pops its blocks and pushes them back.
      int64_t largest = 64, count = 0;
      for (int64_t s = 0; s < p.slots.size; ++s)
        if (p.slots[s].pool == i) {
          largest = std::max(largest, p.slots[s].size);
          ++count;
        }
      r = synpl_rt_region_create_pool((uint64_t)largest,
                                      (uint64_t)std::max<int64_t>(1, count * p.streams.size));
    } else if (pool.kind == SYNPL_PLAN_POOL_PERSISTENT) {
      r = synpl_rt_region_create_persistent((uint64_t)std::max<int64_t>(pool.capacity, 64));
    } else {
      r = synpl_rt_region_create_arena((uint64_t)std::max<int64_t>(pool.capacity, 64));
    }
    if (!r)
      return synpl_rt_last_status();
    poolRegions.push_back(r);
    uint8_t *base = static_cast<uint8_t *>(synpl_rt_region_base(r));
    if (cuda && pool.kind == SYNPL_PLAN_POOL_FREELIST) {
      // On a GPU every stream keeps its blocks: a step's freelist slots
      // sit where its transfers (and a captured graph) read them; the step
      // ends synchronized, so the next step on the stream finds them free.
      for (int64_t s = 0; s < p.slots.size; ++s)
        if (p.slots[s].pool == i && p.slots[s].offset < 0)
          for (auto &perStream : addr) {
            void *b = synpl_rt_region_alloc(r, (uint64_t)p.slots[s].size);
            if (!b)
              return synpl_rt_last_status();
            perStream[s] = static_cast<uint8_t *>(b);
          }
    }
    if (cuda) {
      // Host pools of a GPU plan are the staging of its transfers: pinned,
      // so cuMemcpy*Async runs as DMA without the driver's bounce buffer.
      // Whole pages (the region is a page-aligned mapping), as older
      // drivers require.
      uint64_t bytes = (synpl_rt_region_capacity(r) + 4095) & ~(uint64_t)4095;
      if (int32_t st = cuda->check(
              cuda->cuMemHostRegister(base, bytes, cu::MEMHOSTREGISTER_PORTABLE),
              "cannot pin %llu bytes of host pool %s", (unsigned long long)bytes,
              p.str(pool.name)))
        return st;
      pinnedHost.push_back(base);
    }
    if (pool.kind == SYNPL_PLAN_POOL_ARENA) {
      // Transient memory starts as NaN bytes, so a kernel reading a slot
      // before its producer wrote it shows up in the numbers.
      std::memset(base, 0xFF, synpl_rt_region_capacity(r));
    }
    for (int64_t s = 0; s < p.slots.size; ++s)
      if (p.slots[s].pool == i && p.slots[s].offset >= 0)
        for (auto &perStream : addr)
          perStream[s] = base + p.slots[s].offset;
  }
  return SYNPL_RT_OK;
}

int32_t Executor::setUpCuda() {
  cuda = std::make_unique<CudaDevice>();
  if (int32_t st = cuda->open(p.header->device_arch, p.header->min_driver))
    return st;
  if (const char *e = std::getenv("SYNPL_CUDA_SYNC"))
    syncEach = *e && std::strcmp(e, "0") != 0;
  if (!o.quiet)
    std::fprintf(stderr, "synpl: running the kernels on %s (compute capability "
                         "%d.%d, driver CUDA %d.%d)\n",
                 cuda->name, cuda->ccMajor, cuda->ccMinor,
                 cuda->driverVersion / 1000, cuda->driverVersion % 1000 / 10);
  slotOnDevice.assign(p.slots.size, false);
  for (int64_t s = 0; s < p.slots.size; ++s)
    slotOnDevice[s] = p.pools[p.slots[s].pool].space == SYNPL_PLAN_SPACE_DEVICE;
  if (int32_t st = cuda->loadModule(p.desc->device_cubin, p.desc->device_cubin_size,
                                    p.desc->device_ptx))
    return st;
  cuFunctions.assign(p.kernels.size, nullptr);
  for (int64_t k = 0; k < p.kernels.size; ++k) {
    const synpl_plan_kernel &kr = p.kernels[k];
    bool device = kr.target == SYNPL_PLAN_TARGET_CUDA;
    // A kernel reads and writes its buffers where it runs.
    for (int64_t a = 0; a < kr.num_args; ++a) {
      int64_t slot = p.kernelArgs[kr.first_arg + a].slot;
      if (slotOnDevice[slot] != device)
        return fail(SYNPL_RT_ERR_FORMAT,
                    "kernel %s runs on the %s but its buffer %s is in %s pool %s",
                    p.str(kr.name), device ? "GPU" : "host", p.str(p.slots[slot].name),
                    device ? "host" : "device", p.str(p.pools[p.slots[slot].pool].name));
    }
    if (!device)
      continue;
    if (int32_t st = cuda->function(p.str(kr.entry), p.str(kr.name), kr.shared_mem,
                                    cuFunctions[k]))
      return st;
    // The fake driver of the tests runs the host fallback instead.
    if (cuda->hasHostKernelSeam() && p.desc->kernels[k])
      cuda->registerHostKernel(p.str(kr.entry),
                               reinterpret_cast<synpl_host_kernel_fn>(p.desc->kernels[k]));
  }
  cuStreams.assign(p.streams.size, nullptr);
  for (int64_t s = 0; s < p.streams.size; ++s)
    if (int32_t st = cuda->check(cuda->cuStreamCreate(&cuStreams[s], cu::STREAM_NON_BLOCKING),
                                 "cannot create stream %s", p.str(p.streams[s].name)))
      return st;
  cuEvents.assign(p.events.size, nullptr);
  for (int64_t e = 0; e < p.events.size; ++e)
    if (int32_t st = cuda->check(cuda->cuEventCreate(&cuEvents[e], cu::EVENT_DISABLE_TIMING),
                                 "cannot create event %s", p.str(p.events[e].name)))
      return st;
  waitsBefore.assign(p.entries.size, {});
  recordsAfter.assign(p.entries.size, {});
  for (int64_t i = 0; i < p.syncs.size; ++i) {
    const synpl_plan_sync &sy = p.syncs[i];
    int64_t e = p.streams[sy.stream].first_entry + sy.entry;
    (sy.kind == SYNPL_PLAN_SYNC_WAIT ? waitsBefore : recordsAfter)[e].push_back(sy.event);
  }
  lastKernel.assign(p.streams.size, -1);
  deviceStaging.assign(p.slots.size, {});
  // CUDA graphs: a stream whose step is device work only (no host kernel,
  // no host-to-host copy, no ingest into a device slot) is captured once
  // and replayed. --profile and SYNPL_CUDA_SYNC time or check every launch.
  const char *g = std::getenv("SYNPL_CUDA_GRAPHS");
  useGraphs = cuda->hasGraphs() && !o.noGraphs && !o.profile && !syncEach &&
              !(g && !std::strcmp(g, "0"));
  bool deviceIngest = false;
  for (int64_t i = 0; i < p.ingestFields.size; ++i)
    deviceIngest |= (bool)slotOnDevice[p.ingestFields[i].slot];
  graphable.assign(p.streams.size, !deviceIngest);
  for (int64_t s = 0; s < p.streams.size; ++s) {
    const synpl_plan_stream &sr = p.streams[s];
    for (int64_t e = sr.first_entry; e < sr.first_entry + sr.num_entries; ++e) {
      const synpl_plan_entry &en = p.entries[e];
      if (en.kind == SYNPL_PLAN_ENTRY_KERNEL
              ? p.kernels[en.index].target != SYNPL_PLAN_TARGET_CUDA
              : !slotOnDevice[p.transfers[en.index].src] &&
                    !slotOnDevice[p.transfers[en.index].dst])
        graphable[s] = false;
    }
  }
  // The plan's events around a graph: waits before its first entry, records
  // after its last; a stream with a sync point inside launches one by one.
  for (int64_t i = 0; i < p.syncs.size; ++i) {
    const synpl_plan_sync &sy = p.syncs[i];
    int64_t last = p.streams[sy.stream].num_entries - 1;
    if (sy.kind == SYNPL_PLAN_SYNC_WAIT ? sy.entry != 0 : sy.entry != last)
      graphable[sy.stream] = false;
  }
  graphs.assign(2 * p.streams.size, {});
  // Steps overlap (the next step's host work while the GPU runs this one)
  // when what the host touches per step is the stream's own: the ingest's
  // staging and the reports in freelist blocks.
  const char *ov = std::getenv("SYNPL_CUDA_OVERLAP");
  overlap = !(ov && !std::strcmp(ov, "0")) && !o.profile && !syncEach;
  for (int64_t i = 0; i < p.ingestFields.size; ++i) {
    int64_t slot = p.ingestFields[i].slot;
    overlap = overlap && !slotOnDevice[slot] && p.slots[slot].offset < 0;
  }
  for (int64_t r = 0; r < p.reports.size; ++r)
    overlap = overlap && p.slots[p.reports[r].slot].offset < 0;
  for (int64_t k = 0; k < p.kernels.size; ++k)
    overlap = overlap && p.kernels[k].target == SYNPL_PLAN_TARGET_CUDA;
  if (overlap) {
    stepDone.assign(p.streams.size, nullptr);
    for (int64_t s = 0; s < p.streams.size; ++s)
      if (int32_t st = cuda->check(cuda->cuEventCreate(&stepDone[s], cu::EVENT_DISABLE_TIMING),
                                   "cannot create an event for stream %s",
                                   p.str(p.streams[s].name)))
        return st;
  }
  return SYNPL_RT_OK;
}

int32_t Executor::allocateDevicePool(int64_t i) {
  const synpl_plan_pool &pool = p.pools[i];
  if (pool.kind == SYNPL_PLAN_POOL_FREELIST) {
    // As on the host: one block per run-time-placed slot per stream, each
    // as large as the pool's largest slot (256-byte aligned).
    int64_t largest = 256, count = 0;
    for (int64_t s = 0; s < p.slots.size; ++s)
      if (p.slots[s].pool == i) {
        largest = std::max(largest, (p.slots[s].size + 255) & ~(int64_t)255);
        ++count;
      }
    int64_t blocks = std::max<int64_t>(1, count * p.streams.size);
    CUdeviceptr base = 0;
    if (int32_t st = cuda->alloc((uint64_t)(largest * blocks), p.str(pool.name), base))
      return st;
    deviceMemory.push_back(base);
    // Each stream keeps its blocks (see allocatePools).
    int64_t next = 0;
    for (int64_t s = 0; s < p.slots.size; ++s)
      if (p.slots[s].pool == i && p.slots[s].offset < 0)
        for (auto &perStream : addr)
          perStream[s] = reinterpret_cast<uint8_t *>(
              (uintptr_t)(base + (CUdeviceptr)(next++ * largest)));
    return SYNPL_RT_OK;
  }
  uint64_t bytes = (uint64_t)std::max<int64_t>(pool.capacity, 256);
  CUdeviceptr base = 0;
  if (int32_t st = cuda->alloc(bytes, p.str(pool.name), base))
    return st;
  deviceMemory.push_back(base);
  // Transient memory starts as NaN bytes, as on the host; persistent
  // memory starts at zero.
  // (cuMemsetD8 may still run when it returns: cuCtxSynchronize after it.)
  if (int32_t st = cuda->check(
          cuda->cuMemsetD8(base, pool.kind == SYNPL_PLAN_POOL_ARENA ? 0xFF : 0, bytes),
          "cannot clear pool %s", p.str(pool.name)))
    return st;
  if (int32_t st = cuda->check(cuda->cuCtxSynchronize(), "clearing pool %s",
                               p.str(pool.name)))
    return st;
  for (int64_t s = 0; s < p.slots.size; ++s)
    if (p.slots[s].pool == i && p.slots[s].offset >= 0)
      for (auto &perStream : addr)
        perStream[s] = reinterpret_cast<uint8_t *>(
            (uintptr_t)(base + (CUdeviceptr)p.slots[s].offset));
  return SYNPL_RT_OK;
}

int32_t Executor::launchCuda(int64_t k, int64_t stream) {
  const synpl_plan_kernel &kr = p.kernels[k];
  CUdeviceptr values[SYNPL_PLAN_MAX_KERNEL_ARGS];
  void *params[SYNPL_PLAN_MAX_KERNEL_ARGS];
  for (int64_t a = 0; a < kr.num_args; ++a) {
    values[a] = dptr(slotAddr(p.kernelArgs[kr.first_arg + a].slot, stream));
    params[a] = &values[a];
  }
  lastKernel[stream] = k;
  CUresult r = cuda->cuLaunchKernel(
      cuFunctions[k], (unsigned)kr.grid[0], (unsigned)kr.grid[1],
      (unsigned)kr.grid[2], (unsigned)kr.block[0], (unsigned)kr.block[1],
      (unsigned)kr.block[2], (unsigned)kr.shared_mem, cuStreams[stream], params,
      nullptr);
  if (int32_t st = cuda->check(r, "kernel %s", p.str(kr.name)))
    return st;
  return syncEach ? syncStream(stream) : SYNPL_RT_OK;
}

int32_t Executor::transferCuda(int64_t t, int64_t stream) {
  const synpl_plan_transfer &tx = p.transfers[t];
  uint8_t *src = slotAddr(tx.src, stream), *dst = slotAddr(tx.dst, stream);
  bool fromDevice = onDevice(tx.src), toDevice = onDevice(tx.dst);
  CUstream cs = cuStreams[stream];
  size_t bytes = (size_t)tx.bytes;
  CUresult r = cu::SUCCESS;
  // The slots' memory decides the copy, whatever the direction says.
  if (!fromDevice && toDevice)
    r = cuda->cuMemcpyHtoDAsync(dptr(dst), src, bytes, cs);
  else if (fromDevice && !toDevice)
    r = cuda->cuMemcpyDtoHAsync(dst, dptr(src), bytes, cs);
  else if (fromDevice && toDevice)
    r = cuda->cuMemcpyDtoDAsync(dptr(dst), dptr(src), bytes, cs);
  else {
    if (int32_t st = syncStream(stream))
      return st;
    std::memcpy(dst, src, bytes);
  }
  if (int32_t st = cuda->check(r, "transfer %s", p.str(tx.name)))
    return st;
  if (syncEach) {
    r = cuda->cuStreamSynchronize(cs);
    return cuda->check(r, "transfer %s", p.str(tx.name));
  }
  return SYNPL_RT_OK;
}

int32_t Executor::syncStream(int64_t stream) {
  CUresult r = cuda->cuStreamSynchronize(cuStreams[stream]);
  if (r == cu::SUCCESS)
    return SYNPL_RT_OK;
  if (lastKernel[stream] >= 0)
    return cuda->check(r, "kernel %s (the last launched on stream %s; "
                          "SYNPL_CUDA_SYNC=1 checks every launch)",
                       p.str(p.kernels[lastKernel[stream]].name),
                       p.str(p.streams[stream].name));
  return cuda->check(r, "stream %s", p.str(p.streams[stream].name));
}

int32_t Executor::readSlot(int64_t slot, int64_t stream, void *dst,
                           uint64_t bytes) const {
  const uint8_t *a = slotAddr(slot, stream);
  if (!onDevice(slot)) {
    std::memcpy(dst, a, bytes);
    return SYNPL_RT_OK;
  }
  return cuda->check(cuda->cuMemcpyDtoH(dst, dptr(a), bytes),
                     "cannot read slot %s from the GPU", p.str(p.slots[slot].name));
}

int32_t Executor::writeSlot(int64_t slot, int64_t stream, const void *src,
                            uint64_t bytes) {
  uint8_t *a = slotAddr(slot, stream);
  if (!onDevice(slot)) {
    std::memcpy(a, src, bytes);
    return SYNPL_RT_OK;
  }
  // The synchronous copy runs on the legacy stream, which the plan's
  // (non-blocking) streams do not wait for, and may return before its DMA
  // is done: the context's synchronization makes it visible to them.
  if (int32_t st = cuda->check(cuda->cuMemcpyHtoD(dptr(a), src, bytes),
                               "cannot write slot %s to the GPU", p.str(p.slots[slot].name)))
    return st;
  return cuda->check(cuda->cuCtxSynchronize(), "writing slot %s to the GPU",
                     p.str(p.slots[slot].name));
}

int32_t Executor::allocateRegions() {
  for (int64_t i = 0; i < p.regions.size; ++i) {
    const synpl_plan_region &r = p.regions[i];
    uint64_t bytes = (uint64_t)std::max<int64_t>(r.size, 8);
    uint64_t align = (uint64_t)std::max<int64_t>(r.align, 8);
    if (align & (align - 1))
      return badTable("region alignment");
    void *m = alignedAlloc(bytes, std::max<uint64_t>(align, 64));
    if (!m)
      return fail(SYNPL_RT_ERR_NOMEM, "control region %s: out of memory",
                  p.str(r.name));
    std::memset(m, 0, bytes);
    regionMem.push_back(m);
    if (r.queue_entry > 0) {
      uint32_t capacity = (uint32_t)std::max<int64_t>(1, r.size / r.queue_entry);
      synpl_rt_queue *q = synpl_rt_queue_create(capacity, 8, SYNPL_RT_QUEUE_SPSC);
      if (!q)
        return synpl_rt_last_status();
      queues.push_back(q);
      std::memcpy(m, &q, sizeof q);
    }
  }
  for (int64_t i = 0; i < p.programs.size; ++i) {
    const synpl_plan_program &pr = p.programs[i];
    std::vector<void *> args;
    for (int64_t r = 0; r < pr.num_regions; ++r)
      args.push_back(regionMem[p.programRegions[pr.first_region + r].region]);
    programArgs.push_back(args);
  }
  return SYNPL_RT_OK;
}

int32_t Executor::openData() {
  for (int64_t i = 0; i < p.ingests.size; ++i) {
    const synpl_plan_ingest &g = p.ingests[i];
    Ingest in;
    in.desc = &g;
    std::vector<std::string> trainPaths, testPaths;
    bool test = o.evaluate;
    if (g.format == SYNPL_PLAN_FORMAT_TEXT) {
      // One file holds both splits; it is named at compile time.
      std::string path = resolve(p.str(p.ingestFields[g.first_field].path), o.dataDir);
      int32_t st = openTextSplit(p, g, path, /*validation=*/false, in.train);
      if (!st && test) {
        st = openTextSplit(p, g, path, /*validation=*/true, in.test);
        in.hasTest = !st;
      }
      ingests.push_back(std::move(in));
      if (st)
        return st;
      continue;
    }
    for (int64_t f = 0; f < g.num_fields; ++f) {
      std::string compiled = p.str(p.ingestFields[g.first_field + f].path);
      if (needsDataDir(compiled, o.dataDir))
        return fail(SYNPL_RT_ERR_INVALID,
                    "%s: a data field compiled without a path is bound when "
                    "the program runs: pass --data DIR, a folder holding this "
                    "file (or %s.gz), and t10k-* for evaluation",
                    compiled.c_str(), compiled.c_str());
      std::string path = resolve(compiled, o.dataDir);
      trainPaths.push_back(path);
      std::string t = testPathOf(path, o.testPrefix);
      test = test && !t.empty() && fileExists(t);
      testPaths.push_back(t);
    }
    int32_t st = openSplit(p, g, trainPaths, in.train);
    if (!st && test) {
      st = openSplit(p, g, testPaths, in.test);
      in.hasTest = !st;
    }
    ingests.push_back(std::move(in));
    if (st)
      return st;
  }
  return SYNPL_RT_OK;
}

int32_t Executor::setUp() {
  int32_t threads = (int32_t)o.threads;
  workers = synpl_rt_workers_create(threads);
  if (!workers)
    return synpl_rt_last_status();
  if (p.header->device_arch > 0)
    if (int32_t st = setUpCuda())
      return st;
  if (int32_t st = allocatePools())
    return st;
  if (int32_t st = allocateRegions())
    return st;
  for (int64_t i = 0; i < p.inits.size; ++i) {
    const synpl_plan_init &init = p.inits[i];
    uint8_t *a = addr[0][init.slot];
    if (!a)
      return badTable("init of a run-time-placed slot");
    if (!onDevice(init.slot)) {
      if (int32_t st = runInit(p, init, a, o.dataDir))
        return st;
      continue;
    }
    // Computed on the host, then copied in.
    std::vector<uint8_t> host((size_t)p.slots[init.slot].size);
    if (int32_t st = runInit(p, init, host.data(), o.dataDir))
      return st;
    if (init.kind != SYNPL_PLAN_INIT_PLANNED_STEPS)
      if (int32_t st = writeSlot(init.slot, 0, host.data(), host.size()))
        return st;
  }
  // Which entries write actor state (skipped while evaluating).
  auto persistent = [&](int64_t slot) {
    return p.pools[p.slots[slot].pool].kind == SYNPL_PLAN_POOL_PERSISTENT;
  };
  writesState.assign(p.entries.size, false);
  for (int64_t e = 0; e < p.entries.size; ++e) {
    const synpl_plan_entry &en = p.entries[e];
    if (en.kind == SYNPL_PLAN_ENTRY_KERNEL) {
      const synpl_plan_kernel &k = p.kernels[en.index];
      for (int64_t a = k.num_inputs; a < k.num_args; ++a)
        if (persistent(p.kernelArgs[k.first_arg + a].slot))
          writesState[e] = true;
    } else if (persistent(p.transfers[en.index].dst)) {
      writesState[e] = true;
    }
  }
  kernelStats.assign(p.kernels.size, {});
  dispatchOf.assign(p.kernels.size, {});
  workerCount = synpl_rt_workers_count(workers);
  for (int64_t r = 0; r < p.reports.size; ++r) {
    const char *name = p.str(p.reports[r].name);
    bool known = !std::strcmp(name, "loss") || !std::strcmp(name, "correct");
    if (known && p.slots[p.reports[r].slot].elements != 1)
      return fail(SYNPL_RT_ERR_INVALID,
                  "report `%s` must be a scalar; slot %s holds %" PRId64 " values",
                  name, p.str(p.slots[p.reports[r].slot].name),
                  p.slots[p.reports[r].slot].elements);
    if (!std::strcmp(name, "loss"))
      lossReport = r;
    if (!std::strcmp(name, "correct"))
      correctReport = r;
  }
  // Evaluation runs only what the `correct` report depends on, never an
  // entry that writes actor state: walking each stream backwards, an entry
  // is needed when it writes a slot a later needed entry (or the report)
  // reads. Skipping the rest (the backward pass) cannot change a needed
  // slot: a skipped entry writes nothing at all.
  // A program that reads text is evaluated by its loss (StreamLoop.cpp).
  evalLoss = planReadsText(p) && lossReport >= 0;
  evalNeeded.assign(p.entries.size, false);
  if (correctReport >= 0 || evalLoss)
    for (int64_t s = 0; s < p.streams.size; ++s) {
      const synpl_plan_stream &sr = p.streams[s];
      std::vector<bool> want(p.slots.size, false);
      if (correctReport >= 0)
        want[p.reports[correctReport].slot] = true;
      if (evalLoss)
        want[p.reports[lossReport].slot] = true;
      for (int64_t e = sr.first_entry + sr.num_entries - 1; e >= sr.first_entry; --e) {
        if (writesState[e])
          continue;
        const synpl_plan_entry &en = p.entries[e];
        if (en.kind == SYNPL_PLAN_ENTRY_TRANSFER) {
          const synpl_plan_transfer &tx = p.transfers[en.index];
          if (want[tx.dst])
            evalNeeded[e] = want[tx.src] = true;
          continue;
        }
        const synpl_plan_kernel &k = p.kernels[en.index];
        for (int64_t a = k.num_inputs; a < k.num_args && !evalNeeded[e]; ++a)
          evalNeeded[e] = want[p.kernelArgs[k.first_arg + a].slot];
        if (evalNeeded[e])
          for (int64_t a = 0; a < k.num_inputs; ++a)
            want[p.kernelArgs[k.first_arg + a].slot] = true;
      }
    }
  return openData();
}

struct KernelCall {
  KernelFn fn;
  void *const *args;
};

void runChunk(void *ctx, int64_t begin, int64_t end) {
  auto *call = static_cast<KernelCall *>(ctx);
  call->fn(call->args, begin, end);
}

void Executor::runKernel(int64_t k, int64_t stream) {
  const synpl_plan_kernel &kr = p.kernels[k];
  void *args[SYNPL_PLAN_MAX_KERNEL_ARGS];
  int64_t n = std::min<int64_t>(kr.num_args, SYNPL_PLAN_MAX_KERNEL_ARGS);
  for (int64_t a = 0; a < n; ++a)
    args[a] = slotAddr(p.kernelArgs[kr.first_arg + a].slot, stream);
  KernelCall call{reinterpret_cast<KernelFn>(p.desc->kernels[k]), args};
  Dispatch &d = dispatchOf[k];
  // An explicit --threads N > 1 spreads every kernel; the default measures.
  if (kr.iterations <= 1 || workerCount <= 1 ||
      (o.threads == 0 && !d.parallelNext())) {
    uint64_t t0 = nowNanos();
    call.fn(args, 0, kr.iterations);
    d.record(nowNanos() - t0);
    return;
  }
  uint64_t t0 = nowNanos();
  if (kr.grain > 1) {
    // Every chunk repeats a setup (a tiled matmul's packing): one per thread.
    int64_t threads = std::max<int64_t>(1, workerCount);
    int64_t chunk = std::max(kr.grain, (kr.iterations + threads - 1) / threads);
    synpl_rt_parallel_for_grain(workers, kr.iterations, chunk, runChunk, &call);
  } else {
    synpl_rt_parallel_for(workers, kr.iterations, runChunk, &call);
  }
  d.record(nowNanos() - t0);
}

int32_t Executor::dispatch(int64_t batch, int64_t &stream, int64_t &outBatch) {
  stream = 0;
  outBatch = batch;
  if (p.programs.size == 0)
    return SYNPL_RT_OK;
  // The step dispatcher of the plan: batch in, launch descriptor out. Its
  // queues are the regions declared `ro queue` (we feed) and `wo queue`
  // (we drain); see L1ToL0's control program.
  uint64_t t0 = nowNanos();
  // Feed every queue region the program reads (`batch_queue`), run it,
  // drain the one it writes (`launch_queue`).
  const synpl_plan_program &pr = p.programs[0];
  int64_t q = 0;
  synpl_rt_queue *out = nullptr;
  for (int64_t r = 0; r < p.regions.size; ++r) {
    if (p.regions[r].queue_entry <= 0)
      continue;
    synpl_rt_queue *queue = queues[q++];
    bool used = false;
    for (int64_t i = 0; i < pr.num_regions; ++i)
      used |= p.programRegions[pr.first_region + i].region == r;
    if (!used)
      continue;
    if (p.regions[r].access == SYNPL_PLAN_ACCESS_WO)
      out = queue;
    else {
      uint64_t v = (uint64_t)batch;
      synpl_rt_queue_push(queue, &v);
    }
  }
  const std::vector<void *> &a = programArgs[0];
  void *fn = p.desc->programs[0];
  switch (a.size()) {
  case 0: reinterpret_cast<void (*)()>(fn)(); break;
  case 1: reinterpret_cast<void (*)(void *)>(fn)(a[0]); break;
  case 2: reinterpret_cast<void (*)(void *, void *)>(fn)(a[0], a[1]); break;
  case 3: reinterpret_cast<void (*)(void *, void *, void *)>(fn)(a[0], a[1], a[2]); break;
  case 4: reinterpret_cast<void (*)(void *, void *, void *, void *)>(fn)(a[0], a[1], a[2], a[3]); break;
  default:
    return badTable("control program with more than 4 regions");
  }
  if (out) {
    uint64_t desc = 0;
    if (!synpl_rt_queue_try_pop(out, &desc))
      return fail(SYNPL_RT_ERR_INVALID, "the control program launched no step");
    stream = (int64_t)(desc >> 32);
    outBatch = (int64_t)(desc & 0xFFFFFFFFu);
    if (stream >= p.streams.size)
      return fail(SYNPL_RT_ERR_INVALID,
                  "the control program launched stream %" PRId64 " of %" PRId64,
                  stream, p.streams.size);
  }
  controlNanos += nowNanos() - t0;
  return SYNPL_RT_OK;
}

double Executor::reportValue(int64_t report, int64_t stream) const {
  float v = NAN;
  // The step synchronized its stream: the slot holds the step's value.
  if (int32_t st = readSlot(p.reports[report].slot, stream, &v, sizeof v))
    synpl_rt_check(st);
  return v;
}

int32_t Executor::step(int64_t stream, int64_t batch, bool train,
                       Split Ingest::*split) {
  // Freelist slots of this step (on a GPU each stream keeps its blocks).
  std::vector<std::pair<int64_t, void *>> popped;
  // The blocks go back to their pools however the step ends.
  struct Release {
    Executor &ex;
    std::vector<std::pair<int64_t, void *>> &blocks;
    ~Release() {
      for (auto &[pool, block] : blocks)
        synpl_rt_region_free(ex.poolRegions[pool], block);
    }
  } release{*this, popped};
  // The stream's previous step must be done before its blocks are reused.
  if (overlap)
    if (int32_t st = freeStream(stream))
      return st;
  if (!cuda)
    for (int64_t s = 0; s < p.slots.size; ++s)
      if (p.slots[s].offset < 0) {
        void *b = synpl_rt_region_alloc(poolRegions[p.slots[s].pool], (uint64_t)p.slots[s].size);
        if (!b)
          return synpl_rt_last_status();
        addr[stream][s] = static_cast<uint8_t *>(b);
        popped.push_back({p.slots[s].pool, b});
      }
  uint64_t t0 = nowNanos();
  for (Ingest &g : ingests) {
    std::vector<uint8_t *> dst;
    for (int64_t f = 0; f < g.desc->num_fields; ++f) {
      int64_t slot = p.ingestFields[g.desc->first_field + f].slot;
      if (onDevice(slot)) {
        // Gathered on the host, copied in on the step's stream below.
        deviceStaging[slot].resize((size_t)p.slots[slot].size);
        dst.push_back(deviceStaging[slot].data());
      } else {
        dst.push_back(slotAddr(slot, stream));
      }
    }
    gather(g.*split, g.desc->batch, batch, dst);
    if (cuda)
      for (int64_t f = 0; f < g.desc->num_fields; ++f) {
        int64_t slot = p.ingestFields[g.desc->first_field + f].slot;
        if (onDevice(slot))
          if (int32_t st = cuda->check(
                  cuda->cuMemcpyHtoDAsync(dptr(slotAddr(slot, stream)),
                                          deviceStaging[slot].data(),
                                          deviceStaging[slot].size(), cuStreams[stream]),
                  "ingest %s into %s", p.str(g.desc->name), p.str(p.slots[slot].name)))
            return st;
      }
  }
  ingestNanos += nowNanos() - t0;
  if (!cuda)
    return issueEntries(stream, train, /*capturing=*/false);
  CUstream cs = cuStreams[stream];
  if (overlap && lastStream >= 0 && lastStream != stream)
    if (int32_t st = cuda->check(cuda->cuStreamWaitEvent(cs, stepDone[lastStream], 0),
                                 "stream %s waiting for the previous step",
                                 p.str(p.streams[stream].name)))
      return st;
  bool ran = false;
  if (useGraphs && graphable[stream])
    if (int32_t st = runGraph(stream, train, ran))
      return st;
  if (!ran)
    if (int32_t st = issueEntries(stream, train, /*capturing=*/false))
      return st;
  // The step's work is done before its reports are read and the stream's
  // blocks are used again: now, or when the step is retired.
  if (!overlap)
    return syncStream(stream);
  lastStream = stream;
  return cuda->check(cuda->cuEventRecord(stepDone[stream], cs),
                     "stream %s recording the end of its step",
                     p.str(p.streams[stream].name));
}

int32_t Executor::retireOne() {
  InFlight f = inFlight.front();
  inFlight.pop_front();
  if (overlap) // else step() synchronized it already
    if (int32_t st = syncStream(f.stream))
      return st;
  Tally &t = *tally;
  int64_t n = ++t.retired;
  if (!t.train) {
    if (correctReport >= 0)
      t.correct += reportValue(correctReport, f.stream);
    if (evalLoss) {
      t.lossSum += reportValue(lossReport, f.stream);
      ++t.lossCount;
    }
    return SYNPL_RT_OK;
  }
  bool found = lossReport >= 0;
  double loss = found ? reportValue(lossReport, f.stream) : NAN;
  if (found) {
    t.lossSum += loss;
    ++t.lossCount;
    if (!std::isfinite(loss))
      return fail(SYNPL_RT_ERR_INVALID,
                  "the loss is %f at step %" PRId64 " (epoch %" PRId64 "); training diverged",
                  loss, t.stepBase + n, t.epoch);
  }
  if (t.progress)
    synpl_rt_progress_step(t.progress, (uint64_t)(t.stepBase + n), found ? loss : NAN);
  return SYNPL_RT_OK;
}

int32_t Executor::issueEntries(int64_t stream, bool train, bool capturing) {
  const synpl_plan_stream &sr = p.streams[stream];
  bool events = cuda && !capturing;
  for (int64_t e = sr.first_entry; e < sr.first_entry + sr.num_entries; ++e) {
    if (events)
      for (int64_t ev : waitsBefore[e])
        if (int32_t st = cuda->check(cuda->cuStreamWaitEvent(cuStreams[stream], cuEvents[ev], 0),
                                     "stream %s waiting for event %s",
                                     p.str(sr.name), p.str(p.events[ev].name)))
          return st;
    if (train || evalNeeded[e]) {
      const synpl_plan_entry &en = p.entries[e];
      uint64_t s0 = nowNanos();
      if (en.kind == SYNPL_PLAN_ENTRY_KERNEL) {
        const synpl_plan_kernel &kr = p.kernels[en.index];
        if (cuda && kr.target == SYNPL_PLAN_TARGET_CUDA) {
          if (int32_t st = launchCuda(en.index, stream))
            return st;
          // --profile times each kernel to its end.
          if (o.profile)
            if (int32_t st = syncStream(stream))
              return st;
        } else {
          // A host kernel reads what the stream's work wrote.
          if (cuda)
            if (int32_t st = syncStream(stream))
              return st;
          runKernel(en.index, stream);
        }
        KernelStats &ks = kernelStats[en.index];
        ++ks.calls;
        ks.nanos += nowNanos() - s0;
      } else if (cuda) {
        if (int32_t st = transferCuda(en.index, stream))
          return st;
        if (o.profile)
          if (int32_t st = syncStream(stream))
            return st;
        transferNanos += nowNanos() - s0;
      } else {
        const synpl_plan_transfer &tx = p.transfers[en.index];
        std::memcpy(slotAddr(tx.dst, stream), slotAddr(tx.src, stream), tx.bytes);
        transferNanos += nowNanos() - s0;
      }
    }
    if (events)
      for (int64_t ev : recordsAfter[e])
        if (int32_t st = cuda->check(cuda->cuEventRecord(cuEvents[ev], cuStreams[stream]),
                                     "stream %s recording event %s",
                                     p.str(sr.name), p.str(p.events[ev].name)))
          return st;
  }
  return SYNPL_RT_OK;
}

int32_t Executor::runGraph(int64_t stream, bool train, bool &ran) {
  ran = false;
  StepGraph &g = graphs[2 * stream + (train ? 0 : 1)];
  CUstream cs = cuStreams[stream];
  const synpl_plan_stream &sr = p.streams[stream];
  if (g.failed)
    return SYNPL_RT_OK;
  // The first step runs directly (it also loads the kernels); the second
  // is captured.
  if (!g.exec && g.runs++ < 1)
    return SYNPL_RT_OK;
  if (!g.exec) {
    if (cuda->cuStreamBeginCapture(cs, cu::STREAM_CAPTURE_MODE_RELAXED) != cu::SUCCESS) {
      g.failed = true;
      return SYNPL_RT_OK;
    }
    int32_t st = issueEntries(stream, train, /*capturing=*/true);
    CUgraph graph = nullptr;
    CUresult r = cuda->cuStreamEndCapture(cs, &graph);
    if (st != SYNPL_RT_OK) {
      // An entry the driver would not capture: nothing ran; launch one by
      // one (where a real failure reports itself).
      synpl_rt_clear_error();
      if (graph)
        cuda->cuGraphDestroy(graph);
      g.failed = true;
      return SYNPL_RT_OK;
    }
    if (r == cu::SUCCESS && graph)
      r = cuda->cuGraphInstantiateWithFlags(&g.exec, graph, 0);
    if (graph)
      cuda->cuGraphDestroy(graph);
    if (r != cu::SUCCESS || !g.exec) {
      // Not capturable on this driver: launch one by one from now on.
      g.exec = nullptr;
      g.failed = true;
      return SYNPL_RT_OK;
    }
  }
  int64_t last = -1;
  for (int64_t e = sr.first_entry; e < sr.first_entry + sr.num_entries; ++e)
    if ((train || evalNeeded[e]) && p.entries[e].kind == SYNPL_PLAN_ENTRY_KERNEL)
      last = p.entries[e].index;
  lastKernel[stream] = last;
  for (int64_t ev : waitsBefore[sr.first_entry])
    if (int32_t st = cuda->check(cuda->cuStreamWaitEvent(cs, cuEvents[ev], 0),
                                 "stream %s waiting for event %s", p.str(sr.name),
                                 p.str(p.events[ev].name)))
      return st;
  CUresult r = cuda->cuGraphLaunch(g.exec, cs);
  if (r != cu::SUCCESS)
    return cuda->check(r, "the CUDA graph of a %s step on stream %s "
                          "(SYNPL_CUDA_GRAPHS=0 launches its kernels one by one)",
                       train ? "training" : "evaluation", p.str(sr.name));
  if (sr.num_entries > 0)
    for (int64_t ev : recordsAfter[sr.first_entry + sr.num_entries - 1])
      if (int32_t st = cuda->check(cuda->cuEventRecord(cuEvents[ev], cs),
                                   "stream %s recording event %s", p.str(sr.name),
                                   p.str(p.events[ev].name)))
        return st;
  ran = true;
  return SYNPL_RT_OK;
}

void Executor::printProfile(double trainSeconds, int64_t trainSteps) const {
  struct Row {
    const char *name;
    KernelStats s;
  };
  std::vector<Row> rows;
  uint64_t total = 0;
  for (int64_t k = 0; k < p.kernels.size; ++k) {
    rows.push_back({p.str(p.kernels[k].name), kernelStats[k]});
    total += kernelStats[k].nanos;
  }
  std::sort(rows.begin(), rows.end(),
            [](const Row &a, const Row &b) { return a.s.nanos > b.s.nanos; });
  uint64_t all = total + transferNanos + ingestNanos + controlNanos;
  std::fprintf(stderr, "\nper-kernel time (all steps, training and evaluation; "
                       "%" PRId64 " training steps in %.2f s):\n",
               trainSteps, trainSeconds);
  std::fprintf(stderr, "  %-44s %8s %12s %10s %6s\n", "kernel", "calls",
               "total ms", "us/call", "%");
  for (const Row &r : rows) {
    if (!r.s.calls)
      continue;
    std::fprintf(stderr, "  %-44s %8" PRIu64 " %12.2f %10.1f %6.2f\n", r.name,
                 r.s.calls, r.s.nanos / 1e6, r.s.nanos / 1e3 / r.s.calls,
                 all ? 100.0 * r.s.nanos / all : 0.0);
  }
  std::fprintf(stderr, "  %-44s %8s %12.2f %10s %6.2f\n", "(transfers)", "",
               transferNanos / 1e6, "", all ? 100.0 * transferNanos / all : 0.0);
  std::fprintf(stderr, "  %-44s %8s %12.2f %10s %6.2f\n", "(ingest: batch gather)", "",
               ingestNanos / 1e6, "", all ? 100.0 * ingestNanos / all : 0.0);
  std::fprintf(stderr, "  %-44s %8s %12.2f %10s %6.2f\n", "(control program)", "",
               controlNanos / 1e6, "", all ? 100.0 * controlNanos / all : 0.0);
}

/// The plan tables' fingerprint: every record word (not the train loop's
/// defaults in the header, which do not change what a checkpoint holds)
/// and the slot names.
uint64_t planFingerprint(const Plan &p) {
  static const int64_t recordWords[SYNPL_PLAN_NUM_SECTIONS] = {
      sizeof(synpl_plan_pool) / 8,       sizeof(synpl_plan_slot) / 8,
      sizeof(synpl_plan_kernel) / 8,     sizeof(synpl_plan_kernel_arg) / 8,
      sizeof(synpl_plan_transfer) / 8,   sizeof(synpl_plan_stream) / 8,
      sizeof(synpl_plan_entry) / 8,      sizeof(synpl_plan_event) / 8,
      sizeof(synpl_plan_sync) / 8,       sizeof(synpl_plan_init) / 8,
      sizeof(synpl_plan_ingest) / 8,     sizeof(synpl_plan_ingest_field) / 8,
      sizeof(synpl_plan_report) / 8,     sizeof(synpl_plan_region) / 8,
      sizeof(synpl_plan_program) / 8,    sizeof(synpl_plan_program_region) / 8};
  const synpl_plan_header &h = *p.header;
  uint64_t f = fnv1a64(&h.pipeline_depth, sizeof h.pipeline_depth);
  f = fnv1a64(h.section, sizeof h.section, f);
  for (int s = 0; s < SYNPL_PLAN_NUM_SECTIONS; ++s)
    f = fnv1a64(p.desc->table + h.section[s][0],
                (uint64_t)(h.section[s][1] * recordWords[s]) * 8, f);
  for (int64_t s = 0; s < p.slots.size; ++s) {
    const char *name = p.str(p.slots[s].name);
    f = fnv1a64(name, std::strlen(name) + 1, f);
  }
  return f;
}

int32_t Executor::saveCheckpoint(const std::string &path, int64_t epoch0,
                                 int64_t batch, int64_t globalStep,
                                 int64_t stepsPerEpoch, double lossSum,
                                 int64_t lossCount) const {
  Checkpoint c;
  c.fingerprint = planFingerprint(p);
  c.epoch = epoch0;
  c.batch = batch;
  c.globalStep = globalStep;
  c.stepsPerEpoch = stepsPerEpoch;
  c.lossSum = lossSum;
  c.lossCount = lossCount;
  for (const Ingest &g : ingests) {
    c.data.push_back((uint64_t)g.desc->seed);
    c.data.push_back((uint64_t)g.train.samples);
  }
  // Actor state: every slot of a persistent pool.
  for (int64_t s = 0; s < p.slots.size; ++s)
    if (p.pools[p.slots[s].pool].kind == SYNPL_PLAN_POOL_PERSISTENT) {
      std::vector<uint8_t> bytes((size_t)p.slots[s].size);
      if (int32_t st = readSlot(s, 0, bytes.data(), bytes.size()))
        return st;
      c.blobs.push_back({(uint64_t)s, std::move(bytes)});
    }
  // Control state: the regions that are not queues (the step counter).
  for (int64_t r = 0; r < p.regions.size; ++r)
    if (p.regions[r].queue_entry <= 0) {
      const uint8_t *a = static_cast<const uint8_t *>(regionMem[r]);
      c.blobs.push_back({kRegionBlob | (uint64_t)r,
                         std::vector<uint8_t>(a, a + std::max<int64_t>(p.regions[r].size, 8))});
    }
  return writeCheckpoint(path.c_str(), c);
}

int32_t Executor::restoreCheckpoint(const std::string &path,
                                    int64_t stepsPerEpoch, Checkpoint &c) {
  const char *f = path.c_str();
  if (int32_t st = readCheckpoint(f, c))
    return st;
  uint64_t mine = planFingerprint(p);
  if (c.fingerprint != mine)
    return fail(SYNPL_RT_ERR_FORMAT,
                "%s: checkpoint of another program (plan fingerprint %016" PRIx64
                ", this program's is %016" PRIx64 ")",
                f, c.fingerprint, mine);
  if (c.data.size() != 2 * ingests.size())
    return fail(SYNPL_RT_ERR_FORMAT, "%s: checkpoint records %zu data sources, the program reads %zu",
                f, c.data.size() / 2, ingests.size());
  for (size_t i = 0; i < ingests.size(); ++i)
    if (c.data[2 * i] != (uint64_t)ingests[i].desc->seed ||
        c.data[2 * i + 1] != (uint64_t)ingests[i].train.samples)
      return fail(SYNPL_RT_ERR_FORMAT,
                  "%s: checkpoint was written over %" PRIu64 " training samples (seed %" PRIu64
                  "); %s has %" PRId64,
                  f, c.data[2 * i + 1], c.data[2 * i], ingests[i].train.fields[0].path.c_str(),
                  ingests[i].train.samples);
  if (c.stepsPerEpoch != stepsPerEpoch || c.batch > stepsPerEpoch)
    return fail(SYNPL_RT_ERR_FORMAT,
                "%s: checkpoint was written by a run of %" PRId64
                " steps per epoch; this run takes %" PRId64 " (--steps, the data)",
                f, c.stepsPerEpoch, stepsPerEpoch);
  if (c.epoch > o.epochs || (c.epoch == o.epochs && c.batch > 0))
    return fail(SYNPL_RT_ERR_INVALID,
                "%s: checkpoint is in epoch %" PRId64 ", past this run's %" PRId64
                " epoch(s) (--epochs)",
                f, c.epoch + 1, o.epochs);
  std::vector<bool> seen(p.slots.size + p.regions.size, false);
  for (const CheckpointBlob &b : c.blobs) {
    bool region = b.id & kRegionBlob;
    uint64_t i = b.id & ~kRegionBlob;
    uint8_t *dst = nullptr;
    int64_t size = -1;
    if (!region && i < (uint64_t)p.slots.size &&
        p.pools[p.slots[i].pool].kind == SYNPL_PLAN_POOL_PERSISTENT &&
        onDevice((int64_t)i)) {
      if ((int64_t)b.bytes.size() != p.slots[i].size)
        return fail(SYNPL_RT_ERR_FORMAT, "%s: checkpoint holds a state block (id %" PRIu64
                                         ") this program does not have",
                    f, b.id);
      if (int32_t st = writeSlot((int64_t)i, 0, b.bytes.data(), b.bytes.size()))
        return st;
      seen[i] = true;
      continue;
    }
    if (!region && i < (uint64_t)p.slots.size &&
        p.pools[p.slots[i].pool].kind == SYNPL_PLAN_POOL_PERSISTENT) {
      dst = addr[0][i];
      size = p.slots[i].size;
    } else if (region && i < (uint64_t)p.regions.size && p.regions[i].queue_entry <= 0) {
      dst = static_cast<uint8_t *>(regionMem[i]);
      size = std::max<int64_t>(p.regions[i].size, 8);
    }
    if (!dst || (int64_t)b.bytes.size() != size)
      return fail(SYNPL_RT_ERR_FORMAT, "%s: checkpoint holds a state block (id %" PRIu64
                                       ") this program does not have",
                  f, b.id);
    std::memcpy(dst, b.bytes.data(), b.bytes.size());
    seen[region ? p.slots.size + i : i] = true;
  }
  for (int64_t s = 0; s < p.slots.size; ++s)
    if (p.pools[p.slots[s].pool].kind == SYNPL_PLAN_POOL_PERSISTENT && !seen[s])
      return fail(SYNPL_RT_ERR_FORMAT, "%s: checkpoint lacks actor state %s", f,
                  p.str(p.slots[s].name));
  return SYNPL_RT_OK;
}

int32_t Executor::fillScalarInits(int64_t kind, float value) {
  for (int64_t i = 0; i < p.inits.size; ++i)
    if (p.inits[i].kind == kind)
      if (int32_t st = writeSlot(p.inits[i].slot, 0, &value, sizeof value))
        return st;
  return SYNPL_RT_OK;
}

int32_t Executor::setTrainingMode(bool training) {
  return fillScalarInits(SYNPL_PLAN_INIT_TRAINING_MODE, training ? 1.0f : 0.0f);
}

void Executor::fillPlannedSteps(int64_t planned) {
  if (int32_t st = fillScalarInits(SYNPL_PLAN_INIT_PLANNED_STEPS, (float)planned))
    synpl_rt_check(st);
}

int64_t killAfterSteps() {
  int64_t k = -1;
  if (const char *env = std::getenv("SYNPL_RT_KILL_AFTER_STEPS"))
    if (!parseInt(env, k))
      k = -1;
  return k;
}

int Executor::run() {
  if (planReadsText(p))
    return runStream();
  // Every ingest must agree on the number of batches per epoch.
  int64_t trainBatches = -1, testBatches = -1;
  bool hasTest = !ingests.empty();
  for (Ingest &g : ingests) {
    int64_t n = numBatches(g.train, g.desc->batch, g.desc->drop_last);
    trainBatches = trainBatches < 0 ? n : std::min(trainBatches, n);
    hasTest = hasTest && g.hasTest;
    if (g.hasTest) {
      int64_t t = numBatches(g.test, g.desc->batch, /*dropLast=*/false);
      testBatches = testBatches < 0 ? t : std::min(testBatches, t);
    }
  }
  if (trainBatches < 0)
    trainBatches = 1; // no data: one step per epoch
  if (trainBatches == 0) {
    std::fprintf(stderr, "synpl: error: %s: fewer samples than one batch\n",
                 ingests[0].train.fields[0].path.c_str());
    return 1;
  }
  int64_t steps = o.maxSteps > 0 ? std::min(o.maxSteps, trainBatches) : trainBatches;
  if (o.evalBatches > 0 && testBatches > 0)
    testBatches = std::min(testBatches, o.evalBatches);
  bool canEval = hasTest && correctReport >= 0 && testBatches > 0;
  // Resuming: the state as the checkpoint left it, then the run's length
  // (planned_steps follows this run's flags, like every other default).
  Checkpoint resumed;
  bool isResumed = !o.resumePath.empty();
  if (isResumed) {
    if (int32_t st = restoreCheckpoint(o.resumePath, steps, resumed)) {
      synpl_rt_check(st);
      return 1;
    }
    if (!o.quiet)
      std::fprintf(stderr, "synpl: resuming at epoch %" PRId64 ", batch %" PRId64
                           " (step %" PRId64 ") from %s\n",
                   resumed.epoch + 1, resumed.batch, resumed.globalStep,
                   o.resumePath.c_str());
  }
  fillPlannedSteps(steps * o.epochs);
  int64_t killAfter = killAfterSteps();
  int64_t samplesPerStep = ingests.empty() ? 1 : ingests[0].desc->batch;
  if (!o.quiet && o.evaluate && !canEval)
    std::fprintf(stderr, "synpl: note: no evaluation (%s%s%s); test_accuracy=nan\n",
                 correctReport < 0 ? "the program reports no `correct`" : "no ",
                 correctReport < 0 ? "" : o.testPrefix.c_str(),
                 correctReport < 0 ? "" : "-* test files next to the training data");

  synpl_rt_progress *progress =
      o.quiet ? nullptr
              : synpl_rt_progress_create((uint64_t)(steps * o.epochs),
                                         (uint64_t)samplesPerStep,
                                         o.progressInterval, 2);
  // A failed step ends the run with the runtime's one-line message.
  auto abandon = [&](int32_t status) {
    synpl_rt_progress_destroy(progress);
    synpl_rt_check(status);
    return 1;
  };
  double trainSecondsTotal = 0;
  int64_t globalStep = isResumed ? resumed.globalStep : 0;
  for (int64_t epoch = isResumed ? resumed.epoch + 1 : 1; epoch <= o.epochs; ++epoch) {
    for (Ingest &g : ingests) {
      Split &s = g.train;
      if (g.desc->shuffle)
        synpl_rt_epoch_permutation((uint64_t)g.desc->seed, (uint64_t)(epoch - 1),
                                   (uint32_t)s.samples, s.order.data());
    }
    double lossSum = 0;
    int64_t lossCount = 0;
    int64_t firstBatch = 0;
    if (isResumed && epoch == resumed.epoch + 1) {
      firstBatch = resumed.batch;
      lossSum = resumed.lossSum;
      lossCount = resumed.lossCount;
    }
    uint64_t t0 = nowNanos();
    // Each step's reports are read when it is retired: at once on the host,
    // later on a GPU whose next step is already on its way (runStep).
    Tally train;
    train.lossSum = lossSum;
    train.lossCount = lossCount;
    train.stepBase = globalStep;
    train.epoch = epoch;
    train.progress = progress;
    tally = &train;
    for (int64_t b = firstBatch; b < steps; ++b) {
      if (int32_t st = runStep(b, /*train=*/true))
        return abandon(st);
      ++globalStep;
      // Mid-epoch checkpoint (the epoch's last step is covered by the
      // end-of-epoch one below).
      bool checkpoint =
          o.checkpointEvery > 0 && globalStep % o.checkpointEvery == 0 && b + 1 < steps;
      if (checkpoint || globalStep == killAfter)
        if (int32_t st = drain())
          return abandon(st);
      if (checkpoint)
        if (int32_t st = saveCheckpoint(o.checkpointPath, epoch - 1, b + 1, globalStep,
                                        steps, train.lossSum, train.lossCount))
          return abandon(st);
      if (globalStep == killAfter)
        std::raise(SIGKILL);
    }
    if (int32_t st = drain())
      return abandon(st);
    lossSum = train.lossSum;
    lossCount = train.lossCount;
    double trainSeconds = (nowNanos() - t0) / 1e9;
    trainSecondsTotal += trainSeconds;

    double accuracy = NAN;
    if (canEval) {
      if (int32_t st = setTrainingMode(false))
        return abandon(st);
      Tally eval;
      eval.train = false;
      tally = &eval;
      int64_t seen = 0;
      for (int64_t b = 0; b < testBatches; ++b) {
        if (int32_t st = runStep(b, /*train=*/false))
          return abandon(st);
        seen += std::min<int64_t>(samplesPerStep,
                                  ingests[0].test.samples - b * samplesPerStep);
      }
      if (int32_t st = drain())
        return abandon(st);
      if (int32_t st = setTrainingMode(true))
        return abandon(st);
      accuracy = seen ? eval.correct / (double)seen : NAN;
    }
    std::printf("epoch=%" PRId64 " loss=%.6f test_accuracy=%.4f samples_per_s=%.1f\n",
                epoch, lossCount ? lossSum / lossCount : NAN, accuracy,
                trainSeconds > 0 ? (steps - firstBatch) * samplesPerStep / trainSeconds : 0.0);
    std::fflush(stdout);
    if (!o.checkpointPath.empty())
      if (int32_t st = saveCheckpoint(o.checkpointPath, epoch, 0, globalStep, steps, 0, 0))
        return abandon(st);
  }
  if (!o.saveWeightsPath.empty())
    if (int32_t st = saveCheckpoint(o.saveWeightsPath, o.epochs, 0, globalStep, steps, 0, 0))
      return abandon(st);
  synpl_rt_progress_destroy(progress);
  if (o.profile)
    printProfile(trainSecondsTotal, globalStep);
  return 0;
}

} // namespace synpl::rt::exec

using namespace synpl::rt::exec;

extern "C" int synpl_rt_main(int argc, char **argv, const synpl_plan_desc *desc) {
  Plan plan;
  if (loadPlan(desc, plan) != SYNPL_RT_OK) {
    std::fprintf(stderr, "synpl: error: %s\n", synpl_rt_last_error());
    return 1;
  }
  Options options;
  if (int r = parseOptions(argc, argv, options, plan))
    return r == 1 ? 0 : 2;
  Executor ex(plan, options);
  if (ex.setUp() != SYNPL_RT_OK) {
    std::fprintf(stderr, "synpl: error: %s\n", synpl_rt_last_error());
    return 1;
  }
  return ex.run();
}
