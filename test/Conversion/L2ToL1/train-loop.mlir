// L2's training loop (`train loop<...>`, docs/training.md) becomes the
// l1.schedule's defaults for the compiled program; without it the schedule
// states none (the runtime's defaults apply).
//
// RUN: cat %S/Inputs/single_cpu.mlir %s | synpl-opt --synpl-l2-to-l1 | FileCheck %s
// RUN: cat %S/Inputs/single_cpu.mlir %s | sed -e '/train loop/d' \
// RUN:   | synpl-opt --synpl-l2-to-l1 | FileCheck %s --check-prefix=NOLOOP

// CHECK: l1.schedule pipelines [@train, @grad_return] actors [@model_state] pipeline_depth 1 epochs 3 evaluate "t10k" checkpoint_every 500
// NOLOOP: l1.schedule pipelines [@train, @grad_return] actors [@model_state] pipeline_depth 1{{$}}

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
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x8xf32>) {
      %h = l2.linear(8, 4) %x as "fc1" : tensor<4x8xf32>
      %p = l2.softmax %h : tensor<4x4xf32>
      l2.yield %p : tensor<4x4xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>
    train loop<epochs = 3, evaluate = "t10k", checkpoint_every = 500>
