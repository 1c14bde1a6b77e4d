//===- AutodiffHarness.h - Building and checking training graphs -*- C++ -*-===//
//
// Shared by the backward-expansion tests (AutodiffTest.cpp,
// AutodiffLayersTest.cpp): L3 + L2 source with an actor and a graph around
// it, buildTrainingGraph, the reference interpreter's runs, and central
// finite differences of a graph's loss against its gradients.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TEST_UNIT_AUTODIFFHARNESS_H
#define SYNPL_TEST_UNIT_AUTODIFFHARNESS_H

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

namespace autodiff_test {
using namespace mlir;
using namespace synpl;
using synpl::ref::ElementType;
using synpl::ref::Tensor;
using synpl::test::makeContext;

using synpl::test::makeContext;

inline std::string replaceAll(std::string s, const std::string &from, const std::string &to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

/// The L3 + L2 source every test here shares: data @`data` with `fields`
/// ("x : tensor<6xf32>", the first the model's input), model @`model` with
/// output domain `out`, the loss @objective of `terms`, and methods @m whose
/// infer block takes `arg` and holds `body` (a leading newline is dropped).
inline std::string program(const std::vector<std::string> &fields, const std::string &model,
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
inline Type batchedType(ModuleOp module, SymbolRefAttr field, int64_t batch) {
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

inline SymbolRefAttr fieldRef(MLIRContext *ctx, StringRef data, StringRef field) {
  return SymbolRefAttr::get(ctx, data, {FlatSymbolRefAttr::get(ctx, field)});
}

/// Parses `source`, adds the actor and graph, and runs buildTrainingGraph
/// with `fields` ("data.field") as the graph's inputs.
inline std::unique_ptr<Built> build(const std::string &source, std::vector<std::string> fields) {
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
    l1::StateOp::create(ab, loc, p.state, RankedTensorType::get(p.shape, b.getF32Type()), p.init,
                        IntegerAttr());
    stateRefs.push_back(FlatSymbolRefAttr::get(ctx, p.state));
  }
  // Dropout draws with the update step and the train/eval flag.
  bool random = l2tol1::drawsRandomNumbers(methods);
  if (random) {
    auto scalar = RankedTensorType::get({}, b.getF32Type());
    l1::StateOp::create(ab, loc, "step", scalar, l1::InitKind::zeros, IntegerAttr());
    l1::StateOp::create(ab, loc, "training", scalar, l1::InitKind::training_mode, IntegerAttr());
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
inline ref::StateEnv randomState(const Built &b, uint64_t seed) {
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
inline std::vector<Tensor> randomInputs(l1::TensorGraphOp graph, uint64_t seed, int64_t intRange,
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

inline SmallVector<Tensor> run(Built &b, ArrayRef<Tensor> inputs, const ref::StateEnv &state) {
  FailureOr<SmallVector<Tensor>> out = ref::interpretTensorGraph(b.graph, inputs, state);
  INFO(b.allDiagnostics());
  REQUIRE(succeeded(out));
  return *out;
}

inline double lossOnly(Built &b, ArrayRef<Tensor> inputs, const ref::StateEnv &state) {
  ref::InterpretOptions options;
  options.onlyResults = SmallVector<unsigned>{0};
  FailureOr<SmallVector<Tensor>> out = ref::interpretTensorGraph(b.graph, inputs, state, options);
  REQUIRE(succeeded(out));
  return (*out)[0][0];
}

/// Builds, verifies and checks the structure of a successful result.
inline void requireBuilt(Built &b) {
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
inline std::unique_ptr<Built> buildOk(const std::string &source, std::vector<std::string> fields) {
  std::unique_ptr<Built> b = build(source, std::move(fields));
  requireBuilt(*b);
  return b;
}

/// A build that failed, each of `messages` among its diagnostics (after
/// requiring the module parsed, when `requireModule`).
inline void checkRefused(Built &b, std::initializer_list<StringRef> messages, bool requireModule = false) {
  INFO(b.allDiagnostics());
  if (requireModule)
    REQUIRE(b.module);
  CHECK(failed(b.outputs));
  for (StringRef m : messages)
    CHECK(b.diagnosed(m));
}

/// Central differences of the loss against the returned gradient, on
/// `samples` random entries of every parameter.
inline void checkGradients(Built &b, ArrayRef<Tensor> inputs, ref::StateEnv state, int samples = 6,
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
inline std::string mlp(const std::string &backward = "autodiff<mode = reverse>",
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

inline std::string readFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  REQUIRE(buffer);
  return (*buffer)->getBuffer().str();
}


} // namespace autodiff_test

#endif // SYNPL_TEST_UNIT_AUTODIFFHARNESS_H
