//===- FakeNccl.cpp - An NCCL for tests, over POSIX shared memory ---------===//
//
// Built as libnccl.so.2 (SONAME libnccl.so.2) in its own folder, so that
// LD_LIBRARY_PATH=<that folder> (or SYNPL_NCCL_LIB=<its path>) makes a
// compiled CUDA program load it instead of NVIDIA's NCCL. It implements the
// subset the runtime calls (lib/Runtime/Nccl.h) and really combines the
// ranks, so tests can check the numbers:
//   - ncclGetUniqueId (rank 0) writes a random shared-memory name into the
//     id; ncclCommInitRank maps that segment on every rank: a header (a
//     barrier's counter) and one slot of kSlotBytes per rank. Rank 0
//     unlinks the name once every rank joined (nothing is left in /dev/shm);
//   - a collective copies the rank's data into its slot, waits on the
//     barrier, reads the slots it needs (all of them, in rank order, the
//     same on every rank) and waits again, chunk by chunk; a barrier that
//     does not fill within the timeout (a rank that never came) is
//     ncclSystemError, never a hang;
//   - device pointers are the fake CUDA driver's, i.e. host memory: read
//     and written directly; the fake driver's streams run their work when
//     it is issued, so a collective runs when it is called (the stream is
//     not used). f32, f64, i32, i64 (and bytes: i8 / u8 for gathers and
//     broadcasts); sum, prod, max, min, avg (sum, then / nranks; integers
//     truncated).
// Env SYNPL_FAKE_NCCL_LOG=<file>: one line per call, appended by every
// rank: `ncclAllReduce count=2 type=float32 op=avg rank=0 nranks=2` (and
// ncclCommInitRank, ncclGroupStart, ncclGroupEnd, ncclCommDestroy).
// Env SYNPL_FAKE_NCCL, comma-separated:
//   version=<v>     ncclGetVersion (default 22304: 2.23.4)
//   fail=<n>        the n-th collective call (from 1) of every rank fails
//                   with ncclSystemError (before touching the segment)
//   async-error=<n> after the n-th collective call, ncclCommGetAsyncError
//                   says ncclRemoteError
//   timeout=<s>     the barrier's timeout in seconds (default 60)
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

typedef int ncclResult_t;
enum : int {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
};
enum : int { tInt8 = 0, tUint8 = 1, tInt32 = 2, tUint32 = 3, tInt64 = 4, tUint64 = 5,
             tFloat32 = 7, tFloat64 = 8 };
enum : int { opSum = 0, opProd = 1, opMax = 2, opMin = 3, opAvg = 4 };

constexpr size_t kSlotBytes = 1 << 20;
constexpr size_t kHeaderBytes = 4096;
constexpr char kMagic[] = "synpl-fake-nccl:";

struct Header {
  std::atomic<uint64_t> arrived; // barrier arrivals, ever
};

struct Options {
  int version = 22304;
  long failAt = -1, asyncAt = -1;
  double timeout = 60;
  std::string logPath;
  Options() {
    if (const char *l = std::getenv("SYNPL_FAKE_NCCL_LOG"))
      logPath = l;
    std::string s = std::getenv("SYNPL_FAKE_NCCL") ? std::getenv("SYNPL_FAKE_NCCL") : "";
    size_t pos = 0;
    while (pos < s.size()) {
      size_t comma = s.find(',', pos);
      std::string opt = s.substr(pos, comma == std::string::npos ? std::string::npos
                                                                  : comma - pos);
      pos = comma == std::string::npos ? s.size() : comma + 1;
      std::string key = opt.substr(0, opt.find('='));
      std::string value =
          opt.find('=') == std::string::npos ? "" : opt.substr(opt.find('=') + 1);
      if (key == "version")
        version = std::atoi(value.c_str());
      else if (key == "fail")
        failAt = std::atol(value.c_str());
      else if (key == "async-error")
        asyncAt = std::atol(value.c_str());
      else if (key == "timeout")
        timeout = std::atof(value.c_str());
      else if (!key.empty())
        std::fprintf(stderr, "fake libnccl: unknown SYNPL_FAKE_NCCL option '%s'\n",
                     opt.c_str());
    }
  }
};

Options &options() {
  static Options o;
  return o;
}

/// The last error's text (ncclGetLastError).
thread_local std::string lastError;

void logLine(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void logLine(const char *fmt, ...) {
  const std::string &path = options().logPath;
  if (path.empty())
    return;
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(line, sizeof line - 1, fmt, ap);
  va_end(ap);
  if (n < 0)
    return;
  if (n > (int)sizeof line - 2)
    n = (int)sizeof line - 2;
  line[n++] = '\n';
  // One write of the whole line, appended: the ranks' lines do not mix.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0)
    return;
  ssize_t w = ::write(fd, line, (size_t)n);
  (void)w;
  ::close(fd);
}

const char *typeName(int t) {
  switch (t) {
  case tInt8: return "int8";
  case tUint8: return "uint8";
  case tInt32: return "int32";
  case tUint32: return "uint32";
  case tInt64: return "int64";
  case tUint64: return "uint64";
  case tFloat32: return "float32";
  case tFloat64: return "float64";
  default: return "unknown";
  }
}
size_t typeBytes(int t) {
  switch (t) {
  case tInt8: case tUint8: return 1;
  case tInt32: case tUint32: case tFloat32: return 4;
  case tInt64: case tUint64: case tFloat64: return 8;
  default: return 0;
  }
}
const char *opName(int op) {
  switch (op) {
  case opSum: return "sum";
  case opProd: return "prod";
  case opMax: return "max";
  case opMin: return "min";
  case opAvg: return "avg";
  default: return "unknown";
  }
}

} // namespace

struct ncclComm {
  int rank = 0, nranks = 1;
  uint8_t *base = nullptr;
  size_t bytes = 0;
  uint64_t barriers = 0; // this rank's barriers so far
  long calls = 0;        // collective calls so far
  ncclResult_t async = ncclSuccess;
  Header *header() { return reinterpret_cast<Header *>(base); }
  uint8_t *slot(int r) { return base + kHeaderBytes + (size_t)r * kSlotBytes; }

  /// Every rank's arrival, or ncclSystemError after the timeout.
  ncclResult_t barrier() {
    uint64_t target = ++barriers * (uint64_t)nranks;
    header()->arrived.fetch_add(1);
    auto t0 = std::chrono::steady_clock::now();
    for (int spins = 0; header()->arrived.load() < target; ++spins) {
      if (spins > 1000)
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() >
          options().timeout) {
        lastError = "fake NCCL: rank " + std::to_string(rank) + " waited " +
                    std::to_string((int)options().timeout) +
                    " s for the other ranks at a barrier";
        return ncclSystemError;
      }
    }
    return ncclSuccess;
  }
};
typedef ncclComm *ncclComm_t;
typedef struct {
  char internal[128];
} ncclUniqueId;

namespace {

/// Counts a collective call; SYNPL_FAKE_NCCL=fail=<n> fails the n-th.
ncclResult_t countCall(ncclComm_t c, const char *call) {
  ++c->calls;
  if (c->calls == options().failAt) {
    lastError = std::string("fake NCCL: ") + call + " failed as asked (SYNPL_FAKE_NCCL=fail=" +
                std::to_string(options().failAt) + ")";
    return ncclSystemError;
  }
  if (c->calls == options().asyncAt) {
    c->async = ncclRemoteError;
    lastError = "fake NCCL: a remote rank failed (SYNPL_FAKE_NCCL=async-error)";
  }
  return ncclSuccess;
}

template <typename T> void combine(T *acc, const T *v, size_t n, int op) {
  for (size_t i = 0; i < n; ++i) {
    switch (op) {
    case opMax: acc[i] = v[i] > acc[i] ? v[i] : acc[i]; break;
    case opMin: acc[i] = v[i] < acc[i] ? v[i] : acc[i]; break;
    case opProd: acc[i] = acc[i] * v[i]; break;
    default: acc[i] = acc[i] + v[i]; break;
    }
  }
}
template <typename T> void divide(T *acc, size_t n, int by) {
  for (size_t i = 0; i < n; ++i)
    acc[i] = acc[i] / (T)by;
}

/// out[0..n) = the reduction of every slot's first n elements (rank order).
void reduceSlots(ncclComm_t c, void *out, size_t n, int type, int op) {
  size_t b = typeBytes(type);
  std::memcpy(out, c->slot(0), n * b);
  for (int r = 1; r < c->nranks; ++r) {
    const void *v = c->slot(r);
    switch (type) {
    case tFloat32: combine((float *)out, (const float *)v, n, op); break;
    case tFloat64: combine((double *)out, (const double *)v, n, op); break;
    case tInt32: combine((int32_t *)out, (const int32_t *)v, n, op); break;
    case tUint32: combine((uint32_t *)out, (const uint32_t *)v, n, op); break;
    case tInt64: combine((int64_t *)out, (const int64_t *)v, n, op); break;
    case tUint64: combine((uint64_t *)out, (const uint64_t *)v, n, op); break;
    case tInt8: combine((int8_t *)out, (const int8_t *)v, n, op); break;
    default: combine((uint8_t *)out, (const uint8_t *)v, n, op); break;
    }
  }
  if (op != opAvg)
    return;
  switch (type) {
  case tFloat32: divide((float *)out, n, c->nranks); break;
  case tFloat64: divide((double *)out, n, c->nranks); break;
  case tInt32: divide((int32_t *)out, n, c->nranks); break;
  case tUint32: divide((uint32_t *)out, n, c->nranks); break;
  case tInt64: divide((int64_t *)out, n, c->nranks); break;
  case tUint64: divide((uint64_t *)out, n, c->nranks); break;
  case tInt8: divide((int8_t *)out, n, c->nranks); break;
  default: divide((uint8_t *)out, n, c->nranks); break;
  }
}

ncclResult_t checkArgs(ncclComm_t c, int type, int op, bool reduces) {
  if (!c) {
    lastError = "fake NCCL: a null communicator";
    return ncclInvalidArgument;
  }
  if (!typeBytes(type)) {
    lastError = "fake NCCL: data type " + std::to_string(type) + " is not supported";
    return ncclInvalidArgument;
  }
  if (reduces && (op < opSum || op > opAvg)) {
    lastError = "fake NCCL: reduction " + std::to_string(op) + " is not supported";
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}

} // namespace

#define EXPORT extern "C" __attribute__((visibility("default")))

EXPORT ncclResult_t ncclGetVersion(int *version) {
  *version = options().version;
  return ncclSuccess;
}

EXPORT const char *ncclGetErrorString(ncclResult_t r) {
  switch (r) {
  case ncclSuccess: return "no error";
  case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
  case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
  case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
  case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
  case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
  case ncclRemoteError: return "remote process exited or there was a network error";
  default: return "unknown result code";
  }
}

EXPORT const char *ncclGetLastError(ncclComm_t) { return lastError.c_str(); }

EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  std::memset(id, 0, sizeof *id);
  std::random_device rd;
  char name[96];
  std::snprintf(name, sizeof name, "%s/synpl-fake-nccl-%d-%08x%08x", kMagic, (int)::getpid(),
                rd(), rd());
  std::memcpy(id->internal, name, std::strlen(name));
  return ncclSuccess;
}

EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *out, int nranks, ncclUniqueId id, int rank) {
  *out = nullptr;
  char text[129] = {};
  std::memcpy(text, id.internal, 128);
  if (std::strncmp(text, kMagic, sizeof kMagic - 1) || nranks < 1 || rank < 0 ||
      rank >= nranks) {
    lastError = "fake NCCL: ncclCommInitRank: not a fake unique id, or a bad rank";
    return ncclInvalidArgument;
  }
  const char *name = text + sizeof kMagic - 1;
  auto *c = new ncclComm();
  c->rank = rank;
  c->nranks = nranks;
  c->bytes = kHeaderBytes + (size_t)nranks * kSlotBytes;
  int fd = ::shm_open(name, O_RDWR | O_CREAT, 0600);
  if (fd < 0 || ::ftruncate(fd, (off_t)c->bytes) != 0) {
    lastError = std::string("fake NCCL: shm_open ") + name + ": " + std::strerror(errno);
    if (fd >= 0)
      ::close(fd);
    delete c;
    return ncclSystemError;
  }
  void *m = ::mmap(nullptr, c->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) {
    lastError = std::string("fake NCCL: mmap: ") + std::strerror(errno);
    delete c;
    return ncclSystemError;
  }
  c->base = static_cast<uint8_t *>(m);
  ncclResult_t r = c->barrier();
  if (rank == 0)
    ::shm_unlink(name); // every rank mapped it (or the barrier timed out)
  if (r != ncclSuccess) {
    ::munmap(c->base, c->bytes);
    delete c;
    return r;
  }
  logLine("ncclCommInitRank rank=%d nranks=%d", rank, nranks);
  *out = c;
  return ncclSuccess;
}

EXPORT ncclResult_t ncclCommDestroy(ncclComm_t c) {
  if (!c)
    return ncclInvalidArgument;
  logLine("ncclCommDestroy rank=%d nranks=%d", c->rank, c->nranks);
  ::munmap(c->base, c->bytes);
  delete c;
  return ncclSuccess;
}

EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t c, ncclResult_t *async) {
  if (!c)
    return ncclInvalidArgument;
  *async = c->async;
  return ncclSuccess;
}

EXPORT ncclResult_t ncclGroupStart() {
  logLine("ncclGroupStart");
  return ncclSuccess;
}

EXPORT ncclResult_t ncclGroupEnd() {
  logLine("ncclGroupEnd");
  return ncclSuccess;
}

EXPORT ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, int type, int op,
                                  ncclComm_t c, void * /*stream*/) {
  if (ncclResult_t r = checkArgs(c, type, op, true))
    return r;
  logLine("ncclAllReduce count=%zu type=%s op=%s rank=%d nranks=%d", count, typeName(type),
          opName(op), c->rank, c->nranks);
  if (ncclResult_t r = countCall(c, "ncclAllReduce"))
    return r;
  size_t b = typeBytes(type), chunk = kSlotBytes / b;
  std::vector<uint8_t> out(std::min(count, chunk) * b);
  for (size_t at = 0; at < count; at += chunk) {
    size_t n = std::min(chunk, count - at);
    std::memcpy(c->slot(c->rank), (const uint8_t *)send + at * b, n * b);
    if (ncclResult_t r = c->barrier())
      return r;
    reduceSlots(c, out.data(), n, type, op);
    if (ncclResult_t r = c->barrier())
      return r;
    std::memcpy((uint8_t *)recv + at * b, out.data(), n * b);
  }
  return ncclSuccess;
}

EXPORT ncclResult_t ncclAllGather(const void *send, void *recv, size_t count, int type,
                                  ncclComm_t c, void * /*stream*/) {
  if (ncclResult_t r = checkArgs(c, type, opSum, false))
    return r;
  logLine("ncclAllGather count=%zu type=%s rank=%d nranks=%d", count, typeName(type), c->rank,
          c->nranks);
  if (ncclResult_t r = countCall(c, "ncclAllGather"))
    return r;
  size_t total = count * typeBytes(type);
  for (size_t at = 0; at < total; at += kSlotBytes) {
    size_t n = std::min(kSlotBytes, total - at);
    std::memcpy(c->slot(c->rank), (const uint8_t *)send + at, n);
    if (ncclResult_t r = c->barrier())
      return r;
    std::vector<uint8_t> all((size_t)c->nranks * n);
    for (int q = 0; q < c->nranks; ++q)
      std::memcpy(all.data() + (size_t)q * n, c->slot(q), n);
    if (ncclResult_t r = c->barrier())
      return r;
    // (In place, `send` is this rank's block of `recv`: written after all
    // its chunks were read into the slot.)
    for (int q = 0; q < c->nranks; ++q)
      std::memcpy((uint8_t *)recv + (size_t)q * total + at, all.data() + (size_t)q * n, n);
  }
  return ncclSuccess;
}

EXPORT ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t count, int type,
                                      int op, ncclComm_t c, void * /*stream*/) {
  if (ncclResult_t r = checkArgs(c, type, op, true))
    return r;
  logLine("ncclReduceScatter count=%zu type=%s op=%s rank=%d nranks=%d", count,
          typeName(type), opName(op), c->rank, c->nranks);
  if (ncclResult_t r = countCall(c, "ncclReduceScatter"))
    return r;
  size_t b = typeBytes(type), chunk = kSlotBytes / b;
  std::vector<uint8_t> mine(count * b);
  std::vector<uint8_t> out(std::min(count, chunk) * b);
  // Block q of every rank goes to rank q: one round per block.
  for (int q = 0; q < c->nranks; ++q)
    for (size_t at = 0; at < count; at += chunk) {
      size_t n = std::min(chunk, count - at);
      std::memcpy(c->slot(c->rank), (const uint8_t *)send + ((size_t)q * count + at) * b, n * b);
      if (ncclResult_t r = c->barrier())
        return r;
      if (q == c->rank) {
        reduceSlots(c, out.data(), n, type, op);
        std::memcpy(mine.data() + at * b, out.data(), n * b);
      }
      if (ncclResult_t r = c->barrier())
        return r;
    }
  std::memcpy(recv, mine.data(), count * b);
  return ncclSuccess;
}

EXPORT ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count, int type,
                                  int root, ncclComm_t c, void * /*stream*/) {
  if (ncclResult_t r = checkArgs(c, type, opSum, false))
    return r;
  if (root < 0 || root >= c->nranks) {
    lastError = "fake NCCL: broadcast from rank " + std::to_string(root);
    return ncclInvalidArgument;
  }
  logLine("ncclBroadcast count=%zu type=%s root=%d rank=%d nranks=%d", count, typeName(type),
          root, c->rank, c->nranks);
  if (ncclResult_t r = countCall(c, "ncclBroadcast"))
    return r;
  size_t total = count * typeBytes(type);
  for (size_t at = 0; at < total; at += kSlotBytes) {
    size_t n = std::min(kSlotBytes, total - at);
    if (c->rank == root)
      std::memcpy(c->slot(root), (const uint8_t *)send + at, n);
    if (ncclResult_t r = c->barrier())
      return r;
    std::memcpy((uint8_t *)recv + at, c->slot(root), n);
    if (ncclResult_t r = c->barrier())
      return r;
  }
  return ncclSuccess;
}
