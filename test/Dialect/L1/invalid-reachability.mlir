// L1.8 liveness: tensor reachability. Every value of a tensor graph (and of
// an actor handler), and every input, is consumed or returned.
// RUN: synpl-opt %s -split-input-file -verify-diagnostics

// L1.8 positive: every value flows to the result.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.tensor_graph @g on @gpu_0 then @sink compute(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  %s = l1.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %e = l1.exp %s : tensor<4xf32> -> tensor<4xf32>
  l1.return %e : tensor<4xf32>
}
l1.stage @sink on @cpu_0 process(%r0: !l1.buf<@gpu_0, tensor<4xf32>>) {
  l1.drop %r0 : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.end
}

// -----

// L1.8: a value neither consumed nor returned.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.tensor_graph @g on @gpu_0 compute(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  %s = l1.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  // expected-error @+1 {{[liveness] L1.8: value %1 of l1.mul in tensor graph @g is neither consumed nor returned}}
  %dead = l1.mul %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  l1.return %s : tensor<4xf32>
}

// -----

// L1.8: an input the graph never reads.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
// expected-error @+1 {{[liveness] L1.8: tensor graph @g argument %arg1 (#1) is never consumed}}
l1.tensor_graph @g on @gpu_0 compute(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  l1.return %a : tensor<4xf32>
}

// -----

// L1.8: a dead value in an actor handler.
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
    // expected-error @+1 {{[liveness] L1.8: value %0 of l1.const in handler @Set is neither consumed nor returned}}
    %c = l1.const 2.0 : tensor<f32>
    l1.state_write @w, %v : tensor<4xf32>
    l1.return
  }
}

// -----

// L1.8: a tensor graph whose results go nowhere.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
// expected-error @+1 {{[liveness] L1.8: tensor graph @g returns 1 value(s) but forwards them nowhere (name the consumer with `then`)}}
l1.tensor_graph @g on @gpu_0 compute(%a: tensor<4xf32>) {
  %e = l1.exp %a : tensor<4xf32> -> tensor<4xf32>
  l1.return %e : tensor<4xf32>
}
