//===- HostJit.h - JIT-run host-lowered L0 in unit tests ---------*- C++ -*-===//
//
// Lowers a module's l0uop kernels and l0ctl programs with
// --synpl-convert-l0uop-to-llvm and --synpl-convert-l0ctl-to-llvm and
// JIT-compiles the result with mlir::ExecutionEngine (O2). A kernel runs as
// the host runtime runs it: its range [0, iterations) in two chunks, one
// call each. Shared by the tests that check host code against C++ or the
// reference interpreter.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TEST_UNIT_HOSTJIT_H
#define SYNPL_TEST_UNIT_HOSTJIT_H

#include "synpl/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>

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

} // namespace synpl::test

#endif // SYNPL_TEST_UNIT_HOSTJIT_H
