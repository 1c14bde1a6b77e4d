//===- synpl-lsp-server.cpp - Language server for synplexum IR -------------===//
//
// Editors get parse errors and the spec's property-tagged verifier diagnostics
// as they type, plus go-to-definition and hover, on .mlir files holding
// synplexum dialects.
//
//===----------------------------------------------------------------------===//
#include "synpl/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/LogicalResult.h"
#include "mlir/Tools/mlir-lsp-server/MlirLspServerMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  synpl::registerAllDialects(registry);
  synpl::registerUpstreamDialects(registry);
  return mlir::failed(mlir::MlirLspServerMain(argc, argv, registry));
}
