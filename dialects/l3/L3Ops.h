//===- L3Ops.h - The l3 dialect's operations ----------------*- C++ -*-===//
#ifndef SYNPL_DIALECT_L3_OPS_H
#define SYNPL_DIALECT_L3_OPS_H

#include "synpl/Dialect/L3/L3Dialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"

#include "synpl/Dialect/L3/L3Enums.h.inc"
#define GET_ATTRDEF_CLASSES
#include "synpl/Dialect/L3/L3Attrs.h.inc"
#define GET_TYPEDEF_CLASSES
#include "synpl/Dialect/L3/L3Types.h.inc"
#define GET_OP_CLASSES
#include "synpl/Dialect/L3/L3Ops.h.inc"

#endif // SYNPL_DIALECT_L3_OPS_H
