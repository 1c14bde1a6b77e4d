// Update materialisation through the pass: the state each rule needs and
// the ops its handler runs (numerics: test/unit/UpdateRulesTest.cpp).
// per_param sends the matrices to muon (momentum + Newton-Schulz matmuls)
// and the vectors to lion; gradient_clip scales every gradient by one
// global factor; ema keeps a shadow of every parameter. The host pipeline
// emits the handler's matmuls as kernels (L1 -> L0 accepts the program).
//
// RUN: cat %S/Inputs/single_cpu.mlir %s | synpl-opt --synpl-l2-to-l1 -o %t.l1.mlir
// RUN: FileCheck %s < %t.l1.mlir
// RUN: synplc %t.l1.mlir --emit=l0 | FileCheck %s --check-prefix=L0
// L0: l0uop.plan @single_cpu

// CHECK: l1.actor @model_state on @cpu_0 {
// CHECK-NEXT: l1.state @fc1_weight : tensor<8x8xf32> init kaiming
// CHECK-NEXT: l1.state @fc1_bias : tensor<8xf32> init zeros
// CHECK-NEXT: l1.state @fc2_weight : tensor<8x4xf32> init kaiming
// CHECK-NEXT: l1.state @fc2_bias : tensor<4xf32> init zeros
// Muon's momentum for the matrices, Lion's for the vectors, then the shadows.
// CHECK-DAG: l1.state @m_fc1_weight : tensor<8x8xf32> init zeros
// CHECK-DAG: l1.state @m_fc2_weight : tensor<8x4xf32> init zeros
// CHECK-DAG: l1.state @m_fc1_bias : tensor<8xf32> init zeros
// CHECK-DAG: l1.state @m_fc2_bias : tensor<4xf32> init zeros
// CHECK-DAG: l1.state @ema_fc1_weight : tensor<8x8xf32> init zeros
// CHECK-DAG: l1.state @ema_fc2_bias : tensor<4xf32> init zeros
// CHECK: l1.state @step : tensor<f32> init zeros
// No Adam moments, no horizon (constant decay).
// CHECK-NOT: l1.state @v_
// CHECK-NOT: @total_steps
// CHECK: l1.handler @GradUpdate(
// The global norm: one sum of squares per gradient, one sqrt.
// CHECK-COUNT-4: l1.reduce_sum
// CHECK: l1.sqrt
// CHECK: l1.min
// Newton-Schulz on the tall 8x4 matrix: transposed, 2 iterations of
// X X^T, A A and B X.
// CHECK: l1.state_read @m_fc2_weight
// CHECK: l1.transpose {{.*}} : tensor<8x4xf32> -> tensor<4x8xf32>
// CHECK-COUNT-6: l1.matmul
// Lion's sign update, then the EMA shadows after the parameters.
// CHECK: l1.sign
// CHECK: l1.state_write @ema_fc1_weight
// CHECK: l1.return

l3.data @d {
  l3.field @x : tensor<8xf32>
  l3.field @y : tensor<1xui8>
}
l3.model @m in @d::@x out !l3.dist<4> properties []
l3.loss @objective {
  l3.divergence @ce(@m::@out, @d::@y) weight 1.0
} combine weighted_sum
l3.goal minimize(@objective)

l2.methods @method for @m
    sample epoch_shuffle<batch = 4, drop_last = true>
    infer(%x: tensor<4x8xf32>) {
      %h = l2.linear(8, 8) %x as "fc1" : tensor<4x8xf32>
      %a = l2.act(relu) %h : tensor<4x8xf32>
      %o = l2.linear(8, 4) %a as "fc2" : tensor<4x8xf32>
      %p = l2.softmax %o : tensor<4x4xf32>
      l2.yield %p : tensor<4x4xf32>
    }
    backward autodiff<mode = reverse>
    update ema<decay = 0.99, inner = gradient_clip<max_norm = 1.0, inner = schedule<warmup = 5, decay = constant, inner = per_param<others = lion<lr = 1.0e-3>, matrix = muon<lr = 2.0e-2, ns_steps = 2>>>>>
