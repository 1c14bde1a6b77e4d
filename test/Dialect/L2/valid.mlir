// RUN: synpl-opt %s | FileCheck %s

// Programs that pass each verification row of the l2 dialect, each at the
// edge its row checks (the rejected counterparts are in invalid.mlir).

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
l3.data @corpus {
  l3.field @tokens : !l3.sequence<!l3.scalar<i32>, 16>
}
// Exactly at the limits: depth(3), width(256), 270,346 parameters.
l3.model @tight in @mnist::@images out !l3.dist<10>
    properties [depth(3), width(256), param_budget(270346), latency_budget(0.01ms)]
l3.model @lm in @corpus::@tokens out tensor<16x100xf32> properties [causal, width(64)]
l3.model @free in @mnist::@images out !l3.dist<10> properties []

// L2.1, L2.2, L2.5, L2.7: every shape edge agrees; 3 stages, 256 wide,
// 270,346 parameters (= the budget); the input is a batch of 128 images;
// the forward pass (69,934,592 FLOPs) takes 0.007 ms at the reference
// throughput, inside 0.01 ms.
// CHECK-LABEL: l2.methods @at_limits for @tight
l2.methods @at_limits for @tight
    sample epoch_shuffle<batch = 128>
    infer(%x: tensor<128x28x28xf32>) {
      %0 = l2.flatten %x : tensor<128x28x28xf32>
      %1 = l2.linear(784, 256) %0 : tensor<128x784xf32>
      %2 = l2.norm(layer) %1 : tensor<128x256xf32>
      %3 = l2.act(gelu) %2 : tensor<128x256xf32>
      %4 = l2.linear(256, 256) %3 : tensor<128x256xf32>
      %5 = l2.norm(layer) %4 : tensor<128x256xf32>
      %6 = l2.act(gelu) %5 : tensor<128x256xf32>
      %7 = l2.linear(256, 10) %6 : tensor<128x256xf32>
      %8 = l2.softmax %7 : tensor<128x10xf32>
      l2.yield %8 : tensor<128x10xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// L2.2 (causal, width), L2.5 (sequence of i32 tokens, sharded sampler):
// causal attention in a causal model; hidden widths of 32 under width(64)
// (the 100-wide output projection has the output domain's width, which is
// not a hidden width); each shard's batch of 2.
// CHECK-LABEL: l2.methods @causal_lm for @lm
l2.methods @causal_lm for @lm
    sample distributed_shard<shards = 8, method = epoch_shuffle<batch = 2>>
    infer(%t: tensor<2x16xi32>) {
      %0 = l2.embed(vocab = 100, dim = 32) %t : tensor<2x16xi32>
      %1 = l2.attn(heads = 4, dim = 32, causal) %0 : tensor<2x16x32xf32>
      %2 = l2.linear(32, 100) %1 : tensor<2x16x32xf32>
      l2.yield %2 : tensor<2x16x100xf32>
    }
    backward autodiff<mode = reverse>
    update adam<lr = 1.0e-3>

// L2.3: quantizing the raw input (no parameter upstream) under autodiff;
// a checkpoint naming a labelled layer; quantizing a hidden layer under
// straight_through; dfa on a plain chain with the output's width.
// CHECK-LABEL: l2.methods @quantized_input for @free
l2.methods @quantized_input for @free
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x28x28xf32>) {
      %q = l2.quantize(bits = 8) %x : tensor<4x28x28xf32>
      %0 = l2.flatten %q : tensor<4x28x28xf32>
      %1 = l2.linear(784, 10) %0 as "head" : tensor<4x784xf32>
      %2 = l2.softmax %1 : tensor<4x10xf32>
      l2.yield %2 : tensor<4x10xf32>
    }
    backward autodiff<mode = reverse, checkpoint = ["head"]>
    update sgd<lr = 0.1>

// CHECK-LABEL: l2.methods @ste for @free
l2.methods @ste for @free
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x28x28xf32>) {
      %0 = l2.flatten %x : tensor<4x28x28xf32>
      %1 = l2.linear(784, 64) %0 : tensor<4x784xf32>
      %q = l2.quantize(bits = 2) %1 : tensor<4x64xf32>
      %2 = l2.linear(64, 10) %q : tensor<4x64xf32>
      %3 = l2.softmax %2 : tensor<4x10xf32>
      l2.yield %3 : tensor<4x10xf32>
    }
    backward hybrid<primary = autodiff<mode = reverse>, aux = straight_through<estimator = identity>, blend = constant>
    update sgd<lr = 0.1>

// CHECK-LABEL: l2.methods @dfa_chain for @free
l2.methods @dfa_chain for @free
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x28x28xf32>) {
      %0 = l2.flatten %x : tensor<4x28x28xf32>
      %1 = l2.linear(784, 64) %0 : tensor<4x784xf32>
      %2 = l2.act(relu) %1 : tensor<4x64xf32>
      %3 = l2.linear(64, 10) %2 : tensor<4x64xf32>
      %4 = l2.softmax %3 : tensor<4x10xf32>
      l2.yield %4 : tensor<4x10xf32>
    }
    backward dfa<feedback_dim = 10>
    update sgd<lr = 0.1>

// L2.4: muon on the matrices only, adam on the vectors; an override whose
// shape is the parameter's.
// CHECK-LABEL: l2.methods @muon_split for @free
l2.methods @muon_split for @free
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x28x28xf32>) {
      %0 = l2.flatten %x : tensor<4x28x28xf32>
      %1 = l2.linear(784, 64) %0 as "fc1" : tensor<4x784xf32>
      %2 = l2.norm(layer) %1 : tensor<4x64xf32>
      %3 = l2.linear(64, 10) %2 : tensor<4x64xf32>
      %4 = l2.softmax %3 : tensor<4x10xf32>
      l2.yield %4 : tensor<4x10xf32>
    }
    backward autodiff<mode = reverse>
    update schedule<warmup = 100, decay = cosine, inner = per_param<
        others = adam<lr = 3.0e-4>, matrix = muon<lr = 0.02>,
        overrides = [#l2.param_override<param = "fc1.weight", shape = [784, 64], update = lion<lr = 1.0e-4>>]>>

// L2.6: bounded recurrences (a count, and until with a bound); a graph
// region written out of order but acyclic.
// CHECK-LABEL: l2.methods @bounded for @free
l2.methods @bounded for @free
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x28x28xf32>) {
      %0 = l2.flatten %x : tensor<4x28x28xf32>
      %1 = l2.linear(784, 64) %0 : tensor<4x784xf32>
      %2 = l2.recurrent(steps = 4) %1 : tensor<4x64xf32> {
      ^bb0(%s: tensor<4x64xf32>):
        %a = l2.act(gelu) %l : tensor<4x64xf32>
        %l = l2.linear(64, 64) %s : tensor<4x64xf32>
        l2.yield %a : tensor<4x64xf32>
      }
      %3 = l2.recurrent(until("residual < 1e-3"), max_steps = 16) %2 : tensor<4x64xf32> {
      ^bb0(%s: tensor<4x64xf32>):
        %l = l2.linear(64, 64) %s : tensor<4x64xf32>
        l2.yield %l : tensor<4x64xf32>
      }
      %4 = l2.linear(64, 10) %3 : tensor<4x64xf32>
      %5 = l2.softmax %4 : tensor<4x10xf32>
      l2.yield %5 : tensor<4x10xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// L2.2 (escape hatches): the model forces evolution(pop: 50) and an update
// schedule with adam(lr: 3e-4); the method honours both (other arguments
// are free).
l3.model @hinted in @mnist::@images out !l3.dist<10> properties []
    hints [#l3.hint<l2::backward, "evolution(pop: 50)">,
           #l3.hint<l2::update, "schedule(warmup: 1000, inner: adam(lr: 3e-4))">,
           #l3.hint<l1::on, "gpu_0">]

// CHECK-LABEL: l2.methods @forced for @hinted
l2.methods @forced for @hinted
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x28x28xf32>) {
      %0 = l2.flatten %x : tensor<4x28x28xf32>
      %1 = l2.linear(784, 10) %0 : tensor<4x784xf32>
      %2 = l2.softmax %1 : tensor<4x10xf32>
      l2.yield %2 : tensor<4x10xf32>
    }
    backward evolution<pop = 50, sigma = 0.02, selection = truncation>
    update schedule<warmup = 1000, decay = linear, inner = adam<lr = 3.0e-4, beta2 = 0.95>>

