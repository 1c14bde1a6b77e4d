// L1.4 safety: window separation. A window reader never runs concurrently
// with the actor handlers that write the window: within a step, every
// message that fires a writer follows the reader in the dataflow; across
// steps (pipeline_depth > 1), the actor is listed in the schedule's actors
// and fences step N's handler before step N+1's readers.
// RUN: synpl-opt %s -split-input-file -verify-diagnostics

// L1.4 positive: reader @g -> stage @ret -> message to the writer; at depth 2
// the actor is a fence.
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
  l1.handler @Update(%gw: tensor<4xf32>) {
    %w = l1.state_read @w : tensor<4xf32>
    %n = l1.sub %w, %gw : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    l1.state_write @w, %n : tensor<4xf32>
    l1.return
  }
}
l1.stage @in on @cpu_0 process(%x: !l1.buf<@gpu_0, tensor<4xf32>>) {
  l1.forward @g(%x) : !l1.buf<@gpu_0, tensor<4xf32>>
}
l1.tensor_graph @g on @gpu_0 reads [@m::@win] then @ret compute(%x: tensor<4xf32>) {
  %w = l1.window_read @m::@win[@w] : tensor<4xf32>
  %y = l1.mul %x, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  l1.return %y : tensor<4xf32>
}
l1.stage @ret on @cpu_0 process(%gw: !l1.buf<@gpu_0, tensor<4xf32>>) {
  l1.send @m::@Update(%gw) : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.end
}
l1.pipeline @train = @in -> @g
l1.pipeline @back = @ret
l1.schedule pipelines [@train, @back] actors [@m] pipeline_depth 2

// -----

// L1.4 positive: at pipeline_depth 1 steps do not overlap, so no fence is needed.
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
l1.tensor_graph @g on @gpu_0 reads [@m::@win] then @sink compute(%x: tensor<4xf32>) {
  %w = l1.window_read @m::@win[@w] : tensor<4xf32>
  %y = l1.mul %x, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  l1.return %y : tensor<4xf32>
}
l1.stage @sink on @cpu_0 process(%r0: !l1.buf<@gpu_0, tensor<4xf32>>) {
  l1.drop %r0 : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.end
}
l1.schedule pipelines [] actors [] pipeline_depth 1

// -----

// L1.4: at pipeline_depth 2 without the actor fence.
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
  // expected-note @+1 {{window declared here}}
  l1.window @win [@w] readers [@g]
}
l1.tensor_graph @g on @gpu_0 reads [@m::@win] then @sink compute(%x: tensor<4xf32>) {
  %w = l1.window_read @m::@win[@w] : tensor<4xf32>
  %y = l1.mul %x, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  l1.return %y : tensor<4xf32>
}
l1.stage @sink on @cpu_0 process(%r0: !l1.buf<@gpu_0, tensor<4xf32>>) {
  l1.drop %r0 : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.end
}
// expected-error @+1 {{[safety] L1.4: at pipeline_depth 2, step N+1's readers of window @m::@win may overlap step N's handlers: list actor @m in the schedule's actors}}
l1.schedule pipelines [] actors [] pipeline_depth 2

// -----

// L1.4: the writer is messaged by a stage that does not follow the reader,
// so the update may land while the reader still runs.
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
  // expected-error @+1 {{[safety] L1.4: reader @g of window @m::@win may run concurrently with its writer @m::@Update: stage @side messages the writer but does not follow the reader in the dataflow}}
  l1.window @win [@w] readers [@g]
  l1.handler @Update(%gw: tensor<4xf32>) {
    l1.state_write @w, %gw : tensor<4xf32>
    l1.return
  }
}
// expected-note @+1 {{the reader}}
l1.tensor_graph @g on @gpu_0 reads [@m::@win] compute(%x: tensor<4xf32>) {
  %w = l1.window_read @m::@win[@w] : tensor<4xf32>
  %y = l1.mul %x, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  l1.return %y : tensor<4xf32>
}
// expected-note @+1 {{the message comes from here}}
l1.stage @side on @cpu_0 process(%gw: !l1.buf<@gpu_0, tensor<4xf32>>) {
  l1.send @m::@Update(%gw) : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.end
}

// -----

// L1.4: a graph reading a window that does not list it among its readers.
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
  // expected-note @+1 {{window declared here}}
  l1.window @win [@w] readers []
}
// expected-error @+1 {{[safety] L1.4: @g reads window @m::@win but is not among its readers}}
l1.tensor_graph @g on @gpu_0 reads [@m::@win] compute(%x: tensor<4xf32>) {
  %w = l1.window_read @m::@win[@w] : tensor<4xf32>
  %y = l1.mul %x, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  l1.return %y : tensor<4xf32>
}

// -----

// L1.4: a stage reader whose window copy may race the handler: the writer's
// message does not come after it.
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
  // expected-error @+1 {{[safety] L1.4: reader @snap of window @m::@win may run concurrently with its writer @m::@Set: stage @feed messages the writer but does not follow the reader in the dataflow}}
  l1.window @win [@w] readers [@snap]
  l1.handler @Set(%v: tensor<4xf32>) {
    l1.state_write @w, %v : tensor<4xf32>
    l1.return
  }
}
// expected-note @+1 {{the reader}}
l1.stage @snap on @cpu_0 reads [@m::@win] process() {
  %s = l1.window_copy @m::@win[@w] : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.drop %s : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.end
}
// expected-note @+1 {{the message comes from here}}
l1.stage @feed on @cpu_0 process(%v: !l1.buf<@gpu_0, tensor<4xf32>>) {
  l1.send @m::@Set(%v) : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.end
}

// -----

// L1.4 positive: a stage that snapshots the window, then messages the writer.
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
  l1.window @win [@w] readers [@step]
  l1.handler @Set(%v: tensor<4xf32>) {
    l1.state_write @w, %v : tensor<4xf32>
    l1.return
  }
}
l1.stage @step on @cpu_0 reads [@m::@win] process(%v: !l1.buf<@gpu_0, tensor<4xf32>>) {
  %s = l1.window_copy @m::@win[@w] : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.drop %s : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.send @m::@Set(%v) : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.end
}

// -----

// L1.4: the same stage reading the window after it sent the update.
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
  l1.window @win [@w] readers [@step]
  l1.handler @Set(%v: tensor<4xf32>) {
    l1.state_write @w, %v : tensor<4xf32>
    l1.return
  }
}
l1.stage @step on @cpu_0 reads [@m::@win] process(%v: !l1.buf<@gpu_0, tensor<4xf32>>) {
  // expected-note @+1 {{the message is sent here}}
  l1.send @m::@Set(%v) : !l1.buf<@gpu_0, tensor<4xf32>>
  cf.br ^bb1
^bb1:
  // expected-error @+1 {{[safety] L1.4: stage @step reads window @m::@win after messaging its writer @m::@Set; the handler may already be running}}
  %s = l1.window_copy @m::@win[@w] : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.drop %s : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.end
}
