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

#include <catch2/catch.hpp>

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
  for (int64_t depth : {1, 2, 3, 4, 5})
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
