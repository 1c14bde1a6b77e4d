//===- Shards.cpp - Tensor parallelism's split slots ----------------------===//
//
// A tensor-parallel plan (PlanFormat.h: a slot with shard_rows > 0) splits
// some of its tensors across its ranks by columns: each rank's slot holds
// its block, rows x w of the full rows x (ranks x w). The runtime keeps
// the blocks consistent with what a one-process run of the unsplit program
// would hold, so that a run on N ranks starts from, and saves, the same
// numbers:
//
//  - inits: every rank computes the init of the full tensor (the same seed
//    and fan_in, so the same stream of draws and, for xavier, the full
//    tensor's fan_out) and keeps its columns; values that do not depend on
//    the position (zeros, ones, a constant) go into the block directly;
//  - the `rank` init: the process's rank in the world (0 alone), which the
//    kernels read to pick their block of a tensor;
//  - checkpoints and weight files hold full tensors: rank 0 gathers every
//    rank's block to write one (gatherShard, for ExecutorCheckpoint.cpp),
//    and every rank restores its block of the full tensor a file holds.
//
//===----------------------------------------------------------------------===//
#include "ExecutorImpl.h"
#include "Internal.h"
#include "synpl/Runtime/PlanFormat.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace synpl::rt::exec {

void ShardShape::take(const uint8_t *full, int64_t rank, int64_t n, uint8_t *block) const {
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(block + i * rowBytes, full + (i * ranks + rank) * rowBytes, (size_t)rowBytes);
}

void ShardShape::place(const uint8_t *block, int64_t rank, int64_t n, uint8_t *full) const {
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(full + (i * ranks + rank) * rowBytes, block + i * rowBytes, (size_t)rowBytes);
}

ShardShape shardShape(const Plan &p, int64_t slot) {
  const synpl_plan_slot &s = p.slots[slot];
  ShardShape shape;
  shape.rows = s.shard_rows;
  shape.rowBytes = s.elements / s.shard_rows * elementBytes(s.element);
  shape.ranks = p.header->ranks;
  return shape;
}

bool planSplitsSlots(const Plan &p) {
  for (int64_t s = 0; s < p.slots.size; ++s)
    if (isSharded(p, s))
      return true;
  return false;
}

bool planIsTensorParallel(const Plan &p) {
  if (!planSplitsSlots(p))
    return false;
  for (int64_t i = 0; i < p.ingests.size; ++i)
    if (p.ingests[i].sharded)
      return false;
  return true;
}

bool holdsRank(const Plan &p, int64_t slot) {
  for (int64_t i = 0; i < p.inits.size; ++i)
    if (p.inits[i].kind == SYNPL_PLAN_INIT_RANK && p.inits[i].slot == slot)
      return true;
  return false;
}

int32_t fillInit(const Plan &p, const synpl_plan_init &init, int64_t rank, uint8_t *addr,
                 const std::string &dataDir) {
  const synpl_plan_slot &s = p.slots[init.slot];
  if (init.kind == SYNPL_PLAN_INIT_RANK) {
    float value = (float)rank;
    std::memcpy(addr, &value, sizeof value);
    return SYNPL_RT_OK;
  }
  bool sameEverywhere = init.kind == SYNPL_PLAN_INIT_ZEROS ||
                        init.kind == SYNPL_PLAN_INIT_ONES ||
                        init.kind == SYNPL_PLAN_INIT_CONSTANT;
  if (!isSharded(p, init.slot) || sameEverywhere)
    return runInit(p, init, s, addr, dataDir);
  // The random fills draw one stream over the whole tensor (and xavier's
  // bound depends on its size), a file holds the whole tensor: fill the
  // full tensor as one process would, then keep this rank's columns.
  ShardShape shape = shardShape(p, init.slot);
  synpl_plan_slot full = s;
  full.elements = s.elements * shape.ranks;
  full.size = shape.fullBytes();
  full.shard_rows = 0;
  std::vector<uint8_t> values((size_t)full.size);
  if (int32_t st = runInit(p, init, full, values.data(), dataDir))
    return st;
  shape.take(values.data(), rank, shape.rows, addr);
  return SYNPL_RT_OK;
}

int32_t Executor::gatherShard(int64_t slot, std::vector<uint8_t> &full) {
  ShardShape shape = shardShape(p, slot);
  std::vector<uint8_t> block((size_t)shape.blockBytes());
  if (int32_t st = readSlot(slot, 0, block.data(), block.size()))
    return st;
  full.assign(lead() ? (size_t)shape.fullBytes() : 0, 0);
  // A few rows at a time: one MPI call moves at most 2^31 - 1 bytes, and
  // every rank (not only rank 0) receives what a call gathers.
  constexpr int64_t kStagingBytes = int64_t(64) << 20;
  int64_t rowsPerCall = std::max<int64_t>(1, kStagingBytes / shape.ranks / shape.rowBytes);
  std::vector<uint8_t> staging;
  for (int64_t first = 0; first < shape.rows; first += rowsPerCall) {
    int64_t n = std::min(rowsPerCall, shape.rows - first);
    int64_t bytes = n * shape.rowBytes;
    staging.resize((size_t)(shape.ranks * bytes));
    if (int32_t st = comm->allGather(block.data() + first * shape.rowBytes, staging.data(),
                                     bytes))
      return fail(st, "gathering the blocks of %s from the ranks: %s",
                  p.str(p.slots[slot].name), synpl_rt_last_error());
    if (lead())
      for (int64_t r = 0; r < shape.ranks; ++r)
        shape.place(staging.data() + r * bytes, r, n,
                    full.data() + first * shape.ranks * shape.rowBytes);
  }
  return SYNPL_RT_OK;
}

} // namespace synpl::rt::exec
