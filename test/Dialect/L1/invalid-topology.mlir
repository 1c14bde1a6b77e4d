// L1.1 safety: topology consistency. Edges name existing nodes of fitting
// kinds; transfers, reads and forwards follow a path of edges; work runs on
// compute nodes, data rests on storage, buffers live where there is memory.
// RUN: synpl-opt %s -split-input-file -verify-diagnostics

// L1.1 positive: the single-GPU system; a transfer along ram_0 -> cpu_0 -> gpu_0.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.stage @to_gpu on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>) {
  %g = l1.transfer %x : !l1.buf<@ram_0, tensor<4xf32>> -> !l1.buf<@gpu_0, tensor<4xf32>>
  l1.drop %g : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.end
}

// -----

// L1.1: an edge naming a node that does not exist.
l1.system @s {
  l1.node @ssd_0 storage
  // expected-error @+1 {{[safety] L1.1: edge names node @ram_9, which system @s does not have}}
  l1.edge @ssd_0 -> @ram_9 bandwidth "2GB/s"
}

// -----

// L1.1: an edge from a node to itself.
l1.system @s {
  l1.node @ram_0 memory {capacity = "32GB"}
  // expected-error @+1 {{[safety] L1.1: edge connects node @ram_0 to itself}}
  l1.edge @ram_0 <-> @ram_0 bandwidth "2GB/s"
}

// -----

// L1.1: endpoints of the wrong kinds (disk to disk).
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ssd_1 storage
  // expected-error @+1 {{[safety] L1.1: edge connects two storage nodes (@ssd_0, @ssd_1)}}
  l1.edge @ssd_0 -> @ssd_1 bandwidth "2GB/s"
}

// -----

// L1.1: a bandwidth that is not a rate.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  // expected-error @+1 {{[safety] L1.1: bandwidth '2GB' is not a rate like 2GB/s}}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB"
}

// -----

// L1.1: a latency that is not a duration.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  // expected-error @+1 {{[safety] L1.1: latency '2' is not a duration like 2us}}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s" latency "2"
}

// -----

// L1.1: a transfer between nodes with no path of edges (gpu_0 is unconnected).
l1.system @s {
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.stage @to_gpu on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>) {
  // expected-error @+1 {{[safety] L1.1: transfer: no path of edges from @ram_0 to @gpu_0 in system @s}}
  %g = l1.transfer %x : !l1.buf<@ram_0, tensor<4xf32>> -> !l1.buf<@gpu_0, tensor<4xf32>>
  l1.drop %g : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.end
}

// -----

// L1.1: a one-way edge does not carry bytes back.
l1.system @s {
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 -> @gpu_0 bandwidth "32GB/s"
}
l1.stage @to_host on @cpu_0 process(%x: !l1.buf<@gpu_0, tensor<4xf32>>) {
  // expected-error @+1 {{[safety] L1.1: transfer: no path of edges from @gpu_0 to @ram_0}}
  %h = l1.transfer %x : !l1.buf<@gpu_0, tensor<4xf32>> -> !l1.buf<@ram_0, tensor<4xf32>>
  l1.drop %h : !l1.buf<@ram_0, tensor<4xf32>>
  l1.end
}

// -----

// L1.1: a forward between stages on nodes with no path between them.
l1.system @s {
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @cpu_1 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.stage @a on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>) {
  // expected-error @+1 {{[safety] L1.1: forwards to stage @b: no path of edges from @cpu_0 to @cpu_1}}
  l1.forward @b(%x) : !l1.buf<@ram_0, tensor<4xf32>>
}
l1.stage @b on @cpu_1 process(%x: !l1.buf<@ram_0, tensor<4xf32>>) {
  l1.drop %x : !l1.buf<@ram_0, tensor<4xf32>>
  l1.end
}

// -----

// L1.1: data rests on storage nodes.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.data @mnist {
  // expected-error @+1 {{[safety] L1.1: field @images is stored at @ram_0, a memory node; data rests on storage nodes}}
  l1.field @images : tensor<28x28xui8> at @ram_0 path "/tmp/images" format idx
}

// -----

// L1.1: a batch read into memory that the storage node does not reach.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.data @d {
  l1.field @f : tensor<4xf32> at @ssd_0 path "/tmp/f" format raw
}
l1.stage @load on @cpu_0 process() {
  // expected-error @+1 {{[safety] L1.1: read of field f: no path of edges from @ssd_0 to @ram_0}}
  %x = l1.read_batch @d [@f] batch 2 sequential : !l1.buf<@ram_0, tensor<2x4xf32>>
  l1.drop %x : !l1.buf<@ram_0, tensor<2x4xf32>>
  l1.end
}

// -----

// L1.1: work runs on compute nodes.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
// expected-error @+1 {{[safety] L1.1: stage @s1 is placed on @ram_0, a memory node; work runs on compute nodes}}
l1.stage @s1 on @ram_0 process() {
  l1.end
}

// -----

// L1.1: a buffer on a compute node without memory of its own.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
// expected-error @+1 {{[safety] L1.1: buffer type '!l1.buf<@cpu_0, tensor<4xf32>>' lives on @cpu_0, a compute node without memory}}
l1.stage @s1 on @cpu_0 process(%x: !l1.buf<@cpu_0, tensor<4xf32>>) {
  l1.drop %x : !l1.buf<@cpu_0, tensor<4xf32>>
  l1.end
}

// -----

// L1.1: a tensor graph's results cannot reach the stage they go to.
l1.system @s {
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_1 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
// expected-error @+1 {{[safety] L1.1: forwards results to stage @b: no path of edges from @gpu_1 to @cpu_0}}
l1.tensor_graph @g on @gpu_1 then @b compute(%x: tensor<4xf32>) {
  l1.return %x : tensor<4xf32>
}
l1.stage @b on @cpu_0 process(%x: !l1.buf<@gpu_1, tensor<4xf32>>) {
  l1.drop %x : !l1.buf<@gpu_1, tensor<4xf32>>
  l1.end
}
