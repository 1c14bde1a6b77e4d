// Fashion-MNIST with flat 784-pixel images (Inputs/flat_idx.py writes them):
// a 784-256-10 classifier, cross-entropy + 1e-4 L1, Adam under warmup and
// cosine decay. Fields without a path: bound by name from --data.
l3.data @fashion {
  l3.field @images : tensor<784xf32>
  l3.field @labels : tensor<1xui8>
}
l3.model @classify in @fashion::@images out !l3.dist<10>
    properties [depth(2), width(512), param_budget(500K)]
l3.loss @objective {
  l3.divergence @ce(@classify::@out, @fashion::@labels) weight 1.0
  l3.norm @sparse(@classify::@params, p = 1) weight 1.0e-4
} combine weighted_sum
l3.goal minimize(@objective)

l2.methods @fashion_method for @classify
    sample epoch_shuffle<batch = 128, drop_last = true>
    infer(%images: tensor<128x784xf32>) {
      %h0 = l2.linear(784, 256) %images as "fc1" : tensor<128x784xf32>
      %n0 = l2.norm(layer) %h0 as "norm1" : tensor<128x256xf32>
      %a0 = l2.act(gelu) %n0 : tensor<128x256xf32>
      %h1 = l2.linear(256, 10) %a0 as "fc2" : tensor<128x256xf32>
      %p = l2.softmax %h1 : tensor<128x10xf32>
      l2.yield %p : tensor<128x10xf32>
    }
    backward autodiff<mode = reverse>
    update schedule<warmup = 20, decay = cosine, inner = adam<lr = 3.0e-3>>
