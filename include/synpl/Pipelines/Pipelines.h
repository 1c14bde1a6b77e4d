//===- Pipelines.h - The pinned pass pipelines ------------------*- C++ -*-===//
//
// Each named pipeline is one fixed list of passes; the pass manager verifies
// the IR after every pass, so each stage of a lowering leaves a program that
// passes every verification row of its layer.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_PIPELINES_PIPELINES_H
#define SYNPL_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace synpl {

struct HostPipelineOptions : public mlir::PassPipelineOptions<HostPipelineOptions> {
  Option<bool> llvmOnly{
      *this, "llvm-only",
      llvm::cl::desc("Erase the L0 plan and control regions once lowered, leaving "
                     "a module of LLVM dialect functions only (translatable with "
                     "synpl-translate --mlir-to-llvmir); by default they stay as "
                     "data for the runtime"),
      llvm::cl::init(false)};
  Option<bool> executable{
      *this, "executable",
      llvm::cl::desc("Finish with --synpl-convert-l0-plan-to-llvm: the plan "
                     "becomes the binary's metadata tables and main() calls "
                     "the runtime's executor (what synplc compiles)"),
      llvm::cl::init(false)};
  Option<bool> summary{
      *this, "summary",
      llvm::cl::desc("Remark the L0 plan's kernel, slot and pool counts after "
                     "L1 -> L0 emission (the emission pass's own summary option)"),
      llvm::cl::init(false)};
};

/// `synpl-host-pipeline`: a verified L1 program down to the LLVM dialect for
/// the host CPU — L1 -> L0 emission (fusion, memory plan, streams),
/// memory packing, l0ctl -> LLVM, l0uop -> LLVM.
void buildHostPipeline(mlir::OpPassManager &pm, const HostPipelineOptions &options);

/// The first half of the host pipeline: L1 -> L0 emission and memory
/// packing (what `synplc --emit=l0` prints).
void buildHostEmissionPipeline(mlir::OpPassManager &pm,
                               const HostPipelineOptions &options);

/// The second half: the L0 plan's control programs, kernels and (with
/// `executable`) tables to LLVM dialect.
void buildHostCodegenPipeline(mlir::OpPassManager &pm,
                              const HostPipelineOptions &options);

/// Registers the named pipelines with the global registry.
void registerPipelines();

} // namespace synpl

#endif // SYNPL_PIPELINES_PIPELINES_H
