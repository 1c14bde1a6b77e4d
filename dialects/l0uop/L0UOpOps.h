//===- L0UOpOps.h - The l0uop dialect's operations ----------------*- C++ -*-===//
#ifndef SYNPL_DIALECT_L0UOP_OPS_H
#define SYNPL_DIALECT_L0UOP_OPS_H

#include "synpl/Dialect/L0UOp/L0UOpDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "synpl/Dialect/L0UOp/L0UOpEnums.h.inc"
#define GET_ATTRDEF_CLASSES
#include "synpl/Dialect/L0UOp/L0UOpAttrs.h.inc"
#define GET_TYPEDEF_CLASSES
#include "synpl/Dialect/L0UOp/L0UOpTypes.h.inc"
#define GET_OP_CLASSES
#include "synpl/Dialect/L0UOp/L0UOpOps.h.inc"

namespace synpl::l0uop {
/// Whether `op`, a DIV or MOD, divides by a non-zero integer constant: it
/// cannot trap, so the tiled lowerings may evaluate it on masked-off lanes
/// too (a random draw's half swap, an index split).
bool dividesByNonZeroConstant(mlir::Operation *op);
} // namespace synpl::l0uop

#endif // SYNPL_DIALECT_L0UOP_OPS_H
