//===- L1InterpreterTest.cpp - The reference interpreter of l1 ------------===//
//
// Part 1: every l1 tensor op on small hand-computed tensors, plus the
// interpreter's contracts (def-use order, state, handler commit, located
// failures). Part 2: the MNIST example (examples/mnist/mnist.l1.mlir): its
// loss against a plain C++ forward pass written here, each returned gradient
// against finite differences of the interpreter's own loss, and the
// GradUpdate handler against a direct Adam + warmup/cosine implementation.
//
//===----------------------------------------------------------------------===//
#include "synpl/Reference/L1Interpreter.h"

#include "synpl/Dialect/L1/L1Ops.h"
#include "TestContext.h"
#include "synpl/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace mlir;
using namespace synpl;
using synpl::ref::ElementType;
using synpl::ref::Tensor;

namespace {

using synpl::test::makeContext;

/// A parsed module plus the diagnostics emitted while using it.
struct Program {
  std::unique_ptr<MLIRContext> ctx = makeContext();
  OwningOpRef<ModuleOp> module;
  std::vector<std::string> diagnostics;
  std::unique_ptr<ScopedDiagnosticHandler> handler;

  /// Small snippets are parsed without the whole-program verifier (they have
  /// no system, `then` target or actor declarations).
  explicit Program(const std::string &text, bool verify = false) {
    handler = std::make_unique<ScopedDiagnosticHandler>(ctx.get(), [this](Diagnostic &d) {
      diagnostics.push_back(d.str());
      return success();
    });
    ParserConfig config(ctx.get(), verify);
    module = parseSourceString<ModuleOp>(text, config);
  }
  l1::TensorGraphOp graph(StringRef name = "g") {
    return module->lookupSymbol<l1::TensorGraphOp>(name);
  }
  bool diagnosed(StringRef needle) const {
    for (const std::string &d : diagnostics)
      if (StringRef(d).contains(needle))
        return true;
    return false;
  }
};

/// `l1.tensor_graph @g on @gpu_0 compute(<args>) { <body> }`.
std::string graph(const std::string &args, const std::string &body) {
  return "l1.tensor_graph @g on @gpu_0 compute(" + args + ") {\n" + body + "\n}\n";
}

Tensor f32(ArrayRef<int64_t> shape, std::vector<double> data) {
  return Tensor(ElementType::f32(), shape, std::move(data));
}

/// Runs the single-result graph @g and returns its result.
Tensor run1(Program &p, ArrayRef<Tensor> inputs, const ref::StateEnv &state = {}) {
  REQUIRE(p.module);
  FailureOr<SmallVector<Tensor>> r = ref::interpretTensorGraph(p.graph(), inputs, state);
  INFO((p.diagnostics.empty() ? std::string() : p.diagnostics.front()));
  REQUIRE(succeeded(r));
  REQUIRE(r->size() == 1);
  return (*r)[0];
}

void checkValues(const Tensor &t, ArrayRef<int64_t> shape, std::vector<double> expected,
                 double tol = 0.0) {
  REQUIRE(t.getShape() == shape);
  REQUIRE(t.size() == static_cast<int64_t>(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO("element " << i << ": " << t[i] << " vs " << expected[i]);
    if (std::isnan(expected[i]))
      CHECK(std::isnan(t[i]));
    else if (std::isinf(expected[i]))
      CHECK(t[i] == expected[i]);
    else
      CHECK(std::fabs(t[i] - expected[i]) <= tol);
  }
}

/// Binary op `op` on two 2x2 tensors of element type `elt`.
Tensor binop(const std::string &op, const std::string &elt, Tensor a, Tensor b) {
  std::string ty = "tensor<2x2x" + elt + ">";
  Program p(graph("%a: " + ty + ", %b: " + ty,
                  "  %r = l1." + op + " %a, %b : " + ty + ", " + ty + " -> " + ty +
                      "\n  l1.return %r : " + ty));
  return run1(p, {a, b});
}

Tensor unop(const std::string &op, const std::string &ty, Tensor a) {
  Program p(graph("%a: " + ty, "  %r = l1." + op + " %a : " + ty + " -> " + ty +
                                   "\n  l1.return %r : " + ty));
  return run1(p, {a});
}

} // namespace

//===----------------------------------------------------------------------===//
// Part 1: op by op
//===----------------------------------------------------------------------===//

TEST_CASE("interp: elementwise binary ops", "[reference]") {
  Tensor a = f32({2, 2}, {1, -2, 3, 8});
  Tensor b = f32({2, 2}, {4, 5, -6, 2});
  checkValues(binop("add", "f32", a, b), {2, 2}, {5, 3, -3, 10});
  checkValues(binop("sub", "f32", a, b), {2, 2}, {-3, -7, 9, 6});
  checkValues(binop("mul", "f32", a, b), {2, 2}, {4, -10, -18, 16});
  checkValues(binop("div", "f32", a, b), {2, 2}, {0.25, -0.4, -0.5, 4});
  checkValues(binop("max", "f32", a, b), {2, 2}, {4, 5, 3, 8});
  checkValues(binop("min", "f32", a, b), {2, 2}, {1, -2, -6, 2});
  // Double precision: no rounding to f32 (1/3 keeps 53 bits).
  Tensor third = binop("div", "f32", f32({2, 2}, {1, 1, 1, 1}), f32({2, 2}, {3, 3, 3, 3}));
  CHECK(third[0] == 1.0 / 3.0);
  // max/min propagate NaN.
  Tensor n = binop("max", "f32", f32({2, 2}, {NAN, 1, 2, 3}), f32({2, 2}, {0, NAN, 1, 4}));
  checkValues(n, {2, 2}, {NAN, NAN, 2, 4});
}

TEST_CASE("interp: integer arithmetic wraps and truncates", "[reference]") {
  Tensor a(ElementType::ui8(), {2, 2}, {200, 5, 0, 255});
  Tensor b(ElementType::ui8(), {2, 2}, {100, 7, 1, 1});
  checkValues(binop("add", "ui8", a, b), {2, 2}, {44, 12, 1, 0});
  checkValues(binop("sub", "ui8", a, b), {2, 2}, {100, 254, 255, 254});
  Tensor c(ElementType::si(32), {2, 2}, {7, -7, 9, -9});
  Tensor d(ElementType::si(32), {2, 2}, {2, 2, -4, -4});
  checkValues(binop("div", "i32", c, d), {2, 2}, {3, -3, -2, 2});
  Tensor e(ElementType::si(8), {2, 2}, {100, -100, 127, -128});
  checkValues(binop("add", "i8", e, e), {2, 2}, {-56, 56, -2, 0});
  // Integer division by zero has no value: a located failure.
  Program p(graph("%a: tensor<2x2xi32>, %b: tensor<2x2xi32>",
                  "  %r = l1.div %a, %b : tensor<2x2xi32>, tensor<2x2xi32> -> tensor<2x2xi32>\n"
                  "  l1.return %r : tensor<2x2xi32>"));
  Tensor z(ElementType::si(32), {2, 2}, {0, 0, 0, 0});
  CHECK(failed(ref::interpretTensorGraph(p.graph(), {c, z}, {})));
  CHECK(p.diagnosed("'l1.div' op produces"));
}

TEST_CASE("interp: elementwise unary ops", "[reference]") {
  std::string ty = "tensor<4xf32>";
  Tensor a = f32({4}, {0, 1, 4, 0.25});
  checkValues(unop("exp", ty, a), {4}, {1, std::exp(1.0), std::exp(4.0), std::exp(0.25)});
  checkValues(unop("log", ty, a), {4}, {-INFINITY, 0, std::log(4.0), std::log(0.25)});
  checkValues(unop("sqrt", ty, a), {4}, {0, 1, 2, 0.5});
  checkValues(unop("reciprocal", ty, a), {4}, {INFINITY, 1, 0.25, 4});
  checkValues(unop("tanh", ty, a), {4}, {0, std::tanh(1.0), std::tanh(4.0), std::tanh(0.25)});
  checkValues(unop("cos", ty, a), {4}, {1, std::cos(1.0), std::cos(4.0), std::cos(0.25)});
  Tensor s = f32({4}, {-2.5, 0, 3, -0.0});
  checkValues(unop("abs", ty, s), {4}, {2.5, 0, 3, 0});
  checkValues(unop("sign", ty, s), {4}, {-1, 0, 1, 0});
  checkValues(unop("neg", ty, s), {4}, {2.5, 0, -3, 0});
  CHECK(std::isnan(unop("sign", ty, f32({4}, {NAN, 1, 1, 1}))[0]));
  // abs, sign and neg also take integers.
  Tensor i(ElementType::si(32), {4}, {-3, 0, 5, -1});
  checkValues(unop("abs", "tensor<4xi32>", i), {4}, {3, 0, 5, 1});
  checkValues(unop("sign", "tensor<4xi32>", i), {4}, {-1, 0, 1, -1});
  checkValues(unop("neg", "tensor<4xi32>", i), {4}, {3, 0, -5, 1});
}

TEST_CASE("interp: matmul and scale", "[reference]") {
  Program p(graph("%a: tensor<2x3xf32>, %b: tensor<3x2xf32>",
                  "  %r = l1.matmul %a, %b : tensor<2x3xf32>, tensor<3x2xf32> -> tensor<2x2xf32>\n"
                  "  l1.return %r : tensor<2x2xf32>"));
  // [[1 2 3] [4 5 6]] x [[7 8] [9 10] [11 12]] = [[58 64] [139 154]].
  checkValues(run1(p, {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3, 2}, {7, 8, 9, 10, 11, 12})}),
              {2, 2}, {58, 64, 139, 154});

  Program s(graph("%a: tensor<2x2xf32>, %s: tensor<f32>",
                  "  %r = l1.scale %a, %s : tensor<2x2xf32>, tensor<f32> -> tensor<2x2xf32>\n"
                  "  l1.return %r : tensor<2x2xf32>"));
  checkValues(run1(s, {f32({2, 2}, {1, -2, 3, 0.5}), Tensor::scalar(-4)}), {2, 2},
              {-4, 8, -12, -2});
}

TEST_CASE("interp: broadcast", "[reference]") {
  auto bcast = [](const std::string &in, const std::string &out, const std::string &dims,
                  Tensor x) {
    Program p(graph("%a: " + in, "  %r = l1.broadcast %a" + dims + " : " + in + " -> " + out +
                                     "\n  l1.return %r : " + out));
    return run1(p, {x});
  };
  // Trailing alignment: a row repeated.
  checkValues(bcast("tensor<3xf32>", "tensor<2x3xf32>", "", f32({3}, {1, 2, 3})), {2, 3},
              {1, 2, 3, 1, 2, 3});
  // dims [0]: a column repeated.
  checkValues(bcast("tensor<2xf32>", "tensor<2x3xf32>", " dims [0]", f32({2}, {1, 2})), {2, 3},
              {1, 1, 1, 2, 2, 2});
  // Extent-1 dimensions repeat; trailing alignment of a rank-2 input.
  checkValues(bcast("tensor<2x1xf32>", "tensor<2x2x3xf32>", "", f32({2, 1}, {5, 6})),
              {2, 2, 3}, {5, 5, 5, 6, 6, 6, 5, 5, 5, 6, 6, 6});
  // dims [0, 2] of a rank-3 output.
  checkValues(bcast("tensor<2x2xf32>", "tensor<2x3x2xf32>", " dims [0, 2]",
                    f32({2, 2}, {1, 2, 3, 4})),
              {2, 3, 2}, {1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4});
  // A scalar fills the output.
  checkValues(bcast("tensor<f32>", "tensor<2x2xf32>", "", Tensor::scalar(7)), {2, 2},
              {7, 7, 7, 7});
}

TEST_CASE("interp: transpose and reshape", "[reference]") {
  Program t(graph("%a: tensor<2x3xf32>", "  %r = l1.transpose %a : tensor<2x3xf32> -> "
                                         "tensor<3x2xf32>\n  l1.return %r : tensor<3x2xf32>"));
  checkValues(run1(t, {f32({2, 3}, {1, 2, 3, 4, 5, 6})}), {3, 2}, {1, 4, 2, 5, 3, 6});

  // perm [1, 0, 2]: out[i][j][k] = in[j][i][k].
  Program p(graph("%a: tensor<2x3x2xf32>",
                  "  %r = l1.transpose %a perm [1, 0, 2] : tensor<2x3x2xf32> -> "
                  "tensor<3x2x2xf32>\n  l1.return %r : tensor<3x2x2xf32>"));
  std::vector<double> in(12);
  for (int i = 0; i < 12; ++i)
    in[i] = i;
  Tensor r = run1(p, {f32({2, 3, 2}, in)});
  REQUIRE(r.getShape() == ArrayRef<int64_t>{3, 2, 2});
  Tensor x = f32({2, 3, 2}, in);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 2; ++j)
      for (int64_t k = 0; k < 2; ++k)
        CHECK(r.at({i, j, k}) == x.at({j, i, k}));
  // Default on rank 3 reverses the dimensions: out[i][j][k] = in[k][j][i].
  Program rev(graph("%a: tensor<2x3x2xf32>",
                    "  %r = l1.transpose %a : tensor<2x3x2xf32> -> tensor<2x3x2xf32>\n"
                    "  l1.return %r : tensor<2x3x2xf32>"));
  Tensor rr = run1(rev, {x});
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 2; ++k)
        CHECK(rr.at({i, j, k}) == x.at({k, j, i}));

  Program s(graph("%a: tensor<2x3xf32>", "  %r = l1.reshape %a : tensor<2x3xf32> -> "
                                         "tensor<3x2xf32>\n  l1.return %r : tensor<3x2xf32>"));
  checkValues(run1(s, {f32({2, 3}, {1, 2, 3, 4, 5, 6})}), {3, 2}, {1, 2, 3, 4, 5, 6});
}

TEST_CASE("interp: reductions", "[reference]") {
  auto red = [](const std::string &op, const std::string &axis, const std::string &out,
                Tensor x) {
    Program p(graph("%a: tensor<2x3xf32>", "  %r = l1." + op + " %a" + axis +
                                               " : tensor<2x3xf32> -> " + out +
                                               "\n  l1.return %r : " + out));
    return run1(p, {x});
  };
  Tensor x = f32({2, 3}, {1, -2, 6, 4, 5, -3});
  checkValues(red("reduce_sum", " axis 0", "tensor<3xf32>", x), {3}, {5, 3, 3});
  checkValues(red("reduce_sum", " axis 1", "tensor<2xf32>", x), {2}, {5, 6});
  checkValues(red("reduce_sum", "", "tensor<f32>", x), {}, {11});
  checkValues(red("reduce_mean", " axis 0", "tensor<3xf32>", x), {3}, {2.5, 1.5, 1.5});
  checkValues(red("reduce_mean", " axis 1", "tensor<2xf32>", x), {2}, {5.0 / 3, 2});
  checkValues(red("reduce_mean", "", "tensor<f32>", x), {}, {11.0 / 6});
  checkValues(red("reduce_max", " axis 0", "tensor<3xf32>", x), {3}, {4, 5, 6});
  checkValues(red("reduce_max", " axis 1", "tensor<2xf32>", x), {2}, {6, 5});
  checkValues(red("reduce_max", "", "tensor<f32>", x), {}, {6});

  // The middle axis of a rank-3 tensor.
  Program p(graph("%a: tensor<2x2x2xf32>",
                  "  %r = l1.reduce_sum %a axis 1 : tensor<2x2x2xf32> -> tensor<2x2xf32>\n"
                  "  l1.return %r : tensor<2x2xf32>"));
  checkValues(run1(p, {f32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8})}), {2, 2}, {4, 6, 12, 14});
}

TEST_CASE("interp: cmp and select", "[reference]") {
  Tensor a = f32({4}, {1, 2, 3, NAN});
  Tensor b = f32({4}, {2, 2, 2, 1});
  std::map<std::string, std::vector<double>> expected = {
      {"eq", {0, 1, 0, 0}}, {"ne", {1, 0, 1, 1}}, {"lt", {1, 0, 0, 0}},
      {"le", {1, 1, 0, 0}}, {"gt", {0, 0, 1, 0}}, {"ge", {0, 1, 1, 0}}};
  for (auto &[pred, want] : expected) {
    Program p(graph("%a: tensor<4xf32>, %b: tensor<4xf32>",
                    "  %r = l1.cmp " + pred +
                        ", %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>\n"
                        "  l1.return %r : tensor<4xi1>"));
    INFO(pred);
    Tensor r = run1(p, {a, b});
    CHECK(r.getElementType() == ElementType::i1());
    checkValues(r, {4}, want);
  }
  Program s(graph("%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf32>",
                  "  %r = l1.select %c, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<4xf32> "
                  "-> tensor<4xf32>\n  l1.return %r : tensor<4xf32>"));
  checkValues(run1(s, {Tensor(ElementType::i1(), {4}, {1, 0, 0, 1}), f32({4}, {1, 2, 3, 4}),
                       f32({4}, {-1, -2, -3, -4})}),
              {4}, {1, -2, -3, 4});
}

TEST_CASE("interp: cast", "[reference]") {
  auto cast = [](const std::string &from, const std::string &to, Tensor x) {
    Program p(graph("%a: " + from,
                    "  %r = l1.cast %a : " + from + " -> " + to + "\n  l1.return %r : " + to));
    return run1(p, {x});
  };
  Tensor u = cast("tensor<3xui8>", "tensor<3xf32>", Tensor(ElementType::ui8(), {3}, {0, 7, 255}));
  CHECK(u.getElementType() == ElementType::f32());
  checkValues(u, {3}, {0, 7, 255});
  // Float to integer truncates toward zero.
  Tensor tr = cast("tensor<3xf32>", "tensor<3xi32>", f32({3}, {2.7, -2.7, -0.5}));
  checkValues(tr, {3}, {2, -2, 0});
  CHECK(!std::signbit(tr[2])); // an integer has no -0
  checkValues(cast("tensor<3xf32>", "tensor<3xui8>", f32({3}, {255.9, 0.2, 17})), {3},
              {255, 0, 17});
  checkValues(cast("tensor<3xi1>", "tensor<3xf32>", Tensor(ElementType::i1(), {3}, {1, 0, 1})),
              {3}, {1, 0, 1});
  checkValues(cast("tensor<3xui8>", "tensor<3xi32>", Tensor(ElementType::ui8(), {3}, {0, 9, 200})),
              {3}, {0, 9, 200});

  // A value the target cannot hold is refused, with a located error.
  Program p(graph("%a: tensor<2xf32>", "  %r = l1.cast %a : tensor<2xf32> -> tensor<2xui8>\n"
                                       "  l1.return %r : tensor<2xui8>"));
  CHECK(failed(ref::interpretTensorGraph(p.graph(), {f32({2}, {1, 256})}, {})));
  CHECK(p.diagnosed("'l1.cast' op casts 256 (element 1) to ui8"));
  CHECK(failed(ref::interpretTensorGraph(p.graph(), {f32({2}, {-1, 0})}, {})));
  CHECK(failed(ref::interpretTensorGraph(p.graph(), {f32({2}, {NAN, 0})}, {})));
}

TEST_CASE("interp: one_hot and const", "[reference]") {
  Program p(graph("%y: tensor<4xui8>", "  %r = l1.one_hot %y classes 3 : tensor<4xui8> -> "
                                       "tensor<4x3xf32>\n  l1.return %r : tensor<4x3xf32>"));
  // Label 7 is outside [0, 3): all zeros.
  checkValues(run1(p, {Tensor(ElementType::ui8(), {4}, {0, 2, 7, 1})}), {4, 3},
              {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0});

  Program c(graph("", "  %r = l1.const 2.5 : tensor<2x2xf32>\n  l1.return %r : tensor<2x2xf32>"));
  checkValues(run1(c, {}), {2, 2}, {2.5, 2.5, 2.5, 2.5});
  Program s(graph("", "  %r = l1.const 3.0e-04 : tensor<f32>\n  l1.return %r : tensor<f32>"));
  checkValues(run1(s, {}), {}, {3.0e-4});
  Program i(graph("", "  %r = l1.const -3.0 : tensor<2xi32>\n  l1.return %r : tensor<2xi32>"));
  Tensor ri = run1(i, {});
  CHECK(ri.getElementType() == ElementType::si(32));
  checkValues(ri, {2}, {-3, -3});
}

//===----------------------------------------------------------------------===//
// Part 1b: the interpreter's contracts
//===----------------------------------------------------------------------===//

TEST_CASE("interp: graph bodies run in def-use order", "[reference]") {
  // Uses come before definitions in the text (a graph region).
  Program q(graph("%a: tensor<2xf32>",
                  "  %c = l1.mul %b, %b : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>\n"
                  "  %b = l1.add %a, %one : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>\n"
                  "  %one = l1.const 1.0 : tensor<2xf32>\n"
                  "  l1.return %c : tensor<2xf32>"));
  checkValues(run1(q, {f32({2}, {1, -3})}), {2}, {4, 4});
}

TEST_CASE("interp: only the asked-for results are computed", "[reference]") {
  // Result 1 divides by zero in an integer tensor; asking for result 0 only
  // never runs it.
  Program p(graph("%a: tensor<2xi32>",
                  "  %z = l1.const 0.0 : tensor<2xi32>\n"
                  "  %d = l1.div %a, %z : tensor<2xi32>, tensor<2xi32> -> tensor<2xi32>\n"
                  "  %n = l1.neg %a : tensor<2xi32> -> tensor<2xi32>\n"
                  "  l1.return %n, %d : tensor<2xi32>, tensor<2xi32>"));
  REQUIRE(p.module);
  Tensor a(ElementType::si(32), {2}, {3, -4});
  CHECK(failed(ref::interpretTensorGraph(p.graph(), {a}, {})));
  ref::InterpretOptions only0;
  only0.onlyResults = SmallVector<unsigned>{0};
  auto r = ref::interpretTensorGraph(p.graph(), {a}, {}, only0);
  REQUIRE(succeeded(r));
  REQUIRE(r->size() == 2);
  checkValues((*r)[0], {2}, {-3, 4});
  CHECK((*r)[1].getRank() == 0);
  ref::InterpretOptions bad;
  bad.onlyResults = SmallVector<unsigned>{2};
  CHECK(failed(ref::interpretTensorGraph(p.graph(), {a}, {}, bad)));
  CHECK(p.diagnosed("has 2 results; result 2 was asked for"));
}

TEST_CASE("interp: a def-use cycle is a located failure", "[reference]") {
  Program p(graph("%a: tensor<2xf32>",
                  "  %b = l1.add %a, %c : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>\n"
                  "  %c = l1.neg %b : tensor<2xf32> -> tensor<2xf32>\n"
                  "  l1.return %c : tensor<2xf32>"));
  REQUIRE(p.module);
  CHECK(failed(ref::interpretTensorGraph(p.graph(), {f32({2}, {1, 2})}, {})));
  CHECK(p.diagnosed("lies on a def-use cycle"));
}

TEST_CASE("interp: wrong inputs and unknown ops are located failures", "[reference]") {
  Program p(graph("%a: tensor<2xf32>",
                  "  %b = l1.neg %a : tensor<2xf32> -> tensor<2xf32>\n"
                  "  l1.return %b : tensor<2xf32>"));
  REQUIRE(p.module);
  CHECK(failed(ref::interpretTensorGraph(p.graph(), {f32({3}, {1, 2, 3})}, {})));
  CHECK(p.diagnosed("argument #0 is tensor<3xf32>, expected 'tensor<2xf32>'"));
  CHECK(failed(ref::interpretTensorGraph(p.graph(), {}, {})));
  CHECK(p.diagnosed("takes 1 arguments, the interpreter got 0"));
  CHECK(failed(ref::interpretTensorGraph(
      p.graph(), {Tensor(ElementType::ui8(), {2}, {1, 2})}, {})));

  // An op outside l1's tensor ops.
  Program u(graph("", "  %c = arith.constant dense<1.0> : tensor<2xf32>\n"
                      "  l1.return %c : tensor<2xf32>"));
  REQUIRE(u.module);
  CHECK(failed(ref::interpretTensorGraph(u.graph(), {}, {})));
  CHECK(u.diagnosed("'arith.constant' op is not an op the reference interpreter knows"));

  // A shape the op's verifier would reject (parsed unverified) is refused,
  // not indexed out of bounds.
  Program m(graph("%a: tensor<2x3xf32>, %b: tensor<2x3xf32>",
                  "  %r = l1.matmul %a, %b : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>\n"
                  "  l1.return %r : tensor<2x3xf32>"));
  REQUIRE(m.module);
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(failed(ref::interpretTensorGraph(m.graph(), {x, x}, {})));
  CHECK(m.diagnosed("cannot multiply [2, 3] by [2, 3]"));
  Program b(graph("%a: tensor<3xf32>", "  %r = l1.broadcast %a dims [0] : tensor<3xf32> -> "
                                       "tensor<2x3xf32>\n  l1.return %r : tensor<2x3xf32>"));
  REQUIRE(b.module);
  CHECK(failed(ref::interpretTensorGraph(b.graph(), {f32({3}, {1, 2, 3})}, {})));
  CHECK(b.diagnosed("cannot broadcast [3] to [2, 3]"));
  Program w(graph("%a: tensor<2xf32>", "  %r = l1.add %a, %a : tensor<2xf32>, tensor<2xf32> -> "
                                       "tensor<3xf32>\n  l1.return %r : tensor<3xf32>"));
  REQUIRE(w.module);
  CHECK(failed(ref::interpretTensorGraph(w.graph(), {f32({2}, {1, 2})}, {})));
  CHECK(w.diagnosed("the computed result is tensor<2xf32>, expected 'tensor<3xf32>'"));
}

TEST_CASE("interp: result types must be static and of a holdable size", "[reference]") {
  Program d(graph("", "  %r = l1.const 1.0 : tensor<?xf32>\n  l1.return %r : tensor<?xf32>"));
  REQUIRE(d.module);
  CHECK(failed(ref::interpretTensorGraph(d.graph(), {}, {})));
  CHECK(d.diagnosed("is not a static-shaped tensor"));
  Program h(graph("", "  %r = l1.const 1.0 : tensor<4000000000x4000000000x4000000000xf32>\n"
                      "  l1.return %r : tensor<4000000000x4000000000x4000000000xf32>"));
  REQUIRE(h.module);
  CHECK(failed(ref::interpretTensorGraph(h.graph(), {}, {})));
  CHECK(h.diagnosed("is too large for the reference interpreter"));
}

TEST_CASE("interp: comparing kernel buffers with the reference", "[reference]") {
  // A kernel's float buffer against the double reference.
  Tensor expected = f32({2, 2}, {1.0 / 3, -2, 1e-9, 100});
  std::vector<float> out = expected.toBuffer<float>();
  REQUIRE(out.size() == 4);
  Tensor actual = Tensor::fromBuffer(ElementType::f32(), {2, 2}, out.data());
  ref::Comparison ok = ref::compare(actual, expected, 1e-6, 1e-12);
  CHECK(ok.ok);
  CHECK(ok.worstRatio > 0); // f32 rounding is visible, within the allowance
  // Off by 1e-4 at element 3.
  out[3] = 100.01f;
  ref::Comparison bad =
      ref::compare(Tensor::fromBuffer(ElementType::f32(), {2, 2}, out.data()), expected, 1e-6,
                   1e-12);
  CHECK(!bad.ok);
  CHECK(StringRef(bad.message).starts_with("element 3: 100.01"));
  CHECK(bad.worstRatio > 90);
  // Shapes, NaN and infinities.
  CHECK(!ref::compare(f32({4}, {1, 2, 3, 4}), expected, 1, 1).ok);
  CHECK(ref::compare(f32({2}, {NAN, INFINITY}), f32({2}, {NAN, INFINITY}), 0, 0).ok);
  CHECK(!ref::compare(f32({2}, {NAN, 1}), f32({2}, {1, 1}), 1, 1).ok);
  CHECK(!ref::compare(f32({2}, {INFINITY, 1}), f32({2}, {1e300, 1}), 1, 1).ok);
  // Bytes.
  uint8_t bytes[3] = {0, 7, 255};
  Tensor b = Tensor::fromBuffer(ElementType::ui8(), {3}, bytes);
  CHECK(b.toBuffer<uint8_t>() == std::vector<uint8_t>{0, 7, 255});
  CHECK(ref::compare(b, Tensor(ElementType::ui8(), {3}, {0, 7, 255}), 0, 0).ok);
}

TEST_CASE("interp: actor state initializers", "[reference]") {
  Program p(R"mlir(
l1.actor @a on @gpu_0 {
  l1.state @k : tensor<200x300xf32> init kaiming
  l1.state @x : tensor<200x300xf32> init xavier
  l1.state @z : tensor<3xf32> init zeros
  l1.state @o : tensor<f32> init ones
}
)mlir");
  REQUIRE(p.module);
  auto actor = p.module->lookupSymbol<l1::ActorOp>("a");
  ref::StateEnv state;
  REQUIRE(succeeded(ref::initializeActorState(actor, 7, state)));
  REQUIRE(state.size() == 4);
  auto moments = [](const Tensor &t) {
    double mean = 0, sq = 0;
    for (double v : t.data())
      mean += v;
    mean /= t.size();
    for (double v : t.data())
      sq += (v - mean) * (v - mean);
    return std::make_pair(mean, std::sqrt(sq / t.size()));
  };
  // kaiming: N(0, sqrt(2 / 200)) = std 0.1; 60000 draws.
  auto [km, ks] = moments(*state.lookup("a", "k"));
  CHECK(std::fabs(km) < 0.002);
  CHECK(std::fabs(ks - 0.1) < 0.002);
  // xavier: U(+-sqrt(6 / 500)); std = limit / sqrt(3) = sqrt(2 / 500).
  const Tensor &x = *state.lookup("a", "x");
  double limit = std::sqrt(6.0 / 500);
  double largest = 0;
  for (double v : x.data())
    largest = std::max(largest, std::fabs(v));
  CHECK(largest <= limit);
  CHECK(largest > 0.99 * limit);
  auto [xm, xs] = moments(x);
  CHECK(std::fabs(xm) < 0.001);
  CHECK(std::fabs(xs - std::sqrt(2.0 / 500)) < 0.001);
  checkValues(*state.lookup("a", "z"), {3}, {0, 0, 0});
  checkValues(*state.lookup("a", "o"), {}, {1});
  // The seed fixes the draws.
  ref::StateEnv again;
  REQUIRE(succeeded(ref::initializeActorState(actor, 7, again)));
  CHECK(again.lookup("a", "k")->data() == state.lookup("a", "k")->data());
}

namespace {
const char *kActor = R"mlir(
l1.actor @acc on @gpu_0 {
  l1.state @w : tensor<2xf32> init zeros
  l1.state @n : tensor<f32> init zeros
  l1.window @win [@w] readers [@g]
  l1.handler @Add(%d: tensor<2xf32>) {
    %w = l1.state_read @w : tensor<2xf32>
    %w1 = l1.add %w, %d : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
    l1.state_write @w, %w1 : tensor<2xf32>
    // A read after the write sees the new value.
    %again = l1.state_read @w : tensor<2xf32>
    %w2 = l1.mul %again, %again : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
    l1.state_write @w, %w2 : tensor<2xf32>
    %n = l1.state_read @n : tensor<f32>
    %one = l1.const 1.0 : tensor<f32>
    %n1 = l1.add %n, %one : tensor<f32>, tensor<f32> -> tensor<f32>
    l1.state_write @n, %n1 : tensor<f32>
    l1.return
  }
}
l1.tensor_graph @g on @gpu_0 reads [@acc::@win] compute(%x: tensor<2xf32>) {
  %w = l1.window_read @acc::@win[@w] : tensor<2xf32>
  %r = l1.sub %x, %w : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  l1.return %r : tensor<2xf32>
}
)mlir";
} // namespace

TEST_CASE("interp: handlers and windows share the actor state", "[reference]") {
  Program p(kActor);
  REQUIRE(p.module);
  auto handler = p.module->lookupSymbol<l1::ActorOp>("acc").lookupSymbol<l1::HandlerOp>("Add");
  REQUIRE(handler);
  ref::StateEnv state;
  state.set("acc", "w", f32({2}, {1, 2}));
  state.set("acc", "n", Tensor::scalar(0));

  REQUIRE(succeeded(ref::interpretHandler(handler, {f32({2}, {1, -4})}, state)));
  // w <- (w + d)^2 = [4, 4]; n <- 1.
  checkValues(*state.lookup("acc", "w"), {2}, {4, 4});
  checkValues(*state.lookup("acc", "n"), {}, {1});
  // The window reads the updated state.
  checkValues(run1(p, {f32({2}, {10, 10})}, state), {2}, {6, 6});

  // A failing handler commits nothing: @n is missing, so the read fails
  // after @w was written.
  ref::StateEnv partial;
  partial.set("acc", "w", f32({2}, {1, 2}));
  CHECK(failed(ref::interpretHandler(handler, {f32({2}, {1, 1})}, partial)));
  CHECK(p.diagnosed("reads @acc::@n, which the state has no value for"));
  checkValues(*partial.lookup("acc", "w"), {2}, {1, 2});
  CHECK(!partial.contains("acc", "n"));

  // A window read without state is a located failure.
  CHECK(failed(ref::interpretTensorGraph(p.graph(), {f32({2}, {1, 1})}, ref::StateEnv())));
  CHECK(p.diagnosed("reads @acc::@w, which the state has no value for"));
}

//===----------------------------------------------------------------------===//
// Part 2: the MNIST example
//===----------------------------------------------------------------------===//

namespace {

const char *kParams[] = {"w1", "b1", "g1", "be1", "w2", "b2", "g2", "be2", "w3", "b3"};
constexpr int kNumParams = 10;
constexpr int64_t kBatch = 128;

struct Mnist {
  std::unique_ptr<Program> program;
  l1::TensorGraphOp graph;
  l1::HandlerOp update;
  ref::StateEnv state;
  Tensor images, labels;
  std::mt19937_64 rng{20261129};

  Mnist() {
    std::string path = std::string(SYNPL_SOURCE_DIR) + "/examples/mnist/mnist.l1.mlir";
    auto buffer = llvm::MemoryBuffer::getFile(path);
    REQUIRE(buffer);
    // The whole program, verified.
    program = std::make_unique<Program>((*buffer)->getBuffer().str(), /*verify=*/true);
    REQUIRE(program->module);
    graph = program->module->lookupSymbol<l1::TensorGraphOp>("forward_backward");
    auto actor = program->module->lookupSymbol<l1::ActorOp>("model_state");
    REQUIRE(graph);
    REQUIRE(actor);
    update = actor.lookupSymbol<l1::HandlerOp>("GradUpdate");
    REQUIRE(update);

    // Parameters: weights ~ N(0, sqrt(2 / fan_in)), gains 1 +- 0.2, biases
    // and shifts +- 0.1 (no parameter is 0: the L1 term uses sign).
    for (const char *name : kParams) {
      auto st = actor.lookupSymbol<l1::StateOp>(name);
      REQUIRE(st);
      auto type = cast<RankedTensorType>(st.getType());
      Tensor t(ElementType::f32(), type.getShape());
      StringRef n(name);
      if (n.starts_with("w")) {
        std::normal_distribution<double> d(0.0, std::sqrt(2.0 / type.getShape()[0]));
        for (double &v : t.data())
          v = d(rng);
      } else if (n.starts_with("g")) {
        std::uniform_real_distribution<double> d(0.8, 1.2);
        for (double &v : t.data())
          v = d(rng);
      } else {
        std::uniform_real_distribution<double> d(-0.1, 0.1);
        for (double &v : t.data())
          v = d(rng);
      }
      state.set("model_state", name, t);
    }
    std::uniform_int_distribution<int> pixel(0, 255), label(0, 9);
    images = Tensor(ElementType::ui8(), {kBatch, 28, 28});
    for (double &v : images.data())
      v = pixel(rng);
    labels = Tensor(ElementType::ui8(), {kBatch, 1});
    for (double &v : labels.data())
      v = label(rng);
  }

  const Tensor &param(int i) const { return *state.lookup("model_state", kParams[i]); }

  /// The interpreter's loss only (the backward is skipped).
  double loss() {
    ref::InterpretOptions opts;
    opts.onlyResults = SmallVector<unsigned>{0};
    auto r = ref::interpretTensorGraph(graph, {images, labels}, state, opts);
    REQUIRE(succeeded(r));
    return (*r)[0][0];
  }
};

/// The logits, [batch x 10] row-major, written out in plain C++ (the
/// example header's math).
std::vector<double> referenceLogits(const Mnist &m) {
  const int64_t B = kBatch;
  auto linear = [&](const std::vector<double> &x, int64_t in, const Tensor &w, const Tensor &b) {
    int64_t out = w.getShape()[1];
    std::vector<double> y(B * out);
    for (int64_t r = 0; r < B; ++r)
      for (int64_t j = 0; j < out; ++j) {
        double s = b[j];
        for (int64_t k = 0; k < in; ++k)
          s += x[r * in + k] * w[k * out + j];
        y[r * out + j] = s;
      }
    return y;
  };
  auto normGelu = [&](std::vector<double> z, int64_t h, const Tensor &g, const Tensor &be) {
    for (int64_t r = 0; r < B; ++r) {
      double mu = 0, var = 0;
      for (int64_t j = 0; j < h; ++j)
        mu += z[r * h + j];
      mu /= h;
      for (int64_t j = 0; j < h; ++j)
        var += (z[r * h + j] - mu) * (z[r * h + j] - mu);
      var /= h; // biased
      for (int64_t j = 0; j < h; ++j) {
        double n = (z[r * h + j] - mu) / std::sqrt(var + 1e-5) * g[j] + be[j];
        z[r * h + j] =
            0.5 * n * (1 + std::tanh(std::sqrt(2 / M_PI) * (n + 0.044715 * n * n * n)));
      }
    }
    return z;
  };
  std::vector<double> x(B * 784);
  for (int64_t i = 0; i < B * 784; ++i)
    x[i] = m.images[i] / 255.0;
  auto a1 = normGelu(linear(x, 784, m.param(0), m.param(1)), 256, m.param(2), m.param(3));
  auto a2 = normGelu(linear(a1, 256, m.param(4), m.param(5)), 256, m.param(6), m.param(7));
  return linear(a2, 256, m.param(8), m.param(9));
}

/// The loss written out in plain C++.
double referenceLoss(const Mnist &m) {
  const int64_t B = kBatch;
  std::vector<double> logits = referenceLogits(m);
  double ce = 0;
  for (int64_t r = 0; r < B; ++r) {
    double mx = -INFINITY;
    for (int c = 0; c < 10; ++c)
      mx = std::max(mx, logits[r * 10 + c]);
    double se = 0;
    for (int c = 0; c < 10; ++c)
      se += std::exp(logits[r * 10 + c] - mx);
    int y = static_cast<int>(m.labels[r]);
    ce -= logits[r * 10 + y] - mx - std::log(se);
  }
  ce /= B;
  double l1 = 0;
  for (int i = 0; i < kNumParams; ++i)
    for (double v : m.param(i).data())
      l1 += std::fabs(v);
  return ce + 1e-4 * l1;
}

/// The argmax hits in plain C++: rows whose label's logit is the row's
/// largest (ties count); labels outside [0, 10) never hit.
double referenceCorrect(const Mnist &m) {
  std::vector<double> logits = referenceLogits(m);
  double hits = 0;
  for (int64_t r = 0; r < kBatch; ++r) {
    double y = m.labels[r];
    if (y < 0 || y >= 10)
      continue;
    double mx = *std::max_element(logits.begin() + r * 10, logits.begin() + r * 10 + 10);
    hits += logits[r * 10 + static_cast<int64_t>(y)] >= mx;
  }
  return hits;
}

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

} // namespace

TEST_CASE("interp: MNIST loss and gradients", "[reference][mnist]") {
  Mnist m;
  auto t0 = std::chrono::steady_clock::now();
  auto full = ref::interpretTensorGraph(m.graph, {m.images, m.labels}, m.state);
  INFO((m.program->diagnostics.empty() ? "" : m.program->diagnostics.front()));
  REQUIRE(succeeded(full));
  double tFull = seconds(t0);
  // The loss, one gradient per parameter, and correct.
  REQUIRE(full->size() == 2 + kNumParams);
  const Tensor &lossT = (*full)[0];
  REQUIRE(lossT.getRank() == 0);
  double loss = lossT[0];

  // The loss against the plain C++ forward pass.
  double expected = referenceLoss(m);
  INFO("interpreter loss " << loss << ", plain C++ loss " << expected);
  CHECK(std::fabs(loss - expected) < 1e-10);
  CHECK(std::fabs(m.loss() - loss) == 0.0); // the loss-only evaluation agrees exactly

  // correct against the plain C++ argmax, also with the last rows padded
  // with label 255 (the runtime's padding of a last partial batch).
  const Tensor &correct = full->back();
  REQUIRE(correct.getRank() == 0);
  INFO("interpreter correct " << correct[0] << ", plain C++ " << referenceCorrect(m));
  CHECK(correct[0] == referenceCorrect(m));
  CHECK(correct[0] > 0);
  {
    Mnist padded;
    for (int64_t r = 100; r < kBatch; ++r)
      padded.labels[r] = 255;
    auto p = ref::interpretTensorGraph(padded.graph, {padded.images, padded.labels},
                                       padded.state);
    REQUIRE(succeeded(p));
    INFO("padded: interpreter correct " << p->back()[0] << ", plain C++ "
                                        << referenceCorrect(padded));
    CHECK(p->back()[0] == referenceCorrect(padded));
    CHECK(p->back()[0] <= correct[0]);
  }

  // Gradients against fourth-order central differences of the
  // interpreter's own loss: (8 (f(+h) - f(-h)) - (f(+2h) - f(-2h))) / 12h,
  // at 4 random coordinates per parameter, each at least 10h away from 0
  // (the L1 term's kink).
  const double h = 1e-3;
  double worst = 0;
  auto t1 = std::chrono::steady_clock::now();
  for (int p = 0; p < kNumParams; ++p) {
    const Tensor &grad = (*full)[1 + p];
    REQUIRE(grad.getShape() == m.param(p).getShape());
    Tensor *param = m.state.lookup("model_state", kParams[p]);
    std::uniform_int_distribution<int64_t> pick(0, param->size() - 1);
    for (int k = 0; k < 4; ++k) {
      int64_t i;
      do
        i = pick(m.rng);
      while (std::fabs((*param)[i]) < 10 * h);
      double x0 = (*param)[i];
      auto at = [&](double dx) {
        (*param)[i] = x0 + dx;
        return m.loss();
      };
      double fd = (8 * (at(h) - at(-h)) - (at(2 * h) - at(-2 * h))) / (12 * h);
      (*param)[i] = x0;
      double an = grad[i];
      double rel = std::fabs(fd - an) / std::max({std::fabs(fd), std::fabs(an), 1e-6});
      INFO(kParams[p] << "[" << i << "]: gradient " << an << ", finite difference " << fd
                      << ", relative error " << rel);
      CHECK(rel < 1e-5);
      worst = std::max(worst, rel);
    }
  }
  double tFd = seconds(t1);
  WARN("MNIST: full graph " << tFull << " s, 160 loss evaluations " << tFd
                            << " s, |loss - plain C++ loss| " << std::fabs(loss - expected)
                            << ", worst gradient relative error " << worst);
}

namespace {
/// Adam (beta1 0.9, beta2 0.999, eps 1e-8, bias-corrected) with the learning
/// rate 3e-4 * min(t/1000, 1) * 0.5 (1 + cos(pi min(max(t-1000, 0)/3680, 1))).
struct AdamRef {
  double lr, bc1, bc2;
  explicit AdamRef(double t) {
    double warm = std::min(t / 1000.0, 1.0);
    double progress = std::min(std::max(t - 1000.0, 0.0) / 3680.0, 1.0);
    lr = 3e-4 * warm * 0.5 * (1 + std::cos(M_PI * progress));
    bc1 = 1 - std::pow(0.9, t);
    bc2 = 1 - std::pow(0.999, t);
  }
  void step(double &w, double &m, double &v, double g) const {
    m = 0.9 * m + 0.1 * g;
    v = 0.999 * v + 0.001 * g * g;
    w -= lr * (m / bc1) / (std::sqrt(v / bc2) + 1e-8);
  }
};
} // namespace

TEST_CASE("interp: MNIST GradUpdate is Adam with warmup and cosine decay",
          "[reference][mnist]") {
  Mnist m;
  auto full = ref::interpretTensorGraph(m.graph, {m.images, m.labels}, m.state);
  REQUIRE(succeeded(full));
  SmallVector<Tensor> grads(full->begin() + 1, full->end() - 1); // not loss, correct

  // Step 1 (warmup), 2501 (cosine phase) and 5001 (past the schedule: lr 0).
  for (double start : {0.0, 2500.0, 5000.0}) {
    ref::StateEnv state = m.state;
    std::normal_distribution<double> mom(0.0, 1e-3);
    std::uniform_real_distribution<double> sec(0.0, 1e-5);
    for (int p = 0; p < kNumParams; ++p) {
      Tensor mt = m.param(p), vt = m.param(p);
      for (double &x : mt.data())
        x = mom(m.rng);
      for (double &x : vt.data())
        x = sec(m.rng);
      state.set("model_state", std::string("m_") + kParams[p], mt);
      state.set("model_state", std::string("v_") + kParams[p], vt);
    }
    state.set("model_state", "step", Tensor::scalar(start));
    ref::StateEnv before = state;

    auto t0 = std::chrono::steady_clock::now();
    REQUIRE(succeeded(ref::interpretHandler(m.update, grads, state)));
    double tHandler = seconds(t0);
    INFO("start step " << start << ", handler " << tHandler << " s");
    CHECK((*state.lookup("model_state", "step"))[0] == start + 1);

    AdamRef adam(start + 1);
    double worstW = 0, worstM = 0, worstV = 0;
    for (int p = 0; p < kNumParams; ++p) {
      std::string mn = std::string("m_") + kParams[p], vn = std::string("v_") + kParams[p];
      const Tensor &w0 = *before.lookup("model_state", kParams[p]);
      const Tensor &m0 = *before.lookup("model_state", mn);
      const Tensor &v0 = *before.lookup("model_state", vn);
      const Tensor &w1 = *state.lookup("model_state", kParams[p]);
      const Tensor &m1 = *state.lookup("model_state", mn);
      const Tensor &v1 = *state.lookup("model_state", vn);
      for (int64_t i = 0; i < w0.size(); ++i) {
        double w = w0[i], mm = m0[i], vv = v0[i];
        adam.step(w, mm, vv, grads[p][i]);
        // Compare the update itself, not the weight it is added to.
        double du = std::fabs((w1[i] - w0[i]) - (w - w0[i]));
        worstW = std::max(worstW, du / std::max(std::fabs(w - w0[i]), 1e-30));
        worstM = std::max(worstM, std::fabs(m1[i] - mm) / std::max(std::fabs(mm), 1e-30));
        worstV = std::max(worstV, std::fabs(v1[i] - vv) / std::max(std::fabs(vv), 1e-30));
      }
    }
    WARN("GradUpdate from step " << start << " (" << tHandler << " s): relative errors: update "
                                 << worstW << ", m " << worstM << ", v " << worstV);
    if (start < 4680)
      CHECK(worstW < 1e-9);
    else { // lr is 0 (up to cos(pi) rounding): the weights stay put.
      double moved = 0;
      for (int p = 0; p < kNumParams; ++p)
        for (int64_t i = 0; i < m.param(p).size(); ++i)
          moved = std::max(moved, std::fabs((*state.lookup("model_state", kParams[p]))[i] -
                                            m.param(p)[i]));
      CHECK(moved < 1e-18);
    }
    CHECK(worstM < 1e-12);
    CHECK(worstV < 1e-12);
  }
}
