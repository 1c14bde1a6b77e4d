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
// L2ToL1
//===----------------------------------------------------------------------===//

def L2ToL1 : Pass<"synpl-l2-to-l1", "mlir::ModuleOp"> {
  let summary = "place an L2 method on an L1 system: the L1 training program";
  let description = [{
    Input: a module holding the L3 program (`l3.data`, `l3.model`,
    `l3.loss`, `l3.goal minimize(<loss>)`), one `l2.methods` for the model,
    and one `l1.system` (the target hardware). Output: a standalone L1
    program that trains the model on that system; the l3 and l2 ops are
    gone. The spec's three things happen here:

    * **Backward expansion.** `autodiff(mode: reverse)` becomes one
      `l1.tensor_graph @forward_backward`: forward pass, the L3 loss and the
      explicit gradient of every parameter, plus `correct` (argmax hits)
      for a classifier (include/synpl/Conversion/L2ToL1/TrainingGraph.h).
    * **Update materialisation.** The update chain (`sgd`, `adam`, `muon`,
      `lion`, `schedule`, `gradient_clip`, `ema`, `per_param`) becomes the
      actor `@model_state`: the parameters as state (with their inits), the
      optimizer state (moments, `step`, EMA shadows, `total_steps` with
      init `planned_steps` for a decaying schedule), the window `@weights`
      the graph reads, and the handler `@GradUpdate` with explicit tensor
      arithmetic.
    * **Data binding.** Every L3 data field the model or the loss reads
      becomes an `l1.field` of the L3 domain's type, `format idx`, at the
      storage node named by the field's `l1.at` attribute (else one the
      search picks) with the path of its `l1.path` attribute (else `""`:
      bound when the program runs, by field name in `--data DIR`).

    Placement is a search (`--synpl-search-report` prints it): the compute
    node of the graph and the actor, the host node of the stages, the
    staging memory node and `pipeline_depth` in {1, 2, 3}; filtered by the
    `#[l1::on(node)]` hatches on layers, the isa, topology paths and memory
    capacity; scored by transfer time, compute time, memory pressure and
    pipeline bubble (docs/l2-to-l1.md). The stages are `@load_data`
    (`l1.read_batch` of `epoch_shuffle(batch, drop_last)`, shuffled, seed
    0), `@transfer_to_<node>` when the graph's memory is not the staging
    memory, and the report stage (`l1.report` of "loss" and "correct",
    `l1.send` of the gradients to `@model_state::@GradUpdate`); pipelines
    `@train` and `@grad_return`; one `l1.schedule`.

    Data-parallel replicas may shard the update (ZeRO stage 1): each large
    parameter whose first dimension the replicas divide gets its gradient
    by `l1.reduce_scatter` instead of `l1.all_reduce`, its optimizer state
    as the replica's block of rows (`shard 0`), and the handler updates
    that block and gathers the replicas' blocks back (`l1.all_gather`).
    `update-sharding`: `auto` lets the search score both forms, `on`
    shards whenever a parameter qualifies, `off` never. `graph-isa` keeps
    only the placements whose tensor graph runs on a node of that isa (a
    small model may run faster on the host than on a GPU, whose kernels
    cost a launch each; a compile for the GPU says so).

    A method, hatch or field the pass cannot lower fails the pass with a
    located error (`lowered N of M methods ...; not lowered: ...`), leaving
    the module as it was.
  }];
  let options = [
    Option<"updateSharding", "update-sharding", "std::string", /*default=*/"\"auto\"",
           "data-parallel update sharding (ZeRO-1): auto (the search decides), on, off">,
    Option<"graphIsa", "graph-isa", "std::string", /*default=*/"\"\"",
           "place the tensor graph on a compute node of this isa only (cuda: what "
           "synplc --target=cuda sets); empty: any">
  ];
  let dependentDialects = ["::synpl::l1::L1Dialect"];
}

//===----------------------------------------------------------------------===//
// L3ToL2
//===----------------------------------------------------------------------===//

def L3ToL2 : Pass<"synpl-l3-to-l2", "mlir::ModuleOp"> {
  let summary = "search an L2 method for every L3 model";
  let description = [{
    The spec's L3 -> L2 lowering: for every `l3.model` that has no
    `l2.methods` yet, searches sample x architecture x backward x update
    with the search driver (synpl/Search/Search.h) and adds the best
    candidate as `l2.methods @<model>_method for @<model>` at the end of the
    module. The module must verify (the L3 rows) before the pass runs.

    * **Enumerate** (structured, never materialized): `epoch_shuffle(batch:
      64 | 128 | 256, drop_last: true)`; a chain of 1..`depth(n)` stages
      whose hidden widths are non-increasing powers of two from 8 up to
      `width(n)`, with `norm(layer)` or none after each hidden stage, `gelu`
      or `relu`, sequential or residual where consecutive widths agree;
      `flatten` first for inputs of rank > 1, `softmax` last for `dist(n)`;
      sequence inputs also get self-attention blocks (causal ones when the
      model is `causal`); an `autoregressive` model's chain is the cell of an
      `l2.recurrent` that feeds the output back `max_len` times. Backward:
      `autodiff(mode: reverse)`. Update: `schedule(warmup: 1000, decay:
      cosine, inner: adam(lr: 3e-4) | lion(lr: 1e-4) | sgd(lr: 1e-2))`. An
      escape hatch `#[l2::sample|backward|update(<method>)]` on the model
      replaces that axis by the method it names (missing arguments take
      documented defaults); a malformed hatch, or one that no architecture
      can take, is an error at the model that carries it.
    * **Filter** with the L2 verifiers: each candidate is built as a real
      `l2.methods` op in a scratch module and verified; a rejection is
      charged to the check its diagnostic names (shape, output-domain,
      depth, width, param_budget, causal, hint, backward, update,
      sample-data, acyclic, latency_budget, estimate).
    * **Score**: log2 of parameters, FLOPs per example per step and memory
      (l2::estimateResources), plus convergence priors (capacity, depth,
      normalisation, activation, batch, optimizer); see docs/l3-to-l2.md.
    * **Select** the lowest cost; `--synpl-search-report` prints the report.

    A model the grammar cannot serve (`equivariant(group)`, table inputs,
    ...) fails with `NoCandidates(not supported: ...)`; more than
    `max-candidates` candidates fails with `TooManyCandidates(<count>)`
    before anything is built; every candidate rejected fails with
    `NoCandidates`, naming the check that rejected the most.
  }];
  let dependentDialects = ["::synpl::l2::L2Dialect"];
  let options = [
    Option<"maxCandidates", "max-candidates", "uint64_t", /*default=*/"10000",
           "more candidates than this is TooManyCandidates (the spec's 10K)">,
    Option<"budgetMs", "budget-ms", "int64_t", /*default=*/"10000",
           "wall-clock budget of one model's search in milliseconds (<= 0: none)">,
    Option<"summary", "summary", "bool", /*default=*/"false",
           "remark, at the new l2.methods, what was chosen out of how many">,
    Option<"epochs", "epochs", "int64_t", /*default=*/"3",
           "epochs of the training loop the method carries (`train loop<epochs "
           "= N, evaluate = \"t10k\">`); 0: none (the runtime's default)">
  ];
}

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
      emitted as UOps. A kernel's last dimension runs over a block's
      threads (`local_x`), the leading ones over blocks; a copy kernel whose
      last dimension exceeds a block (1024) splits it into blocks of the
      largest divisor up to 1024 lanes (3136 = 4 x 784), its index
      `block * lanes + lane`.
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
           "remark, at the plan, its kernel count and pool capacities">,
    Option<"testPlantMiscompile", "test-plant-miscompile", "std::string",
           /*default=*/"\"\"",
           "for the differential fuzzer's self-test only: `join-through-view` "
           "lets an op join the kernel whose result it reads through a view "
           "(a transpose, broadcast or reshape), so that it reads elements the "
           "kernel has not computed yet -- a wrong program on purpose; any other "
           "non-empty value is an error">
  ];
}

//===----------------------------------------------------------------------===//
// L0ToLLVM
//===----------------------------------------------------------------------===//

def ConvertL0UOpToLLVM : Pass<"synpl-convert-l0uop-to-llvm", "mlir::ModuleOp"> {
  let summary = "Lower every l0uop.kernel to a host llvm.func (C ABI)";
  let description = [{
    Every `l0uop.kernel @k` of every `l0uop.plan @p` becomes

    ```mlir
    llvm.func @p_k(%buf0: !llvm.ptr {llvm.noalias, llvm.align = 64}, ...,
                   %begin: i64, %end: i64)
    ```

    one pointer per input, then per output buffer (in the kernel's order),
    then the half-open chunk `[begin, end)` of the kernel's *split range*
    that this call runs. The host runtime's parallel_for splits
    `[0, synpl.iterations)` (an attribute of the function, and
    `host_iterations` on the kernel) over its threads. A tiled kernel whose
    chunks each pack an operand also carries `synpl.grain` (and
    `host_grain`): a row block, the fewest iterations worth a chunk; the
    runtime then runs one chunk per thread instead of several, so the
    operand is packed once per thread.
    `llvm.align` is `min(64, pool alignment)` of the slot.

    **Split range.** The first top-level RANGE over a parallel axis
    (`global_*`, `group_*`, `local_*`); failing that, the first top-level
    loop RANGE that no REDUCE folds. `begin`/`end` count its iterations
    (value = lower + it·step), clamped to `[0, trip count)`. A kernel with
    no such range, or with a side effect (STORE, CUSTOM) outside it, is
    not splittable: `synpl.iterations` is 1 and a call with `begin < end`
    runs the whole kernel.

    **Lowering.** UOps become arith/math/scf/vector ops (loads and stores
    become `llvm.getelementptr` + `llvm.load`/`llvm.store` on the buffer
    pointers, index becomes i64; an i1 moves as the i8 0 or 1 it occupies, so
    that vectorized loops store byte vectors), RANGE/END nests to `scf.for`, IF/ENDIF to
    `scf.if`, a REDUCE to a loop-carried accumulator of its range's loop;
    then the upstream conversions (scf→cf, arith/math/vector/cf/ub→llvm,
    reconcile-unrealized-casts) finish the job. MULACC is `llvm.intr.fma`,
    LOG2/SIN/SQRT the LLVM intrinsics, EXP2 of f32 an inline polynomial
    (`inline-exp2`: n = roundeven(x), 2^(x-n) by Cephes' degree-6 exp2f
    polynomial, relative error below 2e-7, 2^n in the exponent bits; no
    call, so a vectorised loop keeps its registers) and of other types the
    intrinsic; results below the smallest normal are 0. WMMA an unrolled tile
    multiply-accumulate, VECTORIZE/GEP LLVM vector ops. Integer MAX, CMPLT
    and CAST are signed (an i1 source casts unsigned), MOD is the C
    remainder, float MAX is `llvm.intr.maximum`, CMPNE on floats is
    unordered (NaN != x).

    **BARRIER.** One host thread runs a whole chunk in program order, so a
    barrier outside the RANGEs that enumerate a block's threads is a no-op.
    Inside such a RANGE (`local_*` with more than one iteration, or
    `global_*` with more than one thread per block) the RANGE is split at
    each barrier directly in its body into one loop per phase: every
    thread finishes a phase before any starts the next, which is what the
    barrier promises; values a later phase reads from an earlier one go
    through per-thread stack arrays. Such a RANGE is never the split range
    (a block is not spread over host threads). A barrier nested in a loop
    inside that RANGE (it would need the loop interchanged with the
    threads), or between a REDUCE and its RANGE, is refused. Shared
    scratch buffers are stack allocations of the function (one block at a
    time per host thread). CUSTOM lowers the host
    intrinsics `host.tile_load(buf, i, j) -> vector<MxNxT>` and
    `host.tile_store(buf, i, j, tile)` (a 2-D tile at row i, column j of a
    2-D buffer); any other CUSTOM is refused.

    **Tiled kernels (matmul).** A kernel whose body is two nested parallel
    RANGEs -- the split range `i` around `j`, with at most straight-line
    code without STOREs before and between them (it runs again in every
    block) -- whose `j` body holds loop RANGEs `k` folded by REDUCEs plus
    straight-line elementwise code (no IF, BARRIER, CUSTOM, WMMA, vector
    dtypes or shared scratch) is vectorised over `j` and register-blocked
    over `i`: each chunk runs `for j-block of tile-lanes iterations { for
    i-block of tile-rows iterations { one k loop carrying rows x lanes
    accumulators, two k iterations per trip } }`, the rows left over
    after the full blocks in blocks of 4, 2 and 1 rows, the last `j`
    block with masked loads, stores, gathers and scatters. A kernel with
    fewer `i` iterations than a block has rows (a column sum over the
    batch has one) gives the idle rows' accumulators to more lanes
    instead: the block doubles its lanes while that many accumulators
    stay within 12 registers (64 lanes for one row of one REDUCE), so as
    many independent fma chains hide the latency.

    Every value of the `j` body is classified by how it depends on `j`:
    uniform (scalar; a load is one scalar load, broadcast where a vector
    needs it), affine index/pointer with a constant lane stride (stride 1:
    vector load/store; other strides: one scalar load per lane at a
    constant offset when every lane is live, else gather; scatter), or a
    vector of lanes. Values that do not depend on `i` are computed once per block
    and shared by its rows (the `B[k, j]` vector of a matmul). So are, in
    a batched matmul, the values that depend on `i` only through quotients
    `i / C` (`B[n, k, j]` at `n = i / rows`, attention's `K^T` of a batch
    and head): where the lane loads' quotients have a common divisor G of
    at least two row blocks, the rows run group by group (G rows each)
    and no block crosses a multiple of G. An `i1` is loaded from its byte
    and truncated, as the untiled lowering does. A load of
    the k loop that varies with `j` but not with `i`, addressed from `j`,
    `k` and constants alone, is packed once per lane block into a
    contiguous panel (k iterations x lanes, 64-byte aligned) that
    the row blocks read back with aligned vector loads: a strided
    `B[j, k]` (dY·W^T) is gathered once instead of per row block, and a
    `B[k, j]` with a large row pitch no longer walks one page per k (not
    when one row block takes all the rows: none would read it twice). A
    group-shared load of a k loop longer than 256 (the split-K partial
    products of `--synpl-l1-split-reductions`, `B[(s * K/S + k), j]` at
    `s = i / M`) is packed too, per group: a chunk then runs its rows
    group by group, each group packing its own panels with `i` at its
    first row (a shorter k, attention's head width, is read in place). When
    the body has one k loop, longer than 256 iterations, with no STORE
    before it, and a lane panel and a row block of its whole length
    (`k x (lanes + rows)` f32) would take more than 28 KiB (7/8 of a
    32 KiB L1D), that loop runs in blocks of at most 256 iterations (a
    16 KiB panel at 16 lanes); between blocks each row's accumulators wait
    in an array and the code after the loop runs after the last block.
    (At 16 lanes and 6 rows, k up to 325 runs whole: `A` is then read in
    place, not copied.) The rows
    of a chunk are swept in panels whose `A` rows (of one k block) fit a
    256 KiB share of L2, as even as whole row blocks allow, one taking up
    to an eighth more where that spares a panel. A chunk of several row
    panels packs `B` once: its first panel packs each lane block's panel
    of each k block into a slot of its own (in the order the panels are
    read), and its later panels read the slots, where they all fit 16 MiB
    (per thread; else every panel packs `B` again). Where a panel's waiting accumulators (every lane block's) fit
    1 MiB (or an eighth more, likewise), the k blocks run outside the lane
    blocks, and a
    load of the k loop that depends on `i` but not on `j`, addressed from
    `i`, `k` and constants alone in a buffer the kernel does not store to
    (the `A[i, k]` of a matmul), is copied per k block into a contiguous
    array (panel rows x k-block iterations) that every lane block
    reads, instead of every lane block reading the rows a whole `k` apart
    from the matrix. Where that load is adjacent along the rows and not
    along `k` (`A^T[i, k]`, as in a weight gradient `X^T dY`), each k
    iteration's rows already lie in order: the row blocks read it in place
    when its k iterations are at most 4 KiB apart, and otherwise the array
    is k-major (k-block iterations x panel rows), so that the copy reads
    and writes in order. Before the last k block's loop, each row block
    prefetches the lines that its code after the loop loads and stores
    (its output row, a bias), and every full row block prefetches its
    share of the next pack's lines into L2 (the next lane block's, or the
    next k block's; in a later row panel, the next slot's). These arrays
    live on the stack up to 32 KiB in all; larger ones (a wide layer's take MiBs) come from the runtime's
    per-thread kernel scratch: the function calls
    `ptr synpl_rt_kernel_scratch(i64 bytes)` (synpl/Runtime/Runtime.h) once
    per chunk and the module declares it, so such a kernel links with the
    host runtime.

    Semantics: a REDUCE add of a float MUL accumulates with
    `llvm.intr.fma` (MULACC, as the REDUCE's description allows: one
    rounding per step where the scalar lowering rounds the product too);
    every REDUCE still folds in k order per element, so no sum is
    reassociated. The threads of a grid carry no order (there is no
    barrier in such a kernel), so running them in another order is exact.
    A kernel not of this form, or one the tiled form cannot express (all
    lanes storing to one address, a lane-varying MOD), lowers as described
    above; `tile-lanes=0` turns the tiling off.

    All or nothing: on any UOp without a host lowering the pass fails with
    `lowered N of M ops; not lowered: <op> at <loc>: <why>` and leaves the
    module untouched. On success the functions are added to the module and,
    with `keep-plan` (the default), each kernel stays in its plan as data
    for the runtime -- its UOps replaced by the attributes `host_entry`
    (the function) and `host_iterations`; the plan's pools, slots,
    streams, syncs, transfers and inits are untouched. `keep-plan=false`
    erases the plans instead (for `synpl-translate --mlir-to-llvmir` of the
    kernels alone); it refuses while a plan still holds an `l0ctl.program`
    (run `--synpl-convert-l0ctl-to-llvm` first).

    **Shared code.** Kernels that compile to the same code -- equal bodies
    up to value names and locations, equal launch shapes, shared memory,
    buffer types and attributes, each buffer in a pool of the same space
    and alignment -- are lowered once:
    the first in program order gives the function its name and the others'
    `host_entry` names it too (the `shared-kernels` statistic counts
    them). The repeated blocks of a deep model (the same layer, norm and
    activation at the same shapes) cost one function each, not one per
    copy. `share-kernels=false` lowers every kernel on its own.
  }];
  let options = [
    Option<"keepPlan", "keep-plan", "bool", /*default=*/"true",
           "keep the l0uop.plan ops (kernels reduced to their host entry) "
           "as data for the runtime">,
    Option<"shareKernels", "share-kernels", "bool", /*default=*/"true",
           "lower kernels with the same code once and point every such "
           "kernel's host_entry at the one function">,
    Option<"inlineExp2", "inline-exp2", "bool", /*default=*/"true",
           "EXP2 of f32 as an inline polynomial (false: the math library's "
           "exp2f, through libmvec when vectorised)">,
    Option<"tileLanes", "tile-lanes", "unsigned", /*default=*/"16",
           "lanes of the vectorised RANGE in a tiled kernel (0: no tiling)">,
    Option<"tileRows", "tile-rows", "unsigned", /*default=*/"6",
           "rows of the register block of a tiled kernel (at most; fewer "
           "when it carries several REDUCEs)">,
  ];
  let statistics = [
    Statistic<"numKernels", "kernels", "kernels lowered to a function">,
    Statistic<"numShared", "shared-kernels",
              "kernels that share the function of an earlier kernel with "
              "the same code">,
  ];
  let dependentDialects = [
    "mlir::LLVM::LLVMDialect", "mlir::arith::ArithDialect",
    "mlir::math::MathDialect", "mlir::scf::SCFDialect",
    "mlir::cf::ControlFlowDialect", "mlir::vector::VectorDialect",
    "mlir::ub::UBDialect", "mlir::affine::AffineDialect",
  ];
}

def ConvertL0CtlToLLVM : Pass<"synpl-convert-l0ctl-to-llvm", "mlir::ModuleOp"> {
  let summary = "Lower every l0ctl.program to an llvm.func over its regions";
  let description = [{
    Each `l0ctl.program @f` becomes `llvm.func @f` (`@p_f` when it sits in
    `l0uop.plan @p`) taking one `!llvm.ptr {llvm.noalias, llvm.align = A}`
    per region the program names, sorted by region name (A: the region's
    alignment), and returning nothing. Blocks map 1:1 (block arguments
    stay); `load`/`store` of width sz become `llvm.load`/`llvm.store` at
    `region + offset + disp` with alignment sz; `arith` and `cmp` the LLVM
    integer ops (shift amounts masked to the width, `lt`/`gt` unsigned);
    `hash` zero-extends to i64 and applies the splitmix64 finaliser;
    `branch`/`jump`/`terminate` become `llvm.cond_br`/`llvm.br`/
    `llvm.return`. `queue_push`/`queue_pop` call the runtime:

    ```mlir
    llvm.func @synpl_rt_ctl_queue_push(!llvm.ptr, i64)
    llvm.func @synpl_rt_ctl_queue_pop(!llvm.ptr) -> i64
    ```

    (values narrower than i64 are zero-extended / truncated; the runtime
    keeps the queue's handle in the first 8 bytes of a queue region). The function
    lists its regions, in argument order, in `synpl.regions`. With
    `keep-regions` (the default) the `l0ctl.region` ops stay where they
    are: they are data for the runtime, which allocates them;
    `keep-regions=false` erases them (for `synpl-translate --mlir-to-llvmir`
    of the code alone).
    All or nothing, with `lowered N of M ops; not lowered: <op> at <loc>:
    <why>` on failure.
  }];
  let options = [
    Option<"keepRegions", "keep-regions", "bool", /*default=*/"true",
           "keep the l0ctl.region ops as data for the runtime">,
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def ConvertL0PlanToLLVM : Pass<"synpl-convert-l0-plan-to-llvm", "mlir::ModuleOp"> {
  let summary = "Write the lowered L0 plan as the binary's metadata tables";
  let description = [{
    Runs after `--synpl-convert-l0ctl-to-llvm` and
    `--synpl-convert-l0uop-to-llvm` (both keeping the plan as data). The
    plan's pools, slots, kernel descriptors (host function, buffer slots,
    split-range iterations), transfers, streams, events and syncs, inits,
    ingests and reports, and the control regions with each program's
    region list, become the read-only tables of
    `include/synpl/Runtime/PlanFormat.h` -- the spec's memory layout
    table, stream descriptors and schedule descriptor:

    ```mlir
    llvm.mlir.global internal constant @synpl_plan_table(dense<[...]> : tensor<Nxi64>)
    llvm.mlir.global internal constant @synpl_plan_strings("...")
    llvm.mlir.global internal constant @synpl_plan_kernels() : !llvm.array<K x ptr>
    llvm.mlir.global internal constant @synpl_plan_programs() : !llvm.array<P x ptr>
    llvm.mlir.global external constant @synpl_plan() : !llvm.struct<(ptr, ptr, ptr, ptr)>
    llvm.func @main(%argc: i32, %argv: !llvm.ptr) -> i32  // calls synpl_rt_main
    ```

    and the plan and regions are erased, leaving a module of LLVM dialect
    only, ready for `synpl-translate --synpl-to-object`. `main=false`
    leaves `main` out (for embedders that call `synpl_rt_main`
    themselves). Exactly one plan is expected; a kernel or program not yet
    lowered fails the pass with
    `lowered N of M ops; not lowered: <op> at <loc>: <why>`.

    CUDA kernels: a kernel with `device_entry = "<entry>"` (set by
    `--synpl-convert-l0uop-to-nvvm`) is written as a CUDA kernel record
    (its PTX entry, grid, block and dynamic shared memory); its slot of
    `synpl_plan_kernels` is its host fallback when
    `--synpl-convert-l0uop-to-llvm` also compiled it (`host_entry`), else
    null. The module's `gpu.binary` (from `gpu-module-to-binary`) holds
    the kernels' PTX (`#gpu.object<#nvvm.target<chip = "sm_80">, assembly
    = "...">`); it becomes a read-only global the descriptor points at,
    with its size, and the header records the chip's compute capability
    and the driver version its PTX needs (`CudaTarget.h`). When the
    binary also holds a cubin for the chip (`--synpl-cuda-assemble` adds
    one), it is embedded too: the runtime loads it first, the PTX being the
    fallback for other GPUs. The gpu.binary ops and `gpu.container_module` are
    erased, so the module translates to LLVM IR. Every device entry must
    be an `.entry` of the PTX.
  }];
  let options = [
    Option<"defineMain", "main", "bool", /*default=*/"true",
           "define main(argc, argv) calling the runtime's synpl_rt_main">,
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

//===----------------------------------------------------------------------===//
// L0ToNVVM
//===----------------------------------------------------------------------===//

def ConvertL0UOpToNVVM : Pass<"synpl-convert-l0uop-to-nvvm", "mlir::ModuleOp"> {
  let summary = "Lower every device l0uop.kernel to an NVVM kernel in a gpu.module";
  let description = [{
    A kernel is a *device kernel* when it binds at least one slot and every
    slot it binds lives in a pool `on device`; only those are lowered (host
    kernels are left for `--synpl-convert-l0uop-to-llvm`). The module gets
    `gpu.container_module` and, per plan with device kernels,

    ```mlir
    gpu.module @<plan>_cuda [#nvvm.target<chip = "sm_80", features = "+ptx70">] {
      llvm.func @<plan>_<kernel>(%b0: !llvm.ptr, ..., %bN: !llvm.ptr)
          attributes {nvvm.kernel, nvvm.maxntid = array<i32: X, Y, Z>}
    }
    ```

    one generic pointer per kernel buffer (inputs then outputs), no other
    parameter; the entry name is `<plan>_<kernel>` with every character
    outside `[A-Za-z0-9_]` replaced by `_` (made unique), so the PTX
    `.entry` is the LLVM name. Each lowered `l0uop.kernel` gets
    `device_entry = "<entry>"`, its final `grid`/`block`/`shared_mem`
    (the dynamic shared bytes), and loses its UOps unless `keep-uops`.

    The lowering shares the host's per-UOp code (KernelBuilder): RANGEs
    over `global_a` / `group_a` / `local_a` take `ctaid.a * ntid.a + tid.a`,
    `ctaid.a`, `tid.a` (times step, plus lower), under `if index < trip`
    when the launch over-covers the range; loop RANGEs are `scf.for`
    carrying their REDUCEs. BARRIER is `bar.sync 0`; inside a guard that
    masks some threads of a block the guard is split at each barrier
    directly in the RANGE's body (masked threads still arrive), values
    crossing it go through registers; a barrier nested deeper under such a
    guard is refused. A STORE outside the RANGEs that map an axis of the
    launch with more than one thread/block runs on the leader (index 0) of
    that axis only. `shared(...)` buffers live in one dynamic shared array
    (address space 3) at 16-byte aligned offsets; their total is the
    kernel's `shared_mem`, at most the chip's `maxSharedPerBlock`.

    Math (`fast-math`, default on): EXP2 f32 `ex2.approx.ftz.f32`
    (otherwise `ex2.approx.f32`), LOG2 `lg2.approx[.ftz].f32`, RECIPROCAL
    `rcp.approx.ftz.f32` / `rcp.rn.f32`, SQRT `sqrt.approx.ftz.f32` /
    `sqrt.rn.f32`, SIN a reduction to [-pi, pi] then `sin.approx[.ftz].f32`;
    f16/bf16 compute in f32; f64 SQRT/RECIPROCAL `sqrt.rn.f64` /
    `rcp.rn.f64`; f64 EXP2/LOG2/SIN have no PTX instruction and are refused
    (no libdevice).

    WMMA (`tensor-cores`, default on): tile values are warp-collective
    fragments. `host.tile_load(buf, i, j)` / `host.tile_store(buf, i, j,
    tile)` (row-major tiles of a 2-D buffer, leading dimension = its row
    length) become `nvvm.wmma.load` / `nvvm.wmma.store`, WMMA becomes
    `nvvm.wmma.mma`: m16n16k16 for f16/bf16 with f32 accumulation, m16n16k8
    tf32 for f32 operands. Every warp of a block runs them: their operands
    must not vary within a warp (no dependence on a thread-mapped RANGE, not
    inside one) and a tile value may only feed WMMA or a tile store; other
    shapes, or `tensor-cores=false`, take the host's per-thread form.

    A kernel that `buildTiledMatmul` takes is emitted tiled with its own
    launch: bf16/f16 products on the tensor cores (mma.sync, f32
    accumulation), f32 products as register-blocked FFMA -- or, with
    `tf32`, on the tensor cores as tf32 (a 10-bit mantissa: the products
    are no longer f32's, so it is opt-in). Anything else not lowerable fails the pass with
    `lowered N of M ops; not lowered: <op> at <loc>: <why>`, leaving the
    module untouched. See docs/cuda-codegen.md.

    Kernels of a plan with the same code (`l0uop.kernel`'s `hasSameCode`:
    equal bodies, launches, shared memory, buffer types and pools) are
    lowered once; each gets the first one's `device_entry`.
    `share-kernels=false` lowers each on its own.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_80\"",
           "the GPU architecture (sm_80, sm_86, sm_89, sm_90, sm_90a)">,
    Option<"fastMath", "fast-math", "bool", /*default=*/"true",
           "approximate PTX forms for EXP2/LOG2/RECIPROCAL/SQRT/SIN">,
    Option<"tensorCores", "tensor-cores", "bool", /*default=*/"true",
           "WMMA and tiled matmuls on the tensor cores">,
    Option<"keepUops", "keep-uops", "bool", /*default=*/"false",
           "keep each lowered kernel's UOps (for a host fallback)">,
    Option<"shareKernels", "share-kernels", "bool", /*default=*/"true",
           "lower the kernels of a plan with the same code once; each such "
           "kernel's device_entry names the one entry">,
    Option<"tf32", "tf32", "bool", /*default=*/"false",
           "f32 matmuls on the tf32 tensor cores (rounds the operands to a "
           "10-bit mantissa)">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::NVVM::NVVMDialect",
                           "mlir::LLVM::LLVMDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect", "mlir::math::MathDialect",
                           "mlir::vector::VectorDialect"];
}

def ConvertL0UOpToIPU21 : Pass<"synpl-convert-l0uop-to-ipu21", "mlir::ModuleOp"> {
  let summary = "Lower each l0uop.plan to an ipu21.graph, its tile plans chosen by search";
  let description = [{
    Each `l0uop.plan` becomes an `ipu21.graph` of the same name for the IPU
    named by `arch` (its `#ipu21.target` comes from the IPU's facts,
    include/synpl/Target/IPU21/Facts.h):

    * **Products.** A kernel that computes C[M, N] = A[M, K] . B[K, N]
      (f32, or f16 cast to f32; A and B row-major, C an f32 [M][N] buffer
      it only stores the sum to) gets a tile plan from a search
      (`--synpl-search-report` shows it, boundary `IPU21 tiles @<kernel>`):
      C cut into a grid of mb x nb blocks, one per tile (C's home is that
      grid), K split into parallel groups on copies of the grid and each
      group's share walked in chunks of kc; filtered by each tile's memory
      and scored in cycles with the simulator's cost model (CostModel.h).
      It becomes `<kernel>.zero` (zero C and the partial blocks), then
      `ipu21.repeat <steps>` of the exchange `<kernel>.chunk` (A's rows and
      B's columns of the chunk to the tiles that need them, advancing with
      the repeat) and the AMP compute set `<kernel>.mm`, then, with groups,
      `<kernel>.reduce` (the partials to C's home tiles) and `<kernel>.sum`;
      each phase followed by a sync.
    * **Slots** become tensors: a product's C with its grid, the others
      spread evenly over the tiles.
    * **Placement.** Every object (code, vertex state, exchange
      descriptors, tensors, buffers) gets its address in one pass; the
      graph is then verified (rows IPU.1 ... IPU.10).

    The kernels run in the plan's order in `ipu21.program @main`; a stream
    that orders them otherwise, or that runs a transfer, is refused. So is
    every other kernel (elementwise, reductions, matmuls with an epilogue
    or a transposed operand), and ingests, inits, transfers, reports and
    control code: the plan fails whole with `lowered N of M plan items;
    not lowered: <item> at <loc>: <why>`, and the module is left as it
    was. docs/ipu21.md says what the sink takes so far.
  }];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"ipu21\"",
           "the IPU: ipu21 (the C600's, FP8 AMP) or ipu2 (GC200, Bow)">,
    Option<"maxTiles", "tiles", "int64_t", /*default=*/"0",
           "place the products on at most this many tiles, from tile 0 (0: all "
           "of the chip's)">,
  ];
  let dependentDialects = ["::synpl::ipu21::IPU21Dialect"];
}

def L0TuneLaunch : Pass<"synpl-l0-tune-launch", "mlir::ModuleOp"> {
  let summary = "Search the launch configuration of remappable device kernels";
  let description = [{
    For each device kernel whose parallel RANGEs can be remapped -- no
    BARRIER, no shared buffers, no WMMA or CUSTOM, every parallel RANGE at
    the top of the body or directly nested in another one, threads
    independent -- enumerates candidate launches: the iteration space (the
    parallel RANGEs, outermost first) is flattened and mapped either onto
    `global_x` (one RANGE over the product when there is one parallel
    RANGE) or onto `group_x` x `local_x` with the inner RANGE split, with
    block sizes 32 .. 1024 (multiples of the warp). Filters: threads per
    block, grid limits, the register estimate against the register file.
    Score (seconds, from the chip's facts, include/synpl/Target/CudaTarget.h):
    waves of blocks over SMs x resident blocks, an occupancy penalty, the
    kernel's memory bytes over DRAM bandwidth, its flops over peak, the
    tail of the last wave, and the launch overhead. The best candidate
    (search driver: `--synpl-search-report` prints the report) rewrites the
    RANGE kinds and the kernel's grid/block; the kernel still verifies
    (L0.1). See docs/cuda-codegen.md.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_80\"",
           "the GPU architecture whose facts score the candidates">,
    Option<"smCount", "sm-count", "unsigned", /*default=*/"0",
           "SMs of the device (0: the chip's reference part)">,
  ];
}

#endif // SYNPL_CONVERSION_PASSES_TD
