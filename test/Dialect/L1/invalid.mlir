// Structural errors that are not verification rows: the closed forms of the
// dialect. Bad input gets a located error, never a crash.
// RUN: synpl-opt %s -split-input-file -verify-diagnostics

l1.system @s {
  // expected-error @+1 {{unknown node property 'capcity' (known: capacity, isa, vram, cores, sm, arch)}}
  l1.node @ram_0 memory {capcity = "32GB"}
}

// -----

l1.system @s {
  // expected-error @+1 {{arch 'ampere' is not a CUDA architecture name like sm_90 or sm_90a}}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB", arch = "ampere"}
}

// -----

l1.system @s {
  // expected-error @+1 {{'arch' names a GPU architecture; it belongs on an isa = "cuda" node}}
  l1.node @cpu_0 compute {isa = "x86_64", arch = "sm_90"}
}

// -----

// A GPU node names its architecture.
l1.system @s {
  l1.node @gpu_0 compute {isa = "cuda", vram = "141GB", sm = 132, arch = "sm_90"}
}

// -----

l1.system @s {
  // expected-error @+1 {{a memory node needs a capacity}}
  l1.node @ram_0 memory
}

// -----

l1.system @s {
  // expected-error @+1 {{capacity '32 gigs' is not a byte size like 32GB}}
  l1.node @ram_0 memory {capacity = "32 gigs"}
}

// -----

l1.system @s {
  // expected-error @+1 {{a compute node needs an isa}}
  l1.node @gpu_0 compute {vram = "24GB"}
}

// -----

// expected-note @+1 {{the first one is here}}
l1.system @s {
}
// expected-error @+1 {{a program has one l1.system}}
l1.system @t {
}

// -----

// expected-error @+1 {{receives buffers (!l1.buf<...>), got 'tensor<4xf32>' for argument #0}}
l1.stage @s on @cpu_0 process(%x: tensor<4xf32>) {
  l1.end
}

// -----

l1.tensor_graph @g on @gpu_0 compute(%x: tensor<4xf32>) {
  // expected-error @+1 {{'l1.drop' op expects parent op 'l1.stage'}}
  l1.drop %x : tensor<4xf32>
  l1.return %x : tensor<4xf32>
}

// -----

l1.actor @m on @gpu_0 {
  l1.state @w : tensor<4xf32> init zeros
  l1.handler @Set(%v: tensor<4xf32>) {
    l1.state_write @w, %v : tensor<4xf32>
    // expected-error @+1 {{returns nothing (handlers write state)}}
    l1.return %v : tensor<4xf32>
  }
}

// -----

l1.tensor_graph @g on @gpu_0 compute(%x: tensor<4xf32>) {
  // expected-error @+1 {{'l1.state_write' op expects parent op 'l1.handler'}}
  l1.state_write @w, %x : tensor<4xf32>
  l1.return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{buffer tensors have a static shape}}
l1.stage @s on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<?xf32>>) {
  l1.end
}

// -----

l1.stage @s on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>) {
  // expected-error @+1 {{transfers to another node; source and result are on @ram_0}}
  %y = l1.transfer %x : !l1.buf<@ram_0, tensor<4xf32>> -> !l1.buf<@ram_0, tensor<4xf32>>
  l1.drop %y : !l1.buf<@ram_0, tensor<4xf32>>
  l1.end
}

// -----

// expected-error @+1 {{expected attribute value}}
l1.pipeline @p = @a -> -> @b

// -----

// expected-error @+1 {{'l1.stage' op needs a body}}
"l1.stage"() <{sym_name = "s", node = @cpu_0}> ({}) : () -> ()

// -----

"l1.tensor_graph"() <{sym_name = "g", node = @gpu_0}> ({
^bb0(%x: tensor<4xf32>):
  // expected-error @+1 {{block with no terminator}}
  %0 = "l1.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
}) : () -> ()

// -----

l1.tensor_graph @g on @gpu_0 compute(%x: tensor<4xf32>) {
  // expected-error @+1 {{'l1.state_read' op expects parent op 'l1.handler'}}
  %w = l1.state_read @w : tensor<4xf32>
  l1.return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{'l1.handler' op expects parent op 'l1.actor'}}
l1.handler @h() {
  l1.return
}

// -----

l1.system @s {
  // expected-error @+1 {{node property 'cores' is an integer, got "8"}}
  l1.node @cpu_0 compute {isa = "x86_64", cores = "8"}
}

// -----

l1.system @s {
  // expected-error @+1 {{node kind is storage, memory or compute, got 'disk'}}
  l1.node @ssd_0 disk
}
