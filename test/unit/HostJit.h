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

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
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
    if (!symbols.empty())
      engine->registerSymbols([this](llvm::orc::MangleAndInterner interner) {
        llvm::orc::SymbolMap map;
        for (auto &[name, address] : symbols)
          map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                 llvm::JITSymbolFlags::Exported};
        return map;
      });
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


/// Runs the L1 tensor graph of `text` (a module with one graph whose one
/// result is f32) on `inputs`: interpreted by the reference into `*want`,
/// then lowered by --synpl-l1-to-l0 and the host lowering, its kernels
/// JIT-run in stream order on the same inputs (every slot f32 host memory,
/// NaN before it is written). Returns the kernels' result.
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
  std::map<std::string, std::unique_ptr<Buffer<float>>> memory;
  for (auto slot : plan.getBody().front().getOps<l0uop::SlotOp>())
    memory[slot.getSymName().str()] =
        std::make_unique<Buffer<float>>(slot.getBufType().getNumElements(), NAN);
  for (size_t i = 0; i < inputs.size(); ++i) {
    Buffer<float> &b = *memory.at("g.in" + std::to_string(i));
    REQUIRE(b.n == inputs[i].data().size());
    for (size_t e = 0; e < b.n; ++e)
      b[e] = float(inputs[i].data()[e]);
  }
  std::map<std::string, std::vector<float *>> argsOf;
  for (auto kernel : plan.getBody().front().getOps<l0uop::KernelOp>()) {
    std::vector<float *> args;
    for (Attribute a : llvm::concat<const Attribute>(kernel.getInputs(), kernel.getOutputs()))
      args.push_back(memory.at(cast<FlatSymbolRefAttr>(a).getValue().str())->data);
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
    std::vector<float *> &args = argsOf[kernel];
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
  const Buffer<float> &out = *memory.at("g.out0");
  return std::vector<float>(out.data, out.data + out.n);
}

} // namespace synpl::test

#endif // SYNPL_TEST_UNIT_HOSTJIT_H
