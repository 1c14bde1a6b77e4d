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
l1.stage @st on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>) {
  %full = l1.batch_full %x : !l1.buf<@ram_0, tensor<4xf32>>
  cf.cond_br %full, ^bb1, ^bb2
^bb1:
  l1.drop %x : !l1.buf<@ram_0, tensor<4xf32>>
  l1.end
^bb2:
  // expected-error @+1 {{[liveness] L1.7: buffer %arg0 (argument 0 of ^bb0) is live at the end of path ^bb0 -> ^bb2 in stage @st}}
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
l1.stage @st on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>) {
  l1.drop %x : !l1.buf<@ram_0, tensor<4xf32>>
  cf.br ^bb1
^bb1:
  // expected-error @+1 {{[liveness] L1.7: buffer %arg0 (argument 0 of ^bb0) is consumed twice on path ^bb0 -> ^bb1 in stage @st}}
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
l1.stage @st on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>) {
  // expected-error @+1 {{[liveness] L1.7: buffer %arg0 (argument 0 of ^bb0) is consumed twice on path ^bb0 in stage @st}}
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
l1.stage @st on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<f32>>) {
  %g = l1.transfer %x : !l1.buf<@ram_0, tensor<f32>> -> !l1.buf<@gpu_0, tensor<f32>>
  // expected-error @+1 {{[liveness] L1.7: buffer %arg0 (argument 0 of ^bb0) is used after it was consumed on path ^bb0 in stage @st}}
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
l1.stage @st on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>) {
  %full = l1.batch_full %x : !l1.buf<@ram_0, tensor<4xf32>>
  cf.cond_br %full, ^bb1(%x : !l1.buf<@ram_0, tensor<4xf32>>), ^bb2(%x : !l1.buf<@ram_0, tensor<4xf32>>)
^bb1(%a: !l1.buf<@ram_0, tensor<4xf32>>):
  l1.drop %a : !l1.buf<@ram_0, tensor<4xf32>>
  cf.br ^bb3
^bb2(%b: !l1.buf<@ram_0, tensor<4xf32>>):
  cf.br ^bb3
^bb3:
  // expected-error @+1 {{[liveness] L1.7: buffer %2 (argument 0 of ^bb2) is live at the end of path ^bb0 -> ^bb2 -> ^bb3 in stage @st}}
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

// -----

// L1.7 positive: 13 branches in a row are 8192 paths; states that rejoin are
// walked once, so the check stays linear.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.stage @many on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>) {
  %c = l1.batch_full %x : !l1.buf<@ram_0, tensor<4xf32>>
  cf.br ^d0
^d0:
  cf.cond_br %c, ^l0, ^r0
^l0:
  cf.br ^d1
^r0:
  cf.br ^d1
^d1:
  cf.cond_br %c, ^l1, ^r1
^l1:
  cf.br ^d2
^r1:
  cf.br ^d2
^d2:
  cf.cond_br %c, ^l2, ^r2
^l2:
  cf.br ^d3
^r2:
  cf.br ^d3
^d3:
  cf.cond_br %c, ^l3, ^r3
^l3:
  cf.br ^d4
^r3:
  cf.br ^d4
^d4:
  cf.cond_br %c, ^l4, ^r4
^l4:
  cf.br ^d5
^r4:
  cf.br ^d5
^d5:
  cf.cond_br %c, ^l5, ^r5
^l5:
  cf.br ^d6
^r5:
  cf.br ^d6
^d6:
  cf.cond_br %c, ^l6, ^r6
^l6:
  cf.br ^d7
^r6:
  cf.br ^d7
^d7:
  cf.cond_br %c, ^l7, ^r7
^l7:
  cf.br ^d8
^r7:
  cf.br ^d8
^d8:
  cf.cond_br %c, ^l8, ^r8
^l8:
  cf.br ^d9
^r8:
  cf.br ^d9
^d9:
  cf.cond_br %c, ^l9, ^r9
^l9:
  cf.br ^d10
^r9:
  cf.br ^d10
^d10:
  cf.cond_br %c, ^l10, ^r10
^l10:
  cf.br ^d11
^r10:
  cf.br ^d11
^d11:
  cf.cond_br %c, ^l11, ^r11
^l11:
  cf.br ^d12
^r11:
  cf.br ^d12
^d12:
  cf.cond_br %c, ^l12, ^r12
^l12:
  cf.br ^d13
^r12:
  cf.br ^d13
^d13:
  l1.drop %x : !l1.buf<@ram_0, tensor<4xf32>>
  l1.end
}
