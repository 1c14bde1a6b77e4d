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

def L0BlockReduce : Pass<"synpl-l0-block-reduce", "mlir::ModuleOp"> {
  let summary = "Spread each row of a reduction kernel over a block of threads (GPU)";
  let description = [{
    L1 -> L0 emits a reduction as one thread per output row folding the
    reduced axis in a loop: the right shape for a CPU, a slow one for a GPU
    (128 rows of 256 elements are 128 threads of one block, each walking
    256 loads in turn). For each kernel of the shape

    ```mlir
    %r = l0uop.range 0 to R over local_x : index   // any parallel RANGE
      ... pure ops ...
      %k = l0uop.range 0 to K : index              // a loop, flat body
        ...
      l0uop.end %k
      %s = l0uop.reduce add %v over %k init %i : f32
      ... anything but RANGEs and BARRIERs (the stores) ...
    l0uop.end %r
    ```

    with K >= `min-loop` (or the same without the parallel RANGE: a
    whole-buffer reduction by one thread, which is one row), the pass makes
    each row a block (`group_x`) of T =
    min(next power of two >= K, `threads`) threads (`local_x`): thread t
    folds iterations t, t + T, ... (the identity past the end), writes its
    partial result to a block-shared buffer, the block halves them in
    log2(T) barrier-separated steps, and thread 0 combines the total with
    the REDUCE's init and runs the rest of the row. `add`, `mul` and `max`
    REDUCEs of scalars are taken; several REDUCEs over the same loop share
    the halvings. The launch becomes grid(R) block(T) with the shared
    buffers' bytes as `shared_mem`.

    The combination order changes from a left fold to a tree: float results
    differ in their last bits. By default only device kernels (every slot in
    a pool `on device`) are rewritten: on a CPU the loop is the better form.

    ```
    synpl-opt plan.mlir --synpl-l0-block-reduce
    synpl-opt plan.mlir --synpl-l0-block-reduce="threads=128 device-only=false"
    ```
  }];
  let options = [
    Option<"maxThreads", "threads", "int64_t", /*default=*/"256",
           "Most threads per block (a power of two, 32 to 1024)">,
    Option<"minLoop", "min-loop", "int64_t", /*default=*/"32",
           "Loops shorter than this stay one thread per row">,
    Option<"deviceOnly", "device-only", "bool", /*default=*/"true",
           "Rewrite only kernels whose slots are all in device memory">,
    Option<"summary", "summary", "bool", /*default=*/"false",
           "Remark how many kernels were rewritten">
  ];
  let dependentDialects = ["synpl::l0uop::L0UOpDialect"];
}

def L1BucketAllReduce : Pass<"synpl-l1-bucket-all-reduce", "mlir::ModuleOp"> {
  let summary = "Merge adjacent l1.all_reduce ops of a stage into gradient buckets";
  let description = [{
    The L1 rewrite "communication optimization" for data parallelism. The
    L2 -> L1 placement writes one `l1.all_reduce` per gradient, the last
    layers' first (the order the backward pass produces them). A message
    per tensor pays a collective's fixed cost once per tensor; one message
    for all of them cannot start before the last gradient is ready. This
    pass takes the middle road of PyTorch DDP's buckets: in every stage
    block, each run of adjacent `l1.all_reduce` ops with the same
    reduction is cut, in order, into buckets of at most `bucket-bytes`
    bytes (a buffer larger than that is a bucket of its own), and each
    bucket becomes one `l1.all_reduce` of its buffers. L1 -> L0 then
    starts each bucket's collective right after the last kernel that
    writes one of its buffers, so all but the last bucket overlap the rest
    of the backward pass.

    ```
    synpl-opt model.l1.mlir --synpl-l1-bucket-all-reduce=bucket-bytes=1048576
    ```

    The result verifies as its input did (the buffers, their types and
    their consumers are kept), and running the pass on its own output
    changes nothing: a bucket was closed because the next buffer did not
    fit, so no two of them fit together.
  }];
  let options = [
    Option<"bucketBytes", "bucket-bytes", "uint64_t", /*default=*/"262144",
           "the most bytes one bucket carries (0: one bucket per run)">
  ];
  let dependentDialects = ["synpl::l1::L1Dialect"];
}

def L1FuseAcrossReshapes : Pass<"synpl-l1-fuse-across-reshapes", "mlir::ModuleOp"> {
  let summary = "Move reshapes across cheap elementwise ops so that the ops fuse with their producer's or their readers' kernel";
  let description = [{
    L1 -> L0 fuses elementwise ops with a kernel only in that kernel's
    iteration space, and layers reshape between spaces: a convolution's
    `[N*H*W, C]` product becomes `[N, H, W, C]` for its ReLU, and a max
    pool's gradient, formed per window `[N, H/2, 2, W/2, 2, C]`, becomes
    `[N, H, W, C]` again for the ReLU's gradient. This pass moves the
    reshape to the side where the op has a kernel to join. Two rules, both
    for cheap elementwise ops (no transcendental, no division: a GELU's
    tanh in its linear layer's epilogue measured slower on the character
    model than as a kernel of its own):

    - **Into the producer's shape.** The readers of a reshape of a value
      some kernel computes (not a value formed from views alone, below)
      move together or not at all: each reads only reshapes of values of
      that shape, constants and the reshape's other readers. They run in
      the value's shape and their results are reshaped instead:

      ```mlir
      %r = l1.reshape %y : tensor<100352x32xf32> -> tensor<128x28x28x32xf32>
      %a = l1.max %r, %zero : tensor<128x28x28x32xf32>, tensor<128x28x28x32xf32> -> tensor<128x28x28x32xf32>
      ```

      becomes

      ```mlir
      %z = l1.const 0.0 : tensor<100352x32xf32>
      %m = l1.max %y, %z : tensor<100352x32xf32>, tensor<100352x32xf32> -> tensor<100352x32xf32>
      %a = l1.reshape %m : tensor<100352x32xf32> -> tensor<128x28x28x32xf32>
      ```

      so the ReLU and its mask join the convolution's matmul epilogue.
      (All or none: where one reader stayed, the value would be stored for
      it anyway, and the readers that moved would store intermediates the
      kernel after them kept in registers.)
    - **Into the readers' shape.** An op read only through one reshape,
      by elementwise ops, and formed through cheap ops from views,
      constants, arguments and state alone (no kernel would hand it over
      in registers) runs in the reshape's shape over reshapes of its
      operands, and joins its readers' kernel: the max pool's gradient
      `mask * broadcast(share)` in the select of the ReLU's gradient.

    Repeated until nothing moves; a reshape of a reshape becomes one
    reshape (none, where it gets back to the source's shape), and reshapes
    and constants left without readers are erased (L1.8). Row-major
    reshapes keep every element's position, so the values are those of
    the input bit for bit. The two rules never undo each other: the first
    needs a value a kernel computes, the second one formed from views.
    Only graphs on `x86_64` nodes are rewritten (the CUDA and IPU sinks
    choose their own launch shapes). Idempotent.

    With `summary`, a remark per graph counts the ops moved each way.
  }];
  let options = [
    Option<"summary", "summary", "bool", /*default=*/"false",
           "Remark how many ops each graph moved">
  ];
  let dependentDialects = ["synpl::l1::L1Dialect"];
}

def L1SplitReductions : Pass<"synpl-l1-split-reductions", "mlir::ModuleOp"> {
  let summary = "Split long reductions with small results into partials over a parallel dimension";
  let description = [{
    A weight gradient `dW = Xᵀ·dY` contracts over every example (and every
    pixel of a convolution) into a small matrix, and a bias gradient sums
    the same rows into one vector. Lowered as written, such a kernel has
    few independent outputs to spread over the node's cores (a bias
    gradient has one), and every thread that shares a matmul's rows streams
    the whole contracted operand. This pass splits the reduction in two,
    as split-K does for a GEMM:

    ```mlir
    %g = l1.matmul %xt, %dy : tensor<64x25088xf32>, tensor<25088x288xf32> -> tensor<64x288xf32>
    ```

    becomes S partial products over S slices of the contraction, a batched
    matmul whose batch dimension runs in parallel, then their sum:

    ```mlir
    %a = l1.reshape %xt : tensor<64x25088xf32> -> tensor<64x2x12544xf32>
    %at = l1.transpose %a perm [1, 0, 2] : tensor<64x2x12544xf32> -> tensor<2x64x12544xf32>
    %b = l1.reshape %dy : tensor<25088x288xf32> -> tensor<2x12544x288xf32>
    %p = l1.matmul %at, %b : tensor<2x64x12544xf32>, tensor<2x12544x288xf32> -> tensor<2x64x288xf32>
    %g = l1.reduce_sum %p axis 0 : tensor<2x64x288xf32> -> tensor<64x288xf32>
    ```

    A column reduction (`l1.reduce_sum`, `reduce_mean` or `reduce_max`
    over an axis that is not the last) is split the same way: the axis
    becomes `[S, K/S]`, reduced first over `K/S` (S independent rows of
    partials), then over `S`. The reshapes and transposes are views; the
    only new buffer is the partials'.

    S is searched per op (boundary `L1 split @<graph>`, shown by
    `--synpl-search-report`): the candidates are the powers of two up to
    `max-split` that divide the reduced extent, and the cost model prices
    each on the tensor graph's host node (its `cores`; `units` overrides):
    the bytes each core streams (a matmul thread reads its share of the
    row operand and the whole lane operand of every slice its rows cover),
    its share of the FLOPs, the partials written and read back, and one
    more kernel. S = 1 (no split) is a candidate,
    so a reduction the split does not speed up is left as it is. Only a
    reduction of at least `min-length` elements is considered, and every
    slice keeps at least `min-slice`.

    The sum is reassociated (the slices' partial sums are added last), so
    results differ from the unsplit order by rounding; they do not depend
    on the number of threads that run the program. `reduce_max` and
    `reduce_mean` (equal slices) are exact up to that rounding.
    Only graphs on `x86_64` nodes are rewritten: a GPU's split-K prices
    thread blocks, not cores, and an IPU's tiles place their own
    reductions.

    ```
    synpl-opt model.l1.mlir --synpl-l1-split-reductions='units=16'
    ```

    With `summary`, a remark at each split op names S and the search's
    cost terms.
  }];
  let options = [
    Option<"units", "units", "int64_t", /*default=*/"0",
           "Cores to price for (0: the compute node's cores)">,
    Option<"minLength", "min-length", "int64_t", /*default=*/"4096",
           "Reductions shorter than this are not split">,
    Option<"minSlice", "min-slice", "int64_t", /*default=*/"512",
           "The shortest slice of a split reduction">,
    Option<"maxSplit", "max-split", "int64_t", /*default=*/"64",
           "The most slices (a power of two)">,
    Option<"summary", "summary", "bool", /*default=*/"false",
           "Remark the split chosen at each split op">
  ];
  let dependentDialects = ["synpl::l1::L1Dialect"];
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

def L0KernelWork : Pass<"synpl-l0-kernel-work", "mlir::ModuleOp"> {
  let summary = "Report the work of every l0uop.kernel: flops, bytes, intensity";
  let description = [{
    Emits, as a remark at each `l0uop.kernel` with UOps, the work counted
    statically over its body (each UOp times the trip counts of the RANGEs
    around it, an IF counted as taken):

    ```
    remark: kernel @fwd.k0_matmul: 51380224 flop, 1118208 B touched,
            102760448 B accessed, 45.95 flop/B
    ```

    * flop: float arithmetic per lane (ADD MUL NEG RECIPROCAL MAX DIV EXP2
      LOG2 SIN SQRT one, MULACC two, a float REDUCE one per iteration of
      its RANGE, WMMA 2·M·N·K);
    * B touched: the bytes of the buffers the kernel binds, what it moves
      at least (each once);
    * B accessed: what its LOADs and STOREs move with no reuse;
    * flop/B: flop over B touched, the arithmetic intensity a roofline
      places the kernel by (`bench/roofline.py` compares each kernel's
      measured time with it).

    A kernel with CUSTOM UOps, or a user kernel, is marked `(partial: user
    code not counted)`. Read-only.

    ```
    synpl-opt examples/mnist/mnist.l0.mlir --synpl-l0-kernel-work -o /dev/null
    ```
  }];
}

def L0KernelEffort : Pass<"synpl-l0-kernel-effort", "mlir::ModuleOp"> {
  let summary = "Choose each host kernel's optimization effort from its share of the work";
  let description = [{
    Sets `opt_level` on the host kernels of every `l0uop.plan`: the kernels
    that together take `hot-share` of the plan's estimated time get
    `hot-level`, the rest `light-level`. A kernel's time is estimated from
    its work (`--synpl-l0-kernel-work`) as max(flop, `balance` × B touched)
    flop-equivalents per launch: a matmul is bound by its arithmetic, an
    elementwise kernel by the bytes it moves. Kernels with the same code
    (compiled into one function) count as one, with their estimates added,
    and get one level.

    Kernels with an `opt_level` already (set by hand), device kernels (the
    level is a host code generation hint) and user kernels (compiled as
    their file says) are left as they are. Kernels are ranked by their
    estimate, the largest first; ties keep the plan's order. The light
    ones are the cheapest, as many as together take at most 1 - `hot-share`
    of the estimated time when they run `light-slowdown` times slower than
    their estimate (LLVM's O1 does not vectorize, so a reduction over a row
    that O2 runs as 8-lane vector code runs as a chain of scalar adds:
    about 10 times slower, measured on the Fashion-MNIST step's LayerNorm
    statistics). With `hot-share=1` every kernel is hot, with
    `hot-share=0` every kernel light.

    ```
    synpl-opt plan.l0.mlir --synpl-l0-kernel-effort='hot-share=0.9 light-level=1'
    ```

    LLVM's O1 does not vectorize loops, so an elementwise kernel at O1 or
    O0 can run several times slower than at O2/O3: `light-level` is for
    kernels whose time does not matter.
  }];
  let options = [
    Option<"hotLevel", "hot-level", "unsigned", /*default=*/"3",
           "The level of the kernels that take hot-share of the time (0-3)">,
    Option<"lightLevel", "light-level", "unsigned", /*default=*/"1",
           "The level of the others (0-3)">,
    Option<"hotShare", "hot-share", "double", /*default=*/"0.99",
           "The share of the plan's estimated time (0 to 1) that the hot "
           "kernels take together">,
    Option<"balance", "balance", "double", /*default=*/"4.0",
           "Flop per byte at which a kernel turns from memory- to "
           "compute-bound (the machine's balance)">,
    Option<"lightSlowdown", "light-slowdown", "double", /*default=*/"8.0",
           "How many times its estimate a light kernel is expected to take "
           "(at least 1)">,
  ];
  let statistics = [
    Statistic<"numHot", "hot-kernels", "Kernels given the hot level">,
    Statistic<"numLight", "light-kernels", "Kernels given the light level">,
  ];
  let dependentDialects = ["synpl::l0uop::L0UOpDialect"];
}

#endif // SYNPL_TRANSFORMS_PASSES_TD
