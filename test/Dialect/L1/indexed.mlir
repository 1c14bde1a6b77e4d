// `l1.gather` (rows of a table at integer indices) and `l1.scatter_add`
// (rows summed into a table at integer indices): round trip, and every
// verifier rejection (row L1.5).
// RUN: synpl-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK: l1.gather %{{.*}}[%{{.*}}] : tensor<256x16xf32>, tensor<4x8xui8> -> tensor<4x8x16xf32>
// CHECK: l1.scatter_add %{{.*}}[%{{.*}}] : tensor<4x8x16xf32>, tensor<4x8xui8> -> tensor<256x16xf32>
l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%t: tensor<256x16xf32>, %ids: tensor<4x8xui8>) {
  %e = l1.gather %t[%ids] : tensor<256x16xf32>, tensor<4x8xui8> -> tensor<4x8x16xf32>
  %r = l1.scatter_add %e[%ids] : tensor<4x8x16xf32>, tensor<4x8xui8> -> tensor<256x16xf32>
  l1.return %r : tensor<256x16xf32>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<256x16xf32>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<256x16xf32>>
  l1.end
}

// -----

l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%t: tensor<4x16x2xf32>, %ids: tensor<3xi32>) {
  // expected-error @+1 {{gather: the table is rank 2 ([rows, width]), got 'tensor<4x16x2xf32>'}}
  %r = l1.gather %t[%ids] : tensor<4x16x2xf32>, tensor<3xi32> -> tensor<3x16xf32>
  l1.return %r : tensor<3x16xf32>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<3x16xf32>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<3x16xf32>>
  l1.end
}

// -----

l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%t: tensor<4x16xi32>, %ids: tensor<3xi32>) {
  // expected-error @+1 {{gather: the table is float, got 'tensor<4x16xi32>'}}
  %r = l1.gather %t[%ids] : tensor<4x16xi32>, tensor<3xi32> -> tensor<3x16xi32>
  l1.return %r : tensor<3x16xi32>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<3x16xi32>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<3x16xi32>>
  l1.end
}

// -----

l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%t: tensor<4x16xf32>, %ids: tensor<3xf32>) {
  // expected-error @+1 {{gather: the indices are integers, got 'tensor<3xf32>'}}
  %r = l1.gather %t[%ids] : tensor<4x16xf32>, tensor<3xf32> -> tensor<3x16xf32>
  l1.return %r : tensor<3x16xf32>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<3x16xf32>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<3x16xf32>>
  l1.end
}

// -----

l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%t: tensor<4x16xf32>, %ids: tensor<3xi32>) {
  // expected-error @+1 {{gather: result shape [3, 8] should be [3, 16] (the indices' shape, then the table's width)}}
  %r = l1.gather %t[%ids] : tensor<4x16xf32>, tensor<3xi32> -> tensor<3x8xf32>
  l1.return %r : tensor<3x8xf32>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<3x8xf32>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<3x8xf32>>
  l1.end
}

// -----

l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%t: tensor<4x16xf32>, %ids: tensor<3xi32>) {
  // expected-error @+1 {{gather: element types 'f32' and 'f16' differ}}
  %r = l1.gather %t[%ids] : tensor<4x16xf32>, tensor<3xi32> -> tensor<3x16xf16>
  l1.return %r : tensor<3x16xf16>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<3x16xf16>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<3x16xf16>>
  l1.end
}

// -----

l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%d: tensor<3x16xf32>, %ids: tensor<3xi32>) {
  // expected-error @+1 {{scatter_add: source shape [3, 16] should be [3, 8] (the indices' shape, then the table's width)}}
  %r = l1.scatter_add %d[%ids] : tensor<3x16xf32>, tensor<3xi32> -> tensor<4x8xf32>
  l1.return %r : tensor<4x8xf32>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<4x8xf32>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<4x8xf32>>
  l1.end
}

// -----

l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%d: tensor<2x3x16xf32>, %ids: tensor<3xi32>) {
  // expected-error @+1 {{scatter_add: source shape [2, 3, 16] should be [3, 16] (the indices' shape, then the table's width)}}
  %r = l1.scatter_add %d[%ids] : tensor<2x3x16xf32>, tensor<3xi32> -> tensor<4x16xf32>
  l1.return %r : tensor<4x16xf32>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<4x16xf32>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<4x16xf32>>
  l1.end
}

// -----

l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%d: tensor<3x16xf32>, %ids: tensor<3xi1>) {
  // expected-error @+1 {{scatter_add: the table is rank 2 ([rows, width]), got 'tensor<16xf32>'}}
  %r = l1.scatter_add %d[%ids] : tensor<3x16xf32>, tensor<3xi1> -> tensor<16xf32>
  l1.return %r : tensor<16xf32>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<16xf32>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<16xf32>>
  l1.end
}
