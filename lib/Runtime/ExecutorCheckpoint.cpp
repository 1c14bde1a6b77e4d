//===- ExecutorCheckpoint.cpp - Saving and resuming a run --------------===//
//
// The executor's checkpoints (the file format is Checkpoint.cpp's): the
// plan's fingerprint, so that a checkpoint only resumes the program that
// wrote it, and saving and restoring the persistent slots with the
// position in the run. A resumed checkpoint is checked whole before any of
// it is restored: the program, the data, the run's steps per epoch and
// epochs, then every block (one per actor-state slot and control region,
// each once, of the slot's size; float state finite). In a data-parallel
// run rank 0 writes the checkpoints, every rank reads the one it resumes
// from, and a checkpoint resumes only a run of the world size it records.
// A tensor-parallel run's file holds each split slot's full tensor, as a
// one-process run's would: rank 0 gathers the ranks' blocks to write it,
// and every rank restores its own block of it (Shards.cpp). A slot the
// `rank` init fills keeps this process's rank.
//
//===----------------------------------------------------------------------===//
#include "ExecutorImpl.h"
#include "Internal.h"
#include "synpl/Runtime/PlanFormat.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
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
      sizeof(synpl_plan_program) / 8,    sizeof(synpl_plan_program_region) / 8,
      sizeof(synpl_plan_collective) / 8, sizeof(synpl_plan_collective_slot) / 8};
  static_assert(SYNPL_PLAN_NUM_SECTIONS == 18, "a record size per section");
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
                                 int64_t lossCount) {
  // A world of several ranks: the running loss saved is the mean over the
  // ranks of each one's sum (every rank resumes with it, so the world's sum
  // at the epoch's end is the uninterrupted run's); the count is each
  // rank's own (the same on all). Then rank 0 writes.
  if (ranks() > 1) {
    if (int32_t st = sumOverRanks(&lossSum, 1))
      return st;
    lossSum /= (double)ranks();
  }
  auto persistent = [&](int64_t s) {
    return p.pools[p.slots[s].pool].kind == SYNPL_PLAN_POOL_PERSISTENT;
  };
  // Tensor parallel: every rank sends its blocks of the split state; rank
  // 0 writes the full tensors.
  std::vector<std::vector<uint8_t>> gathered(p.slots.size);
  for (int64_t s = 0; s < p.slots.size; ++s)
    if (persistent(s) && isSharded(p, s))
      if (int32_t st = gatherShard(s, gathered[s]))
        return st;
  if (!lead())
    return SYNPL_RT_OK;
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
  // A data-parallel program (planned ranks > 1) records the world size
  // after them: its data order (which samples each rank read) depends on
  // it. A one-process program's checkpoint is as before.
  if (p.header->ranks > 1)
    c.data.push_back((uint64_t)ranks());
  // Actor state: every slot of a persistent pool. A checkpoint never holds
  // NaN or infinity (--resume would refuse it): the run stops instead, and
  // the last checkpoint written stays.
  std::string where = textRun     ? "step " + std::to_string(globalStep)
                      : batch == 0 ? "epoch " + std::to_string(epoch0) + " (step " +
                                         std::to_string(globalStep) + ")"
                                   : stepLabel(true, globalStep, epoch0 + 1, batch - 1);
  for (int64_t s = 0; s < p.slots.size; ++s)
    if (persistent(s)) {
      bool full = isSharded(p, s);
      std::vector<uint8_t> bytes = std::move(gathered[s]);
      if (!full) {
        bytes.resize((size_t)p.slots[s].size);
        if (int32_t st = readSlot(s, 0, bytes.data(), bytes.size()))
          return st;
      }
      if (int32_t st = checkStateBytes(s, bytes.data(), where,
                                       "the run stops without writing checkpoint " + path +
                                           " (its last checkpoint, if any, is unchanged)",
                                       full))
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

namespace {

/// A float slot's saved bytes hold no NaN or infinity: such state only
/// trains on to NaN (and a run stops at its first non-finite loss, so a
/// checkpoint that holds one is damaged or edited). A split slot's bytes
/// are its full tensor.
int32_t checkFinite(const char *path, const Plan &p, int64_t slot,
                    const std::vector<uint8_t> &bytes) {
  const synpl_plan_slot &s = p.slots[slot];
  int64_t elements = isSharded(p, slot) ? s.elements * p.header->ranks : s.elements;
  int64_t n = std::min<int64_t>(elements, (int64_t)bytes.size() / elementBytes(s.element));
  double v = 0;
  int64_t e = firstNonFinite(bytes.data(), s.element, n, &v); // integers: -1
  if (e < 0)
    return SYNPL_RT_OK;
  return fail(SYNPL_RT_ERR_FORMAT,
              "%s: checkpoint holds a non-finite value in actor state %s: %s at element "
              "%" PRId64,
              path, p.str(s.name), nonFiniteName(v), e);
}

} // namespace

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
  if (c.data.size() != 2 * ingests.size() && c.data.size() != 2 * ingests.size() + 1)
    return fail(SYNPL_RT_ERR_FORMAT, "%s: checkpoint records %zu data sources, the program reads %zu",
                f, c.data.size() / 2, ingests.size());
  // The world size it was written with (no word: one process).
  uint64_t written = c.data.size() % 2 ? c.data.back() : 1;
  if (written != (uint64_t)ranks())
    return fail(SYNPL_RT_ERR_INVALID,
                "%s: checkpoint was written by a run of %" PRIu64 " rank%s; this run has %" PRId64
                " (each rank's share of the data depends on the world size: resume with "
                "%" PRIu64 ", e.g. mpirun -np %" PRIu64 ")",
                f, written, written == 1 ? "" : "s", ranks(), written, written);
  for (size_t i = 0; i < ingests.size(); ++i)
    if (c.data[2 * i] != (uint64_t)ingests[i].desc->seed ||
        c.data[2 * i + 1] != (uint64_t)ingests[i].train.samples)
      return fail(SYNPL_RT_ERR_FORMAT,
                  "%s: checkpoint was written over %" PRIu64 " training samples (seed %" PRIu64
                  "); %s has %" PRId64,
                  f, c.data[2 * i + 1], c.data[2 * i], ingests[i].train.fields[0].path.c_str(),
                  ingests[i].train.samples);
  if (c.stepsPerEpoch != stepsPerEpoch)
    return fail(SYNPL_RT_ERR_FORMAT,
                "%s: checkpoint was written by a run of %" PRId64
                " steps per epoch; this run takes %" PRId64 " (--steps, the data)",
                f, c.stepsPerEpoch, stepsPerEpoch);
  if (c.epoch > o.epochs || (c.epoch == o.epochs && c.batch > 0))
    return fail(SYNPL_RT_ERR_INVALID,
                "%s: checkpoint is in epoch %" PRId64 ", past this run's %" PRId64
                " epoch(s) (--epochs)",
                f, c.epoch + 1, o.epochs);
  // Every block is checked before any is restored: a refused checkpoint
  // leaves the state as the inits made it.
  struct Target {
    const CheckpointBlob *blob;
    int64_t slot;  ///< an actor-state slot, or -1
    uint8_t *host; ///< where the bytes go on the host (null: a device slot)
  };
  std::vector<Target> targets;
  std::vector<bool> seen(p.slots.size + p.regions.size, false);
  for (const CheckpointBlob &b : c.blobs) {
    bool region = b.id & kRegionBlob;
    uint64_t i = b.id & ~kRegionBlob;
    bool isSlot = !region && i < (uint64_t)p.slots.size &&
                  p.pools[p.slots[i].pool].kind == SYNPL_PLAN_POOL_PERSISTENT;
    bool isRegion = region && i < (uint64_t)p.regions.size && p.regions[i].queue_entry <= 0;
    if (!isSlot && !isRegion)
      return fail(SYNPL_RT_ERR_FORMAT, "%s: checkpoint holds a state block (id %" PRIu64
                                       ") this program does not have",
                  f, b.id);
    const char *what = isSlot ? "actor state" : "control region";
    const char *name = p.str(isSlot ? p.slots[i].name : p.regions[i].name);
    bool split = isSlot && isSharded(p, (int64_t)i);
    int64_t size = split    ? shardShape(p, (int64_t)i).fullBytes()
                   : isSlot ? p.slots[i].size
                            : std::max<int64_t>(p.regions[i].size, 8);
    size_t index = isSlot ? i : p.slots.size + i;
    if (seen[index])
      return fail(SYNPL_RT_ERR_FORMAT, "%s: checkpoint holds %s %s twice", f, what, name);
    seen[index] = true;
    if ((int64_t)b.bytes.size() != size)
      return fail(SYNPL_RT_ERR_FORMAT,
                  "%s: checkpoint holds %zu bytes of %s %s; this program's %s is %" PRId64
                  " bytes%s",
                  f, b.bytes.size(), what, name, name, size,
                  split ? " (the full tensor its ranks split)" : "");
    if (isSlot)
      if (int32_t st = checkFinite(f, p, (int64_t)i, b.bytes))
        return st;
    uint8_t *host = isRegion ? static_cast<uint8_t *>(regionMem[i])
                    : onDevice((int64_t)i) ? nullptr
                                           : addr[0][i];
    targets.push_back({&b, isSlot ? (int64_t)i : -1, host});
  }
  for (int64_t s = 0; s < p.slots.size; ++s)
    if (p.pools[p.slots[s].pool].kind == SYNPL_PLAN_POOL_PERSISTENT && !seen[s])
      return fail(SYNPL_RT_ERR_FORMAT, "%s: checkpoint lacks actor state %s", f,
                  p.str(p.slots[s].name));
  for (int64_t r = 0; r < p.regions.size; ++r)
    if (p.regions[r].queue_entry <= 0 && !seen[p.slots.size + r])
      return fail(SYNPL_RT_ERR_FORMAT, "%s: checkpoint lacks control region %s", f,
                  p.str(p.regions[r].name));
  for (const Target &t : targets) {
    // Rank 0 wrote its own rank; this process keeps its.
    if (t.slot >= 0 && holdsRank(p, t.slot))
      continue;
    const uint8_t *bytes = t.blob->bytes.data();
    size_t size = t.blob->bytes.size();
    std::vector<uint8_t> block;
    if (t.slot >= 0 && isSharded(p, t.slot)) {
      ShardShape shape = shardShape(p, t.slot);
      block.resize((size_t)shape.blockBytes());
      shape.take(bytes, comm->rank(), shape.rows, block.data());
      bytes = block.data();
      size = block.size();
    }
    if (t.host)
      std::memcpy(t.host, bytes, size);
    else if (int32_t st = writeSlot(t.slot, 0, bytes, size))
      return st;
  }
  return SYNPL_RT_OK;
}

} // namespace synpl::rt::exec
