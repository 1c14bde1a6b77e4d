//===- Passes.td - synplexum IR->IR passes within a layer --*- tablegen -*-===//
#ifndef SYNPL_TRANSFORMS_PASSES_TD
#define SYNPL_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def L0PackMemory : Pass<"synpl-l0-pack-memory", "mlir::ModuleOp"> {
  let summary = "Re-pack the static slots of every L0 plan to minimise each pool's peak";
  let description = [{
    The L0 rewrite "memory packing (minimize peak by reordering lifetimes)".
    For every `persistent` and `arena` pool of every `l0uop.plan`, assigns
    the `offset` of its slots with the offline packer of
    `synpl/Analysis/MemoryPacking.h`: greedy by size with best-fit gaps
    (TFLite's arena planner), a few orderings tried, the lowest peak kept,
    then a short local search over the order with a fixed seed.
    Slots whose lifetimes are disjoint may share bytes; slots live at a
    common tick never do (row L0.2). Offsets stay multiples of the pool's
    alignment. `freelist` pools are placed at run time and left alone;
    their remark gives the peak rows L0.5 and L0.6 hold them to (live slots
    rounded up to the alignment, per step and times `pipeline_depth`).

    When the plan's existing layout is valid (rows L0.2 and L0.5) and its
    peak is no higher than the packer's, it is kept: the pass never makes a
    pool worse and moves slots only to lower the peak.
    The result depends only on sizes, lifetimes and alignment, so running
    the pass on its own output changes nothing.

    Emits a remark per pool with its peak (max offset + size), the lower
    bound (the most bytes live at one tick, counting the alignment padding
    of all but the topmost live slot: no layout does better) and the peak
    before packing. If the packed peak exceeds the pool's capacity and
    the existing layout is not a valid one that fits, fails with a
    `[resource] L0.5` error at the pool.

    With `shrink-pools=true`, each packed pool's capacity is lowered to its
    peak rounded up to the pool's alignment (never raised).

    ```
    synpl-opt examples/mnist/mnist.l0.mlir --synpl-l0-pack-memory
    synpl-opt plan.mlir --synpl-l0-pack-memory=shrink-pools=true
    ```
  }];
  let options = [
    Option<"shrinkPools", "shrink-pools", "bool", /*default=*/"false",
           "Lower each packed pool's capacity to its peak, rounded up to its alignment">
  ];
  let dependentDialects = ["synpl::l0uop::L0UOpDialect"];
}

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
