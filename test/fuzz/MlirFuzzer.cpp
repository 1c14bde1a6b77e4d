//===- MlirFuzzer.cpp - Parse and verify programs of every dialect --------===//
//
// Each input is MLIR text in any of the project's dialects (l3, l2, l1,
// l0ctl, l0uop) and the upstream ones its pipelines use: parsed and, when
// it parses, verified -- every verification row of the spec runs.
//
//===----------------------------------------------------------------------===//
#include "CustomMutator.h"
#include "FuzzContext.h"
#include "MlirMutator.h"

#include <string>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text = synpl::fuzz::textOf(data, size);
  if (text.empty())
    return 0;
  mlir::ParserConfig config(&synpl::fuzz::context(), /*verifyAfterParse=*/false);
  // A NUL-terminated copy, as the tools read files: MLIR's lexer stops at
  // the terminator, and libFuzzer's data has none.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "input.mlir"),
                               llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, config);
  if (module)
    (void)mlir::verify(*module);
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t maxSize,
                                          unsigned int seed) {
  return synpl::fuzz::customMutate(data, size, maxSize, seed,
                                   [](const std::string &in, unsigned seed) {
                                     return synpl::fuzz::mutateMlir(synpl::fuzz::context(), in, seed);
                                   });
}
