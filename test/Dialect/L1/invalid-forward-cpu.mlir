// L1.6 consistency (region provenance) on a compute node without memory of
// its own (no vram): its tensor graphs and actors take and return buffers in
// a memory node it has an edge to, where its stages keep them.
// RUN: synpl-opt %s -split-input-file -verify-diagnostics

// L1.6 positive: a batch read into ram_0 goes straight into a graph on cpu_0
// (no transfer); its results come back in ram_0; the stage messages an actor
// on cpu_0 with them and copies its state, both in ram_0.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.data @d {
  l1.field @x : tensor<4xf32> at @ssd_0 path "/tmp/x" format idx
}
l1.actor @a on @cpu_0 {
  l1.state @w : tensor<4xf32> init zeros
  l1.window @win [@w] readers [@g, @host]
  l1.handler @Set(%v: tensor<4xf32>) {
    l1.state_write @w, %v : tensor<4xf32>
    l1.return
  }
}
l1.stage @load on @cpu_0 process() {
  %x = l1.read_batch @d [@x] batch 2 shuffle seed 0 : !l1.buf<@ram_0, tensor<2x4xf32>>
  l1.forward @g(%x) : !l1.buf<@ram_0, tensor<2x4xf32>>
}
l1.tensor_graph @g on @cpu_0 reads [@a::@win] then @host compute(%x: tensor<2x4xf32>) {
  %w = l1.window_read @a::@win[@w] : tensor<4xf32>
  %s = l1.reduce_sum %x axis 0 : tensor<2x4xf32> -> tensor<4xf32>
  %r = l1.add %s, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  l1.return %r : tensor<4xf32>
}
l1.stage @host on @cpu_0 reads [@a::@win] process(%r: !l1.buf<@ram_0, tensor<4xf32>>) {
  %w = l1.window_copy @a::@win[@w] : !l1.buf<@ram_0, tensor<4xf32>>
  l1.report "w", %w : !l1.buf<@ram_0, tensor<4xf32>>
  l1.drop %w : !l1.buf<@ram_0, tensor<4xf32>>
  l1.send @a::@Set(%r) : !l1.buf<@ram_0, tensor<4xf32>>
  l1.end
}
l1.pipeline @train = @load -> @g
l1.pipeline @ret = @host
l1.schedule pipelines [@train, @ret] actors [@a] pipeline_depth 2

// -----

// L1.6: a memory node the CPU has no edge to is not its memory (ram_1
// reaches cpu_0 only through ssd_0 and ram_0).
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @ram_1 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_1 -> @ssd_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.stage @a on @cpu_0 process(%x: !l1.buf<@ram_1, tensor<4xf32>>) {
  // expected-error @+1 {{[consistency] L1.6: buffer #0 lives on @ram_1 but tensor graph @g (on @cpu_0) takes it on @cpu_0}}
  l1.forward @g(%x) : !l1.buf<@ram_1, tensor<4xf32>>
}
// expected-note @+1 {{tensor graph @g is declared here}}
l1.tensor_graph @g on @cpu_0 then @sink compute(%x: tensor<4xf32>) {
  l1.return %x : tensor<4xf32>
}
l1.stage @sink on @cpu_0 process(%r: !l1.buf<@ram_0, tensor<4xf32>>) {
  l1.drop %r : !l1.buf<@ram_0, tensor<4xf32>>
  l1.end
}

// -----

// L1.6: a compute node with vram keeps its own buffers: ram_0, though it has
// an edge to gpu_0, is not gpu_0's memory.
l1.system @s {
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @ram_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.stage @a on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>) {
  // expected-error @+1 {{[consistency] L1.6: buffer #0 lives on @ram_0 but tensor graph @g (on @gpu_0) takes it on @gpu_0}}
  l1.forward @g(%x) : !l1.buf<@ram_0, tensor<4xf32>>
}
// expected-note @+1 {{tensor graph @g is declared here}}
l1.tensor_graph @g on @gpu_0 then @sink compute(%x: tensor<4xf32>) {
  l1.return %x : tensor<4xf32>
}
l1.stage @sink on @cpu_0 process(%r: !l1.buf<@gpu_0, tensor<4xf32>>) {
  l1.drop %r : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.end
}

// -----

// L1.6: a graph on a memory-less CPU delivers its results in the CPU's
// memory, not in another node's.
l1.system @s {
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
// expected-error @+1 {{[consistency] L1.6: buffer #0 lives on @cpu_0 but stage @sink (on @cpu_0) takes it on @gpu_0}}
l1.tensor_graph @g on @cpu_0 then @sink compute(%x: tensor<4xf32>) {
  l1.return %x : tensor<4xf32>
}
// expected-note @+1 {{stage @sink is declared here}}
l1.stage @sink on @cpu_0 process(%r: !l1.buf<@gpu_0, tensor<4xf32>>) {
  l1.drop %r : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.end
}

// -----

// L1.6: a window copy of state kept by a memory-less CPU lands in a memory
// node the CPU has an edge to, not elsewhere.
l1.system @s {
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @ram_1 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @cpu_1 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @ram_1 <-> @cpu_1 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @cpu_1 bandwidth "10GB/s"
}
l1.actor @m on @cpu_0 {
  l1.state @step : tensor<f32> init zeros
  l1.window @counter [@step] readers [@log]
}
l1.stage @log on @cpu_1 reads [@m::@counter] process() {
  // expected-error @+1 {{[consistency] L1.6: the copy of @step is made where actor @m keeps it, on @cpu_0, not on @ram_1}}
  %s = l1.window_copy @m::@counter[@step] : !l1.buf<@ram_1, tensor<f32>>
  l1.drop %s : !l1.buf<@ram_1, tensor<f32>>
  l1.end
}
