//===- CudaTarget.h - Facts of the NVIDIA GPUs the CUDA sink targets -*- C++ -*-===//
//
// One definition per hardware fact (plain data; docs/architecture.md): the compute
// capabilities synplexum emits PTX for, with the limits the kernel lowering
// checks against and the throughput figures the launch-config and tiling
// cost models score with. A system's GPU node (`l1.node @gpu_0 compute
// {isa = "cuda", arch = "sm_90", sm = 132, vram = "141GB"}`) picks the
// architecture and overrides the per-device figures (SM count, memory).
//
// Sources: the CUDA C Programming Guide's "Compute Capabilities" table
// (limits), the vendors' data sheets (bandwidth, peak throughput). The
// throughput figures are nominal; the cost models only compare candidates
// with them.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TARGET_CUDATARGET_H
#define SYNPL_TARGET_CUDATARGET_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace synpl::cuda {

/// The facts of one compute capability (and its reference part).
struct CudaArch {
  llvm::StringLiteral name;     ///< "sm_80"
  unsigned major, minor;        ///< compute capability 8.0
  unsigned ptxVersion;          ///< PTX ISA the kernels are emitted as (70 = 7.0)
  unsigned minDriverVersion;    ///< cuDriverGetVersion() that JITs that PTX
  llvm::StringLiteral part;     ///< the reference part the figures below are for

  // Limits (per block / per SM).
  unsigned warpSize;
  unsigned maxThreadsPerBlock;
  unsigned maxThreadsPerSM;
  unsigned maxBlocksPerSM;
  unsigned registersPerSM;      ///< 32-bit registers
  unsigned maxRegistersPerThread;
  unsigned sharedPerSM;         ///< bytes of shared memory per SM
  unsigned maxSharedPerBlock;   ///< bytes a block may opt into (dynamic)
  unsigned staticSharedPerBlock;///< bytes without the opt-in (48 KiB)
  unsigned maxGridX, maxGridYZ;

  // Reference part's figures (overridden by the system's node where given).
  unsigned smCount;
  double dramGBs;               ///< DRAM bandwidth, GB/s
  double fp32Tflops;            ///< FFMA peak (2 flops per fma)
  double tensorBf16Tflops;      ///< dense bf16/f16 tensor-core peak, f32 accumulate
  double tensorTf32Tflops;      ///< dense tf32 tensor-core peak
  bool hasWgmma;                ///< sm_90a: warpgroup MMA
  unsigned vramGB;              ///< the reference part's memory

  std::string chip() const { return name.str(); }
  /// "+ptx70": the feature string of #nvvm.target / the NVPTX backend.
  std::string ptxFeatures() const {
    return "+ptx" + std::to_string(ptxVersion);
  }
};

/// Every architecture the sink emits for, oldest first.
llvm::ArrayRef<CudaArch> knownArchs();

/// The facts of `chip` ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"), or
/// nothing for an unknown one (callers list knownArchs() in the error).
const CudaArch *lookupArch(llvm::StringRef chip);

/// "sm_80, sm_86, sm_89, sm_90, sm_90a".
std::string knownArchList();

/// The architecture a GPU node without an `arch` attribute gets: the oldest
/// one, whose PTX every newer GPU's driver also JIT-compiles.
inline llvm::StringRef defaultChip() { return "sm_80"; }

/// One GPU as the compiler sees it: the architecture's facts with the
/// node's own figures.
struct CudaTarget {
  const CudaArch *arch = nullptr;
  unsigned smCount = 0;     ///< the node's `sm`, else the reference part's
  uint64_t vramBytes = 0;   ///< the node's `vram` (0: unknown)

  double dramBytesPerSecond() const { return arch->dramGBs * 1e9; }
  double fp32FlopsPerSecond() const {
    return arch->fp32Tflops * 1e12 * smCount / arch->smCount;
  }
  double tensorFlopsPerSecond() const {
    return arch->tensorBf16Tflops * 1e12 * smCount / arch->smCount;
  }
};

/// The target of `chip` with the reference part's figures (smCount and
/// vramBytes may then be overridden); nothing for an unknown chip.
std::optional<CudaTarget> makeTarget(llvm::StringRef chip, unsigned smCount = 0,
                                     uint64_t vramBytes = 0);

/// The driver version (cuDriverGetVersion's 1000*major + 10*minor) that
/// JIT-compiles PTX ISA `ptxVersion` (70 = 7.0 -> 11000).
unsigned driverVersionForPtx(unsigned ptxVersion);

/// The known architecture a device of compute capability major.minor runs
/// PTX of: the newest known one not newer than it ("" when it is older
/// than every known one).
std::string chipForCapability(unsigned major, unsigned minor);

} // namespace synpl::cuda

#endif // SYNPL_TARGET_CUDATARGET_H
