//===- L0CtlDialect.cpp - The l0ctl dialect ----------------------------------===//
#include "synpl/Dialect/L0Ctl/L0CtlOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace synpl::l0ctl;

#include "synpl/Dialect/L0Ctl/L0CtlDialect.cpp.inc"

void L0CtlDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "synpl/Dialect/L0Ctl/L0CtlOps.cpp.inc"
      >();
}
