//===- L2Ops.cpp - The l2 dialect's operations and verifiers -----------===//
#include "synpl/Dialect/L2/L2Ops.h"
#include "synpl/Support/Property.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l2;

#include "synpl/Dialect/L2/L2Enums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "synpl/Dialect/L2/L2Attrs.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "synpl/Dialect/L2/L2Types.cpp.inc"
#define GET_OP_CLASSES
#include "synpl/Dialect/L2/L2Ops.cpp.inc"
