//===- AutodiffTest.cpp - L2 -> L1 backward expansion ----------------------===//
//
// Builds training graphs from L3 + L2 source (buildTrainingGraph), verifies
// them, runs them in the reference interpreter (f64) and checks
// (AutodiffHarness.h; the windowed, attention, random and convolutional
// layers are in AutodiffLayersTest.cpp):
//  * every gradient against central finite differences of the graph's own
//    loss, on random entries of every parameter, for each covered layer,
//    loss term and combinator;
//  * the spec's MNIST method against the hand-written graph of
//    examples/fashion_mnist/fashion_mnist.l1.mlir (same numbers, similar op
//    count);
//  * what cannot be lowered is a located `lowered N of M ops; not lowered:`
//    error and leaves the body empty.
//
//===----------------------------------------------------------------------===//
#include "AutodiffHarness.h"

using namespace autodiff_test;

TEST_CASE("autodiff: the MNIST method's gradients match finite differences", "[autodiff]") {
  auto b = buildOk(mlp(), {"mnist.images", "mnist.labels"});
  CHECK(b->outputs->hasCorrect);
  std::vector<std::string> names;
  for (const auto &p : b->params)
    names.push_back(p.state);
  CHECK(names == std::vector<std::string>{"fc1_weight", "fc1_bias", "norm1_gain", "norm1_bias",
                                          "fc2_weight", "fc2_bias", "norm2_gain", "norm2_bias",
                                          "fc3_weight", "fc3_bias"});
  CHECK(b->params[0].init == l1::InitKind::kaiming);
  CHECK(b->params[1].init == l1::InitKind::zeros);
  CHECK(b->params[2].init == l1::InitKind::ones);

  std::vector<Tensor> inputs = randomInputs(b->graph, 1, 3);
  // A label outside [0, 3) (a padded row): loss 0 and gradient 0 for that row.
  inputs[1][2] = 7;
  ref::StateEnv state = randomState(*b, 2);
  checkGradients(*b, inputs, state);

  // correct counts rows (an integer in [0, 4]: the unlabelled row never
  // counts); its value is checked against the hand-written graph below.
  SmallVector<Tensor> out = run(*b, inputs, state);
  REQUIRE(out.size() == 12);
  double correct = out.back()[0];
  CHECK(correct == std::floor(correct));
  CHECK(correct >= 0);
  CHECK(correct <= 4);
}

TEST_CASE("autodiff: the generated MNIST graph computes the hand-written one", "[autodiff]") {
  std::string dir = SYNPL_SOURCE_DIR;
  auto b =
      buildOk(readFile(dir + "/examples/mnist/mnist.l2.mlir"), {"mnist.images", "mnist.labels"});
  REQUIRE(b->outputs->hasCorrect);

  // The blueprint: examples/fashion_mnist/fashion_mnist.l1.mlir, whose graph
  // reads ui8 pixels and scales them by 1/255 itself.
  Built hand;
  hand.module =
      parseSourceString<ModuleOp>(readFile(dir + "/examples/fashion_mnist/fashion_mnist.l1.mlir"),
                                  ParserConfig(hand.ctx.get()));
  REQUIRE(hand.module);
  hand.graph = hand.module->lookupSymbol<l1::TensorGraphOp>("forward_backward");
  REQUIRE(hand.graph);

  // Same op count give or take the input scaling (theirs) and the exact
  // cross-entropy gradient for rows without a label (ours): no blow-up.
  unsigned ours = b->bodyOps(), theirs = hand.bodyOps();
  INFO("generated " << ours << " ops, hand-written " << theirs);
  CHECK(ours <= theirs + theirs / 20);
  CHECK(ours + theirs / 20 >= theirs);

  // The whole module (L3, L2 and the L1 actor and graph) passes the L1
  // verifiers, symbol uses included (L1.2 window reads, L1.5 shapes, L1.8
  // reachability), once a system, a feeding stage and a sink complete it.
  {
    std::string text;
    llvm::raw_string_ostream os(text);
    b->module->print(os, OpPrintingFlags().assumeVerified());
    text = replaceAll(text, "l3.data @mnist", "l3.data @mnist_l3");
    text = replaceAll(text, "@mnist::@", "@mnist_l3::@");
    text.erase(text.rfind('}'));
    auto buf = [](std::string t) { return "!l1.buf<@ram_0, " + t + ">"; };
    text += R"(
  l1.system @host {
    l1.node @ssd_0 storage
    l1.node @ram_0 memory {capacity = "16GB"}
    l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
    l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
    l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  }
  l1.data @mnist {
    l1.field @images : tensor<28x28xf32> at @ssd_0 path "/x" format idx
    l1.field @labels : tensor<1xui8> at @ssd_0 path "/y" format idx
  }
  l1.stage @load on @cpu_0 process() {
    %x, %y = l1.read_batch @mnist [@images, @labels] batch 128 shuffle drop_last seed 0 : )" +
            buf("tensor<128x28x28xf32>") + ", " + buf("tensor<128x1xui8>") + R"(
    l1.forward @fb(%x, %y) : )" +
            buf("tensor<128x28x28xf32>") + ", " + buf("tensor<128x1xui8>") +
            "\n  }\n  l1.stage @sink on @cpu_0 process(";
    std::string drops;
    for (auto [i, t] : llvm::enumerate(b->graph.getOutputTypes())) {
      std::string ts;
      llvm::raw_string_ostream ts_os(ts);
      ts_os << t;
      text += (i ? ", %r" : "%r") + std::to_string(i) + ": " + buf(ts);
      drops += "    l1.drop %r" + std::to_string(i) + " : " + buf(ts) + "\n";
    }
    text += ") {\n" + drops +
            "    l1.end\n  }\n"
            "  l1.pipeline @train = @load -> @fb -> @sink\n"
            "  l1.schedule pipelines [@train] actors [@model_state] pipeline_depth 1\n}\n";
    Built full;
    full.handler = std::make_unique<ScopedDiagnosticHandler>(full.ctx.get(), [&](Diagnostic &d) {
      full.diagnostics.push_back(d.str());
      return success();
    });
    full.module = parseSourceString<ModuleOp>(text, ParserConfig(full.ctx.get()));
    INFO(full.allDiagnostics());
    CHECK(full.module);
  }

  std::mt19937_64 rng(3);
  Tensor pixels(ElementType::ui8(), {128, 28, 28});
  Tensor labels(ElementType::ui8(), {128, 1});
  std::uniform_int_distribution<int> byte(0, 255), label(0, 9);
  for (double &v : pixels.data())
    v = byte(rng);
  for (double &v : labels.data())
    v = label(rng);
  Tensor scaled(ElementType::f32(), {128, 28, 28});
  for (int64_t i = 0; i < pixels.size(); ++i)
    scaled[i] = pixels[i] * (1.0 / 255.0);

  ref::StateEnv ourState = randomState(*b, 4), theirState;
  const char *theirNames[] = {"w1", "b1", "g1", "be1", "w2", "b2", "g2", "be2", "w3", "b3"};
  REQUIRE(b->params.size() == 10);
  for (auto [i, p] : llvm::enumerate(b->params))
    theirState.set("model_state", theirNames[i], *ourState.lookup("model_state", p.state));

  SmallVector<Tensor> got = run(*b, {scaled, labels}, ourState);
  FailureOr<SmallVector<Tensor>> want =
      ref::interpretTensorGraph(hand.graph, {pixels, labels}, theirState);
  REQUIRE(succeeded(want));
  REQUIRE(got.size() == want->size());
  for (size_t i = 0; i < got.size(); ++i) {
    ref::Comparison c = ref::compare(got[i], (*want)[i], 1e-9, 1e-12);
    INFO("result " << i << ": " << c.message);
    CHECK(c.ok);
  }
}

TEST_CASE("autodiff: rms and group norm, relu, silu, swish, a residual add, dropout(0), "
          "p = 2 on params and on the output",
          "[autodiff]") {
  std::string src = program({"x : tensor<6xf32>", "y : tensor<1xui8>"}, "net", "!l3.dist<3>",
                            {"l3.divergence @ce(@net::@out, @d::@y) weight 1.0",
                             "l3.norm @decay(@net::@params, p = 2) weight 1.0e-2",
                             "l3.norm @peaky(@net::@out, p = 2) weight 0.5"},
                            4, "%x: tensor<4x6xf32>", R"(
      %h0 = l2.linear(6, 8) %x as "fc1" : tensor<4x6xf32>
      %n0 = l2.norm(rms) %h0 as "rms1" : tensor<4x8xf32>
      %a0 = l2.act(relu) %n0 : tensor<4x8xf32>
      %h1 = l2.linear(8, 8) %a0 as "fc2" : tensor<4x8xf32>
      %a1 = l2.act(silu) %h1 : tensor<4x8xf32>
      %r = l2.add %a1, %h0 : tensor<4x8xf32>, tensor<4x8xf32>
      %n1 = l2.norm(group(2)) %r as "gn" : tensor<4x8xf32>
      %a2 = l2.act(swish) %n1 : tensor<4x8xf32>
      %d = l2.dropout(0.0) %a2 : tensor<4x8xf32>
      %h2 = l2.linear(8, 3) %d as "fc3" : tensor<4x8xf32>
      %p = l2.softmax %h2 : tensor<4x3xf32>
      l2.yield %p : tensor<4x3xf32>
)");
  auto b = buildOk(src, {"d.x", "d.y"});
  CHECK(b->params.size() == 9); // rms has a gain only
  std::vector<Tensor> inputs = randomInputs(b->graph, 5, 3);
  for (double &v : inputs[0].data())
    v = 4.0 * v - 2.0; // both signs through the relu
  checkGradients(*b, inputs, randomState(*b, 6));
}

TEST_CASE("autodiff: reconstruction and an activation norm (an autoencoder)", "[autodiff]") {
  std::string src = program({"x : tensor<6xf32>"}, "ae", "tensor<6xf32>",
                            {"l3.reconstruction @rec(@ae::@in, @ae::@out) weight 1.0",
                             "l3.norm @sparse(@ae::@out, p = 1) weight 1.0e-2"},
                            4, "%x: tensor<4x6xf32>", R"(
      %h = l2.linear(6, 3) %x as "enc" : tensor<4x6xf32>
      %a = l2.act(gelu) %h : tensor<4x3xf32>
      %o = l2.linear(3, 6) %a as "dec" : tensor<4x3xf32>
      l2.yield %o : tensor<4x6xf32>
)");
  auto b = buildOk(src, {"d.x"});
  CHECK_FALSE(b->outputs->hasCorrect);
  b->hasL1Term = false; // the L1 term is on activations, not parameters
  std::vector<Tensor> inputs = randomInputs(b->graph, 8, 1);
  ref::StateEnv state = randomState(*b, 9);
  checkGradients(*b, inputs, state);

  // The loss, computed directly: mean((o - x)^2) + 1e-2 * sum|o| / batch.
  const Tensor &x = inputs[0];
  const Tensor &we = *state.lookup("model_state", "enc_weight");
  const Tensor &be = *state.lookup("model_state", "enc_bias");
  const Tensor &wd = *state.lookup("model_state", "dec_weight");
  const Tensor &bd = *state.lookup("model_state", "dec_bias");
  double sq = 0, l1 = 0;
  for (int64_t r = 0; r < 4; ++r) {
    double a[3];
    for (int64_t j = 0; j < 3; ++j) {
      double z = be[j];
      for (int64_t i = 0; i < 6; ++i)
        z += x[r * 6 + i] * we[i * 3 + j];
      a[j] = 0.5 * z * (1 + std::tanh(std::sqrt(2 / M_PI) * (z + 0.044715 * z * z * z)));
    }
    for (int64_t k = 0; k < 6; ++k) {
      double o = bd[k];
      for (int64_t j = 0; j < 3; ++j)
        o += a[j] * wd[j * 6 + k];
      sq += (o - x[r * 6 + k]) * (o - x[r * 6 + k]);
      l1 += std::abs(o);
    }
  }
  CHECK(run(*b, inputs, state)[0][0] == Approx(sq / 24 + 1e-2 * l1 / 4).epsilon(1e-12));
}

TEST_CASE("autodiff: reshape gives an image its channel and a head its output's shape",
          "[autodiff]") {
  // The L3 -> L2 search's conv autoencoder: [N, 4, 4] -> [N, 1, 4, 4] ->
  // conv -> flatten -> linear -> [N, 4, 4], reconstructing the input.
  std::string src = program({"x : tensor<4x4xf32>"}, "ae", "tensor<4x4xf32>",
                            {"l3.reconstruction @rec(@ae::@in, @ae::@out) weight 1.0"}, 3,
                            "%x: tensor<3x4x4xf32>", R"(
      %r = l2.reshape [1, 4, 4] %x : tensor<3x4x4xf32>
      %c = l2.conv(1, 2, kernel = 3, stride = 1, padding = 1) %r as "conv1" : tensor<3x1x4x4xf32>
      %a = l2.act(gelu) %c : tensor<3x2x4x4xf32>
      %f = l2.flatten %a : tensor<3x2x4x4xf32>
      %o = l2.linear(32, 16) %f as "dec" : tensor<3x32xf32>
      %y = l2.reshape [4, 4] %o : tensor<3x16xf32>
      l2.yield %y : tensor<3x4x4xf32>
)");
  auto b = buildOk(src, {"d.x"});
  checkGradients(*b, randomInputs(b->graph, 30, 1), randomState(*b, 31));
}

TEST_CASE("autodiff: a recurrent cell unrolled with shared weights, cross-entropy "
          "against a distribution, mean of the terms, p = 1.5",
          "[autodiff]") {
  std::string src = program({"x : tensor<6xf32>", "t : !l3.dist<3>"}, "rnn", "!l3.dist<3>",
                            {"l3.divergence @ce(@rnn::@out, @d::@t) weight 1.0",
                             "l3.norm @reg(@rnn::@params, p = 1.5) weight 1.0"},
                            4, "%x: tensor<4x6xf32>", R"(
      %h0 = l2.linear(6, 6) %x as "inp" : tensor<4x6xf32>
      %r = l2.recurrent(steps = 3) %h0 : tensor<4x6xf32> {
      ^bb0(%s: tensor<4x6xf32>):
        %0 = l2.linear(6, 6) %s as "cell" : tensor<4x6xf32>
        %1 = l2.act(gelu) %0 : tensor<4x6xf32>
        l2.yield %1 : tensor<4x6xf32>
      }
      %o = l2.linear(6, 3) %r as "head" : tensor<4x6xf32>
      %p = l2.softmax %o : tensor<4x3xf32>
      l2.yield %p : tensor<4x3xf32>
)",
                            "mean");
  auto b = buildOk(src, {"d.x", "d.t"});
  CHECK_FALSE(b->outputs->hasCorrect); // no integer labels
  CHECK(b->params.size() == 6);        // the cell's weights once
  // Three instances of the cell's matmul forward (+ one each for inp, head).
  unsigned matmuls = 0;
  b->graph.walk([&](l1::MatmulOp) { ++matmuls; });
  CHECK(matmuls >= 5);
  checkGradients(*b, randomInputs(b->graph, 10, 1, /*distRows=*/true), randomState(*b, 11));
}

TEST_CASE("autodiff: an embedding (a gather, its gradient a scatter_add over repeated ids) "
          "and the max combinator",
          "[autodiff]") {
  std::string src = program({"tokens : tensor<3xi32>", "y : tensor<1xui8>"}, "bag", "!l3.dist<3>",
                            {"l3.divergence @ce(@bag::@out, @d::@y) weight 1.0",
                             "l3.norm @decay(@bag::@params, p = 2) weight 0.05"},
                            4, "%t: tensor<4x3xi32>", R"(
      %e = l2.embed(vocab = 5, dim = 4) %t as "tok" : tensor<4x3xi32>
      %f = l2.flatten %e : tensor<4x3x4xf32>
      %o = l2.linear(12, 3) %f as "out" : tensor<4x12xf32>
      %p = l2.softmax %o : tensor<4x3xf32>
      l2.yield %p : tensor<4x3xf32>
)",
                            "max");
  auto b = buildOk(src, {"d.tokens", "d.y"});
  unsigned gathers = 0, scatters = 0;
  b->graph.walk([&](l1::GatherOp) { ++gathers; });
  b->graph.walk([&](l1::ScatterAddOp) { ++scatters; });
  CHECK(gathers == 1);
  CHECK(scatters == 1);
  // 12 ids over a vocabulary of 5: rows repeat, so the scatter sums.
  std::vector<Tensor> inputs = randomInputs(b->graph, 12, 5);
  for (double &v : inputs[1].data())
    v = std::fmod(v, 3.0);
  ref::StateEnv state = randomState(*b, 13);
  auto scaleParams = [&](double f) {
    double decay = 0;
    for (const auto &p : b->params)
      for (double &v : state.lookup("model_state", p.state)->data()) {
        v *= f;
        decay += 0.05 * v * v;
      }
    return decay;
  };
  // Small weights: cross-entropy (about log 3) is the max.
  double decay = scaleParams(0.2);
  double loss = run(*b, inputs, state)[0][0];
  CHECK(loss > decay);
  CHECK(loss > 0.5);
  checkGradients(*b, inputs, state);
  // A shift of every class's bias leaves the softmax alone but makes the
  // weighted squared L2 norm of the parameters the max.
  for (double &v : state.lookup("model_state", "out_bias")->data())
    v += 30.0;
  decay = scaleParams(1.0);
  loss = run(*b, inputs, state)[0][0];
  CHECK(loss == Approx(decay).epsilon(1e-12));
  checkGradients(*b, inputs, state);
}

TEST_CASE("autodiff: rank-3 activations (linear, group and layer norm, an inner "
          "softmax) and an inlined l2.graph written out of order",
          "[autodiff]") {
  std::string src =
      program({"x : tensor<2x6xf32>", "y : tensor<1xui8>"}, "seq", "!l3.dist<3>",
              {"l3.divergence @ce(@seq::@out, @d::@y) weight 1.0"}, 4, "%x: tensor<4x2x6xf32>", R"(
      %p = l2.softmax %o : tensor<4x3xf32>
      %o = l2.linear(8, 3) %g as "head" : tensor<4x8xf32>
      %g = l2.graph(%f) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
      ^bb0(%in: tensor<4x8xf32>):
        %1 = l2.add %0, %in : tensor<4x8xf32>, tensor<4x8xf32>
        %0 = l2.linear(8, 8) %in as "inner" : tensor<4x8xf32>
        l2.yield %1 : tensor<4x8xf32>
      }
      %f = l2.flatten %s : tensor<4x2x4xf32>
      %s = l2.softmax %n1 : tensor<4x2x4xf32>
      %n1 = l2.norm(layer) %n0 as "ln" : tensor<4x2x4xf32>
      %n0 = l2.norm(group(2)) %h as "gn" : tensor<4x2x4xf32>
      %h = l2.linear(6, 4) %x as "proj" : tensor<4x2x6xf32>
      l2.yield %p : tensor<4x3xf32>
)");
  auto b = buildOk(src, {"d.x", "d.y"});
  CHECK(b->params.size() == 10);
  checkGradients(*b, randomInputs(b->graph, 16, 3), randomState(*b, 17));
}

TEST_CASE("autodiff: cross-entropy on an output that no softmax makes", "[autodiff]") {
  // p + p is positive but not normalised: the divergence reads it as
  // probabilities (log of the output) instead of fusing with a softmax, and
  // the add sends twice the adjoint into the one value it reads twice.
  std::string src =
      program({"x : tensor<6xf32>", "y : tensor<1xui8>"}, "net", "!l3.dist<3>",
              {"l3.divergence @ce(@net::@out, @d::@y) weight 1.0"}, 4, "%x: tensor<4x6xf32>", R"(
      %h = l2.linear(6, 3) %x as "fc" : tensor<4x6xf32>
      %p = l2.softmax %h : tensor<4x3xf32>
      %o = l2.add %p, %p : tensor<4x3xf32>, tensor<4x3xf32>
      l2.yield %o : tensor<4x3xf32>
)");
  auto b = buildOk(src, {"d.x", "d.y"});
  CHECK(b->outputs->hasCorrect);
  unsigned logs = 0;
  b->graph.walk([&](l1::LogOp) { ++logs; });
  CHECK(logs == 2); // the softmax's log-sum-exp and the divergence's log
  std::vector<Tensor> inputs = randomInputs(b->graph, 18, 3);
  ref::StateEnv state = randomState(*b, 19);
  checkGradients(*b, inputs, state);
  // The loss is the softmax cross-entropy minus log 2.
  auto fused = buildOk(replaceAll(replaceAll(src,
                                             "      %o = l2.add %p, %p : tensor<4x3xf32>, "
                                             "tensor<4x3xf32>\n",
                                             ""),
                                  "l2.yield %o", "l2.yield %p"),
                       {"d.x", "d.y"});
  CHECK(run(*b, inputs, state)[0][0] ==
        Approx(run(*fused, inputs, state)[0][0] - std::log(2.0)).epsilon(1e-12));
  CHECK(run(*b, inputs, state).back()[0] == run(*fused, inputs, state).back()[0]);
}

TEST_CASE("autodiff: every method of the L2 test suite lowers or fails cleanly", "[autodiff]") {
  // Each model of test/Dialect/L2/{ops,valid}.mlir gets a probe loss
  // (norm of its output and of its parameters); every methods op then
  // either builds a graph that verifies or fails with the not-lowered
  // message and an empty body. Nothing may crash.
  std::string dir = SYNPL_SOURCE_DIR;
  unsigned built = 0, refused = 0;
  for (const char *file : {"/test/Dialect/L2/ops.mlir", "/test/Dialect/L2/valid.mlir"}) {
    std::string text = readFile(dir + file);
    auto ctx = makeContext();
    std::vector<std::string> diagnostics;
    ScopedDiagnosticHandler handler(ctx.get(), [&](Diagnostic &d) {
      diagnostics.push_back(d.str());
      return success();
    });
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, ParserConfig(ctx.get()));
    INFO(file);
    REQUIRE(module);
    OpBuilder b = OpBuilder::atBlockEnd(module->getBody());
    Location loc = UnknownLoc::get(ctx.get());
    SmallVector<l2::MethodsOp> methodsOps(module->getOps<l2::MethodsOp>());
    for (auto [i, methods] : llvm::enumerate(methodsOps)) {
      auto model = module->lookupSymbol<l3::ModelOp>(methods.getModel());
      if (!model || isa<l3::TableType>(model.getOutDomain()))
        continue;
      // The probe loss: sum(out^2) / batch + 1e-3 * sum |p|.
      std::string probe = "l3.loss @probe_" + std::to_string(i) + " {\n  l3.norm @o(@" +
                          model.getSymName().str() + "::@out, p = 2) weight 1.0\n  l3.norm @w(@" +
                          model.getSymName().str() +
                          "::@params, p = 1) weight 1.0e-3\n} combine weighted_sum\n";
      OwningOpRef<ModuleOp> lossModule =
          parseSourceString<ModuleOp>(probe, ParserConfig(ctx.get(), false));
      REQUIRE(lossModule);
      auto loss = cast<l3::LossOp>(lossModule->getBody()->front().clone());
      module->getBody()->push_back(loss);

      diagnostics.clear();
      FailureOr<SmallVector<l2tol1::TrainableParam>> params =
          l2tol1::collectTrainableParams(methods);
      if (failed(params)) {
        CHECK_FALSE(diagnostics.empty());
        continue;
      }
      SymbolRefAttr window = fieldRef(ctx.get(), "model_state", "weights");
      auto graph = l1::TensorGraphOp::create(b, loc, "fb_" + std::to_string(i), "cpu_0",
                                             b.getArrayAttr({window}),
                                             FlatSymbolRefAttr::get(ctx.get(), "sink"));
      Block &entry = graph.getBody().emplaceBlock();
      l2tol1::TrainingGraphSpec spec;
      spec.model = model;
      spec.loss = loss;
      spec.methods = methods;
      spec.window = window;
      spec.inputFields.push_back(model.getInRef());
      entry.addArgument(methods.getInferBlock().getArgument(0).getType(), loc);
      FailureOr<l2tol1::TrainingGraphOutputs> out =
          l2tol1::buildTrainingGraph(graph, spec, *params);
      INFO("methods @" << methods.getSymName().str() << ": " << [&] {
        std::string all;
        for (const std::string &d : diagnostics)
          all += d + "\n";
        return all;
      }());
      if (succeeded(out)) {
        ++built;
        CHECK(succeeded(verify(graph)));
      } else {
        ++refused;
        CHECK(graph.getEntry().empty());
        CHECK_FALSE(diagnostics.empty());
      }
      graph.erase();
      loss.erase();
    }
  }
  INFO("built " << built << ", refused " << refused);
  CHECK(built > 0);
  CHECK(refused > 0);
}

TEST_CASE("autodiff: what is not lowered is a located error and an empty body", "[autodiff]") {
  SECTION("quantize") {
    std::string src = program({"x : tensor<1x4x4xf32>", "y : tensor<1xui8>"}, "c", "!l3.dist<3>",
                              {"l3.divergence @ce(@c::@out, @d::@y) weight 1.0"}, 2,
                              "%x: tensor<2x1x4x4xf32>", R"(
      %q = l2.quantize(bits = 4) %x as "q1" : tensor<2x1x4x4xf32>
      %f = l2.flatten %q : tensor<2x1x4x4xf32>
      %o = l2.linear(16, 3) %f : tensor<2x16xf32>
      %p = l2.softmax %o : tensor<2x3xf32>
      l2.yield %p : tensor<2x3xf32>
)");
    auto b = build(src, {"d.x", "d.y"});
    checkRefused(*b,
                 {"lowered 3 of 4 ops; not lowered: 'l2.quantize' \"q1\" at ",
                  "zero derivative almost everywhere"},
                 true);
    CHECK(b->bodyOps() == 0);
  }
  SECTION("recurrent until a predicate") {
    std::string src =
        program({"x : tensor<6xf32>", "y : tensor<1xui8>"}, "r", "!l3.dist<6>",
                {"l3.divergence @ce(@r::@out, @d::@y) weight 1.0"}, 2, "%x: tensor<2x6xf32>", R"(
      %u = l2.recurrent(until("converged"), max_steps = 8) %x : tensor<2x6xf32> {
      ^bb0(%s: tensor<2x6xf32>):
        %0 = l2.linear(6, 6) %s : tensor<2x6xf32>
        l2.yield %0 : tensor<2x6xf32>
      }
      %p = l2.softmax %u : tensor<2x6xf32>
      l2.yield %p : tensor<2x6xf32>
)");
    auto b = build(src, {"d.x", "d.y"});
    checkRefused(*b, {"lowered 1 of 3 ops; not lowered: 'l2.recurrent' at ",
                      "only recurrent(steps: n) is unrolled"});
  }
  SECTION("custom and contrastive loss terms") {
    std::string src = replaceAll(
        mlp(), "} combine weighted_sum",
        "  l3.custom @center(\"center_loss\", reads [@classify::@out, @mnist::@labels]) "
        "weight 0.1\n"
        "  l3.contrastive @trip(@classify::@out, @classify::@out, @classify::@out) weight 1.0\n"
        "} combine weighted_sum");
    auto b = build(src, {"mnist.images", "mnist.labels"});
    checkRefused(*b, {"lowered 9 of 9 ops; not lowered: l3.custom @center at ",
                      "custom loss \"center_loss\" is opaque",
                      "also not lowered: l3.contrastive @trip: "});
    CHECK(b->bodyOps() == 0);
  }
  SECTION("forward mode") {
    auto b = build(mlp("autodiff<mode = forward>"), {"mnist.images", "mnist.labels"});
    checkRefused(*b, {"autodiff(mode: forward) is not lowered"});
    CHECK(b->bodyOps() == 0);
  }
  SECTION("a backward method other than autodiff") {
    auto b = build(mlp("evolution<pop = 10, sigma = 0.1, selection = truncation>"),
                   {"mnist.images", "mnist.labels"});
    checkRefused(*b, {"is not lowered: backward expansion derives the reverse-mode "
                      "gradient of autodiff(mode: reverse) only"});
  }
  SECTION("an input field nothing reads") {
    std::string src = program({"x : tensor<6xf32>", "extra : tensor<2xf32>"}, "ae", "tensor<6xf32>",
                              {"l3.reconstruction @rec(@ae::@in, @ae::@out) weight 1.0"}, 2,
                              "%x: tensor<2x6xf32>", R"(
      %o = l2.linear(6, 6) %x : tensor<2x6xf32>
      l2.yield %o : tensor<2x6xf32>
)");
    auto b = build(src, {"d.x", "d.extra"});
    checkRefused(*b, {"input field @d::@extra is read by neither the model nor the loss"});
  }
  SECTION("two layers with one label") {
    std::string src = replaceAll(mlp(), "as \"fc2\"", "as \"fc1\"");
    auto b = build(src, {"mnist.images", "mnist.labels"});
    INFO(b->allDiagnostics());
    CHECK(b->diagnosed("two parameters would both be the actor state @fc1_weight"));
  }
  SECTION("a label field the graph does not read") {
    auto b = build(mlp(), {"mnist.images"});
    checkRefused(*b, {"it reads @mnist::@labels"});
  }
}
