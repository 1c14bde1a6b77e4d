// `init planned_steps`: a rank-0 f32 the runtime fills with the run's
// length in update steps (round trip, and the one type it may have).
// RUN: synpl-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK: l1.state @horizon : tensor<f32> init planned_steps
l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.actor @opt on @cpu_0 {
  l1.state @horizon : tensor<f32> init planned_steps
}

// -----

l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.actor @opt on @cpu_0 {
  // expected-error @+1 {{init planned_steps fills a rank-0 f32 (tensor<f32>), not 'tensor<2xf32>'}}
  l1.state @horizon : tensor<2xf32> init planned_steps
}

// -----

l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.actor @opt on @cpu_0 {
  // expected-error @+1 {{init planned_steps fills a rank-0 f32 (tensor<f32>), not 'tensor<i32>'}}
  l1.state @horizon : tensor<i32> init planned_steps
}
