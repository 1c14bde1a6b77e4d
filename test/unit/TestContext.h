//===- TestContext.h - An MLIRContext with every synplexum dialect -*- C++ -*-===//
//
// Unit tests that parse or build programs of several layers share this.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TEST_UNIT_TESTCONTEXT_H
#define SYNPL_TEST_UNIT_TESTCONTEXT_H

#include "synpl/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <string>

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

/// Runs a textual pass pipeline (the module pass manager's contents, as
/// synpl-opt's --pass-pipeline takes inside `builtin.module(...)`) on
/// `module`; a pipeline that does not parse is reported to Catch.
inline llvm::LogicalResult runPipeline(mlir::ModuleOp module, const std::string &pipeline) {
  mlir::PassManager pm(module.getContext());
  std::string message;
  llvm::raw_string_ostream os(message);
  if (mlir::failed(mlir::parsePassPipeline(pipeline, pm, os))) {
    UNSCOPED_INFO("pipeline '" << pipeline << "': " << message);
    return mlir::failure();
  }
  return pm.run(module);
}

} // namespace synpl::test

#endif // SYNPL_TEST_UNIT_TESTCONTEXT_H
