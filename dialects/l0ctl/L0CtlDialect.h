//===- L0CtlDialect.h - The l0ctl dialect -------------------------*- C++ -*-===//
#ifndef SYNPL_DIALECT_L0CTL_DIALECT_H
#define SYNPL_DIALECT_L0CTL_DIALECT_H

#include "mlir/IR/Dialect.h"

#include "synpl/Dialect/L0Ctl/L0CtlDialect.h.inc"

#endif // SYNPL_DIALECT_L0CTL_DIALECT_H
