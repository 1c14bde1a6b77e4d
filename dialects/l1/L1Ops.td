//===- L1Ops.td - The l1 dialect's operations -------------*- tablegen -*-===//
#ifndef SYNPL_DIALECT_L1_OPS_TD
#define SYNPL_DIALECT_L1_OPS_TD

include "synpl/Dialect/L1/L1Dialect.td"
include "synpl/Dialect/L1/L1Types.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

// An array of symbol refs that can default to [].
def L1_SymbolRefArrayAttr
    : TypedArrayAttrBase<SymbolRefAttr, "symbol ref array attribute"> {
  let constBuilderCall = "$_builder.getArrayAttr($0)";
}

//===----------------------------------------------------------------------===//
// Topology
//===----------------------------------------------------------------------===//

def L1_SystemOp : L1_Op<"system", [Symbol, SymbolTable, NoTerminator,
    SingleBlock, NoRegionArguments, IsolatedFromAbove]> {
  let summary = "the hardware graph: nodes and edges";
  let description = [{
    ```mlir
    l1.system @single_gpu {
      l1.node @ssd_0 storage
      l1.node @ram_0 memory {capacity = "32GB"}
      l1.node @cpu_0 compute {isa = "x86_64", cores = 8}
      l1.node @gpu_0 compute {isa = "cuda", vram = "24GB", sm = 84}
      l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
      l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
      l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
    }
    ```
    A module holds at most one system; every node reference of the program
    (`on @gpu_0`, `!l1.buf<@ram_0, ...>`) resolves in it.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The node `name`, or null.
    NodeOp lookupNode(::llvm::StringRef name);
    /// Whether a directed path of edges leads from `from` to `to`
    /// (bidirectional edges count both ways; a node reaches itself).
    bool hasPath(::llvm::StringRef from, ::llvm::StringRef to);
  }];
}

def L1_NodeOp : L1_Op<"node", [Symbol, HasParent<"SystemOp">]> {
  let summary = "a topology node: storage, memory or compute";
  let description = [{
    `l1.node @gpu_0 compute {isa = "cuda", vram = "24GB", sm = 84}`.
    Properties are a closed set: `capacity` (byte size; required on memory
    nodes), `isa` (required on compute nodes), `vram` (byte size: the
    compute node has its own memory), `cores`, `sm` (counts), `arch` (the
    GPU architecture of an `isa = "cuda"` node, e.g. `"sm_90"`: what the
    CUDA sink emits PTX for; without it, `sm_80`, whose PTX every newer
    GPU's driver also runs). Sizes are written with units (`32GB`, `24GiB`).
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, L1_NodeKind:$kind,
                       OptionalAttr<StrAttr>:$capacity,
                       OptionalAttr<StrAttr>:$isa,
                       OptionalAttr<StrAttr>:$vram,
                       OptionalAttr<I64Attr>:$cores,
                       OptionalAttr<I64Attr>:$sm,
                       OptionalAttr<StrAttr>:$arch);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Bytes this node can hold: `capacity` or `vram`; std::nullopt if none.
    std::optional<uint64_t> getMemoryBytes();
    /// Whether buffers can live here (memory node, or compute with vram).
    bool holdsBuffers();
  }];
}

def L1_EdgeOp : L1_Op<"edge", [HasParent<"SystemOp">]> {
  let summary = "a link between two nodes with a bandwidth and a latency";
  let description = [{
    `l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"` (one way) or
    `l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"` (both ways), optionally
    with the fixed cost of one message over it:
    `l1.edge @gpu_0 <-> @gpu_1 bandwidth "450GB/s" latency "2us"`.
    The placement search's collectives pay it once per ring step. An edge
    that does not state it costs what its endpoints suggest (2 us between
    two GPUs, 20 us otherwise: MPI between processes).
    L1.1 (topology): both endpoints exist in the system, they differ, and
    they are not both storage nodes (bytes between disks pass through
    memory); the bandwidth parses as a rate and the latency as a duration
    (ns, us, ms or s).
  }];
  let arguments = (ins FlatSymbolRefAttr:$from, FlatSymbolRefAttr:$to,
                       UnitAttr:$bidirectional, StrAttr:$bandwidth,
                       OptionalAttr<StrAttr>:$latency);
  let assemblyFormat =
      "$from custom<EdgeArrow>($bidirectional) $to `bandwidth` $bandwidth "
      "(`latency` $latency^)? attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data sources
//===----------------------------------------------------------------------===//

def L1_DataOp : L1_Op<"data", [Symbol, SymbolTable, NoTerminator, SingleBlock,
    NoRegionArguments, IsolatedFromAbove]> {
  let summary = "a data source: L3 data fields bound to storage";
  let description = [{
    ```mlir
    l1.data @mnist {
      l1.field @images : tensor<28x28xui8> at @ssd_0
          path "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz" format idx
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
}

def L1_FieldOp : L1_Op<"field", [Symbol, HasParent<"DataOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "one field of a data source, at rest on a storage node";
  let description = [{
    The type is one sample as stored (`tensor<28x28xui8>` for an MNIST
    image); readers batch it. The node must be a storage node (L1.1).

    A `text` field reads the bytes of a plain-text file as a stream of
    windows: its type is `tensor<N x ui8>`, and sample `k` is the N bytes
    that start at byte `k * stride + shift` (`stride` defaults to 1,
    `shift` to 0, and is 0 or 1). Every sample index of a text file has a
    whole window of `N + 1` bytes behind it, so a field with `shift 0` (a
    model's inputs) and one with `shift 1` over the same file (the next
    byte at every position, its targets) have the same samples:

    ```mlir
    l1.field @bytes : tensor<64xui8> at @ssd_0 path "corpus.txt" format text
    l1.field @bytes_next : tensor<64xui8> at @ssd_0 path "corpus.txt" format text shift 1
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<AnyStaticShapeTensor>:$type,
                       FlatSymbolRefAttr:$node, StrAttr:$path,
                       L1_DataFormat:$format,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntNonNegative]>>:$shift,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$stride);
  let assemblyFormat = [{
    $sym_name `:` $type `at` $node `path` $path `format` $format
    (`shift` $shift^)? (`stride` $stride^)? attr-dict
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Actors
//===----------------------------------------------------------------------===//

def L1_ActorOp : L1_Op<"actor", [Symbol, SymbolTable, NoTerminator, SingleBlock,
    NoRegionArguments, IsolatedFromAbove,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "the owner of mutable state";
  let description = [{
    ```mlir
    l1.actor @model_state on @gpu_0 {
      l1.state @w : tensor<784x256xf32> init kaiming
      l1.state @b : tensor<256xf32> init zeros
      l1.window @weights [@w, @b] readers [@forward_backward]
      l1.handler @GradUpdate(%gw: tensor<784x256xf32>, %gb: tensor<256xf32>) {
        ...
        l1.state_write @w, %w1 : tensor<784x256xf32>
        l1.return
      }
    }
    ```
    An actor processes its messages one at a time; its handlers are the only
    writers of its state (`l1.state_write` exists only in handlers), windows
    the only way to read it from outside.

    L1.9 (persistent memory bounded): the state of all actors placed on a
    node, summed, fits the node's memory (`vram` or `capacity`; a compute
    node without its own memory uses the memory nodes it has edges to).
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, FlatSymbolRefAttr:$node);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name `on` $node attr-dict-with-keyword $body";
  let extraClassDeclaration = [{
    /// Bytes of all state fields (saturating).
    uint64_t getStateBytes();
  }];
}

def L1_StateOp : L1_Op<"state", [Symbol, HasParent<"ActorOp">]> {
  let summary = "one persistent state field of an actor";
  let description = [{
    `l1.state @w : tensor<784x256xf32> init kaiming`. Initializers: `zeros`,
    `ones`, `kaiming` (normal, std sqrt(2 / fan_in), fan_in = dim 0),
    `xavier` (uniform, limit sqrt(6 / (fan_in + fan_out))), and
    `planned_steps`: a rank-0 `f32` the runtime fills, before the first
    step, with the number of update steps the run will take (epochs ×
    batches per epoch, after `drop_last` and a `--steps` cap), so that a
    handler's learning-rate decay can end with the run:

    ```mlir
    l1.state @horizon : tensor<f32> init planned_steps
    ```

    `training_mode`: a rank-0 `f32` the runtime sets to 1 before training
    steps and to 0 while it evaluates, so that a tensor graph reading it
    through a window can compute what is "training only" (dropout's mask)
    and skip it in evaluation, as a framework's train/eval switch does:

    ```mlir
    l1.state @training : tensor<f32> init training_mode
    ```

    `rank`: a rank-0 `f32` holding the process's rank in a tensor-parallel
    or data-parallel run (0 alone); `l1.block_slice` reads it to take the rank's block.

    `shard A` (tensor parallelism, the schedule's `shards`): the field
    holds this rank's block along axis `A` of a tensor as many times
    larger as there are ranks, and starts with that block of the full
    tensor's initial values (kaiming's fan-in is the full tensor's), so
    that the ranks together start where one process would:

    ```mlir
    l1.state @fc1_weight : tensor<784x128xf32> init kaiming shard 1
    ```

    Under a data-parallel schedule (`replicas`), `shard 0` is update
    sharding's (ZeRO stage 1): the field holds the replica's block of the
    rows of optimizer state, the block of the parameter whose gradient its
    `l1.reduce_scatter` keeps:

    ```mlir
    l1.state @m_fc1_weight : tensor<392x256xf32> init zeros shard 0
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<AnyStaticShapeTensor>:$type,
                       L1_InitKind:$init,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntNonNegative]>>:$shard);
  let assemblyFormat =
      "$sym_name `:` $type `init` $init (`shard` $shard^)? attr-dict";
  let hasVerifier = 1;
}

def L1_WindowOp : L1_Op<"window", [Symbol, HasParent<"ActorOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "read-only access to actor state for named readers";
  let description = [{
    `l1.window @weights [@w, @b] readers [@forward_backward]` lets the
    listed stages or tensor graphs read fields `@w` and `@b` (they name the
    window in their `reads`).

    L1.2 (ref resolution): every field is a state field of this actor, every
    reader a stage or tensor graph.

    L1.4 (window separation) holds when readers and the actor's writers can
    never run at the same time. The verifier accepts a window only if the
    IR proves it:

    1. *Within a step* (data dependency): let W be the handlers of this
       actor that write a field of the window. For every reader R and every
       site that messages a handler in W (an `l1.send` in some stage S), S
       is R itself or is reachable from R along the dataflow edges
       (`l1.forward` targets and tensor-graph `then` targets). So every
       message that can fire a writer is produced by R's outputs, and R has
       finished before the writer starts. A stage that is itself the
       reader and the sender makes its window copies before the message
       on every path.
    2. *Across steps* (the actor fence): if the schedule's
       `pipeline_depth` is above 1, the actor is listed in the schedule's
       `actors`; the schedule then serializes step N's handler before step
       N+1's readers of the actor's windows. Checked on `l1.schedule`.

    A reader must also list the window in its `reads` (an undeclared read
    is L1.2 at the `l1.window_read`), and a tensor graph or stage that
    `reads` a window must be among its readers (L1.4: an unlisted reader is
    not fenced).
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       FlatSymbolRefArrayAttr:$fields,
                       FlatSymbolRefArrayAttr:$readers);
  let assemblyFormat = "$sym_name $fields `readers` $readers attr-dict";
}

def L1_HandlerOp : L1_Op<"handler", [Symbol, HasParent<"ActorOp">,
    IsolatedFromAbove, SingleBlock]> {
  let summary = "an actor's message handler: the only writer of its state";
  let description = [{
    `l1.handler @GradUpdate(%gw: tensor<...>, %gb: tensor<...>) { ... }`.
    The arguments are the message; a stage sends it with
    `l1.send @actor::@GradUpdate(...)` (buffers on the actor's node). The
    body is straight-line tensor ops with `l1.state_read` /
    `l1.state_write`, ending in `l1.return`; a read after a write of the
    same field sees the new value. L1.8 applies: every value is used.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Block &getEntry() { return getBody().front(); }
    /// Whether the handler writes state field `field`.
    bool writes(::llvm::StringRef field);
  }];
}

def L1_StateReadOp : L1_Op<"state_read", [HasParent<"HandlerOp">,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "read a state field of the enclosing actor in a handler";
  let description = [{
    `%w = l1.state_read @w : tensor<784x256xf32>` reads the current value
    of a state field (the value last written in this handler, if any).
    L1.2: the field exists; L1.5: the type is the field's.
  }];
  let arguments = (ins FlatSymbolRefAttr:$field);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$field attr-dict `:` type($result)";
}

def L1_StateWriteOp : L1_Op<"state_write", [HasParent<"HandlerOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "write a state field of the enclosing actor in a handler";
  let description = [{
    `l1.state_write @w, %new : tensor<784x256xf32>` replaces the field's
    value. Only handlers write state, and an actor runs one handler at a
    time. L1.2: the field exists; L1.5: the type is the field's.
  }];
  let arguments = (ins FlatSymbolRefAttr:$field, AnyStaticShapeTensor:$value);
  let assemblyFormat = "$field `,` $value attr-dict `:` type($value)";
}

include "synpl/Dialect/L1/L1StageOps.td"

//===----------------------------------------------------------------------===//
// Tensor graphs
//===----------------------------------------------------------------------===//

def L1_TensorGraphOp : L1_Op<"tensor_graph", [Symbol, IsolatedFromAbove,
    SingleBlock, DeclareOpInterfaceMethods<RegionKindInterface>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a pure DAG of primitive tensor ops placed on a compute node";
  let description = [{
    ```mlir
    l1.tensor_graph @forward_backward on @gpu_0 reads [@model_state::@weights]
        then @transfer_grads
        compute(%x: tensor<128x784xf32>) {
      %w = l1.window_read @model_state::@weights[@w] : tensor<784x256xf32>
      %h = l1.matmul %x, %w : tensor<128x784xf32>, tensor<784x256xf32> -> tensor<128x256xf32>
      ...
      l1.return %loss, %gw : tensor<f32>, tensor<784x256xf32>
    }
    ```
    The body is a graph region (SSA def-use edges are the DAG; operations
    are unordered), so a cycle can be written and is rejected (L1.10, naming
    the cycle). The `compute(...)` arguments are the entry signature:
    forwarding a `!l1.buf<@gpu_0, T>` delivers a `T`. `then @target` names
    the stage its results are forwarded to, as buffers on this graph's node
    (checked like a forward: L1.2, L1.3, L1.6).

    L1.8 (tensor reachability): every argument and every value is consumed
    or returned, and the results go somewhere (`then` is required). L1.5:
    every op checks its shapes.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, FlatSymbolRefAttr:$node,
                       DefaultValuedAttr<L1_SymbolRefArrayAttr, "{}">:$reads,
                       OptionalAttr<FlatSymbolRefAttr>:$then);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Block &getEntry() { return getBody().front(); }
    /// The types of the values `l1.return` hands back.
    ::llvm::SmallVector<::mlir::Type> getOutputTypes();
  }];
}

def L1_WindowReadOp : L1_Op<"window_read", [Pure, HasParent<"TensorGraphOp">,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "read an actor state field through a window";
  let description = [{
    `%w = l1.window_read @model_state::@weights[@w] : tensor<784x256xf32>`.
    L1.2: the enclosing graph lists the window in `reads`, the window
    exists and contains the field; the type is the field's.
  }];
  let arguments = (ins SymbolRefAttr:$window, FlatSymbolRefAttr:$field);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$window `[` $field `]` attr-dict `:` type($result)";
}

def L1_ReturnOp : L1_Op<"return", [Pure, Terminator,
    ParentOneOf<["TensorGraphOp", "HandlerOp"]>]> {
  let summary = "end a tensor graph (its results) or a handler (nothing)";
  let description = [{
    In a tensor graph, `l1.return %loss, %gw : tensor<f32>, ...` names the
    graph's outputs (delivered to its `then` target as buffers on its node).
    In a handler, `l1.return` takes no operands.
  }];
  let arguments = (ins Variadic<AnyStaticShapeTensor>:$operands);
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
  let hasVerifier = 1;
}

// Tensor ops may appear in tensor graphs and actor handlers. Each checks its
// shapes through synpl/Analysis/Shapes.h and reports L1.5 on a mismatch.
def L1_TensorOpTrait : NativeOpTrait<"TensorOpTrait"> {
  let cppNamespace = "::synpl::l1";
}

class L1_TensorOp<string mnemonic, list<Trait> traits = []>
    : L1_Op<mnemonic, !listconcat(traits,
        [Pure, ParentOneOf<["TensorGraphOp", "HandlerOp"]>, L1_TensorOpTrait])> {
  let hasVerifier = 1;
}

class L1_BinaryOp<string mnemonic, string what> : L1_TensorOp<mnemonic> {
  let summary = "elementwise " # what;
  let description = [{
    Operands and result have the same shape and element type; broadcasting
    is explicit (`l1.broadcast`).
  }];
  let arguments = (ins AnyStaticShapeTensor:$lhs, AnyStaticShapeTensor:$rhs);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() { return detail::verifyBinary(*this); }
  }];
}

def L1_AddOp : L1_BinaryOp<"add", "addition">;
def L1_SubOp : L1_BinaryOp<"sub", "subtraction">;
def L1_MulOp : L1_BinaryOp<"mul", "multiplication">;
def L1_DivOp : L1_BinaryOp<"div", "division">;
def L1_MaxOp : L1_BinaryOp<"max", "maximum">;
def L1_MinOp : L1_BinaryOp<"min", "minimum">;

class L1_UnaryOp<string mnemonic, string what, bit floatOnly = 1>
    : L1_TensorOp<mnemonic> {
  let summary = "elementwise " # what;
  let arguments = (ins AnyStaticShapeTensor:$operand);
  let description = [{
    `%r = l1.exp %a : tensor<4xf32> -> tensor<4xf32>`: the result has the
    operand's type. Transcendental ops (exp, log, sqrt, reciprocal, tanh,
    cos) take floats.
  }];
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let extraClassDefinition = !strconcat([{
    ::llvm::LogicalResult $cppClass::verify() { return detail::verifyUnary(*this, }],
    !if(floatOnly, "true", "false"), [{); }
  }]);
}

def L1_ExpOp : L1_UnaryOp<"exp", "e^x">;
def L1_LogOp : L1_UnaryOp<"log", "natural logarithm">;
def L1_SqrtOp : L1_UnaryOp<"sqrt", "square root">;
def L1_ReciprocalOp : L1_UnaryOp<"reciprocal", "1/x">;
def L1_TanhOp : L1_UnaryOp<"tanh", "hyperbolic tangent">;
def L1_CosOp : L1_UnaryOp<"cos", "cosine (for cosine schedules)">;
def L1_AbsOp : L1_UnaryOp<"abs", "absolute value", 0>;
def L1_SignOp : L1_UnaryOp<"sign", "sign (-1, 0 or 1)", 0>;
def L1_NegOp : L1_UnaryOp<"neg", "negation", 0>;

def L1_MatmulOp : L1_TensorOp<"matmul"> {
  let summary = "matrix multiply [m,k] x [k,n] -> [m,n], or batched";
  let description = [{
    `%y = l1.matmul %x, %w : tensor<128x784xf32>, tensor<784x256xf32> -> tensor<128x256xf32>`;
    the spec's `tensor_matmul`. Float elements (L1.5). Batched: operands of
    one rank above 2 whose leading dimensions agree multiply matrix by
    matrix, `[b..., m, k] x [b..., k, n] -> [b..., m, n]` (attention's
    scores and values, per example and head):

    ```mlir
    %s = l1.matmul %q, %kt : tensor<32x4x64x32xf32>, tensor<32x4x32x64xf32> -> tensor<32x4x64x64xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$lhs, AnyStaticShapeTensor:$rhs);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
}

def L1_ScaleOp : L1_TensorOp<"scale"> {
  let summary = "multiply a tensor by a scalar (a rank-0 tensor)";
  let description = [{
    `%y = l1.scale %x, %s : tensor<128x256xf32>, tensor<f32> -> tensor<128x256xf32>`;
    the spec's `tensor_scale`. The scalar is a value, so it can be computed
    (a scheduled learning rate).
  }];
  let arguments = (ins AnyStaticShapeTensor:$operand, AnyStaticShapeTensor:$scalar);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat =
      "$operand `,` $scalar attr-dict `:` type($operand) `,` type($scalar) `->` type($result)";
}

def L1_BroadcastOp : L1_TensorOp<"broadcast"> {
  let summary = "expand dimensions (metadata only)";
  let description = [{
    `l1.broadcast %b : tensor<256xf32> -> tensor<128x256xf32>` aligns
    trailing dimensions; `dims [0]` maps input dimension i to output
    dimension dims[i] (`tensor<128xf32> -> tensor<128x256xf32>`). An input
    dimension is 1 or equal to the output dimension it maps to.
  }];
  let arguments = (ins AnyStaticShapeTensor:$operand,
                       OptionalAttr<DenseI64ArrayAttr>:$dims);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat =
      "$operand (`dims` $dims^)? attr-dict `:` type($operand) `->` type($result)";
}

def L1_TransposeOp : L1_TensorOp<"transpose"> {
  let summary = "permute dimensions (reverse them by default)";
  let description = [{
    `%t = l1.transpose %x : tensor<128x784xf32> -> tensor<784x128xf32>`,
    or with `perm [1, 0, 2]`. Metadata only.
  }];
  let arguments = (ins AnyStaticShapeTensor:$operand,
                       OptionalAttr<DenseI64ArrayAttr>:$perm);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat =
      "$operand (`perm` $perm^)? attr-dict `:` type($operand) `->` type($result)";
}

def L1_ReshapeOp : L1_TensorOp<"reshape"> {
  let summary = "reinterpret the shape, keeping the element count (metadata only)";
  let description = [{
    `%x = l1.reshape %img : tensor<128x28x28xf32> -> tensor<128x784xf32>`
    (row-major order).
  }];
  let arguments = (ins AnyStaticShapeTensor:$operand);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
}

def L1_UnfoldOp : L1_TensorOp<"unfold"> {
  let summary = "the sliding windows of an [N, C, spatial...] or [N, spatial..., C] tensor (im2col)";
  let description = [{
    ```mlir
    %p = l1.unfold %x kernel [3, 3] stride [1, 1] padding [1, 1]
        : tensor<128x1x28x28xf32> -> tensor<128x28x28x1x3x3xf32>
    ```
    `result[n, o..., c, k...] = x[n, c, o * stride + k - padding]`, zero
    where that index falls in the padding. The result is `[N, O..., C,
    K...]` with `O = (I + 2 padding - K) / stride + 1`, so that reshaping
    it to `[N * O..., C * K...]` gives the rows a convolution multiplies
    with its `[C_out, C * K...]` weights: the convolution becomes a matmul.
    One entry of `kernel`, `stride`, `padding` per spatial dimension.

    `channels_last`: the operand is `[N, spatial..., C]` and the result
    `[N, O..., K..., C]`, `result[n, o..., k..., c] = x[n, o * stride + k -
    padding, c]`: the rows then pair with weights seen as `[C_out, K...,
    C]`, and a window's channels are one contiguous run of the input, where
    without it each channel is a separate plane:

    ```mlir
    %p = l1.unfold %x kernel [3, 3] stride [1, 1] padding [1, 1] channels_last
        : tensor<128x14x14x32xf32> -> tensor<128x14x14x3x3x32xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$operand, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       UnitAttr:$channels_last);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $operand `kernel` $kernel `stride` $stride `padding` $padding
        (`channels_last` $channels_last^)? attr-dict `:` type($operand) `->` type($result)
  }];
}

def L1_FoldOp : L1_TensorOp<"fold"> {
  let summary = "sum sliding windows back onto an [N, C, spatial...] or [N, spatial..., C] tensor (col2im)";
  let description = [{
    ```mlir
    %dx = l1.fold %dp kernel [3, 3] stride [1, 1] padding [1, 1]
        : tensor<128x28x28x1x3x3xf32> -> tensor<128x1x28x28xf32>
    ```
    The adjoint of `l1.unfold` with the same attributes: every element of
    a window is added to the input position it was read from
    (`result[n, c, i] = sum of operand[n, o, c, k]` over the `(o, k)` with
    `o * stride + k - padding = i`); what fell in the padding is dropped.
    The gradient of a convolution's input. `channels_last`: the adjoint of
    the `channels_last` unfold, from `[N, O..., K..., C]` windows onto an
    `[N, spatial..., C]` result.
  }];
  let arguments = (ins AnyStaticShapeTensor:$operand, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       UnitAttr:$channels_last);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $operand `kernel` $kernel `stride` $stride `padding` $padding
        (`channels_last` $channels_last^)? attr-dict `:` type($operand) `->` type($result)
  }];
}

class L1_ReduceOp<string mnemonic, string what> : L1_TensorOp<mnemonic> {
  let summary = what # " over one axis, or over all axes (to a scalar)";
  let description = [{
    `%s = l1.reduce_sum %x axis 1 : tensor<128x256xf32> -> tensor<128xf32>`
    removes the axis; without `axis`, all axes reduce to a rank-0 tensor
    (the spec's `tensor_reduce_mean(a)`).
  }];
  let arguments = (ins AnyStaticShapeTensor:$operand, OptionalAttr<I64Attr>:$axis);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat =
      "$operand (`axis` $axis^)? attr-dict `:` type($operand) `->` type($result)";
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() { return detail::verifyReduce(*this, getAxis()); }
  }];
}

def L1_ReduceSumOp : L1_ReduceOp<"reduce_sum", "sum">;
def L1_ReduceMeanOp : L1_ReduceOp<"reduce_mean", "mean">;
def L1_ReduceMaxOp : L1_ReduceOp<"reduce_max", "maximum">;

def L1_CmpOp : L1_TensorOp<"cmp"> {
  let summary = "elementwise comparison to an i1 tensor";
  let description = [{
    `%c = l1.cmp gt, %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>`
    with predicates eq, ne, lt, le, gt, ge.
  }];
  let arguments = (ins L1_CmpPredicate:$predicate, AnyStaticShapeTensor:$lhs,
                       AnyStaticShapeTensor:$rhs);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $predicate `,` $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
}

def L1_SelectOp : L1_TensorOp<"select"> {
  let summary = "elementwise choice: cond ? a : b";
  let description = [{
    `%r = l1.select %c, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>`.
  }];
  let arguments = (ins AnyStaticShapeTensor:$cond, AnyStaticShapeTensor:$lhs,
                       AnyStaticShapeTensor:$rhs);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $cond `,` $lhs `,` $rhs attr-dict `:` type($cond) `,` type($lhs) `,` type($rhs) `->` type($result)
  }];
}

def L1_CastOp : L1_TensorOp<"cast"> {
  let summary = "convert the element type, keeping the shape";
  let description = [{
    Integer to float converts the value (`ui8` 255 becomes 255.0); float to
    integer truncates toward zero; i1 converts to 0 or 1.
  }];
  let arguments = (ins AnyStaticShapeTensor:$operand);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
}

def L1_OneHotOp : L1_TensorOp<"one_hot"> {
  let summary = "one-hot encode integer labels";
  let description = [{
    `l1.one_hot %y classes 10 : tensor<128xui8> -> tensor<128x10xf32>`:
    result[..., c] = 1 if labels[...] == c else 0 (labels outside
    [0, classes) encode as all zeros).
  }];
  let arguments = (ins AnyStaticShapeTensor:$labels,
                       ConfinedAttr<I64Attr, [IntPositive]>:$classes);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat =
      "$labels `classes` $classes attr-dict `:` type($labels) `->` type($result)";
}

def L1_GatherOp : L1_TensorOp<"gather"> {
  let summary = "rows of a table at integer indices (an embedding lookup)";
  let description = [{
    ```mlir
    %e = l1.gather %table[%ids] : tensor<256x128xf32>, tensor<32x64xui8> -> tensor<32x64x128xf32>
    ```
    `result[p..., d] = table[ids[p...], d]`: the result has the indices'
    shape with the table's row appended. An index outside `[0, rows)` reads
    a row of zeros. The table is rank 2; the indices are integers of any
    rank.
  }];
  let arguments = (ins AnyStaticShapeTensor:$table, AnyStaticShapeTensor:$ids);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $table `[` $ids `]` attr-dict `:` type($table) `,` type($ids) `->` type($result)
  }];
}

def L1_ScatterAddOp : L1_TensorOp<"scatter_add"> {
  let summary = "sum rows into a table at integer indices (a gather's adjoint)";
  let description = [{
    ```mlir
    %g = l1.scatter_add %d[%ids] : tensor<32x64x128xf32>, tensor<32x64xui8> -> tensor<256x128xf32>
    ```
    `result[v, d] = sum of src[p..., d] over every p with ids[p...] == v`,
    zero for a row no index names: the gradient of `l1.gather` with respect
    to its table. `src` has the indices' shape with a row appended; the
    result's row count is the table's. Indices outside `[0, rows)`
    contribute nothing. Rows are summed in the indices' row-major order.
  }];
  let arguments = (ins AnyStaticShapeTensor:$src, AnyStaticShapeTensor:$ids);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $src `[` $ids `]` attr-dict `:` type($src) `,` type($ids) `->` type($result)
  }];
}

def L1_KernelCallOp : L1_TensorOp<"kernel_call"> {
  let summary = "a user-supplied kernel: the escape hatch `#[l0::kernel(\"file\")]`";
  let description = [{
    ```mlir
    %y = l1.kernel_call "relu" from "relu.ll" (%x) : (tensor<128x256xf32>) -> tensor<128x256xf32>
    ```
    The result is what the function `symbol` of `file` computes from the
    inputs: an LLVM IR (`.ll`, `.bc`) or object (`.o`) file for the host, PTX
    (`.ptx`) for a CUDA device. A relative path is relative to the directory
    of the file the op's location names. The op is opaque: the L1 -> L0
    lowering gives it a kernel of its own, never fused, with its inputs and
    its result in dense row-major buffers, and checks the kernel's typed
    boundary (the file's `synpl.kernel` line: argument count, element types,
    shapes) against the op's types (row L0.1, docs/kernels.md); `boundary`
    states it instead for a file that cannot (an object or bitcode file),
    in the same form (`relu(f32[128,256]) -> f32[128,256]`). The L2 -> L1
    lowering makes one for a layer with the hatch; the layer's backward is
    still derived from the layer's own rule, so the kernel must compute the
    layer's function.
  }];
  let arguments = (ins StrAttr:$symbol, StrAttr:$file, OptionalAttr<StrAttr>:$boundary,
                       Variadic<AnyStaticShapeTensor>:$inputs);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $symbol `from` $file `(` $inputs `)` attr-dict `:` functional-type($inputs, $result)
  }];
}

def L1_RandomOp : L1_TensorOp<"random"> {
  let summary = "counter-based uniform random numbers in [0, 1)";
  let description = [{
    ```mlir
    %u = l1.random %step seed 1 stream 0 : tensor<f32> -> tensor<128x256xf32>
    ```
    Element `i` (row-major) of the result is a pure function of `seed`,
    `stream`, the counter's value `t` (a non-negative integer held by the
    rank-0 `f32` operand, e.g. an actor's update step read through a
    window) and `i`: `u = (squares32(t * 2^32 + i, key(seed, stream)) >> 8)
    * 2^-24`, the "Squares" counter-based generator with a key derived from
    seed and stream (synpl/Support/CounterRng.h). Nothing is stored between
    steps: the same step redraws the same numbers (the backward pass sees
    the forward's dropout mask), the next step new ones, and a run resumed
    from a checkpoint of its step counter draws exactly what an
    uninterrupted run would. Distinct `stream`s (one per random op of a
    program) are independent. The result is `f32` with fewer than 2^32
    elements.
  }];
  let arguments = (ins AnyStaticShapeTensor:$counter, I64Attr:$seed, I64Attr:$stream);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $counter `seed` $seed `stream` $stream attr-dict `:` type($counter) `->` type($result)
  }];
}

def L1_ConstOp : L1_TensorOp<"const"> {
  let summary = "a tensor filled with one constant";
  let description = [{
    `l1.const 3.0e-04 : tensor<f32>` (the spec's scalar `tensor_const`),
    or a splat of any static shape: `l1.const 1.0 : tensor<256xf32>`.
  }];
  let arguments = (ins F64Attr:$value);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$value attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Pipelines and schedule
//===----------------------------------------------------------------------===//

def L1_PipelineOp : L1_Op<"pipeline", [Symbol,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "an ordered chain of stages and tensor graphs";
  let description = [{
    `l1.pipeline @train = @load_data -> @transfer_to_gpu -> @forward_backward`.
    L1.2: every element is a stage or tensor graph, and each link `@a -> @b`
    is a dataflow edge of the program (`@a` forwards to `@b`, or `@b` is
    `@a`'s `then`). L1.10: no element appears twice (a cycle).
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, FlatSymbolRefArrayAttr:$elements);
  let assemblyFormat = "$sym_name `=` custom<Chain>($elements) attr-dict";
}

def L1_ScheduleOp : L1_Op<"schedule", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "which pipelines run, which actors fence steps, how deep";
  let description = [{
    `l1.schedule pipelines [@train, @grad_return] actors [@model_state] pipeline_depth 2`.
    Execution order is inferred from the dataflow (forward) edges; at
    `pipeline_depth` N, up to N steps are in flight. L1.2: the refs
    resolve to pipelines and actors; at most one schedule per module.
    L1.4 (across steps): at depth > 1, every actor that has a window with
    readers is listed in `actors`: the actor is the serialization fence
    between step N's handler and step N+1's readers.

    The training loop around the steps (from L2's `train loop<...>`; all
    optional, the compiled program's defaults, which its command line
    overrides): `epochs` (positive), `evaluate` (the test split's file-name
    prefix, replacing `train`; `"none"`: no evaluation) and
    `checkpoint_every` (update steps between checkpoints, 0: at epoch ends
    only) and `steps` (update steps per epoch at most; a text stream's run
    length):

    ```mlir
    l1.schedule pipelines [@train] actors [@model_state] pipeline_depth 2
        epochs 3 evaluate "t10k" checkpoint_every 500
    ```

    Data parallelism: `replicas [@cpu_0, @cpu_1]` runs the program once per
    listed compute node, one process (rank) each, rank i on the i-th node.
    The program is written for the first: replica i runs what is placed
    there on its own node instead (and keeps its buffers in that node's
    memory); what runs elsewhere (the stages of a GPU's host) runs in each
    rank's process. Each replica's `read_batch` reads its own slice of the
    global batch (replicas × the batch), and `l1.all_reduce` combines their
    buffers. Under update sharding `l1.reduce_scatter` combines a
    gradient and leaves each replica the block of it that replica
    updates; the update handler gathers the updated blocks
    (`l1.all_gather` over the replicas), and the optimizer state of those
    blocks is sharded (`shard 0`). Such a program runs on exactly as many
    ranks as it lists. L1.2: the replicas are distinct nodes of the system and the
    program's tensor graphs run on the first; L1.1: they are compute nodes
    of one isa, and a path of edges joins each to the next (the
    collectives' ring).

    Tensor parallelism: `shards [@cpu_0, @cpu_1]` runs the program once per
    listed node as `replicas` does, but every rank reads the whole batch:
    the actor state fields with a `shard` axis hold one block per rank,
    and the tensor graphs exchange activations and gradients with
    `l1.all_gather` and `l1.all_sum`. The same checks hold; a schedule
    has `replicas` or `shards`, not both; under `shards` it runs one step
    at a time (L1.4: pipeline_depth 1), and the rank ops appear only under
    `shards`, gathering over as many ranks as it lists (or in a handler
    under `replicas`: update sharding).
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$pipelines,
                       FlatSymbolRefArrayAttr:$actors,
                       ConfinedAttr<I64Attr, [IntPositive]>:$pipeline_depth,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$epochs,
                       OptionalAttr<StrAttr>:$evaluate,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntNonNegative]>>:$checkpoint_every,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$steps,
                       OptionalAttr<FlatSymbolRefArrayAttr>:$replicas,
                       OptionalAttr<FlatSymbolRefArrayAttr>:$shards);
  // Without a training loop (the builder callers had before it).
  let builders = [
    OpBuilder<(ins "::mlir::ArrayAttr":$pipelines, "::mlir::ArrayAttr":$actors,
                   "::mlir::IntegerAttr":$pipeline_depth), [{
      build($_builder, $_state, pipelines, actors, pipeline_depth,
            ::mlir::IntegerAttr(), ::mlir::StringAttr(), ::mlir::IntegerAttr(),
            ::mlir::IntegerAttr(), ::mlir::ArrayAttr(), ::mlir::ArrayAttr());
    }]>];
  let assemblyFormat = [{
    `pipelines` $pipelines `actors` $actors `pipeline_depth` $pipeline_depth
    (`epochs` $epochs^)? (`evaluate` $evaluate^)?
    (`checkpoint_every` $checkpoint_every^)? (`steps` $steps^)?
    (`replicas` $replicas^)? (`shards` $shards^)? attr-dict
  }];
}

include "synpl/Dialect/L1/L1RankOps.td"

#endif // SYNPL_DIALECT_L1_OPS_TD
