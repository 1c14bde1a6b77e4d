//===- Nccl.cpp - NCCL loaded at run time: collectives of GPU memory -----===//
//
// The NCCL communicator of a data-parallel CUDA run (Nccl.h). Environment:
//   SYNPL_NCCL_LIB  the library to load (default libnccl.so.2, then
//                   libnccl.so). PyPI's nvidia-nccl-cu12 / nvidia-nccl-cu13
//                   wheels carry libnccl.so.2 (under nvidia/nccl/lib of
//                   their site-packages).
// The library is loaded RTLD_LOCAL (nothing else resolves against it) and
// stays loaded. The communicator is made after the MPI world and the CUDA
// context: rank 0's ncclGetUniqueId goes to every rank over the world's
// broadcast, then every rank calls ncclCommInitRank with its world rank.
//
//===----------------------------------------------------------------------===//
#include "Nccl.h"
#include "Comm.h"
#include "Internal.h"
#include "synpl/Runtime/PlanFormat.h"

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <dlfcn.h>

using namespace synpl::rt;

namespace {

/// The library and its entry points: one per process.
struct NcclLib {
  void *handle = nullptr;
  std::string path;
#define SYNPL_NCCL_MEMBER(name, symbol, ret, args) ret(*name) args = nullptr;
  SYNPL_NCCL_FUNCTIONS(SYNPL_NCCL_MEMBER)
  SYNPL_NCCL_OPTIONAL_FUNCTIONS(SYNPL_NCCL_MEMBER)
#undef SYNPL_NCCL_MEMBER
};

NcclLib &ncclLib() {
  static NcclLib lib;
  return lib;
}

int32_t loadNccl(NcclLib &l, int ranks) {
  if (l.handle)
    return SYNPL_RT_OK;
  std::string tried;
  void *h = openLibrary("SYNPL_NCCL_LIB", {"libnccl.so.2", "libnccl.so"},
                        RTLD_NOW | RTLD_LOCAL, l.path, tried);
  if (!h)
    return fail(SYNPL_RT_ERR_COMM,
                "cannot load NCCL: tried %s; a data-parallel program with CUDA kernels "
                "on %d ranks runs its collectives of GPU memory with NVIDIA's NCCL: "
                "install it (PyPI's nvidia-nccl-cu12 or nvidia-nccl-cu13 wheel carries "
                "libnccl.so.2, under nvidia/nccl/lib) and set SYNPL_NCCL_LIB to the path "
                "of its libnccl.so.2 (run alone, one process needs no NCCL)",
                tried.c_str(), ranks);
#define SYNPL_NCCL_BIND(member, symbol, ret, args)                             \
  l.member = reinterpret_cast<ret(*) args>(dlsym(h, symbol));                  \
  if (!l.member)                                                               \
    return fail(SYNPL_RT_ERR_COMM,                                             \
                "%s lacks %s: not an NCCL 2 library (SYNPL_NCCL_LIB names "     \
                "another file?)",                                               \
                l.path.c_str(), symbol);
  SYNPL_NCCL_FUNCTIONS(SYNPL_NCCL_BIND)
#undef SYNPL_NCCL_BIND
#define SYNPL_NCCL_BIND_OPTIONAL(member, symbol, ret, args)                    \
  l.member = reinterpret_cast<ret(*) args>(dlsym(h, symbol));
  SYNPL_NCCL_OPTIONAL_FUNCTIONS(SYNPL_NCCL_BIND_OPTIONAL)
#undef SYNPL_NCCL_BIND_OPTIONAL
  l.handle = h;
  return SYNPL_RT_OK;
}


/// The NCCL data type and count of `count` elements of the plan element
/// type `element`: the type itself for f32, f64, i32, i64, else bytes.
void typeOf(int64_t element, int64_t count, int &type, size_t &n) {
  switch (element) {
  case SYNPL_PLAN_F32:
    type = nccl::FLOAT32;
    break;
  case SYNPL_PLAN_F64:
    type = nccl::FLOAT64;
    break;
  case SYNPL_PLAN_I32:
    type = nccl::INT32;
    break;
  case SYNPL_PLAN_I64:
    type = nccl::INT64;
    break;
  default:
    type = nccl::UINT8;
    n = (size_t)(count * elementBytes(element));
    return;
  }
  n = (size_t)count;
}

/// Whether NCCL reduces values of `type` with `reduce` here: a number type
/// (not the bytes typeOf falls back to) and one of the plan's reductions.
int32_t checkReducible(int type, int64_t reduce) {
  if (type == nccl::UINT8 || reduce < SYNPL_PLAN_REDUCE_SUM || reduce > SYNPL_PLAN_REDUCE_MIN)
    return fail(SYNPL_RT_ERR_INVALID,
                "collective: only f32, f64, i32 and i64 values are reduced (sum, mean, max, "
                "min)");
  return SYNPL_RT_OK;
}

int opOf(int64_t reduce) {
  switch (reduce) {
  case SYNPL_PLAN_REDUCE_MEAN:
    return nccl::AVG;
  case SYNPL_PLAN_REDUCE_MAX:
    return nccl::MAX;
  case SYNPL_PLAN_REDUCE_MIN:
    return nccl::MIN;
  default:
    return nccl::SUM;
  }
}

} // namespace

namespace synpl::rt {

bool launcherLocalRank(int &rank) {
  return launcherInteger(
      {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "PMI_LOCAL_RANK"}, rank);
}

NcclComm::~NcclComm() {
  if (comm_ && ncclLib().CommDestroy)
    ncclLib().CommDestroy(comm_);
}

std::string NcclComm::versionText() const {
  int v = version_, major, minor, patch;
  if (v >= 10000) {
    major = v / 10000;
    minor = v / 100 % 100;
  } else {
    major = v / 1000;
    minor = v / 100 % 10;
  }
  patch = v % 100;
  char text[32];
  std::snprintf(text, sizeof text, "%d.%d.%d", major, minor, patch);
  return text;
}

int32_t NcclComm::failed(ncclResult_t r, const char *call) {
  NcclLib &l = ncclLib();
  const char *text = l.GetErrorString ? l.GetErrorString(r) : nullptr;
  const char *last = l.GetLastError && comm_ ? l.GetLastError(comm_) : nullptr;
  return fail(SYNPL_RT_ERR_COMM, "%s failed: %s (NCCL error %d)%s%s", call,
              text && *text ? text : "unknown error", r, last && *last ? ": " : "",
              last && *last ? last : "");
}

#define SYNPL_NCCL_CHECK(call, ...)                                            \
  do {                                                                         \
    ncclResult_t rc_ = ncclLib().call(__VA_ARGS__);                            \
    if (rc_ != nccl::SUCCESS)                                                  \
      return failed(rc_, "nccl" #call);                                        \
  } while (0)

int32_t NcclComm::open(Comm &world, std::unique_ptr<NcclComm> &out) {
  NcclLib &l = ncclLib();
  if (int32_t st = loadNccl(l, world.size()))
    return st;
  std::unique_ptr<NcclComm> c(new NcclComm());
  c->path_ = l.path;
  c->rank_ = world.rank();
  c->size_ = world.size();
  {
    NcclComm &self = *c;
    ncclResult_t r = l.GetVersion(&self.version_);
    if (r != nccl::SUCCESS)
      return self.failed(r, "ncclGetVersion");
  }
  ncclUniqueId id;
  std::memset(&id, 0, sizeof id);
  // Rank 0 makes the id; a failure there must still reach the broadcast,
  // or the others would wait for it: its bytes then say so (all 0xFF).
  int32_t made = SYNPL_RT_OK;
  if (world.rank() == 0) {
    ncclResult_t r = l.GetUniqueId(&id);
    if (r != nccl::SUCCESS) {
      made = c->failed(r, "ncclGetUniqueId");
      std::memset(&id, 0xFF, sizeof id);
    }
  }
  std::string saved = made ? synpl_rt_last_error() : "";
  if (int32_t st = world.broadcast(&id, sizeof id, 0))
    return fail(st, "sending NCCL's unique id to the ranks: %s", synpl_rt_last_error());
  if (made)
    return fail(made, "%s", saved.c_str());
  bool bad = true;
  for (unsigned char b : id.internal)
    bad = bad && b == 0xFF;
  if (bad)
    return fail(SYNPL_RT_ERR_COMM, "rank 0 could not make NCCL's unique id (ncclGetUniqueId "
                                   "failed there)");
  {
    NcclComm &self = *c;
    ncclResult_t r = l.CommInitRank(&self.comm_, world.size(), id, world.rank());
    if (r != nccl::SUCCESS) {
      self.comm_ = nullptr;
      return self.failed(r, "ncclCommInitRank");
    }
  }
  out = std::move(c);
  return SYNPL_RT_OK;
}

int32_t NcclComm::allReduce(void *buf, int64_t count, int64_t element, int64_t reduce,
                            CUstream stream) {
  if (count <= 0)
    return SYNPL_RT_OK;
  int type;
  size_t n;
  typeOf(element, count, type, n);
  if (int32_t st = checkReducible(type, reduce))
    return st;
  SYNPL_NCCL_CHECK(AllReduce, buf, buf, n, type, opOf(reduce), comm_, stream);
  return SYNPL_RT_OK;
}

int32_t NcclComm::allGather(const void *src, void *dst, int64_t count, int64_t element,
                            CUstream stream) {
  if (count <= 0)
    return SYNPL_RT_OK;
  int type;
  size_t n;
  typeOf(element, count, type, n);
  SYNPL_NCCL_CHECK(AllGather, src, dst, n, type, comm_, stream);
  return SYNPL_RT_OK;
}

int32_t NcclComm::reduceScatter(const void *src, void *dst, int64_t count, int64_t element,
                                int64_t reduce, CUstream stream) {
  if (count <= 0)
    return SYNPL_RT_OK;
  int type;
  size_t n;
  typeOf(element, count, type, n);
  if (int32_t st = checkReducible(type, reduce))
    return st;
  SYNPL_NCCL_CHECK(ReduceScatter, src, dst, n, type, opOf(reduce), comm_, stream);
  return SYNPL_RT_OK;
}

int32_t NcclComm::broadcast(void *buf, int64_t count, int64_t element, int root,
                            CUstream stream) {
  if (root < 0 || root >= size_)
    return fail(SYNPL_RT_ERR_INVALID, "broadcast from rank %d: the world has %d rank%s",
                root, size_, size_ == 1 ? "" : "s");
  if (count <= 0)
    return SYNPL_RT_OK;
  int type;
  size_t n;
  typeOf(element, count, type, n);
  SYNPL_NCCL_CHECK(Broadcast, buf, buf, n, type, root, comm_, stream);
  return SYNPL_RT_OK;
}

int32_t NcclComm::groupStart() {
  SYNPL_NCCL_CHECK(GroupStart);
  return SYNPL_RT_OK;
}

int32_t NcclComm::groupEnd() {
  SYNPL_NCCL_CHECK(GroupEnd);
  return SYNPL_RT_OK;
}

int32_t NcclComm::checkAsync(const char *doing) {
  if (!comm_)
    return SYNPL_RT_OK;
  ncclResult_t async = nccl::SUCCESS;
  SYNPL_NCCL_CHECK(CommGetAsyncError, comm_, &async);
  if (async == nccl::SUCCESS || async == nccl::IN_PROGRESS)
    return SYNPL_RT_OK;
  NcclLib &l = ncclLib();
  const char *text = l.GetErrorString(async);
  const char *last = l.GetLastError ? l.GetLastError(comm_) : nullptr;
  return fail(SYNPL_RT_ERR_COMM, "NCCL reported an asynchronous error (ncclCommGetAsyncError) "
                                 "%s: %s (NCCL error %d)%s%s",
              doing, text && *text ? text : "unknown error", async, last && *last ? ": " : "",
              last && *last ? last : "");
}

} // namespace synpl::rt
