//===- Dialects.cpp - C API of the synplexum dialects ---------------------===//
#include "synpl-c/Dialects.h"

#include "synpl/Driver/Driver.h"
#include "synpl/InitAll.h"
#include "synpl/Dialect/L0Ctl/L0CtlDialect.h"
#include "synpl/Dialect/L0UOp/L0UOpDialect.h"
#include "synpl/Dialect/L1/L1Dialect.h"
#include "synpl/Dialect/L2/L2Dialect.h"
#include "synpl/Dialect/L3/L3Dialect.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(L3, l3, synpl::l3::L3Dialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(L2, l2, synpl::l2::L2Dialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(L1, l1, synpl::l1::L1Dialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(L0Ctl, l0ctl, synpl::l0ctl::L0CtlDialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(L0UOp, l0uop, synpl::l0uop::L0UOpDialect)

void synplRegisterAllDialects(MlirDialectRegistry registry) {
  synpl::driver::registerDialects(*unwrap(registry));
}

void synplRegisterAllPasses(void) {
  // Once per process: the pass registry rejects a second registration.
  static bool registered = [] {
    synpl::registerAllPasses();
    return true;
  }();
  (void)registered;
}
