//===- L0CtlOps.cpp - The l0ctl dialect's operations and verifiers -----------===//
#include "synpl/Dialect/L0Ctl/L0CtlOps.h"
#include "synpl/Support/Property.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l0ctl;

#include "synpl/Dialect/L0Ctl/L0CtlEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "synpl/Dialect/L0Ctl/L0CtlAttrs.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "synpl/Dialect/L0Ctl/L0CtlTypes.cpp.inc"
#define GET_OP_CLASSES
#include "synpl/Dialect/L0Ctl/L0CtlOps.cpp.inc"
