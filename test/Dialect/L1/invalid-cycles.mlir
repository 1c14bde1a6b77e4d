// L1.10 resource: DAG finiteness. Tensor graphs, pipelines and the dataflow
// among stages are acyclic, and stage CFGs are loop-free.
// RUN: synpl-opt %s -split-input-file -verify-diagnostics

// L1.10 positive: a chain of stages and a DAG-shaped tensor graph (a value
// used twice is not a cycle).
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.stage @a on @cpu_0 process(%x: !l1.buf<@gpu_0, tensor<4xf32>>) {
  l1.forward @g(%x) : !l1.buf<@gpu_0, tensor<4xf32>>
}
l1.tensor_graph @g on @gpu_0 then @b compute(%x: tensor<4xf32>) {
  %e = l1.exp %x : tensor<4xf32> -> tensor<4xf32>
  %s = l1.add %e, %e : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  l1.return %s : tensor<4xf32>
}
l1.stage @b on @cpu_0 process(%s: !l1.buf<@gpu_0, tensor<4xf32>>) {
  l1.drop %s : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.end
}
l1.pipeline @p = @a -> @g -> @b

// -----

// L1.10: a cycle among tensor-graph nodes (the body is a graph region, so it
// can be written; the verifier names it).
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.tensor_graph @g on @gpu_0 compute(%x: tensor<4xf32>) {
  // expected-error @+1 {{[resource] L1.10: tensor graph @g has a cycle: %0 (l1.add) -> %1 (l1.mul) -> %0 (l1.add)}}
  %a = l1.add %x, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %b = l1.mul %a, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  l1.return %a : tensor<4xf32>
}

// -----

// L1.10: a pipeline that revisits a stage.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.stage @a on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>) {
  l1.forward @b(%x) : !l1.buf<@ram_0, tensor<4xf32>>
}
l1.stage @b on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>) {
  l1.drop %x : !l1.buf<@ram_0, tensor<4xf32>>
  l1.end
}
// expected-error @+1 {{[resource] L1.10: pipeline @p has a cycle: @a -> @b -> @a}}
l1.pipeline @p = @a -> @b -> @a

// -----

// L1.10: a cycle among stages through their forwards.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
// expected-error @+1 {{[resource] L1.10: the dataflow among stages and tensor graphs has a cycle: @a -> @b -> @a}}
l1.stage @a on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>) {
  l1.forward @b(%x) : !l1.buf<@ram_0, tensor<4xf32>>
}
l1.stage @b on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>) {
  l1.forward @a(%x) : !l1.buf<@ram_0, tensor<4xf32>>
}

// -----

// L1.10: a loop in a stage's CFG is unbounded execution.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
// expected-error @+1 {{[resource] L1.10: stage @st has a control-flow cycle ^bb1 -> ^bb2 -> ^bb1 (stages are loop-free: a loop is unbounded execution)}}
l1.stage @st on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>) {
  cf.br ^bb1(%x : !l1.buf<@ram_0, tensor<4xf32>>)
^bb1(%b: !l1.buf<@ram_0, tensor<4xf32>>):
  %full = l1.batch_full %b : !l1.buf<@ram_0, tensor<4xf32>>
  cf.cond_br %full, ^bb2(%b : !l1.buf<@ram_0, tensor<4xf32>>), ^bb3(%b : !l1.buf<@ram_0, tensor<4xf32>>)
^bb2(%c: !l1.buf<@ram_0, tensor<4xf32>>):
  cf.br ^bb1(%c : !l1.buf<@ram_0, tensor<4xf32>>)
^bb3(%d: !l1.buf<@ram_0, tensor<4xf32>>):
  l1.drop %d : !l1.buf<@ram_0, tensor<4xf32>>
  l1.end
}
