//===- L2Ops.h - The l2 dialect's operations ----------------*- C++ -*-===//
#ifndef SYNPL_DIALECT_L2_OPS_H
#define SYNPL_DIALECT_L2_OPS_H

#include "synpl/Dialect/L2/L2Dialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"

#include "synpl/Dialect/L2/L2Enums.h.inc"
#define GET_ATTRDEF_CLASSES
#include "synpl/Dialect/L2/L2Attrs.h.inc"
#define GET_TYPEDEF_CLASSES
#include "synpl/Dialect/L2/L2Types.h.inc"
#define GET_OP_CLASSES
#include "synpl/Dialect/L2/L2Ops.h.inc"

#endif // SYNPL_DIALECT_L2_OPS_H
