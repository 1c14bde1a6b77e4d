//===- CudaTarget.cpp - Facts of the NVIDIA GPUs the CUDA sink targets ----===//
#include "synpl/Target/CudaTarget.h"

#include "llvm/ADT/STLExtras.h"

using namespace synpl::cuda;

namespace {
// Limits: CUDA C Programming Guide, "Technical Specifications per Compute
// Capability". Figures: A100 SXM4 80GB, A10, L4, H100 SXM5 data sheets
// (dense tensor-core peaks, no sparsity).
const CudaArch kArchs[] = {
    // name  maj min ptx drv    part
    {"sm_80", 8, 0, 70, 11000, "A100-SXM4-80GB",
     32, 1024, 2048, 32, 65536, 255, 167936, 166912, 49152, 2147483647u, 65535,
     108, 2039.0, 19.5, 312.0, 156.0, false, 80},
    {"sm_86", 8, 6, 71, 11010, "A10",
     32, 1024, 1536, 16, 65536, 255, 102400, 101376, 49152, 2147483647u, 65535,
     72, 600.0, 31.2, 125.0, 62.5, false, 24},
    {"sm_89", 8, 9, 78, 11080, "L4",
     32, 1024, 1536, 24, 65536, 255, 102400, 101376, 49152, 2147483647u, 65535,
     58, 300.0, 30.3, 121.0, 60.0, false, 24},
    {"sm_90", 9, 0, 78, 11080, "H100-SXM5-80GB",
     32, 1024, 2048, 32, 65536, 255, 233472, 232448, 49152, 2147483647u, 65535,
     132, 3350.0, 67.0, 989.0, 494.0, false, 80},
    {"sm_90a", 9, 0, 80, 12000, "H100-SXM5-80GB",
     32, 1024, 2048, 32, 65536, 255, 233472, 232448, 49152, 2147483647u, 65535,
     132, 3350.0, 67.0, 989.0, 494.0, true, 80},
};
} // namespace

llvm::ArrayRef<CudaArch> synpl::cuda::knownArchs() { return kArchs; }

const CudaArch *synpl::cuda::lookupArch(llvm::StringRef chip) {
  for (const CudaArch &a : kArchs)
    if (a.name == chip)
      return &a;
  return nullptr;
}

std::string synpl::cuda::knownArchList() {
  std::string s;
  for (const CudaArch &a : kArchs)
    s += (s.empty() ? "" : ", ") + a.name.str();
  return s;
}

std::optional<CudaTarget> synpl::cuda::makeTarget(llvm::StringRef chip,
                                                  unsigned smCount,
                                                  uint64_t vramBytes) {
  const CudaArch *arch = lookupArch(chip);
  if (!arch)
    return std::nullopt;
  CudaTarget t;
  t.arch = arch;
  t.smCount = smCount ? smCount : arch->smCount;
  t.vramBytes = vramBytes;
  return t;
}

unsigned synpl::cuda::driverVersionForPtx(unsigned ptxVersion) {
  // PTX ISA 7.x shipped with CUDA 11.x (7.0 = 11.0 ... 7.8 = 11.8), 8.x with
  // CUDA 12.x (8.0 = 12.0 ... 8.8 = 12.9 roughly: 12.0 + minor), 9.0 with 13.0.
  unsigned major = ptxVersion / 10, minor = ptxVersion % 10;
  if (major <= 7)
    return 11000 + 10 * minor;
  if (major == 8)
    return 12000 + 10 * minor;
  return 13000 + 10 * minor;
}

std::string synpl::cuda::chipForCapability(unsigned major, unsigned minor) {
  std::string best;
  unsigned bestCc = 0;
  for (const CudaArch &a : kArchs) {
    unsigned cc = a.major * 10 + a.minor;
    // sm_90a code runs on 9.0 only: never the pick for a newer device.
    if (a.hasWgmma || cc > major * 10 + minor || cc < bestCc)
      continue;
    best = a.name.str();
    bestCc = cc;
  }
  return best;
}
