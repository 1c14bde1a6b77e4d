// Movement ops (Patterns/Movement.cpp) lower in any chain: a reshape of a
// transpose or a broadcast splits its linear index with DIV and MOD; a chain
// of reshapes over a computed value reads it flat, with no division; a
// reshape that keeps a dimension maps it straight through.
// RUN: synpl-opt %s -split-input-file --synpl-l1-to-l0-pipeline | FileCheck %s

// [2, 3, 4] transposed to [4, 3, 2], then merged to [4, 6]: the merged
// index j of 6 = 3 x 2 splits into (j div 2, j mod 2); the leading 4 passes
// through.
// CHECK-LABEL: l0uop.plan @sys_rt
// CHECK: l0uop.kernel @g.k0_add inputs(%{{.*}} = @g.in0 : !l0uop.buf<2x3x4xf32>)
// CHECK-DAG: %[[I:.*]] = l0uop.range 0 to 4 over group_x : index
// CHECK-DAG: %[[J:.*]] = l0uop.range 0 to 6 over local_x : index
// CHECK-DAG: %[[Q:.*]] = l0uop.div %[[J]], %{{.*}} : index
// CHECK-DAG: %[[R:.*]] = l0uop.mod %[[J]], %{{.*}} : index
// CHECK: l0uop.index %{{.*}}[%[[R]], %[[Q]], %[[I]]] : !l0uop.buf<2x3x4xf32>
l1.system @sys_rt {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%x: tensor<2x3x4xf32>) {
  %t = l1.transpose %x perm [2, 1, 0] : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
  %r = l1.reshape %t : tensor<4x3x2xf32> -> tensor<4x6xf32>
  %y = l1.add %r, %r : tensor<4x6xf32>, tensor<4x6xf32> -> tensor<4x6xf32>
  l1.return %y : tensor<4x6xf32>
}
l1.stage @sink on @cpu_0 process(%b: !l1.buf<@ram_0, tensor<4x6xf32>>) {
  l1.drop %b : !l1.buf<@ram_0, tensor<4x6xf32>>
  l1.end
}

// -----

// A bias [5] broadcast over [3, 5] and flattened to [15]: the flat index
// splits, and k mod 5 reads the bias (k div 5, the broadcast row, is
// unused and left to the code generator's dead-code elimination).
// CHECK-LABEL: l0uop.plan @sys_bc
// CHECK: l0uop.kernel @g.k0_add
// CHECK: %[[K:.*]] = l0uop.range 0 to 15 over local_x : index
// CHECK: %[[M:.*]] = l0uop.mod %[[K]], %{{.*}} : index
// CHECK: l0uop.index %{{.*}}[%[[M]]] : !l0uop.buf<5xf32>
l1.system @sys_bc {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%b: tensor<5xf32>, %x: tensor<15xf32>) {
  %w = l1.broadcast %b : tensor<5xf32> -> tensor<3x5xf32>
  %f = l1.reshape %w : tensor<3x5xf32> -> tensor<15xf32>
  %y = l1.add %f, %x : tensor<15xf32>, tensor<15xf32> -> tensor<15xf32>
  l1.return %y : tensor<15xf32>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<15xf32>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<15xf32>>
  l1.end
}

// -----

// A reshape of a reshape of a matmul: the product is stored flat and read
// at one linear index, with no DIV.
// CHECK-LABEL: l0uop.plan @sys_rr
// CHECK: l0uop.slot @g.t0_matmul {{.*}}: !l0uop.buf<24xf32>
// CHECK: l0uop.kernel @g.k1_neg inputs(%[[T:.*]] = @g.t0_matmul : !l0uop.buf<24xf32>)
// CHECK-NOT: l0uop.div
// CHECK: l0uop.index %[[T]][%{{.*}}] : !l0uop.buf<24xf32>
// CHECK: l0uop.stream
l1.system @sys_rr {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%a: tensor<4x3xf32>, %w: tensor<3x6xf32>) {
  %m = l1.matmul %a, %w : tensor<4x3xf32>, tensor<3x6xf32> -> tensor<4x6xf32>
  %r1 = l1.reshape %m : tensor<4x6xf32> -> tensor<2x12xf32>
  %r2 = l1.reshape %r1 : tensor<2x12xf32> -> tensor<8x3xf32>
  %y = l1.neg %r2 : tensor<8x3xf32> -> tensor<8x3xf32>
  l1.return %y : tensor<8x3xf32>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<8x3xf32>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<8x3xf32>>
  l1.end
}

// -----

// A view stored by a copy kernel whose rows are longer than a block (3136 >
// 1024): the row splits into 4 blocks of 784 lanes, its index block * 784 +
// lane, rather than a grid of one-thread blocks.
// CHECK-LABEL: l0uop.plan @sys_long
// CHECK: l0uop.kernel @g.k0_copy inputs(%[[X:.*]] = @g.in0 : !l0uop.buf<2x7x7x64xf32>) outputs(%[[V:.*]] = @g.view0 : !l0uop.buf<2x3136xf32>) grid(2, 4, 1) block(784, 1, 1)
// CHECK-DAG: %[[N:.*]] = l0uop.range 0 to 2 over group_x : index
// CHECK-DAG: %[[B:.*]] = l0uop.range 0 to 4 over group_y : index
// CHECK-DAG: %[[L:.*]] = l0uop.range 0 to 784 over local_x : index
// CHECK: %[[J:.*]] = l0uop.mulacc %[[B]], %{{.*}}, %[[L]] : index
// CHECK: l0uop.index %[[V]][%[[N]], %[[J]]] : !l0uop.buf<2x3136xf32>
l1.system @sys_long {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%x: tensor<2x7x7x64xf32>, %w: tensor<3136x4xf32>) {
  %t = l1.transpose %x perm [0, 3, 1, 2] : tensor<2x7x7x64xf32> -> tensor<2x64x7x7xf32>
  %r = l1.reshape %t : tensor<2x64x7x7xf32> -> tensor<2x3136xf32>
  %y = l1.matmul %r, %w : tensor<2x3136xf32>, tensor<3136x4xf32> -> tensor<2x4xf32>
  l1.return %y : tensor<2x4xf32>
}
l1.stage @sink on @cpu_0 process(%b: !l1.buf<@ram_0, tensor<2x4xf32>>) {
  l1.drop %b : !l1.buf<@ram_0, tensor<2x4xf32>>
  l1.end
}
