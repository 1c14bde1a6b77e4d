// The training loop's checks: positive epochs, checkpoint_every >= 0, a
// split name (not a path), and only a loop where `train` is expected.
// RUN: synpl-opt %s -split-input-file -verify-diagnostics

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
l2.methods @m for @classify
    sample epoch_shuffle<batch = 128>
    infer(%x: tensor<128x28x28xf32>) {
      %0 = l2.flatten %x : tensor<128x28x28xf32>
      %1 = l2.linear(784, 10) %0 : tensor<128x784xf32>
      %2 = l2.softmax %1 : tensor<128x10xf32>
      l2.yield %2 : tensor<128x10xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>
    // expected-error @+1 {{epochs must be positive, got 0}}
    train loop<epochs = 0>

// -----

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
l2.methods @m for @classify
    sample epoch_shuffle<batch = 128>
    infer(%x: tensor<128x28x28xf32>) {
      %0 = l2.flatten %x : tensor<128x28x28xf32>
      %1 = l2.linear(784, 10) %0 : tensor<128x784xf32>
      %2 = l2.softmax %1 : tensor<128x10xf32>
      l2.yield %2 : tensor<128x10xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>
    // expected-error @+1 {{checkpoint_every must be at least 0, got -5}}
    train loop<epochs = 2, checkpoint_every = -5>

// -----

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
l2.methods @m for @classify
    sample epoch_shuffle<batch = 128>
    infer(%x: tensor<128x28x28xf32>) {
      %0 = l2.flatten %x : tensor<128x28x28xf32>
      %1 = l2.linear(784, 10) %0 : tensor<128x784xf32>
      %2 = l2.softmax %1 : tensor<128x10xf32>
      l2.yield %2 : tensor<128x10xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>
    // expected-error @+1 {{evaluate names a split (a file-name prefix such as "t10k"), not a path: "/data/t10k"}}
    train loop<epochs = 2, evaluate = "/data/t10k">

// -----

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
l2.methods @m for @classify
    sample epoch_shuffle<batch = 128>
    infer(%x: tensor<128x28x28xf32>) {
      %0 = l2.flatten %x : tensor<128x28x28xf32>
      %1 = l2.linear(784, 10) %0 : tensor<128x784xf32>
      %2 = l2.softmax %1 : tensor<128x10xf32>
      l2.yield %2 : tensor<128x10xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>
    // expected-error @+1 {{train must be a training loop (loop<epochs = n, ...>), got #l2.sgd<lr = 0.1>}}
    train #l2.sgd<lr = 0.1>
