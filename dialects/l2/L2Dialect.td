//===- L2Dialect.td - The l2 dialect ------------------------*- tablegen -*-===//
#ifndef SYNPL_DIALECT_L2_DIALECT_TD
#define SYNPL_DIALECT_L2_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def L2_Dialect : Dialect {
  let name = "l2";
  let cppNamespace = "::synpl::l2";
  let summary = "L2 Method: how to train (sampling, infer DAG, backward, update chain)";
  let description = [{
    The `l2` dialect states *how* an `l3.model` is trained: how examples are
    sampled, the architecture (an infer DAG of layer ops), how gradients (or
    gradient substitutes) are obtained, and the chain of update rules. There is
    no hardware, memory or scheduling at this layer.

    One `l2.methods` op holds the whole method for one model:

    ```mlir
    l2.methods @mnist_method for @classify
        sample epoch_shuffle<batch = 128>
        infer(%x: tensor<128x28x28xf32>) {
          %0 = l2.flatten %x : tensor<128x28x28xf32>
          %1 = l2.linear(784, 256) %0 : tensor<128x784xf32>
          ...
          l2.yield %7 : tensor<128x10xf32>
        }
        backward autodiff<mode = reverse>
        update schedule<warmup = 1000, decay = cosine, inner = adam<lr = 3.0e-4>>
    ```

    Sample, backward and update methods are attributes (they are values: a
    nested method is a nested attribute), written without their `#l2.`
    prefix where a method is expected (`inner = adam<lr = 3.0e-4>` is
    `#l2.adam<lr = 3.0e-4>`). The infer method is a graph region
    whose SSA def-use edges are the DAG; layer ops infer their result shapes.

    Verification rows (docs/spec-map.md), each diagnostic
    tagged with its property kind:

    | row  | kind        | checked by |
    |------|-------------|------------|
    | L2.1 | consistency | every layer op's shape rule (`inferReturnTypes`) and region-op verifiers |
    | L2.2 | consistency | `l2.methods` against its `l3.model`: depth, width, param_budget, causal, output domain, the model's `l2::` escape hatches |
    | L2.3 | consistency | `l2.methods`: backward method vs infer DAG (non-differentiable ops, dfa structure, checkpoints) |
    | L2.4 | consistency | `l2.methods`: update chain vs parameter shapes (muon, per-parameter overrides) |
    | L2.5 | consistency | `l2.methods`: sample method vs infer inputs vs the data field of the model's `in` |
    | L2.6 | resource    | `l2.recurrent` (until without a bound) and every graph region (cycles) |
    | L2.7 | resource    | `l2.methods`: FLOP/memory estimate (`estimateResources`) vs `latency_budget` |

    Because infer regions are graph regions, a cycle *can* be written; row
    L2.6 rejects it and names the ops along it. Loops are written as
    `l2.recurrent` with a constant trip count (or `until` with `max_steps`).

    The analyses behind the rows are a C++ API for the L3→L2 and L2→L1
    searches (`synpl/Dialect/L2/L2Model.h`): `collectParams` (every parameter
    by name and shape), `composedDepth`, `findCycle`, and `estimateResources`,
    which returns parameters, FLOPs per forward pass and per training step
    (backward method and update chain included) and parameter, optimizer
    state, gradient and activation bytes. Its per-op FLOP counts are one
    table in L2Model.cpp; its one hardware number, `kReferenceFlopsPerSecond`
    (10 TFLOP/s), turns FLOPs into the forward time checked against
    `latency_budget`.

    A `for` symbol that does not name an `l3.model` is a reference-resolution
    error reported as `[safety] L3.1` (the L3 row for dangling references):
    the method refers into the L3 program, and L2 has no safety row of its own.
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class L2_Op<string mnemonic, list<Trait> traits = []>
    : Op<L2_Dialect, mnemonic, traits>;

#endif // SYNPL_DIALECT_L2_DIALECT_TD
