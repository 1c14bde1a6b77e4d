//===- L3Dialect.h - The l3 dialect -------------------------*- C++ -*-===//
#ifndef SYNPL_DIALECT_L3_DIALECT_H
#define SYNPL_DIALECT_L3_DIALECT_H

#include "mlir/IR/Dialect.h"

#include "synpl/Dialect/L3/L3Dialect.h.inc"

#endif // SYNPL_DIALECT_L3_DIALECT_H
