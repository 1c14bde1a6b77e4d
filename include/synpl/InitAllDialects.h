//===- InitAllDialects.h - Register the synplexum dialects -------*- C++ -*-===//
//
// Header-only, like MLIR's own InitAllDialects.h: an embedder that calls
// these links only the dialect libraries they name (synpl::SynplL3,
// SynplL2, SynplL1, SynplL0Ctl, SynplL0UOp, and the upstream dialects for
// registerUpstreamDialects), not the passes. Any subset can be inserted
// directly instead: `registry.insert<synpl::l1::L1Dialect>()`.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_INITALLDIALECTS_H
#define SYNPL_INITALLDIALECTS_H

#include "synpl/Dialect/L0Ctl/L0CtlDialect.h"
#include "synpl/Dialect/L0UOp/L0UOpDialect.h"
#include "synpl/Dialect/L1/L1Dialect.h"
#include "synpl/Dialect/L2/L2Dialect.h"
#include "synpl/Dialect/L3/L3Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/DialectRegistry.h"

namespace synpl {

/// Inserts the l3, l2, l1, l0ctl and l0uop dialects into `registry`.
inline void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<l3::L3Dialect, l2::L2Dialect, l1::L1Dialect,
                  l0ctl::L0CtlDialect, l0uop::L0UOpDialect>();
}

/// Inserts the upstream dialects synplexum programs use alongside its own:
/// func, arith and cf for stage bodies; llvm for codegen; gpu and nvvm for
/// the CUDA sink's kernels (gpu.binary, #nvvm.target).
inline void registerUpstreamDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::func::FuncDialect, mlir::arith::ArithDialect,
                  mlir::cf::ControlFlowDialect, mlir::LLVM::LLVMDialect,
                  mlir::gpu::GPUDialect, mlir::NVVM::NVVMDialect>();
}

} // namespace synpl

#endif // SYNPL_INITALLDIALECTS_H
