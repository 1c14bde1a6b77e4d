//===- SynFuzzer.cpp - The .syn front end: lexer, parser, import ----------===//
//
// Each input is a .syn file: lexed, parsed and imported to MLIR (L3 and the
// lower layers it declares), then verified. Any outcome but a crash, a
// sanitizer report or a hang is fine: bad input is meant to be refused.
//
//===----------------------------------------------------------------------===//
#include "FuzzContext.h"
#include "SynMutator.h"

#include <cstring>
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

// Structure-aware mutation (three inputs in four); libFuzzer's byte
// mutations for the rest and for inputs the mutator cannot read.
extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t maxSize,
                                          unsigned int seed) {
  if (seed % 4 != 0) {
    std::string in(reinterpret_cast<const char *>(data), size);
    std::string out = synpl::fuzz::mutateSyn(in, seed);
    if (!out.empty() && out.size() <= maxSize) {
      std::memcpy(data, out.data(), out.size());
      return out.size();
    }
  }
  return LLVMFuzzerMutate(data, size, maxSize);
}
