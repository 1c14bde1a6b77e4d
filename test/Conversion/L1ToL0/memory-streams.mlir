// Memory planning, stream inference and init emission of --synpl-l1-to-l0
// on a reader graph and the actor handler that rewrites what it reads.
// The pass runs the plan's verifier (L0.1-L0.6) on its output.
// RUN: synpl-opt %s --synpl-l1-to-l0-pipeline | FileCheck %s
// RUN: synpl-opt %s --synpl-l1-to-l0-pipeline | synpl-opt | FileCheck %s

// pipeline_depth comes from the schedule.
// CHECK-LABEL: l0uop.plan @sys pipeline_depth 2 {
// Actor state is persistent; intermediates that leave registers are in the
// arena of their graph or handler; buffers between stages in the io arena.
// CHECK-DAG: l0uop.pool @[[STATE:gpu_0.persistent]] persistent on device
// CHECK-DAG: l0uop.pool @[[IO:gpu_0.io.arena]] arena on device
// The state lives the whole step (ticks 0 to the last launch, 2).
// CHECK-DAG: l0uop.slot @[[W:a.w]] pool @[[STATE]] offset 0 size 32 lifetime(0, 2) : !l0uop.buf<8xf32>
// CHECK-DAG: l0uop.slot @[[T:a.t]] pool @[[STATE]] offset 256 size 4 lifetime(0, 2) : !l0uop.buf<1xf32>
// The graph's output is the handler's argument: one slot, live from the
// graph's kernel to the handler's.
// CHECK-DAG: l0uop.slot @[[OUT:fb.out0]] pool @[[IO]] {{.*}} lifetime(0, 2) : !l0uop.buf<8xf32>
// CHECK: l0uop.kernel @[[K0:fb.k0[^ ]*]] inputs({{.*}}@[[W]]
// The handler: a scalar kernel that bumps the step in its state slot (and
// stores the learning rate it derives), then the update of w, which reads
// and rewrites w in place.
// CHECK: l0uop.kernel @[[K1:a.Upd.k0[^ ]*]] inputs() outputs(%{{.*}} = @[[T]] : !l0uop.buf<1xf32>, %{{.*}} = @[[LR:a.Upd.t[0-9]+_reciprocal]] : !l0uop.buf<1xf32>)
// CHECK: l0uop.kernel @[[K2:a.Upd.k1[^ ]*]] inputs({{.*}}@[[OUT]] : !l0uop.buf<8xf32>{{.*}}@[[LR]]{{.*}}) outputs(%{{.*}} = @[[W]] : !l0uop.buf<8xf32>)
// Two steps in flight: two streams with the step's launches in order, and
// step N's last launch fences step N+1's first.
// CHECK: l0uop.stream @[[S0:stream_0]] [@[[K0]], @[[K1]], @[[K2]]]
// CHECK: l0uop.stream @[[S1:stream_1]] [@[[K0]], @[[K1]], @[[K2]]]
// CHECK: l0uop.event @[[E:.*]]
// CHECK: l0uop.record @[[E]] after @[[K2]] on @[[S0]]
// CHECK: l0uop.wait @[[E]] before @[[K0]] on @[[S1]]
// The state's initializers.
// CHECK: l0uop.init kaiming @[[W]] fan_in 8 seed 1
// CHECK: l0uop.init zeros @[[T]]
// No stage reads batches: the dispatcher only counts steps and launches.
// CHECK-NOT: queue_pop
// CHECK: l0ctl.program @step_dispatch
// CHECK: l0ctl.queue_push
// CHECK-NOT: l1.
l1.system @sys {
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "1GB"}
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.actor @a on @gpu_0 {
  l1.state @w : tensor<8xf32> init kaiming
  l1.state @t : tensor<f32> init zeros
  l1.window @win [@w] readers [@fb]
  l1.handler @Upd(%g: tensor<8xf32>) {
    %t0 = l1.state_read @t : tensor<f32>
    %one = l1.const 1.0 : tensor<f32>
    %t1 = l1.add %t0, %one : tensor<f32>, tensor<f32> -> tensor<f32>
    l1.state_write @t, %t1 : tensor<f32>
    %lr = l1.reciprocal %t1 : tensor<f32> -> tensor<f32>
    %w = l1.state_read @w : tensor<8xf32>
    %step = l1.scale %g, %lr : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
    %nw = l1.sub %w, %step : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
    l1.state_write @w, %nw : tensor<8xf32>
    l1.return
  }
}
l1.tensor_graph @fb on @gpu_0 reads [@a::@win] then @ret compute(%x: tensor<8xf32>) {
  %w = l1.window_read @a::@win[@w] : tensor<8xf32>
  %y = l1.mul %x, %w : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  l1.return %y : tensor<8xf32>
}
l1.stage @ret on @cpu_0 process(%y: !l1.buf<@gpu_0, tensor<8xf32>>) {
  l1.send @a::@Upd(%y) : !l1.buf<@gpu_0, tensor<8xf32>>
  l1.end
}
l1.pipeline @train = @fb
l1.pipeline @back = @ret
l1.schedule pipelines [@train, @back] actors [@a] pipeline_depth 2
