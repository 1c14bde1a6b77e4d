//===- L2Dialect.h - The l2 dialect -------------------------*- C++ -*-===//
#ifndef SYNPL_DIALECT_L2_DIALECT_H
#define SYNPL_DIALECT_L2_DIALECT_H

#include "mlir/IR/Dialect.h"

#include "synpl/Dialect/L2/L2Dialect.h.inc"

#endif // SYNPL_DIALECT_L2_DIALECT_H
