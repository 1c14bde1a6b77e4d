// The training loop on l2.methods: `train loop<...>` (docs/training.md).
// Round trip in the custom and the generic form, then the attribute's
// own checks.
// RUN: synpl-opt %s -split-input-file | synpl-opt -split-input-file | FileCheck %s
// RUN: synpl-opt %s -split-input-file -mlir-print-op-generic | synpl-opt -split-input-file | FileCheck %s
// RUN: synpl-opt %s -split-input-file -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
  l3.field @labels : tensor<1xui8>
}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []

// CHECK-LABEL: l2.methods @m for @classify
// CHECK:         update adam<lr = 0.0003>
// CHECK-NEXT:    train loop<epochs = 3, evaluate = "t10k", checkpoint_every = 500>
// GENERIC: train = #l2.loop<epochs = 3, evaluate = "t10k", checkpoint_every = 500>
l2.methods @m for @classify
    sample epoch_shuffle<batch = 128>
    infer(%x: tensor<128x28x28xf32>) {
      %0 = l2.flatten %x : tensor<128x28x28xf32>
      %1 = l2.linear(784, 10) %0 : tensor<128x784xf32>
      %2 = l2.softmax %1 : tensor<128x10xf32>
      l2.yield %2 : tensor<128x10xf32>
    }
    backward autodiff<mode = reverse>
    update adam<lr = 3.0e-4>
    train loop<epochs = 3, evaluate = "t10k", checkpoint_every = 500>

// -----

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []

// The full attribute form, and the defaults left out when printed.
// CHECK-LABEL: l2.methods @m for @classify
// CHECK:         train loop<epochs = 1>
// CHECK-NOT:     checkpoint_every
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
    train #l2.loop<epochs = 1, checkpoint_every = 0>
