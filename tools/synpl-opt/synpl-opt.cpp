//===- synpl-opt.cpp - The synplexum optimizer driver ----------------------===//
//
// Parses, verifies, transforms and prints synplexum IR at any layer. Every
// verification row of the spec runs as an op or region verifier on parse and
// after every pass (`--verify-each`, on by default); the standard MLIR
// debugging flags (--mlir-print-ir-after-all, --mlir-timing, ...) are all here.
//
//===----------------------------------------------------------------------===//
#include "synpl/InitAll.h"
#include "synpl/Support/DeepInput.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

static const char *kDescription =
    "synplexum optimizer driver\n\n"
    "  Reads synplexum IR (dialects l3, l2, l1, l0ctl, l0uop) and runs the\n"
    "  spec's verifiers on it: every diagnostic is tagged with its property\n"
    "  kind ([safety], [consistency], [liveness], [resource]) and the id of\n"
    "  its verification row (L3.1 ... L0.6; see docs/spec-map.md).\n"
    "  Exits non-zero when the input does not parse or verify.\n";

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::DialectRegistry registry;
  synpl::registerAllDialects(registry);
  synpl::registerUpstreamDialects(registry);
  synpl::registerCudaCodegen(registry);
  synpl::registerAllPasses();
  // Upstream's op census: --print-op-stats (the main job's layer summaries).
  mlir::registerPrintOpStatsPass();
  // Named values, not structured bindings: the lambda below captures them
  // (capturing a binding is C++20).
  std::pair<std::string, std::string> files =
      mlir::registerAndParseCLIOptions(argc, argv, kDescription, registry);
  const std::string &inputFilename = files.first, &outputFilename = files.second;
  // The parser, printer and verifiers recurse per nesting level: they run on
  // a large stack, and input nesting deeper than synpl::kMaxInputNesting is
  // refused, located, before it is parsed.
  return synpl::runWithLargeStack([&]() -> int {
    mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
    if (config.shouldShowDialects() || config.shouldListPasses())
      return mlir::asMainReturnCode(
          mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));
    std::string error;
    std::unique_ptr<llvm::MemoryBuffer> input = mlir::openInputFile(inputFilename, &error);
    if (!input) {
      llvm::errs() << error << "\n";
      return 1;
    }
    if (!synpl::checkNesting(input->getBuffer(), input->getBufferIdentifier()))
      return 1;
    std::unique_ptr<llvm::ToolOutputFile> output = mlir::openOutputFile(outputFilename, &error);
    if (!output) {
      llvm::errs() << error << "\n";
      return 1;
    }
    if (mlir::failed(mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
      return 1;
    output->keep();
    return 0;
  });
}
