// l1.random (Patterns/Random.cpp) is elementwise: the draw is computed in
// its consumer's kernel from the element's own index, never stored. The
// counter (a rank-0 f32) becomes the counter's high half; four Squares
// rounds of ui64 MULACC, each followed by the half swap (MOD and DIV by
// 2^32); the top 24 bits become the f32 in [0, 1).
// RUN: synpl-opt %s -split-input-file --synpl-l1-to-l0-pipeline | FileCheck %s

// CHECK-LABEL: l0uop.plan @sys
// CHECK: l0uop.kernel @g.k0_select inputs(%[[T:.*]] = @g.in1 : !l0uop.buf<1xf32>, %[[X:.*]] = @g.in0 : !l0uop.buf<4x8xf32>) outputs(
// CHECK: %[[HALF:.*]] = l0uop.const 4294967296 : ui64
// CHECK: %[[TV:.*]] = l0uop.load
// CHECK: %[[T64:.*]] = l0uop.cast %[[TV]] : f32 to ui64
// CHECK: %[[I:.*]] = l0uop.cast %{{.*}} : index to ui64
// CHECK: %[[CTR:.*]] = l0uop.mulacc %[[T64]], %[[HALF]], %[[I]] : ui64
// The key of seed 1, stream 0 (synpl::rng::squaresKey).
// CHECK: %[[KEY:.*]] = l0uop.const 14031690549794549462 : ui64
// CHECK: %[[X0:.*]] = l0uop.mul %[[CTR]], %[[KEY]] : ui64
// CHECK: %[[Z:.*]] = l0uop.add %[[X0]], %[[KEY]] : ui64
// CHECK: %[[R1:.*]] = l0uop.mulacc %[[X0]], %[[X0]], %[[X0]] : ui64
// CHECK: %[[LO:.*]] = l0uop.mod %[[R1]], %[[HALF]] : ui64
// CHECK: %[[HI:.*]] = l0uop.div %[[R1]], %[[HALF]] : ui64
// CHECK: l0uop.mulacc %[[LO]], %[[HALF]], %[[HI]] : ui64
// CHECK-COUNT-2: l0uop.div %{{.*}}, %[[HALF]] : ui64
// CHECK: %[[TOP:.*]] = l0uop.div %{{.*}}, %{{.*}} : ui64
// CHECK: %[[F:.*]] = l0uop.cast %[[TOP]] : ui64 to f32
// CHECK: %[[U:.*]] = l0uop.mul %[[F]], %{{.*}} : f32
// CHECK: l0uop.cmplt %[[U]]
// CHECK: l0uop.index %[[X]]
// CHECK-NOT: l0uop.kernel
// CHECK: l0uop.stream @stream_0 [@g.k0_select]
l1.system @sys {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%x: tensor<4x8xf32>, %t: tensor<f32>) {
  %u = l1.random %t seed 1 stream 0 : tensor<f32> -> tensor<4x8xf32>
  %p = l1.const 0.25 : tensor<4x8xf32>
  %keep = l1.cmp ge, %u, %p : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xi1>
  %z = l1.const 0.0 : tensor<4x8xf32>
  %y = l1.select %keep, %x, %z : tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  l1.return %y : tensor<4x8xf32>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<4x8xf32>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<4x8xf32>>
  l1.end
}
