//===- Comm.cpp - The communicator: one process, or Open MPI -------------===//
//
// Comm's checks and the mean's division (shared by the backends), the
// self backend, and the MPI backend: Open MPI loaded at run time, as
// Cuda.cpp loads the CUDA driver, so that a compiled program links no MPI
// library, builds and starts anywhere, and needs one only when a launcher
// started it. Environment:
//   SYNPL_COMM     self: one process whatever started it; mpi: MPI even
//                  without a launcher's variables (a singleton run)
//   SYNPL_MPI_LIB  the library to load (default libmpi.so.40, then
//                  libmpi.so)
//   OMPI_MCA_coll_libnbc_iallreduce_algorithm
//                  Open MPI's non-blocking all-reduce; default here 1 (a
//                  ring; see openMpiComm), a value set is kept
//   OMPI_MCA_btl_vader_single_copy_mechanism
//                  how ranks on one host copy large messages; default here
//                  none (through shared memory; see openMpiComm)
// The library is opened RTLD_GLOBAL: Open MPI's plugins (its mca_*.so)
// resolve their references to libmpi and libopen-pal in the global scope.
// MPI is initialized with MPI_THREAD_FUNNELED (only the thread that trains
// calls it) unless the program initialized it already, and every call
// returns its error (MPI_ERRORS_RETURN on MPI_COMM_WORLD): a failed call is
// a one-line error naming the call and MPI_Error_string's text.
//
//===----------------------------------------------------------------------===//
#include "Comm.h"
#include "Internal.h"
#include "Mpi.h"
#include "synpl/Runtime/PlanFormat.h"

#include <algorithm>
#include <climits>
#include <initializer_list>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <dlfcn.h>
#include <unistd.h>

using namespace synpl::rt;

namespace {

int64_t bytesOf(int64_t element) {
  return element == SYNPL_PLAN_F64 || element == SYNPL_PLAN_I64 ? 8 : 4;
}

int32_t badArgument(const char *what) {
  return fail(SYNPL_RT_ERR_INVALID, "collective: %s", what);
}

//===----------------------------------------------------------------------===//
// self: the world of one process
//===----------------------------------------------------------------------===//

class SelfComm final : public Comm {
public:
  SelfComm() : Comm(0, 1) {}
  const char *backend() const override { return "self"; }

protected:
  int32_t doAllReduce(void *, int64_t, int64_t, int64_t) override { return SYNPL_RT_OK; }
  int32_t doStart(CommRequest &req, int64_t) override {
    // A world of one: a reduce-scatter's one block is the source.
    if (req.src && req.src != req.buf)
      std::memmove(req.buf, req.src, (size_t)(req.count * bytesOf(req.element)));
    return SYNPL_RT_OK;
  }
  int32_t doTest(CommRequest &, bool &done) override {
    done = true;
    return SYNPL_RT_OK;
  }
  int32_t doWait(CommRequest &) override { return SYNPL_RT_OK; }
  int32_t doAllGather(const void *src, void *dst, int64_t bytes) override {
    if (src != dst)
      std::memmove(dst, src, (size_t)bytes);
    return SYNPL_RT_OK;
  }
  int32_t doReduceScatter(const void *src, void *dst, int64_t count, int64_t element,
                          int64_t) override {
    if (src != dst)
      std::memmove(dst, src, (size_t)(count * bytesOf(element)));
    return SYNPL_RT_OK;
  }
  int32_t doBroadcast(void *, int64_t, int) override { return SYNPL_RT_OK; }
  int32_t doBarrier() override { return SYNPL_RT_OK; }
};

//===----------------------------------------------------------------------===//
// MPI: Open MPI through dlopen
//===----------------------------------------------------------------------===//

/// The library, its entry points and predefined handles: one per process
/// (MPI is initialized once and finalized once).
struct MpiLib {
  void *handle = nullptr;
  std::string path;
#define SYNPL_MPI_MEMBER(name, symbol, ret, args) ret(*name) args = nullptr;
  SYNPL_MPI_FUNCTIONS(SYNPL_MPI_MEMBER)
#undef SYNPL_MPI_MEMBER
#define SYNPL_MPI_HANDLE_MEMBER(name, symbol, type) type name = nullptr;
  SYNPL_MPI_HANDLES(SYNPL_MPI_HANDLE_MEMBER)
#undef SYNPL_MPI_HANDLE_MEMBER
  bool initializedHere = false; ///< the runtime called MPI_Init_thread
  bool finalized = false;
};

MpiLib &mpiLib() {
  static MpiLib lib;
  return lib;
}

/// The launcher variable that says a launcher started the process, or null.
const char *launcherVariable() {
  for (const char *v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (const char *s = std::getenv(v); s && *s)
      return v;
  return nullptr;
}

/// "MPI_Allreduce failed: <MPI_Error_string>".
int32_t mpiFailed(int rc, const char *call) {
  char text[mpi::MAX_ERROR_STRING + 1] = {};
  int len = 0;
  MpiLib &l = mpiLib();
  if (!l.Error_string || l.Error_string(rc, text, &len) != mpi::SUCCESS || !text[0])
    std::snprintf(text, sizeof text, "MPI error %d", rc);
  return fail(SYNPL_RT_ERR_COMM, "%s failed: %s", call, text);
}

#define SYNPL_MPI_CHECK(call, ...)                                             \
  do {                                                                         \
    int rc_ = mpiLib().call(__VA_ARGS__);                                      \
    if (rc_ != mpi::SUCCESS)                                                   \
      return mpiFailed(rc_, "MPI_" #call);                                     \
  } while (0)

/// Loads the library and binds every entry point and handle.
int32_t loadMpi(MpiLib &l) {
  if (l.handle)
    return SYNPL_RT_OK;
  // Open MPI's plugins need its symbols global.
  std::string tried;
  void *h = openLibrary("SYNPL_MPI_LIB", {"libmpi.so.40", "libmpi.so"},
                        RTLD_NOW | RTLD_GLOBAL, l.path, tried);
  if (!h) {
    const char *var = launcherVariable();
    std::string started = var ? std::string("this process was started by a launcher (") +
                                    var + " is set) and "
                              : std::string("");
    return fail(SYNPL_RT_ERR_COMM,
                "cannot load Open MPI: tried %s; %sa data-parallel run needs Open MPI's "
                "library: install openmpi-bin and libopenmpi-dev (Debian, Ubuntu), or set "
                "SYNPL_MPI_LIB to the libmpi.so of the MPI that started it (SYNPL_COMM=self "
                "runs one process without MPI)",
                tried.c_str(), started.c_str());
  }
#define SYNPL_MPI_BIND(member, symbol, ret, args)                              \
  l.member = reinterpret_cast<ret(*) args>(dlsym(h, symbol));                  \
  if (!l.member)                                                               \
    return fail(SYNPL_RT_ERR_COMM,                                             \
                "%s lacks %s: not an Open MPI library (the runtime speaks "   \
                "Open MPI's ABI; SYNPL_MPI_LIB names another libmpi.so)",      \
                l.path.c_str(), symbol);
  SYNPL_MPI_FUNCTIONS(SYNPL_MPI_BIND)
#undef SYNPL_MPI_BIND
#define SYNPL_MPI_BIND_HANDLE(member, symbol, type)                            \
  l.member = reinterpret_cast<type>(dlsym(h, symbol));                         \
  if (!l.member)                                                               \
    return fail(SYNPL_RT_ERR_COMM,                                             \
                "%s lacks %s: not an Open MPI library (the runtime speaks "   \
                "Open MPI's ABI, whose handles are the library's objects; "    \
                "SYNPL_MPI_LIB names another libmpi.so)",                      \
                l.path.c_str(), symbol);
  SYNPL_MPI_HANDLES(SYNPL_MPI_BIND_HANDLE)
#undef SYNPL_MPI_BIND_HANDLE
  l.handle = h; // the library stays loaded: MPI's exit handlers may run
  return SYNPL_RT_OK;
}

class MpiComm final : public Comm {
public:
  MpiComm(int rank, int size) : Comm(rank, size) {}
  const char *backend() const override { return "MPI"; }

  void abort(int status) override {
    MpiLib &l = mpiLib();
    std::fflush(nullptr);
    if (l.Abort && !l.finalized)
      l.Abort(l.commWorld, status);
    ::_exit(status); // MPI_Abort does not return; should it, end anyway
  }

  void finalize() override {
    MpiLib &l = mpiLib();
    if (!l.initializedHere || l.finalized)
      return;
    l.finalized = true;
    int done = 0;
    if (l.Finalized(&done) == mpi::SUCCESS && !done)
      l.Finalize();
  }

protected:
  /// MPI counts are ints: at most this many elements per call.
  static constexpr int64_t kChunk = int64_t(1) << 30;

  static MPI_Datatype typeOf(int64_t element) {
    MpiLib &l = mpiLib();
    switch (element) {
    case SYNPL_PLAN_F32:
      return l.typeFloat;
    case SYNPL_PLAN_F64:
      return l.typeDouble;
    case SYNPL_PLAN_I32:
      return l.typeInt32;
    default:
      return l.typeInt64;
    }
  }
  static MPI_Op opOf(int64_t op) {
    MpiLib &l = mpiLib();
    return op == SYNPL_PLAN_REDUCE_MAX ? l.opMax
           : op == SYNPL_PLAN_REDUCE_MIN ? l.opMin
                                         : l.opSum;
  }

  int32_t doAllReduce(void *buf, int64_t count, int64_t element, int64_t op) override {
    auto *p = static_cast<uint8_t *>(buf);
    for (int64_t at = 0; at < count; at += kChunk) {
      int n = (int)std::min(kChunk, count - at);
      SYNPL_MPI_CHECK(Allreduce, mpi::inPlace(), p + at * bytesOf(element), n,
                      typeOf(element), opOf(op), mpiLib().commWorld);
    }
    return SYNPL_RT_OK;
  }
  int32_t doStart(CommRequest &req, int64_t op) override {
    if (req.src) {
      if (req.count > INT_MAX)
        return fail(SYNPL_RT_ERR_COMM,
                    "reduce_scatter of %lld elements per rank: MPI_Ireduce_scatter_block "
                    "takes at most %d",
                    (long long)req.count, INT_MAX);
      MPI_Request r = nullptr;
      SYNPL_MPI_CHECK(Ireduce_scatter_block, req.src, req.buf, (int)req.count,
                      typeOf(req.element), opOf(op), mpiLib().commWorld, &r);
      req.handles.push_back(r);
      return SYNPL_RT_OK;
    }
    auto *p = static_cast<uint8_t *>(req.buf);
    for (int64_t at = 0; at < req.count; at += kChunk) {
      int n = (int)std::min(kChunk, req.count - at);
      MPI_Request r = nullptr;
      SYNPL_MPI_CHECK(Iallreduce, mpi::inPlace(), p + at * bytesOf(req.element), n,
                      typeOf(req.element), opOf(op), mpiLib().commWorld, &r);
      req.handles.push_back(r);
    }
    return SYNPL_RT_OK;
  }
  int32_t doTest(CommRequest &req, bool &done) override {
    done = true;
    for (void *&h : req.handles) {
      if (!h) // completed by an earlier test
        continue;
      int flag = 0;
      auto *r = reinterpret_cast<MPI_Request *>(&h);
      SYNPL_MPI_CHECK(Test, r, &flag, nullptr);
      if (flag) // MPI_Test left MPI_REQUEST_NULL (not null in Open MPI)
        h = nullptr; // complete: never passed to MPI again
      else
        done = false;
    }
    return SYNPL_RT_OK;
  }
  int32_t doWait(CommRequest &req) override {
    for (void *&h : req.handles) {
      if (!h)
        continue;
      SYNPL_MPI_CHECK(Wait, reinterpret_cast<MPI_Request *>(&h), nullptr);
      h = nullptr;
    }
    req.handles.clear();
    return SYNPL_RT_OK;
  }
  int32_t doAllGather(const void *src, void *dst, int64_t bytes) override {
    if (bytes > INT_MAX)
      return fail(SYNPL_RT_ERR_COMM,
                  "all_gather of %lld bytes per rank: MPI_Allgather takes at most %d",
                  (long long)bytes, INT_MAX);
    MpiLib &l = mpiLib();
    // In place when the caller's source already is its block of `dst`.
    const void *send = src == static_cast<uint8_t *>(dst) + rank() * bytes ? mpi::inPlace() : src;
    SYNPL_MPI_CHECK(Allgather, send, (int)bytes, l.typeByte, dst, (int)bytes, l.typeByte,
                    l.commWorld);
    return SYNPL_RT_OK;
  }
  int32_t doReduceScatter(const void *src, void *dst, int64_t count, int64_t element,
                          int64_t op) override {
    if (count > INT_MAX)
      return fail(SYNPL_RT_ERR_COMM,
                  "reduce_scatter of %lld elements per rank: MPI_Reduce_scatter_block "
                  "takes at most %d",
                  (long long)count, INT_MAX);
    SYNPL_MPI_CHECK(Reduce_scatter_block, src, dst, (int)count, typeOf(element), opOf(op),
                    mpiLib().commWorld);
    return SYNPL_RT_OK;
  }
  int32_t doBroadcast(void *buf, int64_t bytes, int root) override {
    auto *p = static_cast<uint8_t *>(buf);
    for (int64_t at = 0; at < bytes; at += kChunk)
      SYNPL_MPI_CHECK(Bcast, p + at, (int)std::min(kChunk, bytes - at), mpiLib().typeByte,
                      root, mpiLib().commWorld);
    return SYNPL_RT_OK;
  }
  int32_t doBarrier() override {
    SYNPL_MPI_CHECK(Barrier, mpiLib().commWorld);
    return SYNPL_RT_OK;
  }
};

} // namespace

namespace synpl::rt {

//===----------------------------------------------------------------------===//
// The checks and the mean, for every backend
//===----------------------------------------------------------------------===//

bool commReducible(int64_t element) {
  return element == SYNPL_PLAN_F32 || element == SYNPL_PLAN_F64 ||
         element == SYNPL_PLAN_I32 || element == SYNPL_PLAN_I64;
}

static int32_t checkReduction(const void *buf, int64_t count, int64_t element,
                              int64_t reduce) {
  if (!commReducible(element))
    return badArgument("only f32, f64, i32 and i64 values are reduced");
  if (reduce < SYNPL_PLAN_REDUCE_SUM || reduce > SYNPL_PLAN_REDUCE_MIN)
    return badArgument("an unknown reduction");
  if (count < 0 || (count > 0 && !buf))
    return badArgument("a negative count or a null buffer");
  return SYNPL_RT_OK;
}

namespace {
/// sum / n exactly as written. For n a power of two, x * (1 / n) is the
/// same float (1 / n is exact and scaling by it rounds as the division
/// does) and a multiply costs a fraction of a divide: the gradients'
/// buckets go through here every step. Otherwise x * (1 / n) can differ.
template <typename T> void divideFloats(T *v, int64_t count, int n) {
  if ((n & (n - 1)) == 0) {
    const T inverse = T(1) / T(n);
    for (int64_t i = 0; i < count; ++i)
      v[i] *= inverse;
    return;
  }
  for (int64_t i = 0; i < count; ++i)
    v[i] = v[i] / T(n);
}
} // namespace

void Comm::divide(void *buf, int64_t count, int64_t element) const {
  if (size_ == 1)
    return;
  switch (element) {
  case SYNPL_PLAN_F32:
    divideFloats(static_cast<float *>(buf), count, size_);
    break;
  case SYNPL_PLAN_F64:
    divideFloats(static_cast<double *>(buf), count, size_);
    break;
  case SYNPL_PLAN_I32: {
    auto *v = static_cast<int32_t *>(buf);
    for (int64_t i = 0; i < count; ++i)
      v[i] = v[i] / size_;
    break;
  }
  default: {
    auto *v = static_cast<int64_t *>(buf);
    for (int64_t i = 0; i < count; ++i)
      v[i] = v[i] / size_;
    break;
  }
  }
}

int32_t Comm::allReduce(void *buf, int64_t count, int64_t element, int64_t reduce) {
  if (int32_t st = checkReduction(buf, count, element, reduce))
    return st;
  if (count == 0)
    return SYNPL_RT_OK;
  if (int32_t st = doAllReduce(buf, count, element, reduce))
    return st;
  if (reduce == SYNPL_PLAN_REDUCE_MEAN)
    divide(buf, count, element);
  return SYNPL_RT_OK;
}

int32_t Comm::start(const void *src, void *buf, int64_t count, int64_t element,
                    int64_t reduce, CommRequest &req) {
  if (req.active)
    return badArgument("a request started twice");
  if (int32_t st = checkReduction(src ? src : buf, count, element, reduce))
    return st;
  if (count > 0 && !buf)
    return badArgument("a null buffer");
  req.handles.clear();
  req.src = src;
  req.buf = buf;
  req.count = count;
  req.element = element;
  req.reduce = reduce;
  if (count > 0)
    if (int32_t st = doStart(req, reduce))
      return st;
  req.active = true;
  return SYNPL_RT_OK;
}

int32_t Comm::startAllReduce(void *buf, int64_t count, int64_t element, int64_t reduce,
                             CommRequest &req) {
  return start(nullptr, buf, count, element, reduce, req);
}

int32_t Comm::startReduceScatter(const void *src, void *dst, int64_t count, int64_t element,
                                 int64_t reduce, CommRequest &req) {
  return start(src, dst, count, element, reduce, req);
}

int32_t Comm::test(CommRequest &req, bool &done) {
  done = true;
  if (!req.active || req.count == 0)
    return SYNPL_RT_OK;
  return doTest(req, done);
}

int32_t Comm::wait(CommRequest &req) {
  if (!req.active)
    return badArgument("a wait for a request not started");
  req.active = false;
  if (req.count == 0)
    return SYNPL_RT_OK;
  if (int32_t st = doWait(req))
    return st;
  if (req.reduce == SYNPL_PLAN_REDUCE_MEAN)
    divide(req.buf, req.count, req.element);
  return SYNPL_RT_OK;
}

int32_t Comm::allGather(const void *src, void *dst, int64_t bytes) {
  if (bytes < 0 || (bytes > 0 && (!src || !dst)))
    return badArgument("a negative size or a null buffer");
  return bytes ? doAllGather(src, dst, bytes) : SYNPL_RT_OK;
}

int32_t Comm::reduceScatter(const void *src, void *dst, int64_t count, int64_t element,
                            int64_t reduce) {
  if (int32_t st = checkReduction(src, count, element, reduce))
    return st;
  if (count > 0 && !dst)
    return badArgument("a null buffer");
  if (count == 0)
    return SYNPL_RT_OK;
  if (int32_t st = doReduceScatter(src, dst, count, element, reduce))
    return st;
  if (reduce == SYNPL_PLAN_REDUCE_MEAN)
    divide(dst, count, element);
  return SYNPL_RT_OK;
}

int32_t Comm::broadcast(void *buf, int64_t bytes, int root) {
  if (root < 0 || root >= size_)
    return fail(SYNPL_RT_ERR_INVALID, "broadcast from rank %d: the world has %d rank%s",
                root, size_, size_ == 1 ? "" : "s");
  if (bytes < 0 || (bytes > 0 && !buf))
    return badArgument("a negative size or a null buffer");
  return bytes ? doBroadcast(buf, bytes, root) : SYNPL_RT_OK;
}

int32_t Comm::barrier() { return doBarrier(); }

//===----------------------------------------------------------------------===//
// Opening one
//===----------------------------------------------------------------------===//

std::unique_ptr<Comm> selfComm() { return std::unique_ptr<Comm>(new SelfComm()); }

int32_t openMpiComm(std::unique_ptr<Comm> &out) {
  MpiLib &l = mpiLib();
  if (int32_t st = loadMpi(l))
    return st;
  int initialized = 0, finalized = 0;
  SYNPL_MPI_CHECK(Initialized, &initialized);
  SYNPL_MPI_CHECK(Finalized, &finalized);
  if (finalized || l.finalized)
    return fail(SYNPL_RT_ERR_COMM,
                "MPI was finalized already in this process (MPI starts once per process: "
                "one data-parallel run per program)");
  if (!initialized) {
    // Open MPI's non-blocking all-reduce (coll/libnbc) reduces an in-place
    // buffer with a binomial tree whatever its size: the root receives and
    // sends the whole buffer, one after the other. The gradients' buckets
    // are large and in place, and a ring moves 2 (N - 1) / N of the bytes
    // per rank, split in N blocks (measured on 2 and 4 local ranks:
    // 1.06-1.10x the step throughput; bench/data_parallel.py). Every rank
    // still ends with the same sums (each block is reduced on one rank and
    // sent to the others). A value the user set is kept.
    setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1", /*overwrite=*/0);
    // Ranks on one host exchange through shared memory (Open MPI 4's vader
    // transport). Its default single copy (CMA: the kernel copies from the
    // peer's pages, pinned per message) costs more than copying through
    // the shared fragments for the buckets' sizes (up to a few MB) while
    // every core computes: 1.03-1.06x the step throughput on 2 and 4 ranks
    // (bench/data_parallel.py). Ranks on other hosts use other transports.
    setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", /*overwrite=*/0);
    int provided = 0;
    SYNPL_MPI_CHECK(Init_thread, nullptr, nullptr, mpi::THREAD_FUNNELED, &provided);
    l.initializedHere = true;
  }
  SYNPL_MPI_CHECK(Comm_set_errhandler, l.commWorld, l.errorsReturn);
  int rank = 0, size = 1;
  SYNPL_MPI_CHECK(Comm_rank, l.commWorld, &rank);
  SYNPL_MPI_CHECK(Comm_size, l.commWorld, &size);
  out.reset(new MpiComm(rank, size));
  return SYNPL_RT_OK;
}

int32_t openComm(std::unique_ptr<Comm> &out) {
  const char *forced = std::getenv("SYNPL_COMM");
  if (forced && *forced) {
    if (!std::strcmp(forced, "self")) {
      out = selfComm();
      return SYNPL_RT_OK;
    }
    if (!std::strcmp(forced, "mpi"))
      return openMpiComm(out);
    return fail(SYNPL_RT_ERR_INVALID,
                "SYNPL_COMM=%s: expected self (one process) or mpi", forced);
  }
  if (launcherVariable())
    return openMpiComm(out);
  out = selfComm();
  return SYNPL_RT_OK;
}

bool launcherInteger(std::initializer_list<const char *> vars, int &out) {
  for (const char *v : vars) {
    const char *s = std::getenv(v);
    if (!s || !*s)
      continue;
    char *end = nullptr;
    long long n = std::strtoll(s, &end, 10);
    if (*end || n < 0 || n > INT_MAX)
      continue;
    out = (int)n;
    return true;
  }
  return false;
}

bool launcherWorld(int &rank, int &size) {
  return launcherInteger({"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}, rank) &&
         launcherInteger({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}, size);
}

} // namespace synpl::rt
