// The spec's "Trace — MNIST at L3", written in the l3 dialect. This is the
// entire program: everything below L3 exists to make it run.
//
//   data mnist {
//       images : tensor(f32, [28, 28])
//       labels : tensor(u8, [1])
//   }
//   model classify {
//       in:  mnist.images
//       out: dist(10)
//       properties: [depth(3), width(512), param_budget(500K)]
//   }
//   loss objective {
//       ce:     divergence(classify.out, mnist.labels), weight: 1.0
//       sparse: norm(classify.params, p=1),             weight: 1e-4
//       combine: weighted_sum
//   }
//   goal: minimize(objective)

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
