// RUN: synpl-opt %s -split-input-file --synpl-l1-to-l0 | FileCheck %s
// RUN: synpl-opt %s -split-input-file --synpl-l1-to-l0 | synpl-opt -split-input-file -o /dev/null
// L1 -> L0 of a tensor-parallel graph: a column-split linear's gather, its
// block of the output gradient and the sum of the input gradient's
// partials. The collectives are stream entries between the kernels: the
// gather along axis 1 leaves the ranks' blocks one after the other
// ([2 x 8 x 2] as 32 floats) and the block_slice kernel reads them through
// the transposing view at the rank it loads; the all_sum reduces the
// matmul's slot in place and completes before the kernel that reads it.
// The sharded weight's slot says how it is split, and its kaiming init
// takes the full tensor's fan-in.

// CHECK-LABEL: l0uop.plan @s pipeline_depth 1 ranks 2 {
// CHECK: l0uop.slot @state.w pool @cpu_0.persistent offset 0 size 32 lifetime(0, 5) shard_rows 4 : !l0uop.buf<4x2xf32>
// CHECK: l0uop.slot @state.rank pool @cpu_0.persistent {{.*}} : !l0uop.buf<1xf32>
// CHECK: l0uop.slot @[[PART:g.t0_matmul]] pool @g.arena {{.*}} : !l0uop.buf<8x2xf32>
// CHECK: l0uop.slot @[[WHOLE:g.t1_all_gather]] pool @g.arena {{.*}} : !l0uop.buf<32xf32>
// CHECK: l0uop.slot @[[DX:g.t3_matmul]] pool @g.arena {{.*}} : !l0uop.buf<8x4xf32>
// CHECK: l0uop.kernel @g.k2_block_slice inputs(%{{.*}} = @[[WHOLE]] : !l0uop.buf<32xf32>, %{{.*}} = @state.rank : !l0uop.buf<1xf32>)
// CHECK: l0uop.collective @g.k1_all_gather all_gather [@[[PART]], @[[WHOLE]]]{{$}}
// CHECK: l0uop.collective @g.k4_all_sum all_reduce(sum) [@[[DX]]] complete_before @g.k5_copy
// CHECK: l0uop.stream @stream_0 [@g.k0_matmul, @g.k1_all_gather, @g.k2_block_slice, @g.k3_matmul, @g.k4_all_sum, @g.k5_copy]
// CHECK: l0uop.init kaiming @state.w fan_in 4 seed 1
// CHECK: l0uop.init rank @state.rank

l1.system @s {
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @ram_1 memory {capacity = "16GB"}
  l1.node @cpu_1 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @ram_1 <-> @cpu_1 bandwidth "50GB/s"
  l1.edge @ram_0 <-> @ram_1 bandwidth "1.25GB/s"
}
l1.actor @state on @cpu_0 {
  l1.state @w : tensor<4x2xf32> init kaiming shard 1
  l1.state @rank : tensor<f32> init rank
  l1.window @weights [@w, @rank] readers [@g]
}
l1.tensor_graph @g on @cpu_0 reads [@state::@weights] then @sink compute(%x: tensor<8x4xf32>) {
  %w = l1.window_read @state::@weights[@w] : tensor<4x2xf32>
  %r = l1.window_read @state::@weights[@rank] : tensor<f32>
  %y_r = l1.matmul %x, %w : tensor<8x4xf32>, tensor<4x2xf32> -> tensor<8x2xf32>
  %y = l1.all_gather %y_r axis 1 : tensor<8x2xf32> -> tensor<8x4xf32>
  %dy_r = l1.block_slice %y[%r] axis 1 : tensor<8x4xf32>, tensor<f32> -> tensor<8x2xf32>
  %wt = l1.transpose %w : tensor<4x2xf32> -> tensor<2x4xf32>
  %dx_r = l1.matmul %dy_r, %wt : tensor<8x2xf32>, tensor<2x4xf32> -> tensor<8x4xf32>
  %dx = l1.all_sum %dx_r : tensor<8x4xf32>
  l1.return %dx : tensor<8x4xf32>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<8x4xf32>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<8x4xf32>>
  l1.end
}
l1.pipeline @p = @g -> @sink
l1.schedule pipelines [@p] actors [@state] pipeline_depth 1 shards [@cpu_0, @cpu_1]


// -----

// An all_sum whose operand is read elsewhere too sums a copy of it (the
// operand keeps its value), and one whose sum the graph returns is copied
// into the graph's output slot after it completes.
// CHECK-LABEL: l0uop.plan @s
// CHECK: l0uop.kernel @g.k1_copy inputs(%{{.*}} = @g.out1 : !l0uop.buf<8x4xf32>) outputs(%{{.*}} = @[[SENT:g.sent0]] : !l0uop.buf<8x4xf32>)
// CHECK: l0uop.kernel @g.k3_copy inputs(%{{.*}} = @[[SENT]] : !l0uop.buf<8x4xf32>) outputs(%{{.*}} = @g.out0 : !l0uop.buf<8x4xf32>)
// CHECK: l0uop.collective @g.k2_all_sum all_reduce(sum) [@[[SENT]]] complete_before @g.k3_copy
// CHECK: l0uop.stream @stream_0 [@g.k0_matmul, @g.k1_copy, @g.k2_all_sum, @g.k3_copy
l1.system @s {
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @ram_1 memory {capacity = "16GB"}
  l1.node @cpu_1 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @ram_1 <-> @cpu_1 bandwidth "50GB/s"
  l1.edge @ram_0 <-> @ram_1 bandwidth "1.25GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%x: tensor<8x4xf32>, %w: tensor<4x4xf32>) {
  %m = l1.matmul %x, %w : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
  %s = l1.all_sum %m : tensor<8x4xf32>
  l1.return %s, %m : tensor<8x4xf32>, tensor<8x4xf32>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<8x4xf32>>, %p: !l1.buf<@ram_0, tensor<8x4xf32>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<8x4xf32>>
  l1.drop %p : !l1.buf<@ram_0, tensor<8x4xf32>>
  l1.end
}
l1.pipeline @p = @g -> @sink
l1.schedule pipelines [@p] actors [] pipeline_depth 1 shards [@cpu_0, @cpu_1]
