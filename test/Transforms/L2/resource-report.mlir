// RUN: synpl-opt %s --synpl-l2-resource-report -o /dev/null 2>&1 | FileCheck %s

// A small model whose numbers can be counted by hand. Batch 8, input 4:
//   linear(4, 3): 4*3 + 3 = 15 params
//   norm(layer):  2*3     =  6 params
//   linear(3, 2): 3*2 + 2 =  8 params
// 29 params in f32 = 116 bytes; sgd keeps no optimizer state; gradients are
// as large as the parameters.
l3.data @d {
  l3.field @x : tensor<4xf32>
}
l3.model @m in @d::@x out tensor<2xf32> properties [depth(2), width(8)]

// CHECK: remark: resource estimate of @small: params 29 (116 B), optimizer state 0 B, gradients 116 B,
// CHECK-SAME: FLOP/step; forward latency {{[0-9.]+}} ms at 1E+13 FLOP/s
l2.methods @small for @m
    sample epoch_shuffle<batch = 8>
    infer(%x: tensor<8x4xf32>) {
      %0 = l2.linear(4, 3) %x : tensor<8x4xf32>
      %1 = l2.norm(layer) %0 : tensor<8x3xf32>
      %2 = l2.linear(3, 2) %1 : tensor<8x3xf32>
      l2.yield %2 : tensor<8x2xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// Adam keeps two moments per parameter: 2 * 116 bytes of optimizer state.
// CHECK: remark: resource estimate of @with_adam: params 29 (116 B), optimizer state 232 B, gradients 116 B,
l2.methods @with_adam for @m
    sample epoch_shuffle<batch = 8>
    infer(%x: tensor<8x4xf32>) {
      %0 = l2.linear(4, 3) %x : tensor<8x4xf32>
      %1 = l2.norm(layer) %0 : tensor<8x3xf32>
      %2 = l2.linear(3, 2) %1 : tensor<8x3xf32>
      l2.yield %2 : tensor<8x2xf32>
    }
    backward autodiff<mode = reverse>
    update adam<lr = 0.001>
