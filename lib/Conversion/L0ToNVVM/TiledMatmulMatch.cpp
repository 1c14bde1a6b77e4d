//===- TiledMatmulMatch.cpp - Recognising a matmul kernel for CUDA -------===//
//
// The tiled lowering (TiledMatmul.h) takes the matrix products the l0uop
// structural match finds (synpl/Dialect/L0UOp/L0UOpMatch.h) whose element
// types it has a variant for: mma.sync for bf16/f16 operands cast to f32,
// FFMA for f32.
//
//===----------------------------------------------------------------------===//
#include "TiledMatmulPlan.h"

namespace synpl::l0tonvvm::tiled {

std::optional<MatmulMatch> matchMatmul(KernelOp kernel) {
  std::optional<MatmulStructure> s = matchMatmulStructure(kernel);
  if (!s)
    return std::nullopt;
  MatmulMatch m;
  static_cast<MatmulStructure &>(m) = std::move(*s);
  if ((m.elem.isBF16() || m.elem.isF16()) && m.castToF32) {
    m.variant = Variant::Mma16;
    m.mmaElem = m.elem;
  } else if (m.elem.isF32() && !m.castToF32) {
    m.variant = Variant::SimtF32;
  } else {
    return std::nullopt;
  }
  return m;
}

} // namespace synpl::l0tonvvm::tiled
