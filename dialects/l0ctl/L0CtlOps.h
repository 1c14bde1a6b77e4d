//===- L0CtlOps.h - The l0ctl dialect's operations ----------------*- C++ -*-===//
#ifndef SYNPL_DIALECT_L0CTL_OPS_H
#define SYNPL_DIALECT_L0CTL_OPS_H

#include "synpl/Dialect/L0Ctl/L0CtlDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "synpl/Dialect/L0Ctl/L0CtlEnums.h.inc"
#define GET_ATTRDEF_CLASSES
#include "synpl/Dialect/L0Ctl/L0CtlAttrs.h.inc"
#define GET_TYPEDEF_CLASSES
#include "synpl/Dialect/L0Ctl/L0CtlTypes.h.inc"
#define GET_OP_CLASSES
#include "synpl/Dialect/L0Ctl/L0CtlOps.h.inc"

#endif // SYNPL_DIALECT_L0CTL_OPS_H
