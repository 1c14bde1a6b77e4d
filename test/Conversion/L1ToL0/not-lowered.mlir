// --synpl-l1-to-l0 converts everything or fails, naming the first op it
// cannot lower, how many it could, and why; it never leaves a partial plan.
// RUN: synpl-opt %s -split-input-file --synpl-l1-to-l0 -verify-diagnostics
// RUN: not synpl-opt %s -split-input-file --synpl-l1-to-l0 2>&1 | FileCheck %s

// An op with no UOp lowering (integer division).
// CHECK: error: lowered 2 of 3 ops; not lowered: l1.div at {{.*}}not-lowered.mlir:{{[0-9]+}}:{{[0-9]+}}: needs a float element type
// CHECK-NOT: l0uop.plan
l1.system @sys {
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "1GB"}
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.tensor_graph @g on @gpu_0 then @sink compute(%x: tensor<4xi32>, %y: tensor<4xi32>) {
  %a = l1.add %x, %y : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  // expected-error @+1 {{lowered 2 of 3 ops; not lowered: l1.div at}}
  %b = l1.div %a, %y : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  l1.return %b : tensor<4xi32>
}
l1.stage @sink on @cpu_0 process(%c: !l1.buf<@gpu_0, tensor<4xi32>>) {
  l1.drop %c : !l1.buf<@gpu_0, tensor<4xi32>>
  l1.end
}

// -----

// A handler that reads a state field after writing it.
// CHECK: error: lowered {{[0-9]+}} of {{[0-9]+}} ops; not lowered: l1.state_read at {{.*}}: reads a state field after this handler wrote it
l1.system @sys {
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "1GB"}
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.actor @a on @gpu_0 {
  l1.state @w : tensor<8xf32> init zeros
  l1.state @v : tensor<8xf32> init zeros
  l1.handler @Upd(%g: tensor<8xf32>) {
    %n = l1.neg %g : tensor<8xf32> -> tensor<8xf32>
    l1.state_write @w, %n : tensor<8xf32>
    // expected-error @+1 {{not lowered: l1.state_read at}}
    %w = l1.state_read @w : tensor<8xf32>
    %m = l1.add %w, %g : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
    l1.state_write @v, %m : tensor<8xf32>
    l1.return
  }
}
l1.tensor_graph @fb on @gpu_0 then @ret compute(%x: tensor<8xf32>) {
  %y = l1.neg %x : tensor<8xf32> -> tensor<8xf32>
  l1.return %y : tensor<8xf32>
}
l1.stage @ret on @cpu_0 process(%y: !l1.buf<@gpu_0, tensor<8xf32>>) {
  l1.send @a::@Upd(%y) : !l1.buf<@gpu_0, tensor<8xf32>>
  l1.end
}
l1.pipeline @train = @fb
l1.pipeline @back = @ret
l1.schedule pipelines [@train, @back] actors [@a] pipeline_depth 1

// -----

// The plan must fit the node it runs on: the 1 MiB input of the graph does
// not fit a 1MB device.
// A resource error (L0.5), not a refusal to lower.
l1.system @sys {
  l1.node @cpu_0 compute {isa = "x86_64"}
  // expected-error @+3 {{[resource] L0.5: the plan needs 2.1 MB (2097408 bytes) of @gpu_0 but it has vram 1MB}}
  // expected-note @+2 {{pool gpu_0.io.arena (arena): 2.1 MB (2097152 bytes)}}
  // expected-note @+1 {{pool fb.arena (arena): 256 B}}
  l1.node @gpu_0 compute {isa = "cuda", vram = "1MB"}
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.tensor_graph @fb on @gpu_0 then @ret compute(%x: tensor<256x1024xf32>) {
  %y = l1.neg %x : tensor<256x1024xf32> -> tensor<256x1024xf32>
  l1.return %y : tensor<256x1024xf32>
}
l1.stage @ret on @cpu_0 process(%y: !l1.buf<@gpu_0, tensor<256x1024xf32>>) {
  l1.drop %y : !l1.buf<@gpu_0, tensor<256x1024xf32>>
  l1.end
}

// -----

// A stage whose body branches (`if batch_full(x) ... else ...`): the step
// dispatcher has no form for its control flow, so the lowering refuses it
// rather than running every branch.
// CHECK: error: lowered {{[0-9]+}} of {{[0-9]+}} ops; not lowered: cf.cond_br at {{.*}}not-lowered.mlir:{{[0-9]+}}:{{[0-9]+}}: a stage's branches are not emitted into the control program; only a straight-line stage (one block) lowers
l1.system @sys {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.stage @st on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>) {
  %full = l1.batch_full %x : !l1.buf<@ram_0, tensor<4xf32>>
  // expected-error @+1 {{not lowered: cf.cond_br at}}
  cf.cond_br %full, ^go, ^skip
^go:
  l1.forward @st2(%x) : !l1.buf<@ram_0, tensor<4xf32>>
^skip:
  l1.drop %x : !l1.buf<@ram_0, tensor<4xf32>>
  l1.end
}
l1.stage @st2 on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>) {
  l1.drop %x : !l1.buf<@ram_0, tensor<4xf32>>
  l1.end
}
