//===- L3ToL2Test.cpp - The L3 -> L2 grammar, cost model and hint parser --===//
//
// The grammar's count must be exactly what it enumerates (the search fails
// with TooManyCandidates on the count alone), every architecture must stay
// within the bounds, and a hint must become the L2 attribute it names.
//
//===----------------------------------------------------------------------===//
#include "../../lib/Conversion/L3ToL2/L3ToL2.h"

#include "synpl/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <catch2/catch.hpp>

#include <limits>
#include <set>
#include <string>

using namespace mlir;
using namespace synpl;
using namespace synpl::l3tol2;

namespace {
Problem tensorProblem(int64_t depth, int64_t width) {
  Problem p;
  p.inShape = {28, 28};
  p.inFeatures = 784;
  p.outShape = {10};
  p.outWidth = 10;
  p.softmax = true;
  p.maxDepth = depth;
  p.maxWidth = width;
  return p;
}

uint64_t enumerated(const Problem &p, std::set<std::string> *seen = nullptr) {
  uint64_t n = 0;
  enumerateArchitectures(p, [&](const Architecture &a) {
    ++n;
    if (seen)
      seen->insert(a.str());
    return true;
  });
  return n;
}

struct Context {
  MLIRContext context;
  Context() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }
};
} // namespace

TEST_CASE("the grammar's count is what it enumerates", "[l3tol2]") {
  for (int64_t depth : {1, 2, 3, 4, 5, 6, 7})
    for (int64_t width : {1, 8, 100, 512, 4096}) {
      Problem p = tensorProblem(depth, width);
      std::set<std::string> seen;
      uint64_t n = enumerated(p, &seen);
      INFO("depth " << depth << " width " << width);
      CHECK(countArchitectures(p) == n);
      CHECK(seen.size() == n); // no architecture twice
      Problem s = p;
      s.sequence = true;
      s.inShape = {16, 32};
      s.inFeatures = 32;
      CHECK(countArchitectures(s) == enumerated(s));
    }
}

TEST_CASE("architectures stay within depth(n) and width(n)", "[l3tol2]") {
  Problem p = tensorProblem(4, 300);
  enumerateArchitectures(p, [&](const Architecture &a) {
    CHECK(a.depth() <= 4);
    for (size_t i = 0; i < a.hidden.size(); ++i) {
      CHECK(a.hidden[i] <= 300);
      CHECK((a.hidden[i] & (a.hidden[i] - 1)) == 0); // a power of two
      if (i)
        CHECK(a.hidden[i] <= a.hidden[i - 1]); // non-increasing
    }
    if (a.residual) {
      bool pair = false;
      for (size_t i = 1; i < a.hidden.size(); ++i)
        pair |= a.hidden[i] == a.hidden[i - 1];
      CHECK(pair);
    }
    return true;
  });
}

TEST_CASE("the enumeration stops when told", "[l3tol2]") {
  Problem p = tensorProblem(3, 512);
  int calls = 0;
  enumerateArchitectures(p, [&](const Architecture &) { return ++calls < 7; });
  CHECK(calls == 7);
}

TEST_CASE("any depth bound is counted at once, saturating", "[l3tol2]") {
  // The count is in closed form: a depth bound of 10^10 or 2^62 costs no
  // more than depth(3), grows with the bound, and saturates instead of
  // wrapping. (The enumeration only runs under the cap.)
  const uint64_t saturated = std::numeric_limits<uint64_t>::max();
  for (int64_t width : {1, 8, 512}) {
    uint64_t previous = 0;
    for (int64_t depth : {int64_t(8), int64_t(1000), int64_t(10000000000), int64_t(1) << 62}) {
      Problem p = tensorProblem(depth, width);
      uint64_t n = countArchitectures(p);
      INFO("depth " << depth << " width " << width);
      CHECK((n > previous || n == saturated));
      previous = n;
      Problem s = p;
      s.sequence = true;
      s.inShape = {16, 32};
      s.inFeatures = 32;
      CHECK((countArchitectures(s) > n || n == saturated));
    }
    CHECK(previous > 10000);
  }
  CHECK(countArchitectures(tensorProblem(int64_t(1) << 62, 512)) == saturated);
  // Width 0 leaves only the one-stage chain, at any depth.
  CHECK(countArchitectures(tensorProblem(int64_t(10000000000), 0)) == 1);
  CHECK(enumerated(tensorProblem(int64_t(10000000000), 0)) == 1);
}

TEST_CASE("a loose program counts far past the cap", "[l3tol2]") {
  Problem p = tensorProblem(kGrammarMaxDepth, kGrammarMaxWidth);
  CHECK(countArchitectures(p) > 10000);
}

TEST_CASE("the capacity target of MNIST is 256", "[l3tol2]") {
  CHECK(capacityTarget(tensorProblem(3, 512)) == 256);
  CHECK(capacityTarget(tensorProblem(3, 128)) == 128); // width(n) caps it
  Problem wide = tensorProblem(3, 4096);
  wide.outWidth = 1000;
  CHECK(capacityTarget(wide) == 1024); // at least the output width
}

TEST_CASE("hints become the L2 attributes they name", "[l3tol2]") {
  Context c;
  std::string error;

  Attribute evo = parseHintMethod(&c.context, "evolution(pop: 50)", 10, error);
  REQUIRE(evo);
  auto e = dyn_cast<l2::EvolutionAttr>(evo);
  REQUIRE(e);
  CHECK(e.getPop() == 50);
  CHECK(e.getSigma().convertToDouble() == 0.02);
  CHECK(e.getSelection() == l2::Selection::truncation);

  Attribute sched = parseHintMethod(
      &c.context, "schedule(warmup: 10, inner: sgd(lr: 1e-1))", 10, error);
  REQUIRE(sched);
  auto s = dyn_cast<l2::ScheduleAttr>(sched);
  REQUIRE(s);
  CHECK(s.getWarmup() == 10);
  CHECK(s.getDecay() == l2::DecayKind::cosine);
  auto sgd = dyn_cast<l2::SgdAttr>(s.getInner());
  REQUIRE(sgd);
  CHECK(sgd.getLr().convertToDouble() == 0.1);

  // Arguments in any order; the attribute's order is restored.
  Attribute ordered =
      parseHintMethod(&c.context, "evolution(selection: rank, pop: 5)", 10, error);
  REQUIRE(ordered);
  CHECK(cast<l2::EvolutionAttr>(ordered).getSelection() == l2::Selection::rank);

  Attribute dfa = parseHintMethod(&c.context, "dfa", 7, error);
  REQUIRE(dfa);
  CHECK(cast<l2::DfaAttr>(dfa).getFeedbackDim() == 7); // the output width

  Attribute form = parseHintMethod(&c.context, "#l2.autodiff<mode = forward>", 10, error);
  REQUIRE(form);
  CHECK(cast<l2::AutodiffAttr>(form).getMode() == l2::AutodiffMode::forward);

  Attribute clip = parseHintMethod(&c.context, "gradient_clip(max_norm: 1, inner: adam())", 10,
                                   error);
  REQUIRE(clip);
  CHECK(cast<l2::GradientClipAttr>(clip).getMaxNorm().convertToDouble() == 1.0);
}

TEST_CASE("malformed hints say why", "[l3tol2]") {
  Context c;
  auto errorOf = [&](StringRef text) {
    std::string error;
    Attribute attr = parseHintMethod(&c.context, text, 10, error);
    CHECK(!attr);
    return error;
  };
  CHECK(errorOf("evolution(50)").find("has no key") != std::string::npos);
  CHECK(errorOf("adam(lr: 3e-4").find("expected ',' or ')'") != std::string::npos);
  CHECK(errorOf("evolution(pop: 0)").find("pop must be positive") != std::string::npos);
  CHECK(errorOf("evolution(sigma: 0.1)") == "evolution needs the argument 'pop'");
  CHECK(errorOf("evolution(pop: 5, size: 3)") ==
        "evolution has no argument 'size'; its arguments are pop, sigma, selection");
  CHECK(errorOf("nosuch(x: 1)").find("#l2.nosuch") != std::string::npos);
  CHECK(errorOf("ema(inner: sgd)").find("as a call") != std::string::npos);
  CHECK(errorOf("adam(lr: 3e-4) extra").find("unexpected") != std::string::npos);
}

//===----------------------------------------------------------------------===//
// Conv stacks and transformers
//===----------------------------------------------------------------------===//

namespace {
Problem convProblem(int64_t depth, int64_t width, int64_t side = 28) {
  Problem p = tensorProblem(depth, width);
  p.family = Family::Conv;
  p.inShape = {1, side, side};
  p.inFeatures = side * side;
  p.image = {1, side, side};
  return p;
}

Problem tokenProblem(int64_t depth, int64_t width) {
  Problem p;
  p.family = Family::Transformer;
  p.sequence = true;
  p.inShape = {64};
  p.vocab = 256;
  p.inFeatures = 256;
  p.outShape = {64, 256};
  p.outWidth = 256;
  p.softmax = true;
  p.causal = true;
  p.maxDepth = depth;
  p.maxWidth = width;
  return p;
}

/// Parses `source`, analyses its first model and builds `arch` as an
/// l2.methods (batch 128, autodiff, adam) that must pass every L2 verifier.
/// Returns its parameter count from l2::estimateResources, or 0.
uint64_t builtParams(MLIRContext &ctx, StringRef source, const Architecture &arch) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &ctx);
  REQUIRE(module);
  l3::ModelOp model = *module->getOps<l3::ModelOp>().begin();
  SymbolTableCollection symbols;
  FailureOr<Problem> p = analyzeModel(model, symbols);
  REQUIRE(succeeded(p));
  Architecture a = arch;
  a.family = p->family;
  Choice choice{l2::EpochShuffleAttr::get(&ctx, 128, true), a,
                l2::AutodiffAttr::get(&ctx, l2::AutodiffMode::reverse, nullptr),
                l2::AdamAttr::get(&ctx, llvm::APFloat(3e-4), llvm::APFloat(0.9),
                                  llvm::APFloat(0.999), llvm::APFloat(1e-8))};
  OpBuilder b(&ctx);
  b.setInsertionPointToEnd(module->getBody());
  FailureOr<l2::MethodsOp> methods = buildMethods(b, model.getLoc(), "m_method", *p, choice);
  REQUIRE(succeeded(methods));
  if (failed(mlir::verify(*module)))
    return 0;
  SymbolTableCollection uses;
  if (failed(methods->verifySymbolUses(uses)))
    return 0;
  FailureOr<l2::ResourceEstimate> est = l2::estimateResources(*methods);
  return succeeded(est) ? est->params : 0;
}
} // namespace

TEST_CASE("conv and transformer counts are what they enumerate", "[l3tol2]") {
  for (int64_t depth : {1, 2, 3, 4, 6})
    for (int64_t width : {4, 8, 100, 128, 1024})
      for (int64_t side : {7, 28, 32}) {
        INFO("depth " << depth << " width " << width << " side " << side);
        Problem p = convProblem(depth, width, side);
        std::set<std::string> seen;
        uint64_t n = enumerated(p, &seen);
        CHECK(countArchitectures(p) == n);
        CHECK(seen.size() == n);
        Problem t = tokenProblem(depth + 3, width);
        std::set<std::string> tseen;
        uint64_t tn = enumerated(t, &tseen);
        CHECK(countArchitectures(t) == tn);
        CHECK(tseen.size() == tn);
      }
}

TEST_CASE("conv and transformer candidates stay within the bounds", "[l3tol2]") {
  Problem p = convProblem(4, 128);
  bool peer = false;
  enumerateArchitectures(p, [&](const Architecture &a) {
    CHECK(a.depth() <= 4);
    CHECK(static_cast<int64_t>(a.channels.size()) <= poolableStages(p)); // 28 -> 14 -> 7
    for (int64_t c : a.channels)
      CHECK(c <= 128);
    for (int64_t h : a.hidden)
      CHECK(h <= 128);
    peer |= a.channels == SmallVector<int64_t, 4>{32, 64} &&
            a.hidden == SmallVector<int64_t, 8>{128} && a.act == l2::ActFn::relu;
    return true;
  });
  CHECK(peer); // the PyTorch reference CNN is a candidate

  Problem t = tokenProblem(8, 512);
  bool charlm = false;
  enumerateArchitectures(t, [&](const Architecture &a) {
    CHECK(a.depth() <= 8);
    CHECK(4 * a.dim <= 512);
    CHECK(a.dim % a.heads == 0);
    charlm |= a.dim == 128 && a.blocks == 2 && a.heads == 4;
    return true;
  });
  CHECK(charlm); // the PyTorch reference character LM is a candidate
  CHECK(transformerDimTarget(t) == 128);
  CHECK(countArchitectures(tokenProblem(4, 512)) == 0); // no room for a block
}

TEST_CASE("built candidates have the reference models' parameter counts", "[l3tol2]") {
  Context c;
  // torch_cnn.py: conv 1->32 (3x3: 288 + 32), conv 32->64 (18432 + 64),
  // linear 3136->128 (401408 + 128), linear 128->10 (1280 + 10).
  Architecture cnn;
  cnn.channels = {32, 64};
  cnn.hidden = {128};
  cnn.act = l2::ActFn::relu;
  CHECK(builtParams(c.context, R"(
    l3.data @mnist { l3.field @images : tensor<1x28x28xf32> }
    l3.model @m in @mnist::@images out !l3.dist<10>
        properties [depth(4), width(128), equivariant(translation)]
  )", cnn) == 320 + 18496 + 401536 + 1290);

  // torch_charlm.py: embedding 256x128 and positions 64x128; per block two
  // layer norms (2 x 256), q/k/v/o projections (4 x (128x128 + 128)) and
  // the MLP (128x512 + 512, 512x128 + 128); a final norm; the head.
  Architecture lm;
  lm.dim = 128;
  lm.blocks = 2;
  lm.heads = 4;
  uint64_t block = 2 * 256 + 4 * (128 * 128 + 128) + (128 * 512 + 512) + (512 * 128 + 128);
  CHECK(builtParams(c.context, R"(
    l3.data @corpus { l3.field @bytes : !l3.sequence<!l3.scalar<ui8>, 64> }
    l3.model @m in @corpus::@bytes out !l3.sequence<!l3.dist<256>, 64>
        properties [depth(8), width(512), causal]
  )", lm) == 256 * 128 + 64 * 128 + 2 * block + 256 + 128 * 256 + 256);

  // An autoencoder: the head's 784 outputs are reshaped to the image.
  Architecture ae;
  ae.hidden = {64};
  CHECK(builtParams(c.context, R"(
    l3.data @mnist { l3.field @images : tensor<28x28xf32> }
    l3.model @m in @mnist::@images out tensor<28x28xf32> properties [depth(2), width(64)]
  )", ae) == 784 * 64 + 64 + 64 * 784 + 784);
}

TEST_CASE("infer hints parse in the layer syntax", "[l3tol2]") {
  std::string error;
  std::optional<HintValue> v =
      parseLayerCall("sequential [conv(1, 32, 3, padding: 1), relu, pool(max, 2)]", error);
  REQUIRE(v);
  CHECK(v->kind == HintValue::Call);
  CHECK(v->text == "sequential");
  REQUIRE(v->args.size() == 1);
  const HintValue &list = v->args[0].second;
  REQUIRE(list.kind == HintValue::List);
  REQUIRE(list.items.size() == 3);
  const HintValue &conv = list.items[0];
  REQUIRE(conv.args.size() == 4);
  CHECK(conv.args[0].first.empty());
  CHECK(conv.args[2].second.text == "3");
  CHECK(conv.args[3].first == "padding");
  CHECK(list.items[1].kind == HintValue::Word);

  std::optional<HintValue> call = parseLayerCall("sequential([linear(4, 8)])", error);
  REQUIRE(call);
  CHECK(call->args[0].second.items.size() == 1);

  CHECK(!parseLayerCall("sequential [linear(4, 8)", error));
  CHECK(error.find("expected ']'") != std::string::npos);
}
