//===- InitAll.cpp - Register synplexum with an MLIR context ---------------===//
#include "synpl/InitAll.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

#include "synpl/Dialect/L0Ctl/L0CtlDialect.h"
#include "synpl/Dialect/L0UOp/L0UOpDialect.h"
#include "synpl/Dialect/L1/L1Dialect.h"
#include "synpl/Dialect/L2/L2Dialect.h"
#include "synpl/Dialect/L3/L3Dialect.h"
#include "synpl/Conversion/Passes.h"
#include "synpl/Pipelines/Pipelines.h"
#include "synpl/Search/Search.h"
#include "synpl/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/DialectRegistry.h"

void synpl::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<l3::L3Dialect, l2::L2Dialect, l1::L1Dialect,
                  l0ctl::L0CtlDialect, l0uop::L0UOpDialect>();
}

void synpl::registerUpstreamDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::func::FuncDialect, mlir::arith::ArithDialect,
                  mlir::cf::ControlFlowDialect, mlir::LLVM::LLVMDialect,
                  // The CUDA sink's kernels (gpu.binary, #nvvm.target).
                  mlir::gpu::GPUDialect, mlir::NVVM::NVVMDialect>();
}

void synpl::registerAllPasses() {
  // Verification needs no pass: every check of the spec is an op or region
  // verifier that runs on every parse and after every pass.
  registerSynplPasses();
  registerSynplConversionPasses();
  registerPipelines();
  search::registerSearchOptions(); // --synpl-search-report
  // The upstream step of the CUDA sink, for step-by-step use in synpl-opt.
  mlir::registerGpuModuleToBinaryPass();
}

void synpl::registerHostCodegen(mlir::DialectRegistry &registry) {
  registerAllDialects(registry);
  registerUpstreamDialects(registry);
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
}

void synpl::registerCudaCodegen(mlir::DialectRegistry &registry) {
  registry.insert<mlir::gpu::GPUDialect, mlir::NVVM::NVVMDialect,
                  mlir::scf::SCFDialect, mlir::math::MathDialect,
                  mlir::vector::VectorDialect>();
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  mlir::registerGPUDialectTranslation(registry);
  mlir::registerNVVMDialectTranslation(registry);
}
