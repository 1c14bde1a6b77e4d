//===- ToPtx.cpp - The --synpl-to-ptx translation ---------------------------===//
//
// Prints the PTX of a module's CUDA kernels. Input: an L0 module (a plan with
// device kernels; synpl-cuda-kernel-pipeline runs on it first), a module
// already lowered to gpu.module ops (gpu-module-to-binary runs), or one with
// gpu.binary ops. Output: each binary's PTX, in module order, each preceded
// by a `// gpu.binary @<name>` line.
//
//===----------------------------------------------------------------------===//
#include "synpl/InitAll.h"

#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Pipelines/Pipelines.h"
#include "synpl/Target/CudaTarget.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir;

void synpl::registerToPtxTranslation() {
  static llvm::cl::opt<std::string> chip(
      "synpl-ptx-chip",
      llvm::cl::desc("GPU architecture for --synpl-to-ptx (sm_80, sm_86, "
                     "sm_89, sm_90, sm_90a; default sm_80)"),
      llvm::cl::init("sm_80"));
  static llvm::cl::opt<bool> tune(
      "synpl-ptx-tune-launch",
      llvm::cl::desc("--synpl-to-ptx: search the launch of remappable "
                     "kernels first (default true)"),
      llvm::cl::init(true));
  TranslateFromMLIRRegistration reg(
      "synpl-to-ptx",
      "Print the PTX of the CUDA kernels of an L0 plan (runs "
      "synpl-cuda-kernel-pipeline) or of a module of gpu.module / gpu.binary "
      "ops",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        if (!cuda::lookupArch(chip))
          return module.emitError()
                 << "unknown CUDA chip '" << chip
                 << "'; known: " << cuda::knownArchList();
        PassManager pm(module.getContext(), ModuleOp::getOperationName());
        bool hasPlan = !module.getOps<l0uop::PlanOp>().empty();
        if (hasPlan) {
          CudaKernelPipelineOptions options;
          options.chip = chip.getValue();
          options.tuneLaunch = tune.getValue();
          buildCudaKernelPipeline(pm, options);
        } else if (!module.getOps<gpu::GPUModuleOp>().empty()) {
          GpuModuleToBinaryPassOptions binary;
          binary.compilationTarget = "isa";
          pm.addPass(createGpuModuleToBinaryPass(binary));
        }
        if (failed(pm.run(module)))
          return failure();
        unsigned count = 0;
        for (auto binary : module.getOps<gpu::BinaryOp>()) {
          for (Attribute a : binary.getObjects()) {
            auto object = dyn_cast<gpu::ObjectAttr>(a);
            if (!object || object.getFormat() != gpu::CompilationTarget::Assembly)
              continue;
            os << "// gpu.binary @" << binary.getSymName() << "\n"
               << object.getObject().getValue();
            ++count;
          }
        }
        if (count == 0)
          return module.emitError()
                 << "no CUDA kernel to print: the module has no device kernel "
                    "(a plan's kernel whose slots all live in pools `on "
                    "device`), gpu.module or PTX gpu.binary";
        return success();
      },
      [](DialectRegistry &registry) {
        registerAllDialects(registry);
        registerUpstreamDialects(registry);
        registerCudaCodegen(registry);
      });
}
