//===- L1ToL0NumericsTest.cpp - Emitted kernels compute the L1 numbers ----===//
//
// Lowers a small training step (linear layer, layer norm, tanh, softmax
// cross-entropy, its gradient, and a handler that updates the state) with
// --synpl-l1-to-l0, runs the plan's kernels in stream order with a plain
// UOp evaluator (sequential: every RANGE is a loop), and compares the graph
// outputs and the updated actor state with the reference interpreter.
//
//===----------------------------------------------------------------------===//
#include "synpl/Conversion/Passes.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/InitAll.h"
#include "synpl/Reference/L1Interpreter.h"

#include "L1ProgramHarness.h"
#include "UOpEvaluator.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace mlir;
using namespace synpl;
using synpl::ref::ElementType;
using synpl::ref::Tensor;
using synpl::test::UOpEvaluator;

namespace {

const char *kProgram = R"mlir(
l1.system @tiny {
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "1GB"}
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.actor @m on @gpu_0 {
  l1.state @w : tensor<6x5xf32> init kaiming
  l1.state @b : tensor<5xf32> init kaiming
  l1.state @g : tensor<5xf32> init ones
  l1.state @t : tensor<f32> init zeros
  l1.window @ws [@w, @b, @g] readers [@fb]
  l1.handler @Upd(%gw: tensor<6x5xf32>, %gb: tensor<5xf32>) {
    %t0 = l1.state_read @t : tensor<f32>
    %one = l1.const 1.0 : tensor<f32>
    %t1 = l1.add %t0, %one : tensor<f32>, tensor<f32> -> tensor<f32>
    l1.state_write @t, %t1 : tensor<f32>
    %c = l1.cos %t1 : tensor<f32> -> tensor<f32>
    %lr0 = l1.const 0.1 : tensor<f32>
    %lr = l1.mul %lr0, %c : tensor<f32>, tensor<f32> -> tensor<f32>
    %w = l1.state_read @w : tensor<6x5xf32>
    %u = l1.scale %gw, %lr : tensor<6x5xf32>, tensor<f32> -> tensor<6x5xf32>
    %sq = l1.mul %gw, %gw : tensor<6x5xf32>, tensor<6x5xf32> -> tensor<6x5xf32>
    %eps = l1.const 1.0e-3 : tensor<6x5xf32>
    %sqe = l1.add %sq, %eps : tensor<6x5xf32>, tensor<6x5xf32> -> tensor<6x5xf32>
    %r = l1.sqrt %sqe : tensor<6x5xf32> -> tensor<6x5xf32>
    %step = l1.div %u, %r : tensor<6x5xf32>, tensor<6x5xf32> -> tensor<6x5xf32>
    %nw = l1.sub %w, %step : tensor<6x5xf32>, tensor<6x5xf32> -> tensor<6x5xf32>
    l1.state_write @w, %nw : tensor<6x5xf32>
    %b = l1.state_read @b : tensor<5xf32>
    %ub = l1.scale %gb, %lr : tensor<5xf32>, tensor<f32> -> tensor<5xf32>
    %nb = l1.sub %b, %ub : tensor<5xf32>, tensor<5xf32> -> tensor<5xf32>
    l1.state_write @b, %nb : tensor<5xf32>
    l1.return
  }
}
l1.tensor_graph @fb on @gpu_0 reads [@m::@ws] then @ret compute(%x: tensor<4x2x3xui8>, %y: tensor<4x1xui8>) {
  %w = l1.window_read @m::@ws[@w] : tensor<6x5xf32>
  %b = l1.window_read @m::@ws[@b] : tensor<5xf32>
  %g = l1.window_read @m::@ws[@g] : tensor<5xf32>
  %xf = l1.cast %x : tensor<4x2x3xui8> -> tensor<4x2x3xf32>
  %inv = l1.const 0.01 : tensor<f32>
  %xs = l1.scale %xf, %inv : tensor<4x2x3xf32>, tensor<f32> -> tensor<4x2x3xf32>
  %x0 = l1.reshape %xs : tensor<4x2x3xf32> -> tensor<4x6xf32>
  %labels = l1.reshape %y : tensor<4x1xui8> -> tensor<4xui8>
  %oh = l1.one_hot %labels classes 5 : tensor<4xui8> -> tensor<4x5xf32>
  %mm = l1.matmul %x0, %w : tensor<4x6xf32>, tensor<6x5xf32> -> tensor<4x5xf32>
  %bb = l1.broadcast %b : tensor<5xf32> -> tensor<4x5xf32>
  %z = l1.add %mm, %bb : tensor<4x5xf32>, tensor<4x5xf32> -> tensor<4x5xf32>
  %s = l1.reduce_sum %z axis 1 : tensor<4x5xf32> -> tensor<4xf32>
  %inv5 = l1.const 0.2 : tensor<f32>
  %mu = l1.scale %s, %inv5 : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %mub = l1.broadcast %mu dims [0] : tensor<4xf32> -> tensor<4x5xf32>
  %d = l1.sub %z, %mub : tensor<4x5xf32>, tensor<4x5xf32> -> tensor<4x5xf32>
  %d2 = l1.mul %d, %d : tensor<4x5xf32>, tensor<4x5xf32> -> tensor<4x5xf32>
  %vs = l1.reduce_sum %d2 axis 1 : tensor<4x5xf32> -> tensor<4xf32>
  %var = l1.scale %vs, %inv5 : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %eps = l1.const 1.0e-5 : tensor<4xf32>
  %ve = l1.add %var, %eps : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %sd = l1.sqrt %ve : tensor<4xf32> -> tensor<4xf32>
  %rs = l1.reciprocal %sd : tensor<4xf32> -> tensor<4xf32>
  %rsb = l1.broadcast %rs dims [0] : tensor<4xf32> -> tensor<4x5xf32>
  %xh = l1.mul %d, %rsb : tensor<4x5xf32>, tensor<4x5xf32> -> tensor<4x5xf32>
  %gbc = l1.broadcast %g : tensor<5xf32> -> tensor<4x5xf32>
  %n = l1.mul %xh, %gbc : tensor<4x5xf32>, tensor<4x5xf32> -> tensor<4x5xf32>
  %th = l1.tanh %n : tensor<4x5xf32> -> tensor<4x5xf32>
  %mx = l1.reduce_max %th axis 1 : tensor<4x5xf32> -> tensor<4xf32>
  %mxb = l1.broadcast %mx dims [0] : tensor<4xf32> -> tensor<4x5xf32>
  %sh = l1.sub %th, %mxb : tensor<4x5xf32>, tensor<4x5xf32> -> tensor<4x5xf32>
  %e = l1.exp %sh : tensor<4x5xf32> -> tensor<4x5xf32>
  %es = l1.reduce_sum %e axis 1 : tensor<4x5xf32> -> tensor<4xf32>
  %ls = l1.log %es : tensor<4xf32> -> tensor<4xf32>
  %lsb = l1.broadcast %ls dims [0] : tensor<4xf32> -> tensor<4x5xf32>
  %lp = l1.sub %sh, %lsb : tensor<4x5xf32>, tensor<4x5xf32> -> tensor<4x5xf32>
  %yl = l1.mul %oh, %lp : tensor<4x5xf32>, tensor<4x5xf32> -> tensor<4x5xf32>
  %tot = l1.reduce_sum %yl : tensor<4x5xf32> -> tensor<f32>
  %nq = l1.const -0.25 : tensor<f32>
  %ce = l1.scale %tot, %nq : tensor<f32>, tensor<f32> -> tensor<f32>
  %c = l1.cmp gt, %z, %n : tensor<4x5xf32>, tensor<4x5xf32> -> tensor<4x5xi1>
  %sel = l1.select %c, %z, %n : tensor<4x5xi1>, tensor<4x5xf32>, tensor<4x5xf32> -> tensor<4x5xf32>
  %lo = l1.min %sel, %th : tensor<4x5xf32>, tensor<4x5xf32> -> tensor<4x5xf32>
  %selm = l1.reduce_mean %lo : tensor<4x5xf32> -> tensor<f32>
  %loss = l1.add %ce, %selm : tensor<f32>, tensor<f32> -> tensor<f32>
  %p = l1.exp %lp : tensor<4x5xf32> -> tensor<4x5xf32>
  %dl = l1.sub %p, %oh : tensor<4x5xf32>, tensor<4x5xf32> -> tensor<4x5xf32>
  %q = l1.const 0.25 : tensor<f32>
  %dlg = l1.scale %dl, %q : tensor<4x5xf32>, tensor<f32> -> tensor<4x5xf32>
  %x0t = l1.transpose %x0 : tensor<4x6xf32> -> tensor<6x4xf32>
  %gwd = l1.matmul %x0t, %dlg : tensor<6x4xf32>, tensor<4x5xf32> -> tensor<6x5xf32>
  %sw = l1.sign %w : tensor<6x5xf32> -> tensor<6x5xf32>
  %aw = l1.abs %w : tensor<6x5xf32> -> tensor<6x5xf32>
  %pen = l1.mul %sw, %aw : tensor<6x5xf32>, tensor<6x5xf32> -> tensor<6x5xf32>
  %lam = l1.const 0.01 : tensor<f32>
  %pens = l1.scale %pen, %lam : tensor<6x5xf32>, tensor<f32> -> tensor<6x5xf32>
  %gw = l1.add %gwd, %pens : tensor<6x5xf32>, tensor<6x5xf32> -> tensor<6x5xf32>
  %gb0 = l1.reduce_sum %dlg axis 0 : tensor<4x5xf32> -> tensor<5xf32>
  %gb = l1.max %gb0, %b : tensor<5xf32>, tensor<5xf32> -> tensor<5xf32>
  l1.return %loss, %gw, %gb : tensor<f32>, tensor<6x5xf32>, tensor<5xf32>
}
l1.stage @ret on @cpu_0 process(%loss: !l1.buf<@gpu_0, tensor<f32>>, %gw: !l1.buf<@gpu_0, tensor<6x5xf32>>, %gb: !l1.buf<@gpu_0, tensor<5xf32>>) {
  l1.report "loss", %loss : !l1.buf<@gpu_0, tensor<f32>>
  l1.drop %loss : !l1.buf<@gpu_0, tensor<f32>>
  l1.send @m::@Upd(%gw, %gb) : !l1.buf<@gpu_0, tensor<6x5xf32>>, !l1.buf<@gpu_0, tensor<5xf32>>
  l1.end
}
l1.pipeline @train = @fb
l1.pipeline @back = @ret
l1.schedule pipelines [@train, @back] actors [@m] pipeline_depth 2
)mlir";

} // namespace

TEST_CASE("L1ToL0: emitted kernels compute what the reference computes", "[l1tol0]") {
  DialectRegistry registry;
  synpl::registerAllDialects(registry);
  synpl::registerUpstreamDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  std::string errors;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    errors += d.str() + "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kProgram, &ctx);
  REQUIRE(module);
  INFO(errors);
  REQUIRE(succeeded(verify(*module)));

  // Reference: initial state, inputs, graph, then the handler.
  auto graph = *module->getOps<l1::TensorGraphOp>().begin();
  auto actor = *module->getOps<l1::ActorOp>().begin();
  auto upd = *actor.getOps<l1::HandlerOp>().begin();
  ref::StateEnv state;
  REQUIRE(succeeded(ref::initializeActorState(actor, 7, state)));
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> pixel(0, 255), label(0, 5);
  Tensor x(ElementType::ui8(), {4, 2, 3}), y(ElementType::ui8(), {4, 1});
  for (double &v : x.data())
    v = pixel(rng);
  for (double &v : y.data())
    v = label(rng); // 5 is out of range: an all-zero one-hot row
  ref::StateEnv before = state;
  auto outs = ref::interpretTensorGraph(graph, {x, y}, state);
  REQUIRE(succeeded(outs));
  REQUIRE(succeeded(ref::interpretHandler(upd, {(*outs)[1], (*outs)[2]}, state)));

  // Lower.
  PassManager pm(&ctx);
  pm.addPass(createL1ToL0());
  INFO(errors);
  REQUIRE(succeeded(pm.run(*module)));
  auto plan = *module->getOps<l0uop::PlanOp>().begin();

  // Memory: every slot, state and inputs filled as the reference had them.
  UOpEvaluator eval;
  eval.allocate(plan);
  for (const char *f : {"w", "b", "g", "t"})
    eval.memory[std::string("m.") + f] = before.lookup("m", f)->data();
  eval.memory["fb.in0"] = x.data();
  eval.memory["fb.in1"] = y.data();

  // One step: stream_0's launches in order.
  for (l0uop::KernelOp kernel : UOpEvaluator::firstStreamKernels(plan))
    eval.run(kernel);

  CHECK(eval.outOfBounds == 0);
  auto check = [&](const std::string &slot, const Tensor &expected) {
    Tensor actual(expected.getElementType(), expected.getShape(), eval.memory[slot]);
    // The evaluator computes in double like the reference; the kernels'
    // constants are f32, which leaves ~1e-7 relative differences.
    ref::Comparison c = ref::compare(actual, expected, 1e-5, 1e-7);
    INFO(slot << ": " << c.message);
    CHECK(c.ok);
  };
  check("fb.out0", (*outs)[0]);
  check("fb.out1", (*outs)[1]);
  check("fb.out2", (*outs)[2]);
  for (const char *f : {"w", "b", "g", "t"})
    check(std::string("m.") + f, *state.lookup("m", f));
}

TEST_CASE("L1ToL0: the MNIST Adam handler's kernels update the state as the reference does",
          "[l1tol0]") {
  DialectRegistry registry;
  synpl::registerAllDialects(registry);
  synpl::registerUpstreamDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  std::string errors;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    errors += d.str() + "\n";
    return success();
  });
  // SYNPL_SOURCE_DIR is set on this file by test/unit/CMakeLists.txt
  // (__FILE__ would be relative under ccache's base_dir).
  std::string path = SYNPL_SOURCE_DIR "/examples/mnist/mnist.l1.mlir";
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(path, &ctx);
  INFO(path << "\n" << errors);
  REQUIRE(module);

  auto actor = *module->getOps<l1::ActorOp>().begin();
  auto upd = *actor.getOps<l1::HandlerOp>().begin();
  ref::StateEnv state;
  REQUIRE(succeeded(ref::initializeActorState(actor, 11, state)));
  // A few steps in: the warmup and bias corrections are not trivial.
  state.set("model_state", "step", Tensor::scalar(1234));
  ref::StateEnv before = state;
  std::mt19937 rng(5);
  std::normal_distribution<double> normal(0.0, 0.01);
  SmallVector<Tensor> grads;
  for (BlockArgument arg : upd.getBody().front().getArguments()) {
    auto t = cast<RankedTensorType>(arg.getType());
    Tensor g(ElementType::f32(), t.getShape());
    for (double &v : g.data())
      v = normal(rng);
    grads.push_back(g);
  }
  REQUIRE(succeeded(ref::interpretHandler(upd, grads, state)));
  // The pass replaces the L1 ops: take the field names first.
  std::vector<std::string> fields;
  for (auto field : actor.getOps<l1::StateOp>())
    fields.push_back(field.getSymName().str());

  PassManager pm(&ctx);
  pm.addPass(createL1ToL0());
  REQUIRE(succeeded(pm.run(*module)));
  auto plan = *module->getOps<l0uop::PlanOp>().begin();

  UOpEvaluator eval;
  eval.allocate(plan);
  for (const std::string &f : fields)
    eval.memory["model_state." + f] = before.lookup("model_state", f)->data();
  // The handler's arguments are the graph's outputs after the loss.
  for (auto [i, g] : llvm::enumerate(grads))
    eval.memory["forward_backward.out" + std::to_string(i + 1)] = g.data();

  int handlerKernels = 0;
  for (l0uop::KernelOp kernel : UOpEvaluator::firstStreamKernels(plan)) {
    if (!kernel.getSymName().starts_with("model_state.GradUpdate."))
      continue;
    eval.run(kernel);
    ++handlerKernels;
  }
  CHECK(handlerKernels > 0);
  CHECK(eval.outOfBounds == 0);
  CHECK(fields.size() == 31);
  for (const std::string &f : fields) {
    const Tensor &expected = *state.lookup("model_state", f);
    Tensor actual(expected.getElementType(), expected.getShape(),
                  eval.memory["model_state." + f]);
    ref::Comparison c = ref::compare(actual, expected, 1e-5, 1e-7);
    INFO(f << ": " << c.message);
    CHECK(c.ok);
  }
}

TEST_CASE("L1ToL0: short reductions nested in their reader compute what the reference computes",
          "[l1tol0]") {
  // A 2 x 2 max pool (the column pair's maximum, reshaped, then the row
  // pair's), a mean of sums over 8 and a max of sums over 3 (each inner
  // reduction a loop in its reader's kernel: one kernel each), and a sum
  // of sums over 9 (two kernels): five kernels, one slot between them.
  const char *text = R"mlir(
l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%x: tensor<2x6x4x3xf32>, %y: tensor<2x3x4x8xf32>, %z: tensor<2x3x4x9xf32>) {
  %w = l1.reshape %x : tensor<2x6x4x3xf32> -> tensor<2x6x2x2x3xf32>
  %cm = l1.reduce_max %w axis 3 : tensor<2x6x2x2x3xf32> -> tensor<2x6x2x3xf32>
  %h = l1.reshape %cm : tensor<2x6x2x3xf32> -> tensor<2x3x2x2x3xf32>
  %pm = l1.reduce_max %h axis 2 : tensor<2x3x2x2x3xf32> -> tensor<2x3x2x3xf32>
  %ys = l1.reduce_sum %y axis 3 : tensor<2x3x4x8xf32> -> tensor<2x3x4xf32>
  %ym = l1.reduce_mean %ys axis 2 : tensor<2x3x4xf32> -> tensor<2x3xf32>
  %ys1 = l1.reduce_sum %y axis 1 : tensor<2x3x4x8xf32> -> tensor<2x4x8xf32>
  %yx = l1.reduce_max %ys1 axis 2 : tensor<2x4x8xf32> -> tensor<2x4xf32>
  %zs = l1.reduce_sum %z axis 3 : tensor<2x3x4x9xf32> -> tensor<2x3x4xf32>
  %zt = l1.reduce_sum %zs axis 2 : tensor<2x3x4xf32> -> tensor<2x3xf32>
  l1.return %pm, %ym, %yx, %zt : tensor<2x3x2x3xf32>, tensor<2x3xf32>, tensor<2x4xf32>, tensor<2x3xf32>
}
l1.stage @sink on @cpu_0 process(%a: !l1.buf<@ram_0, tensor<2x3x2x3xf32>>, %b: !l1.buf<@ram_0, tensor<2x3xf32>>, %c: !l1.buf<@ram_0, tensor<2x4xf32>>, %d: !l1.buf<@ram_0, tensor<2x3xf32>>) {
  l1.drop %a : !l1.buf<@ram_0, tensor<2x3x2x3xf32>>
  l1.drop %b : !l1.buf<@ram_0, tensor<2x3xf32>>
  l1.drop %c : !l1.buf<@ram_0, tensor<2x4xf32>>
  l1.drop %d : !l1.buf<@ram_0, tensor<2x3xf32>>
  l1.end
}
l1.pipeline @p = @g
l1.pipeline @q = @sink
l1.schedule pipelines [@p, @q] actors [] pipeline_depth 1
)mlir";
  synpl::test::L1Program f(text);
  REQUIRE(f.module);
  INFO(f.errors);
  REQUIRE(succeeded(verify(*f.module)));
  SmallVector<Tensor> inputs = synpl::test::randomInputs(f.graph(), 11);
  ref::StateEnv state;
  auto expected = ref::interpretTensorGraph(f.graph(), inputs, state);
  REQUIRE(succeeded(expected));

  PassManager pm(&f.ctx);
  pm.addPass(createL1ToL0());
  REQUIRE(succeeded(pm.run(*f.module)));
  auto plan = *f.module->getOps<l0uop::PlanOp>().begin();
  int64_t kernels = 0, between = 0;
  plan.walk([&](l0uop::KernelOp) { ++kernels; });
  plan.walk([&](l0uop::SlotOp slot) {
    between += StringRef(slot.getSymName()).starts_with("g.t");
  });
  CHECK(kernels == 5);
  CHECK(between == 1); // the sums over 9 only
  synpl::test::checkFirstStream(plan, "g", inputs, *expected, 1e-6, 1e-7);
}
