//===- synpl-opt.cpp - The synplexum optimizer driver ----------------------===//
//
// Parses, verifies, transforms and prints synplexum IR at any layer. Every
// verification row of the spec runs as an op or region verifier on parse and
// after every pass (`--verify-each`, on by default); the standard MLIR
// debugging flags (--mlir-print-ir-after-all, --mlir-timing, ...) are all here.
//
//===----------------------------------------------------------------------===//
#include "synpl/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  synpl::registerAllDialects(registry);
  synpl::registerUpstreamDialects(registry);
  synpl::registerCudaCodegen(registry);
  synpl::registerAllPasses();
  // Upstream's op census: --print-op-stats (the main job's layer summaries).
  mlir::registerPrintOpStatsPass();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv,
      "synplexum optimizer driver\n\n"
      "  Reads synplexum IR (dialects l3, l2, l1, l0ctl, l0uop) and runs the\n"
      "  spec's verifiers on it: every diagnostic is tagged with its property\n"
      "  kind ([safety], [consistency], [liveness], [resource]) and the id of\n"
      "  its verification row (L3.1 ... L0.6; see docs/spec-map.md).\n"
      "  Exits non-zero when the input does not parse or verify.\n",
      registry));
}
