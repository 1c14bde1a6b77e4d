//===- Passes.td - synplexum IR->IR passes within a layer --*- tablegen -*-===//
#ifndef SYNPL_TRANSFORMS_PASSES_TD
#define SYNPL_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def L2ResourceReport : Pass<"synpl-l2-resource-report", "mlir::ModuleOp"> {
  let summary = "Report the L2 resource estimate of every l2.methods";
  let description = [{
    Emits, as a remark at each `l2.methods`, the estimate that row L2.7
    checks and the L1 search's cost model reads: exact parameter count,
    parameter, optimizer-state, gradient and activation bytes, forward FLOPs
    per batch, FLOPs per training step, and the forward latency at the one
    reference throughput (`synpl::l2::kReferenceFlopsPerSecond`). Read-only.

    ```
    synpl-opt examples/mnist/mnist.l2.mlir --synpl-l2-resource-report -o /dev/null
    ```
  }];
}

#endif // SYNPL_TRANSFORMS_PASSES_TD
