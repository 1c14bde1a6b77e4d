//===- TiledMatmulTest.cpp - The CUDA tiled matmul, checked on the CPU -----===//
//
// No GPU runs in CI, so the tiled matmul kernels are checked three ways:
//
// 1. The fragment maps of MmaLayout.h (what the emitter computes its
//    ldmatrix addresses and epilogue coordinates from) against entries
//    copied from the PTX ISA's figures "MMA .m16n8k16 fragment layout" for
//    A, B and C; that each is a bijection; and that each is linear in the
//    lane's bits (the emitter evaluates them in IR that way).
// 2. One warp's ldmatrix(.x4, .trans) + mma.m16n8k16 simulated from the
//    ISA's definitions, fed by the emitter's address maps, for every
//    shared-memory layout the emitter uses, against a plain matmul.
// 3. Whole kernels: L0 matmul kernels (bf16, f16, f32; every operand
//    layout; epilogues; M, N, K off the tile) go through buildTiledMatmul
//    and the resulting llvm.func is interpreted on the CPU by the SIMT
//    interpreter of NvvmSim.h (shared with CudaKernelSimTest.cpp): warps in
//    lockstep with divergence reconverging at the immediate post-dominator,
//    warps run one after another between barriers, cp.async copies landing
//    either at issue or only at cp.async.wait_group (both are legal), shared
//    memory poisoned with NaN, every access bounds- and alignment-checked.
//    Operands are small multiples of 1/8, so every partial sum is exact in
//    f32 and the results must match a CPU reference bit for bit.
//
//===----------------------------------------------------------------------===//
#include "../../lib/Conversion/L0ToNVVM/MmaLayout.h"
#include "../../lib/Conversion/L0ToNVVM/TiledMatmul.h"
#include "NvvmSim.h"
#include "synpl/InitAll.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <functional>
#include <fstream>
#include <random>
#include <sstream>
#include <set>

using namespace mlir;
using namespace synpl::l0tonvvm;
using mma::RowCol;

//===----------------------------------------------------------------------===//
// 1. Fragment maps
//===----------------------------------------------------------------------===//

TEST_CASE("mma.m16n8k16 fragment maps match the PTX ISA figures",
          "[tiled-matmul]") {
  // A (row): "row = groupID for a0,a1,a4,a5 / groupID+8 for a2,a3,a6,a7;
  // col = threadID_in_group*2 + (i & 1) for a0-a3, + 8 for a4-a7".
  CHECK(mma::aElement(0, 0) == RowCol{0, 0});
  CHECK(mma::aElement(0, 1) == RowCol{0, 1});
  CHECK(mma::aElement(1, 0) == RowCol{0, 2});
  CHECK(mma::aElement(4, 0) == RowCol{1, 0});
  CHECK(mma::aElement(5, 2) == RowCol{9, 2});
  CHECK(mma::aElement(6, 5) == RowCol{1, 13});
  CHECK(mma::aElement(31, 7) == RowCol{15, 15});
  // B (col): "row = threadID_in_group*2 + (i & 1) for b0,b1, + 8 for
  // b2,b3; col = groupID".
  CHECK(mma::bElement(0, 0) == RowCol{0, 0});
  CHECK(mma::bElement(0, 1) == RowCol{1, 0});
  CHECK(mma::bElement(5, 3) == RowCol{11, 1});
  CHECK(mma::bElement(31, 2) == RowCol{14, 7});
  // C (f32): "row = groupID for c0,c1 / groupID+8 for c2,c3; col =
  // threadID_in_group*2 + (i & 1)".
  CHECK(mma::cElement(0, 0) == RowCol{0, 0});
  CHECK(mma::cElement(5, 3) == RowCol{9, 3});
  CHECK(mma::cElement(30, 1) == RowCol{7, 5});
  CHECK(mma::cElement(31, 2) == RowCol{15, 6});
}

template <typename F>
static void checkBijection(F f, int regs, int rows, int cols) {
  std::set<std::pair<int, int>> seen;
  for (int lane = 0; lane < 32; ++lane)
    for (int r = 0; r < regs; ++r) {
      RowCol rc = f(lane, r);
      REQUIRE(rc.row >= 0);
      REQUIRE(rc.row < rows);
      REQUIRE(rc.col >= 0);
      REQUIRE(rc.col < cols);
      REQUIRE(seen.insert({rc.row, rc.col}).second);
    }
  CHECK(seen.size() == size_t(rows * cols));
}

TEST_CASE("mma.m16n8k8 tf32 fragment maps match the PTX ISA figures",
          "[tiled-matmul]") {
  // A: "row = groupID for a0, a2 / groupID + 8 for a1, a3; col =
  // threadID_in_group for a0, a1 / + 4 for a2, a3".
  CHECK(mma::aElementTf32(0, 0) == RowCol{0, 0});
  CHECK(mma::aElementTf32(0, 1) == RowCol{8, 0});
  CHECK(mma::aElementTf32(5, 2) == RowCol{1, 5});
  CHECK(mma::aElementTf32(31, 3) == RowCol{15, 7});
  // B: "row = threadID_in_group for b0 / + 4 for b1; col = groupID".
  CHECK(mma::bElementTf32(0, 0) == RowCol{0, 0});
  CHECK(mma::bElementTf32(5, 1) == RowCol{5, 1});
  CHECK(mma::bElementTf32(31, 1) == RowCol{7, 7});
  // ldmatrix over 32-bit elements read as b16 pairs: register q of lane t
  // holds element (t % 4) of row t / 4 of block q, i.e. tf32 A register q
  // is aElementTf32(t, q) when the blocks are fragmentBlock's with k halved.
  for (int t = 0; t < 32; ++t)
    for (int q = 0; q < 4; ++q) {
      RowCol blk = mma::fragmentBlock(mma::Operand::A, q);
      REQUIRE(mma::aElementTf32(t, q) ==
              RowCol{blk.row + t / 4, blk.col / 2 + t % 4});
      RowCol bblk = mma::fragmentBlock(mma::Operand::B, q);
      if (bblk.row == 0) // n-block 0: b0, b1
        REQUIRE(mma::bElementTf32(t, q) ==
                RowCol{bblk.col / 2 + t % 4, bblk.row + t / 4});
    }
}

TEST_CASE("fragment maps are bijections", "[tiled-matmul]") {
  checkBijection(mma::aElementTf32, 4, 16, 8);
  checkBijection(mma::bElementTf32, 2, 8, 8);
  checkBijection(mma::aElement, 8, 16, 16);
  checkBijection(mma::bElement, 4, 16, 8);
  checkBijection(mma::cElement, 4, 16, 8);
}

template <typename F> static void checkLaneLinear(F f) {
  for (int lane = 0; lane < 32; ++lane) {
    int64_t sum = f(0);
    for (int bit = 0; bit < 5; ++bit)
      if (lane & (1 << bit))
        sum += f(1 << bit) - f(0);
    REQUIRE(sum == f(lane));
  }
}

TEST_CASE("the maps the emitter evaluates are linear in the lane's bits",
          "[tiled-matmul]") {
  for (int q = 0; q < 4; ++q) {
    checkLaneLinear([&](int l) { return mma::cElement(l, q).row; });
    checkLaneLinear([&](int l) { return mma::cElement(l, q).col; });
    // cElement(lane, q) = cElement(lane, 0) + cElement(0, q).
    for (int l = 0; l < 32; ++l) {
      REQUIRE(mma::cElement(l, q).row ==
              mma::cElement(l, 0).row + mma::cElement(0, q).row);
      REQUIRE(mma::cElement(l, q).col ==
              mma::cElement(l, 0).col + mma::cElement(0, q).col);
    }
  }
  for (auto op : {mma::Operand::A, mma::Operand::B})
    for (bool trans : {false, true})
      for (int64_t pitch : {24, 40, 72, 136, 264}) {
        checkLaneLinear([&](int l) {
          RowCol rc = mma::ldmatrixRowAddress(op, l, 0, 0, trans);
          return int64_t(trans ? rc.col * pitch + rc.row
                               : rc.row * pitch + rc.col);
        });
      }
}

//===----------------------------------------------------------------------===//
// 2. One warp: ldmatrix + mma from the ISA's definitions
//===----------------------------------------------------------------------===//

namespace {
/// ldmatrix.x4.b16 as the ISA defines it: lane 8q+i gives the address of
/// row i of matrix q; lane t receives, in register q, elements
/// [t/4][2(t%4)], [t/4][2(t%4)+1] of matrix q (.trans: of its transpose).
/// `mem` holds 16-bit elements; addresses are element offsets.
static std::array<std::array<uint32_t, 4>, 32>
ldmatrixX4(const std::vector<uint16_t> &mem,
           const std::array<int64_t, 32> &rowAddr, bool trans) {
  std::array<std::array<uint32_t, 4>, 32> out{};
  for (int q = 0; q < 4; ++q) {
    auto at = [&](int r, int c) { return mem.at(rowAddr[8 * q + r] + c); };
    for (int t = 0; t < 32; ++t) {
      int r = t / 4, c = 2 * (t % 4);
      uint16_t lo = trans ? at(c, r) : at(r, c);
      uint16_t hi = trans ? at(c + 1, r) : at(r, c + 1);
      out[t][q] = lo | uint32_t(hi) << 16;
    }
  }
  return out;
}
} // namespace

TEST_CASE("one warp's ldmatrix + mma.m16n8k16 computes A.B for every layout",
          "[tiled-matmul]") {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> small(-8, 8);
  // 16-bit payloads: plain integers (the product is exact in any order).
  int A[16][16], B[16][16]; // A[m][k], B[k][n] (two n8 blocks)
  for (auto &row : A)
    for (int &v : row)
      v = small(rng);
  for (auto &row : B)
    for (int &v : row)
      v = small(rng);
  for (bool aTrans : {false, true})
    for (bool bTrans : {false, true}) {
      // Shared memory with padded pitches, as the emitter lays it out:
      // not trans: F[r][k] rows of k; trans: F stored [k][r].
      const int64_t pitch = 24; // 16 + 8
      std::vector<uint16_t> aMem(16 * pitch, 0xffff), bMem(16 * pitch, 0xffff);
      for (int m = 0; m < 16; ++m)
        for (int k = 0; k < 16; ++k)
          aMem[aTrans ? k * pitch + m : m * pitch + k] = uint16_t(A[m][k]);
      for (int n = 0; n < 16; ++n)
        for (int k = 0; k < 16; ++k)
          bMem[bTrans ? k * pitch + n : n * pitch + k] = uint16_t(B[k][n]);
      std::array<int64_t, 32> aAddr, bAddr;
      for (int l = 0; l < 32; ++l) {
        RowCol a = mma::ldmatrixRowAddress(mma::Operand::A, l, 0, 0, aTrans);
        RowCol b = mma::ldmatrixRowAddress(mma::Operand::B, l, 0, 0, bTrans);
        aAddr[l] = aTrans ? a.col * pitch + a.row : a.row * pitch + a.col;
        bAddr[l] = bTrans ? b.col * pitch + b.row : b.row * pitch + b.col;
      }
      auto aRegs = ldmatrixX4(aMem, aAddr, aTrans);
      auto bRegs = ldmatrixX4(bMem, bAddr, bTrans);
      // mma per the ISA: gather A and B from the lanes' fragments.
      for (int nb = 0; nb < 2; ++nb) {
        int fa[16][8] = {}, fb[16][8] = {}, fd[16][8] = {};
        int gotA[16][16];
        for (int l = 0; l < 32; ++l) {
          for (int r = 0; r < 8; ++r) {
            RowCol rc = mma::aElement(l, r);
            gotA[rc.row][rc.col] =
                int16_t(aRegs[l][r / 2] >> (16 * (r % 2)) & 0xffff);
          }
          for (int r = 0; r < 4; ++r) {
            RowCol rc = mma::bElement(l, r);
            fb[rc.row][rc.col] =
                int16_t(bRegs[l][2 * nb + r / 2] >> (16 * (r % 2)) & 0xffff);
          }
        }
        (void)fa;
        for (int m = 0; m < 16; ++m)
          for (int k = 0; k < 16; ++k)
            REQUIRE(gotA[m][k] == A[m][k]);
        for (int m = 0; m < 16; ++m)
          for (int n = 0; n < 8; ++n)
            for (int k = 0; k < 16; ++k)
              fd[m][n] += gotA[m][k] * fb[k][n];
        // D as the lanes hold it, against the plain product.
        for (int l = 0; l < 32; ++l)
          for (int r = 0; r < 4; ++r) {
            RowCol rc = mma::cElement(l, r);
            int want = 0;
            for (int k = 0; k < 16; ++k)
              want += A[rc.row][k] * B[k][8 * nb + rc.col];
            REQUIRE(fd[rc.row][rc.col] == want);
          }
      }
    }
}

//===----------------------------------------------------------------------===//
// 3. Whole kernels on a SIMT interpreter
//===----------------------------------------------------------------------===//

namespace {

using namespace synpl::test;
using Sim = synpl::test::NvvmSim;

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

enum class Elem { BF16, F16, F32 };

struct Case {
  int64_t M, N, K;
  Elem elem;
  bool aKM;   ///< A stored [K][M] (indexed [k, i]) instead of [M][K]
  bool bNK;   ///< B stored [N][K] (indexed [j, k]) instead of [K][N]
  bool bias;  ///< + bias[j], then max(., 0) (a ReLU)
  bool outLow; ///< store bf16/f16 instead of f32 (16-bit cases)
  std::string chip = "sm_80";
  bool tf32 = false; ///< f32 under TiledMatmulOptions::allowTf32
};

static const char *name(Elem e) {
  return e == Elem::BF16 ? "bf16" : e == Elem::F16 ? "f16" : "f32";
}

static std::string kernelText(const Case &c) {
  std::string e = name(c.elem);
  bool low = c.elem != Elem::F32;
  std::string outE = low && c.outLow ? e : "f32";
  std::string aShape = c.aKM ? llvm::formatv("{0}x{1}", c.K, c.M).str()
                             : llvm::formatv("{0}x{1}", c.M, c.K).str();
  std::string bShape = c.bNK ? llvm::formatv("{0}x{1}", c.N, c.K).str()
                             : llvm::formatv("{0}x{1}", c.K, c.N).str();
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "l0uop.plan @p pipeline_depth 1 {\n"
     << "  l0uop.pool @dev persistent on device capacity 64MiB\n";
  int64_t eb = low ? 2 : 4, ob = outE == "f32" ? 4 : 2;
  int64_t sizes[4] = {c.M * c.K * eb, c.K * c.N * eb, c.N * 4, c.M * c.N * ob};
  const char *slots[4] = {"a", "b", "bias", "c"};
  std::string types[4] = {aShape + "x" + e, bShape + "x" + e,
                          std::to_string(c.N) + "xf32",
                          llvm::formatv("{0}x{1}x{2}", c.M, c.N, outE).str()};
  int64_t offset = 0;
  for (int n = 0; n < 4; ++n) {
    os << llvm::formatv("  l0uop.slot @{0} pool @dev offset {1} size {2} "
                        "lifetime(0, 0) : !l0uop.buf<{3}>\n",
                        slots[n], offset, sizes[n], types[n]);
    offset += (sizes[n] + 255) / 256 * 256;
  }
  os << llvm::formatv(
      "  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<{0}x{1}>, %b = @b : "
      "!l0uop.buf<{2}x{1}>, %bias = @bias : !l0uop.buf<{3}xf32>) outputs(%c = "
      "@c : !l0uop.buf<{4}x{3}x{5}>) grid({4}, 1, 1) block({3}, 1, 1) "
      "shared_mem 0 {{\n",
      aShape, e, bShape, c.N, c.M, outE);
  os << "    %i = l0uop.range 0 to " << c.M << " over group_x : index\n"
     << "    %j = l0uop.range 0 to " << c.N << " over local_x : index\n"
     << "    %zero = l0uop.const 0.0 : f32\n"
     << "    %k = l0uop.range 0 to " << c.K << " : index\n";
  os << "    %pa = l0uop.index %a[" << (c.aKM ? "%k, %i" : "%i, %k")
     << "] : !l0uop.buf<" << aShape << "x" << e << ">\n"
     << "    %va = l0uop.load %pa : " << e << "\n";
  os << "    %pb = l0uop.index %b[" << (c.bNK ? "%j, %k" : "%k, %j")
     << "] : !l0uop.buf<" << bShape << "x" << e << ">\n"
     << "    %vb = l0uop.load %pb : " << e << "\n";
  if (low)
    os << "    %fa = l0uop.cast %va : " << e << " to f32\n"
       << "    %fb = l0uop.cast %vb : " << e << " to f32\n"
       << "    %p = l0uop.mul %fa, %fb : f32\n";
  else
    os << "    %p = l0uop.mul %va, %vb : f32\n";
  os << "    l0uop.end %k\n"
     << "    %s = l0uop.reduce add %p over %k init %zero : f32\n";
  std::string res = "%s";
  if (c.bias) {
    os << "    %pbias = l0uop.index %bias[%j] : !l0uop.buf<" << c.N << "xf32>\n"
       << "    %vbias = l0uop.load %pbias : f32\n"
       << "    %sb = l0uop.add %s, %vbias : f32\n"
       << "    %relu = l0uop.max %sb, %zero : f32\n";
    res = "%relu";
  }
  if (outE != "f32") {
    os << "    %lo = l0uop.cast " << res << " : f32 to " << outE << "\n";
    res = "%lo";
  }
  os << "    %pc = l0uop.index %c[%i, %j] : !l0uop.buf<" << c.M << "x" << c.N
     << "x" << outE << ">\n"
     << "    l0uop.store %pc, " << res << " : " << outE << "\n"
     << "    l0uop.end %j\n    l0uop.end %i\n  }\n}\n";
  return s;
}

struct Built {
  OwningOpRef<ModuleOp> input, out;
  LLVM::LLVMFuncOp func;
  std::optional<TiledLaunch> launch;
};

static MLIRContext &context() {
  static MLIRContext *ctx = [] {
    DialectRegistry registry;
    synpl::registerAllDialects(registry);
    synpl::registerUpstreamDialects(registry);
    registry.insert<gpu::GPUDialect, LLVM::LLVMDialect, NVVM::NVVMDialect>();
    auto *c = new MLIRContext(registry);
    c->loadAllAvailableDialects();
    return c;
  }();
  return *ctx;
}

static Built build(const std::string &text, const std::string &chip,
                   TiledMatmulOptions options = {}) {
  Built b;
  MLIRContext &ctx = context();
  b.input = parseSourceString<ModuleOp>(text, &ctx);
  REQUIRE(b.input);
  synpl::l0uop::KernelOp kernel;
  b.input->walk([&](synpl::l0uop::KernelOp k) { kernel = k; });
  REQUIRE(kernel);
  OpBuilder builder(&ctx);
  b.out = ModuleOp::create(builder.getUnknownLoc());
  builder.setInsertionPointToEnd(b.out->getBody());
  auto module = gpu::GPUModuleOp::create(builder, kernel.getLoc(), "k_cuda");
  auto target = synpl::cuda::makeTarget(chip);
  REQUIRE(target);
  auto result = buildTiledMatmul(kernel, "k", *target,
                                 module.getBodyRegion().front(), options);
  REQUIRE(succeeded(result));
  b.launch = *result;
  if (b.launch) {
    REQUIRE(succeeded(verify(*b.out)));
    module.walk([&](LLVM::LLVMFuncOp f) { b.func = f; });
  }
  return b;
}

static void runCase(const Case &c, bool eager) {
  INFO(kernelText(c));
  TiledMatmulOptions options;
  options.allowTf32 = c.tf32;
  Built b = build(kernelText(c), c.chip, options);
  REQUIRE(b.launch);
  CHECK(llvm::StringRef(b.launch->description).contains("tf32") == c.tf32);
  INFO(b.launch->description);
  bool low = c.elem != Elem::F32;
  size_t eb = low ? 2 : 4;
  std::mt19937 rng(c.M * 131 + c.N * 7 + c.K);
  std::uniform_int_distribution<int> eighths(-16, 16); // multiples of 1/8
  auto fill = [&](std::vector<uint8_t> &buf, std::vector<double> &vals,
                  size_t n) {
    buf.assign(n * eb, 0);
    vals.resize(n);
    for (size_t x = 0; x < n; ++x) {
      double v = eighths(rng) / 8.0;
      vals[x] = v;
      if (c.elem == Elem::F32) {
        float f = float(v);
        std::memcpy(&buf[x * 4], &f, 4);
      } else {
        uint16_t h = c.elem == Elem::BF16 ? floatToBf16(float(v)) : floatToF16(float(v));
        std::memcpy(&buf[x * 2], &h, 2);
      }
    }
  };
  std::vector<std::vector<uint8_t>> bufs(4);
  std::vector<double> a, bv, bias(c.N);
  fill(bufs[0], a, c.M * c.K);
  fill(bufs[1], bv, c.K * c.N);
  bufs[2].resize(c.N * 4);
  for (int64_t j = 0; j < c.N; ++j) {
    bias[j] = eighths(rng) / 4.0;
    float f = float(bias[j]);
    std::memcpy(&bufs[2][j * 4], &f, 4);
  }
  bool outLow = low && c.outLow;
  size_t ob = outLow ? 2 : 4;
  bufs[3].assign(c.M * c.N * ob, 0xee); // garbage: every element is written
  Sim sim(b.func, bufs, b.launch->sharedBytes, eager);
  for (int64_t blk = 0; blk < b.launch->grid[0]; ++blk) {
    bool ok = sim.runBlock(blk, b.launch->block[0]);
    INFO(sim.error);
    REQUIRE(ok);
  }
  int64_t bad = 0;
  for (int64_t i = 0; i < c.M; ++i)
    for (int64_t j = 0; j < c.N; ++j) {
      double want = 0;
      for (int64_t k = 0; k < c.K; ++k)
        want += a[c.aKM ? k * c.M + i : i * c.K + k] *
                bv[c.bNK ? j * c.K + k : k * c.N + j];
      if (c.bias)
        want = std::max(want + bias[j], 0.0);
      double got;
      uint8_t *p = &bufs[3][(i * c.N + j) * ob];
      if (outLow) {
        uint16_t h;
        std::memcpy(&h, p, 2);
        got = c.elem == Elem::BF16 ? bf16ToFloat(h) : f16ToFloat(h);
        want = c.elem == Elem::BF16 ? bf16ToFloat(floatToBf16(float(want)))
                                    : f16ToFloat(floatToF16(float(want)));
      } else {
        float f;
        std::memcpy(&f, p, 4);
        got = f;
      }
      if (got != want && bad++ < 5)
        UNSCOPED_INFO("C[" << i << "][" << j << "] = " << got << ", want " << want);
    }
  CHECK(bad == 0);
}

//===----------------------------------------------------------------------===//
// A reference: the kernel's UOps evaluated directly (scalar, sequential)
//===----------------------------------------------------------------------===//

/// Evaluates an l0uop.kernel body the way the spec reads it: RANGEs as
/// nested loops, REDUCE add as init + the sum of its loop's values, every
/// float op rounded to its type. Buffers: the kernel's arguments in order.
class Reference {
public:
  Reference(synpl::l0uop::KernelOp kernel,
            std::vector<std::vector<uint8_t>> &buffers)
      : kernel(kernel), buffers(buffers) {
    for (Operation &op : kernel.getBody().front())
      ops.push_back(&op);
  }
  bool run() { return eval(0, ops.size()); }
  std::string error;

private:
  struct Ptr {
    unsigned arg;
    int64_t offset;
  };
  bool eval(size_t from, size_t to) {
    for (size_t n = from; n < to; ++n) {
      Operation *op = ops[n];
      if (auto r = dyn_cast<synpl::l0uop::RangeOp>(op)) {
        size_t end = n + 1;
        for (; end < to; ++end)
          if (auto e = dyn_cast<synpl::l0uop::EndOp>(ops[end]);
              e && e.getRange() == r.getResult())
            break;
        // The REDUCEs over this range sum its body's values.
        llvm::SmallVector<synpl::l0uop::ReduceOp> reds;
        for (Operation *user : r.getResult().getUsers())
          if (auto red = dyn_cast<synpl::l0uop::ReduceOp>(user))
            reds.push_back(red);
        std::vector<double> sums(reds.size(), 0.0);
        for (int64_t v = r.getLower(); v < r.getUpper(); v += r.getStep()) {
          ints[r.getResult()] = v;
          if (!eval(n + 1, end))
            return false;
          for (size_t x = 0; x < reds.size(); ++x)
            sums[x] = double(float(sums[x] + floats[reds[x].getValue()]));
        }
        for (size_t x = 0; x < reds.size(); ++x)
          reduceSums[reds[x]] = sums[x];
        n = end;
        continue;
      }
      if (!evalOp(op))
        return false;
    }
    return true;
  }
  bool evalOp(Operation *op) {
    using namespace synpl::l0uop;
    Type rt = op->getNumResults() ? op->getResult(0).getType() : Type();
    auto f = [&](unsigned i) { return floats.lookup(op->getOperand(i)); };
    auto i = [&](unsigned k) { return ints.lookup(op->getOperand(k)); };
    bool fp = rt && isa<FloatType>(rt);
    auto setF = [&](double v) { floats[op->getResult(0)] = roundTo(rt, v); };
    auto setI = [&](int64_t v) { ints[op->getResult(0)] = v; };
    if (auto c = dyn_cast<ConstOp>(op)) {
      if (auto fa = dyn_cast<FloatAttr>(c.getValue()))
        setF(fa.getValueAsDouble());
      else
        setI(cast<IntegerAttr>(c.getValue()).getValue().getSExtValue());
    } else if (auto idx = dyn_cast<IndexOp>(op)) {
      auto buf = cast<BufType>(idx.getBuffer().getType());
      int64_t off = 0, stride = 1;
      for (int64_t d = buf.getRank() - 1; d >= 0; --d) {
        off += ints.lookup(idx.getIndices()[d]) * stride;
        stride *= buf.getShape()[d];
      }
      ptrs[op->getResult(0)] = {cast<BlockArgument>(idx.getBuffer()).getArgNumber(), off};
    } else if (isa<LoadOp>(op)) {
      Ptr p = ptrs.lookup(op->getOperand(0));
      Val v = loadScalar(rt, &buffers[p.arg].at(p.offset * sizeOf(rt)));
      if (fp)
        floats[op->getResult(0)] = v.f;
      else
        setI(v.i);
    } else if (isa<StoreOp>(op)) {
      Ptr p = ptrs.lookup(op->getOperand(0));
      Type vt = op->getOperand(1).getType();
      Val v;
      v.f = floats.lookup(op->getOperand(1));
      v.i = ints.lookup(op->getOperand(1));
      storeScalar(vt, &buffers[p.arg].at(p.offset * sizeOf(vt)), v);
    } else if (auto red = dyn_cast<ReduceOp>(op)) {
      setF(floats.lookup(red.getInit()) + reduceSums.lookup(red));
    } else if (isa<AddOp>(op)) {
      fp ? setF(f(0) + f(1)) : setI(i(0) + i(1));
    } else if (isa<MulOp>(op)) {
      fp ? setF(f(0) * f(1)) : setI(i(0) * i(1));
    } else if (isa<MulAccOp>(op)) {
      fp ? setF(double(float(f(0) * f(1))) + f(2)) : setI(i(0) * i(1) + i(2));
    } else if (isa<NegOp>(op)) {
      fp ? setF(-f(0)) : setI(-i(0));
    } else if (isa<ReciprocalOp>(op)) {
      setF(1.0 / f(0));
    } else if (isa<MaxOp>(op)) {
      fp ? setF(std::isnan(f(0)) || std::isnan(f(1)) ? NAN : std::max(f(0), f(1)))
         : setI(std::max(i(0), i(1)));
    } else if (isa<CmpLtOp>(op)) {
      setI(isa<FloatType>(op->getOperand(0).getType()) ? f(0) < f(1) : i(0) < i(1));
    } else if (isa<CmpNeOp>(op)) {
      setI(isa<FloatType>(op->getOperand(0).getType()) ? !(f(0) == f(1)) : i(0) != i(1));
    } else if (isa<WhereOp>(op)) {
      fp ? setF(i(0) ? f(1) : f(2)) : setI(i(0) ? i(1) : i(2));
    } else if (isa<Exp2Op>(op)) {
      setF(std::exp2(f(0)));
    } else if (isa<Log2Op>(op)) {
      setF(std::log2(f(0)));
    } else if (isa<SqrtOp>(op)) {
      setF(std::sqrt(f(0)));
    } else if (auto c = dyn_cast<CastOp>(op)) {
      Type from = c.getSrc().getType();
      if (isa<FloatType>(from))
        fp ? setF(f(0)) : setI(int64_t(f(0)));
      else
        fp ? setF(double(i(0))) : setI(i(0));
    } else {
      error = "reference: op not evaluated";
      return false;
    }
    return true;
  }

  synpl::l0uop::KernelOp kernel;
  std::vector<std::vector<uint8_t>> &buffers;
  std::vector<Operation *> ops;
  llvm::DenseMap<Value, double> floats;
  llvm::DenseMap<Value, int64_t> ints;
  llvm::DenseMap<Value, Ptr> ptrs;
  llvm::DenseMap<Operation *, double> reduceSums;
};

/// Every kernel of `text` that the tiled lowering takes, run on the SIMT
/// interpreter and by the reference from the same random inputs
/// (multiples of 1/8): the outputs must be identical. Returns how many
/// kernels were checked.
static int checkAgainstReference(const std::string &text,
                                 const std::string &chip,
                                 llvm::ArrayRef<llvm::StringRef> only = {},
                                 TiledMatmulOptions options = {}) {
  MLIRContext &ctx = context();
  OwningOpRef<ModuleOp> input = parseSourceString<ModuleOp>(text, &ctx);
  REQUIRE(input);
  int checked = 0;
  std::vector<synpl::l0uop::KernelOp> kernels;
  input->walk([&](synpl::l0uop::KernelOp k) { kernels.push_back(k); });
  for (synpl::l0uop::KernelOp kernel : kernels) {
    if (!only.empty() && !llvm::is_contained(only, kernel.getSymName()))
      continue;
    INFO(kernel.getSymName().str());
    OpBuilder builder(&ctx);
    OwningOpRef<ModuleOp> out = ModuleOp::create(builder.getUnknownLoc());
    builder.setInsertionPointToEnd(out->getBody());
    auto module = gpu::GPUModuleOp::create(builder, kernel.getLoc(), "k_cuda");
    auto target = synpl::cuda::makeTarget(chip);
    auto result = buildTiledMatmul(kernel, "k", *target,
                                   module.getBodyRegion().front(), options);
    REQUIRE(succeeded(result));
    if (!*result)
      continue;
    INFO((*result)->description);
    REQUIRE(succeeded(verify(*out)));
    LLVM::LLVMFuncOp func;
    module.walk([&](LLVM::LLVMFuncOp f) { func = f; });
    std::mt19937 rng(checked + 1);
    std::uniform_int_distribution<int> eighths(-16, 16);
    std::vector<std::vector<uint8_t>> bufs;
    unsigned nIn = kernel.getNumInputs();
    for (BlockArgument arg : kernel.getBody().front().getArguments()) {
      auto buf = cast<synpl::l0uop::BufType>(arg.getType());
      Type e = buf.getElementType();
      size_t eb = sizeOf(e);
      std::vector<uint8_t> bytes(buf.getNumElements() * eb, 0xee);
      if (arg.getArgNumber() < nIn)
        for (uint64_t x = 0; x < buf.getNumElements(); ++x) {
          Val v;
          v.f = eighths(rng) / 8.0;
          v.i = eighths(rng) & 7;
          storeScalar(e, &bytes[x * eb], v);
        }
      bufs.push_back(std::move(bytes));
    }
    std::vector<std::vector<uint8_t>> want = bufs;
    Reference ref(kernel, want);
    bool refOk = ref.run();
    INFO(ref.error);
    REQUIRE(refOk);
    Sim sim(func, bufs, (*result)->sharedBytes, /*eagerCopies=*/false);
    for (int64_t blk = 0; blk < (*result)->grid[0]; ++blk) {
      bool ok = sim.runBlock(blk, (*result)->block[0]);
      INFO(sim.error);
      REQUIRE(ok);
    }
    for (unsigned o = nIn; o < bufs.size(); ++o)
      CHECK(bufs[o] == want[o]);
    ++checked;
  }
  return checked;
}

} // namespace

static std::string fashionMnistMatmuls() {
  std::string path = std::string(SYNPL_SOURCE_DIR) +
                     "/test/Conversion/L0ToNVVM/Inputs/fashion-mnist-matmuls.mlir";
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_CASE("the Fashion-MNIST matmul kernels match their UOps' reference",
          "[tiled-matmul]") {
  // x . W + b; small N (10 classes, guards); X^T . dY with a weight-decay
  // epilogue (CMPLT/WHERE); dY . W^T with four outputs.
  CHECK(checkAgainstReference(fashionMnistMatmuls(), "sm_90",
                              {"forward_backward.k5_matmul",
                               "forward_backward.k10_matmul",
                               "forward_backward.k34_matmul",
                               "forward_backward.k36_matmul"}) == 4);
  // The same on tf32 tensor cores (the operands are exact in tf32).
  TiledMatmulOptions tf32;
  tf32.allowTf32 = true;
  CHECK(checkAgainstReference(fashionMnistMatmuls(), "sm_80",
                              {"forward_backward.k10_matmul",
                               "forward_backward.k34_matmul",
                               "forward_backward.k36_matmul"},
                              tf32) == 3);
}

// All eight, including the two with K or M = 784 over the flattened image
// buffer (~1 min): `synpl-unit-tests "[tiled-matmul-slow]"`.
TEST_CASE("all the Fashion-MNIST matmul kernels match their UOps' reference",
          "[.][tiled-matmul-slow]") {
  CHECK(checkAgainstReference(fashionMnistMatmuls(), "sm_90") == 8);
}

TEST_CASE("bf16 tiled kernels compute the matmul on the SIMT interpreter",
          "[tiled-matmul]") {
  // Off-tile M and N (guards, zero-filled rows), K off the 32/64 k tile,
  // all four operand layouts, epilogues.
  for (bool eager : {false, true}) {
    runCase({72, 136, 80, Elem::BF16, false, false, true, true}, eager);
    runCase({40, 24, 48, Elem::BF16, true, false, false, false}, eager);
    runCase({64, 56, 40, Elem::BF16, false, true, true, false}, eager);
    runCase({48, 64, 24, Elem::BF16, true, true, false, true}, eager);
  }
}

TEST_CASE("f16 tiled kernels compute the matmul on the SIMT interpreter",
          "[tiled-matmul]") {
  runCase({56, 40, 64, Elem::F16, false, false, true, true, "sm_90"}, false);
  runCase({32, 48, 40, Elem::F16, true, true, false, false, "sm_90"}, true);
}

TEST_CASE("f32 tiled kernels compute the matmul on the SIMT interpreter",
          "[tiled-matmul]") {
  for (bool eager : {false, true}) {
    runCase({70, 130, 37, Elem::F32, false, false, true, false}, eager);
    runCase({64, 64, 24, Elem::F32, true, false, false, false}, eager);
    runCase({33, 80, 19, Elem::F32, false, true, true, false}, eager);
    runCase({48, 36, 16, Elem::F32, true, true, false, false}, eager);
  }
}

TEST_CASE("tf32 tiled kernels (allowTf32) compute the matmul on the SIMT "
          "interpreter", "[tiled-matmul]") {
  // Operands are multiples of 1/8: exact in tf32, so results stay exact.
  for (bool eager : {false, true}) {
    Case c{72, 136, 40, Elem::F32, false, false, true, false, "sm_80", true};
    runCase(c, eager);
    c = {40, 24, 36, Elem::F32, true, true, false, false, "sm_90", true};
    runCase(c, eager);
    c = {64, 48, 19, Elem::F32, false, true, true, false, "sm_80", true};
    runCase(c, eager);
    c = {33, 70, 64, Elem::F32, true, false, false, false, "sm_90", true};
    runCase(c, eager);
  }
}

TEST_CASE("random shapes, layouts and dtypes on the SIMT interpreter",
          "[tiled-matmul]") {
  // Sizes keep the 16-bit operands' contiguous extents multiples of 8 (the
  // lowering declines the others, checked below).
  std::mt19937 rng(2024);
  auto pick = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  for (int n = 0; n < 30; ++n) {
    Case c;
    c.elem = n % 3 == 0 ? Elem::F32 : n % 3 == 1 ? Elem::BF16 : Elem::F16;
    c.aKM = pick(0, 1);
    c.bNK = pick(0, 1);
    c.bias = pick(0, 1);
    c.outLow = pick(0, 1);
    c.chip = pick(0, 1) ? "sm_80" : "sm_90";
    int align = c.elem == Elem::F32 ? 1 : 8;
    c.M = pick(1, 20) * (c.aKM ? align : 1) + (c.aKM ? 0 : pick(0, 3));
    c.N = pick(1, 20) * (c.bNK ? 1 : align) + (c.bNK ? pick(0, 3) : 0);
    c.K = pick(1, 12) * align;
    if (c.elem == Elem::F32)
      c.K += pick(0, 7);
    runCase(c, /*eager=*/n % 2 == 0);
  }
}

TEST_CASE("the tiled lowering declines what it cannot take", "[tiled-matmul]") {
  Case base{64, 64, 32, Elem::BF16, false, false, false, false};
  // K contiguous but not a multiple of 8: no 16-byte copies.
  {
    Case c = base;
    c.K = 36;
    CHECK_FALSE(build(kernelText(c), "sm_80").launch);
  }
  // No tensor cores allowed: the bf16 kernel is declined.
  {
    TiledMatmulOptions o;
    o.tensorCores = false;
    CHECK_FALSE(build(kernelText(base), "sm_80", o).launch);
  }
  // An element-wise kernel is not a matmul.
  const char *elementwise = R"(
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 4096 lifetime(0, 0) : !l0uop.buf<32x32xf32>
  l0uop.slot @y pool @dev offset 4096 size 4096 lifetime(0, 0) : !l0uop.buf<32x32xf32>
  l0uop.kernel @e inputs(%x = @x : !l0uop.buf<32x32xf32>) outputs(%y = @y : !l0uop.buf<32x32xf32>) grid(32, 1, 1) block(32, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 32 over group_x : index
    %j = l0uop.range 0 to 32 over local_x : index
    %p = l0uop.index %x[%i, %j] : !l0uop.buf<32x32xf32>
    %v = l0uop.load %p : f32
    %q = l0uop.index %y[%i, %j] : !l0uop.buf<32x32xf32>
    l0uop.store %q, %v : f32
    l0uop.end %j
    l0uop.end %i
  }
})";
  CHECK_FALSE(build(elementwise, "sm_80").launch);
  // A product of bf16 values accumulated in bf16 (no cast): declined.
  {
    std::string text = kernelText(base);
    auto replace = [&](const std::string &from, const std::string &to) {
      size_t at = text.find(from);
      REQUIRE(at != std::string::npos);
      text.replace(at, from.size(), to);
    };
    replace("    %fa = l0uop.cast %va : bf16 to f32\n", "");
    replace("    %fb = l0uop.cast %vb : bf16 to f32\n", "");
    replace("%p = l0uop.mul %fa, %fb : f32", "%p16 = l0uop.mul %va, %vb : bf16\n    %p = l0uop.cast %p16 : bf16 to f32");
    CHECK_FALSE(build(text, "sm_80").launch);
  }
}
