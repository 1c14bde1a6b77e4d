//===- Internal.h - Shared helpers of the host runtime ----------*- C++ -*-===//
//
// Plain C++17: the runtime links into compiled programs, which carry no
// MLIR or LLVM. Built with -fno-exceptions; allocation failures are reported
// as statuses, never thrown.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_RUNTIME_INTERNAL_H
#define SYNPL_LIB_RUNTIME_INTERNAL_H

#include "synpl/Runtime/Runtime.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <initializer_list>
#include <string>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace synpl::rt {

/// Records `status` and a printf-formatted one-line message as the calling
/// thread's last error; returns `status` so callers can `return fail(...)`.
int32_t fail(int32_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/// A data-parallel run's failure path (Report.cpp): `prefix` starts every
/// error line this process prints ("rank 1 of 4: "; "" alone), and
/// `endWorld` (may be null) ends the run after one: synpl_rt_check prints,
/// then calls it (MPI_Abort, so that the other ranks do not wait for this
/// one forever) instead of exit(1). synpl_rt_main sets both while its
/// world is up and clears them when it returns.
void setRunWorld(const char *prefix, void (*endWorld)(int status));
/// The prefix setRunWorld set ("" by default).
const char *errorPrefix();

/// "<path>: <what>: <strerror(err)>" with SYNPL_RT_ERR_IO.
int32_t failErrno(const char *path, const char *what, int err);

/// 64-byte (or larger power-of-two) aligned heap memory; nullptr on failure.
void *alignedAlloc(uint64_t bytes, uint64_t alignment = SYNPL_RT_ALIGNMENT);

void alignedFree(void *p);

/// Writes all `n` bytes to `fd`; 0, or the errno of the write that failed.
int writeAll(int fd, const uint8_t *p, uint64_t n);

/// The decoded-data cache (DataCache.cpp) for one gzip'd IDX file, made
/// with the file's identity as it is when the file is opened: load maps the
/// entry that matches it (false otherwise; `out` untouched), store keeps
/// the decoded file under it (best effort; small files are not kept). A
/// file that cannot be cached (not gzip'd, the cache off) does neither.
class DataCacheSource {
public:
  explicit DataCacheSource(const char *path);
  ~DataCacheSource();
  bool load(uint32_t expectedMagic, synpl_rt_idx *out) const;
  void store(const synpl_rt_idx &idx) const;

  /// An entry's header: the file's identity, then the decoded IDX's shape.
  struct Header;

private:
  std::unique_ptr<Header> identity; ///< null: not cacheable
  std::string folder, entry;
};
/// Unmaps what DataCacheSource::load mapped.
void dataCacheRelease(synpl_rt_idx *idx);

constexpr uint64_t kAlign = SYNPL_RT_ALIGNMENT;
constexpr uint64_t kCacheLine = 64;

/// Rounds up to a multiple of 64; false on overflow.
inline bool roundUpAlign(uint64_t bytes, uint64_t &out) {
  if (bytes > UINT64_MAX - (kAlign - 1))
    return false;
  out = (bytes + kAlign - 1) & ~(kAlign - 1);
  return true;
}

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

/// Microseconds an idle waiter spins before sleeping (env SYNPL_SPIN_US).
uint64_t spinMicros();

/// Monotonic clock in nanoseconds.
uint64_t nowNanos();

/// The splitmix64 generator step (advances `x`): the seed expander of the
/// epoch permutation and the stream of the random inits.
inline uint64_t splitmix64(uint64_t &x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Finite.cpp: the first of the `count` values at `data`, of the plan's
/// element type `element` (SYNPL_PLAN_F32, F64, F16 or BF16), that is NaN
/// or infinite: its index, and the value in `*value` (NaN, +inf or -inf).
/// -1 when every value is finite, or the type is not a float one.
int64_t firstNonFinite(const void *data, int64_t element, int64_t count,
                       double *value);
/// "nan", "inf" or "-inf" (a NaN's sign bit is not printed).
const char *nonFiniteName(double v);

//===----------------------------------------------------------------------===//
// Checkpoints (Checkpoint.cpp; the file layout is described there)
//===----------------------------------------------------------------------===//

constexpr uint64_t kCheckpointVersion = 1;

/// One saved memory: an actor-state slot (id = slot index) or a control
/// region (id = kRegionBlob | region index).
struct CheckpointBlob {
  uint64_t id = 0;
  std::vector<uint8_t> bytes;
};
constexpr uint64_t kRegionBlob = 1ull << 62;

struct Checkpoint {
  uint64_t fingerprint = 0; ///< of the plan tables (Executor: planFingerprint)
  int64_t epoch = 0;        ///< 0-based epoch in progress
  int64_t batch = 0;        ///< batches of that epoch already trained
  int64_t globalStep = 0;   ///< update steps since the run began
  int64_t stepsPerEpoch = 0;
  double lossSum = 0;       ///< the epoch's loss so far (its mean is printed)
  int64_t lossCount = 0;
  std::vector<uint64_t> data; ///< per ingest: shuffle seed, sample count
  std::vector<CheckpointBlob> blobs;
};

/// FNV-1a, 64 bits (the plan fingerprint and the file's checksum).
uint64_t fnv1a64(const void *data, uint64_t bytes,
                 uint64_t h = 0xcbf29ce484222325ull);

std::vector<uint8_t> encodeCheckpoint(const Checkpoint &c);
/// Checks magic, version and checksum, then every length; `path` names the
/// file in the messages.
int32_t decodeCheckpoint(const char *path, const uint8_t *bytes, uint64_t size,
                         Checkpoint &c);
/// Writes `path` atomically (path.tmp, fsync, rename, fsync of the folder).
int32_t writeCheckpoint(const char *path, const Checkpoint &c);
int32_t readCheckpoint(const char *path, Checkpoint &c);

/// Bytes of one element of a plan slot's element code (SYNPL_PLAN_F32,
/// ...; PlanTables.cpp).
int64_t elementBytes(int64_t element);

/// dlopen of an optional library the runtime drives (MPI, NCCL;
/// Library.cpp): `$envVar` when set, else each of `names` in turn, with
/// `flags`. Returns the handle (and in `loaded` the name that loaded), or
/// null with `tried` listing each attempt and dlerror's reason.
void *openLibrary(const char *envVar, std::initializer_list<const char *> names, int flags,
                  std::string &loaded, std::string &tried);

// SYNPL_RT_TRACE_BATCHES (Dataset.cpp; docs/data-binding.md): the file
// of the batch trace the gather writes (Ingest.cpp).
namespace trace {
/// Whether the variable names a file (read once).
bool enabled();
/// Appends `line` to the file (flushed).
void write(const std::string &line);
} // namespace trace

} // namespace synpl::rt

#endif // SYNPL_LIB_RUNTIME_INTERNAL_H
