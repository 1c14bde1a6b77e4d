//===- L3Ops.h - The l3 dialect's operations ----------------*- C++ -*-===//
//
// The spec layer: data, model, loss (with one op per loss kind), goal; the
// domain types (!l3.dist, !l3.scalar, !l3.sequence, !l3.table) and the model
// constraint and escape-hatch attributes.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_DIALECT_L3_OPS_H
#define SYNPL_DIALECT_L3_OPS_H

#include "synpl/Dialect/L3/L3Dialect.h"
#include "synpl/Interfaces/SpecInterfaces.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"

#include <optional>

namespace synpl::l3 {
class FieldOp;
class LossOp;
} // namespace synpl::l3

#include "synpl/Dialect/L3/L3Enums.h.inc"
#define GET_ATTRDEF_CLASSES
#include "synpl/Dialect/L3/L3Attrs.h.inc"
#define GET_TYPEDEF_CLASSES
#include "synpl/Dialect/L3/L3Types.h.inc"
#include "synpl/Dialect/L3/L3Interfaces.h.inc"
#define GET_OP_CLASSES
#include "synpl/Dialect/L3/L3Ops.h.inc"

#endif // SYNPL_DIALECT_L3_OPS_H
