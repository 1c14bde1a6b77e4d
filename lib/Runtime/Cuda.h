//===- Cuda.h - The CUDA platform primitives ---------------------*- C++ -*-===//
//
// The spec's "Linux + CUDA" column: the driver API loaded at run time
// (dlopen("libcuda.so.1")), one device, its primary context, the kernels'
// module, device memory, streams and events. Only a plan with CUDA kernels
// opens it, so host programs never touch the driver. Every failure is a
// one-line message with SYNPL_RT_ERR_DEVICE (see docs/runtime-cuda.md).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_RUNTIME_CUDA_H
#define SYNPL_LIB_RUNTIME_CUDA_H

#include "CudaDriver.h"

#include <cstdint>

namespace synpl::rt {

class CudaDevice {
public:
  CudaDevice() = default;
  CudaDevice(const CudaDevice &) = delete;
  CudaDevice &operator=(const CudaDevice &) = delete;
  ~CudaDevice();

  /// Loads the driver, initializes it and makes the primary context of
  /// device `localRank` modulo the device count current (0 for a run of one
  /// process; a rank's place on its host in a data-parallel run, so each
  /// rank of a host has a GPU of its own). Fails with one line when there is
  /// no driver library, no device, a driver older than `minDriver`
  /// (cuDriverGetVersion's 1000*major + 10*minor) or a GPU older than
  /// `deviceArch` (10*major + minor).
  int32_t open(int64_t deviceArch, int64_t minDriver, int localRank = 0);
  bool isOpen() const { return ctx != nullptr; }

  /// Loads the kernels' module: the cubin first, the PTX (JIT) when the
  /// cubin does not run on this GPU.
  int32_t loadModule(const void *cubin, int64_t cubinSize, const char *ptx);
  /// The function of a PTX `.entry`, allowed `sharedMem` dynamic shared
  /// bytes. `kernel` names it in messages.
  int32_t function(const char *entry, const char *kernel, int64_t sharedMem,
                   CUfunction &out);

  /// "CUDA_ERROR_OUT_OF_MEMORY", ...
  const char *errorName(CUresult r) const;
  /// When r != CUDA_SUCCESS: "<error name>: <what>" as the last error.
  int32_t check(CUresult r, const char *fmt, ...)
      __attribute__((format(printf, 3, 4)));

  /// Device memory for a pool; out-of-memory names the pool and the bytes.
  int32_t alloc(uint64_t bytes, const char *pool, CUdeviceptr &out);

  /// The test seam of the fake driver, when the loaded driver has one.
  bool hasHostKernelSeam() const { return registerHostKernel != nullptr; }
  void (*registerHostKernel)(const char *, synpl_host_kernel_fn) = nullptr;

  // The driver's entry points.
#define SYNPL_CUDA_MEMBER(name, symbol, ret, args) ret(*name) args = nullptr;
  SYNPL_CUDA_DRIVER_FUNCTIONS(SYNPL_CUDA_MEMBER)
  SYNPL_CUDA_OPTIONAL_FUNCTIONS(SYNPL_CUDA_MEMBER)
#undef SYNPL_CUDA_MEMBER
  /// Whether the driver can capture a stream into a CUDA graph.
  bool hasGraphs() const {
    return cuStreamBeginCapture && cuStreamEndCapture &&
           cuGraphInstantiateWithFlags && cuGraphLaunch && cuGraphExecDestroy &&
           cuGraphDestroy;
  }

  int driverVersion = 0;
  int ccMajor = 0, ccMinor = 0;
  /// The device opened (its ordinal) and the devices the driver sees.
  int ordinal = 0, deviceCount = 0;
  char name[256] = {};

private:
  void *handle = nullptr;
  CUdevice device = 0;
  CUcontext ctx = nullptr;
  CUmodule module = nullptr;
};

} // namespace synpl::rt

#endif // SYNPL_LIB_RUNTIME_CUDA_H
