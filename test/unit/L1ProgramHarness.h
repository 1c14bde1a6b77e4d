//===- L1ProgramHarness.h - An L1 program parsed for a test -----*- C++ -*-===//
//
// What the tests of L1 rewrites share: the program parsed in a context
// with every dialect (diagnostics collected, for INFO), its first tensor
// graph, random f32 inputs for it (values exact in f32, so that the
// reference interpreter's doubles and the kernels' floats start equal), and
// the check of its lowered plan's kernels against the reference's outputs.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TEST_UNIT_L1PROGRAMHARNESS_H
#define SYNPL_TEST_UNIT_L1PROGRAMHARNESS_H

#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/InitAll.h"
#include "synpl/Reference/L1Interpreter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "UOpEvaluator.h"

#include <catch2/catch.hpp>

#include <memory>
#include <random>
#include <string>

namespace synpl::test {

struct L1Program {
  mlir::MLIRContext ctx;
  std::string errors;
  std::unique_ptr<mlir::ScopedDiagnosticHandler> handler;
  mlir::OwningOpRef<mlir::ModuleOp> module;

  explicit L1Program(const char *text) : ctx(registry()) {
    ctx.loadAllAvailableDialects();
    handler = std::make_unique<mlir::ScopedDiagnosticHandler>(
        &ctx, [this](mlir::Diagnostic &d) {
          errors += d.str() + "\n";
          return mlir::success();
        });
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &ctx);
  }

  l1::TensorGraphOp graph() { return *module->getOps<l1::TensorGraphOp>().begin(); }

private:
  static mlir::DialectRegistry registry() {
    mlir::DialectRegistry registry;
    synpl::registerAllDialects(registry);
    synpl::registerUpstreamDialects(registry);
    return registry;
  }
};

/// One f32 tensor per argument of `graph`, uniform in [-1, 1).
inline llvm::SmallVector<ref::Tensor> randomInputs(l1::TensorGraphOp graph,
                                                   unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  llvm::SmallVector<ref::Tensor> inputs;
  for (mlir::BlockArgument arg : graph.getEntry().getArguments()) {
    auto type = mlir::cast<mlir::RankedTensorType>(arg.getType());
    ref::Tensor t(ref::ElementType::f32(), llvm::SmallVector<int64_t>(type.getShape()));
    for (double &v : t.data())
      v = double(float(dist(rng)));
    inputs.push_back(std::move(t));
  }
  return inputs;
}

/// Runs the kernels of `plan`'s first stream on the UOp evaluator, graph
/// `graph`'s inputs in its slots `<graph>.in<i>`, and checks that no load
/// or store left its buffer and that each slot `<graph>.out<i>` holds
/// `expected[i]` (within `rtol`, `atol`).
inline void checkFirstStream(l0uop::PlanOp plan, llvm::StringRef graph,
                             llvm::ArrayRef<ref::Tensor> inputs,
                             llvm::ArrayRef<ref::Tensor> expected, double rtol,
                             double atol) {
  UOpEvaluator eval;
  eval.allocate(plan);
  for (size_t i = 0; i < inputs.size(); ++i)
    eval.memory[(graph + ".in" + llvm::Twine(i)).str()] = inputs[i].data();
  for (l0uop::KernelOp kernel : UOpEvaluator::firstStreamKernels(plan))
    eval.run(kernel);
  CHECK(eval.outOfBounds == 0);
  for (size_t i = 0; i < expected.size(); ++i) {
    std::string slot = (graph + ".out" + llvm::Twine(i)).str();
    const ref::Tensor &want = expected[i];
    ref::Tensor actual(want.getElementType(), want.getShape(), eval.memory[slot]);
    ref::Comparison c = ref::compare(actual, want, rtol, atol);
    INFO(slot << ": " << c.message);
    CHECK(c.ok);
  }
}

} // namespace synpl::test

#endif // SYNPL_TEST_UNIT_L1PROGRAMHARNESS_H
