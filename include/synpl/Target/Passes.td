//===- Passes.td - Passes of the target layer ---------------*- tablegen -*-===//
//
// Steps that hand IR to a target's own tools. They sit below every lowering:
// a conversion never runs an external program.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TARGET_PASSES_TD
#define SYNPL_TARGET_PASSES_TD

include "mlir/Pass/PassBase.td"

def AssembleCudaBinaries : Pass<"synpl-cuda-assemble", "mlir::ModuleOp"> {
  let summary = "Assemble the PTX objects of every gpu.binary into cubins with ptxas";
  let description = [{
    For each `gpu.binary` object `#gpu.object<#nvvm.target<chip = "sm_90">,
    assembly = "...">` that has no binary object for the same chip yet, runs
    `ptxas -arch=<chip>` on its PTX and appends the cubin as
    `#gpu.object<#nvvm.target<chip = "sm_90">, bin = "...">`. The PTX stays:
    `--synpl-convert-l0-plan-to-llvm` embeds both (the runtime loads the
    cubin first and the PTX on other GPUs).

    A chip the CUDA sink does not know, a `ptxas` that is not a program
    (a bare name is looked up on PATH) or a ptxas failure fails the pass
    with a located error carrying ptxas's own message.
  }];
  let options = [
    Option<"ptxas", "ptxas", "std::string", /*default=*/"\"ptxas\"",
           "the ptxas to run (a path, or a name looked up on PATH)">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::NVVM::NVVMDialect"];
}

def LinkCudaUserKernels : Pass<"synpl-cuda-link-user-kernels", "mlir::ModuleOp"> {
  let summary = "Add the PTX of user kernels (#[l0::kernel(\"k.ptx\")]) to the plan's gpu.binary";
  let description = [{
    For each device kernel of a plan that is a user kernel
    (`custom_format = "ptx"`, `device_entry` set by
    `--synpl-convert-l0uop-to-nvvm`), reads its file, checks that it defines
    `.entry <symbol>` with one `.param` per buffer (row L0.1 at the kernel
    otherwise), and appends the file's PTX, without its `.version`,
    `.target` and `.address_size` lines, to the assembly object of the
    plan's `gpu.binary @<plan>_cuda` (made, for `chip`, when no generated
    kernel needed one). Each file is added once. Runs after
    `gpu-module-to-binary`, before `--synpl-cuda-assemble`.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_80\"",
           "the GPU architecture of a binary this pass makes">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::NVVM::NVVMDialect"];
}

#endif // SYNPL_TARGET_PASSES_TD
