#include "synpl/Analysis/CFGPaths.h"
#include "synpl/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using namespace mlir;
using namespace synpl;

namespace {
/// Records every complete path and the live set at its end.
struct Recorder : CFGPathVisitor {
  std::vector<std::string> paths;
  std::vector<size_t> liveAtEnd;
  LogicalResult visitBlock(Block *, ArrayRef<Block *>, LiveValues &) override {
    return success();
  }
  LogicalResult visitPathEnd(ArrayRef<Block *> path, const LiveValues &live) override {
    paths.push_back(formatCFGPath(path));
    liveAtEnd.push_back(live.size());
    return success();
  }
};

struct Fixture {
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  explicit Fixture(const char *ir) {
    DialectRegistry registry;
    registerUpstreamDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    module = parseSourceString<ModuleOp>(ir, &context);
  }
  Region &body() {
    return cast<func::FuncOp>(module->getBody()->front()).getBody();
  }
};
} // namespace

TEST_CASE("a diamond has two paths", "[cfgpaths]") {
  Fixture f(R"(
    func.func @f(%c: i1) {
      cf.cond_br %c, ^bb1, ^bb2
    ^bb1:
      cf.br ^bb3
    ^bb2:
      cf.br ^bb3
    ^bb3:
      return
    })");
  REQUIRE(f.module);
  Recorder r;
  CFGWalkResult result = walkCFGPaths(f.body(), r, {});
  CHECK(result.succeeded());
  CHECK(result.numPaths == 2);
  CHECK(r.paths == std::vector<std::string>{"^bb0 -> ^bb1 -> ^bb3",
                                            "^bb0 -> ^bb2 -> ^bb3"});
}

TEST_CASE("a chain has one path, and branch operands are handed on", "[cfgpaths]") {
  Fixture f(R"(
    func.func @f(%a: i32) {
      cf.br ^bb1(%a : i32)
    ^bb1(%b: i32):
      cf.br ^bb2
    ^bb2:
      return
    })");
  REQUIRE(f.module);
  Recorder r;
  LiveValues initial;
  Value a = f.body().front().getArgument(0);
  initial.insert(a);
  CFGWalkResult result = walkCFGPaths(f.body(), r, initial);
  CHECK(result.succeeded());
  REQUIRE(r.paths == std::vector<std::string>{"^bb0 -> ^bb1 -> ^bb2"});
  // %a left the set when it was passed on; ^bb1's argument joined it.
  CHECK(r.liveAtEnd == std::vector<size_t>{1});
}

TEST_CASE("a loop is reported as a back edge with the path that closes it", "[cfgpaths]") {
  Fixture f(R"(
    func.func @f(%c: i1) {
      cf.br ^bb1
    ^bb1:
      cf.cond_br %c, ^bb2, ^bb3
    ^bb2:
      cf.br ^bb1
    ^bb3:
      return
    })");
  REQUIRE(f.module);
  Recorder r;
  CFGWalkResult result = walkCFGPaths(f.body(), r, {});
  CHECK(result.status == CFGWalkResult::Status::BackEdge);
  CHECK(formatCFGPath(result.path) == "^bb0 -> ^bb1 -> ^bb2 -> ^bb1");
}

TEST_CASE("the path bound stops an exponential walk", "[cfgpaths]") {
  Fixture f(R"(
    func.func @f(%c: i1) {
      cf.cond_br %c, ^bb1, ^bb2
    ^bb1:
      cf.br ^bb3
    ^bb2:
      cf.br ^bb3
    ^bb3:
      cf.cond_br %c, ^bb4, ^bb5
    ^bb4:
      cf.br ^bb6
    ^bb5:
      cf.br ^bb6
    ^bb6:
      return
    })");
  REQUIRE(f.module);
  Recorder all;
  CHECK(walkCFGPaths(f.body(), all, {}).numPaths == 4);
  Recorder bounded;
  CFGWalkOptions options;
  options.maxPaths = 3;
  CFGWalkResult result = walkCFGPaths(f.body(), bounded, {}, options);
  CHECK(result.status == CFGWalkResult::Status::TooManyPaths);
  CHECK(bounded.paths.size() == 3);
}

TEST_CASE("a visitor can stop the walk", "[cfgpaths]") {
  Fixture f(R"(
    func.func @f(%c: i1) {
      cf.cond_br %c, ^bb1, ^bb2
    ^bb1:
      return
    ^bb2:
      return
    })");
  REQUIRE(f.module);
  struct StopFirst : Recorder {
    LogicalResult visitPathEnd(ArrayRef<Block *> path, const LiveValues &live) override {
      (void)Recorder::visitPathEnd(path, live);
      return failure();
    }
  } v;
  CFGWalkResult result = walkCFGPaths(f.body(), v, {});
  CHECK(result.status == CFGWalkResult::Status::Aborted);
  CHECK(v.paths.size() == 1);
}

TEST_CASE("repeated states are walked once when asked", "[cfgpaths]") {
  // 16 diamonds in a row: 65536 paths, but only two states per block.
  std::string ir = "func.func @f(%c: i1) {\n  cf.br ^d0\n";
  for (int i = 0; i < 16; ++i) {
    std::string d = std::to_string(i), n = std::to_string(i + 1);
    ir += "^d" + d + ":\n  cf.cond_br %c, ^l" + d + ", ^r" + d + "\n";
    ir += "^l" + d + ":\n  cf.br ^d" + n + "\n";
    ir += "^r" + d + ":\n  cf.br ^d" + n + "\n";
  }
  ir += "^d16:\n  return\n}\n";
  Fixture f(ir.c_str());
  REQUIRE(f.module);
  Recorder plain;
  CHECK(walkCFGPaths(f.body(), plain, {}).status ==
        CFGWalkResult::Status::TooManyPaths);
  Recorder memo;
  CFGWalkOptions options;
  options.skipRepeatedStates = true;
  CFGWalkResult result = walkCFGPaths(f.body(), memo, {}, options);
  CHECK(result.succeeded());
  CHECK(result.numPaths == 1); // every other path rejoins a walked state
}

TEST_CASE("a cycle is found even when the walk would skip repeated states",
          "[cfgpaths]") {
  Fixture f(R"(
    func.func @f(%c: i1) {
      cf.cond_br %c, ^bb1, ^bb2
    ^bb1:
      cf.br ^bb2
    ^bb2:
      cf.cond_br %c, ^bb1, ^bb3
    ^bb3:
      return
    })");
  REQUIRE(f.module);
  Recorder r;
  CFGWalkOptions options;
  options.skipRepeatedStates = true;
  CFGWalkResult result = walkCFGPaths(f.body(), r, {}, options);
  CHECK(result.status == CFGWalkResult::Status::BackEdge);
  CHECK(formatCFGPath(result.path) == "^bb0 -> ^bb1 -> ^bb2 -> ^bb1");
  CHECK(r.paths.empty());
}
