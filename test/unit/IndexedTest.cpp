//===- IndexedTest.cpp - l1.gather and l1.scatter_add ---------------------===//
//
// Three contracts:
//
// * The reference interpreter's gather reads the table's rows at the
//   indices (a zero row for an index outside [0, rows)), and its scatter_add
//   is the gather's adjoint: <gather(T, ids), G> = <T, scatter_add(G, ids)>
//   for any T and G, with repeated and out-of-range indices.
// * Both lowered through --synpl-l1-to-l0 and the host lowering (JIT-run as
//   the runtime runs kernels, in two chunks) compute what the interpreter
//   computes: i32 indices with repeats and out-of-range values (clamped and
//   masked), ui8 indices into 256 rows (neither), a gather fused with its
//   consumer, a scatter of a value computed in another kernel, and one
//   read through a reshape.
// * Values are small integers, so every f32 sum is exact in any order: the
//   kernels must match bit for bit.
//
//===----------------------------------------------------------------------===//
#include "synpl/InitAll.h"
#include "synpl/Reference/L1Interpreter.h"

#include "HostJit.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/TargetSelect.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

using namespace mlir;
using namespace synpl;
using synpl::ref::ElementType;
using synpl::ref::Tensor;
using test::checkBitExact;
using test::graphText;

namespace {

/// A tensor of `shape` whose element i is `f(i)`.
template <typename F>
Tensor filled(ElementType type, std::vector<int64_t> shape, F f) {
  Tensor t(type, shape);
  for (size_t i = 0; i < t.data().size(); ++i)
    t.data()[i] = f(int64_t(i));
  return t;
}

struct Context {
  Context() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    registerAllDialects(registry);
    registerHostCodegen(registry);
    ctx = std::make_unique<MLIRContext>(registry);
    ctx->loadAllAvailableDialects();
  }
  DialectRegistry registry;
  std::unique_ptr<MLIRContext> ctx;
};

/// The reference's result of graph `text` on `inputs`.
Tensor interpret(MLIRContext &ctx, const std::string &text, const std::vector<Tensor> &inputs) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &ctx);
  REQUIRE(module);
  ref::StateEnv state;
  auto outs = ref::interpretTensorGraph(*module->getOps<l1::TensorGraphOp>().begin(), inputs,
                                        state);
  REQUIRE(succeeded(outs));
  return outs->front();
}

// Indices with repeats (3 three times), both ends of the table (0, 9), and
// three outside it (-1, 10, 200).
const std::vector<double> kIds = {3, 0, 9, 3, -1, 10, 3, 7, 200, 1, 5, 0};

} // namespace

TEST_CASE("interp: gather reads rows and scatter_add is its adjoint", "[reference][indexed]") {
  Context c;
  Tensor ids(ElementType::si(32), {3, 4}, kIds);
  Tensor table = filled(ElementType::f32(), {10, 5}, [](int64_t i) { return 0.5 * i - 7; });
  std::string gatherText = graphText(
      "%t: tensor<10x5xf32>, %ids: tensor<3x4xi32>",
      "  %r = l1.gather %t[%ids] : tensor<10x5xf32>, tensor<3x4xi32> -> tensor<3x4x5xf32>\n",
      "tensor<3x4x5xf32>");
  Tensor g = interpret(*c.ctx, gatherText, {table, ids});
  REQUIRE(g.getShape() == llvm::ArrayRef<int64_t>({3, 4, 5}));
  for (int64_t p = 0; p < 12; ++p)
    for (int64_t d = 0; d < 5; ++d) {
      double id = kIds[p];
      double want = id >= 0 && id < 10 ? table[int64_t(id) * 5 + d] : 0.0;
      CHECK(g[p * 5 + d] == want);
    }

  std::string scatterText = graphText(
      "%src: tensor<3x4x5xf32>, %ids: tensor<3x4xi32>",
      "  %r = l1.scatter_add %src[%ids] : tensor<3x4x5xf32>, tensor<3x4xi32> -> "
      "tensor<10x5xf32>\n",
      "tensor<10x5xf32>");
  Tensor src = filled(ElementType::f32(), {3, 4, 5}, [](int64_t i) { return std::sin(0.3 * i); });
  Tensor s = interpret(*c.ctx, scatterText, {src, ids});
  // Row 3 sums positions 0, 3 and 6; row 2 is named by no index.
  for (int64_t d = 0; d < 5; ++d) {
    CHECK(s[3 * 5 + d] == src[0 * 5 + d] + src[3 * 5 + d] + src[6 * 5 + d]);
    CHECK(s[2 * 5 + d] == 0.0);
  }
  // <gather(T, ids), G> == <T, scatter_add(G, ids)>.
  double lhs = 0, rhs = 0;
  for (int64_t i = 0; i < g.size(); ++i)
    lhs += g[i] * src[i];
  for (int64_t i = 0; i < table.size(); ++i)
    rhs += table[i] * s[i];
  CHECK(std::abs(lhs - rhs) <= 1e-12 * std::max(1.0, std::abs(lhs)));
}

TEST_CASE("gather and scatter_add on the host compute the reference's values",
          "[indexed][jit]") {
  Context c;
  MLIRContext &ctx = *c.ctx;
  std::string errors;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    errors += d.str() + "\n";
    return success();
  });
  INFO(errors);
  Tensor ids(ElementType::si(32), {3, 4}, kIds);
  Tensor table = filled(ElementType::f32(), {10, 40}, [](int64_t i) { return double(i % 23 - 11); });

  SECTION("a gather with i32 indices, fused with its consumer") {
    checkBitExact(ctx,
                  graphText("%t: tensor<10x40xf32>, %ids: tensor<3x4xi32>",
                            "  %e = l1.gather %t[%ids] : tensor<10x40xf32>, tensor<3x4xi32> -> "
                            "tensor<3x4x40xf32>\n"
                            "  %c = l1.const 3.0 : tensor<f32>\n"
                            "  %r = l1.scale %e, %c : tensor<3x4x40xf32>, tensor<f32> -> "
                            "tensor<3x4x40xf32>\n",
                            "tensor<3x4x40xf32>"),
                  {table, ids});
  }
  SECTION("a scatter_add of a computed value with i32 indices, then a consumer") {
    Tensor src = filled(ElementType::f32(), {3, 4, 40}, [](int64_t i) { return double(i % 7 - 3); });
    checkBitExact(ctx,
                  graphText("%src: tensor<3x4x40xf32>, %ids: tensor<3x4xi32>, "
                            "%t: tensor<10x40xf32>",
                            "  %x = l1.mul %src, %src : tensor<3x4x40xf32>, tensor<3x4x40xf32> -> "
                            "tensor<3x4x40xf32>\n"
                            "  %y = l1.exp %x : tensor<3x4x40xf32> -> tensor<3x4x40xf32>\n"
                            "  %z = l1.add %x, %y : tensor<3x4x40xf32>, tensor<3x4x40xf32> -> "
                            "tensor<3x4x40xf32>\n"
                            "  %w = l1.sub %z, %y : tensor<3x4x40xf32>, tensor<3x4x40xf32> -> "
                            "tensor<3x4x40xf32>\n"
                            "  %s = l1.scatter_add %w[%ids] : tensor<3x4x40xf32>, tensor<3x4xi32> "
                            "-> tensor<10x40xf32>\n"
                            "  %r = l1.add %s, %t : tensor<10x40xf32>, tensor<10x40xf32> -> "
                            "tensor<10x40xf32>\n",
                            "tensor<10x40xf32>"),
                  {src, ids, table});
  }
  SECTION("ui8 indices into 256 rows, the gradient read through a reshape") {
    Tensor bytes = filled(ElementType::ui8(), {6, 8}, [](int64_t i) { return double(i * 37 % 256); });
    Tensor big = filled(ElementType::f32(), {256, 16}, [](int64_t i) { return double(i % 19 - 9); });
    Tensor flat = filled(ElementType::f32(), {48, 16}, [](int64_t i) { return double(i % 5 - 2); });
    checkBitExact(ctx,
                  graphText("%t: tensor<256x16xf32>, %ids: tensor<6x8xui8>, %g: tensor<48x16xf32>",
                            "  %e = l1.gather %t[%ids] : tensor<256x16xf32>, tensor<6x8xui8> -> "
                            "tensor<6x8x16xf32>\n"
                            "  %g3 = l1.reshape %g : tensor<48x16xf32> -> tensor<6x8x16xf32>\n"
                            "  %m = l1.mul %e, %g3 : tensor<6x8x16xf32>, tensor<6x8x16xf32> -> "
                            "tensor<6x8x16xf32>\n"
                            "  %m2 = l1.reshape %m : tensor<6x8x16xf32> -> tensor<48x16xf32>\n"
                            "  %m3 = l1.reshape %m2 : tensor<48x16xf32> -> tensor<6x8x16xf32>\n"
                            "  %r = l1.scatter_add %m3[%ids] : tensor<6x8x16xf32>, tensor<6x8xui8> "
                            "-> tensor<256x16xf32>\n",
                            "tensor<256x16xf32>"),
                  {big, bytes, flat});
  }
}
