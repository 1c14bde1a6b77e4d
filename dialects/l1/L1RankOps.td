//===- L1RankOps.td - Tensor ops across the ranks of a run -*- tablegen -*-===//
//
// Tensor parallelism: a tensor graph that every rank of a run executes, each
// on its own block of the split parameters (l1.state ... shard), exchanges
// activations and gradients with the other ranks through these ops. Update
// sharding (data parallelism): a handler that updates the replica's block of
// a parameter gathers the replicas' blocks with them. Included by L1Ops.td.
//
//===----------------------------------------------------------------------===//

#ifndef SYNPL_DIALECT_L1_RANK_OPS_TD
#define SYNPL_DIALECT_L1_RANK_OPS_TD

// A collective: every rank of the schedule's `shards` (or, in a handler, its
// `replicas`) executes it, in the same order (so no Pure: it is neither
// hoisted, merged nor dropped).
class L1_RankOp<string mnemonic, list<Trait> traits = []>
    : L1_Op<mnemonic, !listconcat(traits,
        [ParentOneOf<["TensorGraphOp", "HandlerOp"]>, L1_TensorOpTrait,
         DeclareOpInterfaceMethods<SymbolUserOpInterface>])> {
  let hasVerifier = 1;
}

def L1_AllGatherOp : L1_RankOp<"all_gather"> {
  let summary = "concatenate the ranks' blocks of a tensor along an axis";
  let description = [{
    ```mlir
    %y = l1.all_gather %y_r axis 1 : tensor<128x128xf32> -> tensor<128x256xf32>
    ```
    The result, on every rank, is the ranks' operands concatenated in rank
    order along `axis`: rank `r`'s operand is the result's block `r` of
    that axis. The result's `axis` is the operand's times the number of
    ranks (the schedule's `shards`; in a handler of a data-parallel
    schedule, its `replicas`); every other dimension is the operand's. The
    forward pass of a column-split matmul gathers its output columns with
    it; its adjoint is `l1.block_slice` at the rank. Under update sharding
    the update handler gathers the replicas' updated blocks of a parameter
    (each from its `l1.reduce_scatter`ed gradient) into the whole.
  }];
  let arguments = (ins AnyStaticShapeTensor:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$axis);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat =
      "$input `axis` $axis attr-dict `:` type($input) `->` type($result)";
}

def L1_AllSumOp : L1_RankOp<"all_sum", [AllTypesMatch<["input", "result"]>]> {
  let summary = "the elementwise sum of a tensor over the ranks";
  let description = [{
    ```mlir
    %dx = l1.all_sum %dx_r : tensor<128x256xf32>
    ```
    Every rank gets the sum of every rank's operand: the input gradient of
    a column-split matmul (each rank's block of columns contributes a
    partial sum), or the part of a loss term each rank computes over its
    own block of the parameters.
  }];
  let arguments = (ins AnyStaticShapeTensor:$input);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def L1_BlockSliceOp : L1_TensorOp<"block_slice"> {
  let summary = "block `index` of a tensor along an axis (a dynamic slice)";
  let description = [{
    ```mlir
    %dy_r = l1.block_slice %dy[%rank] axis 1 : tensor<128x256xf32>, tensor<f32> -> tensor<128x128xf32>
    ```
    The result is block `i` of the operand along `axis`, where `i` is the
    rank-0 `index` truncated to an integer and the block is the result's
    size along that axis: `result[..., j, ...] = input[..., i * n + j,
    ...]`, `n` the result's `axis`. The operand's `axis` is a multiple of
    the result's; every other dimension is equal. An index outside the
    blocks reads block 0. Read at a rank (a state field with `init rank`),
    it takes this rank's block of a replicated tensor: the adjoint of
    `l1.all_gather`. Local: no rank communicates.
  }];
  let arguments = (ins AnyStaticShapeTensor:$input, AnyStaticShapeTensor:$index,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$axis);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $input `[` $index `]` `axis` $axis attr-dict `:` type($input) `,` type($index)
    `->` type($result)
  }];
}

#endif // SYNPL_DIALECT_L1_RANK_OPS_TD
