//===- L1StageOps.td - The l1 dialect's stages and their ops -*- tablegen -*-===//
//
// Included by L1Ops.td (in its place among the ops): a stage and the ops
// its body may hold.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_DIALECT_L1_STAGEOPS_TD
#define SYNPL_DIALECT_L1_STAGEOPS_TD
//===----------------------------------------------------------------------===//
// Stages
//===----------------------------------------------------------------------===//

def L1_StageOp : L1_Op<"stage", [Symbol, IsolatedFromAbove,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a stateless dataflow processor over buffers (a CFG region)";
  let description = [{
    ```mlir
    l1.stage @transfer_to_gpu on @cpu_0
        process(%x: !l1.buf<@ram_0, tensor<128x28x28xui8>>) {
      %g = l1.transfer %x : !l1.buf<@ram_0, tensor<128x28x28xui8>>
                         -> !l1.buf<@gpu_0, tensor<128x28x28xui8>>
      l1.forward @forward_backward(%g) : !l1.buf<@gpu_0, tensor<128x28x28xui8>>
    }
    ```
    The entry block's arguments (`process(...)`) are the buffers the stage
    receives: its entry signature, checked at every forward to it. The body
    is a CFG (`cf.br`, `cf.cond_br`) of stage operations; paths end in
    `l1.forward` or `l1.end`. `reads [...]` names windows the stage may read.

    L1.7 (buffer conservation): every path through the CFG (walked one by
    one) consumes every buffer it receives or creates exactly once; a path
    that ends with a live buffer, or consumes one twice, is rejected naming
    the path (`^bb0 -> ^bb2`) and the buffer. Branching hands buffers on to
    the successor's arguments. L1.10: a stage CFG has no cycle (a loop is
    unbounded execution), and the forward graph among stages and tensor
    graphs has no cycle.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, FlatSymbolRefAttr:$node,
                       DefaultValuedAttr<L1_SymbolRefArrayAttr, "{}">:$reads);
  let regions = (region AnyRegion:$body);
  let hasCustomAssemblyFormat = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Block &getEntry() { return getBody().front(); }
  }];
}

def L1_ReadBatchOp : L1_Op<"read_batch", [HasParent<"StageOp">,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "read the next batch of samples of a data source";
  let description = [{
    `%x, %y = l1.read_batch @mnist [@images, @labels] batch 128 shuffle drop_last : ...`
    reads one batch of the listed fields, with the same samples for every
    field, into fresh buffers: result i has type
    `!l1.buf<@mem, tensor<batch x field_shape x elt>>`. `shuffle` visits the
    samples in a fresh permutation per epoch (`seed` fixes the first),
    `sequential` in file order. With `drop_last`, a partial final batch is
    skipped; without it, that batch is padded with zero rows
    (`l1.batch_full` tells). L1.1: `@mem` holds buffers and is reachable
    from each field's storage node.
  }];
  let arguments = (ins FlatSymbolRefAttr:$source,
                       FlatSymbolRefArrayAttr:$fields,
                       ConfinedAttr<I64Attr, [IntPositive]>:$batch,
                       L1_BatchOrder:$order,
                       UnitAttr:$drop_last,
                       OptionalAttr<I64Attr>:$seed);
  let results = (outs Variadic<L1_BufType>:$results);
  let assemblyFormat = [{
    $source $fields `batch` $batch $order (`drop_last` $drop_last^)?
    (`seed` $seed^)? attr-dict `:` qualified(type($results))
  }];
}

def L1_WindowCopyOp : L1_Op<"window_copy", [HasParent<"StageOp">,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "copy an actor state field, through a window, into a fresh buffer";
  let description = [{
    `%s = l1.window_copy @model_state::@weights[@step] : !l1.buf<@gpu_0, tensor<f32>>`
    is how a stage reads actor state (e.g. to snapshot parameters or to
    read the step counter): the copy is a new buffer on the actor's node,
    consumed like any other (L1.7). L1.2: the stage lists the window in its
    `reads`, the window exists and contains the field; L1.5: the tensor is
    the field's type; L1.6: the buffer lives on the actor's node. The stage
    is a reader of the window, so L1.4 orders it against the writers.
  }];
  let arguments = (ins SymbolRefAttr:$window, FlatSymbolRefAttr:$field);
  let results = (outs L1_BufType:$result);
  let assemblyFormat =
      "$window `[` $field `]` attr-dict `:` qualified(type($result))";
}

def L1_TransferOp : L1_Op<"transfer", [HasParent<"StageOp">]> {
  let summary = "move a buffer to another node (consumes the source)";
  let description = [{
    `%g = l1.transfer %x : !l1.buf<@ram_0, T> -> !l1.buf<@gpu_0, T>` copies
    the tensor to the memory of another node and frees the source; the
    result has the new provenance. L1.1: a directed path of edges leads
    from the source node to the destination node; L1.5: the tensor type is
    kept.
  }];
  let arguments = (ins L1_BufType:$source);
  let results = (outs L1_BufType:$result);
  let assemblyFormat = "$source attr-dict `:` qualified(type($source)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def L1_AllReduceOp : L1_Op<"all_reduce", [HasParent<"StageOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "combine a bucket of buffers across the replicas (consumes them)";
  let description = [{
    ```mlir
    %gw, %gb = l1.all_reduce sum %w, %b
        : !l1.buf<@ram_0, tensor<784x256xf32>>, !l1.buf<@ram_0, tensor<256xf32>>
        -> !l1.buf<@ram_0, tensor<784x256xf32>>, !l1.buf<@ram_0, tensor<256xf32>>
    ```
    Data parallelism: the schedule's `replicas` each run the program on
    their own slice of the batch; an all-reduce makes every replica's
    buffers the replicas' sum, mean, max or min (the gradients' sum where
    each replica's loss seed carries 1 / replicas, or their mean, so that
    the update is the one of the whole batch). The buffers travel
    together (a bucket); each result has its operand's type and provenance.
    L1.2: the program's schedule lists at least two replicas. L1.5: every
    buffer holds floats or integers of 32 or 64 bits (a mean: floats).
  }];
  let arguments = (ins L1_ReduceKind:$reduce, Variadic<L1_BufType>:$buffers);
  let results = (outs Variadic<L1_BufType>:$results);
  let assemblyFormat = [{
    $reduce $buffers attr-dict `:` qualified(type($buffers)) `->` qualified(type($results))
  }];
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "ReduceKind":$reduce, "::mlir::ValueRange":$buffers), [{
      build($_builder, $_state, buffers.getTypes(), reduce, buffers);
    }]>];
}

def L1_ReduceScatterOp : L1_Op<"reduce_scatter", [HasParent<"StageOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "combine a buffer across the replicas, each keeping one block";
  let description = [{
    ```mlir
    %gw_r = l1.reduce_scatter sum %gw
        : !l1.buf<@ram_0, tensor<784x256xf32>> -> !l1.buf<@ram_0, tensor<392x256xf32>>
    ```
    Update sharding (ZeRO stage 1): the replicas' buffers are combined as
    `l1.all_reduce` combines them, but replica `r` keeps only block `r` of
    the combined tensor along its first axis (rows `[r n, (r + 1) n)`, `n`
    the result's first dimension), the gradient of the block of a
    parameter it updates: its handler updates that block (state fields
    with `shard 0` hold the block's optimizer state) and gathers the
    replicas' blocks back into the whole parameter (`l1.all_gather`). The
    operand is consumed. Like an all-reduce it starts where its operand is
    ready and completes before its result's first reader, overlapping the
    rest of the backward pass. L1.2: the program's schedule lists at least
    two replicas. L1.5: the result is the operand with the first axis
    divided by the replica count, on the same node; floats or integers of
    32 or 64 bits (a mean: floats).
  }];
  let arguments = (ins L1_ReduceKind:$reduce, L1_BufType:$buffer);
  let results = (outs L1_BufType:$result);
  let assemblyFormat = [{
    $reduce $buffer attr-dict `:` qualified(type($buffer)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def L1_BatchFullOp : L1_Op<"batch_full", [HasParent<"StageOp">]> {
  let summary = "whether every row of a batch holds a sample";
  let description = [{
    False only for the zero-padded last batch of an epoch of a
    `read_batch` without `drop_last`. Does not consume the buffer.
  }];
  let arguments = (ins L1_BufType:$batch);
  let results = (outs I1:$result);
  let assemblyFormat = "$batch attr-dict `:` qualified(type($batch))";
}

def L1_ReportOp : L1_Op<"report", [HasParent<"StageOp">]> {
  let summary = "report a metric to the user (does not consume the buffer)";
  let description = [{
    `l1.report "loss", %loss : !l1.buf<@gpu_0, tensor<f32>>` prints the
    value with the step number as the program trains.
  }];
  let arguments = (ins StrAttr:$metric, L1_BufType:$value);
  let assemblyFormat = "$metric `,` $value attr-dict `:` qualified(type($value))";
}

def L1_DropOp : L1_Op<"drop", [HasParent<"StageOp">]> {
  let summary = "free a buffer (consumes it)";
  let description = [{
    `l1.drop %x : !l1.buf<@ram_0, tensor<...>>` returns the buffer to its
    pool; the spec's `Drop(<buf>)`. The buffer is dead afterwards (L1.7).
  }];
  let arguments = (ins L1_BufType:$buffer);
  let assemblyFormat = "$buffer attr-dict `:` qualified(type($buffer))";
}

def L1_SendOp : L1_Op<"send", [HasParent<"StageOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "send a message to an actor handler (consumes the buffers)";
  let description = [{
    `l1.send @model_state::@GradUpdate(%gw, %gb) : !l1.buf<@gpu_0, ...>, ...`.
    L1.2: the handler exists; L1.3: arity and tensor types match the
    handler's arguments; L1.6: the buffers live on the actor's node; L1.1: a
    path of edges leads from the stage's node to the actor's node.
  }];
  let arguments = (ins SymbolRefAttr:$target, Variadic<L1_BufType>:$args);
  let assemblyFormat =
      "$target `(` $args `)` attr-dict (`:` qualified(type($args))^)?";
}

def L1_ForwardOp : L1_Op<"forward", [HasParent<"StageOp">, Terminator,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "end a stage path by forwarding buffers to the next stage or graph";
  let description = [{
    `l1.forward @forward_backward(%x, %y) : !l1.buf<@gpu_0, ...>, ...`
    consumes the buffers. L1.2: the target is a stage or tensor graph;
    L1.3: arity and tensor types match its entry signature; L1.6: each
    buffer's node is the one the target expects (a tensor graph's
    placement, or the node in the target stage's argument type); L1.1: a
    path of edges leads from this stage's node to the target's node.
  }];
  let arguments = (ins FlatSymbolRefAttr:$target, Variadic<L1_BufType>:$args);
  let assemblyFormat =
      "$target `(` $args `)` attr-dict (`:` qualified(type($args))^)?";
}

def L1_EndOp : L1_Op<"end", [HasParent<"StageOp">, Terminator]> {
  let summary = "end a stage path without forwarding";
  let description = [{
    `l1.end` ends a path that forwards nothing (after dropping or sending
    what it holds); every buffer must be consumed by then (L1.7).
  }];
  let assemblyFormat = "attr-dict";
}

#endif // SYNPL_DIALECT_L1_STAGEOPS_TD
