//===- RunningBoundsTest.cpp - The training fuzzer's error bounds ----------===//
//
// The differential fuzzer compares a training step element by element
// within bounds RunningBounds carries along the reference's run
// (test/fuzz/diff/RunningBounds.h). Two properties make that comparison
// honest, and each is checked against an independent path:
//
//   * soundness: a plain f32 evaluation of the same graph (written out here
//     loop by loop, with a different summation order than the reference's)
//     lies within the bound of every element;
//   * discrimination: the bounds stay small where nothing is unstable
//     (relative 1e-5 for a matmul, exp, sum, log chain), widen exactly at
//     an element a rounding could flip (a compare of a value with error
//     against its threshold), and refuse (an infinite bound, named) where
//     the value cannot be bounded (a log near zero).
//
//===----------------------------------------------------------------------===//
#include "RunningBounds.h"

#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Reference/L1Interpreter.h"

#include "TestContext.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>

using namespace mlir;
using namespace synpl;
using synpl::difffuzz::RunningBounds;
using synpl::ref::ElementType;
using synpl::ref::Tensor;

namespace {

struct Run {
  std::unique_ptr<MLIRContext> ctx = synpl::test::makeContext();
  OwningOpRef<ModuleOp> module;
  RunningBounds bounds;
  SmallVector<Tensor> results;
  SmallVector<Tensor> errs;

  Run(const std::string &args, const std::string &body, ArrayRef<Tensor> inputs) {
    // A graph alone (no system, no consumer): the interpreter needs no
    // more, so the module is not verified as a whole program.
    std::string text = "l1.tensor_graph @g on @cpu_0 compute(" + args + ") {\n" + body + "\n}\n";
    ParserConfig config(ctx.get(), /*verifyAfterParse=*/false);
    module = parseSourceString<ModuleOp>(text, config);
    REQUIRE(module);
    auto graph = module->lookupSymbol<l1::TensorGraphOp>("g");
    ref::InterpretOptions options;
    options.observer = bounds.observer();
    auto outs = ref::interpretTensorGraph(graph, inputs, {}, options);
    REQUIRE(succeeded(outs));
    results = *outs;
    for (Value v : graph.getEntry().getTerminator()->getOperands()) {
      const Tensor *e = bounds.lookup(v);
      errs.push_back(e ? *e : Tensor(ElementType::f64(), results[errs.size()].getShape(), 0.0));
    }
  }
};

Tensor f32(ArrayRef<int64_t> shape, std::vector<double> data) {
  for (double &v : data)
    v = double(float(v));
  return Tensor(ElementType::f32(), shape, std::move(data));
}

} // namespace

TEST_CASE("running bounds hold a plain f32 evaluation and stay tight", "[difffuzz]") {
  // y = log(sum_j exp((x w)_ij)): a matmul, exp, a row sum and a log, the
  // shape of a softmax's normaliser.
  constexpr int M = 3, K = 40, N = 7;
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> unit(-1, 1);
  std::vector<double> x(M * K), w(K * N);
  for (double &v : x)
    v = unit(rng);
  for (double &v : w)
    v = 0.3 * unit(rng);
  Tensor tx = f32({M, K}, x), tw = f32({K, N}, w);
  Run r("%x: tensor<3x40xf32>, %w: tensor<40x7xf32>",
        "  %m = l1.matmul %x, %w : tensor<3x40xf32>, tensor<40x7xf32> -> tensor<3x7xf32>\n"
        "  %e = l1.exp %m : tensor<3x7xf32> -> tensor<3x7xf32>\n"
        "  %s = l1.reduce_sum %e axis 1 : tensor<3x7xf32> -> tensor<3xf32>\n"
        "  %y = l1.log %s : tensor<3xf32> -> tensor<3xf32>\n"
        "  l1.return %y : tensor<3xf32>",
        {tx, tw});
  REQUIRE(r.bounds.unbounded().empty());
  for (int i = 0; i < M; ++i) {
    // f32 throughout, k summed backwards, the row forwards.
    float sum = 0;
    for (int j = 0; j < N; ++j) {
      float acc = 0;
      for (int k = K - 1; k >= 0; --k)
        acc += float(tx[i * K + k]) * float(tw[k * N + j]);
      sum += std::exp(acc);
    }
    float got = std::log(sum);
    double want = r.results[0][i], bound = r.errs[0][i];
    INFO("row " << i << ": f32 " << got << ", reference " << want << ", bound " << bound);
    CHECK(std::abs(double(got) - want) <= bound);
    CHECK(bound > 0);
    CHECK(bound < 1e-5 * std::abs(want) + 1e-6);
  }
}

TEST_CASE("running bounds widen only at a comparison a rounding could flip", "[difffuzz]") {
  // exp(0) is exactly 1 in the reference, but an f32 exp may be off by its
  // ulps: `exp(a) >= 1` is unstable where a = 0 and stable where a = 1.
  Tensor a = f32({2}, {0.0, 1.0});
  Tensor x = f32({2}, {5.0, 5.0}), y = f32({2}, {-3.0, -3.0});
  Run r("%a: tensor<2xf32>, %x: tensor<2xf32>, %y: tensor<2xf32>",
        "  %e = l1.exp %a : tensor<2xf32> -> tensor<2xf32>\n"
        "  %one = l1.const 1.0 : tensor<2xf32>\n"
        "  %c = l1.cmp ge, %e, %one : tensor<2xf32>, tensor<2xf32> -> tensor<2xi1>\n"
        "  %s = l1.select %c, %x, %y : tensor<2xi1>, tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>\n"
        "  l1.return %c, %s : tensor<2xi1>, tensor<2xf32>",
        {a, x, y});
  REQUIRE(r.bounds.unbounded().empty());
  // The compare: either outcome at element 0, exact at element 1.
  CHECK(r.errs[0][0] == 1);
  CHECK(r.errs[0][1] == 0);
  // The select: element 0 may take the other branch (|5 - -3| = 8).
  CHECK(r.errs[1][0] == 8);
  CHECK(r.errs[1][1] == 0);
}

TEST_CASE("running bounds keep a mask's error out of the row maximum", "[difffuzz]") {
  // A causal mask's -1e30 plus a score carries that sum's rounding (~1e23);
  // the maximum of a row holding it and an unmasked score is the unmasked
  // one's and carries only that one's error.
  Tensor s = f32({2}, {0.25, 0.5});
  Run r("%s: tensor<2xf32>",
        "  %e = l1.exp %s : tensor<2xf32> -> tensor<2xf32>\n"
        "  %m = l1.const -1.0e30 : tensor<2xf32>\n"
        "  %t = l1.add %m, %e : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>\n"
        "  %k = l1.const 0.4 : tensor<2xf32>\n"
        "  %c = l1.cmp lt, %s, %k : tensor<2xf32>, tensor<2xf32> -> tensor<2xi1>\n"
        "  %row = l1.select %c, %t, %e : tensor<2xi1>, tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>\n"
        "  %max = l1.reduce_max %row : tensor<2xf32> -> tensor<f32>\n"
        "  l1.return %max, %row : tensor<f32>, tensor<2xf32>",
        {s});
  REQUIRE(r.bounds.unbounded().empty());
  CHECK(r.errs[1][0] > 1e20); // the masked element's own error
  CHECK(r.results[0][0] == Approx(std::exp(0.5)));
  CHECK(r.errs[0][0] < 1e-5); // the maximum exp(0.5): one exp's ulps
}

TEST_CASE("running bounds name the op whose value cannot be bounded", "[difffuzz]") {
  // log(x - y) with x - y within its rounding of zero.
  Tensor y = f32({1}, {0.1});
  Run r("%y: tensor<1xf32>",
        "  %e = l1.exp %y : tensor<1xf32> -> tensor<1xf32>\n"
        "  %l = l1.log %e : tensor<1xf32> -> tensor<1xf32>\n"
        "  %d = l1.sub %l, %y : tensor<1xf32>, tensor<1xf32> -> tensor<1xf32>\n"
        "  %z = l1.log %d : tensor<1xf32> -> tensor<1xf32>\n"
        "  l1.return %z : tensor<1xf32>",
        {y});
  CHECK(std::isinf(r.errs[0][0]));
  CHECK(StringRef(r.bounds.unbounded()).starts_with("l1.log"));
  CHECK(StringRef(r.bounds.unbounded()).contains("within its error of zero"));
}
