//===- IPU21Ops.h - The ipu21 dialect's operations -------------------*- C++ -*-===//
#ifndef SYNPL_DIALECT_IPU21_OPS_H
#define SYNPL_DIALECT_IPU21_OPS_H

#include "synpl/Dialect/IPU21/IPU21Dialect.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"

#include <cstdint>

namespace synpl::ipu21 {
/// Elements [begin, end) of a tensor (row-major flat index) on `tile`.
struct MappedInterval {
  int64_t tile = 0, begin = 0, end = 0;
};
} // namespace synpl::ipu21

#include "synpl/Dialect/IPU21/IPU21Enums.h.inc"
#define GET_ATTRDEF_CLASSES
#include "synpl/Dialect/IPU21/IPU21Attrs.h.inc"
#define GET_OP_CLASSES
#include "synpl/Dialect/IPU21/IPU21Ops.h.inc"

#endif // SYNPL_DIALECT_IPU21_OPS_H
