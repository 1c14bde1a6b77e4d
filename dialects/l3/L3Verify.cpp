//===- L3Verify.cpp - Reference-resolving checks of the l3 dialect ------===//
#include "L3VerifyUtils.h"
#include "synpl/Dialect/L3/L3Ops.h"
#include "synpl/Support/Property.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l3;

LogicalResult ModelOp::verifySymbolUses(SymbolTableCollection &) { return success(); }
LogicalResult LossOp::verifySymbolUses(SymbolTableCollection &) { return success(); }
LogicalResult GoalOp::verifySymbolUses(SymbolTableCollection &) { return success(); }
LogicalResult DivergenceOp::verifySymbolUses(SymbolTableCollection &) { return success(); }
LogicalResult NormOp::verifySymbolUses(SymbolTableCollection &) { return success(); }
LogicalResult ConstraintOp::verifySymbolUses(SymbolTableCollection &) { return success(); }
LogicalResult ReconstructionOp::verifySymbolUses(SymbolTableCollection &) { return success(); }
LogicalResult ContrastiveOp::verifySymbolUses(SymbolTableCollection &) { return success(); }
LogicalResult CustomOp::verifySymbolUses(SymbolTableCollection &) { return success(); }
