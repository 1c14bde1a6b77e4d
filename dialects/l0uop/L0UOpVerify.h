//===- L0UOpVerify.h - Shared by the l0uop verifiers ---------*- C++ -*-===//
//
// Private to dialects/l0uop: the diagnostic of row L0.1 (kernel
// correctness) that the UOp (L0UOpOps.cpp) and kernel (L0UOpKernel.cpp)
// verifiers report with.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_DIALECTS_L0UOP_L0UOPVERIFY_H
#define SYNPL_DIALECTS_L0UOP_L0UOPVERIFY_H

#include "synpl/Support/Property.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"

namespace synpl::l0uop {

/// An error of row L0.1 at `op`.
inline mlir::InFlightDiagnostic uopError(mlir::Operation *op) {
  return emitCheckError(op, Property::Safety, "L0.1");
}

} // namespace synpl::l0uop

#endif // SYNPL_DIALECTS_L0UOP_L0UOPVERIFY_H
