//===- InitAll.h - Register synplexum with an MLIR context -------*- C++ -*-===//
//
// For embedders: another MLIR-based compiler takes the synplexum dialects and
// passes with these two calls (or any subset, through the per-dialect
// libraries SynplL3, SynplL2, ... and their dialect classes).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_INITALL_H
#define SYNPL_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace synpl {

/// Inserts the l3, l2, l1, l0ctl and l0uop dialects into `registry`.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Inserts the upstream dialects synplexum programs use alongside its own
/// (func, arith, cf for stage bodies; llvm for codegen).
void registerUpstreamDialects(mlir::DialectRegistry &registry);

/// Registers every synplexum pass and pass pipeline with the global registry,
/// so that `synpl-opt` (or an embedder's opt tool) can name them.
void registerAllPasses();

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
