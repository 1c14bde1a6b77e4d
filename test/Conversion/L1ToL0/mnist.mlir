// The MNIST program at L1 (examples/mnist/mnist.l1.mlir) lowers completely
// to one plan that verifies under every L0 row (the pass manager verifies
// the output, and the printed plan parses and verifies again).
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l1.mlir --synpl-l1-to-l0-pipeline | FileCheck %s
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l1.mlir --synpl-l1-to-l0-pipeline | synpl-opt | FileCheck %s
// The summary remark names the kernel count and every pool's capacity.
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l1.mlir --synpl-l1-to-l0=summary -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck --check-prefix=SUM %s
// SUM: remark: plan @single_gpu: {{[1-9][0-9]*}} kernels ({{[0-9]+}} tensor ops), {{[0-9]+}} slots, @gpu_0.persistent persistent {{[0-9]+}} bytes
// Idempotent: a second run over the plan changes nothing.
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l1.mlir --synpl-l1-to-l0-pipeline --synpl-l1-to-l0 | FileCheck %s

// CHECK-LABEL: l0uop.plan @single_gpu pipeline_depth 2 {
// CHECK-DAG: l0uop.pool @{{.*}} persistent on device
// CHECK-DAG: l0uop.pool @{{.*}} freelist on host
// CHECK-DAG: l0uop.pool @{{.*}} arena on device
// Every parameter and Adam moment has a persistent slot.
// CHECK-DAG: l0uop.slot @model_state.w1 pool {{.*}} : !l0uop.buf<784x256xf32>
// CHECK-DAG: l0uop.slot @model_state.v_b3 pool {{.*}} : !l0uop.buf<10xf32>
// The batch is staged on the host and copied into the device's io arena.
// CHECK-DAG: l0uop.slot @[[IMG:.*]] pool @ram_0.freelist size 100352 {{.*}} : !l0uop.buf<128x28x28xui8>
// Forward/backward kernels: the first layer's matmul and its bias.
// CHECK: l0uop.kernel @forward_backward.{{.*}}matmul{{.*}} grid(128, 1, 1) block(256, 1, 1)
// CHECK: l0uop.range 0 to 784 : index
// CHECK: l0uop.reduce add
// Softmax: a row max.
// CHECK: l0uop.reduce max
// The handler's Adam update, after the graph.
// CHECK: l0uop.kernel @model_state.GradUpdate.
// CHECK: l0uop.sqrt
// CHECK: l0uop.transfer @{{.*}} @[[IMG]] -> @{{.*}} h2d bytes 100352
// CHECK: l0uop.transfer @{{.*}} @forward_backward.out0 -> @{{.*}} d2h bytes 4
// CHECK: l0uop.stream @stream_0 [
// CHECK: l0uop.stream @stream_1 [
// CHECK: l0uop.record @[[E:.*]] after @model_state.GradUpdate.{{.*}} on @stream_0
// CHECK: l0uop.wait @[[E]] before @{{.*}} on @stream_1
// CHECK: l0uop.init kaiming @model_state.w1 fan_in 784 seed 1
// CHECK: l0uop.init ones @model_state.g1
// Control: the step dispatcher pops the batch, rotates over the 2 streams
// and pushes the launch descriptor.
// CHECK: l0ctl.region @[[BQ:.*]] size 64 access ro queue 8
// CHECK: l0ctl.region @[[LQ:.*]] size 64 access wo queue 8
// CHECK: l0ctl.program @step_dispatch {
// CHECK: l0ctl.queue_pop @[[BQ]] : i64
// CHECK: l0ctl.queue_push @[[LQ]], %{{.*}} : i64
// CHECK: l0ctl.const 2 : i64
// CHECK: l0ctl.terminate
// CHECK-NOT: l1.
