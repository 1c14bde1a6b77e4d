//===- Nccl.h - NCCL: the collectives of GPU memory --------------*- C++ -*-===//
//
// The collectives of a data-parallel CUDA run on device memory, by NVIDIA's
// NCCL, loaded with dlopen as Cuda.cpp loads the driver: the ABI subset the
// runtime calls is declared here by hand (no nccl.h at build time), so a
// compiled program links no NCCL, starts anywhere, and needs one only when
// it runs CUDA kernels on several ranks.
//
// The ABI (nccl.h, checked against NCCL 2.x's types): ncclResult_t,
// ncclDataType_t and ncclRedOp_t are int-sized enums; ncclUniqueId is a
// struct of 128 bytes passed by value; ncclComm_t is a pointer; a
// cudaStream_t is the same object as a driver CUstream. Values:
//   ncclResult_t   ncclSuccess 0, ncclUnhandledCudaError 1, ncclSystemError
//                  2, ncclInternalError 3, ncclInvalidArgument 4,
//                  ncclInvalidUsage 5, ncclRemoteError 6, ncclInProgress 7
//   ncclDataType_t ncclInt8 0, ncclUint8 1, ncclInt32 2, ncclUint32 3,
//                  ncclInt64 4, ncclUint64 5, ncclFloat16 6, ncclFloat32 7,
//                  ncclFloat64 8, ncclBfloat16 9
//   ncclRedOp_t    ncclSum 0, ncclProd 1, ncclMax 2, ncclMin 3, ncclAvg 4
//                  (ncclAvg: NCCL 2.10 and later)
// The test library (test/lib/FakeNccl) implements the same subset.
// Internal to lib/Runtime (and its tests).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_RUNTIME_NCCL_H
#define SYNPL_LIB_RUNTIME_NCCL_H

#include "CudaDriver.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

extern "C" {

typedef struct ncclComm *ncclComm_t;
typedef int ncclResult_t;
#define SYNPL_NCCL_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[SYNPL_NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

} // extern "C"

namespace synpl::rt::nccl {

enum : int { SUCCESS = 0, IN_PROGRESS = 7 };
// ncclDataType_t.
enum : int { INT8 = 0, UINT8 = 1, INT32 = 2, INT64 = 4, FLOAT32 = 7, FLOAT64 = 8 };
// ncclRedOp_t.
enum : int { SUM = 0, PROD = 1, MAX = 2, MIN = 3, AVG = 4 };
/// ncclGetVersion's code of NCCL 2.10.0, the first with ncclAvg (codes since
/// 2.9 are major * 10000 + minor * 100 + patch; before, major * 1000 + ...).
constexpr int kAvgVersion = 21000;

} // namespace synpl::rt::nccl

/// The entry points: X(member, symbol, return type, parameters).
#define SYNPL_NCCL_FUNCTIONS(X)                                                \
  X(GetVersion, "ncclGetVersion", ncclResult_t, (int *))                       \
  X(GetUniqueId, "ncclGetUniqueId", ncclResult_t, (ncclUniqueId *))            \
  X(CommInitRank, "ncclCommInitRank", ncclResult_t,                            \
    (ncclComm_t *, int, ncclUniqueId, int))                                    \
  X(CommDestroy, "ncclCommDestroy", ncclResult_t, (ncclComm_t))                \
  X(CommGetAsyncError, "ncclCommGetAsyncError", ncclResult_t,                  \
    (ncclComm_t, ncclResult_t *))                                              \
  X(GetErrorString, "ncclGetErrorString", const char *, (ncclResult_t))        \
  X(AllReduce, "ncclAllReduce", ncclResult_t,                                  \
    (const void *, void *, size_t, int, int, ncclComm_t, CUstream))            \
  X(AllGather, "ncclAllGather", ncclResult_t,                                  \
    (const void *, void *, size_t, int, ncclComm_t, CUstream))                 \
  X(ReduceScatter, "ncclReduceScatter", ncclResult_t,                          \
    (const void *, void *, size_t, int, int, ncclComm_t, CUstream))            \
  X(Broadcast, "ncclBroadcast", ncclResult_t,                                  \
    (const void *, void *, size_t, int, int, ncclComm_t, CUstream))            \
  X(GroupStart, "ncclGroupStart", ncclResult_t, ())                            \
  X(GroupEnd, "ncclGroupEnd", ncclResult_t, ())

/// Entry points the runtime can do without (NCCL 2.13 and later): null when
/// the library lacks them.
#define SYNPL_NCCL_OPTIONAL_FUNCTIONS(X)                                       \
  X(GetLastError, "ncclGetLastError", const char *, (ncclComm_t))

namespace synpl::rt {

class Comm;

/// One NCCL communicator over the ranks of a data-parallel run: every rank
/// its own GPU (the CUDA context current when it is opened). Every failure
/// is a one-line message with SYNPL_RT_ERR_COMM naming the NCCL call and
/// ncclGetErrorString's text.
class NcclComm {
public:
  NcclComm(const NcclComm &) = delete;
  NcclComm &operator=(const NcclComm &) = delete;
  /// ncclCommDestroy (after the streams that used it are synchronized).
  ~NcclComm();

  /// Loads NCCL ($SYNPL_NCCL_LIB, else libnccl.so.2, else libnccl.so) and
  /// makes the communicator of `world`'s ranks: rank 0's ncclGetUniqueId,
  /// broadcast over `world`, then ncclCommInitRank on every rank. A missing
  /// library is an error naming what was tried and where to get one.
  static int32_t open(Comm &world, std::unique_ptr<NcclComm> &out);

  /// In place on `count` elements of the plan element type `element` (F32,
  /// F64, I32, I64) with `reduce` (SYNPL_PLAN_REDUCE_*; a mean is ncclAvg),
  /// enqueued on `stream`.
  int32_t allReduce(void *buf, int64_t count, int64_t element, int64_t reduce,
                    CUstream stream);
  /// `dst` (ranks x `count` elements) receives every rank's `src`.
  int32_t allGather(const void *src, void *dst, int64_t count, int64_t element,
                    CUstream stream);
  /// `src` holds ranks blocks of `count` elements; `dst` receives the
  /// reduction of every rank's block of this rank.
  int32_t reduceScatter(const void *src, void *dst, int64_t count, int64_t element,
                        int64_t reduce, CUstream stream);
  /// Every rank receives `root`'s `count` elements at `buf`.
  int32_t broadcast(void *buf, int64_t count, int64_t element, int root, CUstream stream);
  /// Around several calls that form one bucket (ncclGroupStart / End).
  int32_t groupStart();
  int32_t groupEnd();
  /// The communicator's asynchronous error (ncclCommGetAsyncError), as the
  /// run's error naming `doing`; SYNPL_RT_OK when there is none.
  int32_t checkAsync(const char *doing);

  /// ncclGetVersion's code (22304: 2.23.4) and the library loaded.
  int version() const { return version_; }
  const std::string &path() const { return path_; }
  /// "2.23.4".
  std::string versionText() const;
  /// Whether a mean runs as ncclAvg (NCCL 2.10 and later).
  bool hasAvg() const { return version_ >= nccl::kAvgVersion; }

private:
  NcclComm() = default;
  int32_t failed(ncclResult_t r, const char *call);
  ncclComm_t comm_ = nullptr;
  int version_ = 0;
  int rank_ = 0, size_ = 1;
  std::string path_;
};

/// The rank's place among the ranks on its host (the launcher's
/// OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID or
/// PMI_LOCAL_RANK); false when no launcher says it.
bool launcherLocalRank(int &rank);

} // namespace synpl::rt

#endif // SYNPL_LIB_RUNTIME_NCCL_H
