//===- ResourceReport.cpp - Report L2 resource estimates --------------------===//
//
// The estimate is the one the L2.7 verifier checks (synpl/Dialect/L2/L2Model.h);
// this pass only makes it visible to the user.
//
//===----------------------------------------------------------------------===//
#include "synpl/Transforms/Passes.h"

#include "synpl/Dialect/L2/L2Model.h"
#include "synpl/Dialect/L2/L2Ops.h"
#include "synpl/Support/Units.h"

#include "llvm/Support/FormatVariadic.h"

namespace synpl {
#define GEN_PASS_DEF_L2RESOURCEREPORT
#include "synpl/Transforms/Passes.h.inc"
} // namespace synpl

using namespace mlir;
using namespace synpl;

namespace {
struct L2ResourceReportPass
    : public synpl::impl::L2ResourceReportBase<L2ResourceReportPass> {
  void runOnOperation() override {
    getOperation().walk([&](l2::MethodsOp methods) {
      FailureOr<l2::ResourceEstimate> estimate = l2::estimateResources(methods);
      if (failed(estimate)) {
        methods.emitError("resource estimate failed");
        return signalPassFailure();
      }
      const l2::ResourceEstimate &e = *estimate;
      methods.emitRemark()
          << "resource estimate of @" << methods.getSymName() << ": params "
          << e.params << " (" << formatBytes(e.paramBytes) << "), optimizer state "
          << formatBytes(e.optimizerStateBytes) << ", gradients "
          << formatBytes(e.gradientBytes) << ", activations "
          << formatBytes(e.activationBytes) << ", resident "
          << formatBytes(e.totalBytes()) << "; forward " << e.forwardFlops
          << " FLOP/batch, " << e.flopsPerStep << " FLOP/step; forward latency "
          << llvm::formatv("{0:F4} ms at {1:E0} FLOP/s", e.forwardLatencyMs(),
                           l2::kReferenceFlopsPerSecond)
                 .str();
    });
    markAllAnalysesPreserved();
  }
};
} // namespace
