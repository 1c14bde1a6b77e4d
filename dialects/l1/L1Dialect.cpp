//===- L1Dialect.cpp - The l1 dialect ----------------------------------===//
#include "synpl/Dialect/L1/L1Ops.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace synpl::l1;

#include "synpl/Dialect/L1/L1Dialect.cpp.inc"

void L1Dialect::initialize() {
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "synpl/Dialect/L1/L1Ops.cpp.inc"
      >();
}
