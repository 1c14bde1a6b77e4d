//===- TestContext.h - An MLIRContext with every synplexum dialect -*- C++ -*-===//
//
// Unit tests that parse or build programs of several layers share this.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TEST_UNIT_TESTCONTEXT_H
#define SYNPL_TEST_UNIT_TESTCONTEXT_H

#include "synpl/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <memory>

namespace synpl::test {

/// A context with the synplexum and upstream dialects loaded.
inline std::unique_ptr<mlir::MLIRContext> makeContext() {
  mlir::DialectRegistry registry;
  synpl::registerAllDialects(registry);
  synpl::registerUpstreamDialects(registry);
  auto ctx = std::make_unique<mlir::MLIRContext>(registry);
  ctx->loadAllAvailableDialects();
  return ctx;
}

} // namespace synpl::test

#endif // SYNPL_TEST_UNIT_TESTCONTEXT_H
