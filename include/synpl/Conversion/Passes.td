//===- Passes.td - synplexum lowerings between layers ------*- tablegen -*-===//
//
// One pass per lowering boundary (lib/Conversion/<A>To<B>/). A lowering
// converts everything or fails with
//   lowered N of M ops; not lowered: <op> at <loc>: <why>
// never leaving a partial program.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_CONVERSION_PASSES_TD
#define SYNPL_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// L1ToL0
//===----------------------------------------------------------------------===//

def L1ToL0 : Pass<"synpl-l1-to-l0", "mlir::ModuleOp"> {
  let summary = "emit the L0 plan of a verified L1 program";
  let description = [{
    Lowers a verified l1 program (system, actors, stages, tensor graphs,
    pipelines, schedule) into one `l0uop.plan`, in the spec's three passes:

    * **Kernel scheduling & fusion.** The ops of each tensor graph and actor
      handler are grouped into kernels. Elementwise ops over the same
      iteration space fuse (intermediates stay in registers); a matmul or
      reduction opens a new kernel and reads its operands from memory, so
      a reduction is a kernel boundary, and its elementwise consumers fuse
      after it as the epilogue; ops of different iteration spaces never
      fuse. Broadcast, transpose and reshape are index arithmetic inside the
      consumer (a reshaped buffer is stored flat). A single-use elementwise
      op over memory is computed inside its consumer (e.g. |w| inside the
      loop of sum |w|). A whole-tensor reduction folds one axis per kernel,
      in parallel over the rest. A value stored where no kernel computes it
      (a returned view or input) gets a copy kernel. Each kernel's body is
      emitted as UOps.
    * **Memory planning.** A persistent pool per node for actor state, an
      arena per tensor graph and handler for intermediates that leave
      registers, an `io` arena per device for buffers that cross stage
      boundaries, and a freelist pool per host memory node for staging
      buffers; offsets are bump-allocated (no reuse; a later packing pass
      overlaps dead slots), lifetimes are launch ticks of one step.
    * **Stream inference.** pipeline_depth N gives N streams that each run
      one step's launches in order; an event recorded after the last launch
      of step k's stream is waited before the first launch of step k+1's
      (the actor is the fence between steps).

    Init ops follow the actor state's initializers. Control (path A) is one
    `l0ctl.program @step_dispatch` that pops each step's batch descriptor,
    counts the step, and pushes a launch descriptor naming the step's stream
    (the conventions of examples/mnist/mnist.l0.mlir). A program with an op
    the pass cannot lower fails with
    `lowered N of M ops; not lowered: <op> at <loc>: <why>`.
  }];
  let dependentDialects = ["::synpl::l0uop::L0UOpDialect",
                           "::synpl::l0ctl::L0CtlDialect"];
  let options = [
    Option<"summary", "summary", "bool", /*default=*/"false",
           "remark, at the plan, its kernel count and pool capacities">
  ];
}

//===----------------------------------------------------------------------===//
// L0ToLLVM
//===----------------------------------------------------------------------===//

#endif // SYNPL_CONVERSION_PASSES_TD
