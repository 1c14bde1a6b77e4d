//===- SearchCache.cpp - Method searches kept between compiles ------------===//
//
// A kept search is the L2 program it chose, printed in generic form with
// its locations, as <key>.l2.mlir in the object cache's folder; the folder's
// size limit covers these files as it covers the objects. A search that
// emitted any diagnostic is not kept: a cached choice would not repeat it.
//
//===----------------------------------------------------------------------===//
#include "SearchCache.h"
#include "BuildIdentity.h"

#include "synpl/Conversion/Passes.h"
#include "synpl/Search/Search.h"
#include "synpl/Target/HostObject.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kSalt = "synpl-method-search v1";

std::string pathOf(llvm::StringRef dir, llvm::StringRef key) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, key + synpl::driver::kMethodSearchSuffix);
  return path.str().str();
}

std::string printed(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, OpPrintingFlags().enableDebugInfo().printGenericOpForm());
  return text;
}

} // namespace

std::string synpl::driver::methodSearchKey(ModuleOp module, PassManager &pm) {
  std::unique_ptr<Pass> (*search)() = &synpl::createL3ToL2;
  auto driver = &synpl::search::recordSearchReport;
  std::string identity = buildIdentity(
      {reinterpret_cast<const void *>(search), reinterpret_cast<const void *>(driver)});
  if (identity.empty())
    return "";
  std::string pipeline;
  llvm::raw_string_ostream os(pipeline);
  pm.printAsTextualPipeline(os);
  llvm::SHA256 hash;
  hash.update(kSalt);
  hash.update("|" + identity + "|" + pipeline + "|");
  hash.update(printed(module));
  return "m" + llvm::toHex(hash.final(), /*LowerCase=*/true);
}

OwningOpRef<ModuleOp> synpl::driver::lookupMethodSearch(llvm::StringRef dir, llvm::StringRef key,
                                                        MLIRContext *context) {
  std::string path = pathOf(dir, key);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file = llvm::MemoryBuffer::getFile(path);
  if (!file)
    return nullptr;
  // A file that does not parse is a miss, not an error: it is searched
  // again and replaced.
  ScopedDiagnosticHandler quiet(context, [](Diagnostic &) { return success(); });
  OwningOpRef<ModuleOp> chosen = parseSourceString<ModuleOp>((*file)->getBuffer(), context);
  if (chosen)
    host::ObjectCache::touch(path);
  return chosen;
}

void synpl::driver::keepMethodSearch(llvm::StringRef dir, llvm::StringRef key, ModuleOp module) {
  if (llvm::sys::fs::create_directories(dir))
    return;
  std::string text = printed(module);
  // Whole or not at all (a temporary, then rename): a concurrent compile
  // never reads half a program.
  llvm::consumeError(llvm::writeToOutput(pathOf(dir, key), [&](llvm::raw_ostream &os) {
    os << text;
    return llvm::Error::success();
  }));
}

void synpl::driver::trimObjectCache(const host::ObjectCache &cache,
                                    const std::function<void(llvm::StringRef)> &progress) {
  auto [removed, bytes] = cache.trim({kMethodSearchSuffix});
  if (removed && progress)
    progress(("cache: removed " + llvm::Twine(removed) + " least recently used files (" +
              llvm::Twine(bytes >> 10) + " KiB) to stay within " +
              llvm::Twine(cache.maxBytes >> 10) + " KiB (SYNPL_CACHE_MAX_SIZE)")
                 .str());
}

void synpl::driver::replaceModule(ModuleOp module, ModuleOp chosen) {
  Block *body = module.getBody();
  while (!body->empty())
    body->back().erase();
  body->getOperations().splice(body->end(), chosen.getBody()->getOperations());
  module->setAttrs(chosen->getAttrDictionary());
}
