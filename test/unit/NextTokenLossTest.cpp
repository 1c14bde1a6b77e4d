//===- NextTokenLossTest.cpp - Next-byte cross-entropy at L1 --------------===//
//
// A causal byte model (a sequence(scalar(u8), N) input, a
// sequence(dist(V), N) output) over a text field: buildTrainingGraph reads
// the field's windows and, as a second input, the same windows shifted by
// one byte (TrainingGraphSpec::nextInputs). The graph's loss, run in the
// reference interpreter (f64), must be the mean over every batch row and
// position of -log p(next byte), computed here directly from the
// parameters; its gradient must match central finite differences.
//
//===----------------------------------------------------------------------===//
#include "synpl/Conversion/L2ToL1/TrainingGraph.h"
#include "TestContext.h"
#include "synpl/Reference/L1Interpreter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace mlir;
using namespace synpl;
using synpl::ref::ElementType;
using synpl::ref::Tensor;

namespace {

// Batch 3, windows of 4 bytes, a vocabulary of 6, embedding width 3.
constexpr int64_t B = 3, T = 4, V = 6, D = 3;

const char *kSource = R"(
l3.data @corpus {
  l3.field @bytes : !l3.sequence<!l3.scalar<ui8>, 4>
}
l3.model @lm in @corpus::@bytes out !l3.sequence<!l3.dist<6>, 4> properties [causal]
l3.loss @objective {
  l3.divergence @ce(@lm::@out, @corpus::@bytes) weight 1.0
} combine weighted_sum
l3.goal minimize(@objective)
l2.methods @m for @lm
    sample stream_window<window = 4, stride = 1, batch = 3>
    infer(%x: tensor<3x4xui8>) {
      %e = l2.embed(vocab = 6, dim = 3, positions = 4) %x as "tok" : tensor<3x4xui8>
      %o = l2.linear(3, 6) %e as "head" : tensor<3x4x3xf32>
      %p = l2.softmax %o : tensor<3x4x6xf32>
      l2.yield %p : tensor<3x4x6xf32>
    }
    backward autodiff<mode = reverse>
    update adam<lr = 0.001>
)";

SymbolRefAttr nested(MLIRContext *ctx, StringRef data, StringRef field) {
  return SymbolRefAttr::get(ctx, data, {FlatSymbolRefAttr::get(ctx, field)});
}

} // namespace

TEST_CASE("next-token loss: cross-entropy of every position against the next byte, "
          "and its gradients",
          "[autodiff][text]") {
  auto ctx = synpl::test::makeContext();
  std::string diagnostics;
  ScopedDiagnosticHandler handler(ctx.get(), [&](Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kSource, ParserConfig(ctx.get()));
  INFO(diagnostics);
  REQUIRE(module);
  auto methods = *module->getOps<l2::MethodsOp>().begin();
  FailureOr<SmallVector<l2tol1::TrainableParam>> params = l2tol1::collectTrainableParams(methods);
  REQUIRE(succeeded(params));

  // The actor, an empty graph over the windows and their next bytes.
  Location loc = UnknownLoc::get(ctx.get());
  OpBuilder b = OpBuilder::atBlockEnd(module->getBody());
  auto actor = l1::ActorOp::create(b, loc, "model_state", "cpu_0");
  OpBuilder ab = OpBuilder::atBlockEnd(&actor.getBody().emplaceBlock());
  SmallVector<Attribute> stateRefs;
  for (const l2tol1::TrainableParam &p : *params) {
    l1::StateOp::create(ab, loc, p.state, RankedTensorType::get(p.shape, b.getF32Type()), p.init,
                        IntegerAttr());
    stateRefs.push_back(FlatSymbolRefAttr::get(ctx.get(), p.state));
  }
  l1::WindowOp::create(ab, loc, "weights", b.getArrayAttr(stateRefs),
                       b.getArrayAttr({FlatSymbolRefAttr::get(ctx.get(), "fb")}));
  SymbolRefAttr window = nested(ctx.get(), "model_state", "weights");
  auto graph = l1::TensorGraphOp::create(b, loc, "fb", "cpu_0", b.getArrayAttr({window}),
                                         FlatSymbolRefAttr::get(ctx.get(), "sink"));
  Block &entry = graph.getBody().emplaceBlock();
  auto bytes = RankedTensorType::get({B, T}, b.getIntegerType(8, /*isSigned=*/false));
  entry.addArgument(bytes, loc);
  entry.addArgument(bytes, loc);
  l2tol1::TrainingGraphSpec spec;
  spec.model = *module->getOps<l3::ModelOp>().begin();
  spec.loss = *module->getOps<l3::LossOp>().begin();
  spec.methods = methods;
  spec.window = window;
  SymbolRefAttr field = nested(ctx.get(), "corpus", "bytes");
  spec.inputFields = {field, nested(ctx.get(), "corpus", "bytes_next")};
  spec.nextInputs = {{field, 1u}};
  FailureOr<l2tol1::TrainingGraphOutputs> outputs =
      l2tol1::buildTrainingGraph(graph, spec, *params);
  REQUIRE(succeeded(outputs));
  REQUIRE(succeeded(verify(graph)));

  // A window stream: random bytes below V; the next-byte input is the
  // stream shifted by one, as the text ingest serves it.
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int> byte(0, V - 1);
  std::vector<int> stream(B * (T + 1));
  for (int &v : stream)
    v = byte(rng);
  Tensor in(ElementType::get(bytes.getElementType()).value(), {B, T});
  Tensor next = in;
  for (int64_t r = 0; r < B; ++r)
    for (int64_t t = 0; t < T; ++t) {
      in[r * T + t] = stream[r * (T + 1) + t];
      next[r * T + t] = stream[r * (T + 1) + t + 1];
    }
  std::vector<Tensor> inputs{in, next};

  ref::StateEnv state;
  std::normal_distribution<double> normal(0.0, 0.7);
  for (const l2tol1::TrainableParam &p : *params) {
    Tensor t(ElementType::f32(), p.shape);
    for (double &v : t.data())
      v = normal(rng);
    state.set("model_state", p.state, std::move(t));
  }
  auto param = [&](const std::string &n) { return *state.lookup("model_state", n); };

  // The loss, directly: logits = (table[x] + pos[t]) W + b.
  auto directLoss = [&]() {
    Tensor table = param("tok_table"), pos = param("tok_positions");
    Tensor w = param("head_weight"), bias = param("head_bias");
    double sum = 0;
    for (int64_t r = 0; r < B; ++r)
      for (int64_t t = 0; t < T; ++t) {
        int64_t x = (int64_t)in[r * T + t], y = (int64_t)next[r * T + t];
        double logits[V], m = -1e300, z = 0;
        for (int64_t c = 0; c < V; ++c) {
          logits[c] = bias[c];
          for (int64_t d = 0; d < D; ++d)
            logits[c] += (table[x * D + d] + pos[t * D + d]) * w[d * V + c];
          m = std::max(m, logits[c]);
        }
        for (int64_t c = 0; c < V; ++c)
          z += std::exp(logits[c] - m);
        sum += -(logits[y] - m - std::log(z));
      }
    return sum / (B * T);
  };
  auto run = [&](bool lossOnly) {
    ref::InterpretOptions options;
    if (lossOnly)
      options.onlyResults = SmallVector<unsigned>{0};
    FailureOr<SmallVector<Tensor>> out = ref::interpretTensorGraph(graph, inputs, state, options);
    REQUIRE(succeeded(out));
    return *out;
  };
  SmallVector<Tensor> full = run(false);
  CHECK(full[0][0] == Approx(directLoss()).epsilon(1e-12));

  // The same windows scored against the inputs themselves (no shift) give
  // another loss: the graph really reads the next-byte input.
  inputs[0] = in;
  inputs[1] = in;
  CHECK(std::abs(run(true)[0][0] - full[0][0]) > 1e-3);
  inputs[1] = next;

  // Gradients: central differences on every parameter entry.
  const double h = 1e-5;
  for (auto [i, p] : llvm::enumerate(*params)) {
    Tensor *value = state.lookup("model_state", p.state);
    REQUIRE(value);
    bool anyNonZero = false;
    for (int64_t at = 0; at < value->size(); ++at) {
      double saved = (*value)[at];
      (*value)[at] = saved + h;
      double up = run(true)[0][0];
      (*value)[at] = saved - h;
      double down = run(true)[0][0];
      (*value)[at] = saved;
      double fd = (up - down) / (2 * h), g = full[1 + i][at];
      INFO("parameter " << p.state << " entry " << at << ": analytic " << g << ", fd " << fd);
      CHECK(std::abs(fd - g) <= 1e-7 + 1e-5 * std::abs(fd));
      anyNonZero |= g != 0.0;
    }
    CHECK(anyNonZero);
  }
}
