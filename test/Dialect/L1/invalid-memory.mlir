// L1.9 resource: persistent memory bounded. The state of all actors placed
// on a node fits the node's memory (vram / capacity; a compute node without
// its own memory uses the memory nodes it has edges to).
// RUN: synpl-opt %s -split-input-file -verify-diagnostics

// L1.9 positive: 784x256 f32 weights (802816 bytes) in 24GB of vram.
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
  l1.state @w : tensor<784x256xf32> init kaiming
}

// -----

// L1.9: two actors on one 1MB device, 1.6MB of state between them.
l1.system @s {
  l1.node @gpu_0 compute {isa = "cuda", vram = "1MB"}
}
// expected-note @+2 {{actor @a holds 802.8 KB (802816 bytes)}}
// expected-error @+1 {{[resource] L1.9: actor state on @gpu_0 is 1.6 MB (1605632 bytes), more than its vram of 1.0 MB (1000000 bytes)}}
l1.actor @a on @gpu_0 {
  l1.state @w : tensor<784x256xf32> init kaiming
}
// expected-note @+1 {{actor @b holds 802.8 KB (802816 bytes)}}
l1.actor @b on @gpu_0 {
  l1.state @w : tensor<784x256xf32> init kaiming
}

// -----

// L1.9: an actor on a CPU keeps its state in the memory the CPU reaches.
l1.system @s {
  l1.node @ram_0 memory {capacity = "64KB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
// expected-error @+2 {{[resource] L1.9: actor state on @cpu_0 is 65.5 KB (65540 bytes), more than its connected memory of 64.0 KB (64000 bytes)}}
// expected-note @+1 {{actor @a holds}}
l1.actor @a on @cpu_0 {
  l1.state @t : tensor<16385xf32> init zeros
}
