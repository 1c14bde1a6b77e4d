//===- ExecutorCollectives.cpp - A plan's collectives across the ranks ----===//
//
// The COLLECTIVE entries of a plan's streams (PlanFormat.h), run on the
// world's communicator (Comm.h: one process, or Open MPI's ranks):
//
//  - all_reduce: the bucket's slots are packed into one staging buffer (a
//    bucket of one slot is reduced in place) and one non-blocking
//    all_reduce starts where the stream reaches the entry. It completes
//    before the entry at its `complete_before` (at once when that is -1,
//    and at the end of the step's entries at the latest): the executor
//    waits, divides a mean by the world size, and unpacks. Between the
//    kernels that run meanwhile it tests the requests, which drives MPI's
//    progress (Open MPI has no progress thread: without the tests the
//    bytes would move only in the wait).
//  - reduce_scatter of one (source, destination) pair: started and
//    completed like an all_reduce (update sharding's gradients, during the
//    backward pass).
//  - all_gather, reduce_scatter of several pairs, broadcast: blocking, where
//    the stream reaches them.
//
// The profile (--profile) counts the time each collective was in flight
// (start to completion) and the time the host waited for it; the rest of
// its flight overlapped the step's kernels.
//
//===----------------------------------------------------------------------===//
#include "ExecutorImpl.h"
#include "Internal.h"
#include "synpl/Runtime/PlanFormat.h"

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <string>
#include <vector>

namespace synpl::rt::exec {

namespace {

const char *kindName(int64_t kind) {
  switch (kind) {
  case SYNPL_PLAN_ALL_REDUCE:
    return "all_reduce";
  case SYNPL_PLAN_ALL_GATHER:
    return "all_gather";
  case SYNPL_PLAN_REDUCE_SCATTER:
    return "reduce_scatter";
  default:
    return "broadcast";
  }
}

} // namespace

int32_t Executor::sumOverRanks(double *v, int n) {
  if (ranks() == 1)
    return SYNPL_RT_OK;
  if (int32_t st = comm->allReduce(v, n, SYNPL_PLAN_F64, SYNPL_PLAN_REDUCE_SUM))
    return fail(st, "summing the run's numbers over the ranks: %s", synpl_rt_last_error());
  return SYNPL_RT_OK;
}

int Executor::agreedStop(int local) {
  if (ranks() == 1)
    return local;
  int32_t v = local;
  if (int32_t st = comm->allReduce(&v, 1, SYNPL_PLAN_I32, SYNPL_PLAN_REDUCE_MAX))
    synpl_rt_check(fail(st, "agreeing on a stop signal with the other ranks: %s",
                        synpl_rt_last_error()));
  return v;
}

void Executor::collectiveAccess(int64_t c, std::vector<int64_t> &reads,
                                std::vector<int64_t> &writes) const {
  const synpl_plan_collective &col = p.collectives[c];
  bool pairs = col.kind == SYNPL_PLAN_ALL_GATHER || col.kind == SYNPL_PLAN_REDUCE_SCATTER;
  for (int64_t i = 0; i < col.num_slots; ++i) {
    int64_t slot = p.collectiveSlots[col.first_slot + i].slot;
    if (!pairs || i % 2 == 0)
      reads.push_back(slot);
    if (!pairs || i % 2 == 1)
      writes.push_back(slot);
  }
}

int32_t Executor::setUpCollectives() {
  collectiveRuns.assign(p.collectives.size, {});
  collectiveOnDevice.assign(p.collectives.size, false);
  int64_t n = ranks();
  bool anyDevice = false, anyMean = false;
  for (int64_t c = 0; c < p.collectives.size; ++c) {
    const synpl_plan_collective &col = p.collectives[c];
    const char *name = p.str(col.name);
    auto slotAt = [&](int64_t i) -> const synpl_plan_slot & {
      return p.slots[p.collectiveSlots[col.first_slot + i].slot];
    };
    // Device memory (NCCL) or host memory (Comm): one or the other.
    for (int64_t i = 0; i < col.num_slots; ++i) {
      int64_t slot = p.collectiveSlots[col.first_slot + i].slot;
      bool dev = cuda && slotOnDevice[slot];
      if (i == 0)
        collectiveOnDevice[c] = dev;
      else if (dev != collectiveOnDevice[c])
        return fail(SYNPL_RT_ERR_FORMAT,
                    "collective %s mixes device and host memory: %s is in %s pool %s, %s in "
                    "%s pool %s",
                    name, p.str(slotAt(0).name), collectiveOnDevice[c] ? "device" : "host",
                    p.str(p.pools[slotAt(0).pool].name), p.str(p.slots[slot].name),
                    dev ? "device" : "host", p.str(p.pools[p.slots[slot].pool].name));
    }
    anyDevice = anyDevice || collectiveOnDevice[c];
    anyMean = anyMean || (collectiveOnDevice[c] && col.reduce == SYNPL_PLAN_REDUCE_MEAN &&
                          (col.kind == SYNPL_PLAN_ALL_REDUCE ||
                           col.kind == SYNPL_PLAN_REDUCE_SCATTER));
    if (col.kind == SYNPL_PLAN_BROADCAST && col.root >= n)
      return fail(SYNPL_RT_ERR_INVALID,
                  "collective %s broadcasts from rank %" PRId64 ", but the run has %" PRId64
                  " rank%s (the program was placed on %" PRId64 ": run it with at least %" PRId64
                  ")",
                  name, col.root, n, n == 1 ? "" : "s", p.header->ranks, col.root + 1);
    if (col.kind == SYNPL_PLAN_ALL_GATHER || col.kind == SYNPL_PLAN_REDUCE_SCATTER) {
      // The gathered (scattered) side holds one block per rank: its size
      // follows the world the program was compiled for.
      bool gather = col.kind == SYNPL_PLAN_ALL_GATHER;
      for (int64_t i = 0; i < col.num_slots; i += 2) {
        const synpl_plan_slot &src = slotAt(i), &dst = slotAt(i + 1);
        const synpl_plan_slot &block = gather ? src : dst, &whole = gather ? dst : src;
        if (whole.elements != n * block.elements)
          return fail(SYNPL_RT_ERR_INVALID,
                      "collective %s (%s) of %s into %s: %s holds %" PRId64
                      " elements, %" PRId64 " ranks x %" PRId64 " needed; the program was "
                      "compiled for %" PRId64 " rank%s: run it with that many",
                      name, kindName(col.kind), p.str(src.name), p.str(dst.name),
                      p.str(whole.name), whole.elements, n, block.elements,
                      p.header->ranks, p.header->ranks == 1 ? "" : "s");
      }
    }
    if (collectiveOnDevice[c] &&
        (col.kind == SYNPL_PLAN_ALL_REDUCE || col.kind == SYNPL_PLAN_REDUCE_SCATTER))
      for (int64_t i = 0; i < col.num_slots; ++i)
        if (!commReducible(slotAt(i).element))
          return fail(SYNPL_RT_ERR_INVALID,
                      "collective %s (%s) of %s: only f32, f64, i32 and i64 values are "
                      "reduced",
                      name, kindName(col.kind), p.str(slotAt(i).name));
    if (col.kind == SYNPL_PLAN_ALL_REDUCE && col.num_slots > 1 && !collectiveOnDevice[c]) {
      int64_t bytes = 0;
      for (int64_t i = 0; i < col.num_slots; ++i)
        bytes += slotAt(i).elements * elementBytes(slotAt(i).element);
      collectiveRuns[c].staging.resize((size_t)bytes);
    }
  }
  // Collectives of GPU memory on several ranks: NCCL, one communicator of
  // the world's ranks (alone they are the identity and need none).
  if (anyDevice && n > 1 && cuda) {
    if (int32_t st = NcclComm::open(*comm, nccl))
      return st;
    if (anyMean && !nccl->hasAvg())
      return fail(SYNPL_RT_ERR_COMM,
                  "NCCL %s (%s) has no ncclAvg, which this program's mean collectives "
                  "use: NCCL 2.10 or later is needed (SYNPL_NCCL_LIB names the library)",
                  nccl->versionText().c_str(), nccl->path().c_str());
    if (!o.quiet)
      std::fprintf(stderr, "synpl: collectives of GPU memory: NCCL %s (%s)\n",
                   nccl->versionText().c_str(), nccl->path().c_str());
  }
  return SYNPL_RT_OK;
}

int32_t Executor::startDeviceCollective(int64_t c, int64_t stream) {
  const synpl_plan_collective &col = p.collectives[c];
  auto slotOf = [&](int64_t i) { return p.collectiveSlots[col.first_slot + i].slot; };
  CUstream cs = cuStreams[stream];
  if (!nccl) {
    // A world of one: an all_reduce, a broadcast are the identity; a
    // gather or a scatter of one block copies it, on the stream.
    if (col.kind != SYNPL_PLAN_ALL_GATHER && col.kind != SYNPL_PLAN_REDUCE_SCATTER)
      return SYNPL_RT_OK;
    for (int64_t i = 0; i + 1 < col.num_slots; i += 2) {
      const synpl_plan_slot &src = p.slots[slotOf(i)], &dst = p.slots[slotOf(i + 1)];
      uint8_t *from = slotAddr(slotOf(i), stream), *to = slotAddr(slotOf(i + 1), stream);
      size_t bytes = (size_t)(std::min(src.elements, dst.elements) * elementBytes(src.element));
      if (from != to && bytes)
        if (int32_t st = cuda->check(cuda->cuMemcpyDtoDAsync(dptr(to), dptr(from), bytes, cs),
                                     "collective %s (%s)", p.str(col.name),
                                     kindName(col.kind)))
          return st;
    }
    return SYNPL_RT_OK;
  }
  // NCCL, in stream order: complete before any later entry of the stream
  // runs (its complete_before holds). A bucket of several slots is one
  // group of calls, one per slot, in place (no packing on the GPU).
  bool group = col.num_slots > (col.kind == SYNPL_PLAN_ALL_GATHER ||
                                        col.kind == SYNPL_PLAN_REDUCE_SCATTER
                                    ? 2
                                    : 1);
  if (group)
    if (int32_t st = nccl->groupStart())
      return st;
  int32_t st = SYNPL_RT_OK;
  for (int64_t i = 0; i < col.num_slots && !st; ++i) {
    int64_t slot = slotOf(i);
    const synpl_plan_slot &s = p.slots[slot];
    uint8_t *a = slotAddr(slot, stream);
    switch (col.kind) {
    case SYNPL_PLAN_ALL_REDUCE:
      st = nccl->allReduce(a, s.elements, s.element, col.reduce, cs);
      break;
    case SYNPL_PLAN_BROADCAST:
      st = nccl->broadcast(a, s.elements, s.element, (int)col.root, cs);
      break;
    case SYNPL_PLAN_ALL_GATHER:
      st = nccl->allGather(a, slotAddr(slotOf(i + 1), stream), s.elements, s.element, cs);
      ++i;
      break;
    default: // reduce_scatter: the source's blocks, this rank's into dst
      st = nccl->reduceScatter(a, slotAddr(slotOf(i + 1), stream),
                               p.slots[slotOf(i + 1)].elements, s.element, col.reduce, cs);
      ++i;
      break;
    }
  }
  if (group) {
    // The group ends even after a failed call (NCCL's group state is per
    // thread); the first error is the one reported.
    std::string first = st ? synpl_rt_last_error() : "";
    int32_t end = nccl->groupEnd();
    if (st)
      return fail(st, "%s", first.c_str());
    st = end;
  }
  return st;
}

int32_t Executor::startCollective(int64_t c, int64_t stream) {
  const synpl_plan_collective &col = p.collectives[c];
  CollectiveRun &run = collectiveRuns[c];
  auto slotOf = [&](int64_t i) { return p.collectiveSlots[col.first_slot + i].slot; };
  auto failed = [&](int32_t st) {
    return fail(st, "%s: collective %s (%s): %s", currentStepLabel().c_str(),
                p.str(col.name), kindName(col.kind), synpl_rt_last_error());
  };
  ++collectiveCalls;
  run.stream = stream;
  run.startNs = nowNanos();
  if (collectiveOnDevice[c]) {
    // Enqueued on the step's stream: complete in stream order. --profile
    // waits for it (the time it took is the host's wait).
    int32_t st = startDeviceCollective(c, stream);
    if (!st && o.profile)
      st = syncStream(stream);
    if (st)
      return failed(st);
    uint64_t spent = nowNanos() - run.startNs;
    collectiveWaitNanos += spent;
    collectiveFlightNanos += spent;
    return SYNPL_RT_OK;
  }
  // Host memory: what the stream's work wrote there is complete first.
  if (cuda)
    if (int32_t st = syncStream(stream))
      return failed(st);
  if (col.kind == SYNPL_PLAN_ALL_REDUCE) {
    const synpl_plan_slot &first = p.slots[slotOf(0)];
    void *buf = slotAddr(slotOf(0), stream);
    int64_t count = first.elements;
    if (col.num_slots > 1) {
      // One bucket, one request: the slots packed one after the other.
      uint8_t *at = run.staging.data();
      for (int64_t i = 0; i < col.num_slots; ++i) {
        const synpl_plan_slot &s = p.slots[slotOf(i)];
        uint64_t bytes = (uint64_t)(s.elements * elementBytes(s.element));
        std::memcpy(at, slotAddr(slotOf(i), stream), bytes);
        at += bytes;
      }
      buf = run.staging.data();
      count = (int64_t)run.staging.size() / elementBytes(first.element);
    }
    if (int32_t st = comm->startAllReduce(buf, count, first.element, col.reduce, run.req))
      return failed(st);
    if (col.complete_before < 0)
      return completeCollective(c);
    pendingCollectives.push_back(c);
    return SYNPL_RT_OK;
  }
  if (col.kind == SYNPL_PLAN_REDUCE_SCATTER && col.num_slots == 2) {
    // One (source, destination) pair: started like an all_reduce.
    const synpl_plan_slot &dst = p.slots[slotOf(1)];
    if (int32_t st = comm->startReduceScatter(slotAddr(slotOf(0), stream),
                                              slotAddr(slotOf(1), stream), dst.elements,
                                              dst.element, col.reduce, run.req))
      return failed(st);
    if (col.complete_before < 0)
      return completeCollective(c);
    pendingCollectives.push_back(c);
    return SYNPL_RT_OK;
  }
  int32_t st = SYNPL_RT_OK;
  for (int64_t i = 0; i < col.num_slots && !st; ++i) {
    int64_t slot = slotOf(i);
    const synpl_plan_slot &s = p.slots[slot];
    switch (col.kind) {
    case SYNPL_PLAN_BROADCAST:
      st = comm->broadcast(slotAddr(slot, stream), s.elements * elementBytes(s.element),
                           (int)col.root);
      break;
    case SYNPL_PLAN_ALL_GATHER:
      st = comm->allGather(slotAddr(slot, stream), slotAddr(slotOf(i + 1), stream),
                           s.elements * elementBytes(s.element));
      ++i;
      break;
    default: // reduce_scatter: the source's blocks, this rank's into dst
      st = comm->reduceScatter(slotAddr(slot, stream), slotAddr(slotOf(i + 1), stream),
                               p.slots[slotOf(i + 1)].elements, s.element, col.reduce);
      ++i;
      break;
    }
  }
  uint64_t spent = nowNanos() - run.startNs;
  collectiveWaitNanos += spent;
  collectiveFlightNanos += spent;
  return st ? failed(st) : SYNPL_RT_OK;
}

int32_t Executor::completeCollective(int64_t c) {
  const synpl_plan_collective &col = p.collectives[c];
  CollectiveRun &run = collectiveRuns[c];
  uint64_t t0 = nowNanos();
  if (int32_t st = comm->wait(run.req))
    return fail(st, "%s: collective %s (%s): %s", currentStepLabel().c_str(),
                p.str(col.name), kindName(col.kind), synpl_rt_last_error());
  uint64_t t1 = nowNanos();
  collectiveWaitNanos += t1 - t0;
  collectiveFlightNanos += t1 - run.startNs;
  if (col.kind == SYNPL_PLAN_ALL_REDUCE && col.num_slots > 1) {
    const uint8_t *at = run.staging.data();
    for (int64_t i = 0; i < col.num_slots; ++i) {
      int64_t slot = p.collectiveSlots[col.first_slot + i].slot;
      const synpl_plan_slot &s = p.slots[slot];
      uint64_t bytes = (uint64_t)(s.elements * elementBytes(s.element));
      std::memcpy(slotAddr(slot, run.stream), at, bytes);
      at += bytes;
    }
  }
  return SYNPL_RT_OK;
}

int32_t Executor::completeCollectives(int64_t entry) {
  for (size_t i = 0; i < pendingCollectives.size();) {
    int64_t c = pendingCollectives[i];
    if (entry >= 0 && p.collectives[c].complete_before != entry) {
      ++i;
      continue;
    }
    pendingCollectives.erase(pendingCollectives.begin() + (ptrdiff_t)i);
    if (int32_t st = completeCollective(c))
      return st;
  }
  return SYNPL_RT_OK;
}

int32_t Executor::pollCollectives() {
  for (int64_t c : pendingCollectives) {
    bool done = false;
    if (int32_t st = comm->test(collectiveRuns[c].req, done))
      return fail(st, "%s: collective %s: %s", currentStepLabel().c_str(),
                  p.str(p.collectives[c].name), synpl_rt_last_error());
  }
  return SYNPL_RT_OK;
}

} // namespace synpl::rt::exec
