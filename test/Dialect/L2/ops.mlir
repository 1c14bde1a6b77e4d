// RUN: synpl-opt %s | synpl-opt | FileCheck %s
// RUN: synpl-opt %s -mlir-print-op-generic | synpl-opt | FileCheck %s

// Every op and method attribute of the l2 dialect, round-tripped through the
// custom and the generic form.

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
  l3.field @labels : tensor<1xui8>
}
l3.data @corpus {
  l3.field @tokens : !l3.sequence<!l3.scalar<i32>, 64>
}
l3.data @chan {
  l3.field @images : tensor<1x28x28xf32>
}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
l3.model @conv_classify in @chan::@images out !l3.dist<10> properties []
l3.model @lm in @corpus::@tokens out tensor<64x1000xf32> properties []
l3.model @ae in @mnist::@images out tensor<28x28xf32> properties []

// The spec's MNIST method.
// CHECK-LABEL: l2.methods @mnist_method for @classify
// CHECK-NEXT:    sample epoch_shuffle<batch = 128>
// CHECK-NEXT:    infer(%[[X:.*]]: tensor<128x28x28xf32>) {
// CHECK-NEXT:      %[[F:.*]] = l2.flatten %[[X]] : tensor<128x28x28xf32>
// CHECK-NEXT:      %[[L:.*]] = l2.linear(784, 256) %[[F]] as "fc1" : tensor<128x784xf32>
// CHECK-NEXT:      %[[N:.*]] = l2.norm(layer) %[[L]] : tensor<128x256xf32>
// CHECK-NEXT:      %[[A:.*]] = l2.act(gelu) %[[N]] hints [#l3.hint<l0::kernel, "\22fused_gelu.ptx\22">] : tensor<128x256xf32>
// CHECK-NEXT:      %[[O:.*]] = l2.linear(256, 10) %[[A]] as "head" hints [#l3.hint<l1::on, "gpu_1">] : tensor<128x256xf32>
// CHECK-NEXT:      %[[S:.*]] = l2.softmax %[[O]] : tensor<128x10xf32>
// CHECK-NEXT:      l2.yield %[[S]] : tensor<128x10xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    backward autodiff<mode = reverse, checkpoint = ["fc1"]>
// CHECK-NEXT:    update schedule<warmup = 1000, decay = cosine, inner = adam<lr = 0.0003>>
l2.methods @mnist_method for @classify
    sample epoch_shuffle<batch = 128>
    infer(%x: tensor<128x28x28xf32>) {
      %0 = l2.flatten %x : tensor<128x28x28xf32>
      %1 = l2.linear(784, 256) %0 as "fc1" : tensor<128x784xf32>
      %2 = l2.norm(layer) %1 : tensor<128x256xf32>
      // The spec's escape hatches on layers: #[l0::kernel("fused_gelu.ptx")]
      // and #[l1::on(gpu_1)].
      %3 = l2.act(gelu) %2 hints [#l3.hint<l0::kernel, "\"fused_gelu.ptx\"">] : tensor<128x256xf32>
      %4 = l2.linear(256, 10) %3 as "head" hints [#l3.hint<l1::on, "gpu_1">] : tensor<128x256xf32>
      %5 = l2.softmax %4 : tensor<128x10xf32>
      l2.yield %5 : tensor<128x10xf32>
    }
    backward autodiff<mode = reverse, checkpoint = ["fc1"]>
    update schedule<warmup = 1000, decay = cosine, inner = adam<lr = 3.0e-4>>

// Convolution, group norm, pooling, dropout, a residual merge, every
// activation; drop_last; adam with every coefficient, under clip and ema.
// CHECK-LABEL: l2.methods @conv_method for @conv_classify
// CHECK-NEXT:    sample epoch_shuffle<batch = 32, drop_last = true>
// CHECK:         l2.conv(1, 8, kernel = 3, stride = 1, padding = 1) %{{.*}} as "c1" : tensor<32x1x28x28xf32>
// CHECK:         l2.norm(group(4)) %{{.*}} : tensor<32x8x28x28xf32>
// CHECK:         l2.act(relu)
// CHECK:         l2.act(silu)
// CHECK:         l2.act(swish)
// CHECK:         l2.add %{{.*}}, %{{.*}} : tensor<32x8x28x28xf32>, tensor<32x8x28x28xf32>
// CHECK:         l2.pool(max, kernel = 2) %{{.*}} : tensor<32x8x28x28xf32>
// CHECK:         l2.pool(avg, kernel = 2) %{{.*}} : tensor<32x8x14x14xf32>
// CHECK:         l2.dropout(0.1) %{{.*}} : tensor<32x392xf32>
// CHECK:         l2.norm(rms) %{{.*}} : tensor<32x10xf32>
// CHECK:         backward straight_through<estimator = clipped>
// CHECK-NEXT:    update gradient_clip<max_norm = 1.0, inner = ema<decay = 0.999, inner = adam<lr = 0.001, beta1 = 0.8, beta2 = 0.99, eps = 1.0e-06>>>
l2.methods @conv_method for @conv_classify
    sample epoch_shuffle<batch = 32, drop_last = true>
    infer(%x: tensor<32x1x28x28xf32>) {
      %0 = l2.conv(1, 8, kernel = 3, stride = 1, padding = 1) %x as "c1" : tensor<32x1x28x28xf32>
      %1 = l2.norm(group(4)) %0 : tensor<32x8x28x28xf32>
      %2 = l2.act(relu) %1 : tensor<32x8x28x28xf32>
      %3 = l2.act(silu) %2 : tensor<32x8x28x28xf32>
      %4 = l2.act(swish) %3 : tensor<32x8x28x28xf32>
      %5 = l2.add %4, %0 : tensor<32x8x28x28xf32>, tensor<32x8x28x28xf32>
      %6 = l2.pool(max, kernel = 2) %5 : tensor<32x8x28x28xf32>
      %7 = l2.pool(avg, kernel = 2) %6 : tensor<32x8x14x14xf32>
      %8 = l2.quantize(bits = 8) %7 : tensor<32x8x7x7xf32>
      %9 = l2.flatten %8 : tensor<32x8x7x7xf32>
      %10 = l2.dropout(0.1) %9 : tensor<32x392xf32>
      %11 = l2.linear(392, 10) %10 : tensor<32x392xf32>
      %12 = l2.norm(rms) %11 : tensor<32x10xf32>
      %13 = l2.softmax %12 : tensor<32x10xf32>
      l2.yield %13 : tensor<32x10xf32>
    }
    backward straight_through<estimator = clipped>
    update gradient_clip<max_norm = 1.0, inner = ema<decay = 0.999, inner = adam<lr = 1.0e-3, beta1 = 0.8, beta2 = 0.99, eps = 1.0e-6>>>

// Embeddings, causal attention, every region form; the other sample,
// backward and update methods.
// CHECK-LABEL: l2.methods @lm_method for @lm
// CHECK-NEXT:    sample distributed_shard<shards = 4, method = curriculum<batch = 8, phases = [#l2.phase<filter = "len < 32", duration = 1000>, #l2.phase<filter = "true", duration = 9000>]>>
// CHECK:         l2.embed(vocab = 1000, dim = 64, positions = 64) %{{.*}} as "tok" : tensor<8x64xi32>
// CHECK:         l2.attn(heads = 4, dim = 64, causal) %{{.*}} : tensor<8x64x64xf32>
// CHECK:         l2.recurrent(steps = 2) %{{.*}} : tensor<8x64x64xf32> {
// CHECK:         l2.recurrent(until("converged"), max_steps = 8) %{{.*}} : tensor<8x64x64xf32> {
// CHECK:         l2.mixture(top_k = 1) %{{.*}} : tensor<8x64x64xf32> -> tensor<8x64x64xf32> experts({
// CHECK:         }, {
// CHECK:         }) gate {
// CHECK:         l2.diffusion_chain(steps = 100, noise = cosine) %{{.*}} : tensor<8x64x64xf32> denoiser {
// CHECK:         l2.graph(%{{.*}}, %{{.*}}) as "block" : (tensor<8x64x64xf32>, tensor<8x64x64xf32>) -> tensor<8x64x64xf32> {
// CHECK:         backward hybrid<primary = autodiff<mode = forward>, aux = zeroth_order<samples = 4, sigma = 0.01>, blend = linear>
// CHECK-NEXT:    update per_param<others = lion<lr = 0.0001>, matrix = muon<lr = 0.02>, overrides = [#l2.param_override<param = "tok.table", shape = [1000, 64], update = sgd<lr = 0.1>>]>
l2.methods @lm_method for @lm
    sample distributed_shard<shards = 4, method = curriculum<batch = 8, phases = [
        #l2.phase<filter = "len < 32", duration = 1000>,
        #l2.phase<filter = "true", duration = 9000>]>>
    infer(%tokens: tensor<8x64xi32>) {
      %e = l2.embed(vocab = 1000, dim = 64, positions = 64) %tokens as "tok" : tensor<8x64xi32>
      %a = l2.attn(heads = 4, dim = 64, causal) %e : tensor<8x64x64xf32>
      %r = l2.recurrent(steps = 2) %a : tensor<8x64x64xf32> {
      ^bb0(%s: tensor<8x64x64xf32>):
        %0 = l2.linear(64, 64) %s : tensor<8x64x64xf32>
        %1 = l2.act(gelu) %0 : tensor<8x64x64xf32>
        l2.yield %1 : tensor<8x64x64xf32>
      }
      %u = l2.recurrent(until("converged"), max_steps = 8) %r : tensor<8x64x64xf32> {
      ^bb0(%s: tensor<8x64x64xf32>):
        %0 = l2.norm(rms) %s : tensor<8x64x64xf32>
        l2.yield %0 : tensor<8x64x64xf32>
      }
      %m = l2.mixture(top_k = 1) %u : tensor<8x64x64xf32> -> tensor<8x64x64xf32> experts({
      ^bb0(%in: tensor<8x64x64xf32>):
        %0 = l2.linear(64, 64) %in : tensor<8x64x64xf32>
        l2.yield %0 : tensor<8x64x64xf32>
      }, {
      ^bb0(%in: tensor<8x64x64xf32>):
        %0 = l2.act(relu) %in : tensor<8x64x64xf32>
        l2.yield %0 : tensor<8x64x64xf32>
      }) gate {
      ^bb0(%in: tensor<8x64x64xf32>):
        %0 = l2.flatten %in : tensor<8x64x64xf32>
        %1 = l2.linear(4096, 2) %0 : tensor<8x4096xf32>
        %2 = l2.softmax %1 : tensor<8x2xf32>
        l2.yield %2 : tensor<8x2xf32>
      }
      %d = l2.diffusion_chain(steps = 100, noise = cosine) %m : tensor<8x64x64xf32> denoiser {
      ^bb0(%noisy: tensor<8x64x64xf32>):
        %0 = l2.linear(64, 64) %noisy : tensor<8x64x64xf32>
        l2.yield %0 : tensor<8x64x64xf32>
      }
      // A graph region: nodes may be written before the values they read.
      %g = l2.graph(%d, %e) as "block" : (tensor<8x64x64xf32>, tensor<8x64x64xf32>) -> tensor<8x64x64xf32> {
      ^bb0(%p: tensor<8x64x64xf32>, %q: tensor<8x64x64xf32>):
        %act = l2.act(relu) %sum : tensor<8x64x64xf32>
        %sum = l2.add %p, %q : tensor<8x64x64xf32>, tensor<8x64x64xf32>
        l2.yield %act : tensor<8x64x64xf32>
      }
      %o = l2.linear(64, 1000) %g : tensor<8x64x64xf32>
      l2.yield %o : tensor<8x64x1000xf32>
    }
    backward hybrid<primary = autodiff<mode = forward>, aux = zeroth_order<samples = 4, sigma = 0.01>, blend = linear>
    update per_param<others = lion<lr = 1.0e-4>, matrix = muon<lr = 0.02>,
                         overrides = [#l2.param_override<param = "tok.table", shape = [1000, 64], update = sgd<lr = 0.1>>]>

// The remaining sample, backward and update forms.
// CHECK-LABEL: l2.methods @stream for @classify
// CHECK-NEXT:    sample stream_window<window = 16, stride = 4>
// CHECK:         backward evolution<pop = 50, sigma = 0.1, selection = tournament>
// CHECK-NEXT:    update sgd<lr = 0.5>
l2.methods @stream for @classify
    sample #l2.stream_window<window = 16, stride = 4>
    infer(%x: tensor<16x28x28xf32>) {
      %0 = l2.flatten %x : tensor<16x28x28xf32>
      %1 = l2.linear(784, 10) %0 : tensor<16x784xf32>
      %2 = l2.softmax %1 : tensor<16x10xf32>
      l2.yield %2 : tensor<16x10xf32>
    }
    backward #l2.evolution<pop = 50, sigma = 0.1, selection = tournament>
    update #l2.sgd<lr = 0.5>

// CHECK-LABEL: l2.methods @replayed for @classify
// CHECK-NEXT:    sample replay<buffer = 1000, priority = proportional, batch = 16>
// CHECK:         backward hybrid<primary = reinforce<baseline = moving_average>, aux = dfa<feedback_dim = 10>, blend = cosine>
// CHECK-NEXT:    update per_param<others = adam<lr = 0.001>, matrix = muon<lr = 0.02, ns_steps = 3>> attributes {note = "muon for matrices"}
l2.methods @replayed for @classify
    sample replay<buffer = 1000, priority = proportional, batch = 16>
    infer(%x: tensor<16x28x28xf32>) {
      %0 = l2.flatten %x : tensor<16x28x28xf32>
      %1 = l2.linear(784, 10) %0 : tensor<16x784xf32>
      %2 = l2.softmax %1 : tensor<16x10xf32>
      l2.yield %2 : tensor<16x10xf32>
    }
    backward hybrid<primary = reinforce<baseline = moving_average>, aux = dfa<feedback_dim = 10>, blend = cosine>
    update per_param<others = adam<lr = 1.0e-3>, matrix = muon<lr = 0.02, ns_steps = 3>> attributes {note = "muon for matrices"}

// reshape: a channel for an image, the output head's shape.
// CHECK-LABEL: l2.methods @ae_method for @ae
// CHECK:         %[[R:.*]] = l2.reshape [1, 28, 28] %{{.*}} : tensor<8x28x28xf32>
// CHECK:         %[[Y:.*]] = l2.reshape [28, 28] %{{.*}} : tensor<8x784xf32>
// CHECK-NEXT:    l2.yield %[[Y]] : tensor<8x28x28xf32>
l2.methods @ae_method for @ae
    sample epoch_shuffle<batch = 8>
    infer(%x: tensor<8x28x28xf32>) {
      %0 = l2.reshape [1, 28, 28] %x : tensor<8x28x28xf32>
      %1 = l2.conv(1, 4, kernel = 3, stride = 1, padding = 1) %0 as "conv1" : tensor<8x1x28x28xf32>
      %2 = l2.flatten %1 : tensor<8x4x28x28xf32>
      %3 = l2.linear(3136, 784) %2 as "dec" : tensor<8x3136xf32>
      %4 = l2.reshape [28, 28] %3 : tensor<8x784xf32>
      l2.yield %4 : tensor<8x28x28xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>
