//===- L2Spec.cpp - The rows that check an l2.methods against its l3.model ===//
#include "synpl/Dialect/L2/L2Model.h"
#include "synpl/Dialect/L2/L2Ops.h"
#include "synpl/Support/Property.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l2;

LogicalResult MethodsOp::verifySymbolUses(SymbolTableCollection &) {
  return success();
}
