//===- L2Ops.td - The l2 dialect's operations -------------*- tablegen -*-===//
#ifndef SYNPL_DIALECT_L2_OPS_TD
#define SYNPL_DIALECT_L2_OPS_TD

include "synpl/Dialect/L2/L2Dialect.td"
include "synpl/Dialect/L2/L2Attrs.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// l2.methods
//===----------------------------------------------------------------------===//

def L2_MethodsOp : L2_Op<"methods", [
    Symbol, IsolatedFromAbove,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    DeclareOpInterfaceMethods<RegionKindInterface>]> {
  let summary = "methods for <model>: sample, infer, backward, update";
  let description = [{
    The spec's `methods for <model_ref> { sample; infer; backward; update }`:
    how the `l3.model` named by `for` is trained. `sample`, `backward` and
    `update` are method attributes (`#l2.epoch_shuffle<...>`,
    `#l2.autodiff<...>`, `#l2.adam<...>`, nested as the spec nests them, and
    written without the `#l2.` prefix where a method is expected);
    `infer` is a graph region whose single block takes the model inputs (one
    batched tensor per input; the leading dimension is the batch) and ends in
    `l2.yield` of the model output. Its ops are the layer ops of this dialect;
    SSA def-use edges are the DAG edges.

    ```mlir
    l2.methods @mnist_method for @classify
        sample epoch_shuffle<batch = 128>
        infer(%x: tensor<128x784xf32>) {
          %0 = l2.linear(784, 10) %x as "fc1" : tensor<128x784xf32>
          %1 = l2.softmax %0 : tensor<128x10xf32>
          l2.yield %1 : tensor<128x10xf32>
        }
        backward autodiff<mode = reverse>
        update adam<lr = 3.0e-4>
        train loop<epochs = 3, evaluate = "t10k", checkpoint_every = 500>
    ```

    `train` (optional) is the training loop around the steps
    (`#l2.loop`: epochs, the evaluation split, the checkpoint interval);
    L2 → L1 copies it onto `l1.schedule` (`epochs`, `evaluate`,
    `checkpoint_every`). See docs/training.md.

    Parameters are named `<layer>.<slot>` where `<layer>` is the layer's
    label (`as "fc1"`) or, unlabelled, `<mnemonic>_<k>` (the k-th op of that
    kind in pre-order). Slots: linear `weight` [in, out] and `bias` [out];
    conv `weight` [out_ch, in_ch, k, k] (k for 1-D) and `bias` [out_ch]; attn
    `wq`, `wk`, `wv`, `wo` [dim, dim] and `bq`, `bk`, `bv`, `bo` [dim]; norm
    `gain` [C] and (layer, group) `bias` [C]; embed `table` [vocab, dim].

    Against the model's constraints (row L2.2): `depth(n)` bounds the
    longest chain of stages (linear, conv, attn, embed; a recurrent cell or
    denoiser counts once); `width(n)` bounds hidden widths (linear `out`,
    conv `out_ch`, attn and embed `dim`), not the width of the layer that
    produces the output, which the output domain fixes; `param_budget(n)`
    bounds the exact parameter count; `causal` requires causal attention;
    the yielded value must be one batch of the `out` domain (`dist<n>`: a
    `[batch, n]` float tensor); an escape hatch on the model that forces an
    L2 method (`#[l2::backward(evolution(pop: 50))]`, likewise `l2::sample`
    and `l2::update`) must be honoured: same method, same value for every
    argument the hatch names (nested methods compared the same way). Its
    error points at the model that carries the hatch.

    Against the data (row L2.5): the infer region takes one input, a batch
    of the model's `in` field: `[batch] ++ shape` of the field's domain, with
    its element type (`tensor<28x28xf32>` -> `tensor<128x28x28xf32>`;
    `scalar<dt>` -> `[batch]`; `sequence<d, n>` -> `[batch, n, ...d]`;
    `dist<n>` -> `[batch, n] f32`; tables are not checked). The batch is
    the sample method's: `epoch_shuffle` `batch`, `stream_window` `window`,
    `curriculum` and `replay` `batch`, and for `distributed_shard` the inner
    method's (per-shard) batch. Data sets declare no size at L3, so a batch
    larger than the data set cannot be checked here.

    Verification: the region's own rows (L2.1 shapes at each layer op, L2.3
    backward compatibility, L2.4 update shapes, L2.5 batch vs sample, L2.6
    cycles) run in the op verifier; the rows that read the L3 program (L2.2
    depth/width/param_budget/causal/output domain, L2.5 data field shape and
    dtype, L2.7 latency_budget) run in `verifySymbolUses`.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       FlatSymbolRefAttr:$model,
                       AnyAttr:$sample,
                       AnyAttr:$backward,
                       AnyAttr:$update,
                       OptionalAttr<L2_TrainLoopAttr>:$train);
  let regions = (region SizedRegion<1>:$infer);
  // Without a training loop (the builders callers had before `train`).
  let builders = [
    OpBuilder<(ins "::mlir::StringAttr":$sym_name, "::mlir::FlatSymbolRefAttr":$model,
                   "::mlir::Attribute":$sample, "::mlir::Attribute":$backward,
                   "::mlir::Attribute":$update), [{
      build($_builder, $_state, sym_name, model, sample, backward, update,
            ::synpl::l2::TrainLoopAttr());
    }]>];
  let hasCustomAssemblyFormat = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The infer region's block.
    ::mlir::Block &getInferBlock() { return getInfer().front(); }
    /// The terminator of the infer region, or null if it is malformed.
    ::synpl::l2::YieldOp getInferYield();
  }];
}

//===----------------------------------------------------------------------===//
// Layer ops
//===----------------------------------------------------------------------===//

// A layer: one static-shaped tensor in, one out. The result type is inferred
// from the input type and the layer's attributes; an input the layer cannot
// take is a row L2.1 error. `as "name"` labels the layer (checkpoints and
// parameter names refer to it). `hints [...]` holds the spec's escape
// hatches on the layer (`#[l1::on(gpu_1)]` is `#l3.hint<l1::on, "gpu_1">`):
// they must target a lower layer (l1 or l0), are verified there, and make
// the layer opaque to rewrites at L2.
// Checks the declared result type against the shape rule as row L2.1 (the
// custom form never spells the result type; the generic form does) and the
// layer's escape hatches.
def L2_LayerTrait : NativeOpTrait<"LayerTrait"> {
  let cppNamespace = "::synpl::l2";
}

class L2_LayerOp<string mnemonic, list<Trait> traits = []>
    : L2_Op<mnemonic, !listconcat(traits, [L2_LayerTrait,
                                           InferTypeOpAdaptorWithIsCompatible])> {
  let results = (outs AnyStaticShapeTensor:$result);
}

def L2_LinearOp : L2_LayerOp<"linear"> {
  let summary = "linear(in, out): y = x W + b over the last dimension";
  let description = [{
    `[..., in] -> [..., out]`. Parameters: `weight` [in, out], `bias` [out]
    (in*out + out). A stage for `depth`; `out` is a hidden width.
  }];
  let arguments = (ins AnyStaticShapeTensor:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$in,
                       ConfinedAttr<I64Attr, [IntPositive]>:$out,
                       OptionalAttr<StrAttr>:$label,
                       OptionalAttr<ArrayAttr>:$hints);
  let assemblyFormat = [{
    `(` $in `,` $out `)` $input (`as` $label^)? (`hints` $hints^)? attr-dict `:` type($input)
  }];
}

def L2_ConvOp : L2_LayerOp<"conv"> {
  let summary = "conv(in_ch, out_ch, kernel, stride, padding)";
  let description = [{
    Channels-first convolution over one or two spatial dimensions:
    `[N, in_ch, L] -> [N, out_ch, L']` or `[N, in_ch, H, W] -> [N, out_ch,
    H', W']` with `X' = (X + 2*padding - kernel) / stride + 1`. Parameters:
    `weight` [out_ch, in_ch, kernel(, kernel)], `bias` [out_ch].
  }];
  let arguments = (ins AnyStaticShapeTensor:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$in_ch,
                       ConfinedAttr<I64Attr, [IntPositive]>:$out_ch,
                       ConfinedAttr<I64Attr, [IntPositive]>:$kernel,
                       ConfinedAttr<I64Attr, [IntPositive]>:$stride,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$padding,
                       OptionalAttr<StrAttr>:$label,
                       OptionalAttr<ArrayAttr>:$hints);
  let assemblyFormat = [{
    `(` $in_ch `,` $out_ch `,` `kernel` `=` $kernel `,` `stride` `=` $stride `,`
        `padding` `=` $padding `)` $input (`as` $label^)? (`hints` $hints^)? attr-dict `:` type($input)
  }];
}

def L2_AttnOp : L2_LayerOp<"attn"> {
  let summary = "attn(heads, dim, causal: bool): multi-head self-attention";
  let description = [{
    `[N, T, dim] -> [N, T, dim]`; `dim` must be divisible by `heads`. With
    `causal`, position t attends to positions <= t only (required when the
    model is `causal`, row L2.2). Parameters: `wq`, `wk`, `wv`, `wo`
    [dim, dim] and their biases [dim] (4*dim*dim + 4*dim).
  }];
  let arguments = (ins AnyStaticShapeTensor:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$heads,
                       ConfinedAttr<I64Attr, [IntPositive]>:$dim,
                       UnitAttr:$causal,
                       OptionalAttr<StrAttr>:$label,
                       OptionalAttr<ArrayAttr>:$hints);
  let assemblyFormat = [{
    `(` `heads` `=` $heads `,` `dim` `=` $dim (`,` `causal` $causal^)? `)` $input
        (`as` $label^)? (`hints` $hints^)? attr-dict `:` type($input)
  }];
}

def L2_NormOp : L2_LayerOp<"norm"> {
  let summary = "norm(kind: layer | group(n) | rms)";
  let description = [{
    Shape-preserving. `layer` and `rms` normalize the last dimension C;
    `group(n)` normalizes n channel groups of dimension 1 (C must be divisible
    by n). Parameters: `gain` [C]; `layer` and `group` also `bias` [C].
  }];
  let arguments = (ins AnyStaticShapeTensor:$input,
                       L2_NormKind:$kind,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$groups,
                       OptionalAttr<StrAttr>:$label,
                       OptionalAttr<ArrayAttr>:$hints);
  let assemblyFormat = [{
    `(` $kind (`(` $groups^ `)`)? `)` $input (`as` $label^)? (`hints` $hints^)? attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def L2_ActOp : L2_LayerOp<"act"> {
  let summary = "act(fn: relu | gelu | silu | swish)";
  let description = "Elementwise activation; shape-preserving, no parameters.";
  let arguments = (ins AnyStaticShapeTensor:$input, L2_ActFn:$fn,
                       OptionalAttr<StrAttr>:$label,
                       OptionalAttr<ArrayAttr>:$hints);
  let assemblyFormat = [{
    `(` $fn `)` $input (`as` $label^)? (`hints` $hints^)? attr-dict `:` type($input)
  }];
}

def L2_EmbedOp : L2_LayerOp<"embed"> {
  let summary = "embed(vocab, dim[, positions: n]): token ids to vectors";
  let description = [{
    `[...] x iN -> [..., dim] x f32`. Parameters: `table` [vocab, dim].
    With `positions = n` (a sequence model's learned positions), the input
    is `[batch, n]` and a second parameter `positions` [n, dim] is added
    to every sequence: `y[b, t] = table[x[b, t]] + positions[t]`.
  }];
  let arguments = (ins AnyStaticShapeTensor:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$vocab,
                       ConfinedAttr<I64Attr, [IntPositive]>:$dim,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$positions,
                       OptionalAttr<StrAttr>:$label,
                       OptionalAttr<ArrayAttr>:$hints);
  let assemblyFormat = [{
    `(` `vocab` `=` $vocab `,` `dim` `=` $dim (`,` `positions` `=` $positions^)? `)` $input
        (`as` $label^)? (`hints` $hints^)? attr-dict `:` type($input)
  }];
}

def L2_PoolOp : L2_LayerOp<"pool"> {
  let summary = "pool(kind: avg | max, kernel)";
  let description = [{
    Non-overlapping pooling (stride = kernel) over the spatial dimensions of
    `[N, C, L]` or `[N, C, H, W]`: each spatial size X becomes X / kernel
    (floor); X must be at least `kernel`.
  }];
  let arguments = (ins AnyStaticShapeTensor:$input, L2_PoolKind:$kind,
                       ConfinedAttr<I64Attr, [IntPositive]>:$kernel,
                       OptionalAttr<StrAttr>:$label,
                       OptionalAttr<ArrayAttr>:$hints);
  let assemblyFormat = [{
    `(` $kind `,` `kernel` `=` $kernel `)` $input (`as` $label^)? (`hints` $hints^)? attr-dict
        `:` type($input)
  }];
}

def L2_DropoutOp : L2_LayerOp<"dropout"> {
  let summary = "dropout(p): training only";
  let description = "Zeroes each element with probability p in [0, 1); shape-preserving.";
  let arguments = (ins AnyStaticShapeTensor:$input, F64Attr:$p,
                       OptionalAttr<StrAttr>:$label,
                       OptionalAttr<ArrayAttr>:$hints);
  let assemblyFormat = [{
    `(` custom<Probability>($p) `)` $input (`as` $label^)? (`hints` $hints^)? attr-dict `:` type($input)
  }];
}

def L2_SoftmaxOp : L2_LayerOp<"softmax"> {
  let summary = "softmax over the last dimension";
  let description = [{
    Shape-preserving; turns scores into a distribution (an infer DAG ending in
    softmax over n classes produces the L3 domain `dist(n)`).
  }];
  let arguments = (ins AnyStaticShapeTensor:$input, OptionalAttr<StrAttr>:$label,
                       OptionalAttr<ArrayAttr>:$hints);
  let assemblyFormat = "$input (`as` $label^)? (`hints` $hints^)? attr-dict `:` type($input)";
}

def L2_FlattenOp : L2_LayerOp<"flatten"> {
  let summary = "flatten: [N, d1, ..., dk] -> [N, d1*...*dk]";
  let description = [{
    Keeps the leading (batch) dimension and flattens the rest. Metadata only:
    no parameters, no FLOPs.
  }];
  let arguments = (ins AnyStaticShapeTensor:$input, OptionalAttr<StrAttr>:$label,
                       OptionalAttr<ArrayAttr>:$hints);
  let assemblyFormat = "$input (`as` $label^)? (`hints` $hints^)? attr-dict `:` type($input)";
}

def L2_ReshapeOp : L2_LayerOp<"reshape"> {
  let summary = "reshape(shape): [N, ...] -> [N, shape...] with the same element count";
  let description = [{
    Keeps the leading (batch) dimension and lays the rest out as `shape`
    (row-major, like flatten, whose inverse it is). Metadata only: no
    parameters, no FLOPs. It gives an image a channel dimension
    (`[N, 28, 28] -> [N, 1, 28, 28]`) and an output head its domain's shape
    (`[N, 784] -> [N, 28, 28]`).
  }];
  let arguments = (ins AnyStaticShapeTensor:$input, DenseI64ArrayAttr:$shape,
                       OptionalAttr<StrAttr>:$label,
                       OptionalAttr<ArrayAttr>:$hints);
  let assemblyFormat = [{
    $shape $input (`as` $label^)? (`hints` $hints^)? attr-dict `:` type($input)
  }];
}

def L2_AddOp : L2_LayerOp<"add"> {
  let summary = "elementwise sum: the merge of a residual connection";
  let description = [{
    `residual([...])` is front-end sugar for a block whose output is added to
    its input with `l2.add`. Both operands must have the same type.
  }];
  let arguments = (ins AnyStaticShapeTensor:$lhs, AnyStaticShapeTensor:$rhs,
                       OptionalAttr<StrAttr>:$label,
                       OptionalAttr<ArrayAttr>:$hints);
  let assemblyFormat = [{
    $lhs `,` $rhs (`as` $label^)? (`hints` $hints^)? attr-dict `:` type($lhs) `,` type($rhs)
  }];
}

def L2_QuantizeOp : L2_LayerOp<"quantize"> {
  let summary = "quantize(bits): round to 2^bits levels (not differentiable)";
  let description = [{
    Shape-preserving rounding. Its derivative is zero almost everywhere, so
    `autodiff` cannot pass gradients through it to parameters upstream
    (row L2.3); use `straight_through`, or a gradient-free method.
  }];
  let arguments = (ins AnyStaticShapeTensor:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$bits,
                       OptionalAttr<StrAttr>:$label,
                       OptionalAttr<ArrayAttr>:$hints);
  let assemblyFormat = [{
    `(` `bits` `=` $bits `)` $input (`as` $label^)? (`hints` $hints^)? attr-dict `:` type($input)
  }];
}

//===----------------------------------------------------------------------===//
// Region-holding infer forms
//===----------------------------------------------------------------------===//

def L2_RecurrentOp : L2_Op<"recurrent", [
    AllTypesMatch<["init", "result"]>,
    DeclareOpInterfaceMethods<RegionKindInterface>]> {
  let summary = "recurrent(cell: <infer>, steps: n | until(<pred>))";
  let description = [{
    Applies `cell` to a carried state: the cell's block takes the state and
    yields the next state of the same type. `steps = n` runs exactly n times.
    `until(pred)` runs until the predicate holds, which is only finite with a
    declared bound: `until("...", max_steps = n)` stops after n steps whatever
    the predicate says; `until` without `max_steps` is a row L2.6 error. The
    cell's parameters are shared across steps (counted once).

    ```mlir
    %h = l2.recurrent(steps = 4) %h0 : tensor<32x128xf32> {
    ^bb0(%s: tensor<32x128xf32>):
      %0 = l2.linear(128, 128) %s : tensor<32x128xf32>
      %1 = l2.act(gelu) %0 : tensor<32x128xf32>
      l2.yield %1 : tensor<32x128xf32>
    }
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$init,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$steps,
                       OptionalAttr<StrAttr>:$until,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$max_steps,
                       OptionalAttr<StrAttr>:$label);
  let results = (outs AnyStaticShapeTensor:$result);
  let regions = (region SizedRegion<1>:$cell);
  let assemblyFormat = [{
    `(` custom<TripCount>($steps, $until, $max_steps) `)`
        $init (`as` $label^)? attr-dict `:` type($init) $cell
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The trip count: `steps`, or `max_steps` for a bounded `until`;
    /// std::nullopt for an unbounded `until`.
    std::optional<int64_t> getTripCount();
  }];
}

def L2_MixtureOp : L2_Op<"mixture", [
    DeclareOpInterfaceMethods<RegionKindInterface>]> {
  let summary = "mixture(experts: [<infer>], gate: <infer>)";
  let description = [{
    A mixture of experts. Every expert region takes the input and yields a
    result of the op's result type; the gate region takes the input and
    yields `[..., number of experts]` scores. With `top_k = k` only the k best
    experts run per example (the FLOP estimate counts k experts); without,
    every expert runs.
  }];
  let arguments = (ins AnyStaticShapeTensor:$input,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$top_k,
                       OptionalAttr<StrAttr>:$label);
  let results = (outs AnyStaticShapeTensor:$result);
  let regions = (region SizedRegion<1>:$gate, VariadicRegion<SizedRegion<1>>:$experts);
  let assemblyFormat = [{
    (`(` `top_k` `=` $top_k^ `)`)? $input (`as` $label^)? attr-dict
        `:` type($input) `->` type($result)
        `experts` `(` $experts `)` `gate` $gate
  }];
  let hasRegionVerifier = 1;
}

def L2_GraphOp : L2_Op<"graph", [
    DeclareOpInterfaceMethods<RegionKindInterface>]> {
  let summary = "graph(nodes: <infer>, edges: <adjacency>)";
  let description = [{
    An explicit sub-graph: the nodes are the ops of its graph region and the
    edges their SSA def-use edges, which may be written in any order. The
    block takes the op's inputs and yields its results. A cycle among the
    nodes is a row L2.6 error naming the cycle.
  }];
  let arguments = (ins Variadic<AnyStaticShapeTensor>:$inputs,
                       OptionalAttr<StrAttr>:$label);
  let results = (outs Variadic<AnyStaticShapeTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` (`as` $label^)? attr-dict `:` functional-type($inputs, $results)
        $body
  }];
  let hasRegionVerifier = 1;
}

def L2_DiffusionChainOp : L2_Op<"diffusion_chain", [
    AllTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<RegionKindInterface>]> {
  let summary = "diffusion_chain(steps: n, noise: <schedule>, denoiser: <infer>)";
  let description = [{
    A denoising diffusion chain of `steps` noise levels. The denoiser region
    takes a noised sample and yields a prediction of the same type. A
    training step runs the denoiser once (at a random noise level); the
    denoiser's parameters are shared across levels.
  }];
  let arguments = (ins AnyStaticShapeTensor:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$steps,
                       L2_NoiseSchedule:$noise,
                       OptionalAttr<StrAttr>:$label);
  let results = (outs AnyStaticShapeTensor:$result);
  let regions = (region SizedRegion<1>:$denoiser);
  let assemblyFormat = [{
    `(` `steps` `=` $steps `,` `noise` `=` $noise `)` $input (`as` $label^)?
        attr-dict `:` type($input) `denoiser` $denoiser
  }];
  let hasRegionVerifier = 1;
}

def L2_YieldOp : L2_Op<"yield", [
    Terminator,
    ParentOneOf<["MethodsOp", "RecurrentOp", "MixtureOp", "GraphOp",
                 "DiffusionChainOp"]>]> {
  let summary = "ends an infer region, yielding its outputs";
  let description = "The values the enclosing infer region produces.";
  let arguments = (ins Variadic<AnyStaticShapeTensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // SYNPL_DIALECT_L2_OPS_TD
