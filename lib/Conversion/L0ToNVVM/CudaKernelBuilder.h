//===- CudaKernelBuilder.h - Building one device kernel ------*- C++ -*-===//
//
// Private to lib/Conversion/L0ToNVVM: the builder of one l0uop device
// kernel as an `nvvm.kernel` function. It extends the host lowering's
// KernelBuilder (one UOp at a time) with what the GPU does differently:
// RANGEs over the launch as thread and block indices, barriers, shared
// memory, the PTX forms of the math UOps (CudaKernelBuilder.cpp) and tiles
// on the tensor cores (CudaTensorCores.cpp). The pass is L0UOpToNVVM.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_CONVERSION_L0TONVVM_CUDAKERNELBUILDER_H
#define SYNPL_LIB_CONVERSION_L0TONVVM_CUDAKERNELBUILDER_H

#include "../L0ToLLVM/KernelBuilder.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Target/CudaTarget.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace synpl::l0tonvvm {
using namespace mlir;
using namespace synpl::l0uop;
using namespace synpl::l0tollvm;

/// The dynamic shared memory array of a gpu.module.
constexpr llvm::StringLiteral kSharedArray = "__synpl_dynamic_shared";
/// Alignment of each shared buffer in the dynamic array.
constexpr int64_t kSharedAlign = 16;

/// 0, 1, 2 for the x, y, z kinds.
inline unsigned axisOf(RangeKind k) {
  switch (k) {
  case RangeKind::global_x:
  case RangeKind::group_x:
  case RangeKind::local_x:
    return 0;
  case RangeKind::global_y:
  case RangeKind::group_y:
  case RangeKind::local_y:
    return 1;
  default:
    return 2;
  }
}
inline bool isGlobal(RangeKind k) {
  return k == RangeKind::global_x || k == RangeKind::global_y ||
         k == RangeKind::global_z;
}
inline bool isGroup(RangeKind k) {
  return k == RangeKind::group_x || k == RangeKind::group_y ||
         k == RangeKind::group_z;
}
inline bool isLocal(RangeKind k) {
  return k == RangeKind::local_x || k == RangeKind::local_y ||
         k == RangeKind::local_z;
}

/// The threads (global), blocks (group) or threads of a block (local) a
/// RANGE kind enumerates under the launch.
inline int64_t launchedAlong(KernelOp kernel, RangeKind k) {
  unsigned a = axisOf(k);
  if (isGlobal(k))
    return kernel.getGrid()[a] * kernel.getBlock()[a];
  if (isGroup(k))
    return kernel.getGrid()[a];
  return kernel.getBlock()[a];
}

/// Whether a parallel RANGE's guard masks off some threads of a block (and
/// not others): a barrier under it would see only part of the block.
inline bool masksWithinBlock(KernelOp kernel, RangeOp range) {
  RangeKind k = range.getKind();
  if (isGroup(k) || !isParallel(k))
    return false;
  return launchedAlong(kernel, k) > range.getTripCount() &&
         kernel.getBlock()[axisOf(k)] > 1;
}

/// The role of a tile value on the tensor cores.
enum class Frag { A, B, C };

/// The MMA element type of a tile element type (f32 operands: tf32).
inline std::optional<NVVM::MMATypes> mmaType(Type t, bool operand) {
  if (t.isF16())
    return NVVM::MMATypes::f16;
  if (t.isBF16())
    return NVVM::MMATypes::bf16;
  if (t.isF32())
    return operand ? NVVM::MMATypes::tf32 : NVVM::MMATypes::f32;
  return std::nullopt;
}

struct CudaOptions {
  const cuda::CudaTarget *target;
  bool fastMath = true;
  bool tensorCores = true;
};

/// Builds one device kernel as an `nvvm.kernel` function.
class CudaKernelBuilder : public KernelBuilder {
public:
  CudaKernelBuilder(KernelOp kernel, StringRef name, SymbolTable &planSymbols,
                    SmallVectorImpl<NotLowered> &failures,
                    const CudaOptions &options)
      : KernelBuilder(kernel, name, planSymbols, failures), options(options) {}

  /// Builds the function at the end of `into` (a module body). Returns the
  /// dynamic shared bytes the kernel needs.
  int64_t buildKernel(ModuleOp into);

private:
  StringRef targetName() const override { return "CUDA"; }
  bool openParallelRange(RangeOp range) override;
  std::optional<LogicalResult> lowerTargetOp(Operation *op,
                                             ArrayRef<Value> args,
                                             Type resultType,
                                             std::string &why) override;
  void openPhase(Frame &frame, Location loc) override;
  void closePhase(Frame &frame, Location loc) override;

  /// The thread (or block) index a parallel RANGE kind enumerates, as i64.
  Value launchIndex(Location loc, RangeKind kind);
  /// `v` through `fn` on f32 (f16/bf16 widened, vectors lane by lane).
  Value onF32(Location loc, Value v, llvm::function_ref<Value(Value)> fn);
  Value intrinsic(Location loc, StringRef name, Value x) {
    return LLVM::CallIntrinsicOp::create(b, loc, x.getType(),
                                         b.getStringAttr(name), ValueRange{x})
        .getResult(0);
  }
  LogicalResult lowerMath(Operation *op, ArrayRef<Value> args, std::string &why);
  LogicalResult lowerBarrier(Operation *op, std::string &why);
  LogicalResult lowerStore(Operation *op, ArrayRef<Value> args);

  // Tensor cores.
  /// Decides whether the kernel's tiles go to the tensor cores; records
  /// refusals (located) for tile uses the warp-collective form cannot take.
  void planTiles();
  LogicalResult lowerTileOp(Operation *op, std::string &why);
  Type fragType(NVVM::MMATypes t, Frag f, int rows, int cols);
  SmallVector<Value> fragElements(Location loc, Value frag);

  const CudaOptions &options;
  /// Tile values on the tensor cores -> their role; empty: per-thread form.
  llvm::DenseMap<Value, Frag> frags;
  /// The k of the WMMAs an accumulator tile meets (8: tf32, 16: f16/bf16):
  /// its loads and stores take the same m16n16k<k> shape.
  llvm::DenseMap<Value, int64_t> accK;
  bool tensorTiles = false;
  /// Refusals found by planTiles, reported when the op is reached.
  llvm::DenseMap<Operation *, std::string> tileRefusals;
  /// The base (generic pointer) of the dynamic shared array.
  Value sharedBase;
};

} // namespace synpl::l0tonvvm

#endif // SYNPL_LIB_CONVERSION_L0TONVVM_CUDAKERNELBUILDER_H
