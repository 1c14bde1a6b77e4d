//===- Executor.cpp - Binds a compiled plan and trains --------------------===//
//
// The host executor every compiled program's main() calls (through
// synpl_rt_main: ExecutorMain.cpp, which also sets up the run's world).
// It reads the metadata tables (include/synpl/Runtime/PlanFormat.h) and
// checks them (PlanTables.cpp), parses the command line (Options.cpp),
// allocates the pools, fills the inits and decodes the data of every
// ingest (Ingest.cpp), and runs steps:
//
//   1. the control program decides the step: the runtime pushes the batch
//      index into its batch queue, calls it, and pops the launch descriptor
//      (bits 32 and up: the stream, low bits: the batch);
//   2. the ingests gather that batch of the epoch's sample order into their
//      slots (freelist slots are popped from their pool for the step);
//   3. the stream's entries run in order: kernels through the worker pool
//      (parallel_for over their split range; one chunk per thread for a
//      kernel with a grain), transfers as copies, collectives across the
//      ranks of a data-parallel run (ExecutorCollectives.cpp: started where
//      the stream reaches them, complete before their complete_before
//      entry, all complete at the step's end). On the host one step
//      finishes before the next begins, which every record / wait pair of
//      the plan allows;
//   4. the reports are read: `loss` (mean per epoch), `correct` (argmax
//      hits, for test accuracy).
//
// Evaluation runs the step on the test split with the actor state
// read-only, and only the entries the `correct` report depends on: the
// forward pass, not the backward pass or the handler's update. The test
// split's files are the training files' names with the prefix `train`
// replaced by `t10k` (the IDX naming of MNIST and Fashion-MNIST), in the
// same folder (the plan's `evaluate` prefix replaces `t10k`). A run that is
// to evaluate and finds no test files stops before training, naming them
// (Ingest.cpp's openData); without evaluation (--no-eval) the epoch line
// says test_accuracy=none.
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
// and replayed. Inits are computed on the host and copied in; reports and
// checkpoints copy device slots back (ExecutorCuda.cpp). See
// docs/runtime-cuda.md.
//
// The training loop (EpochLoop.cpp; StreamLoop.cpp for a program that
// reads text) takes its defaults (epochs, evaluation split, checkpoint
// interval) from the plan header; the command line overrides them.
// Checkpoints (Checkpoint.cpp's format, ExecutorCheckpoint.cpp) hold the
// position in the run, the data order and every actor-state slot and
// control region; --resume continues at the exact next batch. While the
// loop runs, SIGTERM and SIGINT stop it after the step in progress, with a
// checkpoint there (Signals.cpp). See docs/training.md.
//
//===----------------------------------------------------------------------===//
#include "ExecutorImpl.h"
#include "Internal.h"
#include "Signals.h"
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


//===----------------------------------------------------------------------===//
// The executor
//===----------------------------------------------------------------------===//


Executor::~Executor() {
  if (cuda) {
    for (CUstream st : cuStreams)
      if (st)
        cuda->cuStreamSynchronize(st);
    nccl.reset(); // its collectives are done; before the memory goes
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
      return fail(SYNPL_RT_ERR_NOMEM,
                  "cannot allocate memory pool %s (%s, %lld bytes): out of memory; the plan "
                  "sizes its pools when it is compiled (synplc -v prints each pool's peak)",
                  p.str(pool.name),
                  pool.kind == SYNPL_PLAN_POOL_FREELIST    ? "freelist"
                  : pool.kind == SYNPL_PLAN_POOL_PERSISTENT ? "persistent"
                                                            : "arena",
                  (long long)pool.capacity);
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
      CUresult pinned = cuda->cuMemHostRegister(base, bytes, cu::MEMHOSTREGISTER_PORTABLE);
      if (pinned == cu::SUCCESS) {
        pinnedHost.push_back(base);
      } else {
        // Not fatal: the pool stays pageable. Its copies are staged by the
        // driver, and a stream that copies to or from it is not captured
        // (a graph cannot hold a copy from pageable memory).
        if (!o.quiet)
          std::fprintf(stderr,
                       "synpl: note: cannot pin %llu bytes of host pool %s (%s); it "
                       "stays pageable, and the streams that copy it run without "
                       "CUDA graphs\n",
                       (unsigned long long)bytes, p.str(pool.name), cuda->errorName(pinned));
        for (int64_t s = 0; s < p.streams.size && s < (int64_t)graphable.size(); ++s) {
          const synpl_plan_stream &sr = p.streams[s];
          for (int64_t e = sr.first_entry; e < sr.first_entry + sr.num_entries; ++e) {
            const synpl_plan_entry &en = p.entries[e];
            if (en.kind != SYNPL_PLAN_ENTRY_TRANSFER)
              continue;
            const synpl_plan_transfer &t = p.transfers[en.index];
            if (p.slots[t.src].pool == i || p.slots[t.dst].pool == i)
              graphable[s] = false;
          }
        }
      }
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

int32_t Executor::setUp() {
  if (!comm) {
    ownComm = selfComm();
    comm = ownComm.get();
  }
  int32_t threads = (int32_t)o.threads;
  workers = synpl_rt_workers_create(threads);
  if (!workers)
    return synpl_rt_last_status();
  if (device) {
    // The device runs every step whole: the plan is the host's side only.
    if (p.kernels.size || p.transfers.size || p.header->device_arch > 0)
      return fail(SYNPL_RT_ERR_INVALID,
                  "a plan run on %s has no kernels or transfers of its own; this one has "
                  "%" PRId64 " kernels and %" PRId64 " transfers",
                  device->name, p.kernels.size, p.transfers.size);
    deviceStaging.assign(p.slots.size, {});
  } else if (p.header->device_arch > 0) {
    if (int32_t st = setUpCuda())
      return st;
  }
  if (int32_t st = allocatePools())
    return st;
  if (int32_t st = allocateRegions())
    return st;
  for (int64_t i = 0; i < p.inits.size; ++i) {
    const synpl_plan_init &init = p.inits[i];
    uint8_t *a = addr[0][init.slot];
    if (!a)
      return badTable("init of a run-time-placed slot");
    // A split slot's init is this rank's block (Shards.cpp).
    if (!onDevice(init.slot)) {
      if (int32_t st = fillInit(p, init, comm->rank(), a, o.dataDir))
        return st;
      continue;
    }
    // Computed on the host, then copied in.
    std::vector<uint8_t> host((size_t)p.slots[init.slot].size);
    if (int32_t st = fillInit(p, init, comm->rank(), host.data(), o.dataDir))
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
    } else if (en.kind == SYNPL_PLAN_ENTRY_COLLECTIVE) {
      std::vector<int64_t> reads, writes;
      collectiveAccess(en.index, reads, writes);
      for (int64_t slot : writes)
        writesState[e] = writesState[e] || persistent(slot);
    } else if (persistent(p.transfers[en.index].dst)) {
      writesState[e] = true;
    }
  }
  if (int32_t st = setUpCollectives())
    return st;
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
  // A data-parallel plan may reduce the `correct` report itself (an
  // all_reduce of its slot): the value is then the world's already.
  for (int64_t c = 0; c < p.collectives.size && correctReport >= 0; ++c) {
    const synpl_plan_collective &col = p.collectives[c];
    if (col.kind != SYNPL_PLAN_ALL_REDUCE ||
        (col.reduce != SYNPL_PLAN_REDUCE_SUM && col.reduce != SYNPL_PLAN_REDUCE_MEAN))
      continue;
    for (int64_t i = 0; i < col.num_slots; ++i)
      if (p.collectiveSlots[col.first_slot + i].slot == p.reports[correctReport].slot)
        correctWorldFactor = col.reduce == SYNPL_PLAN_REDUCE_SUM ? 1 : ranks();
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
        if (en.kind == SYNPL_PLAN_ENTRY_COLLECTIVE) {
          // A collective reads and writes its slots (every rank evaluates
          // the same entries, so each runs it where the others do).
          std::vector<int64_t> reads, writes;
          collectiveAccess(en.index, reads, writes);
          for (int64_t slot : writes)
            evalNeeded[e] = evalNeeded[e] || want[slot];
          if (evalNeeded[e])
            for (int64_t slot : reads)
              want[slot] = true;
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
  setUpFiniteChecks();
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
    // (workerCount > 1 here.)
    int64_t chunk = std::max(kr.grain, (kr.iterations + workerCount - 1) / workerCount);
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
    // Rows over the pool, like a kernel's split range: always under an
    // explicit --threads N > 1, by measurement otherwise.
    Dispatch &d = g.gather;
    bool spread = workerCount > 1 && (o.threads != 0 || d.parallelNext());
    uint64_t g0 = nowNanos();
    gather(g.*split, g.desc->batch, batch, dst, spread ? workers : nullptr);
    if (workerCount > 1 && o.threads == 0)
      d.record(nowNanos() - g0);
    if (o.checkFinite)
      if (int32_t st = checkBatchFinite(g, g.*split, dst))
        return st;
    if (device)
      for (int64_t f = 0; f < g.desc->num_fields; ++f) {
        int64_t slot = p.ingestFields[g.desc->first_field + f].slot;
        if (int32_t st = writeSlot(slot, stream, deviceStaging[slot].data(),
                                   deviceStaging[slot].size()))
          return st;
      }
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
  if (device) {
    uint64_t s0 = nowNanos();
    int32_t st = device->step(device->ctx, train ? 1 : 0);
    controlNanos += nowNanos() - s0;
    return st ? deviceFailed(st, train ? "a training step" : "an evaluation step") : st;
  }
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
                  "%s: the loss is %s; training diverged; the run stops (its last "
                  "checkpoint, if any, is unchanged)%s",
                  stepLabel(true, t.stepBase + n, t.epoch, f.batch).c_str(),
                  nonFiniteName(loss), finiteHint());
  }
  if (t.progress)
    synpl_rt_progress_step(t.progress, (uint64_t)(t.stepBase + n), found ? loss : NAN);
  metrics.step(t.stepBase + n, t.epoch, found ? loss : NAN);
  return SYNPL_RT_OK;
}

int32_t Executor::issueEntries(int64_t stream, bool train, bool capturing) {
  const synpl_plan_stream &sr = p.streams[stream];
  bool events = cuda && !capturing;
  for (int64_t e = sr.first_entry; e < sr.first_entry + sr.num_entries; ++e) {
    // The collectives due before this entry complete first.
    if (!pendingCollectives.empty())
      if (int32_t st = completeCollectives(e))
        return st;
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
          // --profile times each kernel to its end; --check-finite reads
          // what it wrote.
          if (o.profile || o.checkFinite)
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
        if (o.checkFinite)
          if (int32_t st = checkKernelFinite(en.index, stream))
            return st;
        if (!pendingCollectives.empty())
          if (int32_t st = pollCollectives())
            return st;
      } else if (en.kind == SYNPL_PLAN_ENTRY_COLLECTIVE) {
        // Host memory (Comm, after the stream's work) or, in a CUDA plan,
        // device memory (NCCL on the stream).
        if (int32_t st = startCollective(en.index, stream))
          return st;
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
  // The step's end: every collective it started is complete.
  return completeCollectives(-1);
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
  uint64_t all = total + transferNanos + ingestNanos + controlNanos + collectiveWaitNanos;
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
  if (collectiveCalls) {
    // In flight: start to completion; waited: the host blocked in them; the
    // rest of the flight overlapped the kernels that ran meanwhile.
    uint64_t overlapped =
        collectiveFlightNanos > collectiveWaitNanos ? collectiveFlightNanos - collectiveWaitNanos : 0;
    std::fprintf(stderr, "  %-44s %8" PRIu64 " %12.2f %10.1f %6.2f\n", "(collectives: waiting)",
                 collectiveCalls, collectiveWaitNanos / 1e6,
                 collectiveWaitNanos / 1e3 / collectiveCalls,
                 all ? 100.0 * collectiveWaitNanos / all : 0.0);
    std::fprintf(stderr,
                 "collectives (%s, %" PRId64 " rank%s): %" PRIu64 " calls, %.2f ms in flight, "
                 "%.2f ms waited for, %.2f ms (%.1f%%) overlapped with kernels\n",
                 comm->backend(), ranks(), ranks() == 1 ? "" : "s", collectiveCalls,
                 collectiveFlightNanos / 1e6, collectiveWaitNanos / 1e6, overlapped / 1e6,
                 collectiveFlightNanos ? 100.0 * overlapped / collectiveFlightNanos : 0.0);
  }
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

int32_t Executor::deviceFailed(int32_t status, const char *doing) const {
  const char *why = device->last_error(device->ctx);
  return fail(status, "%s, %s: %s", device->name, doing, why && *why ? why : "failed");
}

} // namespace synpl::rt::exec
