// L1.7 liveness: buffer conservation. Every CFG path of a stage consumes
// every buffer it receives or creates exactly once (forward, send, transfer,
// drop); the diagnostic names the path and the buffer.
// RUN: synpl-opt %s -split-input-file -verify-diagnostics

// L1.7 positive: a diamond where both paths consume the batch; one hands it
// on through a block argument, the other drops it.
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
  %x = l1.read_batch @d [@f] batch 2 sequential : !l1.buf<@ram_0, tensor<2x4xf32>>
  %full = l1.batch_full %x : !l1.buf<@ram_0, tensor<2x4xf32>>
  cf.cond_br %full, ^use(%x : !l1.buf<@ram_0, tensor<2x4xf32>>), ^skip
^use(%b: !l1.buf<@ram_0, tensor<2x4xf32>>):
  %g = l1.transfer %b : !l1.buf<@ram_0, tensor<2x4xf32>> -> !l1.buf<@gpu_0, tensor<2x4xf32>>
  l1.forward @sink(%g) : !l1.buf<@gpu_0, tensor<2x4xf32>>
^skip:
  l1.drop %x : !l1.buf<@ram_0, tensor<2x4xf32>>
  cf.br ^done
^done:
  l1.end
}
l1.stage @sink on @cpu_0 process(%g: !l1.buf<@gpu_0, tensor<2x4xf32>>) {
  l1.drop %g : !l1.buf<@gpu_0, tensor<2x4xf32>>
  l1.end
}

// -----

// L1.7: a path that neither forwards nor drops a received buffer.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.stage @s on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>) {
  %full = l1.batch_full %x : !l1.buf<@ram_0, tensor<4xf32>>
  cf.cond_br %full, ^bb1, ^bb2
^bb1:
  l1.drop %x : !l1.buf<@ram_0, tensor<4xf32>>
  l1.end
^bb2:
  // expected-error @+1 {{[liveness] L1.7: buffer %arg0 (argument 0 of ^bb0) is live at the end of path ^bb0 -> ^bb2 in stage @s}}
  l1.end
}

// -----

// L1.7: a created buffer left live on the only path; the note points at its
// creation.
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
  // expected-note @+1 {{%f is created here}}
  %x = l1.read_batch @d [@f] batch 2 sequential : !l1.buf<@ram_0, tensor<2x4xf32>>
  cf.br ^bb1
^bb1:
  // expected-error @+1 {{[liveness] L1.7: buffer %f (from l1.read_batch) is live at the end of path ^bb0 -> ^bb1 in stage @load}}
  l1.end
}

// -----

// L1.7: a buffer consumed twice on one path.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.stage @s on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>) {
  l1.drop %x : !l1.buf<@ram_0, tensor<4xf32>>
  cf.br ^bb1
^bb1:
  // expected-error @+1 {{[liveness] L1.7: buffer %arg0 (argument 0 of ^bb0) is consumed twice on path ^bb0 -> ^bb1 in stage @s}}
  l1.drop %x : !l1.buf<@ram_0, tensor<4xf32>>
  l1.end
}

// -----

// L1.7: a buffer handed twice to the same successor.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.stage @s on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>) {
  // expected-error @+1 {{[liveness] L1.7: buffer %arg0 (argument 0 of ^bb0) is consumed twice on path ^bb0 in stage @s}}
  cf.br ^bb1(%x, %x : !l1.buf<@ram_0, tensor<4xf32>>, !l1.buf<@ram_0, tensor<4xf32>>)
^bb1(%a: !l1.buf<@ram_0, tensor<4xf32>>, %b: !l1.buf<@ram_0, tensor<4xf32>>):
  l1.drop %a : !l1.buf<@ram_0, tensor<4xf32>>
  l1.drop %b : !l1.buf<@ram_0, tensor<4xf32>>
  l1.end
}

// -----

// L1.7: a buffer used after a transfer consumed it.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.stage @s on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<f32>>) {
  %g = l1.transfer %x : !l1.buf<@ram_0, tensor<f32>> -> !l1.buf<@gpu_0, tensor<f32>>
  // expected-error @+1 {{[liveness] L1.7: buffer %arg0 (argument 0 of ^bb0) is used after it was consumed on path ^bb0 in stage @s}}
  l1.report "loss", %x : !l1.buf<@ram_0, tensor<f32>>
  l1.drop %g : !l1.buf<@gpu_0, tensor<f32>>
  l1.end
}

// -----

// L1.7: the live set is tracked per path: only the path through ^bb2 leaks
// the block argument it received.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.stage @s on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>) {
  %full = l1.batch_full %x : !l1.buf<@ram_0, tensor<4xf32>>
  cf.cond_br %full, ^bb1(%x : !l1.buf<@ram_0, tensor<4xf32>>), ^bb2(%x : !l1.buf<@ram_0, tensor<4xf32>>)
^bb1(%a: !l1.buf<@ram_0, tensor<4xf32>>):
  l1.drop %a : !l1.buf<@ram_0, tensor<4xf32>>
  cf.br ^bb3
^bb2(%b: !l1.buf<@ram_0, tensor<4xf32>>):
  cf.br ^bb3
^bb3:
  // expected-error @+1 {{[liveness] L1.7: buffer %2 (argument 0 of ^bb2) is live at the end of path ^bb0 -> ^bb2 -> ^bb3 in stage @s}}
  l1.end
}

// -----

// L1.7: one forward naming the same buffer twice.
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
  // expected-error @+1 {{[liveness] L1.7: buffer %arg0 (argument 0 of ^bb0) is consumed twice on path ^bb0 in stage @a}}
  l1.forward @b(%x, %x) : !l1.buf<@ram_0, tensor<4xf32>>, !l1.buf<@ram_0, tensor<4xf32>>
}
l1.stage @b on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>, %y: !l1.buf<@ram_0, tensor<4xf32>>) {
  l1.drop %x : !l1.buf<@ram_0, tensor<4xf32>>
  l1.drop %y : !l1.buf<@ram_0, tensor<4xf32>>
  l1.end
}
