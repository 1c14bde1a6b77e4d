//===- L1TensorVerify.h - Shared verifiers of L1 tensor ops -----*- C++ -*-===//
//
// Internal to dialects/l1: the shape checks (row L1.5) that TableGen's
// op classes (L1_BinaryOp, L1_UnaryOp, L1_ReduceOp) call from their
// generated verify(); defined in L1TensorOps.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_DIALECT_L1_L1TENSORVERIFY_H
#define SYNPL_DIALECT_L1_L1TENSORVERIFY_H

#include "mlir/IR/Operation.h"

#include <optional>

namespace synpl::l1::detail {

/// Two operands of equal shape (or one of one element) and element type.
llvm::LogicalResult verifyBinary(mlir::Operation *op);
/// One operand whose type the result keeps (floats only when `floatOnly`).
llvm::LogicalResult verifyUnary(mlir::Operation *op, bool floatOnly);
/// One operand reduced over `axis`, or over every axis.
llvm::LogicalResult verifyReduce(mlir::Operation *op, std::optional<uint64_t> axis);

} // namespace synpl::l1::detail

#endif // SYNPL_DIALECT_L1_L1TENSORVERIFY_H
