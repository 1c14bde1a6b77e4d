// The spec's MNIST method (examples/mnist/mnist.l2.mlir) placed on one
// x86-64 CPU: graph, actor and stages on cpu_0, every buffer in ram_0 (the
// memory node cpu_0 has an edge to), no transfer stage. The result passes
// the L1 verifiers (synpl-opt verifies after the pass) and a second
// synpl-opt parses it.
//
// RUN: cat %S/Inputs/single_cpu.mlir %synpl_src_root/examples/mnist/mnist.l2.mlir \
// RUN:   | synpl-opt --synpl-l2-to-l1 --synpl-search-report 2> %t.report \
// RUN:   | synpl-opt | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT < %t.report
// The pass leaves an L1 program as it is (idempotent on its own output).
// RUN: cat %S/Inputs/single_cpu.mlir %synpl_src_root/examples/mnist/mnist.l2.mlir \
// RUN:   | synpl-opt --synpl-l2-to-l1 | synpl-opt --synpl-l2-to-l1 | FileCheck %s

// REPORT: search L2->L1 @single_cpu: 3 enumerated (space 3), 0 rejected, 3 survived; winner: graph+actor@cpu_0 host@cpu_0 staging@ram_0 depth=1
// REPORT: why:

// No l3 or l2 op is left.
// CHECK-NOT: l3.
// CHECK-NOT: l2.
// CHECK: l1.system @single_cpu
// Data binding: the L3 domains, at the storage node, bound at run time.
// CHECK: l1.data @mnist {
// CHECK-NEXT: l1.field @images : tensor<28x28xf32> at @ssd_0 path "" format idx
// CHECK-NEXT: l1.field @labels : tensor<1xui8> at @ssd_0 path "" format idx

// The actor: parameters with their inits, Adam moments, the counters.
// CHECK: l1.actor @model_state on @cpu_0 {
// CHECK-NEXT: l1.state @fc1_weight : tensor<784x256xf32> init kaiming
// CHECK-NEXT: l1.state @fc1_bias : tensor<256xf32> init zeros
// CHECK-NEXT: l1.state @norm1_gain : tensor<256xf32> init ones
// CHECK: l1.state @fc3_bias : tensor<10xf32> init zeros
// CHECK-NEXT: l1.state @m_fc1_weight : tensor<784x256xf32> init zeros
// CHECK-NEXT: l1.state @v_fc1_weight : tensor<784x256xf32> init zeros
// CHECK: l1.state @v_fc3_bias : tensor<10xf32> init zeros
// CHECK-NEXT: l1.state @step : tensor<f32> init zeros
// CHECK-NEXT: l1.state @total_steps : tensor<f32> init planned_steps
// CHECK-NEXT: l1.window @weights [@fc1_weight, @fc1_bias, @norm1_gain, @norm1_bias, @fc2_weight, @fc2_bias, @norm2_gain, @norm2_bias, @fc3_weight, @fc3_bias] readers [@forward_backward]

// The handler: t = step + 1; warmup and cosine decay over total_steps;
// bias-corrected Adam per parameter.
// CHECK: l1.handler @GradUpdate(%[[G0:.*]]: tensor<784x256xf32>, {{.*}}: tensor<10xf32>) {
// CHECK: %[[PREV:.*]] = l1.state_read @step : tensor<f32>
// CHECK: %[[T:.*]] = l1.add %[[PREV]], %{{.*}}
// CHECK: l1.state_write @step, %[[T]]
// CHECK: l1.min
// CHECK: l1.state_read @total_steps
// CHECK: l1.cos
// CHECK: l1.exp
// CHECK: %[[M:.*]] = l1.state_read @m_fc1_weight
// CHECK: l1.sqrt
// CHECK: l1.div
// CHECK: l1.state_write @m_fc1_weight
// CHECK: l1.state_write @v_fc1_weight
// CHECK: l1.state_write @fc1_weight
// CHECK: l1.state_write @fc3_bias
// CHECK-NEXT: l1.return

// One shuffled batch of 128 into ram_0, straight to the graph.
// CHECK: l1.stage @load_data on @cpu_0 process() {
// CHECK-NEXT: l1.read_batch @mnist [@images, @labels] batch 128 shuffle seed 0 : !l1.buf<@ram_0, tensor<128x28x28xf32>>, !l1.buf<@ram_0, tensor<128x1xui8>>
// CHECK-NEXT: l1.forward @forward_backward(

// CHECK: l1.tensor_graph @forward_backward on @cpu_0 reads [@model_state::@weights] then @report_and_send compute({{.*}}: tensor<128x28x28xf32>, {{.*}}: tensor<128x1xui8>)
// CHECK: l1.return {{.*}} : tensor<f32>, tensor<784x256xf32>, {{.*}}, tensor<10xf32>, tensor<f32>

// CHECK: l1.stage @report_and_send on @cpu_0 process(%[[LOSS:[^:]*]]: !l1.buf<@ram_0, tensor<f32>>,
// CHECK-NEXT: l1.report "loss", %[[LOSS]] : !l1.buf<@ram_0, tensor<f32>>
// CHECK-NEXT: l1.drop %[[LOSS]]
// CHECK-NEXT: l1.report "correct"
// CHECK-NEXT: l1.drop
// CHECK-NEXT: l1.send @model_state::@GradUpdate({{.*}}) : !l1.buf<@ram_0, tensor<784x256xf32>>
// CHECK-NEXT: l1.end

// CHECK: l1.pipeline @train = @load_data -> @forward_backward
// CHECK-NEXT: l1.pipeline @grad_return = @report_and_send
// CHECK-NEXT: l1.schedule pipelines [@train, @grad_return] actors [@model_state] pipeline_depth 1
