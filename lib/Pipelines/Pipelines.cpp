//===- Pipelines.cpp - The pinned pass pipelines ---------------------------===//
#include "synpl/Pipelines/Pipelines.h"

#include "synpl/Conversion/Passes.h"
#include "synpl/Target/Passes.h"
#include "synpl/Transforms/Passes.h"

#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

void synpl::buildL1ToL0Pipeline(OpPassManager &pm) { pm.addPass(createL1ToL0()); }

void synpl::buildHostEmissionPipeline(OpPassManager &pm,
                                      const HostPipelineOptions &options) {
  // Data parallelism: the gradients' all-reduces in buckets (no-op
  // otherwise); elementwise ops moved into their producers' shapes and
  // long reductions with small results split so that every core takes a
  // share (host nodes); then emission.
  pm.addPass(createL1BucketAllReduce());
  pm.addPass(createL1FuseAcrossReshapes());
  pm.addPass(createL1SplitReductions());
  L1ToL0Options emission;
  emission.summary = options.summary;
  pm.addPass(createL1ToL0(emission));
  pm.addPass(createL0PackMemory());
}

void synpl::buildKernelEffortPipeline(OpPassManager &pm, double hotShare,
                                      unsigned lightLevel) {
  if (hotShare == 1.0)
    return;
  L0KernelEffortOptions effort;
  effort.hotShare = hotShare;
  effort.lightLevel = lightLevel;
  pm.addPass(createL0KernelEffort(effort));
}

void synpl::buildHostCodegenPipeline(OpPassManager &pm,
                                     const HostPipelineOptions &options) {
  buildKernelEffortPipeline(pm, options.hotShare, options.lightLevel);
  // The control programs first: the plan can only be erased once no
  // l0ctl.program is left inside it.
  ConvertL0CtlToLLVMOptions ctl;
  ctl.keepRegions = !options.llvmOnly;
  pm.addPass(createConvertL0CtlToLLVM(ctl));
  ConvertL0UOpToLLVMOptions uop;
  uop.keepPlan = !options.llvmOnly;
  pm.addPass(createConvertL0UOpToLLVM(uop));
  if (options.executable && !options.llvmOnly) {
    if (!options.ptxas.empty()) {
      AssembleCudaBinariesOptions assemble;
      assemble.ptxas = options.ptxas;
      pm.addPass(createAssembleCudaBinaries(assemble));
    }
    pm.addPass(createConvertL0PlanToLLVM());
  }
}

void synpl::buildHostPipeline(OpPassManager &pm,
                              const HostPipelineOptions &options) {
  buildHostEmissionPipeline(pm, options);
  buildHostCodegenPipeline(pm, options);
}

void synpl::buildCudaKernelPipeline(OpPassManager &pm,
                                    const CudaKernelPipelineOptions &options) {
  if (options.blockReduce)
    pm.addPass(createL0BlockReduce());
  if (options.tuneLaunch) {
    L0TuneLaunchOptions tune;
    tune.chip = options.chip;
    tune.smCount = options.smCount;
    pm.addPass(createL0TuneLaunch(tune));
  }
  ConvertL0UOpToNVVMOptions nvvm;
  nvvm.chip = options.chip;
  nvvm.fastMath = options.fastMath;
  nvvm.tensorCores = options.tensorCores;
  nvvm.keepUops = options.keepUops;
  nvvm.tf32 = options.tf32;
  pm.addPass(createConvertL0UOpToNVVM(nvvm));
  if (options.binary) {
    GpuModuleToBinaryPassOptions binary;
    binary.compilationTarget = "isa";
    pm.addPass(createGpuModuleToBinaryPass(binary));
    LinkCudaUserKernelsOptions user;
    user.chip = options.chip;
    pm.addPass(createLinkCudaUserKernels(user));
  }
}

void synpl::registerPipelines() {
  PassPipelineRegistration<>("synpl-l1-to-l0-pipeline",
                             "Lower a verified L1 program to one verified l0uop.plan",
                             buildL1ToL0Pipeline);
  PassPipelineRegistration<CudaKernelPipelineOptions>(
      "synpl-cuda-kernel-pipeline",
      "Lower an L0 plan's device kernels to PTX (launch search, l0uop -> "
      "NVVM, gpu-module-to-binary{format=isa})",
      buildCudaKernelPipeline);
  PassPipelineRegistration<HostPipelineOptions>(
      "synpl-host-pipeline",
      "Lower a verified L1 program to LLVM dialect functions for the host CPU "
      "(L1 -> L0, memory packing, l0ctl and l0uop -> LLVM)",
      buildHostPipeline);
}
