// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l2.mlir | FileCheck %s
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l2.mlir | synpl-opt | FileCheck %s

// The spec's MNIST trace at L2 verifies against the L3 trace (depth(3),
// width(512), param_budget(500K)) and round-trips.

// CHECK: l3.model @classify in @mnist::@images out !l3.dist<10>
// CHECK: l2.methods @mnist_method for @classify
// CHECK-NEXT:   sample epoch_shuffle<batch = 128>
// CHECK-NEXT:   infer(%[[X:.*]]: tensor<128x28x28xf32>) {
// CHECK-NEXT:     %[[F:.*]] = l2.flatten %[[X]] : tensor<128x28x28xf32>
// CHECK-NEXT:     %[[H0:.*]] = l2.linear(784, 256) %[[F]] as "fc1" : tensor<128x784xf32>
// CHECK-NEXT:     %[[N0:.*]] = l2.norm(layer) %[[H0]] as "norm1" : tensor<128x256xf32>
// CHECK-NEXT:     %[[A0:.*]] = l2.act(gelu) %[[N0]] : tensor<128x256xf32>
// CHECK-NEXT:     %[[H1:.*]] = l2.linear(256, 256) %[[A0]] as "fc2" : tensor<128x256xf32>
// CHECK-NEXT:     %[[N1:.*]] = l2.norm(layer) %[[H1]] as "norm2" : tensor<128x256xf32>
// CHECK-NEXT:     %[[A1:.*]] = l2.act(gelu) %[[N1]] : tensor<128x256xf32>
// CHECK-NEXT:     %[[H2:.*]] = l2.linear(256, 10) %[[A1]] as "fc3" : tensor<128x256xf32>
// CHECK-NEXT:     %[[P:.*]] = l2.softmax %[[H2]] : tensor<128x10xf32>
// CHECK-NEXT:     l2.yield %[[P]] : tensor<128x10xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   backward autodiff<mode = reverse>
// CHECK-NEXT:   update schedule<warmup = 1000, decay = cosine, inner = adam<lr = 0.0003>>
