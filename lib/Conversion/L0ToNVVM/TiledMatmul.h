//===- TiledMatmul.h - Tiled (tensor-core) matmul kernels for CUDA -*- C++ -*-===//
//
// Private to the l0uop -> NVVM lowering. A kernel whose UOps compute a
// matrix product
//
//   C[i, j] = epilogue( sum_k cast(A[.. i .. k ..]) * cast(B[.. k .. j ..]) , ...)
//
// (parallel RANGEs i and j, a loop RANGE k folded by REDUCE add, operands
// loaded from two buffers with affine indices) is lowered to a tiled kernel
// instead of one thread per output element: block tiles staged through
// shared memory, warp tiles on the tensor cores (mma.sync for bf16/f16, and
// tf32 only where the kernel's numerics allow it) or register-blocked FFMA
// for f32. The tiled kernel chooses its own launch (grid, block, dynamic
// shared memory), which the caller writes back to the l0uop.kernel.
//
// The function ABI is the CUDA lowering's: an llvm.func with `nvvm.kernel`,
// one `!llvm.ptr` (generic address space, pointing at global memory)
// parameter per kernel buffer, inputs then outputs in the kernel's order,
// and no other parameter.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_CONVERSION_L0TONVVM_TILEDMATMUL_H
#define SYNPL_LIB_CONVERSION_L0TONVVM_TILEDMATMUL_H

#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Target/CudaTarget.h"

#include "mlir/IR/Block.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace synpl::l0tonvvm {

/// The launch of a tiled kernel.
struct TiledLaunch {
  std::array<int64_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  int64_t sharedBytes = 0; ///< dynamic shared memory
  std::string description; ///< e.g. "mma.sync m16n8k16 bf16, block 128x128x32, 8 warps"
};

struct TiledMatmulOptions {
  bool tensorCores = true; ///< use mma.sync where the dtypes allow
  bool allowTf32 = false;  ///< f32 operands on tf32 tensor cores (changes numerics)
  /// Tests and benchmarks: build the candidate the cost model ranks n-th
  /// (0 = its choice); nothing when there are fewer.
  unsigned candidateRank = 0;
};

/// When `kernel` is a matmul this lowering takes, builds the function
/// `name` at the end of `into` (the body of a gpu.module) and returns its
/// launch; std::nullopt when it is not (the caller lowers it one thread per
/// element). Failure: an error was reported at the kernel.
mlir::FailureOr<std::optional<TiledLaunch>>
buildTiledMatmul(l0uop::KernelOp kernel, llvm::StringRef name,
                 const cuda::CudaTarget &target, mlir::Block &into,
                 const TiledMatmulOptions &options);

} // namespace synpl::l0tonvvm

#endif // SYNPL_LIB_CONVERSION_L0TONVVM_TILEDMATMUL_H
