//===- KernelEffort.cpp - Each host kernel's optimization effort ----------===//
//
// Code generation time goes where run time goes: the kernels that take
// nearly all of a step (the matmuls, the optimizer update) are optimized at
// the full level, the long tail of small reductions and elementwise kernels
// at a lighter one. The share of each kernel is estimated statically from
// its work (l0uop's computeKernelWork) on a roofline with one balance point,
// and a light kernel's from that times the light level's slowdown.
//
//===----------------------------------------------------------------------===//
#include "synpl/Transforms/Passes.h"

#include "synpl/Dialect/L0UOp/L0UOpOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

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
    if (!(hotShare >= 0.0 && hotShare <= 1.0) || !(balance > 0.0) ||
        !(lightSlowdown >= 1.0)) {
      std::string got;
      llvm::raw_string_ostream os(got);
      os << llvm::format("hot-share=%g balance=%g light-slowdown=%g", hotShare.getValue(),
                         balance.getValue(), lightSlowdown.getValue());
      getOperation().emitError("synpl-l0-kernel-effort: hot-share is 0 to 1, balance "
                               "positive and light-slowdown at least 1, got ")
          << got;
      return signalPassFailure();
    }
    Builder b(&getContext());
    getOperation().walk([&](l0uop::PlanOp plan) {
      SymbolTable symbols(plan);
      // Kernels with the same code share one compiled function, so they
      // share a level too: a group's cost is its kernels' together.
      struct Group {
        SmallVector<l0uop::KernelOp, 1> kernels;
        double cost = 0;
      };
      SmallVector<Group> groups;
      l0uop::KernelsByCode byCode;
      double total = 0;
      for (l0uop::KernelOp kernel : plan.getOps<l0uop::KernelOp>()) {
        if (kernel.getOptLevel() || kernel->hasAttr("custom_kernel") ||
            kernel.getBody().front().empty() || kernel.isDeviceKernel(symbols))
          continue;
        l0uop::KernelWork work = l0uop::computeKernelWork(kernel);
        double cost = std::max(work.flops, balance * work.bytesTouched);
        std::optional<size_t> same = byCode.findOrAdd(kernel, symbols, groups.size());
        Group &group = same ? groups[*same] : groups.emplace_back();
        group.kernels.push_back(kernel);
        group.cost += cost;
        total += cost;
      }
      llvm::stable_sort(groups, [](const Group &a, const Group &b) { return a.cost > b.cost; });
      // Light: the cheapest groups, as long as they would still take no
      // more than 1 - hot-share of the time at light-slowdown times their
      // estimate (the light level does not vectorize).
      double tail = total;
      for (Group &group : groups) {
        bool light = hotShare <= 0.0 ||
                     (hotShare < 1.0 && total > 0 &&
                      tail * lightSlowdown <= (1.0 - hotShare) * total);
        tail -= group.cost;
        for (l0uop::KernelOp kernel : group.kernels) {
          kernel.setOptLevelAttr(b.getI32IntegerAttr(light ? lightLevel : hotLevel));
          ++(light ? numLight : numHot);
        }
      }
    });
  }
};
} // namespace
