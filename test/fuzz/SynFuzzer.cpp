//===- SynFuzzer.cpp - The .syn front end: lexer, parser, import ----------===//
//
// Each input is a .syn file: lexed, parsed and imported to MLIR (L3 and the
// lower layers it declares), then verified. Any outcome but a crash, a
// sanitizer report or a hang is fine: bad input is meant to be refused.
// Mutation is structure-aware (CustomMutator.h).
//
//===----------------------------------------------------------------------===//
#include "CustomMutator.h"
#include "FuzzContext.h"
#include "SynMutator.h"

#include <string>

#include "synpl/Frontend/Syn.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text = synpl::fuzz::textOf(data, size);
  if (text.empty())
    return 0;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "input.syn"),
                               llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module = synpl::parseSyn(sourceMgr, &synpl::fuzz::context());
  if (module)
    (void)mlir::verify(*module);
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t maxSize,
                                          unsigned int seed) {
  return synpl::fuzz::customMutate(data, size, maxSize, seed,
                                   [](const std::string &in, unsigned seed) {
                                     return synpl::fuzz::mutateSyn(in, seed);
                                   });
}
