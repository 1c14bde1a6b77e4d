//===- L0UOpOps.td - The l0uop dialect's operations -------------*- tablegen -*-===//
#ifndef SYNPL_DIALECT_L0UOP_OPS_TD
#define SYNPL_DIALECT_L0UOP_OPS_TD

include "synpl/Dialect/L0UOp/L0UOpDialect.td"
include "synpl/Dialect/L0UOp/L0UOpAttrs.td"
include "synpl/Dialect/L0UOp/L0UOpTypes.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// A 64-bit signless integer attribute read as int64_t (I64Attr reads
// uint64_t, which would turn a negative size into a huge one).
def L0UOp_I64Attr : TypedSignlessIntegerAttrBase<I64, "int64_t",
                                                "64-bit signless integer attribute"> {
  let convertFromStorage = "$_self.getValue().getSExtValue()";
}

//===----------------------------------------------------------------------===//
// The plan
//===----------------------------------------------------------------------===//

def L0UOp_PlanOp : L0UOp_Op<"plan", [
    Symbol, SymbolTable, IsolatedFromAbove, NoTerminator, SingleBlock]> {
  let summary = "the L0 plan of one program: memory, kernels, streams, syncs, transfers, inits";
  let description = [{
    ```mlir
    l0uop.plan @mnist pipeline_depth 2 { pools, slots, kernels, streams,
                                         events, records, waits, transfers,
                                         inits, control regions/programs }
    ```

    The spec's `L0_IR`, and the owner of the phase-2 checks that need the
    whole plan. They run after every op in the plan verified on its own and
    every reference resolved.

    **Time.** Lifetimes are `(first_use, last_use)` in plan ticks, both ends
    included: tick `t` is the `t`-th launch of one step's schedule. Two slots
    whose lifetimes share a tick are live together.

    **L0.2 buffer lifetime safety** (safety). In each pool, a slot with a
    static offset must lie inside the pool (`offset + size <= capacity`), a
    slot with a dynamic offset must not be larger than its pool, and two
    statically placed slots whose byte ranges intersect must not have
    intersecting lifetimes.

    **Streams and happens-before.** Each stream runs its entries in order;
    `record @e after X on A` with `wait @e before Y on B` orders `X` on `A`
    before `Y` on `B`. Happens-before is the transitive closure of both. A
    kernel reads its inputs and writes its outputs; a transfer reads its
    source and writes its destination. Two entries on different streams
    *conflict* when one writes a slot the other reads or writes; every
    conflicting pair must be ordered by happens-before. An unordered pair
    is reported once, under exactly one of L0.3 and L0.4:

    **L0.4 sync completeness** (liveness) when it is a producer → consumer
    dependency: one entry only reads the slot, and its stream never writes
    it (a pure consumer of another stream's data) — the event recorded
    after the producer and waited before the consumer is missing. L0.4 also
    requires every event to be recorded exactly once and waited at least
    once, and rejects a wait that can never return: its event is never
    recorded, or the waits form a cycle (the sync plan deadlocks).

    **L0.3 stream hazard** (safety) otherwise: the slot is mutated on both
    streams (a shared mutable region) and nothing orders the two accesses.

    **L0.5 memory capacity** (resource). At every tick, the live slots of a
    pool (dynamic slots rounded up to the pool's alignment) sum to at most
    its capacity. The diagnostic names the worst tick and its sum, with a
    note at every slot live then. (With static offsets and no L0.2 error
    this holds by construction; it bites on run-time-placed slots. A pool
    that fails L0.2 is not swept again.)

    **L0.6 pool exhaustion** (resource). A `freelist` pool serves transient
    allocations (transfer staging) for all steps in flight: at
    `pipeline_depth` D each of its slots exists D times, so
    `D × peak(live bytes) <= capacity`, where peak is the L0.5 sweep's
    worst sum. Persistent pools hold one copy; arena pools are shared by the
    steps, which the sync plan serialises (L0.3).

    **The training loop** (optional; from `l1.schedule`): `epochs`
    (positive), `evaluate` (the test split's file-name prefix; `"none"`: no
    evaluation) and `checkpoint_every` (update steps between checkpoints,
    at least 0) and `steps` (update steps per epoch at most, positive)
    become the plan header's defaults for the runtime, which its command
    line overrides (`--epochs`, `--checkpoint-every`, `--steps`).

    **Ranks** (optional, default 1): the processes the program was placed
    on, one replica each (data parallel). A plan with `ranks` > 1 holds
    the collectives that combine the replicas' work; its sharded ingests
    read one rank's slice of the global batch. The compiled program runs
    under `mpirun` with any number of ranks, or alone.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, L0UOp_I64Attr:$pipeline_depth,
                       OptionalAttr<L0UOp_I64Attr>:$epochs,
                       OptionalAttr<StrAttr>:$evaluate,
                       OptionalAttr<L0UOp_I64Attr>:$checkpoint_every,
                       OptionalAttr<L0UOp_I64Attr>:$steps,
                       OptionalAttr<L0UOp_I64Attr>:$ranks);
  let regions = (region SizedRegion<1>:$body);
  // Without a training loop (the builder callers had before it).
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$sym_name, "int64_t":$pipeline_depth), [{
      build($_builder, $_state, sym_name, pipeline_depth, ::mlir::IntegerAttr(),
            ::mlir::StringAttr(), ::mlir::IntegerAttr(), ::mlir::IntegerAttr(),
            ::mlir::IntegerAttr());
    }]>];
  let assemblyFormat = [{
    $sym_name `pipeline_depth` $pipeline_depth (`epochs` $epochs^)?
    (`evaluate` $evaluate^)? (`checkpoint_every` $checkpoint_every^)?
    (`steps` $steps^)? (`ranks` $ranks^)? attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The plan item named `name` if it is an OpT (a pool, slot, kernel,
    /// stream, event, transfer, or an l0ctl region or program).
    template <typename OpT> OpT lookup(::llvm::StringRef name) {
      return ::llvm::dyn_cast_or_null<OpT>(
          ::mlir::SymbolTable::lookupSymbolIn(getOperation(), name));
    }
  }];
}

class L0UOp_PlanItem<string mnemonic, list<Trait> traits = []>
    : L0UOp_Op<mnemonic, !listconcat(traits, [HasParent<"PlanOp">])>;

def L0UOp_PoolOp : L0UOp_PlanItem<"pool", [Symbol]> {
  let summary = "a pool of physical memory with a planning strategy";
  let description = [{
    ```mlir
    l0uop.pool @dev_params persistent on device capacity 4MiB
    l0uop.pool @host_staging freelist on host capacity 1MiB align 4096
    ```
    `persistent` (actor state: init → program end), `arena` (tensor
    intermediates: bump-allocated, reset per graph), `freelist` (transfer
    staging: alloc → free). Slots of persistent and arena pools have static
    offsets; slots of freelist pools get theirs at run time. `capacity`
    takes the spec's units (`64MiB`, `24GB`) or bytes; `align` (default
    256) is the alignment of every slot in the pool.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, L0UOp_PoolKindAttr:$kind,
                       L0UOp_MemSpaceAttr:$space, L0UOp_I64Attr:$capacity,
                       DefaultValuedAttr<L0UOp_I64Attr, "256">:$alignment);
  let assemblyFormat = [{
    $sym_name `` $kind `on` `` $space `capacity` custom<Bytes>($capacity)
    (`align` $alignment^)? attr-dict
  }];
  let hasVerifier = 1;
}

def L0UOp_SlotOp : L0UOp_PlanItem<"slot", [
    Symbol, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a memory slot: pool, offset, size, lifetime";
  let description = [{
    ```mlir
    l0uop.slot @w1 pool @dev_params offset 0 size 802816 lifetime(0, 9)
        : !l0uop.buf<784x256xf32>
    l0uop.slot @x_host pool @host_staging size 401408 lifetime(0, 1)
        : !l0uop.buf<128x784xf32>
    ```
    The spec's `MemorySlot`. `size` (bytes) is at least the buffer type's
    size. `offset` is required in persistent and arena pools, absent in
    freelist pools, and a multiple of the pool's alignment.

    `shard_rows R` (tensor parallelism): the slot holds this rank's block
    of a tensor `ranks` times larger, seen as `R` rows; each rank holds
    one block of columns of every row. Its init fills the rank's block of
    the full tensor's values, and checkpoints hold the full tensor. The
    plan has `ranks` > 1, and `R` divides the buffer's element count.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, FlatSymbolRefAttr:$pool,
                       OptionalAttr<L0UOp_I64Attr>:$offset, L0UOp_I64Attr:$size,
                       L0UOp_I64Attr:$first_use, L0UOp_I64Attr:$last_use,
                       TypeAttrOf<L0UOp_BufType>:$type,
                       OptionalAttr<L0UOp_I64Attr>:$shard_rows);
  let assemblyFormat = [{
    $sym_name `pool` $pool (`offset` $offset^)? `size` $size
    `lifetime` `(` $first_use `,` $last_use `)` (`shard_rows` $shard_rows^)? attr-dict
    `:` $type
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    BufType getBufType() { return ::llvm::cast<BufType>(getType()); }
  }];
}

def L0UOp_KernelOp : L0UOp_PlanItem<"kernel", [
    Symbol, IsolatedFromAbove, L0UOp_UOpScope, NoTerminator, SingleBlock,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a kernel: buffers, launch configuration and UOps";
  let description = [{
    ```mlir
    l0uop.kernel @bias_gelu inputs(%x = @h1 : !l0uop.buf<128x256xf32>)
        outputs(%y = @a1 : !l0uop.buf<128x256xf32>)
        grid(128, 1, 1) block(256, 1, 1) shared_mem 0 {
      %i = l0uop.range 0 to 32768 over global_x : index
      ...
      l0uop.end %i
    }
    ```
    The spec's `KernelDecl`. Each input and output names a slot and binds
    it to a block argument of the slot's buffer type. A kernel reads its
    inputs and may read and write its outputs; a slot is listed once. The
    body is the flat UOp sequence; its checks are row **L0.1**: RANGE/END
    and IF/ENDIF nest, values are not used outside the RANGE or IF that
    defines them (except by a REDUCE over that range), no STORE reaches an
    input, no BARRIER sits under an IF, and every parallel RANGE fits the
    launch (`global_a`: grid×block threads along a; `group_a`: blocks;
    `local_a`: threads of a block).

    `shared(...)` (optional, after `shared_mem`) declares block-shared
    scratch buffers, one per block, that live in the kernel's `shared_mem`
    bytes: threads of a block exchange data through them between
    `l0uop.barrier`s. Their sizes must sum to at most `shared_mem` (L0.1).

    ```mlir
    l0uop.kernel @tiled inputs(%a = @a : !l0uop.buf<64x64xf32>) outputs()
        grid(4, 1, 1) block(16, 1, 1) shared_mem 1024
        shared(%tile : !l0uop.buf<16x16xf32>) { ... }
    ```

    `opt_level` (0 to 3, optional) is the optimization effort the host code
    generator spends on the kernel (LLVM's O0 to O3, capped by the
    compiler's own level); without it the kernel gets the compiler's level.
    `--synpl-l0-kernel-effort` sets it from each kernel's share of the
    step's work. It is a host code generation hint: the CUDA lowering
    refuses a device kernel that carries one.

    ```mlir
    l0uop.kernel @bias inputs(...) outputs(...) grid(1, 1, 1) block(1, 1, 1)
        shared_mem 0 attributes {opt_level = 1 : i32} { ... }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       FlatSymbolRefArrayAttr:$inputs,
                       FlatSymbolRefArrayAttr:$outputs,
                       DenseI64ArrayAttr:$grid, DenseI64ArrayAttr:$block,
                       L0UOp_I64Attr:$shared_mem,
                       OptionalAttr<ConfinedAttr<I32Attr, [IntMinValue<0>, IntMaxValue<3>]>>:$opt_level);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    unsigned getNumInputs() { return getInputs().size(); }
    unsigned getNumOutputs() { return getOutputs().size(); }
    /// The buffer bound to input i / output i.
    ::mlir::BlockArgument getInputArg(unsigned i) {
      return getBody().front().getArgument(i);
    }
    ::mlir::BlockArgument getOutputArg(unsigned i) {
      return getBody().front().getArgument(getNumInputs() + i);
    }
    /// The block-shared scratch buffers (the arguments after the outputs).
    ::mlir::Block::BlockArgListType getSharedArgs() {
      return getBody().front().getArguments().drop_front(
          getNumInputs() + getNumOutputs());
    }
    /// The slot a buffer argument of this kernel is bound to; null for a
    /// shared scratch buffer.
    ::mlir::FlatSymbolRefAttr getSlotOf(::mlir::BlockArgument arg) {
      unsigned n = arg.getArgNumber();
      if (n >= getNumInputs() + getNumOutputs())
        return {};
      ::mlir::Attribute ref = n < getNumInputs()
          ? getInputs()[n] : getOutputs()[n - getNumInputs()];
      return ::llvm::cast<::mlir::FlatSymbolRefAttr>(ref);
    }
    /// Whether the kernel runs on a CUDA device: it binds at least one slot
    /// and every slot it binds lives in a pool `on device` (`planSymbols`:
    /// the symbol table of its plan).
    bool isDeviceKernel(::mlir::SymbolTable &planSymbols);
    /// A hash of what the kernel's code depends on: its body (up to value
    /// names and locations), launch shape, shared memory, buffer types and
    /// attributes; not its name or the slots it binds. Kernels with equal
    /// code (`hasSameCode`) have equal hashes.
    ::llvm::hash_code hashCode();
    /// Whether `other` compiles to the same code as this kernel: equal
    /// bodies, launch shapes, shared memory and attributes (but for the name
    /// and the bindings), and bindings alike in what code generation reads
    /// of them: each buffer's pool, its memory space and alignment (a
    /// kernel binds each slot once). `planSymbols` and `otherPlanSymbols` are
    /// the symbol tables of the two kernels' plans.
    bool hasSameCode(KernelOp other, ::mlir::SymbolTable &planSymbols,
                     ::mlir::SymbolTable &otherPlanSymbols);
  }];
}

def L0UOp_StreamOp : L0UOp_PlanItem<"stream", [
    Symbol, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a stream: an ordered list of kernels, transfers and collectives";
  let description = [{
    ```mlir
    l0uop.stream @s0 [@tx_x, @fc1, @gelu, @adam]
    ```
    The spec's `stream_plan` entry. Entries run in order; an entry appears
    at most once per stream (a kernel on two streams is two launches, e.g.
    the same step's kernel at pipeline_depth 2).
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       FlatSymbolRefArrayAttr:$entries);
  let assemblyFormat = "$sym_name $entries attr-dict";
}

def L0UOp_EventOp : L0UOp_PlanItem<"event", [Symbol]> {
  let summary = "a sync event";
  let description = [{
    ```mlir
    l0uop.event @step_done
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name);
  let assemblyFormat = "$sym_name attr-dict";
}

def L0UOp_RecordOp : L0UOp_PlanItem<"record", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "record an event on a stream after one of its entries";
  let description = [{
    ```mlir
    l0uop.record @step_done after @adam on @s0
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$event, FlatSymbolRefAttr:$entry,
                       FlatSymbolRefAttr:$stream);
  let assemblyFormat = "$event `after` $entry `on` $stream attr-dict";
}

def L0UOp_WaitOp : L0UOp_PlanItem<"wait", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "make a stream wait for an event before one of its entries";
  let description = [{
    ```mlir
    l0uop.wait @step_done before @fc1 on @s1
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$event, FlatSymbolRefAttr:$entry,
                       FlatSymbolRefAttr:$stream);
  let assemblyFormat = "$event `before` $entry `on` $stream attr-dict";
}

def L0UOp_TransferOp : L0UOp_PlanItem<"transfer", [
    Symbol, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a copy between slots, possibly across pools";
  let description = [{
    ```mlir
    l0uop.transfer @tx_x @x_host -> @x_dev h2d bytes 401408
    ```
    The spec's `Transfer`. The direction must match the pools' memory
    spaces (`h2d`: host → device, ...); `bytes` fits both slots. Transfers
    run on streams like kernels.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, FlatSymbolRefAttr:$src,
                       FlatSymbolRefAttr:$dst, L0UOp_DirectionAttr:$direction,
                       L0UOp_I64Attr:$bytes);
  let assemblyFormat = [{
    $sym_name $src `->` $dst `` $direction `bytes` $bytes attr-dict
  }];
}

def L0UOp_CollectiveOp : L0UOp_PlanItem<"collective", [
    Symbol, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a collective across the ranks of a data- or tensor-parallel run";
  let description = [{
    ```mlir
    l0uop.collective @grads.ar0 all_reduce(mean) [@g_w1, @g_b1]
        complete_before @model_state.GradUpdate.k0_add
    l0uop.collective @fc1.ag all_gather [@fc1.part, @fc1.full]
    l0uop.collective @w.bc broadcast [@w] root 0
    ```
    One step of the plan runs on every rank of the run (the world) at
    once; a collective combines the ranks' copies of its slots. It is a
    stream entry: it starts where its stream reaches it and is complete
    before `complete_before` (an entry later in the same stream; without
    it, before the next entry). Between the two the stream goes on with
    other work — a gradient bucket's all-reduce overlaps the rest of the
    backward pass — and no entry in between may touch its slots.

    * `all_reduce(<reduce>)`: each slot, in place, becomes the ranks' sum,
      mean, max or min. The slots are one bucket: one message.
    * `broadcast root R`: each slot, in place, becomes rank R's.
    * `all_gather`: (source, destination) pairs; the destination holds the
      ranks' sources in rank order, `ranks` times the source's elements.
    * `reduce_scatter(<reduce>)`: (source, destination) pairs; rank r's
      destination is the reduction of the ranks' r-th part of the source,
      which holds `ranks` times the destination's elements.

    Rows (the plan checks the rest): the slots are distinct plan slots of
    one element type that the runtime combines (f32, f64, i32, i64; `mean`
    a float); sizes agree (a pair's elements differ by the plan's
    `ranks`); the plan places its program on more than one rank. **L0.3**
    (safety): no entry between the start and `complete_before` reads or
    writes a slot the collective writes, or writes one it reads.
    **L0.7** (liveness): exactly one stream runs it, so that every rank
    reaches it in the same order, and `complete_before` comes after it on
    that stream.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       L0UOp_CollectiveKindAttr:$kind,
                       OptionalAttr<L0UOp_CollectiveReduceAttr>:$reduce,
                       FlatSymbolRefArrayAttr:$slots,
                       OptionalAttr<L0UOp_I64Attr>:$root,
                       OptionalAttr<FlatSymbolRefAttr>:$complete_before);
  let assemblyFormat = [{
    $sym_name `` $kind `` custom<CollectiveReduce>($reduce) $slots (`root` $root^)?
    (`complete_before` $complete_before^)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The slots it reads and those it writes (in place: the same).
    void getAccesses(::llvm::SmallVectorImpl<::mlir::StringAttr> &reads,
                     ::llvm::SmallVectorImpl<::mlir::StringAttr> &writes);
  }];
}

def L0UOp_InitOp : L0UOp_PlanItem<"init", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "an init op: fill a slot before the first step";
  let description = [{
    ```mlir
    l0uop.init zeros @b1
    l0uop.init kaiming @w1 fan_in 784 seed 7
    l0uop.init constant @scale value 1.0
    l0uop.init decode_idx @train_images path "train-images-idx3-ubyte"
    ```
    The spec's `InitOp`. `constant` needs `value`; `decode_idx` (a host-side
    decoder of the IDX format) needs `path` and a host slot; `kaiming`,
    `xavier`, `uniform` and `normal` fill float slots, and `kaiming` and
    `xavier` take their fan-in from `fan_in` or the slot's leading
    dimension. `planned_steps` fills a one-element f32 slot with the
    number of update steps the run will take (epochs × batches per epoch,
    known only at run time: the data's sample count, `drop_last`,
    `--steps` and `--epochs` decide it). `training_mode` fills a
    one-element f32 slot with 1; the runtime writes 0 there while it
    evaluates and 1 again before it trains.
  }];
  let arguments = (ins L0UOp_InitKindAttr:$kind, FlatSymbolRefAttr:$slot,
                       OptionalAttr<StrAttr>:$path,
                       OptionalAttr<F64Attr>:$value,
                       OptionalAttr<L0UOp_I64Attr>:$fan_in,
                       OptionalAttr<L0UOp_I64Attr>:$seed);
  let assemblyFormat = [{
    `` $kind $slot (`path` $path^)? (`value` $value^)? (`fan_in` $fan_in^)?
    (`seed` $seed^)? attr-dict
  }];
}

def L0UOp_IngestOp : L0UOp_PlanItem<"ingest", [
    Symbol, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a host-side batch reader: decode, shuffle, gather a batch";
  let description = [{
    ```mlir
    l0uop.ingest @load_data.read0 into [@load_data.images, @load_data.labels]
        from ["/data/train-images-idx3-ubyte.gz",
              "/data/train-labels-idx1-ubyte.gz"]
        format "idx" batch 128 shuffle drop_last seed 0
    ```
    The L0 form of an L1 `read_batch` (the spec's "Data Ingestion":
    storage → decode (CPU) → host memory → batch → staging). Before the
    first step the runtime decodes every file (the host-side decoder
    named by `format`; `idx` is the IDX format, gzip'd or raw), checks
    that the files agree on the sample count and that each sample has the
    shape of its slot's trailing dimensions; every epoch it draws the
    sample order (a seeded permutation under `shuffle`, the file order
    otherwise); at the start of each step it gathers the step's batch into
    the slots, one file per slot, in order. The slots are host memory and
    their leading dimension is the batch. `drop_last` drops a last
    partial batch; without it the last batch is padded (zero samples,
    label 255) and counted as partial. `classes [0, 10]` (one entry per
    slot, 0: none) bounds a label field: the runtime rejects a file with a
    value outside `[0, classes)` before training, naming the file and the
    sample (L1 → L0 takes the bound from the `one_hot` that reads the
    field).

    A slot that a kernel reads through a reshape is stored flat (one
    dimension of batch × sample elements); `ranks [3, 1]` then gives the
    IDX rank of each slot's file (1 + the sample's non-unit dimensions),
    which the flat slot no longer shows.

    `format "text"` reads the bytes of a plain-text file: every slot is
    `[batch, N] x ui8`, and sample `k` of a slot is the N bytes at
    `k * stride + shift` (`stride` defaults to 1; `shifts`, one entry per
    slot, to 0, each 0 or 1), so sample `k` of every slot lies in the
    window of N + 1 bytes at `k * stride`. The file's first 90% is the
    training split and its last 10% the validation split; a missing or
    empty file, or one whose validation split is shorter than a window, is
    rejected before training, naming the file.

    `sharded` (data parallel: the plan's `ranks` > 1): `batch` is one
    rank's slice of the global batch. Every rank draws the same order;
    step `i` of rank `r` of `N` reads the samples at positions
    `[(i N + r) batch, (i N + r + 1) batch)` of it.

    ```mlir
    l0uop.ingest @load_data.read0 into [@load_data.bytes, @load_data.bytes_next]
        from ["corpus.txt", "corpus.txt"] format "text" batch 32 shuffle
        drop_last seed 0 shifts [0, 1]
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       FlatSymbolRefArrayAttr:$slots,
                       StrArrayAttr:$paths,
                       StrAttr:$format,
                       L0UOp_I64Attr:$batch,
                       UnitAttr:$shuffle,
                       UnitAttr:$drop_last,
                       L0UOp_I64Attr:$seed,
                       OptionalAttr<DenseI64ArrayAttr>:$classes,
                       OptionalAttr<DenseI64ArrayAttr>:$ranks,
                       OptionalAttr<DenseI64ArrayAttr>:$shifts,
                       OptionalAttr<L0UOp_I64Attr>:$stride,
                       UnitAttr:$sharded);
  let assemblyFormat = [{
    $sym_name `into` $slots `from` $paths `format` $format `batch` $batch
    (`shuffle` $shuffle^)? (`drop_last` $drop_last^)? (`sharded` $sharded^)? `seed` $seed
    (`classes` $classes^)? (`ranks` $ranks^)? (`shifts` $shifts^)?
    (`stride` $stride^)? attr-dict
  }];
  let extraClassDeclaration = [{
    /// The IDX rank of a file of samples of `sampleShape`: 1 (the sample
    /// count) + the sample's non-unit dimensions (a [1] label is a 1-D file).
    static int64_t fileRank(::llvm::ArrayRef<int64_t> sampleShape);
  }];
}

def L0UOp_ReportOp : L0UOp_PlanItem<"report", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a named scalar the runtime reads after each step";
  let description = [{
    ```mlir
    l0uop.report "loss" @transfer_grads.tx0
    ```
    The L0 form of an L1 `report`: after each step the runtime reads the
    f32 slot (a device slot through a copy back to the host) and hands it
    to the training loop under its name. The
    metrics the loop knows are scalars: `loss` feeds progress lines and the
    epoch line's mean loss, `correct` counts argmax hits for test accuracy.
  }];
  let arguments = (ins StrAttr:$name, FlatSymbolRefAttr:$slot);
  let assemblyFormat = "$name $slot attr-dict";
}

//===----------------------------------------------------------------------===//
// UOps
//===----------------------------------------------------------------------===//

class L0UOp_UOp<string mnemonic, list<Trait> traits = []>
    : L0UOp_Op<mnemonic, !listconcat(traits, [L0UOp_InUOpScope])>;

// The UOps that print as `%r = l0uop.<op> %a, %b : dtype` when their
// operand types follow from the dtype, and as a function type otherwise.
// `sig` names how (UOpSig in L0UOpOps.cpp), `arity` is the operand count
// (-1: two or more), `domain` the element types allowed (Numeric, Float,
// Int). All type and arity errors are row L0.1.
class L0UOp_SrcOp<string mnemonic, string sig, int arity, string domain,
                  list<Trait> traits = []>
    : L0UOp_UOp<mnemonic, traits> {
  let arguments = (ins Variadic<AnyType>:$src);
  let results = (outs AnyType:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::mlir::ParseResult $cppClass::parse(::mlir::OpAsmParser &parser,
                                         ::mlir::OperationState &result) {
      return parseSrcUOp(parser, result, UOpSig::}] # sig # [{);
    }
    void $cppClass::print(::mlir::OpAsmPrinter &p) {
      printSrcUOp(p, getOperation(), UOpSig::}] # sig # [{);
    }
    ::llvm::LogicalResult $cppClass::verify() {
      return verifySrcUOp(getOperation(), UOpSig::}] # sig # [{, }] # arity #
      [{, Domain::}] # domain # [{);
    }
  }];
}

// Memory.
def L0UOp_LoadOp : L0UOp_SrcOp<"load", "Load", 1, "Any", [MemoryEffects<[MemRead]>]> {
  let summary = "LOAD: read a value (or a vector of lanes) through a pointer";
  let description = [{
    ```mlir
    %v = l0uop.load %p : f32
    %q = l0uop.load %p : vector<4xf32>   // four consecutive elements
    ```
  }];
}

def L0UOp_StoreOp : L0UOp_UOp<"store", [MemoryEffects<[MemWrite]>]> {
  let summary = "STORE: write a value (or a vector of lanes) through a pointer";
  let description = [{
    ```mlir
    l0uop.store %p, %v : f32
    ```
    A STORE roots the UOp DAG; it may only reach the kernel's outputs.
  }];
  let arguments = (ins Variadic<AnyType>:$src);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def L0UOp_IndexOp : L0UOp_UOp<"index", [Pure]> {
  let summary = "INDEX: the address of an element of a buffer";
  let description = [{
    ```mlir
    %p = l0uop.index %w[%k, %j] : !l0uop.buf<784x256xf32>
    ```
    One `index` per dimension. Row L0.1 rejects an index that provably
    leaves the buffer: each index's value range is computed from constants,
    RANGE bounds and ADD/MUL/DIV/MOD/MAX/NEG/CAST over them, and must stay in
    `[0, extent)`.
  }];
  let arguments = (ins AnyType:$buffer, Variadic<AnyType>:$indices);
  let results = (outs AnyType:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

// Arithmetic.
def L0UOp_AddOp : L0UOp_SrcOp<"add", "Same", 2, "Numeric", [Pure]> {
  let summary = "ADD: a + b";
  let description = [{
    ```mlir
    %r = l0uop.add %a, %b : f32
    ```
    Operands and result share the dtype (scalar or vector).
  }];
}
def L0UOp_MulOp : L0UOp_SrcOp<"mul", "Same", 2, "Numeric", [Pure]> {
  let summary = "MUL: a * b";
  let description = [{
    ```mlir
    %r = l0uop.mul %a, %b : vector<4xf32>
    ```
    Operands and result share the dtype.
  }];
}
def L0UOp_MulAccOp : L0UOp_SrcOp<"mulacc", "Same", 3, "Numeric", [Pure]> {
  let summary = "MULACC: a * b + c (one rounding where the target fuses it)";
  let description = [{
    ```mlir
    %r = l0uop.mulacc %a, %b, %c : f32
    ```
    Selected to `fma.rn.f32` on PTX and `vfmadd` on x86.
  }];
}
def L0UOp_NegOp : L0UOp_SrcOp<"neg", "Same", 1, "Numeric", [Pure]> {
  let summary = "NEG: -a";
  let description = [{
    ```mlir
    %r = l0uop.neg %a : f32
    ```
  }];
}
def L0UOp_ReciprocalOp : L0UOp_SrcOp<"reciprocal", "Same", 1, "Float", [Pure]> {
  let summary = "RECIPROCAL: 1 / a";
  let description = [{
    ```mlir
    %r = l0uop.reciprocal %a : f32
    ```
    Floats only.
  }];
}
def L0UOp_MaxOp : L0UOp_SrcOp<"max", "Same", 2, "Numeric", [Pure]> {
  let summary = "MAX: the larger of a and b";
  let description = [{
    ```mlir
    %r = l0uop.max %a, %b : f32
    ```
    With a zero operand this is ReLU.
  }];
}
def L0UOp_ModOp : L0UOp_SrcOp<"mod", "Same", 2, "Int", [Pure]> {
  let summary = "MOD: a mod b on integers and indices";
  let description = [{
    ```mlir
    %r = l0uop.mod %i, %n : index
    ```
    Integers and indices only; INDEX bounds use `x mod n < n`.
  }];
}
def L0UOp_DivOp : L0UOp_SrcOp<"div", "Same", 2, "Int", [Pure]> {
  let summary = "DIV: a / b on integers and indices, rounded toward zero";
  let description = [{
    ```mlir
    %q = l0uop.div %i, %n : index
    ```
    Integers and indices only (floats divide by multiplying with a
    RECIPROCAL). With MOD it splits a linear index into the coordinates of
    a row-major shape: a reshape read through a transpose or a broadcast
    indexes `(i div s) mod n`. INDEX bounds use `x div n <= max(x) div n`
    for a constant `n > 0` and `x >= 0`.
  }];
}

// Compare.
def L0UOp_CmpLtOp : L0UOp_SrcOp<"cmplt", "Compare", 2, "Numeric", [Pure]> {
  let summary = "CMPLT: a < b, an i1 (or vector of i1)";
  let description = [{
    ```mlir
    %c = l0uop.cmplt %a, %b : f32   // operands f32, result i1
    ```
  }];
}
def L0UOp_CmpNeOp : L0UOp_SrcOp<"cmpne", "Compare", 2, "Numeric", [Pure]> {
  let summary = "CMPNE: a != b, an i1 (or vector of i1)";
  let description = [{
    ```mlir
    %c = l0uop.cmpne %i, %j : index   // operands index, result i1
    ```
  }];
}
def L0UOp_WhereOp : L0UOp_SrcOp<"where", "Select", 3, "Any", [Pure]> {
  let summary = "WHERE: c ? a : b";
  let description = [{
    ```mlir
    %r = l0uop.where %c, %a, %b : f32   // %c : i1
    ```
  }];
}

// Transcendental.
def L0UOp_Exp2Op : L0UOp_SrcOp<"exp2", "Same", 1, "Float", [Pure]> {
  let summary = "EXP2: 2^a";
  let description = [{
    ```mlir
    %r = l0uop.exp2 %a : f32
    ```
    Floats only; `exp(x)` is `exp2(x * log2(e))`. A result below the
    type's smallest normal may be flushed to zero: both lowerings do (the
    GPUs' `ex2.approx.ftz`; on the host, so that the vector math library
    keeps to its fast path for inputs such as a masked score's `-inf`).
  }];
}
def L0UOp_Log2Op : L0UOp_SrcOp<"log2", "Same", 1, "Float", [Pure]> {
  let summary = "LOG2: log2(a)";
  let description = [{
    ```mlir
    %r = l0uop.log2 %a : f32
    ```
    Floats only.
  }];
}
def L0UOp_SinOp : L0UOp_SrcOp<"sin", "Same", 1, "Float", [Pure]> {
  let summary = "SIN: sin(a)";
  let description = [{
    ```mlir
    %r = l0uop.sin %a : f32
    ```
    Floats only.
  }];
}
def L0UOp_SqrtOp : L0UOp_SrcOp<"sqrt", "Same", 1, "Float", [Pure]> {
  let summary = "SQRT: sqrt(a)";
  let description = [{
    ```mlir
    %r = l0uop.sqrt %a : f32
    ```
    Floats only.
  }];
}

// Control.
def L0UOp_RangeOp : L0UOp_UOp<"range"> {
  let summary = "RANGE: open an iteration space";
  let description = [{
    ```mlir
    %k = l0uop.range 0 to 784 : index                   // a loop
    %i = l0uop.range 0 to 32768 over global_x : index   // one thread each
    %j = l0uop.range 0 to 256 step 4 : index
    ```
    Yields `lower, lower + step, ...` below `upper`; the ops up to the
    matching `l0uop.end` run once per value. `over` maps the range onto
    the launch: `global_a` (blockIdx·blockDim + threadIdx along a),
    `group_a` (blockIdx), `local_a` (threadIdx); the launch must cover the
    range and threads past it are masked off. The default is `loop`.
  }];
  let arguments = (ins L0UOp_I64Attr:$lower, L0UOp_I64Attr:$upper,
                       DefaultValuedAttr<L0UOp_I64Attr, "1">:$step,
                       DefaultValuedAttr<L0UOp_RangeKindAttr,
                                         "RangeKind::loop">:$kind);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $lower `to` $upper (`step` $step^)? (`over` `` $kind^)? attr-dict
    `:` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Iterations, 0 for an empty range.
    int64_t getTripCount();
    /// The last value the range takes (only when getTripCount() > 0).
    int64_t getLastValue();
  }];
}

def L0UOp_EndOp : L0UOp_UOp<"end"> {
  let summary = "END: close a RANGE";
  let description = [{
    ```mlir
    l0uop.end %k
    ```
    Closes the innermost open RANGE, which must be the one named.
  }];
  let arguments = (ins Index:$range);
  let assemblyFormat = "$range attr-dict";
}

def L0UOp_IfOp : L0UOp_UOp<"if"> {
  let summary = "IF: run the ops up to the matching ENDIF when the condition holds";
  let description = [{
    ```mlir
    l0uop.if %c
    ...
    l0uop.endif
    ```
  }];
  let arguments = (ins I1:$condition);
  let assemblyFormat = "$condition attr-dict";
}

def L0UOp_EndIfOp : L0UOp_UOp<"endif"> {
  let summary = "ENDIF: close the innermost IF";
  let description = [{
    Closes the innermost open IF; a RANGE opened after the IF must be
    closed first.
  }];
  let assemblyFormat = "attr-dict";
}

def L0UOp_BarrierOp : L0UOp_UOp<"barrier"> {
  let summary = "BARRIER: all threads of a block meet here";
  let description = [{
    Must be reached by every thread of the block: never under an IF.
  }];
  let assemblyFormat = "attr-dict";
}

// Type.
def L0UOp_ConstOp : L0UOp_UOp<"const", [ConstantLike, Pure,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "CONST: an integer, float or index constant";
  let description = [{
    ```mlir
    %z = l0uop.const 0.0 : f32
    %n = l0uop.const 784 : index
    ```
  }];
  let arguments = (ins TypedAttrInterface:$value);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$value attr-dict";
  let hasVerifier = 1;
}

def L0UOp_CastOp : L0UOp_UOp<"cast", [Pure]> {
  let summary = "CAST: numeric conversion between dtypes";
  let description = [{
    ```mlir
    %f = l0uop.cast %i : index to f32
    ```
  }];
  let arguments = (ins AnyType:$src);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `to` type($result)";
  let hasVerifier = 1;
}

def L0UOp_BitcastOp : L0UOp_UOp<"bitcast", [Pure]> {
  let summary = "BITCAST: reinterpret the bits of a value";
  let description = [{
    ```mlir
    %b = l0uop.bitcast %f : f32 to i32
    ```
    Both sides have the same number of bits.
  }];
  let arguments = (ins AnyType:$src);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `to` type($result)";
  let hasVerifier = 1;
}

def L0UOp_VectorizeOp : L0UOp_SrcOp<"vectorize", "Vectorize", -1, "Numeric", [Pure]> {
  let summary = "VECTORIZE: build a vector from scalars";
  let description = [{
    ```mlir
    %v = l0uop.vectorize %a, %b, %c, %d : f32   // vector<4xf32>
    ```
  }];
}

def L0UOp_GepOp : L0UOp_UOp<"gep", [Pure]> {
  let summary = "GEP: extract one lane of a vector";
  let description = [{
    ```mlir
    %e = l0uop.gep %v[2] : vector<4xf32> -> f32
    ```
  }];
  let arguments = (ins AnyType:$src, L0UOp_I64Attr:$lane);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $src `[` $lane `]` attr-dict `:` type($src) `->` type($result)
  }];
  let hasVerifier = 1;
}

// Special.
def L0UOp_WmmaOp : L0UOp_UOp<"wmma", [Pure]> {
  let summary = "WMMA: tile matrix multiply-accumulate D = A·B + C";
  let description = [{
    ```mlir
    %d = l0uop.wmma %a, %b, %c : vector<16x16xf16>, vector<16x16xf16>,
                                 vector<16x16xf32> -> vector<16x16xf32>
    ```
    A is M×K, B is K×N, C and D are M×N; A and B share an element type,
    C and D another.
  }];
  let arguments = (ins AnyType:$a, AnyType:$b, AnyType:$c);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $c attr-dict `:` type($a) `,` type($b) `,` type($c) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def L0UOp_ReduceOp : L0UOp_UOp<"reduce", [Pure]> {
  let summary = "REDUCE: fold a value over a closed RANGE";
  let description = [{
    ```mlir
    %k = l0uop.range 0 to 784 : index
      ...
      %p = l0uop.mul %a, %b : f32
    l0uop.end %k
    %dot = l0uop.reduce add %p over %k init %bias : f32
    ```
    `init op v(k0) op v(k1) ...` over every iteration of the loop RANGE
    `%k`. It sits after `l0uop.end %k`, in the scope that encloses the range,
    and is the one UOp that may use a value of the closed range's body. A
    reduction of a product with `add` is what instruction selection turns
    into MULACC (fma) in the loop.
  }];
  let arguments = (ins L0UOp_ReduceKindAttr:$kind, AnyType:$value,
                       AnyType:$range, AnyType:$init);
  let results = (outs AnyType:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def L0UOp_CustomOp : L0UOp_UOp<"custom", [
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "CUSTOM: a named intrinsic or an escape hatch kernel";
  let description = [{
    ```mlir
    %g = l0uop.custom "fused_gelu.ptx"(%x) : (f32) -> f32
    l0uop.custom "scatter_add"(%idx, %out) : (!l0uop.ptr<i32>, !l0uop.buf<10xf32>) -> ()
    ```
    The target of `#[l0::kernel("fused_gelu.ptx")]`: an opaque computation
    with a typed boundary. Operands may be buffers (the escape reads and
    writes what it is given); results are scalars or vectors.
  }];
  let arguments = (ins StrAttr:$callee, Variadic<AnyType>:$src);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = [{
    $callee `(` $src `)` attr-dict `:` functional-type($src, $results)
  }];
  let hasVerifier = 1;
}

#endif // SYNPL_DIALECT_L0UOP_OPS_TD
