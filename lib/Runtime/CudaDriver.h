//===- CudaDriver.h - The CUDA driver API subset the runtime calls -*- C++ -*-===//
//
// Declared by hand (no CUDA headers at build time): the types, the enum
// values of cuda.h the runtime needs, and one function-pointer type per
// driver entry point. The runtime loads libcuda.so.1 with dlopen and binds
// these with dlsym, under the `_v2` names where cuda.h maps to them, so a
// compiled program starts on a machine without a driver and says so.
// The test driver (test/lib/FakeCuda) implements the same subset.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_RUNTIME_CUDADRIVER_H
#define SYNPL_LIB_RUNTIME_CUDADRIVER_H

#include <cstddef>
#include <cstdint>

extern "C" {

typedef int CUresult;
typedef int CUdevice;
typedef uint64_t CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;

/// The test seam of the fake driver: the host fallback of a CUDA kernel,
/// run on cuLaunchKernel of `entry` (the PTX .entry name).
typedef void (*synpl_host_kernel_fn)(void *const *args, int64_t begin,
                                     int64_t end);

} // extern "C"

namespace synpl::rt::cu {

// CUresult values (cuda.h).
enum : CUresult {
  SUCCESS = 0,
  ERROR_INVALID_VALUE = 1,
  ERROR_OUT_OF_MEMORY = 2,
  ERROR_NOT_INITIALIZED = 3,
  ERROR_INSUFFICIENT_DRIVER = 35,
  ERROR_NO_DEVICE = 100,
  ERROR_INVALID_DEVICE = 101,
  ERROR_INVALID_IMAGE = 200,
  ERROR_NO_BINARY_FOR_GPU = 209,
  ERROR_INVALID_PTX = 218,
  ERROR_UNSUPPORTED_PTX_VERSION = 222,
  ERROR_INVALID_HANDLE = 400,
  ERROR_NOT_FOUND = 500,
  ERROR_ILLEGAL_ADDRESS = 700,
  ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  ERROR_LAUNCH_FAILED = 719,
  ERROR_NOT_SUPPORTED = 801,
  ERROR_UNKNOWN = 999,
};

// CUjit_option values (cuda.h): the PTX JIT's logs.
enum : int {
  JIT_INFO_LOG_BUFFER = 3,
  JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  JIT_ERROR_LOG_BUFFER = 5,
  JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
};

// CUdevice_attribute.
enum : int {
  DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
};
// CUfunction_attribute.
enum : int { FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8 };
// Flags.
enum : unsigned {
  STREAM_NON_BLOCKING = 1,
  EVENT_DISABLE_TIMING = 2,
  MEMHOSTREGISTER_PORTABLE = 1,
  STREAM_CAPTURE_MODE_RELAXED = 2,
};

/// The driver entry points, bound by Driver::load. `symbol` is the name
/// dlsym looks up.
#define SYNPL_CUDA_DRIVER_FUNCTIONS(X)                                         \
  X(cuInit, "cuInit", CUresult, (unsigned))                                    \
  X(cuDriverGetVersion, "cuDriverGetVersion", CUresult, (int *))               \
  X(cuGetErrorName, "cuGetErrorName", CUresult, (CUresult, const char **))     \
  X(cuDeviceGetCount, "cuDeviceGetCount", CUresult, (int *))                   \
  X(cuDeviceGet, "cuDeviceGet", CUresult, (CUdevice *, int))                   \
  X(cuDeviceGetName, "cuDeviceGetName", CUresult, (char *, int, CUdevice))     \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", CUresult,                    \
    (int *, int, CUdevice))                                                    \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult,            \
    (CUcontext *, CUdevice))                                                   \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", CUresult,       \
    (CUdevice))                                                                \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", CUresult, (CUcontext))                 \
  X(cuCtxSynchronize, "cuCtxSynchronize", CUresult, ())                        \
  X(cuMemGetInfo, "cuMemGetInfo_v2", CUresult, (size_t *, size_t *))           \
  X(cuMemAlloc, "cuMemAlloc_v2", CUresult, (CUdeviceptr *, size_t))            \
  X(cuMemFree, "cuMemFree_v2", CUresult, (CUdeviceptr))                        \
  X(cuMemsetD8, "cuMemsetD8_v2", CUresult, (CUdeviceptr, unsigned char,        \
                                            size_t))                           \
  X(cuMemHostRegister, "cuMemHostRegister_v2", CUresult,                       \
    (void *, size_t, unsigned))                                                \
  X(cuMemHostUnregister, "cuMemHostUnregister", CUresult, (void *))            \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", CUresult,                                 \
    (CUdeviceptr, const void *, size_t))                                       \
  X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", CUresult, (void *, CUdeviceptr, size_t))  \
  X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", CUresult,                       \
    (CUdeviceptr, const void *, size_t, CUstream))                             \
  X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", CUresult,                       \
    (void *, CUdeviceptr, size_t, CUstream))                                   \
  X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", CUresult,                       \
    (CUdeviceptr, CUdeviceptr, size_t, CUstream))                              \
  X(cuStreamCreate, "cuStreamCreate", CUresult, (CUstream *, unsigned))        \
  X(cuStreamDestroy, "cuStreamDestroy_v2", CUresult, (CUstream))               \
  X(cuStreamSynchronize, "cuStreamSynchronize", CUresult, (CUstream))          \
  X(cuStreamWaitEvent, "cuStreamWaitEvent", CUresult,                          \
    (CUstream, CUevent, unsigned))                                             \
  X(cuEventCreate, "cuEventCreate", CUresult, (CUevent *, unsigned))           \
  X(cuEventDestroy, "cuEventDestroy_v2", CUresult, (CUevent))                  \
  X(cuEventRecord, "cuEventRecord", CUresult, (CUevent, CUstream))             \
  X(cuModuleLoadData, "cuModuleLoadData", CUresult, (CUmodule *, const void *)) \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx", CUresult,                        \
    (CUmodule *, const void *, unsigned, int *, void **))                      \
  X(cuModuleUnload, "cuModuleUnload", CUresult, (CUmodule))                    \
  X(cuModuleGetFunction, "cuModuleGetFunction", CUresult,                      \
    (CUfunction *, CUmodule, const char *))                                    \
  X(cuFuncSetAttribute, "cuFuncSetAttribute", CUresult, (CUfunction, int, int)) \
  X(cuLaunchKernel, "cuLaunchKernel", CUresult,                                \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,   \
     unsigned, CUstream, void **, void **))

/// Entry points the runtime can do without (CUDA graphs, driver 11.4 and
/// later): null when the driver lacks them.
#define SYNPL_CUDA_OPTIONAL_FUNCTIONS(X)                                       \
  X(cuStreamBeginCapture, "cuStreamBeginCapture_v2", CUresult,                 \
    (CUstream, int))                                                           \
  X(cuStreamEndCapture, "cuStreamEndCapture", CUresult, (CUstream, CUgraph *)) \
  X(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", CUresult,      \
    (CUgraphExec *, CUgraph, unsigned long long))                              \
  X(cuGraphLaunch, "cuGraphLaunch", CUresult, (CUgraphExec, CUstream))         \
  X(cuGraphExecDestroy, "cuGraphExecDestroy", CUresult, (CUgraphExec))         \
  X(cuGraphDestroy, "cuGraphDestroy", CUresult, (CUgraph))

} // namespace synpl::rt::cu

#endif // SYNPL_LIB_RUNTIME_CUDADRIVER_H
