//===- Dataset.cpp - Image classification sets: check, shuffle, batch -----===//
//
// The L2 "epoch shuffle" sampler on the host: a permutation per epoch that is
// a pure function of (seed, epoch), computed with a fixed generator
// (splitmix64-seeded xoshiro256**, Lemire's bounded draw, Fisher-Yates) so
// every machine and library version gets the same order -- std::shuffle and
// std::uniform_int_distribution are implementation-defined.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <vector>

using namespace synpl::rt;

namespace {

inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

struct Xoshiro256 {
  uint64_t s[4];
  explicit Xoshiro256(uint64_t seed) {
    for (uint64_t &w : s)
      w = splitmix64(seed);
  }
  uint64_t next() {
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
  }
  /// Uniform in [0, range), range > 0 (Lemire, with rejection: unbiased).
  uint64_t uniform(uint64_t range) {
    unsigned __int128 m = (unsigned __int128)next() * range;
    uint64_t low = uint64_t(m);
    if (low < range) {
      uint64_t threshold = (0 - range) % range;
      while (low < threshold) {
        m = (unsigned __int128)next() * range;
        low = uint64_t(m);
      }
    }
    return uint64_t(m >> 64);
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// SYNPL_RT_TRACE_BATCHES (docs/data-binding.md)
//===----------------------------------------------------------------------===//

namespace synpl::rt::trace {

namespace {

struct Trace {
  std::FILE *file = nullptr;
  std::mutex lock;
  Trace() {
    const char *path = std::getenv("SYNPL_RT_TRACE_BATCHES");
    if (path && *path) {
      file = std::fopen(path, "a");
      if (!file)
        std::fprintf(stderr, "synpl: warning: SYNPL_RT_TRACE_BATCHES: cannot open %s\n",
                     path);
    }
  }
};

Trace &state() {
  static Trace t; // the variable is read once, at the first use
  return t;
}

} // namespace

bool enabled() { return state().file != nullptr; }

void write(const std::string &line) {
  Trace &t = state();
  std::lock_guard<std::mutex> g(t.lock);
  // Flushed line by line: a run killed at once (SIGKILL) keeps its lines.
  std::fputs(line.c_str(), t.file);
  std::fflush(t.file);
}

} // namespace synpl::rt::trace

struct synpl_rt_dataset {
  synpl_rt_idx images{};
  synpl_rt_idx labels{};
  uint32_t size = 0, rows = 0, cols = 0, numClasses = 0;
  uint32_t *order = nullptr;
};

extern "C" {

int32_t synpl_rt_epoch_permutation(uint64_t seed, uint64_t epoch, uint32_t n,
                                   uint32_t *perm) {
  if (!perm && n != 0)
    return fail(SYNPL_RT_ERR_INVALID, "epoch permutation: null output");
  for (uint32_t i = 0; i < n; ++i)
    perm[i] = i;
  Xoshiro256 rng(seed ^ (0x9E3779B97F4A7C15ull * (epoch + 1)));
  for (uint32_t i = n; i > 1; --i) {
    uint32_t j = uint32_t(rng.uniform(i));
    uint32_t t = perm[i - 1];
    perm[i - 1] = perm[j];
    perm[j] = t;
  }
  return SYNPL_RT_OK;
}

int32_t synpl_rt_dataset_open_idx(const char *images_path,
                                  const char *labels_path, uint32_t num_classes,
                                  synpl_rt_dataset **out) {
  if (!out)
    return fail(SYNPL_RT_ERR_INVALID, "dataset: null output");
  *out = nullptr;
  if (!images_path || !labels_path)
    return fail(SYNPL_RT_ERR_INVALID, "dataset: null path");
  if (num_classes == 0 || num_classes > 256)
    return fail(SYNPL_RT_ERR_INVALID,
                "dataset: num_classes %u is not in [1, 256] (u8 labels)",
                num_classes);
  auto *ds = new (std::nothrow) synpl_rt_dataset();
  if (!ds)
    return fail(SYNPL_RT_ERR_NOMEM, "dataset: out of memory");
  auto bail = [&](int32_t st) {
    synpl_rt_dataset_destroy(ds);
    return st;
  };
  if (int32_t st = synpl_rt_idx_load_expect(
          images_path, SYNPL_RT_IDX_MAGIC_IMAGES, &ds->images))
    return bail(st);
  if (int32_t st = synpl_rt_idx_load_expect(
          labels_path, SYNPL_RT_IDX_MAGIC_LABELS, &ds->labels))
    return bail(st);
  uint32_t n = ds->images.dims[0];
  if (ds->labels.dims[0] != n)
    return bail(fail(SYNPL_RT_ERR_FORMAT,
                     "%s: %u labels, but %s has %u images", labels_path,
                     ds->labels.dims[0], images_path, n));
  if (ds->images.dims[1] == 0 || ds->images.dims[2] == 0)
    return bail(fail(SYNPL_RT_ERR_FORMAT, "%s: empty images (%u x %u pixels)",
                     images_path, ds->images.dims[1], ds->images.dims[2]));
  for (uint32_t i = 0; i < n; ++i)
    if (ds->labels.data[i] >= num_classes)
      return bail(fail(SYNPL_RT_ERR_FORMAT,
                       "%s: label %u at index %u is out of range [0, %u)",
                       labels_path, ds->labels.data[i], i, num_classes));
  ds->size = n;
  ds->rows = ds->images.dims[1];
  ds->cols = ds->images.dims[2];
  ds->numClasses = num_classes;
  ds->order = new (std::nothrow) uint32_t[n ? n : 1];
  if (!ds->order)
    return bail(fail(SYNPL_RT_ERR_NOMEM, "dataset: out of memory"));
  for (uint32_t i = 0; i < n; ++i)
    ds->order[i] = i;
  *out = ds;
  return SYNPL_RT_OK;
}

void synpl_rt_dataset_destroy(synpl_rt_dataset *dataset) {
  if (!dataset)
    return;
  synpl_rt_idx_free(&dataset->images);
  synpl_rt_idx_free(&dataset->labels);
  delete[] dataset->order;
  delete dataset;
}

uint32_t synpl_rt_dataset_size(const synpl_rt_dataset *d) {
  return d ? d->size : 0;
}
uint32_t synpl_rt_dataset_rows(const synpl_rt_dataset *d) {
  return d ? d->rows : 0;
}
uint32_t synpl_rt_dataset_cols(const synpl_rt_dataset *d) {
  return d ? d->cols : 0;
}
uint32_t synpl_rt_dataset_num_classes(const synpl_rt_dataset *d) {
  return d ? d->numClasses : 0;
}
const uint8_t *synpl_rt_dataset_images(const synpl_rt_dataset *d) {
  return d ? d->images.data : nullptr;
}
const uint8_t *synpl_rt_dataset_labels(const synpl_rt_dataset *d) {
  return d ? d->labels.data : nullptr;
}
const uint32_t *synpl_rt_dataset_order(const synpl_rt_dataset *d) {
  return d ? d->order : nullptr;
}

int32_t synpl_rt_dataset_set_epoch(synpl_rt_dataset *dataset, uint64_t seed,
                                   uint64_t epoch, int32_t shuffle) {
  if (!dataset)
    return fail(SYNPL_RT_ERR_INVALID, "dataset: null dataset");
  if (shuffle)
    return synpl_rt_epoch_permutation(seed, epoch, dataset->size,
                                      dataset->order);
  for (uint32_t i = 0; i < dataset->size; ++i)
    dataset->order[i] = i;
  return SYNPL_RT_OK;
}

uint64_t synpl_rt_dataset_num_batches(const synpl_rt_dataset *dataset,
                                      uint32_t batch_size, int32_t drop_last) {
  if (!dataset || batch_size == 0)
    return 0;
  uint64_t n = dataset->size;
  return drop_last ? n / batch_size : (n + batch_size - 1) / batch_size;
}

} // extern "C"

namespace {

// pixel / 255 in f32, as a table: exactly what `x.astype(float32) / 255` gives.
struct UnitScale {
  float v[256];
  UnitScale() {
    for (int i = 0; i < 256; ++i)
      v[i] = float(i) / 255.0f;
  }
};
const UnitScale kUnitScale;

template <typename Pixel, typename Convert>
int32_t gatherBatch(const synpl_rt_dataset *ds, uint64_t batchIndex,
                    uint32_t batchSize, int32_t dropLast, Pixel *images,
                    int32_t *labels, uint32_t *count, Convert convert) {
  if (count)
    *count = 0;
  if (!ds || !images || !labels)
    return fail(SYNPL_RT_ERR_INVALID, "dataset batch: null argument");
  if (batchSize == 0)
    return fail(SYNPL_RT_ERR_INVALID, "dataset batch: batch size must be positive");
  uint64_t batches = synpl_rt_dataset_num_batches(ds, batchSize, dropLast);
  if (batchIndex >= batches)
    return fail(SYNPL_RT_ERR_INVALID,
                "dataset batch: batch %llu is out of range [0, %llu) (%u "
                "samples, batch size %u%s)",
                (unsigned long long)batchIndex, (unsigned long long)batches,
                ds->size, batchSize, dropLast ? ", drop_last" : "");
  uint64_t pixels = uint64_t(ds->rows) * ds->cols;
  uint64_t first = batchIndex * batchSize;
  uint64_t rowsHere = ds->size - first < batchSize ? ds->size - first : batchSize;
  for (uint64_t r = 0; r < rowsHere; ++r) {
    uint32_t sample = ds->order[first + r];
    const uint8_t *src = ds->images.data + uint64_t(sample) * pixels;
    Pixel *dst = images + r * pixels;
    for (uint64_t p = 0; p < pixels; ++p)
      dst[p] = convert(src[p]);
    labels[r] = int32_t(ds->labels.data[sample]);
  }
  // Padding rows of a last partial batch: zero pixels, label -1 (masked).
  if (rowsHere < batchSize) {
    std::memset(images + rowsHere * pixels, 0,
                (batchSize - rowsHere) * pixels * sizeof(Pixel));
    for (uint64_t r = rowsHere; r < batchSize; ++r)
      labels[r] = -1;
  }
  if (count)
    *count = uint32_t(rowsHere);
  return SYNPL_RT_OK;
}

} // namespace

extern "C" {

int32_t synpl_rt_dataset_batch_f32(const synpl_rt_dataset *dataset,
                                   uint64_t batch_index, uint32_t batch_size,
                                   int32_t drop_last, float *images,
                                   int32_t *labels, uint32_t *count) {
  return gatherBatch(dataset, batch_index, batch_size, drop_last, images,
                     labels, count,
                     [](uint8_t v) { return kUnitScale.v[v]; });
}

int32_t synpl_rt_dataset_batch_u8(const synpl_rt_dataset *dataset,
                                  uint64_t batch_index, uint32_t batch_size,
                                  int32_t drop_last, uint8_t *images,
                                  int32_t *labels, uint32_t *count) {
  return gatherBatch(dataset, batch_index, batch_size, drop_last, images,
                     labels, count, [](uint8_t v) { return v; });
}

} // extern "C"
