// RUN: synpl-opt %s -split-input-file -verify-diagnostics

// Programs each verification row of the l2 dialect must reject (the valid
// counterparts are in valid.mlir). Each case names its row.

// L2.1: linear(784, 256) fed a 512-wide tensor.
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x512xf32>) {
      // expected-error@+1 {{[consistency] L2.1: linear(784, 256) expects an input whose last dimension is 784, got tensor<4x512xf32>}}
      %0 = l2.linear(784, 256) %x : tensor<4x512xf32>
      l2.yield %0 : tensor<4x256xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// L2.1: a conv whose input channels disagree with in_ch.
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x3x32x32xf32>) {
      // expected-error@+1 {{[consistency] L2.1: conv(1, 8, ...) expects 1 input channels (dimension 1), got tensor<4x3x32x32xf32>}}
      %0 = l2.conv(1, 8, kernel = 3, stride = 1, padding = 0) %x : tensor<4x3x32x32xf32>
      l2.yield %0 : tensor<4x8x30x30xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// L2.1: attention width not divisible by the heads.
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16x60xf32>) {
      // expected-error@+1 {{[consistency] L2.1: attn dim 60 is not divisible by 8 heads}}
      %0 = l2.attn(heads = 8, dim = 60) %x : tensor<4x16x60xf32>
      l2.yield %0 : tensor<4x16x60xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// L2.1: a residual merge of two different shapes.
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      %0 = l2.linear(16, 32) %x : tensor<4x16xf32>
      // expected-error@+1 {{[consistency] L2.1: add merges tensors of one type, got tensor<4x32xf32> and tensor<4x16xf32>}}
      %1 = l2.add %0, %x : tensor<4x32xf32>, tensor<4x16xf32>
      l2.yield %1 : tensor<4x32xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// L2.1: pooling past the spatial extent.
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x3x2x2xf32>) {
      // expected-error@+1 {{[consistency] L2.1: pool kernel 4 is larger than spatial dimension 2 of size 2}}
      %0 = l2.pool(max, kernel = 4) %x : tensor<4x3x2x2xf32>
      l2.yield %0 : tensor<4x3x0x0xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// L2.1: group norm over channels that do not split into the groups.
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x6x8x8xf32>) {
      // expected-error@+1 {{[consistency] L2.1: norm(group(4)) needs the channel count to divide into 4 groups, got 6 channels}}
      %0 = l2.norm(group(4)) %x : tensor<4x6x8x8xf32>
      l2.yield %0 : tensor<4x6x8x8xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// L2.1: an embedding of float values.
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x8xf32>) {
      // expected-error@+1 {{[consistency] L2.1: embed expects integer token ids, got tensor<4x8xf32>}}
      %0 = l2.embed(vocab = 100, dim = 16) %x : tensor<4x8xf32>
      l2.yield %0 : tensor<4x8x16xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// L2.1: learned positions need [batch, positions] token ids.
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x8xi32>) {
      // expected-error@+1 {{[consistency] L2.1: embed with positions = 16 expects [batch, 16] token ids, got tensor<4x8xi32>}}
      %0 = l2.embed(vocab = 100, dim = 16, positions = 16) %x : tensor<4x8xi32>
      l2.yield %0 : tensor<4x8x16xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// L2.1: a recurrent cell that changes the state's shape.
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      %0 = l2.recurrent(steps = 3) %x : tensor<4x16xf32> {
      ^bb0(%s: tensor<4x16xf32>):
        %1 = l2.linear(16, 8) %s : tensor<4x16xf32>
        // expected-error@+1 {{[consistency] L2.1: the cell region must yield ('tensor<4x16xf32>'), got ('tensor<4x8xf32>')}}
        l2.yield %1 : tensor<4x8xf32>
      }
      l2.yield %0 : tensor<4x16xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// L2.1: a mixture gate that scores 3 experts when there are 2.
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      %0 = l2.mixture %x : tensor<4x16xf32> -> tensor<4x16xf32> experts({
      ^bb0(%in: tensor<4x16xf32>):
        %1 = l2.linear(16, 16) %in : tensor<4x16xf32>
        l2.yield %1 : tensor<4x16xf32>
      }, {
      ^bb0(%in: tensor<4x16xf32>):
        l2.yield %in : tensor<4x16xf32>
      }) gate {
      ^bb0(%in: tensor<4x16xf32>):
        %1 = l2.linear(16, 3) %in : tensor<4x16xf32>
        // expected-error@+1 {{[consistency] L2.1: the gate must yield [4, 2] expert scores, got 'tensor<4x3xf32>'}}
        l2.yield %1 : tensor<4x3xf32>
      }
      l2.yield %0 : tensor<4x16xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-note@+1 {{the constraints of @classify}}
l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [depth(2), width(512), param_budget(500K)]

// L2.2: three stages composed under depth(2).
// expected-error@+1 {{[consistency] L2.2: the infer DAG composes 3 stages (linear, conv, attn, embed) on its longest path, but @classify allows depth(2)}}
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x28x28xf32>) {
      %0 = l2.flatten %x : tensor<4x28x28xf32>
      %1 = l2.linear(784, 64) %0 : tensor<4x784xf32>
      %2 = l2.linear(64, 64) %1 : tensor<4x64xf32>
      %3 = l2.linear(64, 10) %2 : tensor<4x64xf32>
      %4 = l2.softmax %3 : tensor<4x10xf32>
      l2.yield %4 : tensor<4x10xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-note@+1 {{the constraints of @classify}}
l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [depth(3), width(512), param_budget(5M)]

// L2.2: a 1024-wide layer under width(512).
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x28x28xf32>) {
      %0 = l2.flatten %x : tensor<4x28x28xf32>
      // expected-error@+1 {{[consistency] L2.2: 'l2.linear' "wide" is 1024 wide, but @classify allows width(512)}}
      %1 = l2.linear(784, 1024) %0 as "wide" : tensor<4x784xf32>
      %2 = l2.linear(1024, 10) %1 : tensor<4x1024xf32>
      %3 = l2.softmax %2 : tensor<4x10xf32>
      l2.yield %3 : tensor<4x10xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-note@+1 {{the constraints of @classify}}
l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [depth(3), width(512), param_budget(200K)]

// L2.2: 784*256+256 + 2*256 + 256*10+10 = 204,042 parameters over 200K.
// expected-error@+1 {{[consistency] L2.2: the infer DAG has 204042 parameters, over @classify's param_budget(200000); by layer: fc1 200960, norm_0 512, fc2 2570}}
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x28x28xf32>) {
      %0 = l2.flatten %x : tensor<4x28x28xf32>
      %1 = l2.linear(784, 256) %0 as "fc1" : tensor<4x784xf32>
      %2 = l2.norm(layer) %1 : tensor<4x256xf32>
      %3 = l2.linear(256, 10) %2 as "fc2" : tensor<4x256xf32>
      %4 = l2.softmax %3 : tensor<4x10xf32>
      l2.yield %4 : tensor<4x10xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

l3.data @corpus {
  l3.field @tokens : !l3.sequence<!l3.scalar<i32>, 16>
}
// expected-note@+1 {{the constraints of @lm}}
l3.model @lm in @corpus::@tokens out tensor<16x100xf32> properties [causal]

// L2.2: attention that sees the future in a causal model.
l2.methods @m for @lm
    sample epoch_shuffle<batch = 2>
    infer(%t: tensor<2x16xi32>) {
      %0 = l2.embed(vocab = 100, dim = 32) %t : tensor<2x16xi32>
      // expected-error@+1 {{[consistency] L2.2: 'l2.attn' attends to future positions, but @lm is causal; write attn(..., causal)}}
      %1 = l2.attn(heads = 4, dim = 32) %0 : tensor<2x16x32xf32>
      %2 = l2.linear(32, 100) %1 : tensor<2x16x32xf32>
      l2.yield %2 : tensor<2x16x100xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-note@+1 {{the constraints of @classify}}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []

// L2.2: the output is not a batch of dist(10).
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x28x28xf32>) {
      %0 = l2.flatten %x : tensor<4x28x28xf32>
      %1 = l2.linear(784, 12) %0 : tensor<4x784xf32>
      // expected-error@+1 {{[consistency] L2.2: the infer DAG yields 'tensor<4x12xf32>', but a batch of @classify's output domain '!l3.dist<10>' is 'tensor<4x10xf32>' (any float type)}}
      l2.yield %1 : tensor<4x12xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// L2.3: autodiff through a quantize with parameters upstream.
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      // expected-note@+1 {{parameters upstream of the quantize}}
      %0 = l2.linear(16, 16) %x as "enc" : tensor<4x16xf32>
      // expected-error@+1 {{[consistency] L2.3: autodiff cannot differentiate through 'l2.quantize' (its derivative is zero almost everywhere), and the parameters of 'l2.linear' "enc" lie upstream of it; use straight_through(estimator: ...) or a gradient-free backward method}}
      %1 = l2.quantize(bits = 4) %0 : tensor<4x16xf32>
      %2 = l2.linear(16, 10) %1 : tensor<4x16xf32>
      l2.yield %2 : tensor<4x10xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// L2.3: dfa cannot drive a residual connection.
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      %0 = l2.linear(16, 16) %x : tensor<4x16xf32>
      // expected-error@+1 {{[consistency] L2.3: dfa(feedback_dim: 16) drives a plain chain of layers only; 'l2.add' merges two paths}}
      %1 = l2.add %0, %x : tensor<4x16xf32>, tensor<4x16xf32>
      l2.yield %1 : tensor<4x16xf32>
    }
    backward dfa<feedback_dim = 16>
    update sgd<lr = 0.1>

// -----

// L2.3: dfa's feedback width is not the output error's.
// expected-error@+1 {{[consistency] L2.3: dfa feedback_dim 16 must be the width of the output error, the last dimension of 'tensor<4x10xf32>'}}
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      %0 = l2.linear(16, 10) %x : tensor<4x16xf32>
      l2.yield %0 : tensor<4x10xf32>
    }
    backward dfa<feedback_dim = 16>
    update sgd<lr = 0.1>

// -----

// L2.3: a checkpoint naming a layer the DAG does not have.
// expected-error@+1 {{[consistency] L2.3: autodiff checkpoint names layer "fc9", which is not in the infer DAG (label a layer with `as "fc9"`)}}
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      %0 = l2.linear(16, 10) %x as "fc1" : tensor<4x16xf32>
      l2.yield %0 : tensor<4x10xf32>
    }
    backward autodiff<mode = reverse, checkpoint = ["fc1", "fc9"]>
    update sgd<lr = 0.1>

// -----

// L2.3: reinforce needs an output distribution to sample from.
// expected-error@+1 {{[consistency] L2.3: reinforce samples from the model's output distribution, but the infer DAG does not end in l2.softmax}}
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      %0 = l2.linear(16, 10) %x : tensor<4x16xf32>
      l2.yield %0 : tensor<4x10xf32>
    }
    backward reinforce<baseline = none>
    update sgd<lr = 0.1>

// -----

// L2.3: the aux method of a hybrid is checked too.
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      // expected-note@+1 {{parameters upstream of the quantize}}
      %0 = l2.linear(16, 16) %x : tensor<4x16xf32>
      // expected-error@+1 {{[consistency] L2.3: autodiff cannot differentiate through 'l2.quantize'}}
      %1 = l2.quantize(bits = 2) %0 : tensor<4x16xf32>
      l2.yield %1 : tensor<4x16xf32>
    }
    backward hybrid<primary = evolution<pop = 8, sigma = 0.1, selection = rank>, aux = autodiff<mode = reverse>, blend = linear>
    update sgd<lr = 0.1>

// -----

// L2.4: muon on a bias vector.
// expected-error@+1 {{[consistency] L2.4: muon produces orthogonalized matrix updates, but parameter "fc1.bias" has shape [10]; route vectors elsewhere, e.g. per_param<others = adam<...>, matrix = muon<...>>}}
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      // expected-note@+1 {{the layer that owns "fc1.bias"}}
      %0 = l2.linear(16, 10) %x as "fc1" : tensor<4x16xf32>
      l2.yield %0 : tensor<4x10xf32>
    }
    backward autodiff<mode = reverse>
    update schedule<warmup = 100, decay = linear, inner = muon<lr = 0.02>>

// -----

// L2.4: an override that produces a transposed weight.
// expected-error@+1 {{[consistency] L2.4: the update of "fc1.weight" produces a [10, 16] parameter, but 'l2.linear' "fc1" has it as [16, 10]}}
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      // expected-note@+1 {{the layer that owns "fc1.weight"}}
      %0 = l2.linear(16, 10) %x as "fc1" : tensor<4x16xf32>
      l2.yield %0 : tensor<4x10xf32>
    }
    backward autodiff<mode = reverse>
    update per_param<others = adam<lr = 1.0e-3>, overrides = [
        #l2.param_override<param = "fc1.weight", shape = [10, 16], update = sgd<lr = 0.1>>]>

// -----

// L2.4: an override of a parameter that does not exist.
// expected-error@+1 {{[consistency] L2.4: the update chain overrides parameter "fc2.weight", which the infer DAG does not have; its parameters are "fc1.weight", "fc1.bias"}}
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      %0 = l2.linear(16, 10) %x as "fc1" : tensor<4x16xf32>
      l2.yield %0 : tensor<4x10xf32>
    }
    backward autodiff<mode = reverse>
    update per_param<others = adam<lr = 1.0e-3>, overrides = [
        #l2.param_override<param = "fc2.weight", shape = [16, 10], update = sgd<lr = 0.1>>]>

// -----

// L2.5: batches of 128 from the sample method, 64 in the infer input.
// expected-error@+1 {{[consistency] L2.5: infer input #0 has type 'tensor<64x16xf32>', but the sample method #l2.epoch_shuffle<batch = 128> gives batches of 128 examples; its leading dimension must be 128}}
l2.methods @m for @classify
    sample epoch_shuffle<batch = 128>
    infer(%x: tensor<64x16xf32>) {
      %0 = l2.linear(16, 10) %x : tensor<64x16xf32>
      l2.yield %0 : tensor<64x10xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// L2.5: a sharded sampler: the infer DAG sees the per-shard batch (32).
// expected-error@+1 {{[consistency] L2.5: infer input #0 has type 'tensor<128x16xf32>', but the sample method #l2.distributed_shard<shards = 4, method = epoch_shuffle<batch = 32>> gives batches of 32 examples; its leading dimension must be 32}}
l2.methods @m for @classify
    sample distributed_shard<shards = 4, method = epoch_shuffle<batch = 32>>
    infer(%x: tensor<128x16xf32>) {
      %0 = l2.linear(16, 10) %x : tensor<128x16xf32>
      l2.yield %0 : tensor<128x10xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

l3.data @mnist {
  // expected-note@+1 {{the data field the model reads}}
  l3.field @images : tensor<28x28xf32>
}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []

// L2.5: the infer input is not a batch of the data field (784 vs 28x28).
// expected-error@+1 {{[consistency] L2.5: infer input #0 has type 'tensor<128x784xf32>', but a batch of 128 examples of @mnist::@images (domain 'tensor<28x28xf32>') is 'tensor<128x28x28xf32>'}}
l2.methods @m for @classify
    sample epoch_shuffle<batch = 128>
    infer(%x: tensor<128x784xf32>) {
      %0 = l2.linear(784, 10) %x : tensor<128x784xf32>
      %1 = l2.softmax %0 : tensor<128x10xf32>
      l2.yield %1 : tensor<128x10xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

l3.data @corpus {
  // expected-note@+1 {{the data field the model reads}}
  l3.field @tokens : !l3.sequence<!l3.scalar<i32>, 16>
}
l3.model @lm in @corpus::@tokens out tensor<16x100xf32> properties []

// L2.5: a sequence of i32 tokens read as i64.
// expected-error@+1 {{[consistency] L2.5: infer input #0 has type 'tensor<2x16xi64>', but a batch of 2 examples of @corpus::@tokens (domain '!l3.sequence<!l3.scalar<i32>, 16>') is 'tensor<2x16xi32>'}}
l2.methods @m for @lm
    sample epoch_shuffle<batch = 2>
    infer(%t: tensor<2x16xi64>) {
      %0 = l2.embed(vocab = 100, dim = 32) %t : tensor<2x16xi64>
      %1 = l2.linear(32, 100) %0 : tensor<2x16x32xf32>
      l2.yield %1 : tensor<2x16x100xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// L2.6: a cycle in the infer graph, named.
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      // expected-error@+1 {{[resource] L2.6: the infer graph of @m has a cycle: 'l2.add' -> 'l2.linear' "back" -> 'l2.add' (unroll the loop as l2.recurrent with a bounded trip count)}}
      %0 = l2.add %x, %1 : tensor<4x16xf32>, tensor<4x16xf32>
      // expected-note@+1 {{on the cycle: 'l2.linear' "back"}}
      %1 = l2.linear(16, 16) %0 as "back" : tensor<4x16xf32>
      l2.yield %1 : tensor<4x16xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// L2.6: a layer that reads its own output.
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      // expected-error@+1 {{[resource] L2.6: the infer graph of @m has a cycle: 'l2.add' -> 'l2.add'}}
      %0 = l2.add %x, %0 : tensor<4x16xf32>, tensor<4x16xf32>
      l2.yield %0 : tensor<4x16xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// L2.6: a cycle inside an explicit graph(...) sub-DAG.
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      %0 = l2.graph(%x) as "g" : (tensor<4x16xf32>) -> tensor<4x16xf32> {
      ^bb0(%in: tensor<4x16xf32>):
        // expected-error@+1 {{[resource] L2.6: the infer graph of 'l2.graph' "g" has a cycle: 'l2.linear' -> 'l2.act' -> 'l2.linear'}}
        %a = l2.linear(16, 16) %b : tensor<4x16xf32>
        // expected-note@+1 {{on the cycle: 'l2.act'}}
        %b = l2.act(relu) %a : tensor<4x16xf32>
        l2.yield %b : tensor<4x16xf32>
      }
      l2.yield %0 : tensor<4x16xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// L2.6: recurrent until(pred) without a bound.
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      // expected-error@+1 {{[resource] L2.6: recurrent until("converged") has no proven bound; declare one with `max_steps = n` (unbounded execution is a specification error)}}
      %0 = l2.recurrent(until("converged")) %x : tensor<4x16xf32> {
      ^bb0(%s: tensor<4x16xf32>):
        %1 = l2.linear(16, 16) %s : tensor<4x16xf32>
        l2.yield %1 : tensor<4x16xf32>
      }
      l2.yield %0 : tensor<4x16xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-note@+1 {{the constraints of @classify}}
l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [latency_budget(0.001ms)]

// L2.7: 128*(2*784*4096 + 4096) + 128*(2*4096*10 + 10) + 5*128*10 (softmax)
// = 833,101,312 FLOPs take 0.083 ms at the reference throughput, over a
// 1 us budget.
// expected-error@+1 {{[resource] L2.7: the forward pass is estimated at 833101312 FLOPs, 0.0833101 ms at the reference 10 TFLOP/s (kReferenceFlopsPerSecond), over @classify's latency_budget(0.001ms)}}
l2.methods @m for @classify
    sample epoch_shuffle<batch = 128>
    infer(%x: tensor<128x28x28xf32>) {
      %0 = l2.flatten %x : tensor<128x28x28xf32>
      %1 = l2.linear(784, 4096) %0 : tensor<128x784xf32>
      %2 = l2.linear(4096, 10) %1 : tensor<128x4096xf32>
      %3 = l2.softmax %2 : tensor<128x10xf32>
      l2.yield %3 : tensor<128x10xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// L2.7: a recurrence so long its FLOP count is past 2^64.
// expected-error@+1 {{[resource] L2.7: the resource estimate (parameters, FLOPs per step, memory) of this method does not fit in 64 bits}}
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x1024xf32>) {
      %0 = l2.recurrent(steps = 4611686018427387904) %x : tensor<4x1024xf32> {
      ^bb0(%s: tensor<4x1024xf32>):
        %1 = l2.linear(1024, 1024) %s : tensor<4x1024xf32>
        l2.yield %1 : tensor<4x1024xf32>
      }
      l2.yield %0 : tensor<4x1024xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}

// [safety] L3.1: `for` must name an l3.model.
// expected-error@+1 {{[safety] L3.1: methods for @mnist: the symbol is a 'l3.data', not a model (an op such as l3.model that declares what is trained)}}
l2.methods @m for @mnist
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x28x28xf32>) {
      l2.yield %x : tensor<4x28x28xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// [safety] L3.1: a model that does not exist.
// expected-error@+1 {{[safety] L3.1: methods for @nowhere: no such model}}
l2.methods @m for @nowhere
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      l2.yield %x : tensor<4x16xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// L2.6: a cycle through a nested region: the cell reads a value computed
// from the recurrence's own result.
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      // expected-error@+1 {{[resource] L2.6: the infer graph of @m has a cycle: 'l2.recurrent' "loop" -> 'l2.act' -> 'l2.recurrent' "loop"}}
      %0 = l2.recurrent(steps = 2) %x as "loop" : tensor<4x16xf32> {
      ^bb0(%s: tensor<4x16xf32>):
        %1 = l2.add %s, %fed : tensor<4x16xf32>, tensor<4x16xf32>
        l2.yield %1 : tensor<4x16xf32>
      }
      // expected-note@+1 {{on the cycle: 'l2.act'}}
      %fed = l2.act(relu) %0 : tensor<4x16xf32>
      l2.yield %fed : tensor<4x16xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// L2.3: dfa cannot drive a recurrence.
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      // expected-error@+1 {{[consistency] L2.3: dfa(feedback_dim: 16) drives a plain chain of layers only; 'l2.recurrent' holds a sub-DAG}}
      %0 = l2.recurrent(steps = 2) %x : tensor<4x16xf32> {
      ^bb0(%s: tensor<4x16xf32>):
        %1 = l2.linear(16, 16) %s : tensor<4x16xf32>
        l2.yield %1 : tensor<4x16xf32>
      }
      l2.yield %0 : tensor<4x16xf32>
    }
    backward dfa<feedback_dim = 16>
    update sgd<lr = 0.1>

// -----

// L2.3: dfa cannot drive a layer whose output fans out.
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      // expected-error@+1 {{[consistency] L2.3: dfa(feedback_dim: 16) drives a plain chain of layers only; the output of 'l2.linear' "split" has 2 uses}}
      %0 = l2.linear(16, 16) %x as "split" : tensor<4x16xf32>
      %1 = l2.act(relu) %0 : tensor<4x16xf32>
      %2 = l2.softmax %0 : tensor<4x16xf32>
      l2.yield %1 : tensor<4x16xf32>
    }
    backward hybrid<primary = zeroth_order<samples = 2, sigma = 0.1>, aux = dfa<feedback_dim = 16>, blend = step>
    update sgd<lr = 0.1>

// -----

// L2.3: checkpoints belong to reverse mode.
// expected-error@+1 {{[consistency] L2.3: checkpoint applies to reverse-mode autodiff only; forward mode keeps no activations}}
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      %0 = l2.linear(16, 10) %x as "fc1" : tensor<4x16xf32>
      l2.yield %0 : tensor<4x10xf32>
    }
    backward autodiff<mode = forward, checkpoint = ["fc1"]>
    update sgd<lr = 0.1>

// -----

// L2.3: inside a recurrent cell, the previous step's parameters are
// upstream of the quantize (backpropagation through time crosses it).
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x16xf32>) {
      // expected-note@+1 {{parameters upstream of the quantize}}
      %0 = l2.recurrent(steps = 3) %x as "rnn" : tensor<4x16xf32> {
      ^bb0(%s: tensor<4x16xf32>):
        // expected-error@+1 {{[consistency] L2.3: autodiff cannot differentiate through 'l2.quantize' (its derivative is zero almost everywhere), and the parameters of 'l2.recurrent' "rnn" lie upstream of it}}
        %q = l2.quantize(bits = 4) %s : tensor<4x16xf32>
        %1 = l2.linear(16, 16) %q : tensor<4x16xf32>
        l2.yield %1 : tensor<4x16xf32>
      }
      l2.yield %0 : tensor<4x16xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// L2.2: the model's escape hatch forces evolution; the method uses autodiff.
// expected-error@+1 {{[consistency] L2.2: the escape hatch #[l2::backward(evolution(pop: 50))] forces the backward method, but @m uses #l2.autodiff<mode = reverse>}}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
    hints [#l3.hint<l2::backward, "evolution(pop: 50)">]

// expected-note@+1 {{the method for @classify}}
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x28x28xf32>) {
      %0 = l2.flatten %x : tensor<4x28x28xf32>
      %1 = l2.linear(784, 10) %0 : tensor<4x784xf32>
      %2 = l2.softmax %1 : tensor<4x10xf32>
      l2.yield %2 : tensor<4x10xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// L2.2: a nested hinted argument that the method does not honour.
// expected-error@+1 {{[consistency] L2.2: the escape hatch #[l2::update(schedule(warmup: 1000, inner: adam(lr: 3e-4)))] forces the update method, but @m uses #l2.schedule<warmup = 1000, decay = cosine, inner = adam<lr = 0.001>>}}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
    hints [#l3.hint<l2::update, "schedule(warmup: 1000, inner: adam(lr: 3e-4))">]

// expected-note@+1 {{the method for @classify}}
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x28x28xf32>) {
      %0 = l2.flatten %x : tensor<4x28x28xf32>
      %1 = l2.linear(784, 10) %0 : tensor<4x784xf32>
      %2 = l2.softmax %1 : tensor<4x10xf32>
      l2.yield %2 : tensor<4x10xf32>
    }
    backward autodiff<mode = reverse>
    update schedule<warmup = 1000, decay = cosine, inner = adam<lr = 1.0e-3>>

// -----

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// L2.2: a hatch whose arguments are not key: value cannot be checked.
// expected-error@+1 {{[consistency] L2.2: the escape hatch #[l2::backward(dfa(10))] is not an L2 method written as name(key: value, ...)}}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
    hints [#l3.hint<l2::backward, "dfa(10)">]

// expected-note@+1 {{the method for @classify}}
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x28x28xf32>) {
      %0 = l2.flatten %x : tensor<4x28x28xf32>
      %1 = l2.linear(784, 10) %0 : tensor<4x784xf32>
      l2.yield %1 : tensor<4x10xf32>
    }
    backward dfa<feedback_dim = 10>
    update sgd<lr = 0.1>

// -----

// L2.1: a reshape that changes the element count of an example.
l2.methods @m for @classify
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x784xf32>) {
      // expected-error@+1 {{[consistency] L2.1: reshape of tensor<4x784xf32> (784 elements per example) to 729 elements per example}}
      %0 = l2.reshape [27, 27] %x : tensor<4x784xf32>
      l2.yield %0 : tensor<4x27x27xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>
