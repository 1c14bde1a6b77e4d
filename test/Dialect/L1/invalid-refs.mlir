// L1.2 safety: ref resolution. Every symbol reference of the program names
// an op of the right kind.
// RUN: synpl-opt %s -split-input-file -verify-diagnostics

// L1.2 positive: an actor window read by a graph, a stage forwarding to it,
// a pipeline and a schedule, all resolving.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.actor @m on @gpu_0 {
  l1.state @w : tensor<4xf32> init zeros
  l1.window @win [@w] readers [@g]
}
l1.stage @a on @cpu_0 process(%x: !l1.buf<@gpu_0, tensor<4xf32>>) {
  l1.forward @g(%x) : !l1.buf<@gpu_0, tensor<4xf32>>
}
l1.tensor_graph @g on @gpu_0 reads [@m::@win] then @sink compute(%x: tensor<4xf32>) {
  %w = l1.window_read @m::@win[@w] : tensor<4xf32>
  %y = l1.add %x, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  l1.return %y : tensor<4xf32>
}
l1.stage @sink on @cpu_0 process(%r0: !l1.buf<@gpu_0, tensor<4xf32>>) {
  l1.drop %r0 : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.end
}
l1.pipeline @p = @a -> @g -> @sink
l1.schedule pipelines [@p] actors [@m] pipeline_depth 1

// -----

// L1.2: a window reader that does not exist.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.actor @m on @gpu_0 {
  l1.state @w : tensor<4xf32> init zeros
  // expected-error @+1 {{[safety] L1.2: window reader @nobody does not exist}}
  l1.window @win [@w] readers [@nobody]
}

// -----

// L1.2: a window naming a field the actor does not have.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.actor @m on @gpu_0 {
  l1.state @w : tensor<4xf32> init zeros
  // expected-error @+1 {{[safety] L1.2: window @win names @v, which is not a state field of actor @m}}
  l1.window @win [@w, @v] readers []
}

// -----

// L1.2: a forward target that does not exist.
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
  // expected-error @+1 {{[safety] L1.2: forward target @missing does not exist}}
  l1.forward @missing(%x) : !l1.buf<@ram_0, tensor<4xf32>>
}

// -----

// L1.2: a forward to something that is not a stage or tensor graph.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.pipeline @p = @a
l1.stage @a on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>) {
  // expected-error @+1 {{[safety] L1.2: forward target @p is not a stage or tensor graph}}
  l1.forward @p(%x) : !l1.buf<@ram_0, tensor<4xf32>>
}

// -----

// L1.2: a message to a handler that does not exist.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.actor @m on @gpu_0 {
  l1.state @w : tensor<4xf32> init zeros
}
l1.stage @a on @cpu_0 process(%x: !l1.buf<@gpu_0, tensor<4xf32>>) {
  // expected-error @+1 {{[safety] L1.2: message target @m::@Update does not exist}}
  l1.send @m::@Update(%x) : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.end
}

// -----

// L1.2: a dangling window read (the graph's reads name no window).
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
// expected-error @+1 {{[safety] L1.2: reads @m::@win, which is not an actor window}}
l1.tensor_graph @g on @gpu_0 reads [@m::@win] compute(%x: tensor<4xf32>) {
  l1.return %x : tensor<4xf32>
}

// -----

// L1.2: a window read the graph did not declare in its reads.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.actor @m on @gpu_0 {
  l1.state @w : tensor<4xf32> init zeros
  l1.window @win [@w] readers [@g]
}
l1.tensor_graph @g on @gpu_0 then @sink compute(%x: tensor<4xf32>) {
  // expected-error @+1 {{[safety] L1.2: reads window @m::@win, which @g does not list in its reads}}
  %w = l1.window_read @m::@win[@w] : tensor<4xf32>
  %y = l1.add %x, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  l1.return %y : tensor<4xf32>
}
l1.stage @sink on @cpu_0 process(%r0: !l1.buf<@gpu_0, tensor<4xf32>>) {
  l1.drop %r0 : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.end
}

// -----

// L1.2: a window read of a field outside the window.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.actor @m on @gpu_0 {
  l1.state @w : tensor<4xf32> init zeros
  l1.state @v : tensor<4xf32> init zeros
  l1.window @win [@w] readers [@g]
}
l1.tensor_graph @g on @gpu_0 reads [@m::@win] then @sink compute(%x: tensor<4xf32>) {
  // expected-error @+1 {{[safety] L1.2: window @m::@win does not contain field @v}}
  %w = l1.window_read @m::@win[@v] : tensor<4xf32>
  %y = l1.add %x, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  l1.return %y : tensor<4xf32>
}
l1.stage @sink on @cpu_0 process(%r0: !l1.buf<@gpu_0, tensor<4xf32>>) {
  l1.drop %r0 : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.end
}

// -----

// L1.2: a handler writing a field its actor does not have.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.actor @m on @gpu_0 {
  l1.state @w : tensor<4xf32> init zeros
  l1.handler @Set(%v: tensor<4xf32>) {
    // expected-error @+1 {{[safety] L1.2: writes @nope, which is not a state field of actor @m}}
    l1.state_write @nope, %v : tensor<4xf32>
    l1.return
  }
}

// -----

// L1.2: a pipeline element that does not exist.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
// expected-error @+1 {{[safety] L1.2: pipeline element @ghost does not exist}}
l1.pipeline @p = @ghost

// -----

// L1.2: a pipeline link that is not a dataflow edge.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.stage @a on @cpu_0 process() {
  l1.end
}
l1.stage @b on @cpu_0 process() {
  l1.end
}
// expected-error @+1 {{[safety] L1.2: pipeline link @a -> @b is not a dataflow edge (@a does not forward to @b)}}
l1.pipeline @p = @a -> @b

// -----

// L1.2: a schedule naming a pipeline and an actor that do not exist.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
// expected-error @+1 {{[safety] L1.2: schedule names pipeline @train, which does not exist}}
l1.schedule pipelines [@train] actors [] pipeline_depth 1

// -----

l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
// expected-error @+1 {{[safety] L1.2: schedule names actor @model, which does not exist}}
l1.schedule pipelines [] actors [@model] pipeline_depth 1

// -----

// L1.2: placement on a node that does not exist.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
// expected-error @+1 {{[safety] L1.2: actor @m is placed on @gpu_7, which is not a node of the program's l1.system}}
l1.actor @m on @gpu_7 {
}

// -----

// L1.2: a buffer type naming a node that does not exist.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
// expected-error @+1 {{[safety] L1.2: buffer type '!l1.buf<@hbm_3, tensor<4xf32>>' names node @hbm_3, which does not exist}}
l1.stage @a on @cpu_0 process(%x: !l1.buf<@hbm_3, tensor<4xf32>>) {
  l1.drop %x : !l1.buf<@hbm_3, tensor<4xf32>>
  l1.end
}

// -----

// L1.2: a batch read of a field the data source does not have.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.data @d {
  l1.field @f : tensor<4xf32> at @ssd_0 path "/tmp/f" format raw
}
l1.stage @load on @cpu_0 process() {
  // expected-error @+1 {{[safety] L1.2: data source @d has no field @g}}
  %x = l1.read_batch @d [@g] batch 2 sequential : !l1.buf<@ram_0, tensor<2x4xf32>>
  l1.drop %x : !l1.buf<@ram_0, tensor<2x4xf32>>
  l1.end
}

// -----

// L1.2: a stage copying from a window it does not list in its reads.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.actor @m on @gpu_0 {
  l1.state @step : tensor<f32> init zeros
  l1.window @counter [@step] readers [@log]
}
l1.stage @log on @cpu_0 process() {
  // expected-error @+1 {{[safety] L1.2: reads window @m::@counter, which @log does not list in its reads}}
  %s = l1.window_copy @m::@counter[@step] : !l1.buf<@gpu_0, tensor<f32>>
  l1.drop %s : !l1.buf<@gpu_0, tensor<f32>>
  l1.end
}
