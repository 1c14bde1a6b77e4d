// RUN: synpl-opt %s -split-input-file -verify-diagnostics
// Update sharding (ZeRO stage 1) at L1: l1.reduce_scatter in a stage
// (L1.2, L1.5, L1.7: it consumes its buffer), the rank ops in the update
// handler of a data-parallel schedule, and optimizer state sharded among
// the replicas.

// Valid: the report stage keeps its replica's rows of the gradient; the
// handler updates its block of the weight and gathers the replicas'.
l1.system @s {
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @ram_1 memory {capacity = "16GB"}
  l1.node @cpu_1 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @ram_1 <-> @cpu_1 bandwidth "50GB/s"
  l1.edge @ram_0 <-> @ram_1 bandwidth "1.25GB/s"
}
l1.actor @model_state on @cpu_0 {
  l1.state @w : tensor<8x4xf32> init kaiming
  l1.state @m_w : tensor<4x4xf32> init zeros shard 0
  l1.state @rank : tensor<f32> init rank
  l1.handler @GradUpdate(%g: tensor<4x4xf32>) {
    %rank = l1.state_read @rank : tensor<f32>
    %w = l1.state_read @w : tensor<8x4xf32>
    %m = l1.state_read @m_w : tensor<4x4xf32>
    %b = l1.block_slice %w[%rank] axis 0 : tensor<8x4xf32>, tensor<f32> -> tensor<4x4xf32>
    %m1 = l1.add %m, %g : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %b1 = l1.sub %b, %m1 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %w1 = l1.all_gather %b1 axis 0 : tensor<4x4xf32> -> tensor<8x4xf32>
    l1.state_write @m_w, %m1 : tensor<4x4xf32>
    l1.state_write @w, %w1 : tensor<8x4xf32>
    l1.return
  }
}
l1.stage @report on @cpu_0 process(%g: !l1.buf<@ram_0, tensor<8x4xf32>>) {
  %r = l1.reduce_scatter sum %g : !l1.buf<@ram_0, tensor<8x4xf32>> -> !l1.buf<@ram_0, tensor<4x4xf32>>
  l1.send @model_state::@GradUpdate(%r) : !l1.buf<@ram_0, tensor<4x4xf32>>
  l1.end
}
l1.pipeline @p = @report
l1.schedule pipelines [@p] actors [@model_state] pipeline_depth 1 replicas [@cpu_0, @cpu_1]

// -----

// L1.2: a reduce-scatter without replicas.
l1.system @s {
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.stage @report on @cpu_0 process(%g: !l1.buf<@ram_0, tensor<8x4xf32>>) {
  // expected-error @+1 {{[safety] L1.2: a reduce-scatter combines the buffers of the schedule's replicas, but the l1.schedule lists 0 (at least 2)}}
  %r = l1.reduce_scatter sum %g : !l1.buf<@ram_0, tensor<8x4xf32>> -> !l1.buf<@ram_0, tensor<4x4xf32>>
  l1.drop %r : !l1.buf<@ram_0, tensor<4x4xf32>>
  l1.end
}
l1.pipeline @p = @report
l1.schedule pipelines [@p] actors [] pipeline_depth 1

// -----

// L1.5: two replicas keep half the rows each, not a quarter.
l1.system @s {
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @cpu_1 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @ram_0 <-> @cpu_1 bandwidth "50GB/s"
}
l1.stage @report on @cpu_0 process(%g: !l1.buf<@ram_0, tensor<8x4xf32>>) {
  // expected-error @+1 {{[consistency] L1.5: reduce_scatter: the schedule lists 2 replicas, so each keeps 8 / 2 rows of the first axis, not 2}}
  %r = l1.reduce_scatter sum %g : !l1.buf<@ram_0, tensor<8x4xf32>> -> !l1.buf<@ram_0, tensor<2x4xf32>>
  l1.drop %r : !l1.buf<@ram_0, tensor<2x4xf32>>
  l1.end
}
l1.pipeline @p = @report
l1.schedule pipelines [@p] actors [] pipeline_depth 1 replicas [@cpu_0, @cpu_1]

// -----

// L1.5: the block is of the first axis; the others stay whole.
l1.system @s {
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
}
l1.stage @report on @cpu_0 process(%g: !l1.buf<@ram_0, tensor<8x4xf32>>) {
  // expected-error @+1 {{[consistency] L1.5: a reduce-scatter keeps one block of the first axis: the result 'tensor<8x2xf32>' should be the operand 'tensor<8x4xf32>' with its first dimension divided by the replica count}}
  %r = l1.reduce_scatter sum %g : !l1.buf<@ram_0, tensor<8x4xf32>> -> !l1.buf<@ram_0, tensor<8x2xf32>>
  l1.drop %r : !l1.buf<@ram_0, tensor<8x2xf32>>
  l1.end
}

// -----

// L1.5: the mean of integers.
l1.system @s {
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
}
l1.stage @report on @cpu_0 process(%g: !l1.buf<@ram_0, tensor<8xi32>>) {
  // expected-error @+1 {{[consistency] L1.5: the mean of '!l1.buf<@ram_0, tensor<8xi32>>' is not an integer; reduce it with sum}}
  %r = l1.reduce_scatter mean %g : !l1.buf<@ram_0, tensor<8xi32>> -> !l1.buf<@ram_0, tensor<4xi32>>
  l1.drop %r : !l1.buf<@ram_0, tensor<4xi32>>
  l1.end
}

// -----

// L1.7: the reduce-scatter consumed %g; dropping it too consumes it twice.
l1.system @s {
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @cpu_1 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @ram_0 <-> @cpu_1 bandwidth "50GB/s"
}
l1.stage @report on @cpu_0 process(%g: !l1.buf<@ram_0, tensor<8x4xf32>>) {
  %r = l1.reduce_scatter sum %g : !l1.buf<@ram_0, tensor<8x4xf32>> -> !l1.buf<@ram_0, tensor<4x4xf32>>
  l1.drop %r : !l1.buf<@ram_0, tensor<4x4xf32>>
  // expected-error @+1 {{[liveness] L1.7: buffer %arg0 (argument 0 of ^bb0) is consumed twice on path ^bb0 in stage @report}}
  l1.drop %g : !l1.buf<@ram_0, tensor<8x4xf32>>
  l1.end
}
l1.pipeline @p = @report
l1.schedule pipelines [@p] actors [] pipeline_depth 1 replicas [@cpu_0, @cpu_1]

// -----

// L1.2: a handler's all_gather runs over the replicas or the shards; the
// schedule lists neither.
l1.system @s {
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.actor @model_state on @cpu_0 {
  l1.state @w : tensor<8x4xf32> init kaiming
  l1.handler @GradUpdate(%g: tensor<4x4xf32>) {
    // expected-error @+1 {{[safety] L1.2: all_gather runs across the ranks of a tensor-parallel schedule or, in a handler, the replicas of a data-parallel one, but the l1.schedule lists neither}}
    %w1 = l1.all_gather %g axis 0 : tensor<4x4xf32> -> tensor<8x4xf32>
    l1.state_write @w, %w1 : tensor<8x4xf32>
    l1.return
  }
}
l1.schedule pipelines [] actors [@model_state] pipeline_depth 1

// -----

// L1.5: a handler's all_gather over two replicas doubles its axis.
l1.system @s {
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @cpu_1 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @ram_0 <-> @cpu_1 bandwidth "50GB/s"
}
l1.actor @model_state on @cpu_0 {
  l1.state @w : tensor<16x4xf32> init kaiming
  l1.handler @GradUpdate(%g: tensor<4x4xf32>) {
    // expected-error @+1 {{[consistency] L1.5: all_gather: the schedule lists 2 replicas, so axis 0 gathers 4 x 2 = 8, not 16}}
    %w1 = l1.all_gather %g axis 0 : tensor<4x4xf32> -> tensor<16x4xf32>
    l1.state_write @w, %w1 : tensor<16x4xf32>
    l1.return
  }
}
l1.schedule pipelines [] actors [@model_state] pipeline_depth 1 replicas [@cpu_0, @cpu_1]
