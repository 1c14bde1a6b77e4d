// The training loop on l1.schedule (epochs, evaluate, checkpoint_every; from
// L2's `train loop<...>`), round-tripped; then the ranges it must respect.
// RUN: synpl-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK: l1.schedule pipelines [@p] actors [] pipeline_depth 1 epochs 3 evaluate "t10k" checkpoint_every 500
l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.stage @st on @cpu_0 process() {
  l1.end
}
l1.pipeline @p = @st
l1.schedule pipelines [@p] actors [] pipeline_depth 1 epochs 3 evaluate "t10k" checkpoint_every 500

// -----

// CHECK: l1.schedule pipelines [@p] actors [] pipeline_depth 1 checkpoint_every 0
l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.stage @st on @cpu_0 process() {
  l1.end
}
l1.pipeline @p = @st
l1.schedule pipelines [@p] actors [] pipeline_depth 1 checkpoint_every 0

// -----

l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.stage @st on @cpu_0 process() {
  l1.end
}
l1.pipeline @p = @st
// expected-error @+1 {{attribute 'epochs' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
l1.schedule pipelines [@p] actors [] pipeline_depth 1 epochs 0

// -----

l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.stage @st on @cpu_0 process() {
  l1.end
}
l1.pipeline @p = @st
// expected-error @+1 {{attribute 'checkpoint_every' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
l1.schedule pipelines [@p] actors [] pipeline_depth 1 checkpoint_every -1
