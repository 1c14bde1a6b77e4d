//===- InitAll.h - Register synplexum with an MLIR context -------*- C++ -*-===//
//
// What synplexum's own tools register beyond the dialects and passes
// (InitAllDialects.h, InitAllPasses.h): the translations
// the host and CUDA code generators need, and --synpl-to-ptx. Library
// synpl::SynplRegistration.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_INITALL_H
#define SYNPL_INITALL_H

#include "synpl/InitAllDialects.h"
#include "synpl/InitAllPasses.h"

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace synpl {

/// What a tool or test that JIT-compiles or translates host code needs in
/// one registry: every synplexum dialect, the upstream dialects, and the
/// builtin and LLVM dialects' translations to LLVM IR.
void registerHostCodegen(mlir::DialectRegistry &registry);

/// What the CUDA sink needs in a registry: the gpu, nvvm (and the kernel
/// builder's scf/vector/math) dialects, the NVVM target attribute's
/// serialization interface (for `gpu-module-to-binary`), and the GPU and
/// NVVM dialects' translations to LLVM IR.
void registerCudaCodegen(mlir::DialectRegistry &registry);

/// Registers --synpl-to-ptx with the global translation registry (and its
/// options --synpl-ptx-chip, --synpl-ptx-tune-launch): the PTX of an L0
/// plan's CUDA kernels (the CUDA kernel pipeline runs first), or of a
/// module of gpu.module / gpu.binary ops.
void registerToPtxTranslation();

} // namespace synpl

#endif // SYNPL_INITALL_H
