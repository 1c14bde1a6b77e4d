// equivariant(translation) on an image input: the search builds conv / act
// / pool(max, 2) stacks, then flatten and a linear head. A [C, H, W] input is
// channels-first as it is; a [H, W] input gets one channel with l2.reshape.
// RUN: synpl-opt %s -split-input-file --synpl-l3-to-l2 | FileCheck %s
// The output verifies against the L3 program (the L2 rows that read it).
// RUN: synpl-opt %s -split-input-file --synpl-l3-to-l2 | synpl-opt -split-input-file -verify-each > /dev/null
// RUN: synpl-opt %s -split-input-file --synpl-l3-to-l2 --synpl-search-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// The Fashion-MNIST CNN: depth(4), width(128), param_budget(500K) give the
// PyTorch peer's model: conv 1->32, relu, pool, conv 32->64, relu, pool,
// linear 3136->128, relu, linear 128->10 (421,642 parameters).
// CHECK-LABEL: l2.methods @classify_method for @classify
// CHECK-NEXT:    sample epoch_shuffle<batch = 128, drop_last = true>
// CHECK-NEXT:    infer(%[[IN:.*]]: tensor<128x1x28x28xf32>) {
// CHECK-NEXT:      %[[C1:.*]] = l2.conv(1, 32, kernel = 3, stride = 1, padding = 1) %[[IN]] as "conv1"
// CHECK-NEXT:      %[[A1:.*]] = l2.act(relu) %[[C1]] : tensor<128x32x28x28xf32>
// CHECK-NEXT:      %[[P1:.*]] = l2.pool(max, kernel = 2) %[[A1]] : tensor<128x32x28x28xf32>
// CHECK-NEXT:      %[[C2:.*]] = l2.conv(32, 64, kernel = 3, stride = 1, padding = 1) %[[P1]] as "conv2" : tensor<128x32x14x14xf32>
// CHECK-NEXT:      %[[A2:.*]] = l2.act(relu) %[[C2]] : tensor<128x64x14x14xf32>
// CHECK-NEXT:      %[[P2:.*]] = l2.pool(max, kernel = 2) %[[A2]] : tensor<128x64x14x14xf32>
// CHECK-NEXT:      %[[F:.*]] = l2.flatten %[[P2]] : tensor<128x64x7x7xf32>
// CHECK-NEXT:      %[[H:.*]] = l2.linear(3136, 128) %[[F]] as "fc1" : tensor<128x3136xf32>
// CHECK-NEXT:      %[[A3:.*]] = l2.act(relu) %[[H]] : tensor<128x128xf32>
// CHECK-NEXT:      %[[O:.*]] = l2.linear(128, 10) %[[A3]] as "fc2" : tensor<128x128xf32>
// CHECK-NEXT:      %[[S:.*]] = l2.softmax %[[O]] : tensor<128x10xf32>
// CHECK-NEXT:      l2.yield %[[S]] : tensor<128x10xf32>
// REPORT:      search L3->L2 @classify: [[N:[0-9]+]] enumerated (space [[N]]), {{[0-9]+}} rejected, {{[0-9]+}} survived; winner: epoch_shuffle(128) depth 4 conv [32-64] relu fc 128 autodiff<mode = reverse> schedule(adam)
// REPORT:      param_budget {{ *[1-9][0-9]*}}  {{.*}}: [consistency] L2.2: the infer DAG has {{[0-9]+}} parameters, over @classify's param_budget(500000)
// REPORT:      1 {{.*}} epoch_shuffle(128) depth 4 conv [32-64] relu fc 128 autodiff<mode = reverse> schedule(adam) params 18.68{{[0-9]*}}, flops/example
// REPORT:      why: cost
l3.data @mnist {
  l3.field @images : tensor<1x28x28xf32>
}
l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [depth(4), width(128), param_budget(500K), equivariant(translation)]

// -----

// A [H, W] image gets its channel from l2.reshape; depth(3) leaves room for
// two conv stages and the head, or one conv stage, a hidden linear and the
// head: the second conv stage is cheaper than a hidden linear over 6272
// features.
// CHECK-LABEL: l2.methods @small_method for @small
// CHECK:         infer(%[[IN:.*]]: tensor<128x28x28xf32>) {
// CHECK-NEXT:      %[[R:.*]] = l2.reshape [1, 28, 28] %[[IN]] : tensor<128x28x28xf32>
// CHECK-NEXT:      l2.conv(1, 32, kernel = 3, stride = 1, padding = 1) %[[R]] as "conv1" : tensor<128x1x28x28xf32>
// CHECK:           l2.conv(32, 64, kernel = 3, stride = 1, padding = 1)
// CHECK:           l2.pool(max, kernel = 2)
// CHECK-NEXT:      l2.flatten %{{.*}} : tensor<128x64x7x7xf32>
// CHECK-NEXT:      l2.linear(3136, 10) %{{.*}} as "fc1"
// CHECK-NEXT:      l2.softmax
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
l3.model @small in @mnist::@images out !l3.dist<10>
    properties [depth(3), width(64), equivariant(translation)]

// -----

// Odd sizes cannot be pooled: one conv stage, no pool.
// CHECK-LABEL: l2.methods @odd_method for @odd
// CHECK:         l2.conv(3, 16, kernel = 3, stride = 1, padding = 1) %{{.*}} as "conv1" : tensor<128x3x7x7xf32>
// CHECK-NOT:     l2.pool
// CHECK:         l2.flatten %{{.*}} : tensor<128x16x7x7xf32>
l3.data @tiles {
  l3.field @tile : tensor<3x7x7xf32>
}
l3.model @odd in @tiles::@tile out !l3.dist<4>
    properties [depth(2), width(16), equivariant(translation)]
