//===- KernelWork.cpp - Report the work of every L0 kernel ------------------===//
//
// The count is l0uop's computeKernelWork; this pass only makes it visible
// (to users, and to bench/roofline.py, which places each kernel's measured
// time on the machine's roofline).
//
//===----------------------------------------------------------------------===//
#include "synpl/Transforms/Passes.h"

#include "synpl/Dialect/L0UOp/L0UOpOps.h"

#include "llvm/Support/FormatVariadic.h"

namespace synpl {
#define GEN_PASS_DEF_L0KERNELWORK
#include "synpl/Transforms/Passes.h.inc"
} // namespace synpl

using namespace mlir;
using namespace synpl;

namespace {
struct L0KernelWorkPass : public synpl::impl::L0KernelWorkBase<L0KernelWorkPass> {
  void runOnOperation() override {
    getOperation().walk([&](l0uop::KernelOp kernel) {
      if (kernel.getBody().front().empty() && !kernel->hasAttr("custom_kernel"))
        return; // lowered already: its UOps are gone
      l0uop::KernelWork work = l0uop::computeKernelWork(kernel);
      double intensity = work.bytesTouched > 0 ? work.flops / work.bytesTouched : 0.0;
      kernel.emitRemark() << "kernel @" << kernel.getSymName() << ": "
                          << llvm::formatv("{0:F0}", work.flops) << " flop, "
                          << llvm::formatv("{0:F0}", work.bytesTouched) << " B touched, "
                          << llvm::formatv("{0:F0}", work.bytesAccessed) << " B accessed, "
                          << llvm::formatv("{0:F2}", intensity) << " flop/B"
                          << (work.complete ? "" : " (partial: user code not counted)");
    });
  }
};
} // namespace
