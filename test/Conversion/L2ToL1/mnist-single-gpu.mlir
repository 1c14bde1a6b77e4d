// The spec's MNIST method on the spec's single_gpu system: graph and actor
// on gpu_0 (the search prefers its throughput), host stages on cpu_0 (the
// only x86-64 node: gpu_0 is rejected as a host by the isa check), batches
// staged in ram_0 and moved by a transfer stage, loss and correct moved back
// to ram_0 before they are reported, gradients sent on gpu_0. One step in
// flight: the step is launch-bound (58 kernels of about 4 us each), and the
// 21 us transfer that a second step in flight would hide saves less than
// the bubble it costs.
//
// RUN: cat %S/Inputs/single_gpu.mlir %synpl_src_root/examples/mnist/mnist.l2.mlir \
// RUN:   | synpl-opt --synpl-l2-to-l1 --synpl-search-report 2> %t.report \
// RUN:   | synpl-opt | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT < %t.report

// REPORT: search L2->L1 @single_gpu: 12 enumerated (space 12), 6 rejected, 6 survived; winner: graph+actor@gpu_0 host@cpu_0
// REPORT: isa 6 {{.*}}cannot run host stages (x86_64)

// CHECK-NOT: l3.
// CHECK-NOT: l2.
// CHECK: l1.actor @model_state on @gpu_0 {
// CHECK: l1.handler @GradUpdate(
// CHECK: l1.stage @load_data on @cpu_0 process() {
// CHECK-NEXT: %[[X:.*]], %[[Y:.*]] = l1.read_batch @mnist [@images, @labels] batch 128 shuffle seed 0 : !l1.buf<@ram_0, tensor<128x28x28xf32>>, !l1.buf<@ram_0, tensor<128x1xui8>>
// CHECK-NEXT: l1.forward @transfer_to_gpu_0(%[[X]], %[[Y]])
// CHECK: l1.stage @transfer_to_gpu_0 on @cpu_0 process(
// CHECK-NEXT: l1.transfer {{.*}} : !l1.buf<@ram_0, tensor<128x28x28xf32>> -> !l1.buf<@gpu_0, tensor<128x28x28xf32>>
// CHECK-NEXT: l1.transfer {{.*}} : !l1.buf<@ram_0, tensor<128x1xui8>> -> !l1.buf<@gpu_0, tensor<128x1xui8>>
// CHECK-NEXT: l1.forward @forward_backward(
// CHECK: l1.tensor_graph @forward_backward on @gpu_0 reads [@model_state::@weights] then @transfer_grads
// CHECK: l1.stage @transfer_grads on @cpu_0 process({{.*}}: !l1.buf<@gpu_0, tensor<f32>>,
// CHECK-NEXT: %[[L:.*]] = l1.transfer {{.*}} : !l1.buf<@gpu_0, tensor<f32>> -> !l1.buf<@ram_0, tensor<f32>>
// CHECK-NEXT: l1.report "loss", %[[L]] : !l1.buf<@ram_0, tensor<f32>>
// CHECK: l1.send @model_state::@GradUpdate({{.*}}) : !l1.buf<@gpu_0, tensor<784x256xf32>>
// CHECK: l1.pipeline @train = @load_data -> @transfer_to_gpu_0 -> @forward_backward
// CHECK-NEXT: l1.pipeline @grad_return = @transfer_grads
// CHECK-NEXT: l1.schedule pipelines [@train, @grad_return] actors [@model_state] pipeline_depth 1
