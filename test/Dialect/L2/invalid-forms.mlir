// RUN: synpl-opt %s -split-input-file -verify-diagnostics

// Malformed methods and layer ops that are rejected before any row runs:
// bad method attributes, wrong method families, malformed region forms.

l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      l2.yield %x : tensor<4x16xf32>
    }
    backward autodiff<mode = reverse>
    // expected-error@+1 {{beta1 must be in [0, 1), got 1.5}}
    update adam<lr = 1.0e-3, beta1 = 1.5>

// -----

l2.methods @m for @classify
    // expected-error@+1 {{a replay batch of 64 cannot be drawn from a buffer of 32}}
    sample replay<buffer = 32, priority = uniform, batch = 64>
    infer(%x: tensor<64x16xf32>) {
      l2.yield %x : tensor<64x16xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      l2.yield %x : tensor<4x16xf32>
    }
    backward autodiff<mode = reverse>
    // expected-error@+1 {{inner must be an update method, got #l2.epoch_shuffle<batch = 4>}}
    update schedule<warmup = 10, decay = cosine, inner = epoch_shuffle<batch = 4>>

// -----

l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      l2.yield %x : tensor<4x16xf32>
    }
    backward autodiff<mode = reverse>
    // expected-error@+1 {{parameter "a.weight" is overridden twice}}
    update per_param<others = sgd<lr = 0.1>, overrides = [
        #l2.param_override<param = "a.weight", shape = [1], update = sgd<lr = 0.1>>,
        #l2.param_override<param = "a.weight", shape = [1], update = sgd<lr = 0.1>>]>

// -----

// expected-error@+1 {{'l2.methods' op backward must be a backward method (#l2.autodiff, ...), got #l2.sgd<lr = 0.1>}}
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      l2.yield %x : tensor<4x16xf32>
    }
    backward sgd<lr = 0.1>
    update sgd<lr = 0.1>

// -----

// expected-error@+1 {{'l2.methods' op the infer region must take the model's inputs as block arguments}}
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer() {
      l2.yield
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      // expected-error@+1 {{'l2.recurrent' op takes exactly one of `steps = n` and `until(pred)`}}
      %0 = "l2.recurrent"(%x) ({
      ^bb0(%s: tensor<4x16xf32>):
        l2.yield %s : tensor<4x16xf32>
      }) : (tensor<4x16xf32>) -> tensor<4x16xf32>
      l2.yield %0 : tensor<4x16xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x8x4x4xf32>) {
      // expected-error@+1 {{'l2.norm' op takes a group count exactly when its kind is group}}
      %0 = "l2.norm"(%x) <{kind = 1 : i32}> : (tensor<4x8x4x4xf32>) -> tensor<4x8x4x4xf32>
      l2.yield %0 : tensor<4x8x4x4xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      // expected-error@+1 {{'l2.mixture' op top_k 3 exceeds the 1 experts}}
      %0 = l2.mixture(top_k = 3) %x : tensor<4x16xf32> -> tensor<4x16xf32> experts({
      ^bb0(%in: tensor<4x16xf32>):
        l2.yield %in : tensor<4x16xf32>
      }) gate {
      ^bb0(%in: tensor<4x16xf32>):
        %1 = l2.linear(16, 1) %in : tensor<4x16xf32>
        l2.yield %1 : tensor<4x1xf32>
      }
      l2.yield %0 : tensor<4x16xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// L2.1 in the generic form, where the result type is spelled out.
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      // expected-error@+1 {{[consistency] L2.1: the result is declared as 'tensor<4x99xf32>', but the shape rule gives 'tensor<4x32xf32>'}}
      %0 = "l2.linear"(%x) <{in = 16 : i64, out = 32 : i64}> : (tensor<4x16xf32>) -> tensor<4x99xf32>
      l2.yield %0 : tensor<4x99xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// L2.1 in the generic form: the input does not fit the layer.
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      // expected-error@+1 {{[consistency] L2.1: linear(784, 32) expects an input whose last dimension is 784, got tensor<4x16xf32>}}
      %0 = "l2.linear"(%x) <{in = 784 : i64, out = 32 : i64}> : (tensor<4x16xf32>) -> tensor<4x32xf32>
      l2.yield %0 : tensor<4x32xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// L2.1: shape rules do not wrap around 64 bits.
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x9223372036854775807x4xf32>) {
      // expected-error@+1 {{[consistency] L2.1: flatten of tensor<4x9223372036854775807x4xf32> has more elements than fit in 64 bits}}
      %0 = l2.flatten %x : tensor<4x9223372036854775807x4xf32>
      l2.yield %0 : tensor<4x1xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// An escape hatch on an L2 layer targets a layer below L2.
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      // expected-error@+1 {{'l2.linear' op an escape hatch on an L2 layer must target a lower layer (l1 or l0), got l2::backward}}
      %0 = l2.linear(16, 16) %x hints [#l3.hint<l2::backward, "evolution(pop: 50)">] : tensor<4x16xf32>
      l2.yield %0 : tensor<4x16xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      l2.yield %x : tensor<4x16xf32>
    }
    backward autodiff<mode = reverse>
    // expected-error@+2 {{unknown method 'adamw'}}
    // expected-error@+1 {{failed to parse L2_ScheduleAttr parameter 'inner'}}
    update schedule<warmup = 10, decay = cosine, inner = adamw<lr = 0.1>>

// -----

l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      // expected-error@+1 {{dropout probability must be in [0, 1), got 1.5}}
      %0 = l2.dropout(1.5) %x : tensor<4x16xf32>
      l2.yield %0 : tensor<4x16xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// L2.1: shapes are known at L2; a dynamic dimension is rejected by the
// shape rule before it can reach any arithmetic.
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<?x16xf32>) {
      // expected-error@+1 {{[consistency] L2.1: layers take statically shaped tensors, got tensor<?x16xf32>}}
      %0 = l2.linear(16, 16) %x : tensor<?x16xf32>
      l2.yield %0 : tensor<4x16xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>
