//===- CudaDevices.h - The CUDA devices of this machine --------*- C++ -*-===//
//
// The GPUs the driver reports, for synplc's default system. Its own
// library (SynplCudaDevices: dlopen of libcuda), apart from the facts of
// CudaTarget.h, so that what needs only the facts (the l1 dialect's node
// verifier, the code generators) never links the driver loader.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TARGET_CUDADEVICES_H
#define SYNPL_TARGET_CUDADEVICES_H

#include "synpl/Target/CudaTarget.h"

#include <cstdint>
#include <string>
#include <vector>

namespace synpl::cuda {

/// A CUDA device the driver reports (synplc's default system).
struct CudaDevice {
  unsigned ordinal = 0;
  std::string name;           ///< "NVIDIA H200"
  unsigned major = 0, minor = 0;
  unsigned smCount = 0;
  uint64_t memoryBytes = 0;
  /// The architecture the sink emits for on it ("sm_90"); empty when the
  /// device is older than every known one.
  std::string chip;
};

/// The devices of this machine, asked of the driver (libcuda.so.1, loaded
/// with dlopen: a machine without the driver has none). Empty, with `why`
/// set, when there is no driver or no device, or when the environment sets
/// SYNPL_CUDA_DETECT=0 (the test suite does, so that a developer's GPU does
/// not change what the tests place).
std::vector<CudaDevice> detectDevices(std::string *why = nullptr);

} // namespace synpl::cuda

#endif // SYNPL_TARGET_CUDADEVICES_H
