//===- L0UOpOps.cpp - The l0uop dialect's operations and verifiers -----------===//
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Support/Property.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l0uop;

#include "synpl/Dialect/L0UOp/L0UOpEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "synpl/Dialect/L0UOp/L0UOpAttrs.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "synpl/Dialect/L0UOp/L0UOpTypes.cpp.inc"
#define GET_OP_CLASSES
#include "synpl/Dialect/L0UOp/L0UOpOps.cpp.inc"
