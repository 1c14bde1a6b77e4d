//===- AutodiffTest.cpp - L2 -> L1 backward expansion ----------------------===//
//
// Builds training graphs from L3 + L2 source (buildTrainingGraph), verifies
// them, runs them in the reference interpreter (f64) and checks:
//  * every gradient against central finite differences of the graph's own
//    loss, on random entries of every parameter, for each covered layer,
//    loss term and combinator;
//  * the spec's MNIST method against the hand-written graph of
//    examples/fashion_mnist/fashion_mnist.l1.mlir (same numbers, similar op
//    count);
//  * checkpointed layers give identical numbers from a recomputed copy;
//  * what cannot be lowered is a located `lowered N of M ops; not lowered:`
//    error and leaves the body empty.
//
//===----------------------------------------------------------------------===//
#include "synpl/Conversion/L2ToL1/TrainingGraph.h"
#include "synpl/Dialect/L2/L2Model.h"
#include "TestContext.h"
#include "synpl/InitAll.h"
#include "synpl/Reference/L1Interpreter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace mlir;
using namespace synpl;
using synpl::ref::ElementType;
using synpl::ref::Tensor;

namespace {

using synpl::test::makeContext;

std::string replaceAll(std::string s, const std::string &from, const std::string &to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

/// The L3 + L2 source every test here shares: data @`data` with `fields`
/// ("x : tensor<6xf32>", the first the model's input), model @`model` with
/// output domain `out`, the loss @objective of `terms`, and methods @m whose
/// infer block takes `arg` and holds `body` (a leading newline is dropped).
std::string program(const std::vector<std::string> &fields, const std::string &model,
                    const std::string &out, const std::vector<std::string> &terms, int64_t batch,
                    const std::string &arg, const std::string &body,
                    const std::string &combine = "weighted_sum", const std::string &data = "d",
                    const std::string &backward = "autodiff<mode = reverse>",
                    const std::string &update = "sgd<lr = 0.1>") {
  std::string s = "\nl3.data @" + data + " {\n";
  for (const std::string &f : fields)
    s += "  l3.field @" + f + "\n";
  s += "}\nl3.model @" + model + " in @" + data + "::@" + fields[0].substr(0, fields[0].find(' ')) +
       " out " + out + " properties []\nl3.loss @objective {\n";
  for (const std::string &t : terms)
    s += "  " + t + "\n";
  s += "} combine " + combine + "\nl3.goal minimize(@objective)\nl2.methods @m for @" + model +
       "\n    sample epoch_shuffle<batch = " + std::to_string(batch) + ">\n    infer(" + arg +
       ") {\n" + body.substr(!body.empty() && body[0] == '\n' ? 1 : 0) + "    }\n    backward " +
       backward + "\n    update " + update + "\n";
  return s;
}

/// An L3 + L2 program with an l1 actor holding its parameters and an empty
/// tensor graph, then the training graph built into it.
struct Built {
  std::unique_ptr<MLIRContext> ctx = makeContext();
  OwningOpRef<ModuleOp> module;
  std::vector<std::string> diagnostics;
  std::unique_ptr<ScopedDiagnosticHandler> handler;
  SmallVector<l2tol1::TrainableParam> params;
  l1::TensorGraphOp graph;
  FailureOr<l2tol1::TrainingGraphOutputs> outputs = failure();
  bool hasL1Term = false;

  std::string allDiagnostics() const {
    std::string s;
    for (const std::string &d : diagnostics)
      s += d + "\n";
    return s;
  }
  bool diagnosed(StringRef needle) const { return StringRef(allDiagnostics()).contains(needle); }
  unsigned bodyOps() { return graph ? graph.getEntry().getOperations().size() : 0; }
};

/// The batched graph-argument type of an L3 data field.
Type batchedType(ModuleOp module, SymbolRefAttr field, int64_t batch) {
  auto data = module.lookupSymbol<l3::DataOp>(field.getRootReference());
  auto f = data.lookupSymbol<l3::FieldOp>(field.getLeafReference());
  Type domain = f.getDomain();
  Builder b(module.getContext());
  if (auto t = dyn_cast<RankedTensorType>(domain)) {
    SmallVector<int64_t> shape{batch};
    shape.append(t.getShape().begin(), t.getShape().end());
    return RankedTensorType::get(shape, t.getElementType());
  }
  if (auto d = dyn_cast<l3::DistType>(domain))
    return RankedTensorType::get({batch, d.getNumClasses()}, b.getF32Type());
  if (auto s = dyn_cast<l3::ScalarType>(domain))
    return RankedTensorType::get({batch}, s.getDtype());
  return Type();
}

SymbolRefAttr fieldRef(MLIRContext *ctx, StringRef data, StringRef field) {
  return SymbolRefAttr::get(ctx, data, {FlatSymbolRefAttr::get(ctx, field)});
}

/// Parses `source`, adds the actor and graph, and runs buildTrainingGraph
/// with `fields` ("data.field") as the graph's inputs.
std::unique_ptr<Built> build(const std::string &source, std::vector<std::string> fields) {
  auto r = std::make_unique<Built>();
  MLIRContext *ctx = r->ctx.get();
  r->handler = std::make_unique<ScopedDiagnosticHandler>(ctx, [p = r.get()](Diagnostic &d) {
    std::string s = d.str();
    for (const Diagnostic &note : d.getNotes())
      s += "\nnote: " + note.str();
    p->diagnostics.push_back(s);
    return success();
  });
  r->module = parseSourceString<ModuleOp>(source, ParserConfig(ctx));
  if (!r->module)
    return r;
  ModuleOp module = *r->module;
  l2::MethodsOp methods = *module.getOps<l2::MethodsOp>().begin();
  l3::ModelOp model = *module.getOps<l3::ModelOp>().begin();
  l3::LossOp loss = *module.getOps<l3::LossOp>().begin();
  for (l3::LossTermOpInterface t : loss.getTerms())
    if (auto n = dyn_cast<l3::NormOp>(t.getOperation()))
      r->hasL1Term |= n.getP().convertToDouble() == 1.0;

  FailureOr<SmallVector<l2tol1::TrainableParam>> params = l2tol1::collectTrainableParams(methods);
  if (failed(params))
    return r;
  r->params = *params;

  Location loc = UnknownLoc::get(ctx);
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto actor = l1::ActorOp::create(b, loc, "model_state", "cpu_0");
  OpBuilder ab = OpBuilder::atBlockEnd(&actor.getBody().emplaceBlock());
  SmallVector<Attribute> stateRefs;
  for (const l2tol1::TrainableParam &p : r->params) {
    l1::StateOp::create(ab, loc, p.state, RankedTensorType::get(p.shape, b.getF32Type()), p.init);
    stateRefs.push_back(FlatSymbolRefAttr::get(ctx, p.state));
  }
  // Dropout draws with the update step and the train/eval flag.
  bool random = l2tol1::drawsRandomNumbers(methods);
  if (random) {
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    l1::StateOp::create(ab, loc, "step", scalar, l1::InitKind::zeros);
    l1::StateOp::create(ab, loc, "training", scalar, l1::InitKind::training_mode);
    stateRefs.push_back(FlatSymbolRefAttr::get(ctx, "step"));
    stateRefs.push_back(FlatSymbolRefAttr::get(ctx, "training"));
  }
  l1::WindowOp::create(ab, loc, "weights", b.getArrayAttr(stateRefs),
                       b.getArrayAttr({FlatSymbolRefAttr::get(ctx, "fb")}));
  SymbolRefAttr window = fieldRef(ctx, "model_state", "weights");
  auto graph = l1::TensorGraphOp::create(b, loc, "fb", "cpu_0", b.getArrayAttr({window}),
                                         FlatSymbolRefAttr::get(ctx, "sink"));
  Block &entry = graph.getBody().emplaceBlock();

  l2tol1::TrainingGraphSpec spec;
  spec.model = model;
  spec.loss = loss;
  spec.methods = methods;
  spec.window = window;
  if (random) {
    spec.stepField = "step";
    spec.trainingField = "training";
  }
  int64_t batch = l2::sampleBatch(methods.getSample());
  for (const std::string &f : fields) {
    size_t dot = f.find('.');
    SymbolRefAttr ref = fieldRef(ctx, f.substr(0, dot), f.substr(dot + 1));
    spec.inputFields.push_back(ref);
    entry.addArgument(batchedType(module, ref, batch), loc);
  }
  r->graph = graph;
  r->outputs = l2tol1::buildTrainingGraph(graph, spec, r->params);
  return r;
}

/// Random parameters: weights ~ N(0, 2 / fan_in), biases and shifts small
/// and away from 0 (the L1 term's kink), gains near 1.
ref::StateEnv randomState(const Built &b, uint64_t seed) {
  std::mt19937_64 rng(seed);
  ref::StateEnv state;
  for (const l2tol1::TrainableParam &p : b.params) {
    Tensor t(ElementType::f32(), p.shape);
    std::normal_distribution<double> normal(0.0, std::sqrt(2.0 / static_cast<double>(p.shape[0])));
    std::uniform_real_distribution<double> small(0.05, 0.3);
    std::bernoulli_distribution flip(0.5);
    for (double &v : t.data()) {
      if (p.init == l1::InitKind::kaiming)
        v = normal(rng);
      else
        v = (p.init == l1::InitKind::ones ? 1.0 : 0.0) + (flip(rng) ? 1 : -1) * small(rng);
    }
    state.set("model_state", p.state, std::move(t));
  }
  // A model with dropout: some update step, training.
  state.set("model_state", "step", Tensor::scalar(3));
  state.set("model_state", "training", Tensor::scalar(1));
  return state;
}

/// Random batch inputs of the graph's argument types: floats in [0, 1) (or
/// rows of a distribution when `distRows`), integers in [0, intRange).
std::vector<Tensor> randomInputs(l1::TensorGraphOp graph, uint64_t seed, int64_t intRange,
                                 bool distRows = false) {
  std::mt19937_64 rng(seed);
  std::vector<Tensor> inputs;
  for (BlockArgument arg : graph.getEntry().getArguments()) {
    auto type = cast<RankedTensorType>(arg.getType());
    ElementType et = *ElementType::get(type.getElementType());
    Tensor t(et, type.getShape());
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::uniform_int_distribution<int64_t> ints(0, intRange - 1);
    for (double &v : t.data())
      v = et.isFloat() ? unit(rng) : static_cast<double>(ints(rng));
    if (distRows && et.isFloat()) {
      int64_t n = type.getShape().back();
      for (int64_t r = 0; r < t.size() / n; ++r) {
        double s = 0;
        for (int64_t c = 0; c < n; ++c)
          s += t[r * n + c];
        for (int64_t c = 0; c < n; ++c)
          t[r * n + c] /= s;
      }
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

SmallVector<Tensor> run(Built &b, ArrayRef<Tensor> inputs, const ref::StateEnv &state) {
  FailureOr<SmallVector<Tensor>> out = ref::interpretTensorGraph(b.graph, inputs, state);
  INFO(b.allDiagnostics());
  REQUIRE(succeeded(out));
  return *out;
}

double lossOnly(Built &b, ArrayRef<Tensor> inputs, const ref::StateEnv &state) {
  ref::InterpretOptions options;
  options.onlyResults = SmallVector<unsigned>{0};
  FailureOr<SmallVector<Tensor>> out = ref::interpretTensorGraph(b.graph, inputs, state, options);
  REQUIRE(succeeded(out));
  return (*out)[0][0];
}

/// Builds, verifies and checks the structure of a successful result.
void requireBuilt(Built &b) {
  INFO(b.allDiagnostics());
  REQUIRE(b.module);
  REQUIRE(succeeded(b.outputs));
  REQUIRE(succeeded(verify(b.graph)));
  auto ret = cast<l1::ReturnOp>(b.graph.getEntry().getTerminator());
  REQUIRE(ret.getNumOperands() == 1 + b.params.size() + (b.outputs->hasCorrect ? 1 : 0));
  CHECK(cast<RankedTensorType>(ret.getOperand(0).getType()).getRank() == 0);
  for (auto [i, p] : llvm::enumerate(b.params))
    CHECK(cast<RankedTensorType>(ret.getOperand(1 + i).getType()).getShape() ==
          ArrayRef<int64_t>(p.shape));
}

/// Builds `source` and requires the success requireBuilt checks.
std::unique_ptr<Built> buildOk(const std::string &source, std::vector<std::string> fields) {
  std::unique_ptr<Built> b = build(source, std::move(fields));
  requireBuilt(*b);
  return b;
}

/// A build that failed, each of `messages` among its diagnostics (after
/// requiring the module parsed, when `requireModule`).
void checkRefused(Built &b, std::initializer_list<StringRef> messages, bool requireModule = false) {
  INFO(b.allDiagnostics());
  if (requireModule)
    REQUIRE(b.module);
  CHECK(failed(b.outputs));
  for (StringRef m : messages)
    CHECK(b.diagnosed(m));
}

/// Central differences of the loss against the returned gradient, on
/// `samples` random entries of every parameter.
void checkGradients(Built &b, ArrayRef<Tensor> inputs, ref::StateEnv state, int samples = 6,
                    uint64_t seed = 7) {
  SmallVector<Tensor> full = run(b, inputs, state);
  REQUIRE(std::isfinite(full[0][0]));
  std::mt19937_64 rng(seed);
  const double h = 1e-5;
  for (auto [i, p] : llvm::enumerate(b.params)) {
    const Tensor &grad = full[1 + i];
    Tensor *value = state.lookup("model_state", p.state);
    REQUIRE(value);
    std::uniform_int_distribution<int64_t> pick(0, value->size() - 1);
    int checked = 0;
    bool anyNonZero = false;
    for (int k = 0; k < samples; ++k) {
      int64_t at = pick(rng);
      double saved = (*value)[at];
      if (b.hasL1Term && std::abs(saved) < 1e-3)
        continue; // the L1 term's kink
      (*value)[at] = saved + h;
      double up = lossOnly(b, inputs, state);
      (*value)[at] = saved - h;
      double down = lossOnly(b, inputs, state);
      (*value)[at] = saved;
      double fd = (up - down) / (2 * h);
      double g = grad[at];
      INFO("parameter " << p.state << " entry " << at << ": analytic " << g << ", fd " << fd);
      CHECK(std::abs(fd - g) <= 1e-7 + 1e-5 * std::abs(fd));
      anyNonZero |= g != 0.0;
      ++checked;
    }
    INFO("parameter " << p.state);
    CHECK(checked > 0);
    CHECK(anyNonZero);
  }
}

// The spec's MNIST method, small: 5 images of 4x4, widths 8, 3 classes.
std::string mlp(const std::string &backward = "autodiff<mode = reverse>",
                const std::string &combine = "weighted_sum") {
  return program({"images : tensor<4x4xf32>", "labels : tensor<1xui8>"}, "classify", "!l3.dist<3>",
                 {"l3.divergence @ce(@classify::@out, @mnist::@labels) weight 1.0",
                  "l3.norm @sparse(@classify::@params, p = 1) weight 1.0e-2"},
                 5, "%images: tensor<5x4x4xf32>", R"(
      %x = l2.flatten %images : tensor<5x4x4xf32>
      %h0 = l2.linear(16, 8) %x as "fc1" : tensor<5x16xf32>
      %n0 = l2.norm(layer) %h0 as "norm1" : tensor<5x8xf32>
      %a0 = l2.act(gelu) %n0 : tensor<5x8xf32>
      %h1 = l2.linear(8, 8) %a0 as "fc2" : tensor<5x8xf32>
      %n1 = l2.norm(layer) %h1 as "norm2" : tensor<5x8xf32>
      %a1 = l2.act(gelu) %n1 : tensor<5x8xf32>
      %h2 = l2.linear(8, 3) %a1 as "fc3" : tensor<5x8xf32>
      %p = l2.softmax %h2 : tensor<5x3xf32>
      l2.yield %p : tensor<5x3xf32>
)",
                 combine, "mnist", backward, "adam<lr = 3.0e-4>");
}

std::string readFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  REQUIRE(buffer);
  return (*buffer)->getBuffer().str();
}

} // namespace

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

TEST_CASE("autodiff: an embedding (one_hot x table) and the max combinator", "[autodiff]") {
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

TEST_CASE("autodiff: max and avg pooling over windows that tile the input", "[autodiff]") {
  std::string src = program({"x : tensor<2x6x6xf32>", "y : tensor<1xui8>"}, "net", "!l3.dist<3>",
                            {"l3.divergence @ce(@net::@out, @d::@y) weight 1.0"}, 3,
                            "%x: tensor<3x2x6x6xf32>", R"(
      %h = l2.linear(6, 6) %x as "mix" : tensor<3x2x6x6xf32>
      %m = l2.pool(max, kernel = 2) %h : tensor<3x2x6x6xf32>
      %a = l2.pool(avg, kernel = 3) %m : tensor<3x2x3x3xf32>
      %f = l2.flatten %a : tensor<3x2x1x1xf32>
      %o = l2.linear(2, 3) %f as "head" : tensor<3x2xf32>
      %p = l2.softmax %o : tensor<3x3xf32>
      l2.yield %p : tensor<3x3xf32>
)");
  auto b = buildOk(src, {"d.x", "d.y"});
  checkGradients(*b, randomInputs(b->graph, 20, 3), randomState(*b, 21), 10);

  // A pool whose windows leave a remainder (6 = 4 + 2) is not lowered.
  std::string ragged = replaceAll(src,
                                  "l2.pool(max, kernel = 2) %h : tensor<3x2x6x6xf32>\n"
                                  "      %a = l2.pool(avg, kernel = 3) %m : tensor<3x2x3x3xf32>",
                                  "l2.pool(max, kernel = 4) %h : tensor<3x2x6x6xf32>\n"
                                  "      %a = l2.pool(avg, kernel = 1) %m : tensor<3x2x1x1xf32>");
  auto r = build(ragged, {"d.x", "d.y"});
  checkRefused(
      *r, {"lowered 5 of 6 ops; not lowered: 'l2.pool' at ", "its windows do not tile the input"},
      true);
}

TEST_CASE("autodiff: multi-head self-attention in a residual block", "[autodiff]") {
  std::string src =
      program({"x : tensor<3x4xf32>", "y : tensor<1xui8>"}, "tf", "!l3.dist<3>",
              {"l3.divergence @ce(@tf::@out, @d::@y) weight 1.0"}, 2, "%x: tensor<2x3x4xf32>", R"(
      %h = l2.linear(4, 4) %x as "embed_in" : tensor<2x3x4xf32>
      %a = l2.attn(heads = 2, dim = 4) %h as "sa" : tensor<2x3x4xf32>
      %r = l2.add %a, %h : tensor<2x3x4xf32>, tensor<2x3x4xf32>
      %n = l2.norm(layer) %r as "ln" : tensor<2x3x4xf32>
      %f = l2.flatten %n : tensor<2x3x4xf32>
      %o = l2.linear(12, 3) %f as "head" : tensor<2x12xf32>
      %p = l2.softmax %o : tensor<2x3xf32>
      l2.yield %p : tensor<2x3xf32>
)");
  auto b = buildOk(src, {"d.x", "d.y"});
  CHECK(b->params.size() == 2 + 8 + 2 + 2);
  std::vector<Tensor> inputs = randomInputs(b->graph, 22, 3);
  for (double &v : inputs[0].data())
    v = 4.0 * v - 2.0;
  checkGradients(*b, inputs, randomState(*b, 23), 8);

  // The attention's values, computed directly: an autoencoder made of one
  // attention layer over 6 positions, its loss mean((attn(x) - x)^2).
  for (bool causal : {false, true}) {
    std::string ae = program({"x : tensor<6x4xf32>"}, "sa", "tensor<6x4xf32>",
                             {"l3.reconstruction @rec(@sa::@in, @sa::@out) weight 1.0"}, 2,
                             "%x: tensor<2x6x4xf32>", R"(
      %a = l2.attn(heads = 2, dim = 4CAUSAL) %x as "sa" : tensor<2x6x4xf32>
      l2.yield %a : tensor<2x6x4xf32>
)");
    auto one = build(replaceAll(ae, "CAUSAL", causal ? ", causal" : ""), {"d.x"});
    INFO("causal " << causal);
    requireBuilt(*one);
    std::vector<Tensor> x = randomInputs(one->graph, 24, 1);
    ref::StateEnv st = randomState(*one, 25);
    auto param = [&](const char *n) { return *st.lookup("model_state", std::string("sa_") + n); };
    Tensor wq = param("wq"), wk = param("wk"), wv = param("wv"), wo = param("wo");
    Tensor bq = param("bq"), bk = param("bk"), bv = param("bv"), bo = param("bo");
    const int64_t T = 6;
    double sq = 0;
    for (int64_t n = 0; n < 2; ++n) {
      double q[T][4], k[T][4], v[T][4], o[T][4] = {};
      for (int64_t t = 0; t < T; ++t)
        for (int64_t c = 0; c < 4; ++c) {
          q[t][c] = bq[c], k[t][c] = bk[c], v[t][c] = bv[c];
          for (int64_t i = 0; i < 4; ++i) {
            double xi = x[0][(n * T + t) * 4 + i];
            q[t][c] += xi * wq[i * 4 + c];
            k[t][c] += xi * wk[i * 4 + c];
            v[t][c] += xi * wv[i * 4 + c];
          }
        }
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t i = 0; i < T; ++i) {
          int64_t last = causal ? i : T - 1;
          double sc[T], z = 0;
          for (int64_t j = 0; j <= last; ++j) {
            sc[j] = 0;
            for (int64_t c = 2 * h; c < 2 * h + 2; ++c)
              sc[j] += q[i][c] * k[j][c] / std::sqrt(2.0);
            z += std::exp(sc[j]);
          }
          for (int64_t j = 0; j <= last; ++j)
            for (int64_t c = 2 * h; c < 2 * h + 2; ++c)
              o[i][c] += std::exp(sc[j]) / z * v[j][c];
        }
      for (int64_t t = 0; t < T; ++t)
        for (int64_t c = 0; c < 4; ++c) {
          double y = bo[c];
          for (int64_t i = 0; i < 4; ++i)
            y += o[t][i] * wo[i * 4 + c];
          double dlt = y - x[0][(n * T + t) * 4 + c];
          sq += dlt * dlt;
        }
    }
    CHECK(run(*one, x, st)[0][0] == Approx(sq / (2 * T * 4)).epsilon(1e-12));
    checkGradients(*one, x, st, 8);
  }
}

namespace {
/// One layer between input and output, its loss sum(out^2) / batch: the
/// graph's loss against `expected(x, state)`, and its gradients.
void checkSingleLayer(const std::string &layer, const std::string &inShape,
                      const std::string &outShape, int64_t batch,
                      const std::function<double(const Tensor &, const ref::StateEnv &)> &expected,
                      int64_t intRange = 1) {
  std::string in = std::to_string(batch) + "x" + inShape;
  std::string src =
      program({"x : tensor<" + inShape + ">"}, "one", "tensor<" + outShape + ">",
              {"l3.norm @sq(@one::@out, p = 2) weight 1.0"}, batch, "%x: tensor<" + in + ">",
              "      %a = " + layer + " %x as \"layer\" : tensor<" + in + ">\n" +
                  "      l2.yield %a : tensor<" + std::to_string(batch) + "x" + outShape + ">\n");
  auto b = build(src, {"d.x"});
  INFO(layer);
  requireBuilt(*b);
  std::vector<Tensor> x = randomInputs(b->graph, 26, intRange);
  if (x[0].getElementType().isFloat())
    for (double &v : x[0].data())
      v = 4.0 * v - 2.0;
  ref::StateEnv state = randomState(*b, 27);
  CHECK(run(*b, x, state)[0][0] == Approx(expected(x[0], state)).epsilon(1e-12));
  if (!b->params.empty())
    checkGradients(*b, x, state, 6);
}
} // namespace

TEST_CASE("autodiff: layer values computed directly", "[autodiff]") {
  auto param = [](const ref::StateEnv &s, const char *slot) {
    return *s.lookup("model_state", std::string("layer_") + slot);
  };
  auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  SECTION("group norm: 2 groups of 2 channels x 2 positions") {
    checkSingleLayer("l2.norm(group(2))", "4x2xf32", "4x2xf32", 2,
                     [&](const Tensor &x, const ref::StateEnv &s) {
                       Tensor g = param(s, "gain"), be = param(s, "bias");
                       double total = 0;
                       for (int64_t n = 0; n < 2; ++n)
                         for (int64_t grp = 0; grp < 2; ++grp) {
                           double mu = 0, var = 0;
                           auto at = [&](int64_t i) { return x[n * 8 + grp * 4 + i]; };
                           for (int64_t i = 0; i < 4; ++i)
                             mu += at(i) / 4;
                           for (int64_t i = 0; i < 4; ++i)
                             var += (at(i) - mu) * (at(i) - mu) / 4;
                           for (int64_t i = 0; i < 4; ++i) {
                             int64_t c = grp * 2 + i / 2;
                             double y = (at(i) - mu) / std::sqrt(var + 1e-5) * g[c] + be[c];
                             total += y * y;
                           }
                         }
                       return total / 2;
                     });
  }
  SECTION("rms norm") {
    checkSingleLayer("l2.norm(rms)", "3xf32", "3xf32", 2,
                     [&](const Tensor &x, const ref::StateEnv &s) {
                       Tensor g = param(s, "gain");
                       double total = 0;
                       for (int64_t n = 0; n < 2; ++n) {
                         double ms = 0;
                         for (int64_t i = 0; i < 3; ++i)
                           ms += x[n * 3 + i] * x[n * 3 + i] / 3;
                         for (int64_t i = 0; i < 3; ++i) {
                           double y = x[n * 3 + i] / std::sqrt(ms + 1e-5) * g[i];
                           total += y * y;
                         }
                       }
                       return total / 2;
                     });
  }
  SECTION("silu and relu") {
    for (const char *fn : {"silu", "swish", "relu"}) {
      bool relu = std::string(fn) == "relu";
      checkSingleLayer(std::string("l2.act(") + fn + ")", "5xf32", "5xf32", 2,
                       [&](const Tensor &x, const ref::StateEnv &) {
                         double total = 0;
                         for (double v : x.data()) {
                           double y = relu ? std::max(v, 0.0) : v * sigmoid(v);
                           total += y * y;
                         }
                         return total / 2;
                       });
    }
  }
  SECTION("embed: a row of the table per id") {
    checkSingleLayer(
        "l2.embed(vocab = 6, dim = 2)", "3xi32", "3x2xf32", 2,
        [&](const Tensor &x, const ref::StateEnv &s) {
          Tensor table = param(s, "table");
          double total = 0;
          for (double id : x.data())
            for (int64_t c = 0; c < 2; ++c)
              total +=
                  table[static_cast<int64_t>(id) * 2 + c] * table[static_cast<int64_t>(id) * 2 + c];
          return total / 2;
        },
        6);
  }
  SECTION("max and avg pool") {
    for (bool isMax : {true, false}) {
      checkSingleLayer(isMax ? "l2.pool(max, kernel = 2)" : "l2.pool(avg, kernel = 2)", "1x2x4xf32",
                       "1x1x2xf32", 2, [&](const Tensor &x, const ref::StateEnv &) {
                         double total = 0;
                         for (int64_t n = 0; n < 2; ++n)
                           for (int64_t w = 0; w < 2; ++w) {
                             double m = isMax ? -1e300 : 0;
                             for (int64_t r = 0; r < 2; ++r)
                               for (int64_t c = 0; c < 2; ++c) {
                                 double v = x[n * 8 + r * 4 + w * 2 + c];
                                 m = isMax ? std::max(m, v) : m + v / 4;
                               }
                             total += m * m;
                           }
                         return total / 2;
                       });
    }
  }
}

TEST_CASE("autodiff: a mixture of experts without top_k", "[autodiff]") {
  std::string src =
      program({"x : tensor<3xf32>"}, "moe", "tensor<3xf32>",
              {"l3.norm @sq(@moe::@out, p = 2) weight 1.0"}, 2, "%x: tensor<2x3xf32>", R"(
      %y = l2.mixture %x as "mix" : tensor<2x3xf32> -> tensor<2x3xf32>
        experts({
        ^bb0(%a: tensor<2x3xf32>):
          %0 = l2.linear(3, 3) %a as "e0" : tensor<2x3xf32>
          l2.yield %0 : tensor<2x3xf32>
        }, {
        ^bb0(%b: tensor<2x3xf32>):
          %1 = l2.linear(3, 3) %b as "e1" : tensor<2x3xf32>
          l2.yield %1 : tensor<2x3xf32>
        }) gate {
        ^bb0(%c: tensor<2x3xf32>):
          %2 = l2.linear(3, 2) %c as "g" : tensor<2x3xf32>
          l2.yield %2 : tensor<2x2xf32>
        }
      l2.yield %y : tensor<2x3xf32>
)");
  auto b = buildOk(src, {"d.x"});
  std::vector<Tensor> x = randomInputs(b->graph, 28, 1);
  ref::StateEnv st = randomState(*b, 29);
  auto param = [&](const std::string &n) { return *st.lookup("model_state", n); };
  auto lin = [&](const std::string &l, int64_t n, int64_t out, int64_t c) {
    Tensor w = param(l + "_weight"), bias = param(l + "_bias");
    double z = bias[c];
    for (int64_t i = 0; i < 3; ++i)
      z += x[0][n * 3 + i] * w[i * out + c];
    return z;
  };
  double total = 0;
  for (int64_t n = 0; n < 2; ++n) {
    double s0 = lin("g", n, 2, 0), s1 = lin("g", n, 2, 1);
    double w0 = std::exp(s0) / (std::exp(s0) + std::exp(s1)), w1 = 1 - w0;
    for (int64_t c = 0; c < 3; ++c) {
      double y = w0 * lin("e0", n, 3, c) + w1 * lin("e1", n, 3, c);
      total += y * y;
    }
  }
  CHECK(run(*b, x, st)[0][0] == Approx(total / 2).epsilon(1e-12));
  checkGradients(*b, x, st, 6);

  auto k = build(replaceAll(src, "l2.mixture %x", "l2.mixture(top_k = 1) %x"), {"d.x"});
  checkRefused(*k, {"lowered 0 of 4 ops; not lowered: 'l2.mixture' \"mix\" at ", "top_k routing"},
               true);
}

TEST_CASE("autodiff: checkpointed layers are recomputed with identical numbers", "[autodiff]") {
  auto plain = build(mlp(), {"mnist.images", "mnist.labels"});
  auto ckpt = build(mlp("autodiff<mode = reverse, checkpoint = [\"norm1\", \"act_1\"]>"),
                    {"mnist.images", "mnist.labels"});
  requireBuilt(*plain);
  requireBuilt(*ckpt);
  // A second copy of norm1's normalization and of the second gelu.
  unsigned tanhs = 0, sqrts = 0;
  ckpt->graph.walk([&](l1::TanhOp) { ++tanhs; });
  ckpt->graph.walk([&](l1::SqrtOp) { ++sqrts; });
  CHECK(tanhs == 3);
  CHECK(sqrts == 3);
  CHECK(ckpt->bodyOps() > plain->bodyOps());

  std::vector<Tensor> inputs = randomInputs(plain->graph, 14, 3);
  ref::StateEnv state = randomState(*plain, 15);
  SmallVector<Tensor> a = run(*plain, inputs, state);
  SmallVector<Tensor> c = run(*ckpt, inputs, state);
  REQUIRE(a.size() == c.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("result " << i);
    CHECK(a[i].data() == c[i].data());
  }
  checkGradients(*ckpt, inputs, state, 3);
}

TEST_CASE("autodiff: dropout(p > 0) draws one mask per step, and none in evaluation",
          "[autodiff][random]") {
  auto withDropout = [](const std::string &p) {
    return replaceAll(replaceAll(mlp(), "%a0 = l2.act(gelu) %n0 : tensor<5x8xf32>",
                                 "%g0 = l2.act(gelu) %n0 : tensor<5x8xf32>\n"
                                 "      %a0 = l2.dropout(" + p + ") %g0 : tensor<5x8xf32>"),
                      "%a1 = l2.act(gelu) %n1 : tensor<5x8xf32>",
                      "%g1 = l2.act(gelu) %n1 : tensor<5x8xf32>\n"
                      "      %a1 = l2.dropout(" + p + ") %g1 : tensor<5x8xf32>");
  };
  auto b = buildOk(withDropout("0.5"), {"mnist.images", "mnist.labels"});
  auto plain = buildOk(mlp(), {"mnist.images", "mnist.labels"});
  // One draw per dropout, each its own stream, both at the window's step.
  std::set<int64_t> streams;
  b->graph.walk([&](l1::RandomOp r) {
    streams.insert(r.getStream());
    auto counter = r.getCounter().getDefiningOp<l1::WindowReadOp>();
    REQUIRE(counter);
    CHECK(counter.getField() == "step");
  });
  CHECK(streams == std::set<int64_t>{0, 1});

  std::vector<Tensor> inputs = randomInputs(b->graph, 21, 3);
  ref::StateEnv state = randomState(*b, 22);
  // The mask is a function of the step: the gradient is that of a fixed
  // masked network, which finite differences see.
  checkGradients(*b, inputs, state);
  double atStep3 = lossOnly(*b, inputs, state);
  CHECK(lossOnly(*b, inputs, state) == atStep3);
  state.set("model_state", "step", Tensor::scalar(4));
  CHECK(lossOnly(*b, inputs, state) != atStep3);

  // Evaluation (training flag 0): the network without dropout, exactly.
  state.set("model_state", "training", Tensor::scalar(0));
  CHECK(lossOnly(*b, inputs, state) == lossOnly(*plain, inputs, state));

  // p = 0 is the identity: no draw at all.
  auto none = buildOk(withDropout("0.0"), {"mnist.images", "mnist.labels"});
  unsigned draws = 0;
  none->graph.walk([&](l1::RandomOp) { ++draws; });
  CHECK(draws == 0);
}

TEST_CASE("autodiff: convolutions as matmuls over unfolded windows", "[autodiff]") {
  // conv(in_ch, out_ch, kernel, stride, padding) on [N, C, H, W] (and [N, C, L])
  // against a direct loop, then finite differences.
  struct Case {
    int64_t cin, cout, k, stride, pad, h, w;
    bool oneD;
  };
  for (Case c : {Case{2, 3, 3, 1, 1, 4, 5, false}, Case{1, 2, 2, 2, 0, 5, 4, false},
                 Case{2, 2, 3, 2, 1, 1, 7, true}}) {
    int64_t ho = c.oneD ? 1 : (c.h + 2 * c.pad - c.k) / c.stride + 1;
    int64_t wo = (c.w + 2 * c.pad - c.k) / c.stride + 1;
    auto dims = [](std::vector<int64_t> v) {
      std::string s;
      for (int64_t d : v)
        s += std::to_string(d) + "x";
      return s + "f32";
    };
    std::vector<int64_t> in =
        c.oneD ? std::vector<int64_t>{c.cin, c.w} : std::vector<int64_t>{c.cin, c.h, c.w};
    std::vector<int64_t> out =
        c.oneD ? std::vector<int64_t>{c.cout, wo} : std::vector<int64_t>{c.cout, ho, wo};
    std::string layer = "l2.conv(" + std::to_string(c.cin) + ", " + std::to_string(c.cout) +
                        ", kernel = " + std::to_string(c.k) +
                        ", stride = " + std::to_string(c.stride) +
                        ", padding = " + std::to_string(c.pad) + ")";
    INFO(layer << " on " << dims(in));
    checkSingleLayer(layer, dims(in), dims(out), 2, [&](const Tensor &x, const ref::StateEnv &s) {
      Tensor wt = *s.lookup("model_state", "layer_weight");
      Tensor bias = *s.lookup("model_state", "layer_bias");
      int64_t kh = c.oneD ? 1 : c.k;
      double total = 0;
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t co = 0; co < c.cout; ++co)
          for (int64_t oy = 0; oy < ho; ++oy)
            for (int64_t ox = 0; ox < wo; ++ox) {
              double y = bias[co];
              for (int64_t ci = 0; ci < c.cin; ++ci)
                for (int64_t ky = 0; ky < kh; ++ky)
                  for (int64_t kx = 0; kx < c.k; ++kx) {
                    int64_t iy = c.oneD ? 0 : oy * c.stride + ky - c.pad;
                    int64_t ix = ox * c.stride + kx - c.pad;
                    if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w)
                      continue;
                    double xv = x[((n * c.cin + ci) * c.h + iy) * c.w + ix];
                    y += xv * wt[((co * c.cin + ci) * kh + ky) * c.k + kx];
                  }
              total += y * y;
            }
      return total / 2;
    });
  }
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
                      "custom loss \"center_loss\" is opaque", "l3.contrastive @trip at "});
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
