// Tensor parallelism at L1: the schedule's shards (L1.1, L1.2), sharded
// actor state, the rank init, and the tensor ops across ranks
// (l1.all_gather, l1.all_sum, l1.block_slice): round trip and every
// verifier rejection.
// RUN: synpl-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// Valid: a column-split linear over two shards. Each rank holds a block of
// the weight's columns, multiplies, and gathers the output; the backward
// pass takes the rank's block of the output gradient and sums the input
// gradient's partials.
// CHECK-LABEL: l1.actor @state on @cpu_0
// CHECK: l1.state @w : tensor<4x2xf32> init kaiming shard 1
// CHECK: l1.state @rank : tensor<f32> init rank
// CHECK: l1.all_gather %{{.*}} axis 1 : tensor<8x2xf32> -> tensor<8x4xf32>
// CHECK: l1.block_slice %{{.*}}[%{{.*}}] axis 1 : tensor<8x4xf32>, tensor<f32> -> tensor<8x2xf32>
// CHECK: l1.all_sum %{{.*}} : tensor<8x4xf32>
// CHECK: l1.schedule pipelines [@p] actors [@state] pipeline_depth 1 shards [@cpu_0, @cpu_1]
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

// L1.2: a collective without shards.
l1.system @s {
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{[safety] L1.2: all_sum runs across the ranks of a tensor-parallel schedule, but the l1.schedule lists no shards}}
  %s = l1.all_sum %x : tensor<8x4xf32>
  l1.return %s : tensor<8x4xf32>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<8x4xf32>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<8x4xf32>>
  l1.end
}
l1.pipeline @p = @g -> @sink
l1.schedule pipelines [@p] actors [] pipeline_depth 1

// -----

// L1.5: an all_gather over more ranks than the schedule lists.
l1.system @s {
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @cpu_1 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @ram_0 <-> @cpu_1 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%x: tensor<8x2xf32>) {
  // expected-error @+1 {{[consistency] L1.5: all_gather: the schedule lists 2 shards, so axis 1 gathers 2 x 2 = 4, not 8}}
  %y = l1.all_gather %x axis 1 : tensor<8x2xf32> -> tensor<8x8xf32>
  l1.return %y : tensor<8x8xf32>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<8x8xf32>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<8x8xf32>>
  l1.end
}
l1.pipeline @p = @g -> @sink
l1.schedule pipelines [@p] actors [] pipeline_depth 1 shards [@cpu_0, @cpu_1]

// -----

l1.system @s {
  l1.node @cpu_0 compute {isa = "x86_64"}
}
l1.tensor_graph @g on @cpu_0 compute(%x: tensor<8x3xf32>) {
  // expected-error @+1 {{[consistency] L1.5: all_gather: the result [8, 4] should be the operand [8, 3] with axis 1 a multiple of its size}}
  %y = l1.all_gather %x axis 1 : tensor<8x3xf32> -> tensor<8x4xf32>
  l1.return %y : tensor<8x4xf32>
}

// -----

l1.system @s {
  l1.node @cpu_0 compute {isa = "x86_64"}
}
l1.tensor_graph @g on @cpu_0 compute(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{[consistency] L1.5: all_gather: axis 2 of the operand [8, 4] and the result [8, 8]: both need the same rank, above the axis}}
  %y = l1.all_gather %x axis 2 : tensor<8x4xf32> -> tensor<8x8xf32>
  l1.return %y : tensor<8x8xf32>
}

// -----

l1.system @s {
  l1.node @cpu_0 compute {isa = "x86_64"}
}
l1.tensor_graph @g on @cpu_0 compute(%x: tensor<8x4xi32>) {
  // expected-error @+1 {{[consistency] L1.5: all_sum: sums f32 tensors, not 'tensor<8x4xi32>'}}
  %y = l1.all_sum %x : tensor<8x4xi32>
  l1.return %y : tensor<8x4xi32>
}

// -----

l1.system @s {
  l1.node @cpu_0 compute {isa = "x86_64"}
}
l1.tensor_graph @g on @cpu_0 compute(%x: tensor<8x4xf32>, %i: tensor<1xf32>) {
  // expected-error @+1 {{[consistency] L1.5: block_slice: the block index is a rank-0 f32 (tensor<f32>), not 'tensor<1xf32>'}}
  %y = l1.block_slice %x[%i] axis 1 : tensor<8x4xf32>, tensor<1xf32> -> tensor<8x2xf32>
  l1.return %y : tensor<8x2xf32>
}

// -----

l1.system @s {
  l1.node @cpu_0 compute {isa = "x86_64"}
}
l1.tensor_graph @g on @cpu_0 compute(%x: tensor<8x4xf32>, %i: tensor<f32>) {
  // expected-error @+1 {{[consistency] L1.5: block_slice: the operand [8, 4] should be the result [4, 3] with axis 1 a multiple of its size}}
  %y = l1.block_slice %x[%i] axis 1 : tensor<8x4xf32>, tensor<f32> -> tensor<4x3xf32>
  l1.return %y : tensor<4x3xf32>
}

// -----

// Sharded state needs a schedule with shards.
l1.system @s {
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.actor @state on @cpu_0 {
  // expected-error @+1 {{[safety] L1.2: state @w holds one shard per rank, but the l1.schedule lists no shards or replicas}}
  l1.state @w : tensor<4x2xf32> init kaiming shard 1
}
l1.schedule pipelines [] actors [@state] pipeline_depth 1

// -----

l1.system @s {
  l1.node @cpu_0 compute {isa = "x86_64"}
}
l1.actor @state on @cpu_0 {
  // expected-error @+1 {{'l1.state' op shard axis 2 is not an axis of 'tensor<4x2xf32>'}}
  l1.state @w : tensor<4x2xf32> init kaiming shard 2
}

// -----

l1.system @s {
  l1.node @cpu_0 compute {isa = "x86_64"}
}
l1.actor @state on @cpu_0 {
  // expected-error @+1 {{'l1.state' op init rank is one number per process; it has no shard}}
  l1.state @r : tensor<f32> init rank shard 0
}

// -----

l1.system @s {
  l1.node @cpu_0 compute {isa = "x86_64"}
}
l1.actor @state on @cpu_0 {
  // expected-error @+1 {{'l1.state' op init rank fills a rank-0 f32 (tensor<f32>), not 'tensor<2xf32>'}}
  l1.state @r : tensor<2xf32> init rank
}

// -----

// A schedule is data- or tensor-parallel, not both.
l1.system @s {
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @cpu_1 compute {isa = "x86_64"}
  l1.edge @cpu_0 <-> @cpu_1 bandwidth "1GB/s"
}
// expected-error @+1 {{[safety] L1.2: a schedule lists replicas (data parallel) or shards (tensor parallel), not both}}
l1.schedule pipelines [] actors [] pipeline_depth 1 replicas [@cpu_0, @cpu_1] shards [@cpu_0, @cpu_1]

// -----

l1.system @s {
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda"}
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "1GB/s"
}
// expected-error @+1 {{[safety] L1.1: shard @gpu_0 has isa 'cuda' but shard @cpu_0 has 'x86_64': every shard runs the same code}}
l1.schedule pipelines [] actors [] pipeline_depth 1 shards [@cpu_0, @gpu_0]

// -----

l1.system @s {
  l1.node @cpu_0 compute {isa = "x86_64"}
}
// expected-error @+1 {{[safety] L1.2: a tensor-parallel schedule lists at least two shards, got 1}}
l1.schedule pipelines [] actors [] pipeline_depth 1 shards [@cpu_0]

// -----

l1.system @s {
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @cpu_1 compute {isa = "x86_64"}
  l1.edge @cpu_0 <-> @cpu_1 bandwidth "1GB/s"
}
// expected-error @+1 {{[safety] L1.4: a tensor-parallel schedule runs one step at a time (pipeline_depth 1, not 2): every rank meets each step's collectives in order}}
l1.schedule pipelines [] actors [] pipeline_depth 2 shards [@cpu_0, @cpu_1]
