//===- L0ToLLVMJitTest.cpp - Run host-lowered L0 code and check its numbers ===//
//
// Lowers l0uop kernels and l0ctl programs with --synpl-convert-l0uop-to-llvm
// and --synpl-convert-l0ctl-to-llvm, JIT-compiles the result with
// mlir::ExecutionEngine, runs it on random inputs, and compares with plain
// C++ written in the kernels' own operation order.
//
// Kernels run as the host runtime will run them: the range [0, iterations)
// split into two chunks [0, n/2) and [n/2, n), one call each.
//
// Tolerance: |got - want| <= 1e-5 * max(|got|, |want|) + 1e-6 for f32. The
// references follow the kernels' order of operations (and fma where the
// kernel has MULACC), so most results agree bit for bit; the slack only
// covers libm differences in exp2/log2/sin.
//
//===----------------------------------------------------------------------===//
#include "synpl/Conversion/Passes.h"
#include "synpl/InitAll.h"

#include "HostJit.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/TargetSelect.h"

#include <catch2/catch.hpp>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#ifndef SYNPL_SOURCE_DIR
#error "SYNPL_SOURCE_DIR must point at the source tree"
#endif

namespace {

using synpl::test::Buffer;
using synpl::test::Jit;

template <typename T, typename Dist>
void fillRandom(Buffer<T> &b, std::mt19937 &rng, Dist dist) {
  for (size_t i = 0; i < b.n; ++i)
    b[i] = static_cast<T>(dist(rng));
}

bool close(float got, float want) {
  if (std::isnan(got) || std::isnan(want))
    return std::isnan(got) && std::isnan(want);
  float tol = 1e-5f * std::max(std::fabs(got), std::fabs(want)) + 1e-6f;
  return std::fabs(got - want) <= tol;
}

/// Counts mismatches (and remembers the first) so a failure says where.
struct Compare {
  size_t bad = 0, first = 0;
  float got = 0, want = 0;
  void operator()(size_t i, float g, float w) {
    if (close(g, w))
      return;
    if (bad++ == 0) {
      first = i;
      got = g;
      want = w;
    }
  }
};
#define CHECK_ALL(cmp)                                                         \
  do {                                                                         \
    INFO("first mismatch at " << (cmp).first << ": got " << (cmp).got          \
                              << ", want " << (cmp).want);                     \
    CHECK((cmp).bad == 0);                                                     \
  } while (0)

// Stubs of the runtime's queue primitives, bound into the JIT by name.
std::vector<std::pair<void *, uint64_t>> pushed;
std::vector<uint64_t> toPop;
extern "C" void stubQueuePush(void *region, uint64_t value) {
  pushed.push_back({region, value});
}
extern "C" uint64_t stubQueuePop(void *) {
  uint64_t v = toPop.front();
  toPop.erase(toPop.begin());
  return v;
}

std::map<std::string, void *> queueStubs() {
  return {{"synpl_rt_ctl_queue_push", reinterpret_cast<void *>(&stubQueuePush)},
          {"synpl_rt_ctl_queue_pop", reinterpret_cast<void *>(&stubQueuePop)}};
}

uint64_t splitmix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

struct Context {
  Context() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    mlir::DialectRegistry registry;
    synpl::registerHostCodegen(registry);
    ctx.appendDialectRegistry(registry);
    ctx.loadAllAvailableDialects();
  }
  mlir::MLIRContext ctx;
};

const std::string kMnist =
    std::string(SYNPL_SOURCE_DIR) + "/examples/mnist/mnist.l0.mlir";

} // namespace

TEST_CASE("mnist.l0.mlir kernels run on the host and match C++",
          "[l0tollvm][jit]") {
  Context c;
  std::unique_ptr<Jit> jit = Jit::fromFile(c.ctx, kMnist);
  REQUIRE(jit->module);
  REQUIRE(jit->compile(queueStubs()));
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);

  SECTION("fc1_fwd: h = x . w1 + b1 (128x784 . 784x256 + 256)") {
    Buffer<float> x(128 * 784), w(784 * 256), b(256), h(128 * 256, NAN);
    fillRandom(x, rng, unit);
    fillRandom(w, rng, unit);
    fillRandom(b, rng, unit);
    CHECK(jit->iterations["mnist_train_step_fc1_fwd"] == 128);
    // The first chunk writes rows [0, 64) and nothing else.
    bool written = true, untouched = true;
    REQUIRE(jit->runKernelWithCheck(
        "mnist_train_step_fc1_fwd",
        [&] {
          for (size_t i = 0; i < 64 * 256; ++i)
            written &= !std::isnan(h[i]);
          for (size_t i = 64 * 256; i < h.n; ++i)
            untouched &= std::isnan(h[i]);
        },
        x.data, w.data, b.data, h.data));
    CHECK(written);
    CHECK(untouched);
    Compare cmp;
    for (int i = 0; i < 128; ++i)
      for (int j = 0; j < 256; ++j) {
        float acc = b[j];
        for (int k = 0; k < 784; k += 2) {
          float p1 = x[i * 784 + k + 1] * w[(k + 1) * 256 + j];
          float pair = std::fma(x[i * 784 + k], w[k * 256 + j], p1);
          acc = acc + pair;
        }
        cmp(i * 256 + j, h[i * 256 + j], acc);
      }
    CHECK_ALL(cmp);
  }

  SECTION("ln1_fwd: layer norm of each row, scaled and shifted") {
    Buffer<float> h(128 * 256), g(256), be(256), n(128 * 256, NAN);
    fillRandom(h, rng, std::uniform_real_distribution<float>(-3.0f, 3.0f));
    fillRandom(g, rng, unit);
    fillRandom(be, rng, unit);
    REQUIRE(jit->runKernel("mnist_train_step_ln1_fwd", h.data, g.data,
                           be.data, n.data));
    Compare cmp;
    const float invN = 3.906250e-03f, eps = 1.0e-05f;
    for (int i = 0; i < 128; ++i) {
      const float *row = &h[i * 256];
      float sum = 0.0f;
      for (int j = 0; j < 256; ++j)
        sum = sum + row[j];
      float mean = sum * invN, negMean = -mean;
      float ss = 0.0f;
      for (int j = 0; j < 256; ++j) {
        float d = row[j] + negMean;
        float d2 = d * d;
        ss = ss + d2;
      }
      float var = ss * invN;
      float varEps = var + eps;
      float rstd = 1.0f / std::sqrt(varEps);
      for (int j = 0; j < 256; ++j) {
        float centred = row[j] + negMean;
        float xhat = centred * rstd;
        cmp(i * 256 + j, n[i * 256 + j], std::fma(xhat, g[j], be[j]));
      }
    }
    CHECK_ALL(cmp);
  }

  SECTION("gelu1: elementwise tanh-form GELU through EXP2") {
    Buffer<float> n(128 * 256), a(128 * 256, NAN);
    fillRandom(n, rng, std::uniform_real_distribution<float>(-4.0f, 4.0f));
    REQUIRE(jit->runKernel("mnist_train_step_gelu1", n.data, a.data));
    Compare cmp;
    for (size_t i = 0; i < n.n; ++i) {
      float v = n[i];
      float v2 = v * v;
      float v3 = v2 * v;
      float inner = std::fma(v3, 4.471500e-02f, v);
      float z = inner * 2.302208f;
      float e = std::exp2(-z);
      float den = e + 1.0f;
      float sig = 1.0f / den;
      cmp(i, a[i], v * sig);
    }
    CHECK_ALL(cmp);
  }

  SECTION("fc1_grad_w: gr_w1 = x^T . dh1") {
    Buffer<float> x(128 * 784), dh(128 * 256), gw(784 * 256, NAN);
    fillRandom(x, rng, unit);
    fillRandom(dh, rng, unit);
    REQUIRE(jit->runKernel("mnist_train_step_fc1_grad_w", x.data, dh.data,
                           gw.data));
    Compare cmp;
    for (int k = 0; k < 784; ++k)
      for (int j = 0; j < 256; ++j) {
        float sum = 0.0f;
        // The tiled lowering fuses the REDUCE add of a product into an
        // fma (MULACC), in k order.
        for (int b = 0; b < 128; ++b)
          sum = std::fma(x[b * 784 + k], dh[b * 256 + j], sum);
        cmp(k * 256 + j, gw[k * 256 + j], sum);
      }
    CHECK_ALL(cmp);
  }

  SECTION("adam_w1: one Adam step of w1 in place") {
    size_t n = 784 * 256;
    Buffer<float> g(n), w(n), m(n), v(n);
    fillRandom(g, rng, unit);
    fillRandom(w, rng, unit);
    fillRandom(m, rng, unit);
    fillRandom(v, rng, std::uniform_real_distribution<float>(0.0f, 1.0f));
    std::vector<float> w0(w.data, w.data + n), m0(m.data, m.data + n),
        v0(v.data, v.data + n);
    REQUIRE(jit->runKernel("mnist_train_step_adam_w1", g.data, w.data, m.data,
                           v.data));
    Compare cw, cm, cv;
    for (size_t i = 0; i < n; ++i) {
      float gs = g[i] * 0.1f;
      float m1 = std::fma(m0[i], 0.9f, gs);
      float g2 = g[i] * g[i];
      float g2s = g2 * 1.0e-3f;
      float v1 = std::fma(v0[i], 0.999f, g2s);
      float den = std::sqrt(v1) + 1.0e-8f;
      float inv = 1.0f / den;
      float step = m1 * inv;
      cm(i, m[i], m1);
      cv(i, v[i], v1);
      cw(i, w[i], std::fma(step, -3.0e-4f, w0[i]));
    }
    CHECK_ALL(cm);
    CHECK_ALL(cv);
    CHECK_ALL(cw);
  }

  SECTION("actor_dispatch: the control program with stub queues") {
    Buffer<uint64_t> batchQueue(8), launchQueue(8), state(2);
    using Fn = void (*)(void *, void *, void *); // sorted by region name
    auto fn = reinterpret_cast<Fn>(
        jit->lookup("mnist_train_step_actor_dispatch"));
    REQUIRE(fn);
    // In the epoch: step 5 dispatches batch 7 on stream 1.
    state[0] = 5;
    state[1] = 99;
    pushed.clear();
    toPop = {7};
    fn(batchQueue.data, launchQueue.data, state.data);
    CHECK(state[0] == 6);
    CHECK(state[1] == 99);
    REQUIRE(pushed.size() == 1);
    CHECK(pushed[0].first == launchQueue.data);
    CHECK(pushed[0].second == ((1ULL << 32) | 7));
    // Past the epoch's 468 batches: no launch, a new seed.
    toPop = {500};
    fn(batchQueue.data, launchQueue.data, state.data);
    CHECK(state[0] == 7);
    CHECK(state[1] == splitmix64(7));
    CHECK(pushed.size() == 1);
  }
}

// Small kernels that, between them, use every one of the 25 UOps (and
// every host intrinsic of CUSTOM).
static const char *const kEveryUOp = R"mlir(
l0uop.plan @t pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 256 lifetime(0, 0) : !l0uop.buf<64xf32>
  l0uop.slot @y pool @dev offset 256 size 256 lifetime(0, 0) : !l0uop.buf<64xf32>
  l0uop.slot @o pool @dev offset 512 size 3072 lifetime(0, 0) : !l0uop.buf<12x64xf32>
  l0uop.slot @ni pool @dev offset 3584 size 256 lifetime(0, 0) : !l0uop.buf<64xi32>
  l0uop.slot @oi pool @dev offset 3840 size 2048 lifetime(0, 0) : !l0uop.buf<8x64xi32>
  l0uop.slot @of pool @dev offset 6144 size 512 lifetime(0, 0) : !l0uop.buf<2x64xf32>
  l0uop.slot @v pool @dev offset 6656 size 512 lifetime(0, 0) : !l0uop.buf<16x8xf32>
  l0uop.slot @ov pool @dev offset 7168 size 512 lifetime(0, 0) : !l0uop.buf<16x8xf32>
  l0uop.slot @r pool @dev offset 7680 size 2048 lifetime(0, 0) : !l0uop.buf<32x16xf32>
  l0uop.slot @or pool @dev offset 9728 size 512 lifetime(0, 0) : !l0uop.buf<4x32xf32>
  l0uop.slot @ta pool @dev offset 10240 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf32>
  l0uop.slot @tb pool @dev offset 11264 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf32>
  l0uop.slot @tc pool @dev offset 12288 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf32>
  l0uop.slot @td pool @dev offset 13312 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf32>
  l0uop.slot @ex pool @dev offset 14336 size 256 lifetime(0, 0) : !l0uop.buf<4x16xf32>
  l0uop.slot @oex pool @dev offset 14592 size 256 lifetime(0, 0) : !l0uop.buf<4x16xf32>

  // Float arithmetic, compares and transcendentals: row r of %o holds the
  // r-th result.
  l0uop.kernel @floats inputs(%x = @x : !l0uop.buf<64xf32>, %y = @y : !l0uop.buf<64xf32>)
      outputs(%o = @o : !l0uop.buf<12x64xf32>)
      grid(1, 1, 1) block(64, 1, 1) shared_mem 0 {
    %c0 = l0uop.const 0 : index
    %c1 = l0uop.const 1 : index
    %c2 = l0uop.const 2 : index
    %c3 = l0uop.const 3 : index
    %c4 = l0uop.const 4 : index
    %c5 = l0uop.const 5 : index
    %c6 = l0uop.const 6 : index
    %c7 = l0uop.const 7 : index
    %c8 = l0uop.const 8 : index
    %c9 = l0uop.const 9 : index
    %c10 = l0uop.const 10 : index
    %c11 = l0uop.const 11 : index
    %i = l0uop.range 0 to 64 over global_x : index
    %px = l0uop.index %x[%i] : !l0uop.buf<64xf32>
    %a = l0uop.load %px : f32
    %py = l0uop.index %y[%i] : !l0uop.buf<64xf32>
    %b = l0uop.load %py : f32
    %add = l0uop.add %a, %b : f32
    %mul = l0uop.mul %a, %b : f32
    %fma = l0uop.mulacc %a, %b, %a : f32
    %neg = l0uop.neg %a : f32
    %rcp = l0uop.reciprocal %b : f32
    %max = l0uop.max %a, %b : f32
    %lt = l0uop.cmplt %a, %b : f32
    %min = l0uop.where %lt, %a, %b : f32
    %ne = l0uop.cmpne %a, %b : f32
    %sel = l0uop.where %ne, %a, %rcp : f32
    %e = l0uop.exp2 %a : f32
    %l = l0uop.log2 %b : f32
    %s = l0uop.sin %a : f32
    %q = l0uop.sqrt %b : f32
    %p0 = l0uop.index %o[%c0, %i] : !l0uop.buf<12x64xf32>
    l0uop.store %p0, %add : f32
    %p1 = l0uop.index %o[%c1, %i] : !l0uop.buf<12x64xf32>
    l0uop.store %p1, %mul : f32
    %p2 = l0uop.index %o[%c2, %i] : !l0uop.buf<12x64xf32>
    l0uop.store %p2, %fma : f32
    %p3 = l0uop.index %o[%c3, %i] : !l0uop.buf<12x64xf32>
    l0uop.store %p3, %neg : f32
    %p4 = l0uop.index %o[%c4, %i] : !l0uop.buf<12x64xf32>
    l0uop.store %p4, %rcp : f32
    %p5 = l0uop.index %o[%c5, %i] : !l0uop.buf<12x64xf32>
    l0uop.store %p5, %max : f32
    %p6 = l0uop.index %o[%c6, %i] : !l0uop.buf<12x64xf32>
    l0uop.store %p6, %min : f32
    %p7 = l0uop.index %o[%c7, %i] : !l0uop.buf<12x64xf32>
    l0uop.store %p7, %sel : f32
    %p8 = l0uop.index %o[%c8, %i] : !l0uop.buf<12x64xf32>
    l0uop.store %p8, %e : f32
    %p9 = l0uop.index %o[%c9, %i] : !l0uop.buf<12x64xf32>
    l0uop.store %p9, %l : f32
    %p10 = l0uop.index %o[%c10, %i] : !l0uop.buf<12x64xf32>
    l0uop.store %p10, %s : f32
    %p11 = l0uop.index %o[%c11, %i] : !l0uop.buf<12x64xf32>
    l0uop.store %p11, %q : f32
    l0uop.end %i
  }

  // Integers and index: MOD, NEG, MAX, CMPLT/WHERE, ADD, MULACC, CAST in
  // every direction, BITCAST both ways.
  l0uop.kernel @ints inputs(%n = @ni : !l0uop.buf<64xi32>, %f = @x : !l0uop.buf<64xf32>)
      outputs(%oi = @oi : !l0uop.buf<8x64xi32>, %of = @of : !l0uop.buf<2x64xf32>)
      grid(1, 1, 1) block(64, 1, 1) shared_mem 0 {
    %r0 = l0uop.const 0 : index
    %r1 = l0uop.const 1 : index
    %r2 = l0uop.const 2 : index
    %r3 = l0uop.const 3 : index
    %r4 = l0uop.const 4 : index
    %r5 = l0uop.const 5 : index
    %r6 = l0uop.const 6 : index
    %r7 = l0uop.const 7 : index
    %seven = l0uop.const 7 : i32
    %five = l0uop.const 5 : index
    %i = l0uop.range 0 to 64 over global_x : index
    %pn = l0uop.index %n[%i] : !l0uop.buf<64xi32>
    %v = l0uop.load %pn : i32
    %m = l0uop.mod %v, %seven : i32
    %ng = l0uop.neg %v : i32
    %abs = l0uop.max %v, %ng : i32
    %lt = l0uop.cmplt %v, %seven : i32
    %min = l0uop.where %lt, %v, %seven : i32
    %add = l0uop.add %v, %seven : i32
    %ma = l0uop.mulacc %ng, %seven, %v : i32
    %im = l0uop.mod %i, %five : index
    %ic = l0uop.cast %im : index to i32
    %pf = l0uop.index %f[%i] : !l0uop.buf<64xf32>
    %fv = l0uop.load %pf : f32
    %fi = l0uop.cast %fv : f32 to i32
    %bits = l0uop.bitcast %fv : f32 to i32
    %vf = l0uop.cast %v : i32 to f32
    %back = l0uop.bitcast %bits : i32 to f32
    %q0 = l0uop.index %oi[%r0, %i] : !l0uop.buf<8x64xi32>
    l0uop.store %q0, %m : i32
    %q1 = l0uop.index %oi[%r1, %i] : !l0uop.buf<8x64xi32>
    l0uop.store %q1, %abs : i32
    %q2 = l0uop.index %oi[%r2, %i] : !l0uop.buf<8x64xi32>
    l0uop.store %q2, %min : i32
    %q3 = l0uop.index %oi[%r3, %i] : !l0uop.buf<8x64xi32>
    l0uop.store %q3, %add : i32
    %q4 = l0uop.index %oi[%r4, %i] : !l0uop.buf<8x64xi32>
    l0uop.store %q4, %ma : i32
    %q5 = l0uop.index %oi[%r5, %i] : !l0uop.buf<8x64xi32>
    l0uop.store %q5, %ic : i32
    %q6 = l0uop.index %oi[%r6, %i] : !l0uop.buf<8x64xi32>
    l0uop.store %q6, %fi : i32
    %q7 = l0uop.index %oi[%r7, %i] : !l0uop.buf<8x64xi32>
    l0uop.store %q7, %bits : i32
    %f0 = l0uop.index %of[%r0, %i] : !l0uop.buf<2x64xf32>
    l0uop.store %f0, %vf : f32
    %f1 = l0uop.index %of[%r1, %i] : !l0uop.buf<2x64xf32>
    l0uop.store %f1, %back : f32
    l0uop.end %i
  }

  // Vectors: 4-lane LOAD/STORE, vector ADD/MUL, GEP and VECTORIZE.
  l0uop.kernel @vectors inputs(%v = @v : !l0uop.buf<16x8xf32>)
      outputs(%o = @ov : !l0uop.buf<16x8xf32>)
      grid(1, 1, 1) block(16, 1, 1) shared_mem 0 {
    %zero = l0uop.const 0 : index
    %four = l0uop.const 4 : index
    %r = l0uop.range 0 to 16 over global_x : index
    %p0 = l0uop.index %v[%r, %zero] : !l0uop.buf<16x8xf32>
    %lo = l0uop.load %p0 : vector<4xf32>
    %p1 = l0uop.index %v[%r, %four] : !l0uop.buf<16x8xf32>
    %hi = l0uop.load %p1 : vector<4xf32>
    %s = l0uop.add %lo, %hi : vector<4xf32>
    %e0 = l0uop.gep %s[0] : vector<4xf32> -> f32
    %e1 = l0uop.gep %s[1] : vector<4xf32> -> f32
    %e2 = l0uop.gep %s[2] : vector<4xf32> -> f32
    %e3 = l0uop.gep %s[3] : vector<4xf32> -> f32
    %rev = l0uop.vectorize %e3, %e2, %e1, %e0 : f32
    %m = l0uop.mul %rev, %hi : vector<4xf32>
    %q0 = l0uop.index %o[%r, %zero] : !l0uop.buf<16x8xf32>
    l0uop.store %q0, %m : vector<4xf32>
    %q1 = l0uop.index %o[%r, %four] : !l0uop.buf<16x8xf32>
    l0uop.store %q1, %s : vector<4xf32>
    l0uop.end %r
  }

  // REDUCE add/mul/max (the max's init computed after its RANGE), block
  // shared scratch across a BARRIER, and IF/ENDIF.
  l0uop.kernel @reduce inputs(%x = @r : !l0uop.buf<32x16xf32>)
      outputs(%o = @or : !l0uop.buf<4x32xf32>)
      grid(32, 1, 1) block(1, 1, 1) shared_mem 4
      shared(%tmp : !l0uop.buf<1xf32>) {
    %zero = l0uop.const 0.0 : f32
    %one = l0uop.const 1.0 : f32
    %c0 = l0uop.const 0 : index
    %c1 = l0uop.const 1 : index
    %c2 = l0uop.const 2 : index
    %c3 = l0uop.const 3 : index
    %i = l0uop.range 0 to 32 over group_x : index
    %k = l0uop.range 0 to 16 : index
    %p = l0uop.index %x[%i, %k] : !l0uop.buf<32x16xf32>
    %v = l0uop.load %p : f32
    l0uop.end %k
    %sum = l0uop.reduce add %v over %k init %zero : f32
    %k2 = l0uop.range 0 to 16 : index
    %p2 = l0uop.index %x[%i, %k2] : !l0uop.buf<32x16xf32>
    %v2 = l0uop.load %p2 : f32
    l0uop.end %k2
    %prod = l0uop.reduce mul %v2 over %k2 init %one : f32
    %k3 = l0uop.range 0 to 16 : index
    %p3 = l0uop.index %x[%i, %k3] : !l0uop.buf<32x16xf32>
    %v3 = l0uop.load %p3 : f32
    l0uop.end %k3
    %floor = l0uop.const -0.5 : f32
    %mx = l0uop.reduce max %v3 over %k3 init %floor : f32
    %ps = l0uop.index %tmp[%c0] : !l0uop.buf<1xf32>
    l0uop.store %ps, %sum : f32
    l0uop.barrier
    %shared = l0uop.load %ps : f32
    %q0 = l0uop.index %o[%c0, %i] : !l0uop.buf<4x32xf32>
    l0uop.store %q0, %shared : f32
    %q1 = l0uop.index %o[%c1, %i] : !l0uop.buf<4x32xf32>
    l0uop.store %q1, %prod : f32
    %q2 = l0uop.index %o[%c2, %i] : !l0uop.buf<4x32xf32>
    l0uop.store %q2, %mx : f32
    %neg = l0uop.cmplt %sum, %zero : f32
    l0uop.if %neg
    %ns = l0uop.neg %sum : f32
    %q3 = l0uop.index %o[%c3, %i] : !l0uop.buf<4x32xf32>
    l0uop.store %q3, %ns : f32
    l0uop.endif
    l0uop.end %i
  }

  // WMMA on tiles moved by the host intrinsics: D[4:12, 8:16] =
  // A[8:16, :] . B[:, 4:12] + C[0:8, 0:8].
  l0uop.kernel @tiles inputs(%a = @ta : !l0uop.buf<16x16xf32>, %b = @tb : !l0uop.buf<16x16xf32>, %c = @tc : !l0uop.buf<16x16xf32>)
      outputs(%d = @td : !l0uop.buf<16x16xf32>)
      grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %z = l0uop.const 0 : index
    %four = l0uop.const 4 : index
    %eight = l0uop.const 8 : index
    %ta = l0uop.custom "host.tile_load"(%a, %eight, %z) : (!l0uop.buf<16x16xf32>, index, index) -> vector<8x16xf32>
    %tb = l0uop.custom "host.tile_load"(%b, %z, %four) : (!l0uop.buf<16x16xf32>, index, index) -> vector<16x8xf32>
    %tc = l0uop.custom "host.tile_load"(%c, %z, %z) : (!l0uop.buf<16x16xf32>, index, index) -> vector<8x8xf32>
    %td = l0uop.wmma %ta, %tb, %tc : vector<8x16xf32>, vector<16x8xf32>, vector<8x8xf32> -> vector<8x8xf32>
    l0uop.custom "host.tile_store"(%d, %four, %eight, %td) : (!l0uop.buf<16x16xf32>, index, index, vector<8x8xf32>) -> ()
  }

  // Threads of a block exchange values through shared memory across a
  // BARRIER: the host splits the thread RANGE at the barrier, and %sq
  // crosses it through a per-thread array.
  l0uop.kernel @exchange inputs(%x = @ex : !l0uop.buf<4x16xf32>)
      outputs(%o = @oex : !l0uop.buf<4x16xf32>)
      grid(4, 1, 1) block(16, 1, 1) shared_mem 64
      shared(%tmp : !l0uop.buf<16xf32>) {
    %one = l0uop.const 1 : index
    %n = l0uop.const 16 : index
    %g = l0uop.range 0 to 4 over group_x : index
    %t = l0uop.range 0 to 16 over local_x : index
    %px = l0uop.index %x[%g, %t] : !l0uop.buf<4x16xf32>
    %v = l0uop.load %px : f32
    %sq = l0uop.mul %v, %v : f32
    %pt = l0uop.index %tmp[%t] : !l0uop.buf<16xf32>
    l0uop.store %pt, %v : f32
    l0uop.barrier
    %t1 = l0uop.add %t, %one : index
    %nb = l0uop.mod %t1, %n : index
    %pn = l0uop.index %tmp[%nb] : !l0uop.buf<16xf32>
    %w = l0uop.load %pn : f32
    %r = l0uop.add %w, %sq : f32
    %po = l0uop.index %o[%g, %t] : !l0uop.buf<4x16xf32>
    l0uop.store %po, %r : f32
    l0uop.end %t
    l0uop.end %g
  }
}

l0ctl.region @a size 32 access rw
l0ctl.region @q size 16 access rw queue 4
l0ctl.program @mix {
  %x = l0ctl.load @a[0] : i32
  %y = l0ctl.load @a[4] : i32
  %c40 = l0ctl.const 40 : i32
  %s = l0ctl.arith shl %x, %c40 : i32
  l0ctl.store @a[8], %s : i32
  %r = l0ctl.arith shr %y, %c40 : i32
  l0ctl.store @a[12], %r : i32
  %b = l0ctl.load @a[16] : i8
  %h = l0ctl.hash %b : i8
  l0ctl.store @a[24], %h : i64
  %p = l0ctl.queue_pop @q : i32
  %gt = l0ctl.cmp gt %p, %y : i32
  l0ctl.branch %gt, ^big(%p : i32), ^small
^big(%v: i32):
  l0ctl.queue_push @q, %v : i32
  l0ctl.terminate
^small:
  %m = l0ctl.arith mul %x, %y : i32
  %d = l0ctl.arith sub %m, %x : i32
  l0ctl.store @a[20], %d : i32
  l0ctl.terminate
}
)mlir";

TEST_CASE("every UOp runs on the host and matches C++", "[l0tollvm][jit]") {
  Context c;
  std::unique_ptr<Jit> jit = Jit::fromSource(c.ctx, kEveryUOp);
  REQUIRE(jit->module);
  REQUIRE(jit->compile(queueStubs()));
  std::mt19937 rng(7);

  SECTION("float arithmetic, compares, transcendentals") {
    Buffer<float> x(64), y(64), o(12 * 64, NAN);
    fillRandom(x, rng, std::uniform_real_distribution<float>(-2.0f, 2.0f));
    fillRandom(y, rng, std::uniform_real_distribution<float>(0.5f, 2.0f));
    for (int i = 0; i < 64; i += 4)
      x[i] = y[i]; // CMPNE false here
    REQUIRE(jit->runKernel("t_floats", x.data, y.data, o.data));
    Compare cmp;
    for (int i = 0; i < 64; ++i) {
      float a = x[i], b = y[i];
      float want[12] = {a + b,
                        a * b,
                        std::fma(a, b, a),
                        -a,
                        1.0f / b,
                        std::max(a, b),
                        a < b ? a : b,
                        a != b ? a : 1.0f / b,
                        std::exp2(a),
                        std::log2(b),
                        std::sin(a),
                        std::sqrt(b)};
      for (int r = 0; r < 12; ++r)
        cmp(r * 64 + i, o[r * 64 + i], want[r]);
    }
    CHECK_ALL(cmp);
  }

  SECTION("integers, index, casts, bitcasts") {
    Buffer<int32_t> n(64), oi(8 * 64, -12345);
    Buffer<float> f(64), of(2 * 64, NAN), unused(64);
    fillRandom(n, rng, std::uniform_int_distribution<int32_t>(-1000, 1000));
    fillRandom(f, rng, std::uniform_real_distribution<float>(-100.0f, 100.0f));
    REQUIRE(jit->runKernel("t_ints", n.data, f.data, oi.data, of.data));
    size_t bad = 0;
    for (int i = 0; i < 64; ++i) {
      int32_t v = n[i];
      int32_t bits;
      std::memcpy(&bits, &f[i], 4);
      int32_t want[8] = {v % 7,       std::max(v, -v),
                         v < 7 ? v : 7, v + 7,
                         -v * 7 + v,  i % 5,
                         static_cast<int32_t>(f[i]), bits};
      for (int r = 0; r < 8; ++r)
        bad += oi[r * 64 + i] != want[r];
      bad += of[i] != static_cast<float>(v);
      bad += std::memcmp(&of[64 + i], &f[i], 4) != 0;
    }
    CHECK(bad == 0);
  }

  SECTION("vectors: lanes, GEP, VECTORIZE") {
    Buffer<float> v(16 * 8), o(16 * 8, NAN);
    fillRandom(v, rng, std::uniform_real_distribution<float>(-1.0f, 1.0f));
    REQUIRE(jit->runKernel("t_vectors", v.data, o.data));
    Compare cmp;
    for (int r = 0; r < 16; ++r) {
      float s[4];
      for (int k = 0; k < 4; ++k)
        s[k] = v[r * 8 + k] + v[r * 8 + 4 + k];
      for (int k = 0; k < 4; ++k) {
        cmp(r * 8 + k, o[r * 8 + k], s[3 - k] * v[r * 8 + 4 + k]);
        cmp(r * 8 + 4 + k, o[r * 8 + 4 + k], s[k]);
      }
    }
    CHECK_ALL(cmp);
  }

  SECTION("REDUCE, shared scratch across BARRIER, IF") {
    Buffer<float> x(32 * 16), o(4 * 32, 7.0f);
    fillRandom(x, rng, std::uniform_real_distribution<float>(-1.0f, 1.0f));
    REQUIRE(jit->runKernel("t_reduce", x.data, o.data));
    Compare cmp;
    for (int i = 0; i < 32; ++i) {
      float sum = 0.0f, prod = 1.0f, mx = -INFINITY;
      for (int k = 0; k < 16; ++k) {
        sum = sum + x[i * 16 + k];
        prod = prod * x[i * 16 + k];
        mx = std::max(mx, x[i * 16 + k]);
      }
      mx = std::max(-0.5f, mx);
      cmp(i, o[i], sum);
      cmp(32 + i, o[32 + i], prod);
      cmp(64 + i, o[64 + i], mx);
      cmp(96 + i, o[96 + i], sum < 0.0f ? -sum : 7.0f);
    }
    CHECK_ALL(cmp);
  }

  SECTION("WMMA through host.tile_load / host.tile_store") {
    Buffer<float> a(256), b(256), cc(256), d(256, 0.0f);
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
    fillRandom(a, rng, unit);
    fillRandom(b, rng, unit);
    fillRandom(cc, rng, unit);
    CHECK(jit->iterations["t_tiles"] == 1);
    REQUIRE(jit->runKernel("t_tiles", a.data, b.data, cc.data, d.data));
    Compare cmp;
    for (int r = 0; r < 16; ++r)
      for (int col = 0; col < 16; ++col) {
        float want = 0.0f;
        if (r >= 4 && r < 12 && col >= 8) {
          int i = r - 4, j = col - 8;
          float acc = cc[i * 16 + j];
          for (int k = 0; k < 16; ++k)
            acc = std::fma(a[(8 + i) * 16 + k], b[k * 16 + 4 + j], acc);
          want = acc;
        }
        cmp(r * 16 + col, d[r * 16 + col], want);
      }
    CHECK_ALL(cmp);
  }

  SECTION("BARRIER: threads exchange through shared memory") {
    Buffer<float> x(4 * 16), o(4 * 16, NAN);
    fillRandom(x, rng, std::uniform_real_distribution<float>(-1.0f, 1.0f));
    CHECK(jit->iterations["t_exchange"] == 4);
    REQUIRE(jit->runKernel("t_exchange", x.data, o.data));
    Compare cmp;
    for (int g = 0; g < 4; ++g)
      for (int t = 0; t < 16; ++t) {
        float v = x[g * 16 + t];
        float sq = v * v;
        cmp(g * 16 + t, o[g * 16 + t], x[g * 16 + (t + 1) % 16] + sq);
      }
    CHECK_ALL(cmp);
  }

  SECTION("an l0ctl program: widths, shifts mod width, hash, queues") {
    Buffer<uint8_t> a(32, 0), q(16, 0);
    using Fn = void (*)(void *, void *); // @a, @q: sorted by name
    auto fn = reinterpret_cast<Fn>(jit->lookup("mix"));
    REQUIRE(fn);
    uint32_t x = 0x01020304u, y = 0x80000000u;
    std::memcpy(&a[0], &x, 4);
    std::memcpy(&a[4], &y, 4);
    a[16] = 0xF0;
    pushed.clear();
    toPop = {5}; // not above y (unsigned): the ^small path
    fn(a.data, q.data);
    uint32_t s, r, d;
    uint64_t h;
    std::memcpy(&s, &a[8], 4);
    std::memcpy(&r, &a[12], 4);
    std::memcpy(&d, &a[20], 4);
    std::memcpy(&h, &a[24], 8);
    CHECK(s == (x << 8));  // 40 mod 32
    CHECK(r == (y >> 8));  // logical
    CHECK(h == splitmix64(0xF0));
    CHECK(d == x * y - x); // wrapping
    CHECK(pushed.empty());
    toPop = {0x90000000u}; // above y: pushed back, zero-extended
    fn(a.data, q.data);
    REQUIRE(pushed.size() == 1);
    CHECK(pushed[0].first == q.data);
    CHECK(pushed[0].second == 0x90000000ULL);
  }
}

TEST_CASE("a refused conversion says why and leaves the module untouched",
          "[l0tollvm]") {
  Context c;
  auto module = mlir::parseSourceFile<mlir::ModuleOp>(kMnist, &c.ctx);
  REQUIRE(module);
  std::string before;
  llvm::raw_string_ostream(before) << *module;
  std::vector<std::string> errors;
  mlir::ScopedDiagnosticHandler handler(&c.ctx, [&](mlir::Diagnostic &d) {
    if (d.getSeverity() == mlir::DiagnosticSeverity::Error)
      errors.push_back(d.str());
    return mlir::success();
  });
  // Erasing the plan would drop its control program, which is not lowered.
  mlir::PassManager pm(&c.ctx);
  pm.addPass(synpl::createConvertL0UOpToLLVM({/*keepPlan=*/false}));
  CHECK(mlir::failed(pm.run(*module)));
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].find("ops; not lowered: l0ctl.program at ") !=
        std::string::npos);
  CHECK(errors[0].find("run --synpl-convert-l0ctl-to-llvm first") !=
        std::string::npos);
  std::string after;
  llvm::raw_string_ostream(after) << *module;
  CHECK(after == before);
}

// EXP2 of f32 is an inline polynomial (Cephes' exp2f, see the pass): over
// [-126, 128) within 2 units in the last place of the exact 2^x (computed
// in double), 0 below -126 (subnormal results flush, as on the GPUs), +inf
// from 128 on, NaN for NaN. 8192 inputs in the vectorised kernel: a dense
// sweep of [-130, 130] and the edges.
static const char *const kExp2 = R"mlir(
l0uop.plan @e pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 32768 lifetime(0, 0) : !l0uop.buf<32x256xf32>
  l0uop.slot @o pool @dev offset 32768 size 32768 lifetime(0, 0) : !l0uop.buf<32x256xf32>
  l0uop.kernel @exp2 inputs(%x = @x : !l0uop.buf<32x256xf32>)
      outputs(%o = @o : !l0uop.buf<32x256xf32>) grid(32, 1, 1) block(256, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 32 over group_x : index
    %j = l0uop.range 0 to 256 over local_x : index
    %px = l0uop.index %x[%i, %j] : !l0uop.buf<32x256xf32>
    %a = l0uop.load %px : f32
    %e = l0uop.exp2 %a : f32
    %po = l0uop.index %o[%i, %j] : !l0uop.buf<32x256xf32>
    l0uop.store %po, %e : f32
    l0uop.end %j
    l0uop.end %i
  }
  l0uop.stream @s [@exp2]
}
)mlir";

TEST_CASE("EXP2 of f32 is within 2 ulp of 2^x and keeps its edges", "[l0tollvm][jit]") {
  Context c;
  std::unique_ptr<Jit> jit = Jit::fromSource(c.ctx, kExp2);
  REQUIRE(jit->module);
  REQUIRE(jit->compile(queueStubs()));
  const int n = 32 * 256;
  Buffer<float> x(n), o(n, 0.0f);
  const float edges[] = {NAN, INFINITY, -INFINITY, -126.0f, -126.4f, -125.6f, -125.5f,
                         -0.0f, 0.0f, 0.5f, -0.5f, 1e-8f, 127.0f, 127.5f, 127.99f,
                         128.0f, 128.5f, -126.0001f, 200.0f, -200.0f};
  const int numEdges = int(sizeof(edges) / sizeof(edges[0]));
  for (int i = 0; i < n; ++i)
    x[i] = i < numEdges ? edges[i] : -130.0f + 260.0f * float(i - numEdges) / float(n - numEdges);
  REQUIRE(jit->runKernel("e_exp2", x.data, o.data));
  size_t bad = 0, first = 0;
  for (int i = 0; i < n; ++i) {
    float a = x[i], got = o[i];
    bool ok;
    if (std::isnan(a))
      ok = std::isnan(got);
    else if (a < -126.0f)
      ok = got == 0.0f;
    else if (a >= 128.0f)
      ok = std::isinf(got) && got > 0;
    else {
      double want = std::exp2(double(a));
      int e;
      std::frexp(want, &e);
      double ulp = std::ldexp(1.0, e - 24);
      ok = std::isfinite(got) ? std::fabs(double(got) - want) <= 2 * ulp : want > FLT_MAX;
    }
    if (!ok && bad++ == 0)
      first = size_t(i);
  }
  INFO("first miss: exp2(" << x[first] << ") = " << o[first] << ", exactly "
                           << std::exp2(double(x[first])));
  CHECK(bad == 0);
}
