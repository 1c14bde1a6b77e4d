//===- ExecutorCuda.cpp - The executor's CUDA device --------------------===//
//
// The executor's side of a plan with device kernels: opening the GPU
// (Cuda.cpp's driver), loading the embedded cubin or PTX, device pools,
// one CUDA stream per step in flight, launching a kernel, transfers, and
// reading and writing slots that live on the device (or on a
// synpl_rt_device, which reads and writes them itself).
//
//===----------------------------------------------------------------------===//
#include "ExecutorImpl.h"
#include "Internal.h"
#include "synpl/Runtime/PlanFormat.h"

#include <cinttypes>
#include <cstring>
#include <string>
#include <vector>

using namespace synpl::rt;

namespace synpl::rt::exec {

int32_t Executor::setUpCuda() {
  cuda = std::make_unique<CudaDevice>();
  // One GPU per rank: a data-parallel rank takes the device of its place
  // on its host (the launcher's local rank, else its world rank) modulo
  // the devices it sees; a run of one process takes device 0.
  int local = 0;
  if (ranks() > 1 && !launcherLocalRank(local))
    local = comm->rank();
  if (int32_t st = cuda->open(p.header->device_arch, p.header->min_driver, local))
    return st;
  if (const char *e = std::getenv("SYNPL_CUDA_SYNC"))
    syncEach = *e && std::strcmp(e, "0") != 0;
  if (!o.quiet) {
    char which[64] = "";
    if (ranks() > 1)
      std::snprintf(which, sizeof which, "rank 0 on GPU %d of %d, ", cuda->ordinal,
                    cuda->deviceCount);
    std::fprintf(stderr, "synpl: running the kernels on %s (%scompute capability "
                         "%d.%d, driver CUDA %d.%d)\n",
                 cuda->name, which, cuda->ccMajor, cuda->ccMinor,
                 cuda->driverVersion / 1000, cuda->driverVersion % 1000 / 10);
  }
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
  // and replayed. --profile, SYNPL_CUDA_SYNC and --check-finite time or
  // check every launch.
  const char *g = std::getenv("SYNPL_CUDA_GRAPHS");
  useGraphs = cuda->hasGraphs() && !o.noGraphs && !o.profile && !syncEach && !o.checkFinite &&
              !(g && !std::strcmp(g, "0"));
  bool deviceIngest = false;
  for (int64_t i = 0; i < p.ingestFields.size; ++i)
    deviceIngest |= (bool)slotOnDevice[p.ingestFields[i].slot];
  graphable.assign(p.streams.size, !deviceIngest);
  for (int64_t s = 0; s < p.streams.size; ++s) {
    const synpl_plan_stream &sr = p.streams[s];
    for (int64_t e = sr.first_entry; e < sr.first_entry + sr.num_entries; ++e) {
      const synpl_plan_entry &en = p.entries[e];
      if (en.kind == SYNPL_PLAN_ENTRY_COLLECTIVE) {
        // A collective of host memory waits for the stream on the host; one
        // of device memory is NCCL's on several ranks (NCCL can be captured
        // from 2.9 on, but a graph replayed on every rank must stay in step
        // with theirs: launched one by one); alone, it is a device copy or
        // nothing, which a graph holds.
        const synpl_plan_collective &col = p.collectives[en.index];
        bool device = col.num_slots > 0 &&
                      slotOnDevice[p.collectiveSlots[col.first_slot].slot];
        if (!device || ranks() > 1)
          graphable[s] = false;
        continue;
      }
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
  // --check-finite waits for every kernel and stops at its step.
  overlap = !(ov && !std::strcmp(ov, "0")) && !o.profile && !syncEach && !o.checkFinite;
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
  // NCCL's errors on the stream's collectives surface here (a failed
  // peer, a network error), before the driver's.
  if (nccl)
    if (int32_t st = nccl->checkAsync(
            (std::string("on stream ") + p.str(p.streams[stream].name)).c_str()))
      return st;
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
  if (device) {
    int32_t st = device->read_slot(device->ctx, slot, dst, bytes);
    return st ? deviceFailed(st, (std::string("reading slot ") + p.str(p.slots[slot].name)).c_str())
              : st;
  }
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
  if (device) {
    int32_t st = device->write_slot(device->ctx, slot, src, bytes);
    return st ? deviceFailed(st, (std::string("writing slot ") + p.str(p.slots[slot].name)).c_str())
              : st;
  }
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

} // namespace synpl::rt::exec
