//===- L2Attrs.td - Sample, backward and update methods ----*- tablegen -*-===//
//
// The spec's sample, backward and update methods are values, so they are
// attributes; a nested method (`schedule(..., inner: adam(...))`) is a nested
// attribute. Every attribute verifies its own ranges and that a nested method
// is of the right family (sample, backward or update).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_DIALECT_L2_ATTRS_TD
#define SYNPL_DIALECT_L2_ATTRS_TD

include "synpl/Dialect/L2/L2Dialect.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def L2_NormKind : I32EnumAttr<"NormKind", "normalization kind", [
    I32EnumAttrCase<"layer", 0>, I32EnumAttrCase<"group", 1>,
    I32EnumAttrCase<"rms", 2>]> {
  let cppNamespace = "::synpl::l2";
}

def L2_ActFn : I32EnumAttr<"ActFn", "activation function", [
    I32EnumAttrCase<"relu", 0>, I32EnumAttrCase<"gelu", 1>,
    I32EnumAttrCase<"silu", 2>, I32EnumAttrCase<"swish", 3>]> {
  let cppNamespace = "::synpl::l2";
}

def L2_PoolKind : I32EnumAttr<"PoolKind", "pooling kind", [
    I32EnumAttrCase<"avg", 0>, I32EnumAttrCase<"max", 1>]> {
  let cppNamespace = "::synpl::l2";
}

def L2_NoiseSchedule : I32EnumAttr<"NoiseSchedule", "diffusion noise schedule", [
    I32EnumAttrCase<"linear", 0>, I32EnumAttrCase<"cosine", 1>,
    I32EnumAttrCase<"sigmoid", 2>]> {
  let cppNamespace = "::synpl::l2";
}

def L2_DecayKind : I32EnumAttr<"DecayKind", "learning-rate / blend decay", [
    I32EnumAttrCase<"constant", 0>, I32EnumAttrCase<"linear", 1>,
    I32EnumAttrCase<"cosine", 2>, I32EnumAttrCase<"exponential", 3>,
    I32EnumAttrCase<"step", 4>]> {
  let cppNamespace = "::synpl::l2";
}

def L2_ReplayPriority : I32EnumAttr<"ReplayPriority", "replay priority", [
    I32EnumAttrCase<"uniform", 0>, I32EnumAttrCase<"proportional", 1>,
    I32EnumAttrCase<"rank", 2>]> {
  let cppNamespace = "::synpl::l2";
}

def L2_AutodiffMode : I32EnumAttr<"AutodiffMode", "autodiff mode", [
    I32EnumAttrCase<"reverse", 0>, I32EnumAttrCase<"forward", 1>]> {
  let cppNamespace = "::synpl::l2";
}

def L2_Selection : I32EnumAttr<"Selection", "evolution selection", [
    I32EnumAttrCase<"truncation", 0>, I32EnumAttrCase<"tournament", 1>,
    I32EnumAttrCase<"rank", 2>]> {
  let cppNamespace = "::synpl::l2";
}

def L2_Baseline : I32EnumAttr<"Baseline", "REINFORCE baseline", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"moving_average", 1>,
    I32EnumAttrCase<"learned", 2>]> {
  let cppNamespace = "::synpl::l2";
}

def L2_Estimator : I32EnumAttr<"Estimator", "straight-through estimator", [
    I32EnumAttrCase<"identity", 0>, I32EnumAttrCase<"clipped", 1>,
    I32EnumAttrCase<"sigmoid", 2>]> {
  let cppNamespace = "::synpl::l2";
}

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

// A double written as a float literal (`3.0e-4`, `0.9`); prints so that it
// round-trips exactly.
class L2_F64Param<string desc, string default = ""> : AttrParameter<"::llvm::APFloat", desc> {
  let parser = "::synpl::l2::parseF64($_parser)";
  let printer = "::synpl::l2::printF64($_printer, $_self)";
  let defaultValue = !if(!empty(default), "", "::llvm::APFloat(" # default # ")");
}

class L2_BoolParam<string desc, string default = ""> : AttrParameter<"bool", desc> {
  let parser = "::synpl::l2::parseBool($_parser)";
  let printer = "$_printer << ($_self ? \"true\" : \"false\")";
  let defaultValue = default;
}

class L2_IntParam<string desc, string default = ""> : AttrParameter<"int64_t", desc> {
  let defaultValue = default;
}

// `[784, 256]`
def L2_ShapeParam : ArrayRefParameter<"int64_t", "parameter shape"> {
  let parser = "::synpl::l2::parseShape($_parser)";
  let printer = "::synpl::l2::printShape($_printer, $_self)";
}

// A nested method: any attribute, checked by the enclosing attribute's
// verifier to be of the right family. An l2 method is written without its
// dialect prefix (`inner = adam<lr = 3.0e-4>`), as the spec nests them.
class L2_MethodParam<string desc> : AttrParameter<"::mlir::Attribute", desc> {
  let parser = "::synpl::l2::parseMethod($_parser)";
  let printer = "::synpl::l2::printMethod($_printer, $_self)";
}

class L2_OptionalMethodParam<string desc> : L2_MethodParam<desc> {
  let defaultValue = "::mlir::Attribute()";
}

class L2_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<L2_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Sample methods
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// The training loop (the spec's Open Question 3; see docs/training.md)
//===----------------------------------------------------------------------===//

def L2_TrainLoopAttr : L2_Attr<"TrainLoop", "loop"> {
  let summary = "loop(epochs: n, evaluate: <split>, checkpoint_every: n, steps: n)";
  let description = [{
    The outer training loop of a methods block: how many epochs the run
    takes (`epochs`, positive), which split it evaluates on after each epoch
    (`evaluate`: the prefix that replaces `train` in the training files'
    names, e.g. `"t10k"`; `"none"`: no evaluation; absent: the runtime's
    default, `t10k`), and every how many update steps it writes a checkpoint
    (`checkpoint_every`; 0, the default: only at the end of each epoch when
    a checkpoint file is asked for), and at most how many update steps an
    epoch takes (`steps`; 0, the default: the whole training split). A
    stream sampler (`stream_window` over text) has no natural epoch, so
    its runs are `epochs = 1, steps = n`. These are the compiled program's
    defaults; its command line overrides them (`--epochs`,
    `--checkpoint-every`, `--steps`).

    ```mlir
    train loop<epochs = 3, evaluate = "t10k", checkpoint_every = 500>
    ```
  }];
  let parameters = (ins L2_IntParam<"epochs">:$epochs,
                        StringRefParameter<"test split prefix (\"\": runtime default)", "\"\"">:$evaluate,
                        L2_IntParam<"update steps between checkpoints (0: per epoch only)", "0">:$checkpoint_every,
                        L2_IntParam<"update steps per epoch at most (0: the whole split)", "0">:$steps);
  let builders = [
    AttrBuilder<(ins "int64_t":$epochs, "::llvm::StringRef":$evaluate,
                     "int64_t":$checkpoint_every), [{
      return $_get($_ctxt, epochs, evaluate, checkpoint_every, 0);
    }]>];
}

def L2_EpochShuffleAttr : L2_Attr<"EpochShuffle", "epoch_shuffle"> {
  let summary = "epoch_shuffle(batch: n, drop_last: bool)";
  let description = [{
    Each epoch visits every example once, in a fresh random order, in batches
    of `batch`. With `drop_last` the final short batch is dropped, so every
    step sees exactly `batch` examples.
  }];
  let parameters = (ins L2_IntParam<"batch size">:$batch,
                        L2_BoolParam<"drop the final short batch", "false">:$drop_last);
}

def L2_StreamWindowAttr : L2_Attr<"StreamWindow", "stream_window"> {
  let summary = "stream_window(window: n, stride: n, batch: n)";
  let description = [{
    Reads the data as a stream. Over tensor or scalar examples, each step
    sees the `window` most recent examples (the batch is `window`), then the
    window advances by `stride`. Over a `sequence(d, N)` field read from a
    text file, an example is a window of `N + 1` consecutive bytes (N
    inputs, and the N bytes that follow each); `window` is N, window starts
    lie `stride` bytes apart, and each step draws `batch` windows at random
    (`batch` absent or 0: `window` windows, the rule of the first case).
  }];
  let parameters = (ins L2_IntParam<"examples per window (the batch)">:$window,
                        L2_IntParam<"examples the window advances by">:$stride,
                        L2_IntParam<"windows per step (0: window)", "0">:$batch);
  let builders = [
    AttrBuilder<(ins "int64_t":$window, "int64_t":$stride), [{
      return $_get($_ctxt, window, stride, 0);
    }]>];
}

def L2_PhaseAttr : L2_Attr<"Phase", "phase"> {
  let summary = "one curriculum phase: {filter: <pred>, duration: n_steps}";
  let description = [{
    `filter` is a predicate over examples (kept opaque at L2; its evaluation
    is a data-side concern) and `duration` the number of steps it lasts.
  }];
  let parameters = (ins StringRefParameter<"example predicate">:$filter,
                        L2_IntParam<"steps">:$duration);
}

def L2_CurriculumAttr : L2_Attr<"Curriculum", "curriculum"> {
  let summary = "curriculum([{filter: <pred>, duration: n_steps}, ...])";
  let description = [{
    Phases of training, each drawing batches of `batch` examples from the
    examples `filter` accepts, for `duration` steps. (`batch` is not in the
    spec's form; the infer inputs' leading dimension needs it.)
  }];
  let parameters = (ins L2_IntParam<"batch size">:$batch,
                        "::mlir::ArrayAttr":$phases);
}

def L2_ReplayAttr : L2_Attr<"Replay", "replay"> {
  let summary = "replay(buffer: n, priority: <kind>)";
  let description = [{
    Batches of `batch` examples drawn from a replay buffer holding `buffer`
    examples, with the given priority. `batch` must not exceed `buffer`.
  }];
  let parameters = (ins L2_IntParam<"buffer capacity (examples)">:$buffer,
                        EnumParameter<L2_ReplayPriority>:$priority,
                        L2_IntParam<"batch size">:$batch);
}

def L2_DistributedShardAttr : L2_Attr<"DistributedShard", "distributed_shard"> {
  let summary = "distributed_shard(shards: n, method: <inner>)";
  let description = [{
    Splits the data into `shards` disjoint shards; each shard is sampled with
    the inner sample `method`, whose batch is the per-shard batch the infer
    DAG sees.
  }];
  let parameters = (ins L2_IntParam<"number of shards">:$shards,
                        L2_MethodParam<"inner sample method">:$method);
}

//===----------------------------------------------------------------------===//
// Backward methods
//===----------------------------------------------------------------------===//

def L2_AutodiffAttr : L2_Attr<"Autodiff", "autodiff"> {
  let summary = "autodiff(mode: reverse | forward, checkpoint: [<layer_ref>])";
  let description = [{
    Exact gradients by automatic differentiation; expanded into explicit
    backward tensor ops during L2→L1 lowering. `checkpoint` names layers
    (their `as "name"`) whose outputs are not kept for the backward pass:
    it recomputes their forward ops instead (activation checkpointing, as
    PyTorch's `checkpoint`; the L2 estimate and the backward expansion agree).
    Every op on a path from a parameter to the output must be differentiable
    (row L2.3).
  }];
  let parameters = (ins
      EnumParameter<L2_AutodiffMode>:$mode,
      OptionalParameter<"::mlir::ArrayAttr", "checkpointed layer names">:$checkpoint);
}

def L2_EvolutionAttr : L2_Attr<"Evolution", "evolution"> {
  let summary = "evolution(pop: n, sigma: f, selection: <kind>)";
  let description = [{
    Gradient-free: a population of `pop` perturbed copies (noise scale
    `sigma`), each evaluated with one forward pass, then selected.
  }];
  let parameters = (ins L2_IntParam<"population">:$pop,
                        L2_F64Param<"perturbation scale">:$sigma,
                        EnumParameter<L2_Selection>:$selection);
}

def L2_DfaAttr : L2_Attr<"Dfa", "dfa"> {
  let summary = "dfa(feedback_dim: n)";
  let description = [{
    Direct feedback alignment: the output error (of width `feedback_dim`,
    which must be the output width) is sent to every layer through a fixed
    random matrix. Drives a plain chain of layers only: every layer must
    have a single path to the output (no merges, mixtures, recurrences or
    sub-graphs) (row L2.3).
  }];
  let parameters = (ins L2_IntParam<"error width">:$feedback_dim);
}

def L2_ReinforceAttr : L2_Attr<"Reinforce", "reinforce"> {
  let summary = "reinforce(baseline: <kind>)";
  let description = [{
    Score-function gradients; the infer DAG must end in a distribution
    (`l2.softmax`) to sample from (row L2.3).
  }];
  let parameters = (ins EnumParameter<L2_Baseline>:$baseline);
}

def L2_StraightThroughAttr : L2_Attr<"StraightThrough", "straight_through"> {
  let summary = "straight_through(estimator: <kind>)";
  let description = [{
    Backpropagation in which non-differentiable ops (`l2.quantize`) pass the
    gradient through with the given surrogate.
  }];
  let parameters = (ins EnumParameter<L2_Estimator>:$estimator);
}

def L2_ZerothOrderAttr : L2_Attr<"ZerothOrder", "zeroth_order"> {
  let summary = "zeroth_order(samples: n, sigma: f)";
  let description = [{
    Finite-difference gradient estimate from `samples` random directions
    (two forward passes each) at scale `sigma`.
  }];
  let parameters = (ins L2_IntParam<"random directions">:$samples,
                        L2_F64Param<"perturbation scale">:$sigma);
}

def L2_HybridAttr : L2_Attr<"Hybrid", "hybrid"> {
  let summary = "hybrid(primary: <backward>, aux: <backward>, blend: <schedule>)";
  let description = [{
    Two backward methods whose updates are blended; `blend` is how the
    auxiliary method's weight decays over training. Both must be compatible
    with the infer DAG.
  }];
  let parameters = (ins L2_MethodParam<"primary backward method">:$primary,
                        L2_MethodParam<"auxiliary backward method">:$aux,
                        EnumParameter<L2_DecayKind>:$blend);
}

//===----------------------------------------------------------------------===//
// Update methods
//===----------------------------------------------------------------------===//

def L2_SgdAttr : L2_Attr<"Sgd", "sgd"> {
  let summary = "sgd(lr)";
  let description = "Plain gradient descent. No optimizer state.";
  let parameters = (ins L2_F64Param<"learning rate">:$lr);
}

def L2_AdamAttr : L2_Attr<"Adam", "adam"> {
  let summary = "adam(lr, beta1, beta2, eps)";
  let description = "Adam; two state tensors per parameter (first and second moments).";
  let parameters = (ins L2_F64Param<"learning rate">:$lr,
                        L2_F64Param<"first-moment decay", "0.9">:$beta1,
                        L2_F64Param<"second-moment decay", "0.999">:$beta2,
                        L2_F64Param<"denominator epsilon", "1e-8">:$eps);
}

def L2_MuonAttr : L2_Attr<"Muon", "muon"> {
  let summary = "muon(lr, ns_steps)";
  let description = [{
    Momentum orthogonalized by `ns_steps` Newton–Schulz iterations. Muon
    updates matrices only: every parameter it receives must have rank ≥ 2
    (conv kernels are flattened to 2-D). Route vectors (biases, norm gains)
    elsewhere with `#l2.per_param` (row L2.4). One state tensor per parameter.
  }];
  let parameters = (ins L2_F64Param<"learning rate">:$lr,
                        L2_IntParam<"Newton–Schulz iterations", "5">:$ns_steps);
}

def L2_LionAttr : L2_Attr<"Lion", "lion"> {
  let summary = "lion(lr, beta1, beta2)";
  let description = "Lion (sign momentum); one state tensor per parameter.";
  let parameters = (ins L2_F64Param<"learning rate">:$lr,
                        L2_F64Param<"update interpolation", "0.9">:$beta1,
                        L2_F64Param<"momentum decay", "0.99">:$beta2);
}

def L2_ScheduleAttr : L2_Attr<"Schedule", "schedule"> {
  let summary = "schedule(warmup: n, decay: <kind>, inner: <update>)";
  let description = [{
    Scales the inner update's learning rate: linear warmup over `warmup`
    steps, then `decay`.
  }];
  let parameters = (ins L2_IntParam<"warmup steps">:$warmup,
                        EnumParameter<L2_DecayKind>:$decay,
                        L2_MethodParam<"inner update method">:$inner);
}

def L2_GradientClipAttr : L2_Attr<"GradientClip", "gradient_clip"> {
  let summary = "gradient_clip(max_norm: f, inner: <update>)";
  let description = "Rescales gradients to a global norm of at most `max_norm`.";
  let parameters = (ins L2_F64Param<"maximum global norm">:$max_norm,
                        L2_MethodParam<"inner update method">:$inner);
}

def L2_EmaAttr : L2_Attr<"Ema", "ema"> {
  let summary = "ema(decay: f, inner: <update>)";
  let description = "Keeps an exponential moving average of the parameters (one extra copy).";
  let parameters = (ins L2_F64Param<"averaging decay">:$decay,
                        L2_MethodParam<"inner update method">:$inner);
}

def L2_ParamOverrideAttr : L2_Attr<"ParamOverride", "param_override"> {
  let summary = "the update of one named parameter, with its expected shape";
  let description = [{
    `param` names a parameter as `<layer>.<slot>` (e.g. `"fc1.weight"`; see
    `l2.methods` for the slots of each layer) and `shape` the shape the
    update produces; it must be the parameter's shape (row L2.4).
  }];
  let parameters = (ins StringRefParameter<"parameter name">:$param,
                        L2_ShapeParam:$shape,
                        L2_MethodParam<"update for this parameter">:$update);
}

def L2_PerParamAttr : L2_Attr<"PerParam", "per_param"> {
  let summary = "per-parameter update routing";
  let description = [{
    Chooses each parameter's update: a matching `overrides` entry first, then
    `matrix` for parameters of rank ≥ 2 when given, else `others`. Typical
    use: `muon` for matrices, `adam` for vectors.

    ```mlir
    #l2.per_param<others = adam<lr = 3.0e-4>, matrix = muon<lr = 2.0e-2>>
    ```
  }];
  let parameters = (ins L2_MethodParam<"update for parameters no other rule picks">:$others,
                        L2_OptionalMethodParam<"update for rank >= 2 parameters">:$matrix,
                        OptionalParameter<"::mlir::ArrayAttr", "per-parameter overrides">:$overrides);
}

#endif // SYNPL_DIALECT_L2_ATTRS_TD
