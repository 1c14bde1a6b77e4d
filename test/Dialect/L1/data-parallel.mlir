// RUN: synpl-opt %s -split-input-file -verify-diagnostics
// Data parallelism at L1: the schedule's replicas (L1.1, L1.2) and
// l1.all_reduce (L1.2, L1.5, L1.7: it consumes its buffers).

// Valid: two replicas joined through their memories; the report stage
// averages the gradient and forwards the result.
l1.system @s {
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @ram_1 memory {capacity = "16GB"}
  l1.node @cpu_1 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @ram_1 <-> @cpu_1 bandwidth "50GB/s"
  l1.edge @ram_0 <-> @ram_1 bandwidth "1.25GB/s"
}
l1.stage @report on @cpu_0 process(%g: !l1.buf<@ram_0, tensor<4xf32>>, %n: !l1.buf<@ram_0, tensor<f32>>) {
  %a, %b = l1.all_reduce mean %g, %n : !l1.buf<@ram_0, tensor<4xf32>>, !l1.buf<@ram_0, tensor<f32>> -> !l1.buf<@ram_0, tensor<4xf32>>, !l1.buf<@ram_0, tensor<f32>>
  l1.drop %a : !l1.buf<@ram_0, tensor<4xf32>>
  l1.drop %b : !l1.buf<@ram_0, tensor<f32>>
  l1.end
}
l1.pipeline @p = @report
l1.schedule pipelines [@p] actors [] pipeline_depth 1 replicas [@cpu_0, @cpu_1]

// -----

// L1.2: an all-reduce without replicas.
l1.system @s {
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.stage @report on @cpu_0 process(%g: !l1.buf<@ram_0, tensor<4xf32>>) {
  // expected-error @+1 {{[safety] L1.2: an all-reduce combines the buffers of the schedule's replicas, but the l1.schedule lists 0 (at least 2)}}
  %a = l1.all_reduce sum %g : !l1.buf<@ram_0, tensor<4xf32>> -> !l1.buf<@ram_0, tensor<4xf32>>
  l1.drop %a : !l1.buf<@ram_0, tensor<4xf32>>
  l1.end
}
l1.pipeline @p = @report
l1.schedule pipelines [@p] actors [] pipeline_depth 1

// -----

// L1.7: the all-reduce consumed %g; dropping it too consumes it twice.
l1.system @s {
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @cpu_1 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @ram_0 <-> @cpu_1 bandwidth "50GB/s"
}
l1.stage @report on @cpu_0 process(%g: !l1.buf<@ram_0, tensor<4xf32>>) {
  %a = l1.all_reduce sum %g : !l1.buf<@ram_0, tensor<4xf32>> -> !l1.buf<@ram_0, tensor<4xf32>>
  l1.drop %a : !l1.buf<@ram_0, tensor<4xf32>>
  // expected-error @+1 {{[liveness] L1.7: buffer %arg0 (argument 0 of ^bb0) is consumed twice on path ^bb0 in stage @report}}
  l1.drop %g : !l1.buf<@ram_0, tensor<4xf32>>
  l1.end
}
l1.pipeline @p = @report
l1.schedule pipelines [@p] actors [] pipeline_depth 1 replicas [@cpu_0, @cpu_1]

// -----

l1.system @s {
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.stage @report on @cpu_0 process(%n: !l1.buf<@ram_0, tensor<4xi32>>) {
  // expected-error @+1 {{[consistency] L1.5: the mean of '!l1.buf<@ram_0, tensor<4xi32>>' is not an integer; reduce it with sum}}
  %a = l1.all_reduce mean %n : !l1.buf<@ram_0, tensor<4xi32>> -> !l1.buf<@ram_0, tensor<4xi32>>
  l1.drop %a : !l1.buf<@ram_0, tensor<4xi32>>
  l1.end
}

// -----

// L1.1: replicas of different isas.
l1.system @s {
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
// expected-error @+1 {{[safety] L1.1: replica @gpu_0 has isa 'cuda' but replica @cpu_0 has 'x86_64': every replica runs the same code}}
l1.schedule pipelines [] actors [] pipeline_depth 1 replicas [@cpu_0, @gpu_0]

// -----

// L1.1: no path joins the replicas (the collectives' ring).
l1.system @s {
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @ram_1 memory {capacity = "16GB"}
  l1.node @cpu_1 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @ram_1 <-> @cpu_1 bandwidth "50GB/s"
}
// expected-error @+1 {{[safety] L1.1: the replicas' collectives: no path of edges from @cpu_0 to @cpu_1 in system @s}}
l1.schedule pipelines [] actors [] pipeline_depth 1 replicas [@cpu_0, @cpu_1]

// -----

// L1.2: a replica that is not a node; L1.1: one that is not a compute node.
l1.system @s {
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
// expected-error @+1 {{[safety] L1.2: replica cpu_9 is placed on @cpu_9, which is not a node of the program's l1.system}}
l1.schedule pipelines [] actors [] pipeline_depth 1 replicas [@cpu_0, @cpu_9]

// -----

l1.system @s {
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
// expected-error @+1 {{[safety] L1.2: the schedule lists replica @cpu_0 twice}}
l1.schedule pipelines [] actors [] pipeline_depth 1 replicas [@cpu_0, @cpu_0]
