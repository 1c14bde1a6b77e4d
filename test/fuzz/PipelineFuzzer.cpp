//===- PipelineFuzzer.cpp - The lowerings on odd but valid programs -------===//
//
// Each input that parses and verifies is taken from the layer it holds as
// far down as it can go on the host: an L3 spec through the L3 -> L2
// search, an L2 program (with a system) through placement, an L1 or L0
// program to the LLVM dialect. The passes may refuse it, with a located
// error; they must not crash, trip a sanitizer or hang.
//
//===----------------------------------------------------------------------===//
#include "CustomMutator.h"
#include "FuzzContext.h"
#include "MlirMutator.h"

#include <string>

#include "synpl/Pipelines/Phases.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "mlir/Pass/PassManager.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text = synpl::fuzz::textOf(data, size);
  if (text.empty())
    return 0;
  mlir::MLIRContext &ctx = synpl::fuzz::context();
  mlir::ParserConfig config(&ctx, /*verifyAfterParse=*/true);
  // A NUL-terminated copy, as the tools read files: MLIR's lexer stops at
  // the terminator, and libFuzzer's data has none.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "input.mlir"),
                               llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, config);
  if (!module)
    return 0;
  synpl::Phase from = synpl::detectPhase(*module);
  synpl::Phase to = from == synpl::Phase::L3 ? synpl::Phase::L2
                    : from == synpl::Phase::L2 ? synpl::Phase::L1
                                               : synpl::Phase::LLVM;
  if (from >= synpl::Phase::Device || from == to)
    return 0;
  mlir::PassManager pm(&ctx);
  synpl::PhaseOptions options;
  std::string error;
  if (mlir::failed(synpl::buildPhasePipeline(pm, from, to, synpl::KernelTarget::Host, options,
                                             error)))
    return 0;
  (void)pm.run(*module);
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t maxSize,
                                          unsigned int seed) {
  return synpl::fuzz::customMutate(data, size, maxSize, seed,
                                   [](const std::string &in, unsigned seed) {
                                     return synpl::fuzz::mutateMlir(synpl::fuzz::context(), in, seed);
                                   });
}
