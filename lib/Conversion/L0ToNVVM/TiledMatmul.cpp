//===- TiledMatmul.cpp - Tiled (tensor-core) matmul kernels for CUDA -------===//
//
// Placeholder until the tiled lowering lands: no kernel matches, so every
// kernel takes the one-thread-per-element lowering.
//
//===----------------------------------------------------------------------===//
#include "TiledMatmul.h"

using namespace mlir;

FailureOr<std::optional<synpl::l0tonvvm::TiledLaunch>>
synpl::l0tonvvm::buildTiledMatmul(l0uop::KernelOp, llvm::StringRef,
                                  const cuda::CudaTarget &, Block &,
                                  const TiledMatmulOptions &) {
  return std::optional<TiledLaunch>();
}
