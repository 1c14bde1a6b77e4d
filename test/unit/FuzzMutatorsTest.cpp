//===- FuzzMutatorsTest.cpp - The fuzz targets' structure-aware mutators --===//
//
// The .syn and MLIR mutators (test/fuzz/SynMutator.h, MlirMutator.h) exist
// so that mutated inputs get past the parser. Checked on the examples, over
// chains of 300 mutations each (every mutant mutated again, as a fuzzing
// run does):
//
// * MLIR: every mutant is printed IR, so every one parses again; many still
//   verify as a different program (25-60% here) and so reach the pipeline
//   target's passes, where a random byte edit of the same text almost never
//   does (under 2%, measured alongside);
// * .syn: every mutant keeps its brackets balanced, and a share of them
//   still imports to MLIR as a different program (5-12% on these files; a
//   random byte edit: 2-14%, most of them inside a comment or a number).
//
//===----------------------------------------------------------------------===//
#include "MlirMutator.h"
#include "SynMutator.h"

#include "synpl/Frontend/Syn.h"
#include "synpl/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <random>
#include <sstream>

#ifndef SYNPL_SOURCE_DIR
#error "SYNPL_SOURCE_DIR must point at the source tree"
#endif

using namespace mlir;

namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(std::string(SYNPL_SOURCE_DIR) + "/" + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Quiet {
  explicit Quiet(MLIRContext &ctx)
      : handler(&ctx, [](Diagnostic &) { return success(); }) {}
  ScopedDiagnosticHandler handler;
};

MLIRContext &context() {
  static MLIRContext *ctx = [] {
    DialectRegistry registry;
    synpl::registerAllDialects(registry);
    synpl::registerUpstreamDialects(registry);
    auto *c = new MLIRContext(registry, MLIRContext::Threading::DISABLED);
    c->loadAllAvailableDialects();
    return c;
  }();
  return *ctx;
}

std::string printed(ModuleOp m) {
  std::string out;
  llvm::raw_string_ostream os(out);
  m.print(os, OpPrintingFlags().printGenericOpForm());
  return out;
}

/// 0: does not parse; 1: parses; 2: parses and verifies. `ir`: the
/// module printed, when it verifies.
int parseLevel(const std::string &text, std::string *ir = nullptr) {
  Quiet quiet(context());
  ParserConfig config(&context(), /*verifyAfterParse=*/false);
  OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(text, config);
  if (!m)
    return 0;
  if (failed(verify(*m)))
    return 1;
  if (ir)
    *ir = printed(*m);
  return 2;
}

bool balanced(const std::string &s) {
  std::string stack;
  bool inString = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      i = s.find('\n', i);
      if (i == std::string::npos)
        break;
      continue;
    }
    if (c == '"')
      inString = true;
    else if (c == '(' || c == '[' || c == '{')
      stack.push_back(c);
    else if (c == ')' || c == ']' || c == '}') {
      char open = c == ')' ? '(' : c == ']' ? '[' : '{';
      if (stack.empty() || stack.back() != open)
        return false;
      stack.pop_back();
    }
  }
  return stack.empty();
}

/// A random byte edit (overwrite, insert or delete), for comparison.
std::string byteEdit(std::string s, std::mt19937 &rng) {
  std::uniform_int_distribution<size_t> at(0, s.size() - 1);
  std::uniform_int_distribution<int> byte(32, 126);
  switch (rng() % 3) {
  case 0: s[at(rng)] = char(byte(rng)); break;
  case 1: s.insert(s.begin() + at(rng), char(byte(rng))); break;
  case 2: s.erase(s.begin() + at(rng)); break;
  }
  return s;
}

} // namespace

TEST_CASE("fuzz mutators: MLIR mutants parse, and many still verify", "[fuzz]") {
  for (const char *path : {"examples/mnist/mnist.l1.mlir", "examples/mnist/mnist.l2.mlir",
                           "examples/mnist/mnist.l3.mlir", "examples/mnist/mnist.l0.mlir"}) {
    INFO(path);
    std::string text = readFile(path), original;
    REQUIRE(parseLevel(text, &original) == 2);
    // `verified`: mutants that verify and are a different program (a byte
    // edit inside a comment verifies but changes nothing).
    int mutated = 0, parsed = 0, verified = 0, byteVerified = 0;
    std::string current = text;
    std::mt19937 rng(7);
    for (unsigned seed = 1; seed <= 300; ++seed) {
      std::string next = synpl::fuzz::mutateMlir(context(), current, seed);
      std::string ir;
      byteVerified += parseLevel(byteEdit(text, rng), &ir) == 2 && ir != original;
      if (next.empty()) {
        current = text; // nothing applied: start the chain again
        continue;
      }
      ++mutated;
      int level = parseLevel(next, &ir);
      parsed += level >= 1;
      verified += level == 2 && ir != original;
      // Keep mutating what still verifies (a corpus keeps inputs that
      // reach new code; most that verify do).
      current = level == 2 ? next : text;
    }
    INFO(mutated << " mutated, " << parsed << " parse, " << verified << " verify; "
                 << byteVerified << " of 300 byte edits verify");
    CHECK(mutated >= 250);
    CHECK(parsed == mutated);
    CHECK(verified >= mutated / 5);
    CHECK(verified > byteVerified);
  }
}

TEST_CASE("fuzz mutators: .syn mutants keep their brackets and often import", "[fuzz]") {
  for (const char *path : {"examples/fashion_mnist/fashion_mnist.syn",
                           "examples/mnist/mnist.l2.syn", "examples/fashion_mnist/fashion_mnist.l1.syn"}) {
    INFO(path);
    std::string text = readFile(path);
    REQUIRE(balanced(text));
    int mutated = 0, imported = 0, byteImported = 0;
    std::mt19937 rng(11);
    // The imported module printed ("" when the import fails).
    auto imports = [](const std::string &s) -> std::string {
      Quiet quiet(context());
      llvm::SourceMgr sourceMgr;
      sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(s, "input.syn"),
                                   llvm::SMLoc());
      OwningOpRef<ModuleOp> m = synpl::parseSyn(sourceMgr, &context());
      return m ? printed(*m) : std::string();
    };
    std::string original = imports(text);
    REQUIRE(!original.empty());
    // Counted: imports of a different program (not a comment edited).
    std::string current = text;
    for (unsigned seed = 1; seed <= 300; ++seed) {
      std::string next = synpl::fuzz::mutateSyn(current, seed);
      std::string byte = imports(byteEdit(text, rng));
      byteImported += !byte.empty() && byte != original;
      REQUIRE(!next.empty());
      ++mutated;
      INFO(next);
      REQUIRE(balanced(next));
      std::string ir = imports(next);
      imported += !ir.empty() && ir != original;
      current = !ir.empty() ? next : text;
    }
    INFO(imported << " of " << mutated << " mutants import; " << byteImported
                  << " of 300 byte edits do");
    CHECK(imported >= mutated / 20);
  }
}
