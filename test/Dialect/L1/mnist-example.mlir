// The Fashion-MNIST program at L1 (examples/mnist/mnist.l1.mlir) verifies
// against every phase-1 row and round-trips, in custom and generic form.
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l1.mlir | FileCheck %s
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l1.mlir | synpl-opt | FileCheck %s
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l1.mlir -mlir-print-op-generic | synpl-opt | FileCheck %s

// CHECK-LABEL: l1.system @single_gpu
// CHECK: l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
// CHECK-LABEL: l1.data @mnist
// CHECK: path "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz" format idx
// CHECK: path "/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz" format idx
// CHECK-LABEL: l1.actor @model_state on @gpu_0
// CHECK-DAG: l1.state @w1 : tensor<784x256xf32> init kaiming
// CHECK-DAG: l1.state @g1 : tensor<256xf32> init ones
// CHECK-DAG: l1.state @w3 : tensor<256x10xf32> init kaiming
// CHECK-DAG: l1.state @m_w1 : tensor<784x256xf32> init zeros
// CHECK-DAG: l1.state @v_b3 : tensor<10xf32> init zeros
// CHECK-DAG: l1.state @step : tensor<f32> init zeros
// CHECK: l1.window @weights [@w1, @b1, @g1, @be1, @w2, @b2, @g2, @be2, @w3, @b3] readers [@forward_backward]
// CHECK: l1.handler @GradUpdate(
// CHECK: l1.state_write @step
// CHECK: l1.cos
// CHECK: l1.state_write @w1
// CHECK: l1.state_write @b3
// CHECK-LABEL: l1.stage @load_data on @cpu_0 process()
// CHECK: l1.read_batch @mnist [@images, @labels] batch 128 shuffle drop_last
// CHECK: l1.forward @transfer_to_gpu
// CHECK-LABEL: l1.stage @transfer_to_gpu on @cpu_0
// CHECK: l1.transfer {{.*}} -> !l1.buf<@gpu_0, tensor<128x28x28xui8>>
// CHECK: l1.forward @forward_backward
// CHECK-LABEL: l1.tensor_graph @forward_backward on @gpu_0 reads [@model_state::@weights] then @transfer_grads
// CHECK: l1.one_hot
// CHECK: l1.tanh
// CHECK: l1.log
// The argmax hits: label logit >= row max, through the one-hot labels.
// CHECK: %[[HIT:.*]] = l1.cmp ge, %{{.*}}, %{{.*}} : tensor<128x10xf32>, tensor<128x10xf32> -> tensor<128x10xi1>
// CHECK: %[[HITF:.*]] = l1.cast %[[HIT]] : tensor<128x10xi1> -> tensor<128x10xf32>
// CHECK: %[[LH:.*]] = l1.mul %{{.*}}, %[[HITF]]
// CHECK: %[[CORRECT:.*]] = l1.reduce_sum %[[LH]] : tensor<128x10xf32> -> tensor<f32>
// CHECK: l1.sign
// Outputs: the loss, the gradients in the handler's order, correct.
// CHECK: l1.return %{{.*}}, %[[CORRECT]] : tensor<f32>, tensor<784x256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256x256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256x10xf32>, tensor<10xf32>, tensor<f32>{{$}}
// CHECK-LABEL: l1.stage @transfer_grads on @cpu_0
// CHECK: l1.report "loss"
// CHECK: l1.report "correct"
// CHECK: l1.send @model_state::@GradUpdate(
// CHECK: l1.pipeline @train = @load_data -> @transfer_to_gpu -> @forward_backward
// CHECK: l1.pipeline @grad_return = @transfer_grads
// CHECK: l1.schedule pipelines [@train, @grad_return] actors [@model_state] pipeline_depth 2
