//===- L3Dialect.cpp - The l3 dialect ----------------------------------===//
#include "synpl/Dialect/L3/L3Ops.h"

using namespace mlir;
using namespace synpl::l3;

#include "synpl/Dialect/L3/L3Dialect.cpp.inc"

void L3Dialect::initialize() {
  registerTypesAndAttributes();
  addOperations<
#define GET_OP_LIST
#include "synpl/Dialect/L3/L3Ops.cpp.inc"
      >();
}
