//===- L3Test.cpp - The l3 dialect's C++ API --------------------------===//
//
// The accessors other layers call (L2 reads the model's constraints and its
// input field), and the literal syntax helpers, checked on the spec's MNIST
// program and on small variations of it.
//
//===----------------------------------------------------------------------===//
#include "synpl/Dialect/L3/L3Ops.h"
#include "synpl/Dialect/L3/L3Syntax.h"
#include "synpl/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

using namespace mlir;
using namespace synpl::l3;

namespace {
const char *kMnist = R"mlir(
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
  l3.field @labels : tensor<1xui8>
}
l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [depth(3), width(512), param_budget(500K)]
    hints [#l3.hint<l2::backward, "evolution(pop: 50)">]
l3.loss @objective {
  l3.divergence @ce(@classify::@out, @mnist::@labels) weight 1.0
  l3.norm @sparse(@classify::@params, p = 1) weight 1.0e-4
} combine weighted_sum
l3.goal minimize(@objective)
)mlir";

struct Fixture {
  MLIRContext ctx;
  std::vector<std::string> errors;
  Fixture() {
    DialectRegistry registry;
    synpl::registerAllDialects(registry);
    ctx.appendDialectRegistry(registry);
    ctx.loadAllAvailableDialects();
    ctx.getDiagEngine().registerHandler([this](Diagnostic &diag) {
      errors.push_back(diag.str());
      return success();
    });
  }
  OwningOpRef<ModuleOp> parse(const std::string &text) {
    return parseSourceString<ModuleOp>(text, &ctx);
  }
};

template <typename OpT> OpT first(ModuleOp module) {
  auto ops = module.getOps<OpT>();
  return ops.empty() ? OpT() : *ops.begin();
}
} // namespace

TEST_CASE("l3: the MNIST model exposes its constraints and input", "[l3]") {
  Fixture f;
  OwningOpRef<ModuleOp> module = f.parse(kMnist);
  REQUIRE(module);
  REQUIRE(f.errors.empty());

  ModelOp model = first<ModelOp>(*module);
  REQUIRE(model);
  CHECK(model.getDepthLimit() == std::optional<int64_t>(3));
  CHECK(model.getWidthLimit() == std::optional<int64_t>(512));
  CHECK(model.getParamBudget() == std::optional<uint64_t>(500000));
  CHECK_FALSE(model.getLatencyBudgetMs().has_value());
  CHECK_FALSE(model.isCausal());
  CHECK_FALSE(model.isAutoregressive());
  CHECK_FALSE(model.getEquivariantGroup().has_value());

  auto dist = dyn_cast<DistType>(model.getOutDomain());
  REQUIRE(dist);
  CHECK(dist.getNumClasses() == 10);
  CHECK(model.getInRef().getRootReference().getValue() == "mnist");

  SymbolTableCollection symbols;
  FieldOp field = model.resolveInField(symbols);
  REQUIRE(field);
  CHECK(field.getSymName() == "images");
  auto tensor = dyn_cast<RankedTensorType>(field.getDomain());
  REQUIRE(tensor);
  CHECK(tensor.getShape() == ArrayRef<int64_t>{28, 28});
  CHECK(model.resolveInDomain(symbols) == field.getDomain());

  DataOp data = first<DataOp>(*module);
  REQUIRE(data);
  CHECK(data.lookupField("labels"));
  CHECK_FALSE(data.lookupField("pixels"));

  REQUIRE(model.getHints());
  auto hint = cast<HintAttr>((*model.getHints())[0]);
  CHECK(hint.getLayer() == "l2");
  CHECK(hint.getDirective() == "backward");
  CHECK(hint.getArgs() == "evolution(pop: 50)");
  CHECK(hint.targetsLowerLayer());

  LossOp loss = first<LossOp>(*module);
  REQUIRE(loss);
  auto terms = loss.getTerms();
  REQUIRE(terms.size() == 2);
  CHECK(terms[0].getTermName() == "ce");
  CHECK(terms[0].getReadRefs().size() == 2);
  CHECK(terms[1].getWeightValue() == 1.0e-4);
}

TEST_CASE("l3: every constraint kind has an accessor", "[l3]") {
  Fixture f;
  OwningOpRef<ModuleOp> module = f.parse(R"mlir(
l3.data @text { l3.field @tokens : !l3.sequence<!l3.scalar<i32>, 512> }
l3.model @lm in @text::@tokens out !l3.dist<100>
    properties [causal, autoregressive, equivariant(translation),
                latency_budget(250us), param_budget(1.5M)]
)mlir");
  REQUIRE(module);
  ModelOp model = first<ModelOp>(*module);
  CHECK(model.isCausal());
  CHECK(model.isAutoregressive());
  CHECK(model.getEquivariantGroup() == std::optional<StringRef>("translation"));
  REQUIRE(model.getLatencyBudgetMs());
  CHECK(*model.getLatencyBudgetMs() == Approx(0.25));
  CHECK(model.getParamBudget() == std::optional<uint64_t>(1500000));
  CHECK_FALSE(model.getDepthLimit().has_value());
}

TEST_CASE("l3: an unresolved input yields a null field", "[l3]") {
  Fixture f;
  OwningOpRef<ModuleOp> module = f.parse(R"mlir(
l3.data @mnist { l3.field @images : tensor<28x28xf32> }
l3.model @classify in @mnist::@pixels out !l3.dist<10> properties []
)mlir");
  // The parser verifies: the module is rejected with row L3.1.
  CHECK_FALSE(module);
  REQUIRE(f.errors.size() == 1);
  CHECK(f.errors[0].find("[safety] L3.1:") == 0);
}

TEST_CASE("l3: reals print in their shortest exact form", "[l3]") {
  using synpl::l3::syntax::formatReal;
  using synpl::l3::syntax::formatRealOrInteger;
  CHECK(formatReal(1.0) == "1.0");
  CHECK(formatReal(10.0) == "10.0");
  CHECK(formatReal(0.5) == "0.5");
  CHECK(formatReal(1e-4) == "0.0001");
  CHECK(formatReal(1e-7) == "1.0e-07");
  CHECK(formatReal(-2.5) == "-2.5");
  CHECK(formatRealOrInteger(2.0) == "2");
  CHECK(formatRealOrInteger(2.5) == "2.5");
  for (double value : {0.1, 1.0 / 3.0, 6.02214076e23, 1e-300, 123456.789}) {
    std::string text = formatReal(value);
    CHECK(std::strtod(text.c_str(), nullptr) == value);
    CHECK(text.find('.') != std::string::npos);
  }
}

TEST_CASE("l3: budgets round-trip through the custom syntax", "[l3]") {
  Fixture f;
  OwningOpRef<ModuleOp> module = f.parse(R"mlir(
l3.data @d { l3.field @x : tensor<4xf32> }
l3.model @m in @d::@x out tensor<4xf32>
    properties [param_budget(2G), latency_budget(1.5s)]
)mlir");
  REQUIRE(module);
  std::string text;
  llvm::raw_string_ostream os(text);
  first<ModelOp>(*module).print(os);
  CHECK(text.find("param_budget(2G)") != std::string::npos);
  CHECK(text.find("latency_budget(1500ms)") != std::string::npos);
}
