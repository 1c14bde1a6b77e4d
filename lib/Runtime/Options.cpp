//===- Options.cpp - The training executable's command line -------------===//
//
// `--help` and the options every compiled program takes (epochs, steps,
// threads, data folder, evaluation, checkpoints, profile), parsed into
// Options; a bad option is a one-line error and exit status 2.
//
//===----------------------------------------------------------------------===//
#include "ExecutorImpl.h"
#include "Internal.h"
#include "synpl/Runtime/PlanFormat.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace synpl::rt;

namespace synpl::rt::exec {

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
      "classified right, or none without evaluation; S: training samples per\n"
      "second). Progress lines go to stderr.\n\n"
      "options:\n"
      "  --epochs N        epochs to train (default 1)\n"
      "  --data DIR        read every data file from DIR (same file names as\n"
      "                    compiled in; required when a field was compiled\n"
      "                    without a path: field F is then DIR/train-F-idxN-\n"
      "                    ubyte[.gz]); the test split is the files named\n"
      "                    t10k-* next to the train-* ones (in DIR with\n"
      "                    --data); when they are missing the run stops\n"
      "                    before training (--no-eval trains without them)\n"
      "  --threads N       spread every kernel over N threads (default: all\n"
      "                    cores, or SYNPL_NUM_THREADS, and each kernel runs\n"
      "                    spread or on one thread, whichever its first calls\n"
      "                    measure faster)\n"
      "  --steps N         at most N training steps per epoch\n"
      "  --eval-batches N  at most N test batches per evaluation (a text\n"
      "                    program: exactly N validation batches, default 20)\n"
      "  --report-every N  a text program: a step= line every N steps\n"
      "                    (default: a fifth of the run)\n"
      "  --no-eval         skip evaluation: train without a test split\n"
      "                    (test_accuracy=none)\n"
      "  --progress SECS   seconds between progress lines (default 1; 0: every "
      "step)\n"
      "  --quiet           no progress lines\n"
      "  --profile         print a per-kernel time table at the end (stderr)\n"
      "  --check-finite    after every kernel of every step, scan the float\n"
      "                    slots it wrote (and each batch's float data); the\n"
      "                    first NaN or infinity stops the run (exit status 1)\n"
      "                    naming the step, the kernel, the slot and the\n"
      "                    element. Costs a pass over every kernel's outputs;\n"
      "                    on a GPU every kernel is also waited for and its\n"
      "                    outputs copied back (no CUDA graphs, no overlap)\n"
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
      "  --metrics FILE    append the run's metrics to FILE as JSON lines, one\n"
      "                    per update step, evaluation and epoch, flushed as\n"
      "                    written (fields: kind, step, epoch, loss,\n"
      "                    test_accuracy / val_loss, samples_per_s, time_s)\n"
      "  --help            this text\n"
      "\nThe compiled train loop: %" PRId64 " epoch(s), %s%s%s.\n"
      "Stopping: SIGTERM, SIGINT (Ctrl-C) or SIGHUP (the terminal closed) stops\n"
      "the run after the training step in progress (during an epoch's\n"
      "evaluation: after the epoch), writes a checkpoint there when there is a\n"
      "checkpoint file (--checkpoint), says so on stderr and exits with status\n"
      "128 + the signal (143, 130, 129); a second signal stops at once (the last\n"
      "checkpoint written stays whole). A signal ignored at the start (nohup)\n"
      "stays ignored.\n"
      "Data: a gzip'd IDX file is decoded once and kept, decoded, in\n"
      "$SYNPL_CACHE_DIR/data (default ~/.cache/synpl/data); later runs map it\n"
      "while the file is unchanged. SYNPL_DATA_CACHE=0 turns this off.\n"
      "Non-finite numbers: a step whose loss is NaN or infinite stops the run, as\n"
      "does NaN or infinity in the model's state at an epoch's end or in a\n"
      "checkpoint about to be written (it is not: the last one stays); exit\n"
      "status 1. --check-finite then names the first kernel that wrote one.\n"
      "Testing aid: SYNPL_RT_KILL_AFTER_STEPS=N makes the program SIGKILL itself\n"
      "after update step N (after that step's checkpoint, if any).\n",
      argv0, p ? " (plan @" : "", p ? p->str(p->header->name) : "",
      p ? ")" : "", p ? p->header->checkpoint_every : 0,
      p && p->header->epochs > 0 ? p->header->epochs : 1,
      evalNone ? "no evaluation" : "evaluation on the ",
      evalNone ? "" : evalSplit, evalNone ? "" : " split");
  if (p && planSplitsSlots(*p) && !planIsTensorParallel(*p))
    std::printf(
        "\nData parallel with update sharding: the program was placed on %" PRId64 " ranks\n"
        "and splits the optimizer state of its large parameters among them. Run it\n"
        "under a launcher on exactly that many (mpirun -np %" PRId64 " %s ...; Open MPI,\n"
        "loaded at start-up from libmpi.so.40, or SYNPL_MPI_LIB): each rank trains on\n"
        "its slice of the global batch and updates its block of those parameters.\n"
        "Rank 0 prints and writes the files, which hold the whole tensors.\n"
        "See docs/distributed.md.\n",
        p->header->ranks, p->header->ranks, argv0);
  else if (p && planSplitsSlots(*p))
    std::printf(
        "\nTensor parallel: the program splits its parameters across %" PRId64 " ranks.\n"
        "Run it under a launcher on exactly that many (mpirun -np %" PRId64 " %s ...;\n"
        "Open MPI, loaded at start-up from libmpi.so.40, or SYNPL_MPI_LIB): each\n"
        "rank holds its block of every split tensor and reads the whole batch.\n"
        "Rank 0 prints and writes the files, which hold the whole tensors.\n"
        "See docs/distributed.md.\n",
        p->header->ranks, p->header->ranks, argv0);
  else if (p && p->header->ranks > 1)
    std::printf(
        "\nData parallel: the program was placed on %" PRId64 " ranks. Run it under a\n"
        "launcher (mpirun -np N %s ...; Open MPI, loaded at start-up from\n"
        "libmpi.so.40, or SYNPL_MPI_LIB) with any N, or alone: each rank trains on\n"
        "its slice of a global batch of N x the ingest's batch. Rank 0 prints and\n"
        "writes the files; SYNPL_COMM=self runs one process. See docs/training.md.\n",
        p->header->ranks, argv0);
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
      if (o.lead()) // every rank parses the same command line; one prints
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
    if (a == "--check-finite") {
      o.checkFinite = true;
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
    else if (name == "--checkpoint" || name == "--resume" || name == "--save-weights" ||
             name == "--metrics") {
      ok = value(v) && *v;
      if (ok)
        (name == "--checkpoint" ? o.checkpointPath
         : name == "--resume"   ? o.resumePath
         : name == "--metrics"  ? o.metricsPath
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
      if (o.lead())
        std::fprintf(stderr, "%s: error: unknown option '%s' (see --help)\n",
                     argv[0], argv[i]);
      return 2;
    }
    if (!ok) {
      bool path = name == "--data" || name == "--checkpoint" ||
                  name == "--resume" || name == "--save-weights" || name == "--metrics";
      if (o.lead())
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

} // namespace synpl::rt::exec
