// `l1.random` (counter-based uniform draws) and the `training_mode` state
// init that random layers read: round trip, and every verifier rejection
// (L1.5 for the op, the init's one type).
// RUN: synpl-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK: l1.state @step : tensor<f32> init zeros
// CHECK: l1.state @training : tensor<f32> init training_mode
// CHECK: l1.random %{{.*}} seed 0 stream 3 : tensor<f32> -> tensor<128x256xf32>
l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.actor @a on @cpu_0 {
  l1.state @step : tensor<f32> init zeros
  l1.state @training : tensor<f32> init training_mode
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%t: tensor<f32>) {
  %u = l1.random %t seed 0 stream 3 : tensor<f32> -> tensor<128x256xf32>
  l1.return %u : tensor<128x256xf32>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<128x256xf32>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<128x256xf32>>
  l1.end
}

// -----

l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.actor @a on @cpu_0 {
  // expected-error @+1 {{init training_mode fills a rank-0 f32 (tensor<f32>), not 'tensor<2xf32>'}}
  l1.state @training : tensor<2xf32> init training_mode
}

// -----

l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%t: tensor<2xf32>) {
  // expected-error @+1 {{the counter is a rank-0 f32 (tensor<f32>), got 'tensor<2xf32>'}}
  %u = l1.random %t seed 0 stream 0 : tensor<2xf32> -> tensor<4xf32>
  l1.return %u : tensor<4xf32>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<4xf32>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<4xf32>>
  l1.end
}

// -----

l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%t: tensor<f32>) {
  // expected-error @+1 {{the draws are f32, got 'tensor<4xf16>'}}
  %u = l1.random %t seed 0 stream 0 : tensor<f32> -> tensor<4xf16>
  l1.return %u : tensor<4xf16>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<4xf16>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<4xf16>>
  l1.end
}

// -----

l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%t: tensor<f32>) {
  // expected-error @+1 {{one draw has fewer than 2^32 elements (the element index is the counter's low half), got 'tensor<65536x65536xf32>'}}
  %u = l1.random %t seed 0 stream 0 : tensor<f32> -> tensor<65536x65536xf32>
  %s = l1.reduce_sum %u : tensor<65536x65536xf32> -> tensor<f32>
  l1.return %s : tensor<f32>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<f32>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<f32>>
  l1.end
}

// -----

l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%t: tensor<f32>) {
  // expected-error @+1 {{seed and stream are non-negative, got seed -1 stream 0}}
  %u = l1.random %t seed -1 stream 0 : tensor<f32> -> tensor<4xf32>
  l1.return %u : tensor<4xf32>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<4xf32>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<4xf32>>
  l1.end
}
