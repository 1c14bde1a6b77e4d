//===- Ingest.cpp - State inits and the data a plan's ingests read -------===//
//
// What the executor does before the first step and at every batch: the
// plan's inits (zeros, ones, kaiming and the other random fills, the
// planned-steps and training-mode scalars; Shards.cpp's fillInit adds the
// rank and the blocks of split slots), resolving a data file's path
// (as compiled, or by name under --data), opening a split of IDX files
// (the test split beside the training one: the executor's openData, which
// stops a run that is to evaluate when its test files are missing), the
// epoch order and the gathering of one batch into its slots, which
// SYNPL_RT_TRACE_BATCHES=FILE records (docs/data-binding.md).
//
//===----------------------------------------------------------------------===//
#include "ExecutorImpl.h"
#include "Internal.h"
#include "synpl/Runtime/PlanFormat.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include <sys/stat.h>
#include <unistd.h>

using namespace synpl::rt;

namespace synpl::rt::exec {


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
int32_t runInit(const Plan &p, const synpl_plan_init &init, const synpl_plan_slot &s,
                uint8_t *addr, const std::string &dataDir) {
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

/// The ingests' splits: the training files (as compiled, or by name under
/// --data), and, when the run evaluates, the test files named after them in
/// the same folder (testPathOf). A run that is to evaluate (a `correct`
/// report, no --no-eval, the plan's split not `none`) and finds no test
/// file stops here, naming the files it looked for: it would otherwise
/// train and report no accuracy.
int32_t Executor::openData() {
  bool mustEvaluate = o.evaluate && correctReport >= 0;
  for (int64_t i = 0; i < p.ingests.size; ++i) {
    const synpl_plan_ingest &g = p.ingests[i];
    Ingest in;
    in.desc = &g;
    in.test.test = true;
    if (g.sharded) {
      // Both splits: each rank its slice of every training and every
      // evaluation batch.
      for (Split *sp : {&in.train, &in.test}) {
        sp->shardRank = comm->rank();
        sp->shardRanks = ranks();
      }
    }
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
    // A training file whose name gives no test file; the test files not found.
    std::string unnamed, missing;
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
      if (t.empty() && unnamed.empty())
        unnamed = path;
      else if (!t.empty() && !fileExists(t))
        missing += (missing.empty() ? "" : ", ") + t;
      test = test && !t.empty() && fileExists(t);
      testPaths.push_back(t);
    }
    int32_t st = openSplit(p, g, trainPaths, in.train);
    // What is wrong with the training data is said before the test split.
    if (!st && numBatches(in.train, g.batch, g.drop_last) == 0)
      st = in.train.shardRanks > 1
               ? fail(SYNPL_RT_ERR_FORMAT,
                      "%s: fewer samples (%" PRId64 ") than one global batch (%" PRId64
                      " ranks x %" PRId64 ")",
                      trainPaths[0].c_str(), in.train.samples, in.train.shardRanks, g.batch)
               : fail(SYNPL_RT_ERR_FORMAT, "%s: fewer samples than one batch",
                      trainPaths[0].c_str());
    else if (!st && mustEvaluate && !unnamed.empty())
      st = fail(SYNPL_RT_ERR_INVALID,
                "%s: no test split to evaluate on: a test file is named after its training "
                "file (train* -> %s*), and this name does not start with `train`; pass "
                "--no-eval to train without evaluation",
                unnamed.c_str(), o.testPrefix.c_str());
    else if (!st && mustEvaluate && !missing.empty())
      st = fail(SYNPL_RT_ERR_IO,
                "no test split to evaluate on: %s not found (evaluation reads the %s-* "
                "files next to the train-* ones); pass --no-eval to train without "
                "evaluation",
                missing.c_str(), o.testPrefix.c_str());
    else if (!st && test) {
      st = openSplit(p, g, testPaths, in.test);
      in.hasTest = !st;
    }
    ingests.push_back(std::move(in));
    if (st)
      return st;
  }
  return SYNPL_RT_OK;
}


/// Sample `src` of field `fd`'s file into `dst` as the slot holds it:
/// copied, or an integer file's sample converted to the floats of a float
/// field (the data-binding rule of docs/data-binding.md). The whole file is
/// never converted: each batch converts what it gathers.
void copySample(const Field &fd, const uint8_t *src, uint8_t *out) {
  auto *dst = reinterpret_cast<float *>(out);
  int64_t n = fd.sampleBytes / (int64_t)sizeof(float);
  switch (fd.convert) {
  case Field::Convert::U8Unit:
    // x / 255 rounded once to f32, as Dataset.cpp's gather and numpy's
    // `x.astype(float32) / 255` give (x * (1 / 255.f) is a different float
    // for about half the bytes). IEEE division is exact-rounded, so the
    // vectorised loop gives the same floats as a table would, without a
    // load per byte.
    for (int64_t i = 0; i < n; ++i)
      dst[i] = (float)src[i] / 255.0f;
    break;
  case Field::Convert::I8:
    for (int64_t i = 0; i < n; ++i)
      dst[i] = (float)(int8_t)src[i];
    break;
  case Field::Convert::I32:
    for (int64_t i = 0; i < n; ++i) {
      int32_t v;
      std::memcpy(&v, src + 4 * i, 4);
      dst[i] = (float)v;
    }
    break;
  case Field::Convert::None:
    std::memcpy(out, src, fd.sampleBytes);
    break;
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
    if (!st && floatSlot && field.idx.type != SYNPL_RT_IDX_F32) {
      field.convert = field.idx.type == SYNPL_RT_IDX_U8   ? Field::Convert::U8Unit
                      : field.idx.type == SYNPL_RT_IDX_I8 ? Field::Convert::I8
                                                          : Field::Convert::I32;
      field.sampleStep = perSample * (field.idx.type == SYNPL_RT_IDX_I32 ? 4 : 1);
    }
    if (st) {
      synpl_rt_idx_free(&field.idx);
      return st;
    }
    split.samples = count;
    split.fields.push_back(std::move(field));
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
  return shardBatches(s.samples, batch, s.shardRanks, dropLast);
}

/// SYNPL_RT_TRACE_BATCHES: the line of batch `b` as gathered into `addr`:
///   epoch E batch B indices i0 i1 ... labels l0 l1 ... checksum H
/// (or `test batch B ...`; a sharded split of a world of several ranks
/// says `... batch B rank R indices ...`, its slice of global batch B):
/// the split's sample indices of the batch's rows
/// (rows past the end of the split have none), the values of the first
/// field of one byte per sample (the labels; absent when there is none),
/// and H, the FNV-1a 64 (16 hex digits) of the bytes gathered into the
/// other fields' slots, in field order, padding rows included.
static void traceBatch(const Split &s, int64_t batch, int64_t b,
                       const std::vector<uint8_t *> &addr) {
  char num[64];
  if (s.test)
    std::snprintf(num, sizeof num, "test batch %lld", (long long)b);
  else
    std::snprintf(num, sizeof num, "epoch %lld batch %lld", (long long)s.epoch, (long long)b);
  std::string line = num;
  if (s.shardRanks > 1) {
    std::snprintf(num, sizeof num, " rank %lld", (long long)s.shardRank);
    line += num;
  }
  int64_t first = shardFirst(b, batch, s.shardRank, s.shardRanks);
  int64_t rows = batchRows(s, batch, b);
  line += " indices";
  for (int64_t r = 0; r < rows; ++r) {
    std::snprintf(num, sizeof num, " %u", s.order[first + r]);
    line += num;
  }
  int64_t labelField = -1;
  for (size_t f = 0; f < s.fields.size() && labelField < 0; ++f)
    if (s.fields[f].sampleBytes == 1)
      labelField = (int64_t)f;
  if (labelField >= 0) {
    line += " labels";
    for (int64_t r = 0; r < rows; ++r) {
      std::snprintf(num, sizeof num, " %u", (unsigned)addr[labelField][r]);
      line += num;
    }
  }
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t f = 0; f < s.fields.size(); ++f)
    if ((int64_t)f != labelField)
      h = fnv1a64(addr[f], (uint64_t)(s.fields[f].sampleBytes * batch), h);
  std::snprintf(num, sizeof num, " checksum %016llx\n", (unsigned long long)h);
  line += num;
  trace::write(line);
}

namespace {

/// One gather: its rows are split among the pool's threads.
struct GatherJob {
  const Split *split;
  int64_t first; // the split's position of row 0
  const std::vector<uint8_t *> *addr;
};

/// Rows [begin, end) of every field of a gather.
void gatherRows(void *ctx, int64_t begin, int64_t end) {
  const GatherJob &job = *static_cast<const GatherJob *>(ctx);
  const Split &s = *job.split;
  for (size_t f = 0; f < s.fields.size(); ++f) {
    const Field &fd = s.fields[f];
    uint8_t *dst = (*job.addr)[f];
    // The samples come in a shuffled order, so the hardware prefetcher
    // cannot see the next one coming: ask for the sample kAhead rows on
    // while this one converts (the gather is otherwise a wait on memory
    // per sample).
    constexpr int64_t kAhead = 4;
    // Row r's sample in the file; null past the end of the split.
    auto sampleOf = [&](int64_t r) -> const uint8_t * {
      int64_t i = job.first + r;
      return i < s.samples ? fd.samples() + (uint64_t)s.order[i] * fd.step() : nullptr;
    };
    auto prefetchRow = [&](int64_t r) {
      if (const uint8_t *src = r < end ? sampleOf(r) : nullptr)
        for (int64_t o = 0; o < fd.step(); o += 64)
          __builtin_prefetch(src + o);
    };
    for (int64_t r = begin; r < begin + kAhead; ++r)
      prefetchRow(r);
    for (int64_t r = begin; r < end; ++r) {
      prefetchRow(r + kAhead);
      if (const uint8_t *src = sampleOf(r))
        copySample(fd, src, dst + r * fd.sampleBytes);
      else
        std::memset(dst + r * fd.sampleBytes, fd.sampleBytes == 1 ? 0xFF : 0,
                    fd.sampleBytes);
    }
  }
}

} // namespace

/// Gathers batch `b` into the slots (a sharded split: this rank's slice of
/// global batch `b`): rows past the end of the split are zero (a label
/// slot's padding is 255, outside any class). With `workers`, each thread
/// of the pool gathers one contiguous run of rows: the gather waits on
/// memory (the samples are scattered), and each thread has its own misses
/// in flight.
void gather(const Split &s, int64_t batch, int64_t b, const std::vector<uint8_t *> &addr,
            synpl_rt_workers *workers) {
  GatherJob job{&s, shardFirst(b, batch, s.shardRank, s.shardRanks), &addr};
  int32_t threads = workers ? synpl_rt_workers_count(workers) : 1;
  if (threads > 1)
    synpl_rt_parallel_for_grain(workers, batch, (batch + threads - 1) / threads, gatherRows,
                                &job);
  else
    gatherRows(&job, 0, batch);
  if (trace::enabled())
    traceBatch(s, batch, b, addr);
}

} // namespace synpl::rt::exec
