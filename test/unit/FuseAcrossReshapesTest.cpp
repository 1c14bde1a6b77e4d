//===- FuseAcrossReshapesTest.cpp - Moved ops keep their values ---------===//
//
// --synpl-l1-fuse-across-reshapes runs elementwise ops on the other side of a
// reshape. A row-major reshape keeps every element's position, so the
// reference interpreter must give the moved graph's outputs bit for bit.
//
//===----------------------------------------------------------------------===//
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

// A convolution's epilogue (bias, ReLU, mask, a pool of the ReLU) and a
// chain that follows it (select, scale, sub) move into the product's
// [32, 4]; a max pool's gradient over 2-wide windows, formed from views
// (mask times the broadcast maximum), moves into its select's [2, 4, 4, 4].
const char *kProgram = R"mlir(
l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {cores = 2, isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%x: tensor<32x9xf32>, %w: tensor<9x4xf32>, %b: tensor<4xf32>) {
  %p = l1.matmul %x, %w : tensor<32x9xf32>, tensor<9x4xf32> -> tensor<32x4xf32>
  %bb = l1.broadcast %b : tensor<4xf32> -> tensor<32x4xf32>
  %a = l1.add %p, %bb : tensor<32x4xf32>, tensor<32x4xf32> -> tensor<32x4xf32>
  %r = l1.reshape %a : tensor<32x4xf32> -> tensor<2x4x4x4xf32>
  %zero = l1.const 0.0 : tensor<2x4x4x4xf32>
  %relu = l1.max %r, %zero : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
  %mask = l1.cmp gt, %r, %zero : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32> -> tensor<2x4x4x4xi1>
  %pool = l1.reduce_max %relu axis 2 : tensor<2x4x4x4xf32> -> tensor<2x4x4xf32>
  %sel = l1.select %mask, %relu, %r : tensor<2x4x4x4xi1>, tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
  %h = l1.const 0.5 : tensor<f32>
  %half = l1.scale %sel, %h : tensor<2x4x4x4xf32>, tensor<f32> -> tensor<2x4x4x4xf32>
  %d = l1.sub %half, %relu : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
  %win = l1.reshape %relu : tensor<2x4x4x4xf32> -> tensor<2x4x2x2x4xf32>
  %wmax = l1.reduce_max %win axis 3 : tensor<2x4x2x2x4xf32> -> tensor<2x4x2x4xf32>
  %wb = l1.broadcast %wmax dims [0, 1, 2, 4] : tensor<2x4x2x4xf32> -> tensor<2x4x2x2x4xf32>
  %hit = l1.cmp eq, %win, %wb : tensor<2x4x2x2x4xf32>, tensor<2x4x2x2x4xf32> -> tensor<2x4x2x2x4xi1>
  %hf = l1.cast %hit : tensor<2x4x2x2x4xi1> -> tensor<2x4x2x2x4xf32>
  %g = l1.mul %hf, %wb : tensor<2x4x2x2x4xf32>, tensor<2x4x2x2x4xf32> -> tensor<2x4x2x2x4xf32>
  %g4 = l1.reshape %g : tensor<2x4x2x2x4xf32> -> tensor<2x4x4x4xf32>
  %gz = l1.select %mask, %g4, %zero : tensor<2x4x4x4xi1>, tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
  l1.return %pool, %d, %gz : tensor<2x4x4xf32>, tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>
}
l1.stage @sink on @cpu_0 process(%a: !l1.buf<@ram_0, tensor<2x4x4xf32>>, %b: !l1.buf<@ram_0, tensor<2x4x4x4xf32>>, %c: !l1.buf<@ram_0, tensor<2x4x4x4xf32>>) {
  l1.drop %a : !l1.buf<@ram_0, tensor<2x4x4xf32>>
  l1.drop %b : !l1.buf<@ram_0, tensor<2x4x4x4xf32>>
  l1.drop %c : !l1.buf<@ram_0, tensor<2x4x4x4xf32>>
  l1.end
}
l1.pipeline @p = @g
l1.pipeline @q = @sink
l1.schedule pipelines [@p, @q] actors [] pipeline_depth 1
)mlir";

} // namespace

TEST_CASE("fuse across reshapes: the moved graph computes the same bits", "[transforms]") {
  L1Program program(kProgram);
  auto &module = program.module;
  auto graph = [&] { return program.graph(); };
  std::string &errors = program.errors;
  REQUIRE(module);
  SmallVector<Tensor> inputs = randomInputs(graph(), 11);
  ref::StateEnv state;
  auto expected = ref::interpretTensorGraph(graph(), inputs, state);
  REQUIRE(succeeded(expected));

  PassManager pm(&program.ctx);
  pm.addPass(createL1FuseAcrossReshapes());
  INFO(errors);
  REQUIRE(succeeded(pm.run(*module)));
  REQUIRE(succeeded(verify(*module)));
  // The five elementwise ops after the reshape now run on [32, 4]; the
  // window gradient's product on [2, 4, 4, 4], its select's shape.
  int64_t toProducer = 0, toReaders = 0;
  graph().walk([&](Operation *op) {
    int64_t rank = op->getNumResults() == 1
                       ? cast<RankedTensorType>(op->getResult(0).getType()).getRank()
                       : 0;
    if (isa<l1::MaxOp, l1::ScaleOp, l1::SubOp>(op) ||
        (isa<l1::CmpOp>(op) &&
         !isa_and_nonnull<l1::BroadcastOp>(op->getOperand(1).getDefiningOp())))
      toProducer += rank == 2;
    if (isa<l1::SelectOp>(op))
      toProducer += rank == 2, toReaders += rank == 4;
    if (isa<l1::MulOp>(op))
      toReaders += rank == 4;
  });
  CHECK(toProducer == 5);
  CHECK(toReaders == 2);

  auto got = ref::interpretTensorGraph(graph(), inputs, state);
  REQUIRE(succeeded(got));
  REQUIRE(got->size() == expected->size());
  for (size_t i = 0; i < got->size(); ++i) {
    INFO("output " << i);
    CHECK((*got)[i].getShape() == (*expected)[i].getShape());
    CHECK((*got)[i].data() == (*expected)[i].data());
  }
}
