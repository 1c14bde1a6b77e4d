//===- Finite.cpp - Finding the first NaN or infinity of a run ------------===//
//
// A loss that becomes NaN or infinite stops the run (Executor::retireOne),
// and so does an epoch that ends with a non-finite value in the actor
// state (EpochLoop.cpp, before the epoch's checkpoint is written) or a
// checkpoint about to hold one (ExecutorCheckpoint.cpp): such state only
// trains on to NaN, and --resume refuses it anyway.
//
// With --check-finite the executor finds where the first non-finite value
// came from: after every kernel of a step (training and evaluation) it
// scans the float slots the kernel writes (its output arguments of element
// type f32, f64, f16 or bf16; integer slots cannot hold one), and after
// every gather the batch's float fields; the first NaN or infinity stops
// the run naming the step, the kernel, the slot and the element. On a GPU
// each kernel's stream is synchronized and its device outputs copied back
// to be scanned (the step runs without CUDA graphs and without overlap).
// Without the flag the check costs one branch per kernel.
//
//===----------------------------------------------------------------------===//
#include "ExecutorImpl.h"
#include "Internal.h"
#include "synpl/Runtime/PlanFormat.h"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace synpl::rt {

namespace {

/// The first value of `n` whose exponent bits (`mask`) are all ones: a NaN
/// or an infinity. Blocks are scanned without a branch per value (the loop
/// vectorizes); only a block with a hit is walked again.
template <typename U> int64_t firstAllOnes(const uint8_t *data, int64_t n, U mask) {
  constexpr int64_t kBlock = 1024;
  for (int64_t b = 0; b < n; b += kBlock) {
    int64_t e = std::min(n, b + kBlock);
    uint32_t hits = 0;
    for (int64_t i = b; i < e; ++i) {
      U x;
      std::memcpy(&x, data + i * sizeof(U), sizeof(U));
      hits += (x & mask) == mask;
    }
    if (!hits)
      continue;
    for (int64_t i = b; i < e; ++i) {
      U x;
      std::memcpy(&x, data + i * sizeof(U), sizeof(U));
      if ((x & mask) == mask)
        return i;
    }
  }
  return -1;
}

} // namespace

int64_t firstNonFinite(const void *data, int64_t element, int64_t count, double *value) {
  const uint8_t *d = static_cast<const uint8_t *>(data);
  int64_t i = -1;
  switch (element) {
  case SYNPL_PLAN_F32:
    i = firstAllOnes<uint32_t>(d, count, 0x7F800000u);
    if (i >= 0) {
      float x;
      std::memcpy(&x, d + i * 4, 4);
      *value = x;
    }
    return i;
  case SYNPL_PLAN_F64:
    i = firstAllOnes<uint64_t>(d, count, 0x7FF0000000000000ull);
    if (i >= 0)
      std::memcpy(value, d + i * 8, 8);
    return i;
  case SYNPL_PLAN_F16:
  case SYNPL_PLAN_BF16: {
    uint16_t expMask = element == SYNPL_PLAN_F16 ? 0x7C00 : 0x7F80;
    i = firstAllOnes<uint16_t>(d, count, expMask);
    if (i >= 0) {
      // All-ones exponent: infinity or NaN (the mantissa and sign tell).
      uint16_t h;
      std::memcpy(&h, d + i * 2, 2);
      *value = (h & (expMask ^ 0x7FFF)) ? NAN : (h & 0x8000) ? -INFINITY : INFINITY;
    }
    return i;
  }
  default:
    return -1; // integers: always finite
  }
}

const char *nonFiniteName(double v) {
  if (std::isnan(v))
    return "nan";
  return v < 0 ? "-inf" : "inf";
}

} // namespace synpl::rt

namespace synpl::rt::exec {

namespace {

bool isFloat(int64_t element) {
  return element == SYNPL_PLAN_F32 || element == SYNPL_PLAN_F64 ||
         element == SYNPL_PLAN_F16 || element == SYNPL_PLAN_BF16;
}

constexpr const char *kStops = "the run stops (its last checkpoint, if any, is unchanged)";

/// A slot's values scanned by the worker pool, one chunk per thread: the
/// lowest non-finite index any chunk found.
struct ParallelScan {
  const uint8_t *data;
  int64_t element, elementBytes;
  std::atomic<int64_t> first{INT64_MAX};
};

void scanChunk(void *ctx, int64_t begin, int64_t end) {
  auto *scan = static_cast<ParallelScan *>(ctx);
  double v;
  int64_t i = firstNonFinite(scan->data + begin * scan->elementBytes, scan->element,
                             end - begin, &v);
  if (i < 0)
    return;
  int64_t at = begin + i, seen = scan->first.load();
  while (at < seen && !scan->first.compare_exchange_weak(seen, at)) {
  }
}

} // namespace

int64_t Executor::scanSlot(int64_t slot, const uint8_t *bytes, double *value,
                           bool fullTensor) const {
  const synpl_plan_slot &s = p.slots[slot];
  int64_t eb = elementBytes(s.element);
  int64_t n = fullTensor ? s.elements * p.header->ranks
                         : std::min<int64_t>(s.elements, s.size / eb);
  // Large outputs are spread over the threads the kernels use, so the
  // scan shrinks with the kernels as threads are added.
  constexpr int64_t kParallelMin = 1 << 16;
  if (n < kParallelMin || workerCount <= 1)
    return firstNonFinite(bytes, s.element, n, value);
  ParallelScan scan{bytes, s.element, eb};
  int64_t chunk = std::max<int64_t>(kParallelMin / 4, (n + workerCount - 1) / workerCount);
  synpl_rt_parallel_for_grain(workers, n, chunk, scanChunk, &scan);
  int64_t at = scan.first.load();
  if (at == INT64_MAX)
    return -1;
  firstNonFinite(bytes + at * eb, s.element, 1, value);
  return at;
}

void Executor::setUpFiniteChecks() {
  textRun = planReadsText(p);
  if (!o.checkFinite)
    return;
  finiteOutputs.assign(p.kernels.size, {});
  for (int64_t k = 0; k < p.kernels.size; ++k) {
    const synpl_plan_kernel &kr = p.kernels[k];
    for (int64_t a = kr.num_inputs; a < kr.num_args; ++a) {
      int64_t slot = p.kernelArgs[kr.first_arg + a].slot;
      std::vector<int64_t> &out = finiteOutputs[k];
      if (isFloat(p.slots[slot].element) && std::find(out.begin(), out.end(), slot) == out.end())
        out.push_back(slot);
    }
  }
}

std::string Executor::stepLabel(bool train, int64_t step, int64_t epoch,
                                int64_t batch) const {
  char text[160];
  if (train && textRun)
    std::snprintf(text, sizeof text, "step %" PRId64, step);
  else if (train)
    std::snprintf(text, sizeof text, "step %" PRId64 " (epoch %" PRId64 ", batch %" PRId64 ")",
                  step, epoch, batch + 1);
  else if (textRun)
    std::snprintf(text, sizeof text, "validation after step %" PRId64 ", batch %" PRId64, step,
                  batch + 1);
  else
    std::snprintf(text, sizeof text,
                  "evaluation after epoch %" PRId64 " (step %" PRId64 "), test batch %" PRId64,
                  epoch, step, batch + 1);
  return text;
}

const char *Executor::finiteHint() const {
  return o.checkFinite ? ""
                       : "; rerun with --check-finite to name the first kernel that wrote a "
                         "non-finite value";
}

std::string Executor::currentStepLabel() const {
  if (!tally)
    return "a step";
  // The tally's steps retired and in flight come before it.
  const Tally &t = *tally;
  int64_t step = stepTrain ? t.stepBase + t.retired + (int64_t)inFlight.size() + 1 : t.stepBase;
  return stepLabel(stepTrain, step, t.epoch, stepBatch);
}

int32_t Executor::checkKernelFinite(int64_t k, int64_t stream) {
  std::vector<uint8_t> staging;
  for (int64_t slot : finiteOutputs[k]) {
    const synpl_plan_slot &s = p.slots[slot];
    const uint8_t *bytes = slotAddr(slot, stream);
    if (onDevice(slot)) {
      staging.resize((size_t)s.size);
      if (int32_t st = readSlot(slot, stream, staging.data(), staging.size()))
        return st;
      bytes = staging.data();
    }
    double v = 0;
    int64_t at = scanSlot(slot, bytes, &v);
    if (at < 0)
      continue;
    std::string where = currentStepLabel();
    return fail(SYNPL_RT_ERR_INVALID,
                "%s: kernel %s wrote %s to slot %s at element %" PRId64 "; %s", where.c_str(),
                p.str(p.kernels[k].name), nonFiniteName(v), p.str(s.name), at, kStops);
  }
  return SYNPL_RT_OK;
}

int32_t Executor::checkBatchFinite(const Ingest &g, const Split &split,
                                   const std::vector<uint8_t *> &dst) {
  for (int64_t f = 0; f < g.desc->num_fields && f < (int64_t)dst.size(); ++f) {
    int64_t slot = p.ingestFields[g.desc->first_field + f].slot;
    if (!isFloat(p.slots[slot].element))
      continue;
    double v = 0;
    int64_t at = scanSlot(slot, dst[f], &v);
    if (at < 0)
      continue;
    std::string where = currentStepLabel();
    return fail(SYNPL_RT_ERR_INVALID,
                "%s: ingest %s gathered %s into slot %s at element %" PRId64
                " (from %s); %s",
                where.c_str(), p.str(g.desc->name), nonFiniteName(v), p.str(p.slots[slot].name),
                at, f < (int64_t)split.fields.size() ? split.fields[f].path.c_str() : "its data",
                kStops);
  }
  return SYNPL_RT_OK;
}

int32_t Executor::checkStateBytes(int64_t slot, const uint8_t *bytes, const std::string &where,
                                  const std::string &consequence, bool fullTensor) const {
  const synpl_plan_slot &s = p.slots[slot];
  if (!isFloat(s.element))
    return SYNPL_RT_OK;
  double v = 0;
  int64_t at = scanSlot(slot, bytes, &v, fullTensor);
  if (at < 0)
    return SYNPL_RT_OK;
  return fail(SYNPL_RT_ERR_INVALID, "%s: actor state %s holds %s at element %" PRId64 "; %s%s",
              where.c_str(), p.str(s.name), nonFiniteName(v), at, consequence.c_str(),
              finiteHint());
}

int32_t Executor::checkEpochFinite(int64_t epoch, int64_t step, double lossSum,
                                   int64_t lossCount) const {
  std::string where = "epoch " + std::to_string(epoch) + " (step " + std::to_string(step) + ")";
  const char *consequence = "the run stops without writing the epoch's checkpoint (its last "
                            "checkpoint, if any, is unchanged)";
  double loss = lossCount ? lossSum / (double)lossCount : 0.0;
  if (!std::isfinite(loss))
    return fail(SYNPL_RT_ERR_INVALID, "%s: the epoch's mean loss is %s; %s%s", where.c_str(),
                nonFiniteName(loss), consequence, finiteHint());
  return checkStateFinite(where, consequence);
}

int32_t Executor::checkStateFinite(const std::string &where,
                                   const std::string &consequence) const {
  std::vector<uint8_t> staging;
  for (int64_t slot = 0; slot < p.slots.size; ++slot) {
    const synpl_plan_slot &s = p.slots[slot];
    if (p.pools[s.pool].kind != SYNPL_PLAN_POOL_PERSISTENT || !isFloat(s.element))
      continue;
    const uint8_t *bytes = slotAddr(slot, 0);
    if (onDevice(slot)) {
      staging.resize((size_t)s.size);
      if (int32_t st = readSlot(slot, 0, staging.data(), staging.size()))
        return st;
      bytes = staging.data();
    }
    if (int32_t st = checkStateBytes(slot, bytes, where, consequence))
      return st;
  }
  return SYNPL_RT_OK;
}

} // namespace synpl::rt::exec
