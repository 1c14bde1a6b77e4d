// The MNIST example verifies and round-trips, in the custom and generic form.
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l3.mlir | FileCheck %s
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l3.mlir | synpl-opt | FileCheck %s
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l3.mlir -mlir-print-op-generic | synpl-opt | FileCheck %s

// CHECK:      l3.data @mnist {
// CHECK-NEXT:   l3.field @images : tensor<28x28xf32>
// CHECK-NEXT:   l3.field @labels : tensor<1xui8>
// CHECK-NEXT: }
// CHECK-NEXT: l3.model @classify in @mnist::@images out !l3.dist<10>
// CHECK-NEXT:   properties [depth(3), width(512), param_budget(500K)]
// CHECK-NEXT: l3.loss @objective {
// CHECK-NEXT:   l3.divergence @ce(@classify::@out, @mnist::@labels) weight 1.0
// CHECK-NEXT:   l3.norm @sparse(@classify::@params, p = 1) weight 0.0001
// CHECK-NEXT: } combine weighted_sum
// CHECK-NEXT: l3.goal minimize(@objective)
