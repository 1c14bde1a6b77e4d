//===- RegisterAllDialects.cpp - synpl/InitAllDialects.h ------------------===//
#include "synpl/InitAllDialects.h"

#include "synpl/Dialect/IPU21/IPU21Dialect.h"
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

void synpl::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<l3::L3Dialect, l2::L2Dialect, l1::L1Dialect,
                  l0ctl::L0CtlDialect, l0uop::L0UOpDialect, ipu21::IPU21Dialect>();
}

void synpl::registerUpstreamDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::func::FuncDialect, mlir::arith::ArithDialect,
                  mlir::cf::ControlFlowDialect, mlir::LLVM::LLVMDialect,
                  mlir::gpu::GPUDialect, mlir::NVVM::NVVMDialect>();
}
