//===- IPU21Dialect.h - The ipu21 dialect ---------------------------*- C++ -*-===//
#ifndef SYNPL_DIALECT_IPU21_DIALECT_H
#define SYNPL_DIALECT_IPU21_DIALECT_H

#include "mlir/IR/Dialect.h"

#include "synpl/Dialect/IPU21/IPU21Dialect.h.inc"

#endif // SYNPL_DIALECT_IPU21_DIALECT_H
