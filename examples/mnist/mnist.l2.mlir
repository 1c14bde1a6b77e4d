// The spec's "Trace — MNIST at L2", written in the l3 and l2 dialects: the
// L3 program (a copy of examples/mnist/mnist.l3.mlir) and the method the
// L3 -> L2 search picks for it.
//
//   methods for classify {
//       sample:   epoch_shuffle(batch: 128)
//       infer: sequential [
//           linear(784, 256), norm(layer), gelu,
//           linear(256, 256), norm(layer), gelu,
//           linear(256, 10),  softmax
//       ]
//       backward: autodiff(mode: reverse)
//       update:   schedule(warmup: 1000, decay: cosine,
//                          inner: adam(lr: 3e-4))
//   }
//
// `sequential` is sugar for the chain of SSA edges below. The data field is
// a 28x28 image, so the DAG starts with l2.flatten (metadata only) to get
// the 784-wide rows linear(784, 256) takes. Three stages (depth(3)), 256
// wide (width(512)), 270,346 parameters (param_budget(500K)): 269,322 in
// the linears and 1,024 in the two layer norms' gains and biases. The
// softmax over 10 classes is the output domain dist(10).

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
  l3.field @labels : tensor<1xui8>
}

l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [depth(3), width(512), param_budget(500K)]

l3.loss @objective {
  l3.divergence @ce(@classify::@out, @mnist::@labels) weight 1.0
  l3.norm @sparse(@classify::@params, p = 1) weight 1.0e-4
} combine weighted_sum

l3.goal minimize(@objective)

l2.methods @mnist_method for @classify
    sample epoch_shuffle<batch = 128>
    infer(%images: tensor<128x28x28xf32>) {
      %x = l2.flatten %images : tensor<128x28x28xf32>
      %h0 = l2.linear(784, 256) %x as "fc1" : tensor<128x784xf32>
      %n0 = l2.norm(layer) %h0 as "norm1" : tensor<128x256xf32>
      %a0 = l2.act(gelu) %n0 : tensor<128x256xf32>
      %h1 = l2.linear(256, 256) %a0 as "fc2" : tensor<128x256xf32>
      %n1 = l2.norm(layer) %h1 as "norm2" : tensor<128x256xf32>
      %a1 = l2.act(gelu) %n1 : tensor<128x256xf32>
      %h2 = l2.linear(256, 10) %a1 as "fc3" : tensor<128x256xf32>
      %p = l2.softmax %h2 : tensor<128x10xf32>
      l2.yield %p : tensor<128x10xf32>
    }
    backward autodiff<mode = reverse>
    update schedule<warmup = 1000, decay = cosine, inner = adam<lr = 3.0e-4>>
