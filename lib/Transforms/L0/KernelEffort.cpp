//===- KernelEffort.cpp - Each host kernel's optimization effort ----------===//
//
// Code generation time goes where run time goes: the kernels that take
// nearly all of a step (the matmuls, the optimizer update) are optimized at
// the full level, the long tail of small reductions and elementwise kernels
// at a lighter one. The share of each kernel is estimated statically from
// its work (l0uop's computeKernelWork) on a roofline with one balance point.
//
//===----------------------------------------------------------------------===//
#include "synpl/Transforms/Passes.h"

#include "synpl/Dialect/L0UOp/L0UOpOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>

namespace synpl {
#define GEN_PASS_DEF_L0KERNELEFFORT
#include "synpl/Transforms/Passes.h.inc"
} // namespace synpl

using namespace mlir;
using namespace synpl;

namespace {
struct L0KernelEffortPass : public synpl::impl::L0KernelEffortBase<L0KernelEffortPass> {
  using Base::Base;

  void runOnOperation() override {
    if (hotLevel > 3 || lightLevel > 3) {
      getOperation().emitError("synpl-l0-kernel-effort: levels are 0 to 3, got hot-level=")
          << hotLevel.getValue() << " light-level=" << lightLevel.getValue();
      return signalPassFailure();
    }
    if (!(hotShare >= 0.0 && hotShare <= 1.0) || !(balance > 0.0)) {
      getOperation().emitError("synpl-l0-kernel-effort: hot-share is 0 to 1 and balance "
                               "positive, got hot-share=")
          << hotShare.getValue() << " balance=" << balance.getValue();
      return signalPassFailure();
    }
    Builder b(&getContext());
    getOperation().walk([&](l0uop::PlanOp plan) {
      SymbolTable symbols(plan);
      struct Candidate {
        l0uop::KernelOp kernel;
        double cost;
      };
      SmallVector<Candidate> candidates;
      double total = 0;
      for (l0uop::KernelOp kernel : plan.getOps<l0uop::KernelOp>()) {
        if (kernel.getOptLevel() || kernel->hasAttr("custom_kernel") ||
            kernel.getBody().front().empty() || kernel.isDeviceKernel(symbols))
          continue;
        l0uop::KernelWork work = l0uop::computeKernelWork(kernel);
        double cost = std::max(work.flops, balance * work.bytesTouched);
        candidates.push_back({kernel, cost});
        total += cost;
      }
      llvm::stable_sort(candidates,
                        [](const Candidate &a, const Candidate &b) { return a.cost > b.cost; });
      // Hot until the kernels before cover hot-share of the estimate.
      double covered = 0;
      for (Candidate &c : candidates) {
        bool hot = hotShare >= 1.0 || total <= 0 || covered < hotShare * total;
        covered += c.cost;
        c.kernel.setOptLevelAttr(b.getI32IntegerAttr(hot ? hotLevel : lightLevel));
        ++(hot ? numHot : numLight);
      }
    });
  }
};
} // namespace
