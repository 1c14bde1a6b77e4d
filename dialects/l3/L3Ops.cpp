//===- L3Ops.cpp - The l3 dialect's operations and verifiers -----------===//
#include "synpl/Dialect/L3/L3Ops.h"
#include "synpl/Support/Property.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l3;

#include "synpl/Dialect/L3/L3Enums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "synpl/Dialect/L3/L3Attrs.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "synpl/Dialect/L3/L3Types.cpp.inc"
#define GET_OP_CLASSES
#include "synpl/Dialect/L3/L3Ops.cpp.inc"
