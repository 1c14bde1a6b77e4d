//===- SplitReductionsTest.cpp - Split reductions keep their values ------===//
//
// --synpl-l1-split-reductions rewrites weight and bias gradients into
// partials and their sum. Two independent paths confirm the rewrite:
// the reference interpreter on the split graph against the interpreter on
// the graph as written (the L1 rewrite keeps the values), and the L0 plan
// of the split graph, run by the plain UOp evaluator, against the same
// reference (L1 -> L0 lowers the split forms: the sliced views under a
// batched matmul, reductions over a middle axis).
//
//===----------------------------------------------------------------------===//
#include "synpl/Conversion/Passes.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Reference/L1Interpreter.h"
#include "synpl/Transforms/Passes.h"

#include "L1ProgramHarness.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include <catch2/catch.hpp>

#include <string>

using namespace mlir;
using namespace synpl;
using synpl::ref::Tensor;
using synpl::test::L1Program;
using synpl::test::randomInputs;

namespace {

// Every form the pass splits, and three it must leave: a row reduction,
// a short one, a matmul whose right operand is a transpose.
const char *kProgram = R"mlir(
l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {cores = 4, isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%x: tensor<8192x7xf32>, %dy: tensor<8192x5xf32>, %w: tensor<6x8192xf32>, %t: tensor<16384x2x4xf32>, %v: tensor<5x8192xf32>) {
  %xt = l1.transpose %x : tensor<8192x7xf32> -> tensor<7x8192xf32>
  %gw = l1.matmul %xt, %dy : tensor<7x8192xf32>, tensor<8192x5xf32> -> tensor<7x5xf32>
  %gb = l1.reduce_sum %dy axis 0 : tensor<8192x5xf32> -> tensor<5xf32>
  %gp = l1.matmul %w, %dy : tensor<6x8192xf32>, tensor<8192x5xf32> -> tensor<6x5xf32>
  %gm = l1.reduce_mean %t axis 0 : tensor<16384x2x4xf32> -> tensor<2x4xf32>
  %gx = l1.reduce_max %t axis 0 : tensor<16384x2x4xf32> -> tensor<2x4xf32>
  %rows = l1.reduce_sum %dy axis 1 : tensor<8192x5xf32> -> tensor<8192xf32>
  %ww = l1.reshape %w : tensor<6x8192xf32> -> tensor<64x768xf32>
  %vt = l1.transpose %v : tensor<5x8192xf32> -> tensor<8192x5xf32>
  %gt = l1.matmul %w, %vt : tensor<6x8192xf32>, tensor<8192x5xf32> -> tensor<6x5xf32>
  %short = l1.reduce_sum %ww axis 0 : tensor<64x768xf32> -> tensor<768xf32>
  l1.return %gw, %gb, %gp, %gm, %gx, %rows, %gt, %short : tensor<7x5xf32>, tensor<5xf32>, tensor<6x5xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<8192xf32>, tensor<6x5xf32>, tensor<768xf32>
}
l1.stage @sink on @cpu_0 process(%a: !l1.buf<@ram_0, tensor<7x5xf32>>, %b: !l1.buf<@ram_0, tensor<5xf32>>, %c: !l1.buf<@ram_0, tensor<6x5xf32>>, %d: !l1.buf<@ram_0, tensor<2x4xf32>>, %e: !l1.buf<@ram_0, tensor<2x4xf32>>, %f: !l1.buf<@ram_0, tensor<8192xf32>>, %h: !l1.buf<@ram_0, tensor<6x5xf32>>, %i: !l1.buf<@ram_0, tensor<768xf32>>) {
  l1.drop %a : !l1.buf<@ram_0, tensor<7x5xf32>>
  l1.drop %b : !l1.buf<@ram_0, tensor<5xf32>>
  l1.drop %c : !l1.buf<@ram_0, tensor<6x5xf32>>
  l1.drop %d : !l1.buf<@ram_0, tensor<2x4xf32>>
  l1.drop %e : !l1.buf<@ram_0, tensor<2x4xf32>>
  l1.drop %f : !l1.buf<@ram_0, tensor<8192xf32>>
  l1.drop %h : !l1.buf<@ram_0, tensor<6x5xf32>>
  l1.drop %i : !l1.buf<@ram_0, tensor<768xf32>>
  l1.end
}
l1.pipeline @p = @g
l1.pipeline @q = @sink
l1.schedule pipelines [@p, @q] actors [] pipeline_depth 1
)mlir";

} // namespace

TEST_CASE("split reductions: the rewrite keeps every value, and L1 -> L0 "
          "lowers it",
          "[transforms][l1tol0]") {
  L1Program f(kProgram);
  REQUIRE(f.module);
  INFO(f.errors);
  REQUIRE(succeeded(verify(*f.module)));
  SmallVector<Tensor> inputs = randomInputs(f.graph(), 5);
  ref::StateEnv state;
  auto expected = ref::interpretTensorGraph(f.graph(), inputs, state);
  REQUIRE(succeeded(expected));

  PassManager split(&f.ctx);
  split.addPass(createL1SplitReductions());
  REQUIRE(succeeded(split.run(*f.module)));
  INFO(f.errors);
  REQUIRE(succeeded(verify(*f.module)));
  // Five split (two matmuls, three reductions), each now two reductions
  // (or a batched matmul and a sum); three left as written.
  int64_t batched = 0, reductions = 0;
  f.graph().walk([&](Operation *op) {
    if (auto mm = dyn_cast<l1::MatmulOp>(op))
      batched += cast<RankedTensorType>(mm.getLhs().getType()).getRank() == 3;
    reductions += isa<l1::ReduceSumOp, l1::ReduceMeanOp, l1::ReduceMaxOp>(op);
  });
  CHECK(batched == 2);
  CHECK(reductions == 2 + 3 * 2 + 2);

  auto got = ref::interpretTensorGraph(f.graph(), inputs, state);
  REQUIRE(succeeded(got));
  REQUIRE(got->size() == expected->size());
  for (size_t i = 0; i < got->size(); ++i) {
    ref::Comparison c = ref::compare((*got)[i], (*expected)[i], 1e-12, 1e-12);
    INFO("output " << i << ": " << c.message);
    CHECK(c.ok);
  }

  // L0: the plan's kernels in stream order on the UOp evaluator.
  PassManager lower(&f.ctx);
  lower.addPass(createL1ToL0());
  REQUIRE(succeeded(lower.run(*f.module)));
  synpl::test::checkFirstStream(*f.module->getOps<l0uop::PlanOp>().begin(), "g", inputs, *expected,
                   1e-5, 1e-7);
}

TEST_CASE("split reductions: one core, or a second run, splits nothing",
          "[transforms]") {
  for (int64_t units : {int64_t(1), int64_t(0)}) {
    L1Program f(kProgram);
    REQUIRE(f.module);
    PassManager pm(&f.ctx);
    L1SplitReductionsOptions options;
    options.units = units;
    pm.addPass(createL1SplitReductions(options));
    // units 0: the node's four cores, then the pass again on its output.
    if (units == 0)
      pm.addPass(createL1SplitReductions(options));
    INFO(f.errors);
    REQUIRE(succeeded(pm.run(*f.module)));
    int64_t reductions = 0;
    f.graph().walk([&](Operation *op) {
      reductions += isa<l1::ReduceSumOp, l1::ReduceMeanOp, l1::ReduceMaxOp>(op);
    });
    INFO("units " << units);
    CHECK(reductions == (units == 1 ? 5 : 10));
  }
}
