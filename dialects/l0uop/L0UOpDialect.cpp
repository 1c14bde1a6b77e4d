//===- L0UOpDialect.cpp - The l0uop dialect ----------------------------------===//
#include "synpl/Dialect/L0UOp/L0UOpOps.h"

using namespace mlir;
using namespace synpl::l0uop;

#include "synpl/Dialect/L0UOp/L0UOpDialect.cpp.inc"

void L0UOpDialect::initialize() {
  registerTypesAndAttributes();
  addOperations<
#define GET_OP_LIST
#include "synpl/Dialect/L0UOp/L0UOpOps.cpp.inc"
      >();
}
