//===- L2ResourcesTest.cpp - The L2 resource estimate on hand-counted models ===//
#include "synpl/Dialect/L2/L2Model.h"
#include "synpl/Dialect/L2/L2Ops.h"
#include "synpl/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <catch2/catch.hpp>
#include <string>

using namespace mlir;
using namespace synpl;
using namespace synpl::l2;

namespace {
/// Parses (and verifies) an l3 model over 4-wide rows plus one l2.methods
/// whose pieces the test chooses.
struct Program {
  MLIRContext context;
  OwningOpRef<ModuleOp> module;

  Program(const std::string &infer, const std::string &backward,
          const std::string &update, int64_t batch = 2) {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    std::string b = std::to_string(batch);
    std::string source = R"(
      l3.data @rows { l3.field @x : tensor<4xf32> }
      l3.model @net in @rows::@x out !l3.dist<2> properties []
      l2.methods @m for @net
          sample epoch_shuffle<batch = )" + b + R"(>
          infer(%x: tensor<)" + b + R"(x4xf32>) {)" + infer + R"(}
          backward )" + backward + R"(
          update )" + update + "\n";
    module = parseSourceString<ModuleOp>(source, &context);
  }

  MethodsOp methods() { return *module->getOps<MethodsOp>().begin(); }
};

// linear(4, 3) -> relu -> linear(3, 2) -> softmax over a batch of 2.
const char *kMlp = R"(
  %0 = l2.linear(4, 3) %x as "fc1" : tensor<2x4xf32>
  %1 = l2.act(relu) %0 : tensor<2x3xf32>
  %2 = l2.linear(3, 2) %1 as "fc2" : tensor<2x3xf32>
  %3 = l2.softmax %2 : tensor<2x2xf32>
  l2.yield %3 : tensor<2x2xf32>
)";
} // namespace

TEST_CASE("the MLP's parameters are named and counted exactly", "[l2]") {
  Program p(kMlp, "autodiff<mode = reverse>", "sgd<lr = 0.1>");
  REQUIRE(p.module);
  SmallVector<ParamInfo> params = collectParams(p.methods());
  REQUIRE(params.size() == 4);
  CHECK(params[0].name == "fc1.weight");
  CHECK(params[0].shape == SmallVector<int64_t, 4>{4, 3});
  CHECK(params[1].name == "fc1.bias");
  CHECK(params[3].name == "fc2.bias");
  CHECK(params[3].count() == 2);
  CHECK(composedDepth(p.methods()) == 2);
}

TEST_CASE("reverse-mode autodiff with sgd, counted by hand", "[l2]") {
  Program p(kMlp, "autodiff<mode = reverse>", "sgd<lr = 0.1>");
  REQUIRE(p.module);
  FailureOr<ResourceEstimate> est = estimateResources(p.methods());
  REQUIRE(succeeded(est));
  // fc1: 4*3 + 3 = 15, fc2: 3*2 + 2 = 8.
  CHECK(est->params == 23);
  CHECK(est->paramBytes == 23 * 4);
  CHECK(est->gradientBytes == 23 * 4);
  CHECK(est->optimizerStateBytes == 0);
  // fc1: 2 rows * (2*4*3 + 3) = 54; relu: 6; fc2: 2 * (2*3*2 + 2) = 28;
  // softmax: 5 * 4 = 20.
  CHECK(est->forwardFlops == 108);
  // forward + backward = 3 * 108; sgd: 2 per parameter.
  CHECK(est->flopsPerStep == 3 * 108 + 2 * 23);
  // Every value is kept: input 8, fc1 6, relu 6, fc2 4, softmax 4 floats.
  CHECK(est->activationBytes == 28 * 4);
  CHECK(est->totalBytes() == 92 + 92 + 112);
  CHECK(est->forwardLatencyMs() == Approx(108 / kReferenceFlopsPerSecond * 1e3));
  // The compute-bound part: fc1's 2*2*4*3 = 48 and fc2's 2*2*3*2 = 24
  // multiply-adds, three times, less fc1's input gradient (it reads the
  // model's input).
  CHECK(est->contractionFlopsPerStep == 3 * 72 - 48);
  // The memory-bound part: relu's 6 and softmax's 4 floats, streamed six
  // times; sgd reads the parameters and gradients and writes the former.
  CHECK(est->elementwiseStreamBytes == 6 * 10 * 4);
  CHECK(est->updateStreamBytes == 3 * 23 * 4);
}

TEST_CASE("adam keeps two moments per parameter, ema a third copy", "[l2]") {
  Program p(kMlp, "autodiff<mode = reverse>",
            "ema<decay = 0.99, inner = adam<lr = 1.0e-3>>");
  REQUIRE(p.module);
  FailureOr<ResourceEstimate> est = estimateResources(p.methods());
  REQUIRE(succeeded(est));
  CHECK(est->optimizerStateBytes == 3 * 23 * 4);
  // adam 12 + ema 3 FLOPs per parameter element.
  CHECK(est->flopsPerStep == 3 * 108 + 15 * 23);
  // Each of the three state copies read and written besides sgd's traffic.
  CHECK(est->updateStreamBytes == (3 + 2 * 3) * 23 * 4);
}

TEST_CASE("gradient-free methods keep no activations", "[l2]") {
  Program p(kMlp, "evolution<pop = 10, sigma = 0.1, selection = rank>",
            "sgd<lr = 0.1>");
  REQUIRE(p.module);
  FailureOr<ResourceEstimate> est = estimateResources(p.methods());
  REQUIRE(succeeded(est));
  CHECK(est->flopsPerStep == 10 * 108 + 2 * 23);
  CHECK(est->gradientBytes == 0);
  // The largest value (the 2x4 input) in and out.
  CHECK(est->activationBytes == 2 * 8 * 4);
}

TEST_CASE("a recurrent cell's parameters count once, its work per step", "[l2]") {
  Program p(R"(
    %0 = l2.recurrent(steps = 5) %x : tensor<2x4xf32> {
    ^bb0(%s: tensor<2x4xf32>):
      %1 = l2.linear(4, 4) %s : tensor<2x4xf32>
      l2.yield %1 : tensor<2x4xf32>
    }
    %2 = l2.linear(4, 2) %0 : tensor<2x4xf32>
    l2.yield %2 : tensor<2x2xf32>
  )",
            "autodiff<mode = reverse>", "sgd<lr = 0.1>");
  REQUIRE(p.module);
  FailureOr<ResourceEstimate> est = estimateResources(p.methods());
  REQUIRE(succeeded(est));
  CHECK(est->params == (4 * 4 + 4) + (4 * 2 + 2));
  // cell: 2 * (2*4*4 + 4) = 72, five times; head: 2 * (2*4*2 + 2) = 36.
  CHECK(est->forwardFlops == 5 * 72 + 36);
  // Activations: input 8; cell output 8 per step (5 steps); recurrent
  // result 8; head 4.
  CHECK(est->activationBytes == (8 + 5 * 8 + 8 + 4) * 4);
}

TEST_CASE("muon's Newton-Schulz work follows the matrix shape", "[l2]") {
  Program p(kMlp, "autodiff<mode = reverse>",
            "per_param<others = sgd<lr = 0.1>, matrix = muon<lr = 0.02, ns_steps = 1>>");
  REQUIRE(p.module);
  FailureOr<ResourceEstimate> est = estimateResources(p.methods());
  REQUIRE(succeeded(est));
  // fc1.weight [4, 3]: a = 3, b = 4: 4*9*4 + 2*27 = 198 per iteration, plus
  // 4 momentum FLOPs per element (12); fc2.weight [3, 2]: a = 2, b = 3:
  // 4*4*3 + 2*8 = 64, plus 4*6. Biases (5 elements) take sgd's 2.
  uint64_t update = (198 + 48) + (64 + 24) + 2 * 5;
  CHECK(est->flopsPerStep == 3 * 108 + update);
  CHECK(est->optimizerStateBytes == (12 + 6) * 4);
}

TEST_CASE("depth counts stages on the longest path, through sub-DAGs", "[l2]") {
  // Residual: fc1 -> fc2 -> add(fc1, fc2) -> mixture(expert: 2 stages,
  // expert: 1 stage; gate: 1 stage) -> head: 2 + 2 + 1 = 5 stages.
  Program p(R"(
    %0 = l2.linear(4, 4) %x : tensor<2x4xf32>
    %1 = l2.linear(4, 4) %0 : tensor<2x4xf32>
    %2 = l2.add %0, %1 : tensor<2x4xf32>, tensor<2x4xf32>
    %3 = l2.mixture(top_k = 1) %2 : tensor<2x4xf32> -> tensor<2x4xf32> experts({
    ^bb0(%in: tensor<2x4xf32>):
      %a = l2.linear(4, 4) %in : tensor<2x4xf32>
      %b = l2.linear(4, 4) %a : tensor<2x4xf32>
      l2.yield %b : tensor<2x4xf32>
    }, {
    ^bb0(%in: tensor<2x4xf32>):
      %a = l2.linear(4, 4) %in : tensor<2x4xf32>
      l2.yield %a : tensor<2x4xf32>
    }) gate {
    ^bb0(%in: tensor<2x4xf32>):
      %g = l2.linear(4, 2) %in : tensor<2x4xf32>
      l2.yield %g : tensor<2x2xf32>
    }
    %4 = l2.linear(4, 2) %3 as "head" : tensor<2x4xf32>
    l2.yield %4 : tensor<2x2xf32>
  )",
            "autodiff<mode = reverse>", "sgd<lr = 0.1>");
  REQUIRE(p.module);
  CHECK(composedDepth(p.methods()) == 5);

  // Unlabelled layers are named <mnemonic>_<k> in pre-order.
  auto names = layerNames(p.methods());
  SmallVector<std::string> all;
  for (auto &entry : names)
    all.push_back(entry.second);
  CHECK(all == SmallVector<std::string>{"linear_0", "linear_1", "add_0", "mixture_0",
                                        "linear_2", "linear_3", "linear_4",
                                        "linear_5", "head"});

  // top_k = 1: the gate and the most expensive expert run. Per 2 rows,
  // linear(4, 4) is 2 * (2*4*4 + 4) = 72 FLOPs and linear(4, 2) 36.
  FailureOr<ResourceEstimate> est = estimateResources(p.methods());
  REQUIRE(succeeded(est));
  uint64_t add = 8;
  CHECK(est->forwardFlops == 72 + 72 + add + 36 + 2 * 72 + 36);
}

TEST_CASE("findCycle names the ops along a cycle, first-written first", "[l2]") {
  MLIRContext context;
  DialectRegistry registry;
  registerAllDialects(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
  // Parsed without verification: the cycle would (rightly) be rejected.
  ParserConfig config(&context, /*verifyAfterParse=*/false);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"(
    l2.methods @m for @net
        sample epoch_shuffle<batch = 2>
        infer(%x: tensor<2x4xf32>) {
          %0 = l2.act(relu) %x : tensor<2x4xf32>
          %1 = l2.add %0, %3 : tensor<2x4xf32>, tensor<2x4xf32>
          %2 = l2.linear(4, 4) %1 as "a" : tensor<2x4xf32>
          %3 = l2.linear(4, 4) %2 as "b" : tensor<2x4xf32>
          l2.yield %3 : tensor<2x4xf32>
        }
        backward autodiff<mode = reverse>
        update sgd<lr = 0.1>
  )",
                                                             config);
  REQUIRE(module);
  MethodsOp methods = *module->getOps<MethodsOp>().begin();
  SmallVector<Operation *> cycle = findCycle(methods.getInferBlock());
  REQUIRE(cycle.size() == 3);
  CHECK(isa<AddOp>(cycle[0]));
  CHECK(describeLayer(cycle[1]) == "'l2.linear' \"a\"");
  CHECK(describeLayer(cycle[2]) == "'l2.linear' \"b\"");
  CHECK(failed(estimateResources(methods)));
}

TEST_CASE("checkpointing trades activations for a recomputation", "[l2]") {
  Program p(kMlp, "#l2.autodiff<mode = reverse, checkpoint = [\"fc1\"]>",
            "#l2.sgd<lr = 0.1>");
  REQUIRE(p.module);
  FailureOr<ResourceEstimate> est = estimateResources(p.methods());
  REQUIRE(succeeded(est));
  // fc1 is recomputed in the backward pass (its forward FLOPs: 2 * 2*4*3
  // multiply-adds + 6 bias adds = 54) and its output (6 floats) is not kept
  // of the 28 the plain reverse pass keeps.
  CHECK(est->flopsPerStep == 3 * 108 + 54 + 2 * 23);
  CHECK(est->activationBytes == (28 - 6) * 4);
}

TEST_CASE("dfa pays for the feedback projection of the error", "[l2]") {
  Program p(kMlp, "#l2.dfa<feedback_dim = 2>", "#l2.sgd<lr = 0.1>");
  REQUIRE(p.module);
  FailureOr<ResourceEstimate> est = estimateResources(p.methods());
  REQUIRE(succeeded(est));
  // 2 forward passes' worth plus 2 * feedback_dim FLOPs per parameter.
  CHECK(est->flopsPerStep == 2 * 108 + 2 * 2 * 23 + 2 * 23);
}
