//===- ExecutorMain.cpp - synpl_rt_main: the world, the plan, the run ----===//
//
// The entry points of a compiled program (synpl_rt_main) and of a device
// run (synpl_rt_main_device): the world of the run first (Comm.h: one
// process, or the ranks mpirun started), then the plan's tables, the
// command line and the executor (Executor.cpp), and the end of the run.
//
// Data-parallel runs: a program placed on one process (header `ranks` 1)
// refuses a world of several; a data-parallel one (ranks > 1, or
// collectives) runs on any world, on the host or with CUDA kernels (one
// GPU per rank, the collectives of GPU memory by NCCL: ExecutorCollectives
// .cpp), not on a device. Rank 0 prints the start line, the
// notes, the progress and the results and writes the files; every error
// line says `rank R of N: `, and a failure on any rank ends them all
// (MPI_Abort), so no rank waits forever in a collective. A normal end,
// --help, a usage error (every rank parses the same command line) or a
// stop signal the ranks agreed on finalizes MPI. See docs/training.md,
// "Data-parallel runs".
//
// Tensor-parallel runs: a plan that splits slots across its ranks
// (Shards.cpp) runs on exactly the ranks it was placed on, each holding
// its block of every split tensor, all of them on the whole batch.
//
//===----------------------------------------------------------------------===//
#include "Comm.h"
#include "ExecutorImpl.h"
#include "Internal.h"
#include "Signals.h"
#include "synpl/Runtime/PlanFormat.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

using namespace synpl::rt;
using namespace synpl::rt::exec;

namespace {

//===----------------------------------------------------------------------===//
// The world of a run
//===----------------------------------------------------------------------===//

/// The communicator of the run in progress (synpl_rt_check's end of a
/// failed run reads it).
Comm *runWorld = nullptr;

/// A failed run's end once its error is printed: the other ranks are
/// ended too (MPI_Abort: they would otherwise wait for this one in their
/// next collective forever); a world of one finalizes and exits.
void endWorld(int status) {
  if (Comm *w = runWorld) {
    if (w->size() > 1)
      w->abort(status); // does not return
    w->finalize();
  }
  std::exit(status);
}

/// Whether the plan can run in a world of `n` ranks here: a program placed
/// on one process runs alone; a tensor-parallel one, or a data-parallel one
/// that shards its update, on exactly its ranks (each holds one block of
/// the split tensors); another data-parallel one (planned ranks > 1, or
/// collectives) on any world. Either runs its
/// collectives on host memory (Comm) or, with CUDA kernels, on GPU memory
/// (NCCL on several ranks), not on a device.
int32_t checkWorld(const Plan &p, int64_t n, const synpl_rt_device *device) {
  int64_t planned = p.header->ranks;
  bool tensorParallel = planIsTensorParallel(p);
  if (planSplitsSlots(p) && n != planned) {
    std::string world = n == 1 ? "" : "; this run has " + std::to_string(n);
    return fail(SYNPL_RT_ERR_INVALID,
                tensorParallel
                    ? "this program splits its parameters across %" PRId64
                      " ranks (tensor parallel)%s; run it with mpirun -np %" PRId64
                    : "this program splits its optimizer state across %" PRId64
                      " data-parallel ranks (update sharding)%s; run it with mpirun -np "
                      "%" PRId64 " (or compile it with synplc --update-sharding=off to run "
                      "on any number)",
                planned, world.c_str(), planned);
  }
  if (planned == 1 && n > 1)
    return fail(SYNPL_RT_ERR_INVALID,
                "this program was placed on one process; run it alone, or compile it "
                "for a system with several hosts (synplc --system ...)");
  if (planned == 1 && p.collectives.size == 0)
    return SYNPL_RT_OK;
  if (device)
    return fail(SYNPL_RT_ERR_INVALID,
                "a %s program (placed on %" PRId64 " ranks, %" PRId64
                " collective%s) cannot run on %s: its collectives run in the host "
                "executor's memory; compile it for the host",
                tensorParallel ? "tensor-parallel" : "data-parallel", planned,
                p.collectives.size, p.collectives.size == 1 ? "" : "s", device->name);
  return SYNPL_RT_OK;
}

/// Rank 0's start line of a data- or tensor-parallel run, and the note
/// when a data-parallel run's world is not the one the program was placed
/// on.
void printWorld(const Plan &p, const Comm &world) {
  int64_t n = world.size(), planned = p.header->ranks;
  if (n == 1 && planned == 1)
    return;
  // (checkWorld: the world is the planned one.) Every rank reads the whole
  // batch: the global batch is the ingest's, as the progress counts it.
  if (planIsTensorParallel(p)) {
    std::fprintf(stderr,
                 "synpl: tensor parallel: %" PRId64 " ranks, each holds 1/%" PRId64
                 " of the split parameters (%s)\n",
                 n, n, world.backend());
    return;
  }
  const synpl_plan_ingest *g = p.ingests.size ? &p.ingests[0] : nullptr;
  if (!g)
    std::fprintf(stderr, "synpl: data parallel: %" PRId64 " rank%s (%s)\n", n,
                 n == 1 ? "" : "s", world.backend());
  else if (g->sharded)
    std::fprintf(stderr,
                 "synpl: data parallel: %" PRId64 " rank%s x batch %" PRId64
                 " = global batch %" PRId64 "%s (%s)\n",
                 n, n == 1 ? "" : "s", g->batch, n * g->batch,
                 planSplitsSlots(p) ? ", each updating its block of the large parameters"
                                    : "",
                 world.backend());
  else
    std::fprintf(stderr,
                 "synpl: data parallel: %" PRId64 " rank%s, each on the whole batch %" PRId64
                 " (%s)\n",
                 n, n == 1 ? "" : "s", g->batch, world.backend());
  if (n != planned && g && g->sharded)
    std::fprintf(stderr,
                 "synpl: note: this program was placed on %" PRId64 " ranks and runs on %" PRId64
                 ": its global batch is %" PRId64 ", not the planned %" PRId64
                 " (and the epoch's steps follow)\n",
                 planned, n, n * g->batch, planned * g->batch);
  else if (n != planned)
    std::fprintf(stderr,
                 "synpl: note: this program was placed on %" PRId64 " ranks and runs on %" PRId64
                 "\n",
                 planned, n);
}

int mainOn(int argc, char **argv, const synpl_plan_desc *desc, const synpl_rt_device *device) {
  // The world first (one process, or the ranks mpirun started): every
  // message from here on says which rank it comes from.
  std::unique_ptr<Comm> world;
  if (openComm(world) != SYNPL_RT_OK) {
    int rank = 0, size = 1;
    char prefix[64] = "";
    if (launcherWorld(rank, size) && size > 1)
      std::snprintf(prefix, sizeof prefix, "rank %d of %d: ", rank, size);
    std::fprintf(stderr, "synpl: error: %s%s\n", prefix, synpl_rt_last_error());
    return 1;
  }
  char prefix[64] = "";
  if (world->size() > 1)
    std::snprintf(prefix, sizeof prefix, "rank %d of %d: ", world->rank(), world->size());
  runWorld = world.get();
  setRunWorld(prefix, endWorld);
  // The run's end: a failure (its message printed) ends every rank; any
  // other end (a finished run, --help, a usage error every rank made, a stop
  // signal every rank agreed on) finalizes.
  auto finish = [&](int status, bool failed) {
    if (failed && world->size() > 1)
      world->abort(status);
    world->finalize();
    setRunWorld("", nullptr);
    runWorld = nullptr;
    return status;
  };
  auto failed = [&] {
    std::fprintf(stderr, "synpl: error: %s%s\n", prefix, synpl_rt_last_error());
    return finish(1, true);
  };
  Plan plan;
  if (loadPlan(desc, plan) != SYNPL_RT_OK)
    return failed();
  Options options;
  options.rank = world->rank();
  options.ranks = world->size();
  if (int r = parseOptions(argc, argv, options, plan))
    return finish(r == 1 ? 0 : 2, false);
  if (!options.lead())
    options.quiet = true; // rank 0 alone prints progress and notes
  if (checkWorld(plan, world->size(), device) != SYNPL_RT_OK)
    return failed();
  if (!options.quiet)
    printWorld(plan, *world);
  Executor ex(plan, options, device);
  ex.setWorld(world.get());
  if (ex.setUp() != SYNPL_RT_OK)
    return failed();
  // SIGTERM and SIGINT stop the training loop gracefully while it runs;
  // the previous dispositions come back when it returns.
  StopSignals stop;
  int status = ex.run();
  return finish(status, status == 1);
}

} // namespace

extern "C" int synpl_rt_main(int argc, char **argv, const synpl_plan_desc *desc) {
  return mainOn(argc, argv, desc, nullptr);
}

extern "C" int synpl_rt_main_device(int argc, char **argv, const synpl_plan_desc *desc,
                                    const synpl_rt_device *device) {
  if (!device || !device->name || !device->write_slot || !device->read_slot ||
      !device->step || !device->last_error) {
    std::fprintf(stderr, "synpl: error: synpl_rt_main_device needs a device with a name "
                         "and all four calls\n");
    return 1;
  }
  return mainOn(argc, argv, desc, device);
}
