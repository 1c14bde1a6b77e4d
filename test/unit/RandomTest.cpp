//===- RandomTest.cpp - The counter-based generator and l1.random ---------===//
//
// Two contracts:
//
// * The generator (synpl/Support/CounterRng.h) draws uniform, independent
//   numbers: its keys follow the Squares rule (each half 8 distinct non-zero
//   hex digits); a million draws have the uniform's mean and variance, pass
//   a chi-square test on 256 bins, and show no correlation between
//   neighbouring elements, consecutive steps or two streams.
// * `l1.random` lowered through --synpl-l1-to-l0 and the host lowering
//   (JIT-run as the runtime runs kernels, in two chunks) draws the reference
//   interpreter's numbers bit for bit, at small and large counters, also
//   fused into a dropout mask; at a counter past the f32 integers or a
//   negative one the interpreter refuses.
//
//===----------------------------------------------------------------------===//
#include "synpl/Conversion/Passes.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/InitAll.h"
#include "synpl/Reference/L1Interpreter.h"
#include "synpl/Support/CounterRng.h"

#include "HostJit.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/TargetSelect.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <vector>

using namespace mlir;
using namespace synpl;
using synpl::ref::ElementType;
using synpl::ref::Tensor;

TEST_CASE("the counter-based generator's keys and draws", "[random]") {
  SECTION("keys: each half is 8 distinct non-zero hex digits, and streams differ") {
    std::set<uint64_t> keys;
    for (uint64_t seed = 0; seed < 8; ++seed)
      for (uint64_t stream = 0; stream < 64; ++stream) {
        uint64_t key = rng::squaresKey(seed, stream);
        keys.insert(key);
        for (int half = 0; half < 2; ++half) {
          unsigned seen = 0;
          for (int d = 0; d < 8; ++d)
            seen |= 1u << ((key >> (32 * half + 4 * d)) & 0xf);
          INFO("key " << std::hex << key);
          CHECK(seen % 2 == 0);                      // no zero digit
          CHECK(__builtin_popcount(seen) == 8); // 8 distinct digits
        }
      }
    CHECK(keys.size() == 8 * 64);
  }

  SECTION("a million draws are uniform and uncorrelated") {
    const uint64_t n = 1 << 20;
    uint64_t key = rng::squaresKey(1, 0), other = rng::squaresKey(1, 1);
    std::vector<uint64_t> bins(256, 0);
    double sum = 0, sumSq = 0, neighbours = 0, steps = 0, streams = 0;
    uint64_t outside = 0;
    for (uint64_t i = 0; i < n; ++i) {
      double u = rng::uniform(7, i, key);
      if (!(u >= 0.0 && u < 1.0)) {
        ++outside;
        continue;
      }
      ++bins[uint64_t(u * 256)];
      sum += u;
      sumSq += u * u;
      double c = u - 0.5;
      neighbours += c * (rng::uniform(7, i + 1, key) - 0.5);
      steps += c * (rng::uniform(8, i, key) - 0.5);
      streams += c * (rng::uniform(7, i, other) - 0.5);
    }
    REQUIRE(outside == 0);
    double mean = sum / n, var = sumSq / n - mean * mean;
    CHECK(std::fabs(mean - 0.5) < 2e-3);
    CHECK(std::fabs(var - 1.0 / 12) < 2e-3);
    // Correlation coefficients: the covariance over the variance 1/12;
    // independent draws give |r| ~ 1/sqrt(n) = 0.001.
    CHECK(std::fabs(12 * neighbours / n) < 5e-3);
    CHECK(std::fabs(12 * steps / n) < 5e-3);
    CHECK(std::fabs(12 * streams / n) < 5e-3);
    double chi2 = 0, expected = double(n) / 256;
    for (uint64_t b : bins)
      chi2 += (b - expected) * (b - expected) / expected;
    // 255 degrees of freedom: mean 255, standard deviation 22.6; the
    // bound is five of them above.
    CHECK(chi2 < 368);
  }
}

namespace {

using test::checkBitExact;
using test::graphText;

/// Dropout of `x` (an f32 tensor of `shape`, e.g. "16x33") at the counter
/// `%t` as the L2 -> L1 rule writes it with p given: the draws, the keep
/// mask, the kept values doubled, the rest 0; the result is `%r`.
std::string dropoutOf(const std::string &x, const std::string &shape, int seed, int stream,
                      const std::string &p) {
  std::string t = "tensor<" + shape + "xf32>", m = "tensor<" + shape + "xi1>";
  return "  %u = l1.random %t seed " + std::to_string(seed) + " stream " +
         std::to_string(stream) + " : tensor<f32> -> " + t + "\n" +
         "  %p = l1.const " + p + " : " + t + "\n" +
         "  %keep = l1.cmp ge, %u, %p : " + t + ", " + t + " -> " + m + "\n" +
         "  %s = l1.const 2.0 : tensor<f32>\n" +
         "  %xs = l1.scale " + x + ", %s : " + t + ", tensor<f32> -> " + t + "\n" +
         "  %z = l1.const 0.0 : " + t + "\n" +
         "  %r = l1.select %keep, %xs, %z : " + m + ", " + t + ", " + t + " -> " + t + "\n";
}

} // namespace

TEST_CASE("l1.random on the host draws the reference's numbers bit for bit",
          "[random][jit]") {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  DialectRegistry registry;
  registerAllDialects(registry);
  registerHostCodegen(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  std::string errors;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    errors += d.str() + "\n";
    return success();
  });

  // Counters from the first step to the last integer an f32 step holds.
  for (double step : {0.0, 1.0, 4097.0, 16777215.0}) {
    INFO("counter " << step << "\n" << errors);
    Tensor t = Tensor::scalar(step);
    SECTION("the draws, rank 3, counter " + std::to_string(int64_t(step))) {
      checkBitExact(ctx,
                    graphText("%t: tensor<f32>",
                              "  %r = l1.random %t seed 3 stream 5 : tensor<f32> -> "
                              "tensor<3x5x7xf32>\n",
                              "tensor<3x5x7xf32>"),
                    {t});
    }
    SECTION("a dropout mask fused into its use, counter " + std::to_string(int64_t(step))) {
      Tensor x(ElementType::f32(), {16, 33});
      for (size_t i = 0; i < x.data().size(); ++i)
        x.data()[i] = float(std::sin(0.37 * double(i)));
      checkBitExact(ctx,
                    graphText("%x: tensor<16x33xf32>, %t: tensor<f32>",
                              dropoutOf("%x", "16x33", 1, 2, "0.3"), "tensor<16x33xf32>"),
                    {x, t});
    }
  }

  SECTION("a dropout mask in a matmul's epilogue (the register-tiled kernel)") {
    // Small integers: the matmul's sums are exact in any order.
    Tensor x(ElementType::f32(), {24, 40}), w(ElementType::f32(), {40, 36});
    for (size_t i = 0; i < x.data().size(); ++i)
      x.data()[i] = double(int64_t(i * 7 % 9) - 4);
    for (size_t i = 0; i < w.data().size(); ++i)
      w.data()[i] = double(int64_t(i * 5 % 7) - 3);
    std::string body =
        "  %mm = l1.matmul %x, %w : tensor<24x40xf32>, tensor<40x36xf32> -> tensor<24x36xf32>\n" +
        dropoutOf("%mm", "24x36", 9, 4, "0.5");
    for (double step : {5.0, 70000.0})
      checkBitExact(ctx,
                    graphText("%x: tensor<24x40xf32>, %w: tensor<40x36xf32>, %t: tensor<f32>",
                              body, "tensor<24x36xf32>"),
                    {x, w, Tensor::scalar(step)});
  }

  SECTION("the interpreter refuses a counter that is not a non-negative integer") {
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
        graphText("%t: tensor<f32>",
                  "  %r = l1.random %t seed 0 stream 0 : tensor<f32> -> tensor<4xf32>\n",
                  "tensor<4xf32>"),
        &ctx);
    REQUIRE(module);
    auto graph = *module->getOps<l1::TensorGraphOp>().begin();
    for (double bad : {-1.0, 2.5, 0x1p33}) {
      ref::StateEnv state;
      errors.clear();
      CHECK(failed(ref::interpretTensorGraph(
          graph, {Tensor::scalar(bad)}, state)));
      CHECK(llvm::StringRef(errors).contains("is not an integer in [0, 2^32)"));
    }
  }
}
