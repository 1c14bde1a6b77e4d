// The reference interpreter on a graph fragment (unverified: no system,
// no `then` target). Ops are listed out of order: a graph region runs in
// def-use order.
// RUN: synpl-interp %s --no-verify --graph=g \
// RUN:   --arg='dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>' \
// RUN:   --arg='dense<[0.5, 0.25, 1.0]> : tensor<3xf32>' | FileCheck %s
// RUN: synpl-interp %s --no-verify --graph=labels \
// RUN:   --arg='dense<[0, 2, 9, 1]> : tensor<4xui8>' | FileCheck %s --check-prefix=ONEHOT
// RUN: synpl-interp %s --no-verify --graph=g --max-print=4 \
// RUN:   --arg='dense<1.0> : tensor<2x3xf32>' --arg='dense<2.0> : tensor<3xf32>' \
// RUN:   | FileCheck %s --check-prefix=SUMMARY

// CHECK: result #0: tensor<2xf32> = [7.75, 16.75]
// CHECK-NEXT: result #1: tensor<2x3xf32> = [1.5, 2.25, 4, 4.5, 5.25, 7]
// CHECK-NEXT: result #2: tensor<3x2xf32> = [1.5, 4.5, 2.25, 5.25, 4, 7]
// CHECK-NEXT: result #3: tensor<2x3xi1> = [0, 0, 1, 1, 1, 1]
// SUMMARY: result #0: tensor<2xf32> = [9, 9]
// SUMMARY-NEXT: result #1: tensor<2x3xf32> sum 18 min 3 max 3
l1.tensor_graph @g on @gpu_0 compute(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  %r = l1.reduce_sum %s axis 1 : tensor<2x3xf32> -> tensor<2xf32>
  %s = l1.add %a, %bb : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %bb = l1.broadcast %b : tensor<3xf32> -> tensor<2x3xf32>
  %t = l1.transpose %s : tensor<2x3xf32> -> tensor<3x2xf32>
  %three = l1.const 3.0 : tensor<2x3xf32>
  %c = l1.cmp ge, %s, %three : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xi1>
  l1.return %r, %s, %t, %c : tensor<2xf32>, tensor<2x3xf32>, tensor<3x2xf32>, tensor<2x3xi1>
}

// ONEHOT: result #0: tensor<4x3xf32> = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0]
l1.tensor_graph @labels on @gpu_0 compute(%y: tensor<4xui8>) {
  %r = l1.one_hot %y classes 3 : tensor<4xui8> -> tensor<4x3xf32>
  l1.return %r : tensor<4x3xf32>
}
