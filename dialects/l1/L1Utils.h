//===- L1Utils.h - Helpers shared by the l1 verifiers (private) -*- C++ -*-===//
#ifndef SYNPL_DIALECT_L1_UTILS_H
#define SYNPL_DIALECT_L1_UTILS_H

#include "synpl/Dialect/L1/L1Ops.h"

#include <string>

namespace synpl::l1 {

/// The symbol table that holds the l1 program `op` belongs to (the module).
mlir::Operation *getProgramScope(mlir::Operation *op);

/// The program's `l1.system`, or null.
SystemOp getSystem(mlir::Operation *op);

/// The node `ref` names in the program's system, or null.
NodeOp lookupNode(mlir::Operation *from, mlir::FlatSymbolRefAttr ref);

/// Looks up `ref` from the program scope (the module), not from the nearest
/// symbol table, so that refs inside actors reach top-level symbols.
mlir::Operation *lookupInProgram(mlir::SymbolTableCollection &tables,
                                 mlir::Operation *from, mlir::SymbolRefAttr ref);

/// `%arg0` / `%3`, as synpl-opt prints the value.
std::string valueName(mlir::Value value);

/// `@a::@b`.
std::string symbolString(mlir::SymbolRefAttr ref);

/// Bytes of a tensor of static shape (elements * ceil(bits / 8)), saturating.
uint64_t tensorBytes(mlir::RankedTensorType type);

} // namespace synpl::l1

#endif // SYNPL_DIALECT_L1_UTILS_H
