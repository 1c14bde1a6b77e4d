//===- L1Ops.h - The l1 dialect's operations ----------------*- C++ -*-===//
#ifndef SYNPL_DIALECT_L1_OPS_H
#define SYNPL_DIALECT_L1_OPS_H

#include "synpl/Dialect/L1/L1Dialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "synpl/Dialect/L1/L1Enums.h.inc"
#define GET_ATTRDEF_CLASSES
#include "synpl/Dialect/L1/L1Attrs.h.inc"
#define GET_TYPEDEF_CLASSES
#include "synpl/Dialect/L1/L1Types.h.inc"
namespace synpl::l1 {
class NodeOp;

/// Marks the tensor ops: the pure computations a tensor graph or a handler
/// body is made of (every op of the L1_TensorOp class).
template <typename ConcreteType>
class TensorOpTrait : public mlir::OpTrait::TraitBase<ConcreteType, TensorOpTrait> {};
} // namespace synpl::l1

#define GET_OP_CLASSES
#include "synpl/Dialect/L1/L1Ops.h.inc"

#endif // SYNPL_DIALECT_L1_OPS_H
