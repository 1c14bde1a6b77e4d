// #[l1::on(node)] on a layer forces the graph and the actor onto that node
// even where the search would pick another: on single_gpu the cost model
// prefers gpu_0 (mnist-single-gpu.mlir); the hatch puts the model on cpu_0,
// so no transfer stage is needed.
//
// RUN: cat %S/Inputs/single_gpu.mlir %s | synpl-opt --synpl-l2-to-l1 --synpl-search-report 2> %t.report | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT < %t.report

// REPORT: winner: graph+actor@cpu_0 host@cpu_0 staging@ram_0
// REPORT: hint 6 {{.*}}#[l1::on(cpu_0)] forces the model onto @cpu_0

// CHECK: l1.actor @model_state on @cpu_0
// CHECK: l1.stage @load_data on @cpu_0
// CHECK-NEXT: l1.read_batch @d [@x, @y] batch 4 shuffle drop_last seed 0 : !l1.buf<@ram_0, tensor<4x8xf32>>, !l1.buf<@ram_0, tensor<4x1xui8>>
// CHECK-NEXT: l1.forward @forward_backward(
// CHECK: l1.tensor_graph @forward_backward on @cpu_0
// CHECK-NOT: l1.transfer
// CHECK: l1.pipeline @train = @load_data -> @forward_backward

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
      %h = l2.linear(8, 4) %x as "fc1" hints [#l3.hint<l1::on, "cpu_0">] : tensor<4x8xf32>
      %p = l2.softmax %h : tensor<4x4xf32>
      l2.yield %p : tensor<4x4xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>
