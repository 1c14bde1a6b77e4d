//===- TiledMatmulPlan.h - What the tiled matmul lowering decides -*- C++ -*-===//
//
// Private to the CUDA tiled matmul lowering: the match of a kernel's
// matrix product (its ranges, operands as affine strides, the variant and
// the epilogue's ops; TiledMatmulMatch.cpp) and the tile configurations
// the cost model ranks (TiledMatmulSearch.cpp), which the emitter
// (TiledMatmul.cpp) builds.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_CONVERSION_L0TONVVM_TILEDMATMULPLAN_H
#define SYNPL_LIB_CONVERSION_L0TONVVM_TILEDMATMULPLAN_H

#include "synpl/Dialect/L0UOp/L0UOpMatch.h"
#include "synpl/Target/CudaTarget.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace synpl::l0tonvvm::tiled {
using namespace mlir;
using namespace synpl::l0uop;

using OperandPlan = MatmulOperand;

/// Mma16: bf16/f16 mma.sync m16n8k16; MmaTf32: f32 operands on tf32
/// mma.sync m16n8k8 (only under TiledMatmulOptions::allowTf32); SimtF32:
/// FFMA.
enum class Variant { Mma16, MmaTf32, SimtF32 };
inline bool isMma(Variant v) { return v != Variant::SimtF32; }

/// The l0uop structural match, with the variant the CUDA lowering picks.
struct MatmulMatch : MatmulStructure {
  Variant variant = Variant::SimtF32;
  Type mmaElem; ///< bf16 or f16
};

/// The matrix product `kernel` computes, when it is one the tiled
/// lowering takes (TiledMatmul.h states the shape); std::nullopt otherwise.
std::optional<MatmulMatch> matchMatmul(KernelOp kernel);

struct TileConfig {
  int64_t bm = 0, bn = 0, bk = 0, stages = 0;
  int64_t wm = 0, wn = 0; ///< mma: warp tile; simt: thread tile (tm, tn)
  int64_t threads = 0;
  int64_t sharedBytes = 0;
  int64_t regs = 0;
  int64_t blocksPerSM = 0;
  double seconds = 0;
  // Shared layout per operand: true = [k][r] (r contiguous).
  bool aKMajor = false, bKMajor = false;
  int64_t aPitch = 0, bPitch = 0; ///< elements per stored row
  int64_t aTileBytes = 0, bTileBytes = 0;
  int64_t aVec = 1, bVec = 1; ///< elements per cp.async
};

/// The `keep` best tile configurations for `m` on `t`, best first, by the
/// cost model (TiledMatmulSearch.cpp; docs/cuda-matmul.md); with `report`,
/// the ranking goes to --synpl-search-report.
SmallVector<TileConfig> rankTiles(const MatmulMatch &m, const cuda::CudaTarget &t,
                                  llvm::StringRef kernelName, unsigned keep, bool report);

} // namespace synpl::l0tonvvm::tiled

#endif // SYNPL_LIB_CONVERSION_L0TONVVM_TILEDMATMULPLAN_H
