// A buffer a stage reports is read on the host when the step's launches are
// done, so its slot lives to the step's last launch. Here the graph (on a
// CPU, in its RAM) returns a scalar that the stage reports where the graph
// wrote it, and a vector the actor's handler reads: packing must not put
// the vector over the reported scalar.
// RUN: synpl-opt %s --synpl-l1-to-l0-pipeline | FileCheck %s
// RUN: synpl-opt %s --synpl-l1-to-l0-pipeline --synpl-l0-pack-memory 2>/dev/null | FileCheck %s --check-prefix=PACKED
// Launches: 0, 1 = g's reduce_sum (two kernels), 2 = g's reduce_max, 3 = Set.
// CHECK-DAG: l0uop.slot @g.out0 pool @cpu_0.io.arena {{.*}} lifetime(1, 3) : !l0uop.buf<1xf32>
// CHECK-DAG: l0uop.slot @g.out1 pool @cpu_0.io.arena {{.*}} lifetime(2, 3) : !l0uop.buf<64xf32>
// CHECK: l0uop.stream @stream_0 [@g.k0_reduce_sum, @g.k1_reduce_sum, @g.k2_reduce_max, @a.Set.k0_copy]
// PACKED-DAG: l0uop.slot @g.out0 pool @cpu_0.io.arena offset 256 size 4 lifetime(1, 3)
// PACKED-DAG: l0uop.slot @g.out1 pool @cpu_0.io.arena offset 0 size 256 lifetime(2, 3)

l1.system @box {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.data @d {
  l1.field @x : tensor<64xf32> at @ssd_0 path "/tmp/x" format idx
}
l1.actor @a on @cpu_0 {
  l1.state @w : tensor<64xf32> init zeros
  l1.window @win [@w] readers [@g]
  l1.handler @Set(%v: tensor<64xf32>) {
    l1.state_write @w, %v : tensor<64xf32>
    l1.return
  }
}
l1.stage @load on @cpu_0 process() {
  %x = l1.read_batch @d [@x] batch 8 shuffle seed 0 : !l1.buf<@ram_0, tensor<8x64xf32>>
  l1.forward @g(%x) : !l1.buf<@ram_0, tensor<8x64xf32>>
}
l1.tensor_graph @g on @cpu_0 reads [@a::@win] then @host compute(%x: tensor<8x64xf32>) {
  %total = l1.reduce_sum %x : tensor<8x64xf32> -> tensor<f32>
  %w = l1.window_read @a::@win[@w] : tensor<64xf32>
  %s = l1.reduce_max %x axis 0 : tensor<8x64xf32> -> tensor<64xf32>
  %r = l1.add %s, %w : tensor<64xf32>, tensor<64xf32> -> tensor<64xf32>
  l1.return %total, %r : tensor<f32>, tensor<64xf32>
}
l1.stage @host on @cpu_0 process(%total: !l1.buf<@ram_0, tensor<f32>>, %r: !l1.buf<@ram_0, tensor<64xf32>>) {
  l1.report "total", %total : !l1.buf<@ram_0, tensor<f32>>
  l1.drop %total : !l1.buf<@ram_0, tensor<f32>>
  l1.send @a::@Set(%r) : !l1.buf<@ram_0, tensor<64xf32>>
  l1.end
}
l1.pipeline @train = @load -> @g
l1.pipeline @ret = @host
l1.schedule pipelines [@train, @ret] actors [@a] pipeline_depth 2
