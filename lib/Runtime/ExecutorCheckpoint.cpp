//===- ExecutorCheckpoint.cpp - Saving and resuming a run --------------===//
//
// The executor's checkpoints (the file format is Checkpoint.cpp's): the
// plan's fingerprint, so that a checkpoint only resumes the program that
// wrote it, and saving and restoring the persistent slots with the
// position in the run.
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

} // namespace synpl::rt::exec
