//===- L1Ops.cpp - The l1 dialect's operations and verifiers -----------===//
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Support/Property.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l1;

#include "synpl/Dialect/L1/L1Enums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "synpl/Dialect/L1/L1Attrs.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "synpl/Dialect/L1/L1Types.cpp.inc"
#define GET_OP_CLASSES
#include "synpl/Dialect/L1/L1Ops.cpp.inc"
