//===- L1Dialect.h - The l1 dialect -------------------------*- C++ -*-===//
#ifndef SYNPL_DIALECT_L1_DIALECT_H
#define SYNPL_DIALECT_L1_DIALECT_H

#include "mlir/IR/Dialect.h"

#include "synpl/Dialect/L1/L1Dialect.h.inc"

#endif // SYNPL_DIALECT_L1_DIALECT_H
