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
  Option<std::string> ptxas{
      *this, "ptxas",
      llvm::cl::desc("With executable: assemble the CUDA kernels' PTX with this "
                     "ptxas and embed the cubin next to it (empty: PTX only)"),
      llvm::cl::init("")};
  Option<double> hotShare{
      *this, "hot-share",
      llvm::cl::desc("Before the kernels' LLVM lowering, --synpl-l0-kernel-effort: the "
                     "kernels that take this share of the step's estimated time are "
                     "optimized at the full level, the rest at light-level (1: all at "
                     "the full level)"),
      llvm::cl::init(0.99)};
  Option<unsigned> lightLevel{
      *this, "light-level",
      llvm::cl::desc("The optimization level (0-3) of the kernels outside hot-share"),
      llvm::cl::init(1)};
  Option<bool> summary{
      *this, "summary",
      llvm::cl::desc("Remark the L0 plan's kernel, slot and pool counts after "
                     "L1 -> L0 emission (the emission pass's own summary option)"),
      llvm::cl::init(false)};
};

/// `synpl-l1-to-l0-pipeline`, the pinned pipeline of the L1 -> L0
/// boundary: a verified L1 program to one verified l0uop.plan.
void buildL1ToL0Pipeline(mlir::OpPassManager &pm);

/// `synpl-host-pipeline`: a verified L1 program down to the LLVM dialect for
/// the host CPU — L1 -> L0 emission (fusion, memory plan, streams),
/// memory packing, l0ctl -> LLVM, l0uop -> LLVM.
void buildHostPipeline(mlir::OpPassManager &pm, const HostPipelineOptions &options);

/// The first half of the host pipeline: L1 -> L0 emission and memory
/// packing (what `synplc --emit=l0` prints).
void buildHostEmissionPipeline(mlir::OpPassManager &pm,
                               const HostPipelineOptions &options);

/// The host kernels' optimization levels (--synpl-l0-kernel-effort with
/// `hotShare` and `lightLevel`); nothing when `hotShare` is 1. The first
/// pass of the second half, run alone by a driver that needs the levels
/// before the kernels are lowered.
void buildKernelEffortPipeline(mlir::OpPassManager &pm, double hotShare, unsigned lightLevel);

/// The second half: the L0 plan's control programs, kernels and (with
/// `executable`) tables to LLVM dialect.
void buildHostCodegenPipeline(mlir::OpPassManager &pm,
                              const HostPipelineOptions &options);

struct CudaKernelPipelineOptions
    : public mlir::PassPipelineOptions<CudaKernelPipelineOptions> {
  Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("GPU architecture (sm_80, sm_86, sm_89, sm_90, sm_90a)"),
      llvm::cl::init("sm_80")};
  Option<bool> blockReduce{
      *this, "block-reduce",
      llvm::cl::desc("Spread each reduction row over a block of threads first "
                     "(--synpl-l0-block-reduce)"),
      llvm::cl::init(true)};
  Option<bool> tuneLaunch{
      *this, "tune-launch",
      llvm::cl::desc("Search each remappable device kernel's launch first "
                     "(--synpl-l0-tune-launch)"),
      llvm::cl::init(true)};
  Option<unsigned> smCount{
      *this, "sm-count",
      llvm::cl::desc("SMs of the device for the launch search (0: the "
                     "chip's reference part)"),
      llvm::cl::init(0)};
  Option<bool> fastMath{*this, "fast-math",
                        llvm::cl::desc("Approximate PTX math forms"),
                        llvm::cl::init(true)};
  Option<bool> tensorCores{*this, "tensor-cores",
                           llvm::cl::desc("WMMA / tiled matmuls on the "
                                          "tensor cores"),
                           llvm::cl::init(true)};
  Option<bool> tf32{*this, "tf32",
                    llvm::cl::desc("f32 matmuls on the tf32 tensor cores"),
                    llvm::cl::init(false)};
  Option<bool> keepUops{
      *this, "keep-uops",
      llvm::cl::desc("Keep the device kernels' UOps for a host fallback"),
      llvm::cl::init(false)};
  Option<bool> binary{
      *this, "binary",
      llvm::cl::desc("Finish with gpu-module-to-binary{format=isa}: each "
                     "gpu.module becomes a gpu.binary holding its PTX"),
      llvm::cl::init(true)};
};

/// `synpl-cuda-kernel-pipeline`: an L0 plan's device kernels to PTX --
/// (block-reduce) + (tune-launch) + --synpl-convert-l0uop-to-nvvm + upstream
/// gpu-module-to-binary{format=isa} + --synpl-cuda-link-user-kernels (the
/// PTX of #[l0::kernel] kernels). Host kernels and the rest of the plan are
/// left for the host codegen.
void buildCudaKernelPipeline(mlir::OpPassManager &pm,
                             const CudaKernelPipelineOptions &options);

/// Registers the named pipelines with the global registry.
void registerPipelines();

} // namespace synpl

#endif // SYNPL_PIPELINES_PIPELINES_H
