//===- L0UOpDialect.h - The l0uop dialect -------------------------*- C++ -*-===//
#ifndef SYNPL_DIALECT_L0UOP_DIALECT_H
#define SYNPL_DIALECT_L0UOP_DIALECT_H

#include "mlir/IR/Dialect.h"

#include "synpl/Dialect/L0UOp/L0UOpDialect.h.inc"

#endif // SYNPL_DIALECT_L0UOP_DIALECT_H
