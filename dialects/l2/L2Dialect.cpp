//===- L2Dialect.cpp - The l2 dialect ----------------------------------===//
#include "synpl/Dialect/L2/L2Ops.h"

using namespace mlir;
using namespace synpl::l2;

#include "synpl/Dialect/L2/L2Dialect.cpp.inc"

void L2Dialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "synpl/Dialect/L2/L2Ops.cpp.inc"
      >();
}
