// Stage buffers become slots and l1.transfer / l1.window_copy become
// l0uop.transfers, in the launch order of the step: host buffers in the
// host's freelist staging pool, device buffers in the device's io arena.
// RUN: synpl-opt %s --synpl-l1-to-l0-pipeline | FileCheck %s

// CHECK-LABEL: l0uop.plan @sys
// CHECK-DAG: l0uop.pool @[[STAGE:ram_0.freelist]] freelist on host
// CHECK-DAG: l0uop.pool @[[IO:gpu_0.io.arena]] arena on device
// A root stage's inputs come from outside the step (host staging).
// CHECK-DAG: l0uop.slot @[[IN:a.in0]] pool @[[STAGE]] size 16 lifetime({{.*}}) : !l0uop.buf<4xf32>
// CHECK-DAG: l0uop.slot @[[DX:a.tx0]] pool @[[IO]] offset {{[0-9]+}} size 16
// CHECK-DAG: l0uop.slot @[[BACK:b.tx0]] pool @[[STAGE]] size 16
// CHECK-DAG: l0uop.slot @[[SNAP:b.snap1]] pool @[[IO]]
// CHECK: l0uop.kernel @[[K:g.k0[^ ]*]] inputs(%{{.*}} = @[[DX]]
// CHECK: l0uop.transfer @[[T0:.*]] @[[IN]] -> @[[DX]] h2d bytes 16
// CHECK: l0uop.transfer @[[T1:.*]] @{{.*}} -> @{{.*}} h2d bytes 16
// CHECK: l0uop.transfer @[[T2:.*]] @g.out0 -> @[[BACK]] d2h bytes 16
// CHECK: l0uop.transfer @[[T3:.*]] @m.w -> @[[SNAP]] d2d bytes 16
// CHECK: l0uop.stream @stream_0 [@[[T0]], @[[T1]], @[[K]], @[[T2]], @[[T3]]]
l1.system @sys {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "1GB"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.actor @m on @gpu_0 {
  l1.state @w : tensor<4xf32> init ones
  l1.window @win [@w] readers [@b]
}
l1.stage @a on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>, %y: !l1.buf<@ram_0, tensor<4xf32>>) {
  %gx = l1.transfer %x : !l1.buf<@ram_0, tensor<4xf32>> -> !l1.buf<@gpu_0, tensor<4xf32>>
  %gy = l1.transfer %y : !l1.buf<@ram_0, tensor<4xf32>> -> !l1.buf<@gpu_0, tensor<4xf32>>
  l1.forward @g(%gx, %gy) : !l1.buf<@gpu_0, tensor<4xf32>>, !l1.buf<@gpu_0, tensor<4xf32>>
}
l1.tensor_graph @g on @gpu_0 then @b compute(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  %s = l1.add %x, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  l1.return %s : tensor<4xf32>
}
l1.stage @b on @cpu_0 reads [@m::@win] process(%s: !l1.buf<@gpu_0, tensor<4xf32>>) {
  %h = l1.transfer %s : !l1.buf<@gpu_0, tensor<4xf32>> -> !l1.buf<@ram_0, tensor<4xf32>>
  l1.report "sum", %h : !l1.buf<@ram_0, tensor<4xf32>>
  l1.drop %h : !l1.buf<@ram_0, tensor<4xf32>>
  %w = l1.window_copy @m::@win[@w] : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.drop %w : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.end
}
l1.pipeline @p = @a -> @g -> @b
l1.schedule pipelines [@p] actors [@m] pipeline_depth 1
