// A stream window over text: `batch` windows per step (the infer input's
// leading dimension, row L2.5), and a loop measured in steps. Round trip,
// then the ranges.
// RUN: synpl-opt %s -split-input-file -verify-diagnostics | FileCheck %s

l3.data @corpus {
  l3.field @bytes : !l3.sequence<!l3.scalar<ui8>, 8>
}
l3.model @lm in @corpus::@bytes out !l3.sequence<!l3.dist<256>, 8> properties [causal]

// CHECK-LABEL: l2.methods @m for @lm
// CHECK-NEXT:    sample stream_window<window = 8, stride = 1, batch = 4>
// CHECK:         train loop<epochs = 1, steps = 1000>
l2.methods @m for @lm
    sample stream_window<window = 8, stride = 1, batch = 4>
    infer(%x: tensor<4x8xui8>) {
      %0 = l2.embed(vocab = 256, dim = 16, positions = 8) %x as "embed1" : tensor<4x8xui8>
      %1 = l2.linear(16, 256) %0 as "fc1" : tensor<4x8x16xf32>
      %2 = l2.softmax %1 : tensor<4x8x256xf32>
      l2.yield %2 : tensor<4x8x256xf32>
    }
    backward autodiff<mode = reverse>
    update adam<lr = 0.001>
    train loop<epochs = 1, steps = 1000>

// -----

l3.data @corpus {
  l3.field @bytes : !l3.sequence<!l3.scalar<ui8>, 8>
}
l3.model @lm in @corpus::@bytes out !l3.sequence<!l3.dist<256>, 8> properties [causal]
l2.methods @m for @lm
    // expected-error @+1 {{batch must be positive (or 0: the window), got -1}}
    sample stream_window<window = 8, stride = 1, batch = -1>
    infer(%x: tensor<4x8xui8>) {
      %0 = l2.embed(vocab = 256, dim = 16) %x as "embed1" : tensor<4x8xui8>
      l2.yield %0 : tensor<4x8x16xf32>
    }
    backward autodiff<mode = reverse>
    update adam<lr = 0.001>

// -----

l3.data @corpus {
  l3.field @bytes : !l3.sequence<!l3.scalar<ui8>, 8>
}
l3.model @lm in @corpus::@bytes out !l3.sequence<!l3.dist<256>, 8> properties [causal]
l2.methods @m for @lm
    sample stream_window<window = 8, stride = 1, batch = 4>
    infer(%x: tensor<4x8xui8>) {
      %0 = l2.embed(vocab = 256, dim = 16) %x as "embed1" : tensor<4x8xui8>
      %1 = l2.linear(16, 256) %0 as "fc1" : tensor<4x8x16xf32>
      %2 = l2.softmax %1 : tensor<4x8x256xf32>
      l2.yield %2 : tensor<4x8x256xf32>
    }
    backward autodiff<mode = reverse>
    update adam<lr = 0.001>
    // expected-error @+1 {{steps must be at least 0 (0: the whole split), got -5}}
    train loop<epochs = 1, steps = -5>
