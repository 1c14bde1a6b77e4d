//===- synpl-lsp-server.cpp - Language server for synplexum IR -------------===//
//
// Editors get parse errors and the spec's property-tagged verifier diagnostics
// as they type, plus go-to-definition and hover, on .mlir files holding
// synplexum dialects.
//
//===----------------------------------------------------------------------===//
#include "synpl/InitAll.h"
#include "synpl/Support/DeepInput.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/LogicalResult.h"
#include "mlir/Tools/mlir-lsp-server/MlirLspServerMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  synpl::registerAllDialects(registry);
  synpl::registerUpstreamDialects(registry);
  // The parser recurses once per nesting level of what an editor holds: the
  // server runs on a large stack (synpl/Support/DeepInput.h).
  return synpl::runWithLargeStack(
      [&] { return mlir::failed(mlir::MlirLspServerMain(argc, argv, registry)); });
}
