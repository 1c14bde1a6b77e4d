// L1.3 safety: forwarding signatures, and L1.6 consistency: region
// provenance. Every forward, message and `then` edge matches its target's
// entry signature, and its buffers live where the target expects them.
// RUN: synpl-opt %s -split-input-file -verify-diagnostics

// L1.3 / L1.6 positive: a stage forwards GPU buffers to a graph on the GPU,
// the graph's results go to a stage, which messages an actor on the GPU.
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
    l1.state_write @w, %v : tensor<4xf32>
    l1.return
  }
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
l1.stage @b on @cpu_0 process(%s: !l1.buf<@gpu_0, tensor<4xf32>>) {
  l1.send @m::@Set(%s) : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.end
}

// -----

// L1.3: forwarding 2 buffers to a stage that takes 3.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.stage @a on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>, %y: !l1.buf<@ram_0, tensor<4xf32>>) {
  // expected-error @+1 {{[safety] L1.3: forwards 2 buffers to stage @b, which takes 3}}
  l1.forward @b(%x, %y) : !l1.buf<@ram_0, tensor<4xf32>>, !l1.buf<@ram_0, tensor<4xf32>>
}
// expected-note @+1 {{stage @b is declared here}}
l1.stage @b on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>, %y: !l1.buf<@ram_0, tensor<4xf32>>, %z: !l1.buf<@ram_0, tensor<4xf32>>) {
  l1.drop %x : !l1.buf<@ram_0, tensor<4xf32>>
  l1.drop %y : !l1.buf<@ram_0, tensor<4xf32>>
  l1.drop %z : !l1.buf<@ram_0, tensor<4xf32>>
  l1.end
}

// -----

// L1.3: a type mismatch at a forward.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.stage @a on @cpu_0 process(%x: !l1.buf<@gpu_0, tensor<128x784xf32>>) {
  // expected-error @+1 {{[safety] L1.3: forwards 'tensor<128x784xf32>' as argument #0 of tensor graph @g, which takes 'tensor<128x10xf32>'}}
  l1.forward @g(%x) : !l1.buf<@gpu_0, tensor<128x784xf32>>
}
// expected-note @+1 {{tensor graph @g is declared here}}
l1.tensor_graph @g on @gpu_0 then @sink compute(%x: tensor<128x10xf32>) {
  l1.return %x : tensor<128x10xf32>
}
l1.stage @sink on @cpu_0 process(%r0: !l1.buf<@gpu_0, tensor<128x10xf32>>) {
  l1.drop %r0 : !l1.buf<@gpu_0, tensor<128x10xf32>>
  l1.end
}

// -----

// L1.3: a message with the wrong arity for the handler.
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
  // expected-note @+1 {{handler @m::@Set is declared here}}
  l1.handler @Set(%v: tensor<4xf32>) {
    l1.state_write @w, %v : tensor<4xf32>
    l1.return
  }
}
l1.stage @b on @cpu_0 process(%s: !l1.buf<@gpu_0, tensor<4xf32>>, %t: !l1.buf<@gpu_0, tensor<4xf32>>) {
  // expected-error @+1 {{[safety] L1.3: sends 2 buffers to handler @m::@Set, which takes 1}}
  l1.send @m::@Set(%s, %t) : !l1.buf<@gpu_0, tensor<4xf32>>, !l1.buf<@gpu_0, tensor<4xf32>>
  l1.end
}

// -----

// L1.3: a tensor graph's results do not fit the stage it forwards them to.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
// expected-error @+1 {{[safety] L1.3: forwards its results as 1 buffer to stage @b, which takes 2}}
l1.tensor_graph @g on @gpu_0 then @b compute(%x: tensor<4xf32>) {
  l1.return %x : tensor<4xf32>
}
// expected-note @+1 {{stage @b is declared here}}
l1.stage @b on @cpu_0 process(%s: !l1.buf<@gpu_0, tensor<4xf32>>, %t: !l1.buf<@gpu_0, tensor<4xf32>>) {
  l1.drop %s : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.drop %t : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.end
}

// -----

// L1.6: a buf<ram_0> forwarded into a tensor graph placed on gpu_0.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.stage @a on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<128x784xf32>>) {
  // expected-error @+1 {{[consistency] L1.6: buffer #0 lives on @ram_0 but tensor graph @g (on @gpu_0) takes it on @gpu_0}}
  l1.forward @g(%x) : !l1.buf<@ram_0, tensor<128x784xf32>>
}
// expected-note @+1 {{tensor graph @g is declared here}}
l1.tensor_graph @g on @gpu_0 then @sink compute(%x: tensor<128x784xf32>) {
  l1.return %x : tensor<128x784xf32>
}
l1.stage @sink on @cpu_0 process(%r0: !l1.buf<@gpu_0, tensor<128x784xf32>>) {
  l1.drop %r0 : !l1.buf<@gpu_0, tensor<128x784xf32>>
  l1.end
}

// -----

// L1.6: a stage forwarding a buffer where the next stage does not expect it.
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
  // expected-error @+1 {{[consistency] L1.6: buffer #0 lives on @gpu_0 but stage @b (on @cpu_0) takes it on @ram_0}}
  l1.forward @b(%x) : !l1.buf<@gpu_0, tensor<4xf32>>
}
// expected-note @+1 {{stage @b is declared here}}
l1.stage @b on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>) {
  l1.drop %x : !l1.buf<@ram_0, tensor<4xf32>>
  l1.end
}

// -----

// L1.6: a message whose buffer is not on the actor's node.
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
  // expected-note @+1 {{handler @m::@Set is declared here}}
  l1.handler @Set(%v: tensor<4xf32>) {
    l1.state_write @w, %v : tensor<4xf32>
    l1.return
  }
}
l1.stage @b on @cpu_0 process(%s: !l1.buf<@ram_0, tensor<4xf32>>) {
  // expected-error @+1 {{[consistency] L1.6: buffer #0 lives on @ram_0 but handler @m::@Set (on @gpu_0) takes it on @gpu_0}}
  l1.send @m::@Set(%s) : !l1.buf<@ram_0, tensor<4xf32>>
  l1.end
}

// -----

// L1.6 positive: a stage copies actor state where the actor keeps it, then
// moves the copy to host memory.
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
l1.stage @log on @cpu_0 reads [@m::@counter] process() {
  %s = l1.window_copy @m::@counter[@step] : !l1.buf<@gpu_0, tensor<f32>>
  %h = l1.transfer %s : !l1.buf<@gpu_0, tensor<f32>> -> !l1.buf<@ram_0, tensor<f32>>
  l1.report "step", %h : !l1.buf<@ram_0, tensor<f32>>
  l1.drop %h : !l1.buf<@ram_0, tensor<f32>>
  l1.end
}

// -----

// L1.6: a window copy claiming to land on another node than the actor's.
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
l1.stage @log on @cpu_0 reads [@m::@counter] process() {
  // expected-error @+1 {{[consistency] L1.6: the copy of @step is made where actor @m keeps it, on @gpu_0, not on @ram_0}}
  %s = l1.window_copy @m::@counter[@step] : !l1.buf<@ram_0, tensor<f32>>
  l1.drop %s : !l1.buf<@ram_0, tensor<f32>>
  l1.end
}
