//===- MatmulKernelTest.cpp - The tiled lowering of matmul kernels --------===//
//
// Builds l0uop matmul kernels in the shape L1ToL0 emits (RANGE i over
// group_x around RANGE j over local_x around a REDUCE over RANGE k, plus a
// fused epilogue), lowers them with --synpl-convert-l0uop-to-llvm, checks
// that the tiled lowering took them (a vector llvm.intr.fma in the
// function), JIT-compiles them and runs them in uneven chunks [begin, end)
// of the split range (empty ones and ones that overhang the range too),
// against a double-precision loop.
//
// Forms: A[i,k]·B[k,j]; A[k,i]·B[k,j] (X^T·dY, 2-D and flattened 1-D as the
// MNIST backward pass has it); A[i,k]·B[j,k] (dY·W^T, a strided operand
// that the lowering packs). Epilogues: bias[j], a per-row scale r[i], a
// second output through CMPLT/WHERE/NEG, a varying init c0[i,j], an init
// defined after the k loop, and a second REDUCE (max) over the same k.
//
// Tolerance: each output element is computed in double alongside its
// magnitude m (the same expression over absolute values); a float result
// passes when |got - want| <= 1e-5 * m + 1e-6. A float sum of K products
// carries at most about K * 2^-24 * m of rounding error, so 1e-5 covers
// K up to ~160 at worst and far more in practice (the errors are random).
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
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <initializer_list>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

enum class Form { AB, AtB, AtBFlat, ABt };
enum Epilogue : unsigned {
  kBias = 1,      // + bias[j]
  kRowScale = 2,  // * r[i]
  kSecondOut = 4, // c2 = where(s < 0, -s, s) * 0.5
  kInitLoad = 8,  // init = c0[i, j]
  kLateInit = 16, // init = 1.5, defined after the k loop
  kMax = 32,      // c3 = max_k a * b
  kMask = 64,     // c4 = (s > 0) as i1, one byte per element (a ReLU's mask)
};

struct Case {
  Form form;
  int64_t m, n, k;
  unsigned epilogue;
};

std::string buf(std::vector<int64_t> shape, const char *element = "f32") {
  std::string s = "!l0uop.buf<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + element + ">";
}

/// The kernel's buffers in argument order, with their shapes.
struct Layout {
  std::vector<std::pair<std::string, std::vector<int64_t>>> inputs, outputs;
};

Layout layoutOf(const Case &c) {
  Layout l;
  switch (c.form) {
  case Form::AB:
    l.inputs = {{"a", {c.m, c.k}}, {"b", {c.k, c.n}}};
    break;
  case Form::AtB:
    l.inputs = {{"a", {c.k, c.m}}, {"b", {c.k, c.n}}};
    break;
  case Form::AtBFlat:
    l.inputs = {{"a", {c.k * c.m}}, {"b", {c.k, c.n}}};
    break;
  case Form::ABt:
    l.inputs = {{"a", {c.m, c.k}}, {"b", {c.n, c.k}}};
    break;
  }
  if (c.epilogue & kBias)
    l.inputs.push_back({"bias", {c.n}});
  if (c.epilogue & kRowScale)
    l.inputs.push_back({"r", {c.m}});
  if (c.epilogue & kInitLoad)
    l.inputs.push_back({"c0", {c.m, c.n}});
  l.outputs.push_back({"c", {c.m, c.n}});
  if (c.epilogue & kSecondOut)
    l.outputs.push_back({"c2", {c.m, c.n}});
  if (c.epilogue & kMax)
    l.outputs.push_back({"c3", {c.m, c.n}});
  if (c.epilogue & kMask)
    l.outputs.push_back({"c4", {c.m, c.n}});
  return l;
}

std::string kernelText(const Case &c) {
  Layout l = layoutOf(c);
  std::string s;
  llvm::raw_string_ostream os(s);
  auto bytes = [](const std::vector<int64_t> &shape) {
    int64_t n = 4;
    for (int64_t d : shape)
      n *= d;
    return (n + 255) / 256 * 256;
  };
  int64_t offset = 0;
  std::string ins, outs;
  os << "l0uop.plan @t pipeline_depth 1 {\n";
  // Slots first (their offsets fix the pool's capacity).
  std::string slotText;
  {
    llvm::raw_string_ostream so(slotText);
    for (auto &b : l.inputs) {
      so << "  l0uop.slot @" << b.first << " pool @dev offset " << offset
         << " size " << bytes(b.second) << " lifetime(0, 0) : "
         << buf(b.second) << "\n";
      offset += bytes(b.second);
      ins += (ins.empty() ? "" : ", ") +
             ("%" + b.first + " = @" + b.first + " : " + buf(b.second));
    }
    for (auto &b : l.outputs) {
      // The mask is i1 (a byte each; the slot keeps the f32 size).
      std::string t = buf(b.second, b.first == "c4" ? "i1" : "f32");
      so << "  l0uop.slot @" << b.first << " pool @dev offset " << offset
         << " size " << bytes(b.second) << " lifetime(0, 0) : " << t << "\n";
      offset += bytes(b.second);
      outs += (outs.empty() ? "" : ", ") + ("%" + b.first + " = @" + b.first + " : " + t);
    }
  }
  os << "  l0uop.pool @dev persistent on device capacity " << offset << "\n"
     << slotText;
  std::string A = buf(l.inputs[0].second), B = buf(l.inputs[1].second),
              C = buf({c.m, c.n});
  os << "  l0uop.kernel @mm inputs(" << ins << ") outputs(" << outs
     << ") grid(" << c.m << ", 1, 1) block(" << c.n << ", 1, 1) shared_mem 0 {\n"
     << "    %i = l0uop.range 0 to " << c.m << " over group_x : index\n"
     << "    %j = l0uop.range 0 to " << c.n << " over local_x : index\n";
  if (c.epilogue & kInitLoad)
    os << "    %pc0 = l0uop.index %c0[%i, %j] : " << C << "\n"
       << "    %init = l0uop.load %pc0 : f32\n";
  else if (!(c.epilogue & kLateInit))
    os << "    %init = l0uop.const 0.0 : f32\n";
  if (c.epilogue & kMax)
    os << "    %ninf = l0uop.const -3.0e38 : f32\n";
  os << "    %k = l0uop.range 0 to " << c.k << " : index\n";
  switch (c.form) {
  case Form::AB:
    os << "    %pa = l0uop.index %a[%i, %k] : " << A << "\n"
       << "    %pb = l0uop.index %b[%k, %j] : " << B << "\n";
    break;
  case Form::AtB:
    os << "    %pa = l0uop.index %a[%k, %i] : " << A << "\n"
       << "    %pb = l0uop.index %b[%k, %j] : " << B << "\n";
    break;
  case Form::AtBFlat:
    os << "    %cm = l0uop.const " << c.m << " : index\n"
       << "    %km = l0uop.mul %k, %cm : index\n"
       << "    %fi = l0uop.add %km, %i : index\n"
       << "    %pa = l0uop.index %a[%fi] : " << A << "\n"
       << "    %pb = l0uop.index %b[%k, %j] : " << B << "\n";
    break;
  case Form::ABt:
    os << "    %pa = l0uop.index %a[%i, %k] : " << A << "\n"
       << "    %pb = l0uop.index %b[%j, %k] : " << B << "\n";
    break;
  }
  os << "    %va = l0uop.load %pa : f32\n"
     << "    %vb = l0uop.load %pb : f32\n"
     << "    %p = l0uop.mul %va, %vb : f32\n"
     << "    l0uop.end %k\n";
  if (c.epilogue & kLateInit)
    os << "    %init = l0uop.const 1.5 : f32\n";
  os << "    %s0 = l0uop.reduce add %p over %k init %init : f32\n";
  if (c.epilogue & kMax)
    os << "    %mx = l0uop.reduce max %p over %k init %ninf : f32\n";
  std::string val = "%s0";
  if (c.epilogue & kBias) {
    os << "    %pbias = l0uop.index %bias[%j] : " << buf({c.n}) << "\n"
       << "    %vbias = l0uop.load %pbias : f32\n"
       << "    %s1 = l0uop.add " << val << ", %vbias : f32\n";
    val = "%s1";
  }
  if (c.epilogue & kRowScale) {
    os << "    %pr = l0uop.index %r[%i] : " << buf({c.m}) << "\n"
       << "    %vr = l0uop.load %pr : f32\n"
       << "    %s2 = l0uop.mul " << val << ", %vr : f32\n";
    val = "%s2";
  }
  os << "    %pc = l0uop.index %c[%i, %j] : " << C << "\n"
     << "    l0uop.store %pc, " << val << " : f32\n";
  if (c.epilogue & kSecondOut)
    os << "    %zero = l0uop.const 0.0 : f32\n"
       << "    %half = l0uop.const 0.5 : f32\n"
       << "    %neg = l0uop.cmplt " << val << ", %zero : f32\n"
       << "    %ns = l0uop.neg " << val << " : f32\n"
       << "    %abs = l0uop.where %neg, %ns, " << val << " : f32\n"
       << "    %h = l0uop.mul %abs, %half : f32\n"
       << "    %pc2 = l0uop.index %c2[%i, %j] : " << C << "\n"
       << "    l0uop.store %pc2, %h : f32\n";
  if (c.epilogue & kMax)
    os << "    %pc3 = l0uop.index %c3[%i, %j] : " << C << "\n"
       << "    l0uop.store %pc3, %mx : f32\n";
  if (c.epilogue & kMask)
    os << "    %mzero = l0uop.const 0.0 : f32\n"
       << "    %pos = l0uop.cmplt %mzero, " << val << " : f32\n"
       << "    %pc4 = l0uop.index %c4[%i, %j] : " << buf({c.m, c.n}, "i1") << "\n"
       << "    l0uop.store %pc4, %pos : i1\n";
  os << "    l0uop.end %j\n"
     << "    l0uop.end %i\n"
     << "  }\n"
     << "}\n";
  return s;
}

/// A 64-byte aligned float buffer.
struct Buffer {
  explicit Buffer(size_t n, float fill = 0) : n(n) {
    data = static_cast<float *>(std::aligned_alloc(64, (n * 4 + 63) / 64 * 64));
    for (size_t i = 0; i < n; ++i)
      data[i] = fill;
  }
  ~Buffer() { std::free(data); }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  size_t n;
  float *data;
};

mlir::MLIRContext &context() {
  static mlir::MLIRContext *ctx = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    mlir::DialectRegistry registry;
    synpl::registerHostCodegen(registry);
    auto *c = new mlir::MLIRContext(registry);
    c->loadAllAvailableDialects();
    return c;
  }();
  return *ctx;
}

/// Whether a function of the module does vector fma (the tiled lowering).
bool hasVectorFma(mlir::ModuleOp module, unsigned lanes) {
  bool found = false;
  module.walk([&](mlir::LLVM::FMAOp fma) {
    if (auto vt = llvm::dyn_cast<mlir::VectorType>(fma.getType()))
      found |= vt.getNumElements() == lanes && vt.getElementType().isF32();
  });
  return found;
}

struct Compiled {
  std::unique_ptr<mlir::ExecutionEngine> engine;
  int64_t iterations = 0;
  bool tiled = false;
  unsigned widest = 0; // lanes of the widest vector fma
  std::string error;
};

Compiled compileText(const std::string &text, unsigned lanes, unsigned rows) {
  Compiled out;
  auto module = mlir::parseSourceString<mlir::ModuleOp>(text, &context());
  if (!module) {
    out.error = "the kernel does not parse:\n" + text;
    return out;
  }
  mlir::PassManager pm(&context());
  synpl::ConvertL0UOpToLLVMOptions options;
  options.keepPlan = false;
  options.tileLanes = lanes;
  options.tileRows = rows;
  pm.addPass(synpl::createConvertL0UOpToLLVM(options));
  if (mlir::failed(pm.run(*module))) {
    out.error = "the conversion failed";
    return out;
  }
  out.tiled = hasVectorFma(*module, lanes);
  module->walk([&](mlir::LLVM::FMAOp fma) {
    if (auto vt = llvm::dyn_cast<mlir::VectorType>(fma.getType()))
      out.widest = std::max<unsigned>(out.widest, vt.getNumElements());
  });
  for (auto fn : module->getOps<mlir::LLVM::LLVMFuncOp>())
    if (auto n = fn->getAttrOfType<mlir::IntegerAttr>("synpl.iterations"))
      out.iterations = n.getInt();
  auto optimize = mlir::makeOptimizingTransformer(/*optLevel=*/2,
                                                  /*sizeLevel=*/0, nullptr);
  mlir::ExecutionEngineOptions engineOptions;
  engineOptions.transformer = optimize;
  auto created = mlir::ExecutionEngine::create(*module, engineOptions);
  if (!created) {
    out.error = llvm::toString(created.takeError());
    return out;
  }
  out.engine = std::move(*created);
  synpl::test::bindRuntime(*out.engine);
  return out;
}

Compiled compile(const Case &c, unsigned lanes, unsigned rows) {
  return compileText(kernelText(c), lanes, rows);
}

/// The tilings (lanes, rows) the hand-written kernels run at.
const std::vector<std::pair<unsigned, unsigned>> kTilings{{16, 6}, {8, 3}, {4, 2}};

/// A hand-written kernel `@mm` of plan `@t` compiled at a tiling, required
/// to take the tiled form with `iterations` split iterations.
Compiled compileTiledMm(const char *text, unsigned lanes, unsigned rows,
                        int64_t iterations) {
  Compiled compiled = compileText(text, lanes, rows);
  INFO(compiled.error);
  REQUIRE(compiled.engine);
  CHECK(compiled.tiled);
  CHECK(compiled.iterations == iterations);
  REQUIRE(static_cast<bool>(compiled.engine->lookupPacked("t_mm")));
  return compiled;
}

/// Fills `bufs`, in order, with draws of U(-1, 1) from `rng`.
void fillUniform(std::initializer_list<Buffer *> bufs, std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (Buffer *buf : bufs)
    for (size_t i = 0; i < buf->n; ++i)
      buf->data[i] = dist(rng);
}

/// Calls kernel `@mm` of `compiled` on `buffers` (its arguments in order)
/// once per chunk [begin, end) of its split range.
void runChunks(const Compiled &compiled, std::vector<void *> buffers,
               const std::vector<std::pair<int64_t, int64_t>> &chunks) {
  auto fn = compiled.engine->lookupPacked("t_mm");
  REQUIRE(static_cast<bool>(fn));
  for (auto [begin, end] : chunks) {
    std::vector<void *> args;
    for (void *&p : buffers)
      args.push_back(&p);
    args.push_back(&begin);
    args.push_back(&end);
    (*fn)(args.data());
  }
}

/// Runs case `c` chunk by chunk and compares every output with doubles
/// (of every `rowStride`-th row and the last: a large case checks a sample).
void check(const Case &c, unsigned lanes, unsigned rows,
           const std::vector<std::pair<int64_t, int64_t>> &chunks,
           uint32_t seed, unsigned widenedTo = 0, int64_t rowStride = 1) {
  Compiled compiled = compile(c, lanes, rows);
  INFO(compiled.error);
  REQUIRE(compiled.engine);
  if (widenedTo)
    CHECK(compiled.widest == widenedTo);
  else
    CHECK(compiled.tiled);
  CHECK(compiled.iterations == c.m);
  Layout l = layoutOf(c);
  std::mt19937 rng(seed);
  std::vector<std::unique_ptr<Buffer>> bufs;
  auto sizeOf = [](const std::vector<int64_t> &shape) {
    size_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  };
  for (auto &b : l.inputs) {
    bufs.push_back(std::make_unique<Buffer>(sizeOf(b.second)));
    fillUniform({bufs.back().get()}, rng);
  }
  for (auto &b : l.outputs)
    bufs.push_back(std::make_unique<Buffer>(sizeOf(b.second), NAN));
  std::vector<void *> ptrs;
  for (auto &b : bufs)
    ptrs.push_back(b->data);
  runChunks(compiled, ptrs, chunks);

  auto input = [&](const char *name) -> const float * {
    for (size_t n = 0; n < l.inputs.size(); ++n)
      if (l.inputs[n].first == name)
        return bufs[n]->data;
    return nullptr;
  };
  auto output = [&](const char *name) -> const float * {
    for (size_t n = 0; n < l.outputs.size(); ++n)
      if (l.outputs[n].first == name)
        return bufs[l.inputs.size() + n]->data;
    return nullptr;
  };
  const float *a = input("a"), *b = input("b"), *bias = input("bias"),
              *r = input("r"), *c0 = input("c0");
  const float *out = output("c"), *out2 = output("c2"), *out3 = output("c3");
  const auto *out4 = reinterpret_cast<const uint8_t *>(output("c4"));

  size_t bad = 0;
  std::string first;
  auto compare = [&](const char *what, int64_t i, int64_t j, float got,
                     double want, double mag) {
    bool ok = std::fabs(got - want) <= 1e-5 * mag + 1e-6;
    if (!ok && bad++ == 0)
      first = std::string(what) + "[" + std::to_string(i) + ", " +
              std::to_string(j) + "]: got " + std::to_string(got) +
              ", want " + std::to_string(want);
  };
  for (int64_t i = 0; i < c.m;
       i = i == c.m - 1 ? c.m : std::min(i + rowStride, c.m - 1))
    for (int64_t j = 0; j < c.n; ++j) {
      double init = 0;
      if (c.epilogue & kInitLoad)
        init = c0[i * c.n + j];
      if (c.epilogue & kLateInit)
        init = 1.5;
      double sum = init, mag = std::fabs(init);
      double mx = -3.0e38;
      for (int64_t k = 0; k < c.k; ++k) {
        float av = 0, bv = 0;
        switch (c.form) {
        case Form::AB:
          av = a[i * c.k + k], bv = b[k * c.n + j];
          break;
        case Form::AtB:
        case Form::AtBFlat:
          av = a[k * c.m + i], bv = b[k * c.n + j];
          break;
        case Form::ABt:
          av = a[i * c.k + k], bv = b[j * c.k + k];
          break;
        }
        double p = static_cast<double>(av) * bv;
        sum += p;
        mag += std::fabs(p);
        mx = std::max(mx, static_cast<double>(av * bv));
      }
      if (c.epilogue & kBias) {
        sum += bias[j];
        mag += std::fabs(bias[j]);
      }
      if (c.epilogue & kRowScale) {
        sum *= r[i];
        mag *= std::fabs(r[i]);
      }
      compare("c", i, j, out[i * c.n + j], sum, mag);
      if (c.epilogue & kSecondOut)
        compare("c2", i, j, out2[i * c.n + j], std::fabs(sum) * 0.5, mag * 0.5);
      if (c.epilogue & kMax)
        compare("c3", i, j, out3[i * c.n + j], mx, std::fabs(mx));
      // The mask of the f32 result the kernel stored (exactly what it
      // compared), one byte per element.
      if (c.epilogue & kMask)
        compare("c4", i, j, out4[i * c.n + j], out[i * c.n + j] > 0 ? 1 : 0, 0);
    }
  INFO("first mismatch: " << first);
  CHECK(bad == 0);
}

/// Uneven chunks covering [0, m): an empty one, one that starts below 0,
/// single rows, one that overhangs the end.
std::vector<std::pair<int64_t, int64_t>> unevenChunks(int64_t m) {
  std::vector<std::pair<int64_t, int64_t>> chunks{{-3, 1}, {1, 1}};
  int64_t at = 1, step = 1;
  while (at < m) {
    int64_t next = std::min(m, at + step);
    chunks.push_back({at, next});
    at = next;
    step = step * 2 + 1; // 1, 3, 7, 15, ...: every leftover row count
  }
  chunks.push_back({m, m + 5});
  return chunks;
}

} // namespace

TEST_CASE("tiled matmul kernels: three forms, odd sizes, uneven chunks",
          "[matmul]") {
  const std::vector<std::pair<unsigned, unsigned>> tilings{{16, 6}, {8, 4}, {8, 3}};
  uint32_t seed = 1;
  for (Form form : {Form::AB, Form::AtB, Form::AtBFlat, Form::ABt})
    for (auto [m, n, k] : std::vector<std::array<int64_t, 3>>{
             {13, 10, 7}, {1, 1, 1}, {29, 37, 19}, {6, 16, 33}})
      for (auto [lanes, rows] : tilings) {
        INFO("form " << static_cast<int>(form) << ", " << m << "x" << n << "x"
                     << k << ", lanes " << lanes << ", rows " << rows);
        check({form, m, n, k, kBias | kRowScale}, lanes, rows,
              unevenChunks(m), seed++);
      }
}

TEST_CASE("tiled matmul kernels: fused epilogues and extra outputs",
          "[matmul]") {
  uint32_t seed = 100;
  for (Form form : {Form::AB, Form::AtB, Form::ABt})
    for (unsigned epilogue :
         {0u, unsigned(kBias), unsigned(kSecondOut | kBias),
          unsigned(kInitLoad | kRowScale), unsigned(kLateInit | kSecondOut),
          unsigned(kMax | kBias), unsigned(kMax | kSecondOut | kInitLoad),
          unsigned(kMask | kBias), unsigned(kMask | kSecondOut)}) {
      INFO("form " << static_cast<int>(form) << ", epilogue " << epilogue);
      check({form, 13, 10, 7, epilogue}, 16, 6, unevenChunks(13), seed);
      check({form, 21, 35, 12, epilogue}, 16, 6, unevenChunks(21), seed++);
    }
}

TEST_CASE("tiled matmul kernels: MNIST sizes", "[matmul]") {
  // fc1 forward (128x256, K 784) in the runtime's chunks of 16 rows, and
  // the weight gradient X^T.dY (784x256, K 128) and dY.W^T (128x256, K 10).
  std::vector<std::pair<int64_t, int64_t>> sixteen;
  for (int64_t at = 0; at < 128; at += 16)
    sixteen.push_back({at, at + 16});
  check({Form::AB, 128, 256, 784, kBias}, 16, 6, sixteen, 7);
  check({Form::AtBFlat, 784, 256, 128, kSecondOut}, 16, 6,
        {{0, 100}, {100, 101}, {101, 784}}, 8);
  check({Form::ABt, 128, 256, 10, kBias | kRowScale}, 16, 6, unevenChunks(128), 9);
  check({Form::AB, 128, 10, 256, kBias}, 16, 6, {{0, 128}}, 10);
}

TEST_CASE("tiled matmul kernels: one row widens the lanes", "[matmul]") {
  // A column sum over the batch (the LayerNorm gain's gradient) is a
  // matmul of one row: its block takes 64 lanes (8 ymm accumulators, each
  // element's k still in order) where 16 lanes would leave 10 of the 12
  // accumulators idle, and packs nothing (no row block reads a panel
  // twice). N 200: three blocks and a masked one of 8; K 300: k blocks.
  uint32_t seed = 300;
  for (Form form : {Form::AB, Form::AtB, Form::ABt})
    for (auto [n, k] : std::vector<std::pair<int64_t, int64_t>>{
             {256, 128}, {200, 7}, {200, 300}}) {
      INFO("form " << static_cast<int>(form) << ", 1x" << n << "x" << k);
      check({form, 1, n, k, kBias | kSecondOut}, 16, 6, {{0, 1}}, seed++,
            /*widenedTo=*/64);
    }
  // Two rows: 32 lanes (two rows of 4 accumulators); N 40: one block of
  // 32 and a masked one of 8.
  check({Form::AB, 2, 100, 50, kBias}, 16, 6, {{0, 1}, {1, 2}}, seed++, 32);
  check({Form::ABt, 2, 40, 50, kBias | kRowScale}, 16, 6, {{0, 2}}, seed++, 32);
}

TEST_CASE("tiled matmul kernels: long k loops run in k blocks", "[matmul]") {
  // A k loop longer than 256 whose lane panel and row block would not
  // share L1 (trip x (lanes + rows) f32 over 28 KiB) runs in blocks whose
  // accumulators wait in per-row arrays: 2 blocks (first, last) and 4 (first, 2 middle, last),
  // with every kind of init, two REDUCEs, and chunks of several row panels
  // (at K 1000 a panel holds 258 rows, or up to 294 to spare a panel: 593
  // rows run as three of 198, 198 and 197, 600 as 204, 204 and 192, 290 as
  // one). The k blocks run outside the lane
  // blocks and A's rows are copied into a row array per k block (the form
  // decides whether A is the load that qualifies; A^T at 600 rows is read
  // in place) -- except at N 11000,
  // where a panel's parked accumulators would pass 1 MiB and the lane
  // blocks stay outside.
  uint32_t seed = 500;
  for (Form form : {Form::AB, Form::ABt, Form::AtBFlat})
    for (unsigned epilogue :
         {unsigned(kBias), unsigned(kInitLoad | kSecondOut),
          unsigned(kLateInit | kRowScale), unsigned(kMax | kInitLoad)}) {
      INFO("form " << static_cast<int>(form) << ", epilogue " << epilogue);
      check({form, 13, 19, 400, epilogue}, 16, 6, unevenChunks(13), seed++);
      check({form, 600, 21, 1000, epilogue}, 16, 6, {{0, 7}, {7, 600}}, seed++);
    }
  check({Form::AB, 20, 12, 777, kBias}, 8, 3, unevenChunks(20), seed++);
  // 326 at 16 lanes and 6 rows: the shortest k loop those run in blocks
  // (two of 163).
  check({Form::AB, 13, 21, 326, kBias}, 16, 6, unevenChunks(13), seed++);
  check({Form::AB, 600, 21, 1000, kBias}, 16, 6, {{0, 600}}, seed++);
  check({Form::AB, 290, 21, 1000, kBias | kRowScale}, 16, 6, {{0, 290}}, seed++);
  check({Form::AB, 13, 11000, 400, kBias | kRowScale}, 16, 6,
        unevenChunks(13), seed++);
  // A^T whose k iterations are more than a page apart (1100 floats): a
  // k-major row array (at 600 rows, as above, the row blocks read A^T in
  // place).
  check({Form::AtB, 1100, 21, 400, kBias | kInitLoad}, 16, 6, {{0, 5}, {5, 1100}}, seed++);
}

TEST_CASE("tiled matmul kernels: a k loop that fits L1 with its row block runs whole",
          "[matmul]") {
  // K 288 (the CNN's second convolution: 3 x 3 x 32) at 16 lanes and 6
  // rows is 25 KiB of lane panel and row block: no k blocks, A read in
  // place rather than copied into row arrays; K 325 is the longest such.
  // Every form, with chunks of several row panels.
  uint32_t seed = 700;
  for (Form form : {Form::AB, Form::ABt, Form::AtB})
    for (int64_t k : {int64_t(288), int64_t(325)}) {
      INFO("form " << static_cast<int>(form) << ", k " << k);
      check({form, 500, 64, k, kBias | kSecondOut}, 16, 6, {{0, 13}, {13, 500}}, seed++);
    }
}

TEST_CASE("tiled matmul kernels: later row panels reuse the packed lane panels",
          "[matmul]") {
  // A chunk of several row panels packs B's lane panels once, in its first
  // panel, into a slot per (lane block, k block), and its later panels read
  // the slots. At N 10930 the lane blocks run outside the k blocks (a
  // panel's parked accumulators would pass 1 MiB), so the slots go k block
  // inside lane block; 10930 = 683 x 16 + 2 ends in a masked lane block.
  // K 400 is two k blocks of 200, a row panel 366 rows: the chunk of 487
  // rows is two panels, the chunk of 13 one (it packs into its small
  // panels). A sample of the rows is checked (every 7th and the last).
  check({Form::AB, 500, 10930, 400, kBias}, 16, 6, {{0, 13}, {13, 500}}, 900,
        /*widenedTo=*/0, /*rowStride=*/7);
  // The k blocks outside the lane blocks (slots lane block inside k block),
  // and one k loop (no k blocks), each with two row panels in the chunk.
  check({Form::ABt, 600, 37, 1000, kBias}, 16, 6, {{0, 600}}, 901);
  check({Form::AtB, 600, 37, 200, kBias | kRowScale}, 16, 6, {{0, 600}}, 902);
}

TEST_CASE("tiled matmul kernels: ranges with a lower bound and a step",
          "[matmul]") {
  // i = 1, 3, ..., 13 (7 rows); j = 3, 6, ..., 39 (13 lanes, stride 3 in
  // memory: gathers and scatters); k = 2, 4, ..., 898 (449 iterations: two
  // k blocks). c[i, j] = sum_k a[i, k] * b[k, j] + a[i, j].
  const char *text = R"mlir(
l0uop.plan @t pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @a pool @dev offset 0 size 57600 lifetime(0, 0) : !l0uop.buf<16x900xf32>
  l0uop.slot @b pool @dev offset 57600 size 144000 lifetime(0, 0) : !l0uop.buf<900x40xf32>
  l0uop.slot @c pool @dev offset 201728 size 2560 lifetime(0, 0) : !l0uop.buf<16x40xf32>
  l0uop.kernel @mm inputs(%a = @a : !l0uop.buf<16x900xf32>, %b = @b : !l0uop.buf<900x40xf32>)
      outputs(%c = @c : !l0uop.buf<16x40xf32>) grid(7, 1, 1) block(13, 1, 1) shared_mem 0 {
    %i = l0uop.range 1 to 14 step 2 over group_x : index
    %j = l0uop.range 3 to 40 step 3 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 2 to 900 step 2 : index
    %pa = l0uop.index %a[%i, %k] : !l0uop.buf<16x900xf32>
    %va = l0uop.load %pa : f32
    %pb = l0uop.index %b[%k, %j] : !l0uop.buf<900x40xf32>
    %vb = l0uop.load %pb : f32
    %p = l0uop.mul %va, %vb : f32
    l0uop.end %k
    %s = l0uop.reduce add %p over %k init %zero : f32
    %pe = l0uop.index %a[%i, %j] : !l0uop.buf<16x900xf32>
    %ve = l0uop.load %pe : f32
    %r = l0uop.add %s, %ve : f32
    %pc = l0uop.index %c[%i, %j] : !l0uop.buf<16x40xf32>
    l0uop.store %pc, %r : f32
    l0uop.end %j
    l0uop.end %i
  }
}
)mlir";
  for (auto [lanes, rows] : kTilings) {
    INFO("lanes " << lanes << ", rows " << rows);
    Compiled compiled = compileTiledMm(text, lanes, rows, 7);
    Buffer a(16 * 900), b(900 * 40), c(16 * 40, NAN);
    std::mt19937 rng(lanes);
    fillUniform({&a, &b}, rng);
    runChunks(compiled, {a.data, b.data, c.data}, unevenChunks(7));
    size_t bad = 0;
    for (int64_t i = 0; i < 16; ++i)
      for (int64_t j = 0; j < 40; ++j) {
        float got = c.data[i * 40 + j];
        if (i % 2 == 0 || i > 13 || j % 3 != 0 || j < 3) {
          bad += !std::isnan(got); // never written
          continue;
        }
        double sum = 0, mag = 0;
        for (int64_t k = 2; k < 900; k += 2) {
          double p = double(a.data[i * 900 + k]) * b.data[k * 40 + j];
          sum += p;
          mag += std::fabs(p);
        }
        sum += a.data[i * 900 + j];
        mag += std::fabs(a.data[i * 900 + j]);
        bad += !(std::fabs(got - sum) <= 1e-5 * mag + 1e-6);
      }
    CHECK(bad == 0);
  }
}

TEST_CASE("tiled matmul kernels: batched rows share their group's lane operand",
          "[matmul]") {
  // Attention's scores, batched: i runs over (batch n, head h, row r) =
  // 3 x 2 x 29, and B[n, h, k, j] depends on i only through i / 29 and
  // i / 58. The row blocks never cross a multiple of 29 (each group's 29
  // rows: full blocks, then 4, 2, 1), so B's lane vector is loaded once
  // per block and k, as an unbatched B[k, j] is. The epilogue reads a
  // per-row e[r, j], a per-group scalar s[n, h] and a per-row mask m[r, j]
  // (i1, one byte each): c[n, h, r, j] = m[r, j] ? (sum_k a[n, r, h, k] *
  // b[n, h, k, j] + e[r, j]) * s[n, h] : -1e30.
  const char *text = R"mlir(
l0uop.plan @t pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @a pool @dev offset 0 size 13248 lifetime(0, 0) : !l0uop.buf<3x29x2x19xf32>
  l0uop.slot @b pool @dev offset 13312 size 16872 lifetime(0, 0) : !l0uop.buf<3x2x19x37xf32>
  l0uop.slot @e pool @dev offset 30208 size 4292 lifetime(0, 0) : !l0uop.buf<29x37xf32>
  l0uop.slot @s pool @dev offset 34560 size 24 lifetime(0, 0) : !l0uop.buf<3x2xf32>
  l0uop.slot @c pool @dev offset 34816 size 25752 lifetime(0, 0) : !l0uop.buf<3x2x29x37xf32>
  l0uop.slot @m pool @dev offset 60672 size 1073 lifetime(0, 0) : !l0uop.buf<29x37xi1>
  l0uop.kernel @mm inputs(%a = @a : !l0uop.buf<3x29x2x19xf32>, %b = @b : !l0uop.buf<3x2x19x37xf32>,
                          %e = @e : !l0uop.buf<29x37xf32>, %s = @s : !l0uop.buf<3x2xf32>,
                          %m = @m : !l0uop.buf<29x37xi1>)
      outputs(%c = @c : !l0uop.buf<3x2x29x37xf32>) grid(174, 1, 1) block(37, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 174 over group_x : index
    %j = l0uop.range 0 to 37 over local_x : index
    %c29 = l0uop.const 29 : index
    %r = l0uop.mod %i, %c29 : index
    %g = l0uop.div %i, %c29 : index
    %c2 = l0uop.const 2 : index
    %h = l0uop.mod %g, %c2 : index
    %c58 = l0uop.const 58 : index
    %n = l0uop.div %i, %c58 : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 19 : index
    %pa = l0uop.index %a[%n, %r, %h, %k] : !l0uop.buf<3x29x2x19xf32>
    %va = l0uop.load %pa : f32
    %pb = l0uop.index %b[%n, %h, %k, %j] : !l0uop.buf<3x2x19x37xf32>
    %vb = l0uop.load %pb : f32
    %p = l0uop.mul %va, %vb : f32
    l0uop.end %k
    %sum = l0uop.reduce add %p over %k init %zero : f32
    %pe = l0uop.index %e[%r, %j] : !l0uop.buf<29x37xf32>
    %ve = l0uop.load %pe : f32
    %t = l0uop.add %sum, %ve : f32
    %ps = l0uop.index %s[%n, %h] : !l0uop.buf<3x2xf32>
    %vs = l0uop.load %ps : f32
    %u = l0uop.mul %t, %vs : f32
    %pm = l0uop.index %m[%r, %j] : !l0uop.buf<29x37xi1>
    %vm = l0uop.load %pm : i1
    %low = l0uop.const -1.000000e+30 : f32
    %w = l0uop.where %vm, %u, %low : f32
    %pc = l0uop.index %c[%n, %h, %r, %j] : !l0uop.buf<3x2x29x37xf32>
    l0uop.store %pc, %w : f32
    l0uop.end %j
    l0uop.end %i
  }
}
)mlir";
  for (auto [lanes, rows] : kTilings) {
    INFO("lanes " << lanes << ", rows " << rows);
    Compiled compiled = compileTiledMm(text, lanes, rows, 174);
    Buffer a(3 * 29 * 2 * 19), b(3 * 2 * 19 * 37), e(29 * 37), sc(6),
        c(3 * 2 * 29 * 37, NAN);
    std::mt19937 rng(lanes * 7 + rows);
    fillUniform({&a, &b, &e, &sc}, rng);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<uint8_t> m(29 * 37);
    for (uint8_t &byte : m)
      byte = dist(rng) > -0.3f; // about two thirds kept
    runChunks(compiled, {a.data, b.data, e.data, sc.data, m.data(), c.data},
              unevenChunks(174));
    size_t bad = 0;
    for (int64_t n = 0; n < 3; ++n)
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t r = 0; r < 29; ++r)
          for (int64_t j = 0; j < 37; ++j) {
            double sum = 0, mag = 0;
            for (int64_t k = 0; k < 19; ++k) {
              double p = double(a.data[((n * 29 + r) * 2 + h) * 19 + k]) *
                         b.data[((n * 2 + h) * 19 + k) * 37 + j];
              sum += p;
              mag += std::fabs(p);
            }
            double scale = sc.data[n * 2 + h];
            double want = (sum + e.data[r * 37 + j]) * scale;
            mag = (mag + std::fabs(e.data[r * 37 + j])) * std::fabs(scale);
            if (!m[r * 37 + j])
              want = double(-1e30f), mag = 0; // the f32 constant
            float got = c.data[((n * 2 + h) * 29 + r) * 37 + j];
            bad += !(std::fabs(got - want) <= 1e-5 * mag + 1e-6);
          }
    CHECK(bad == 0);
  }
}

TEST_CASE("tiled matmul kernels: split-K groups pack their own lane panels",
          "[matmul]") {
  // Split-K partial products (what --synpl-l1-split-reductions makes of a
  // weight gradient): i runs over (slice s, row m) = 3 x 29, and slice s
  // contracts k = s * 400 + kk of A^T[k, m] and B[k, j]. B's address
  // depends on i only through i / 29, and its k loop (400: in two k blocks
  // at 16 lanes and 6 rows, whole at the smaller tilings) is too long to
  // read in place, so each group packs its own lane panels with i at the
  // group's first row. Uneven chunks start and end inside groups; 37 lanes
  // end in a masked block.
  // p[s, m, j] = sum_kk a[s * 400 + kk, m] * b[s * 400 + kk, j].
  const char *text = R"mlir(
l0uop.plan @t pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @a pool @dev offset 0 size 139200 lifetime(0, 0) : !l0uop.buf<1200x29xf32>
  l0uop.slot @b pool @dev offset 139264 size 177600 lifetime(0, 0) : !l0uop.buf<1200x37xf32>
  l0uop.slot @p pool @dev offset 316928 size 12876 lifetime(0, 0) : !l0uop.buf<3x29x37xf32>
  l0uop.kernel @mm inputs(%a = @a : !l0uop.buf<1200x29xf32>, %b = @b : !l0uop.buf<1200x37xf32>)
      outputs(%p = @p : !l0uop.buf<3x29x37xf32>) grid(87, 1, 1) block(37, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 87 over group_x : index
    %j = l0uop.range 0 to 37 over local_x : index
    %c29 = l0uop.const 29 : index
    %m = l0uop.mod %i, %c29 : index
    %s = l0uop.div %i, %c29 : index
    %zero = l0uop.const 0.0 : f32
    %kk = l0uop.range 0 to 400 : index
    %c400 = l0uop.const 400 : index
    %base = l0uop.mul %s, %c400 : index
    %k = l0uop.add %base, %kk : index
    %pa = l0uop.index %a[%k, %m] : !l0uop.buf<1200x29xf32>
    %va = l0uop.load %pa : f32
    %pb = l0uop.index %b[%k, %j] : !l0uop.buf<1200x37xf32>
    %vb = l0uop.load %pb : f32
    %prod = l0uop.mul %va, %vb : f32
    l0uop.end %kk
    %sum = l0uop.reduce add %prod over %kk init %zero : f32
    %pp = l0uop.index %p[%s, %m, %j] : !l0uop.buf<3x29x37xf32>
    l0uop.store %pp, %sum : f32
    l0uop.end %j
    l0uop.end %i
  }
}
)mlir";
  for (auto [lanes, rows] : kTilings) {
    INFO("lanes " << lanes << ", rows " << rows);
    Compiled compiled = compileTiledMm(text, lanes, rows, 87);
    Buffer a(1200 * 29), b(1200 * 37), p(3 * 29 * 37, NAN);
    std::mt19937 rng(lanes * 11 + rows);
    fillUniform({&a, &b}, rng);
    runChunks(compiled, {a.data, b.data, p.data}, unevenChunks(87));
    size_t bad = 0;
    for (int64_t s = 0; s < 3; ++s)
      for (int64_t m = 0; m < 29; ++m)
        for (int64_t j = 0; j < 37; ++j) {
          double sum = 0, mag = 0;
          for (int64_t kk = 0; kk < 400; ++kk) {
            int64_t k = s * 400 + kk;
            double prod = double(a.data[k * 29 + m]) * b.data[k * 37 + j];
            sum += prod;
            mag += std::fabs(prod);
          }
          float got = p.data[(s * 29 + m) * 37 + j];
          bad += !(std::fabs(got - sum) <= 1e-5 * mag + 1e-6);
        }
    CHECK(bad == 0);
  }
}

TEST_CASE("tiled matmul kernels: straight-line code around the RANGEs",
          "[matmul]") {
  // A constant before RANGE i and a row offset between RANGE i and RANGE j
  // (pure code the tiled lowering runs again in every block):
  // c[i, j] = sum_k a[i * 37 + k] * b[k, j].
  const char *text = R"mlir(
l0uop.plan @t pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @a pool @dev offset 0 size 3072 lifetime(0, 0) : !l0uop.buf<703xf32>
  l0uop.slot @b pool @dev offset 3072 size 3072 lifetime(0, 0) : !l0uop.buf<37x20xf32>
  l0uop.slot @c pool @dev offset 6144 size 1536 lifetime(0, 0) : !l0uop.buf<19x20xf32>
  l0uop.kernel @mm inputs(%a = @a : !l0uop.buf<703xf32>, %b = @b : !l0uop.buf<37x20xf32>)
      outputs(%c = @c : !l0uop.buf<19x20xf32>) grid(19, 1, 1) block(20, 1, 1) shared_mem 0 {
    %ck = l0uop.const 37 : index
    %i = l0uop.range 0 to 19 over group_x : index
    %row = l0uop.mul %i, %ck : index
    %j = l0uop.range 0 to 20 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 37 : index
    %fa = l0uop.add %row, %k : index
    %pa = l0uop.index %a[%fa] : !l0uop.buf<703xf32>
    %va = l0uop.load %pa : f32
    %pb = l0uop.index %b[%k, %j] : !l0uop.buf<37x20xf32>
    %vb = l0uop.load %pb : f32
    %p = l0uop.mul %va, %vb : f32
    l0uop.end %k
    %s = l0uop.reduce add %p over %k init %zero : f32
    %pc = l0uop.index %c[%i, %j] : !l0uop.buf<19x20xf32>
    l0uop.store %pc, %s : f32
    l0uop.end %j
    l0uop.end %i
  }
}
)mlir";
  Compiled compiled = compileText(text, 16, 6);
  INFO(compiled.error);
  REQUIRE(compiled.engine);
  CHECK(compiled.tiled);
  Buffer a(703), b(37 * 20), c(19 * 20, NAN);
  std::mt19937 rng(3);
  fillUniform({&a, &b}, rng);
  runChunks(compiled, {a.data, b.data, c.data}, unevenChunks(19));
  size_t bad = 0;
  for (int64_t i = 0; i < 19; ++i)
    for (int64_t j = 0; j < 20; ++j) {
      double sum = 0, mag = 0;
      for (int64_t k = 0; k < 37; ++k) {
        double p = double(a.data[i * 37 + k]) * b.data[k * 20 + j];
        sum += p;
        mag += std::fabs(p);
      }
      bad += !(std::fabs(c.data[i * 20 + j] - sum) <= 1e-5 * mag + 1e-6);
    }
  CHECK(bad == 0);
}
