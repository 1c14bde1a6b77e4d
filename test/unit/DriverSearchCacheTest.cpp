//===- DriverSearchCacheTest.cpp - The driver's kept method searches ------===//
//
// synpl::driver::compile with CompileOptions::searchCache: a search that
// emitted a diagnostic is not kept (a later compile reading the choice back
// would not repeat it); one that said nothing is kept, and read back as the
// same L2 program without running the search's passes; a search report
// being echoed (SearchReportSink has a format) bypasses the cache.
//
//===----------------------------------------------------------------------===//
#include "synpl/Driver/Driver.h"
#include "synpl/Search/Search.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace mlir;

namespace {

/// Remarks at each op a pass ran on: a search that speaks.
struct Remarker : PassInstrumentation {
  void runAfterPass(Pass *pass, Operation *op) override {
    op->emitRemark() << "watched " << pass->getName();
  }
};

/// Counts the passes that ran.
struct Counter : PassInstrumentation {
  explicit Counter(int &runs) : runs(runs) {}
  void runAfterPass(Pass *, Operation *) override { ++runs; }
  int &runs;
};

struct Compiled {
  bool ok = false;
  std::string l2;
  std::vector<std::string> progress;
  int passes = 0;
  int diagnostics = 0;
};

/// The Fashion-MNIST spec compiled to L2 with the search cache in `dir`;
/// `remark`: the search's passes emit a remark each.
Compiled compileToL2(llvm::StringRef dir, bool remark) {
  DialectRegistry registry;
  synpl::driver::registerDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  Compiled out;
  ScopedDiagnosticHandler count(&context, [&](Diagnostic &) {
    ++out.diagnostics;
    return success();
  });
  std::string path = std::string(SYNPL_SOURCE_DIR) + "/examples/fashion_mnist/fashion_mnist.syn";
  auto file = llvm::MemoryBuffer::getFile(path);
  REQUIRE(file);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = synpl::driver::parseInput(sourceMgr, &context, path);
  REQUIRE(module);
  synpl::driver::CompileOptions options;
  options.to = synpl::Phase::L2;
  options.searchCache.enabled = true;
  options.searchCache.dir = dir.str();
  options.progress = [&](llvm::StringRef line) { out.progress.push_back(line.str()); };
  options.configure = [&](PassManager &pm, llvm::StringRef) {
    pm.addInstrumentation(std::make_unique<Counter>(out.passes));
    if (remark)
      pm.addInstrumentation(std::make_unique<Remarker>());
    return success();
  };
  out.ok = succeeded(synpl::driver::compile(*module, options));
  llvm::raw_string_ostream os(out.l2);
  module->print(os, OpPrintingFlags().enableDebugInfo());
  return out;
}

std::vector<std::string> keptSearches(llvm::StringRef dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    if (llvm::StringRef(it->path()).ends_with(".l2.mlir"))
      names.push_back(llvm::sys::path::filename(it->path()).str());
  return names;
}

struct TempDir {
  TempDir() {
    REQUIRE(!llvm::sys::fs::createUniqueDirectory("synpl-search-cache", path));
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  llvm::SmallString<128> path;
};

} // namespace

TEST_CASE("a search that speaks is not kept, a quiet one is read back", "[search-cache]") {
  TempDir dir;
  Compiled spoke = compileToL2(dir.path, /*remark=*/true);
  REQUIRE(spoke.ok);
  CHECK(spoke.diagnostics > 0);
  CHECK(spoke.passes > 0);
  CHECK(keptSearches(dir.path).empty());

  Compiled quiet = compileToL2(dir.path, /*remark=*/false);
  REQUIRE(quiet.ok);
  CHECK(quiet.diagnostics == 0);
  CHECK(quiet.passes > 0);
  CHECK(keptSearches(dir.path).size() == 1);
  CHECK(quiet.l2 == spoke.l2);

  // Read back: no pass runs (so none speaks), the same program.
  Compiled again = compileToL2(dir.path, /*remark=*/true);
  REQUIRE(again.ok);
  CHECK(again.passes == 0);
  CHECK(again.diagnostics == 0);
  CHECK(again.l2 == quiet.l2);
  REQUIRE(!again.progress.empty());
  CHECK(llvm::StringRef(again.progress.front()).contains("the method chosen before"));
}

TEST_CASE("an echoed search report bypasses the kept searches", "[search-cache]") {
  TempDir dir;
  REQUIRE(compileToL2(dir.path, /*remark=*/false).ok);
  REQUIRE(keptSearches(dir.path).size() == 1);
  auto &sink = synpl::search::SearchReportSink::global();
  std::string echoed;
  llvm::raw_string_ostream os(echoed);
  sink.setStream(&os);
  sink.setFormat(synpl::search::ReportFormat::JSON);
  Compiled reported = compileToL2(dir.path, /*remark=*/false);
  sink.setFormat(synpl::search::ReportFormat::None);
  sink.setStream(nullptr);
  sink.clear();
  REQUIRE(reported.ok);
  CHECK(reported.passes > 0);
  CHECK(llvm::StringRef(echoed).contains("L3->L2"));
}
