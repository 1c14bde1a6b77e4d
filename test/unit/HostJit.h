//===- HostJit.h - JIT-run host-lowered L0 in unit tests ---------*- C++ -*-===//
//
// Lowers a module's l0uop kernels and l0ctl programs with
// --synpl-convert-l0uop-to-llvm and --synpl-convert-l0ctl-to-llvm and
// JIT-compiles the result with mlir::ExecutionEngine (O2). A kernel runs as
// the host runtime runs it: its range [0, iterations) in two chunks, one
// call each. Shared by the tests that check host code against C++ or the
// reference interpreter (runGraphOnHost: an L1 graph's kernels).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TEST_UNIT_HOSTJIT_H
#define SYNPL_TEST_UNIT_HOSTJIT_H

#include "synpl/Conversion/Passes.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Reference/L1Interpreter.h"
#include "synpl/Runtime/Runtime.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace synpl::test {

/// A 64-byte aligned buffer: the kernel ABI promises `llvm.align 64`.
template <typename T>
struct Buffer {
  explicit Buffer(size_t n, T fill = T()) : n(n) {
    size_t bytes = (n * sizeof(T) + 63) / 64 * 64;
    data = static_cast<T *>(std::aligned_alloc(64, bytes ? bytes : 64));
    for (size_t i = 0; i < n; ++i)
      data[i] = fill;
  }
  ~Buffer() { std::free(data); }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  T &operator[](size_t i) { return data[i]; }
  const T &operator[](size_t i) const { return data[i]; }
  size_t n;
  T *data;
};

/// Lowers an L0 module to LLVM and JIT-compiles it.
/// Binds, by name, the runtime functions kernels call (the per-thread
/// scratch of tiled kernels) and `extra` (stand-ins for other runtime
/// primitives) in `engine`: the test binaries do not export their symbols
/// to the JIT.
inline void bindRuntime(mlir::ExecutionEngine &engine,
                        const std::map<std::string, void *> &extra = {}) {
  std::map<std::string, void *> symbols = extra;
  symbols.emplace("synpl_rt_kernel_scratch",
                  reinterpret_cast<void *>(&synpl_rt_kernel_scratch));
  engine.registerSymbols([symbols](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    for (auto &[name, address] : symbols)
      map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                             llvm::JITSymbolFlags::Exported};
    return map;
  });
}

class Jit {
public:
  explicit Jit(mlir::OwningOpRef<mlir::ModuleOp> parsed) : module(std::move(parsed)) {}

  static std::unique_ptr<Jit> fromSource(mlir::MLIRContext &ctx,
                                         const std::string &source) {
    return std::make_unique<Jit>(
        mlir::parseSourceString<mlir::ModuleOp>(source, &ctx));
  }
  static std::unique_ptr<Jit> fromFile(mlir::MLIRContext &ctx,
                                       const std::string &path) {
    return std::make_unique<Jit>(
        mlir::parseSourceFile<mlir::ModuleOp>(path, &ctx));
  }

  /// Runs both conversions and builds the engine; false on any failure.
  /// `bind` names functions the code calls (the runtime's primitives) by
  /// name.
  bool compile(std::map<std::string, void *> bind = {}) {
    symbols = std::move(bind);
    if (!module)
      return false;
    mlir::PassManager pm(module->getContext());
    pm.addPass(synpl::createConvertL0CtlToLLVM({/*keepRegions=*/false}));
    pm.addPass(synpl::createConvertL0UOpToLLVM({/*keepPlan=*/false}));
    if (mlir::failed(pm.run(*module)))
      return false;
    for (auto fn : module->getOps<mlir::LLVM::LLVMFuncOp>())
      if (auto n = fn->getAttrOfType<mlir::IntegerAttr>("synpl.iterations"))
        iterations[fn.getName().str()] = n.getInt();

    auto optimize = mlir::makeOptimizingTransformer(/*optLevel=*/2,
                                                    /*sizeLevel=*/0, nullptr);
    mlir::ExecutionEngineOptions options;
    options.transformer = optimize;
    auto created = mlir::ExecutionEngine::create(*module, options);
    if (!created) {
      llvm::consumeError(created.takeError());
      return false;
    }
    engine = std::move(*created);
    bindRuntime(*engine, symbols);
    return true;
  }

  void *lookup(const std::string &name) {
    auto fn = engine->lookup(name);
    if (!fn) {
      llvm::consumeError(fn.takeError());
      return nullptr;
    }
    return *fn;
  }

  /// Calls kernel `name` over [0, iterations) in two chunks; after the
  /// first chunk, `between` runs (to check that the chunk did only its part).
  template <typename... Ptrs>
  bool runKernelWithCheck(const std::string &name,
                          const std::function<void()> &between,
                          Ptrs... ptrs) {
    void *raw = lookup(name);
    if (!raw || !iterations.count(name))
      return false;
    using Fn = void (*)(Ptrs..., int64_t, int64_t);
    auto fn = reinterpret_cast<Fn>(raw);
    int64_t n = iterations[name], half = n / 2;
    fn(ptrs..., 0, half);
    if (between)
      between();
    fn(ptrs..., half, n);
    return true;
  }
  template <typename... Ptrs>
  bool runKernel(const std::string &name, Ptrs... ptrs) {
    return runKernelWithCheck(name, std::function<void()>(), ptrs...);
  }

  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::unique_ptr<mlir::ExecutionEngine> engine;
  std::map<std::string, int64_t> iterations;

private:
  std::map<std::string, void *> symbols;
};


/// A one-CPU system, a graph `@g` of `body` over `args` returning one
/// `result`-typed value `%r`, and the stage that drops it: the programs
/// runGraphOnHost takes.
inline std::string graphText(const std::string &args, const std::string &body,
                             const std::string &result) {
  return std::string(R"mlir(
l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
)mlir") + "l1.tensor_graph @g on @cpu_0 then @sink compute(" + args + ") {\n" + body +
         "  l1.return %r : " + result + "\n}\n" +
         "l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, " + result + ">) {\n" +
         "  l1.drop %o : !l1.buf<@ram_0, " + result + ">\n  l1.end\n}\n";
}

/// Runs the L1 tensor graph of `text` (a module with one graph whose one
/// result is f32) on `inputs`: interpreted by the reference into `*want`,
/// then lowered by --synpl-l1-to-l0 and the host lowering, its kernels
/// JIT-run in stream order on the same inputs (every slot host memory of
/// its element type: f32 slots NaN before they are written, integer slots
/// 0xA5 bytes). Returns the kernels' result.
inline std::vector<float> runGraphOnHost(mlir::MLIRContext &ctx, const std::string &text,
                                         const std::vector<ref::Tensor> &inputs,
                                         ref::Tensor *want) {
  using namespace mlir;
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &ctx);
  REQUIRE(module);
  REQUIRE(succeeded(verify(*module)));
  ref::StateEnv state;
  auto graph = *module->getOps<l1::TensorGraphOp>().begin();
  auto outs = ref::interpretTensorGraph(graph, inputs, state);
  REQUIRE(succeeded(outs));
  REQUIRE(outs->size() == 1);
  *want = outs->front();

  PassManager pm(&ctx);
  pm.addPass(createL1ToL0());
  REQUIRE(succeeded(pm.run(*module)));
  auto plan = *module->getOps<l0uop::PlanOp>().begin();
  std::string planName = plan.getSymName().str();
  struct Memory {
    std::unique_ptr<Buffer<uint8_t>> bytes;
    Type element;
    size_t elementBytes;
  };
  std::map<std::string, Memory> memory;
  for (auto slot : plan.getBody().front().getOps<l0uop::SlotOp>()) {
    auto type = slot.getBufType();
    Type e = type.getElementType();
    size_t eb = std::max<size_t>(1, e.getIntOrFloatBitWidth() / 8);
    size_t n = type.getNumElements();
    Memory m{std::make_unique<Buffer<uint8_t>>(n * eb, uint8_t(0xA5)), e, eb};
    if (e.isF32())
      for (size_t i = 0; i < n; ++i)
        reinterpret_cast<float *>(m.bytes->data)[i] = NAN;
    memory[slot.getSymName().str()] = std::move(m);
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    Memory &m = memory.at("g.in" + std::to_string(i));
    REQUIRE(m.bytes->n == inputs[i].data().size() * m.elementBytes);
    for (size_t e = 0; e < inputs[i].data().size(); ++e) {
      double v = inputs[i].data()[e];
      uint8_t *at = m.bytes->data + e * m.elementBytes;
      if (m.element.isF32()) {
        float f = float(v);
        std::memcpy(at, &f, 4);
      } else {
        REQUIRE(m.element.isInteger());
        int64_t x = int64_t(v); // little-endian: the low bytes
        std::memcpy(at, &x, m.elementBytes);
      }
    }
  }
  std::map<std::string, std::vector<void *>> argsOf;
  for (auto kernel : plan.getBody().front().getOps<l0uop::KernelOp>()) {
    std::vector<void *> args;
    for (Attribute a : llvm::concat<const Attribute>(kernel.getInputs(), kernel.getOutputs()))
      args.push_back(memory.at(cast<FlatSymbolRefAttr>(a).getValue().str()).bytes->data);
    argsOf[kernel.getSymName().str()] = args;
  }
  std::vector<std::string> order;
  for (auto stream : plan.getBody().front().getOps<l0uop::StreamOp>())
    for (Attribute e : stream.getEntries())
      if (argsOf.count(cast<FlatSymbolRefAttr>(e).getValue().str()))
        order.push_back(cast<FlatSymbolRefAttr>(e).getValue().str());
  REQUIRE(!order.empty());

  // The control programs' queue primitives (never called by kernels).
  static uint64_t ignored = 0;
  std::map<std::string, void *> stubs = {
      {"synpl_rt_ctl_queue_push", reinterpret_cast<void *>(+[](void *, uint64_t v) {
         ignored = v;
       })},
      {"synpl_rt_ctl_queue_pop", reinterpret_cast<void *>(+[](void *) { return ignored; })}};
  Jit jit(std::move(module));
  REQUIRE(jit.compile(stubs));
  for (const std::string &kernel : order) {
    std::vector<void *> &args = argsOf[kernel];
    std::string name = planName + "_" + kernel;
    INFO("kernel " << name);
    bool ran = false;
    switch (args.size()) {
    case 2:
      ran = jit.runKernel(name, args[0], args[1]);
      break;
    case 3:
      ran = jit.runKernel(name, args[0], args[1], args[2]);
      break;
    case 4:
      ran = jit.runKernel(name, args[0], args[1], args[2], args[3]);
      break;
    case 5:
      ran = jit.runKernel(name, args[0], args[1], args[2], args[3], args[4]);
      break;
    default:
      FAIL("a kernel of " << args.size() << " buffers");
    }
    REQUIRE(ran);
  }
  const Memory &out = memory.at("g.out0");
  REQUIRE(out.element.isF32());
  const float *f = reinterpret_cast<const float *>(out.bytes->data);
  return std::vector<float>(f, f + out.bytes->n / 4);
}

/// Interprets graph `text` on `inputs`, then runs its host kernels on the
/// same inputs (runGraphOnHost); the output must be the reference's bit for
/// bit (for programs whose f32 results are exact in any order: integer
/// arithmetic, small integers).
inline void checkBitExact(mlir::MLIRContext &ctx, const std::string &text,
                          const std::vector<ref::Tensor> &inputs) {
  INFO(text);
  ref::Tensor want;
  std::vector<float> got = runGraphOnHost(ctx, text, inputs, &want);
  REQUIRE(got.size() == want.data().size());
  size_t bad = 0, first = 0;
  for (size_t e = 0; e < got.size(); ++e) {
    float w = float(want.data()[e]);
    if (std::memcmp(&got[e], &w, sizeof w) != 0 && bad++ == 0)
      first = e;
  }
  INFO("first difference at " << first << ": got " << got[first] << ", want "
                              << want.data()[first]);
  CHECK(bad == 0);
}

} // namespace synpl::test

#endif // SYNPL_TEST_UNIT_HOSTJIT_H
