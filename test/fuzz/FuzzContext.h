//===- FuzzContext.h - The MLIR context the fuzz targets share --*- C++ -*-===//
//
// One context for the whole fuzzing run (loading the dialects per input
// would dominate the time), single-threaded, every dialect of the project
// and of its pipelines loaded, and diagnostics swallowed: a rejected input
// is the expected outcome, not something to print 10 million times.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TEST_FUZZ_FUZZCONTEXT_H
#define SYNPL_TEST_FUZZ_FUZZCONTEXT_H

#include "synpl/InitAll.h"
#include "synpl/Support/DeepInput.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <cstdint>

namespace synpl::fuzz {

inline mlir::MLIRContext &context() {
  static mlir::MLIRContext *ctx = [] {
    mlir::DialectRegistry registry;
    synpl::registerAllDialects(registry);
    synpl::registerUpstreamDialects(registry);
    synpl::registerHostCodegen(registry);
    auto *c = new mlir::MLIRContext(registry, mlir::MLIRContext::Threading::DISABLED);
    c->loadAllAvailableDialects();
    c->getDiagEngine().registerHandler([](mlir::Diagnostic &) { return mlir::success(); });
    return c;
  }();
  return *ctx;
}

/// The input as text, or empty when the tools would refuse it before
/// parsing (nesting past synpl::kMaxInputNesting: the fuzz run itself has
/// libFuzzer's stack, not the tools' large one).
inline llvm::StringRef textOf(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  if (synpl::findDeepNesting(text))
    return {};
  return text;
}

} // namespace synpl::fuzz

#endif // SYNPL_TEST_FUZZ_FUZZCONTEXT_H
