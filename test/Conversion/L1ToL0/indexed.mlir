// gather and scatter_add (Patterns/Indexed.cpp). A gather opens a kernel
// over its result, loads the index, clamps it into the table and masks the
// row it reads (i32 indices can leave [0, rows)); its elementwise consumer
// fuses after it. A scatter is a kernel of its own, one lane per column:
// each lane zeroes its column, then adds the rows in index order
// (read-modify-write of its own column). Its consumer reads the result from
// memory. ui8 indices into 256 rows can name no row outside the table: no
// clamp, no mask.
// RUN: synpl-opt %s -split-input-file --synpl-l1-to-l0-pipeline | FileCheck %s

// CHECK-LABEL: l0uop.plan @sys
// CHECK: l0uop.kernel @g.k0_gather inputs(%[[T:.*]] = @g.in0 : !l0uop.buf<10x8xf32>, %[[IDS:.*]] = @g.in1 : !l0uop.buf<2x3xi32>) outputs(%[[E:.*]] = @g.t0_scale : !l0uop.buf<2x3x8xf32>) grid(2, 3, 1) block(8, 1, 1)
// CHECK: %[[P0:.*]] = l0uop.range 0 to 2 over group_x
// CHECK: %[[P1:.*]] = l0uop.range 0 to 3 over group_y
// CHECK: %[[D:.*]] = l0uop.range 0 to 8 over local_x
// CHECK: %[[IP:.*]] = l0uop.index %[[IDS]][%[[P0]], %[[P1]]]
// CHECK: %[[ID:.*]] = l0uop.load %[[IP]] : i32
// CHECK: %[[I:.*]] = l0uop.cast %[[ID]] : i32 to index
// CHECK: %[[BELOW:.*]] = l0uop.cmplt %[[I]], %{{.*}} : index
// CHECK: %[[LAST:.*]] = l0uop.const 9 : index
// CHECK: %[[ABOVE:.*]] = l0uop.cmplt %[[LAST]], %[[I]] : index
// CHECK: %[[IN:.*]] = l0uop.where %[[ABOVE]]
// CHECK: %[[OK:.*]] = l0uop.where %[[BELOW]], %{{.*}}, %[[IN]] : i1
// CHECK: %[[LO:.*]] = l0uop.max %[[I]]
// CHECK: %[[NLO:.*]] = l0uop.neg %[[LO]]
// CHECK: %[[M:.*]] = l0uop.max %[[NLO]], %{{.*}} : index
// CHECK: %[[ROW:.*]] = l0uop.neg %[[M]]
// CHECK: %[[TP:.*]] = l0uop.index %[[T]][%[[ROW]], %[[D]]]
// CHECK: %[[V:.*]] = l0uop.load %[[TP]] : f32
// CHECK: %[[MV:.*]] = l0uop.where %[[OK]], %[[V]], %{{.*}} : f32
// CHECK: %[[Y:.*]] = l0uop.mul %[[MV]], %{{.*}} : f32
// CHECK: %[[EP:.*]] = l0uop.index %[[E]][%[[P0]], %[[P1]], %[[D]]]
// CHECK: l0uop.store %[[EP]], %[[Y]]
// CHECK: l0uop.kernel @g.k1_scatter_add inputs(%[[SRC:.*]] = @g.t0_scale : !l0uop.buf<2x3x8xf32>, %[[IDS2:.*]] = @g.in1 : !l0uop.buf<2x3xi32>) outputs(%[[S:.*]] = @g.t1_scatter_add : !l0uop.buf<10x8xf32>) grid(1, 1, 1) block(8, 1, 1)
// CHECK: %[[COL:.*]] = l0uop.range 0 to 8 over local_x
// CHECK: %[[ZERO:.*]] = l0uop.const 0.0
// CHECK: %[[R:.*]] = l0uop.range 0 to 10 : index
// CHECK: %[[ZP:.*]] = l0uop.index %[[S]][%[[R]], %[[COL]]]
// CHECK: l0uop.store %[[ZP]], %[[ZERO]]
// CHECK: l0uop.end %[[R]]
// CHECK: %[[P:.*]] = l0uop.range 0 to 6 : index
// CHECK: l0uop.index %[[IDS2]]
// CHECK: l0uop.neg
// CHECK: %[[SM:.*]] = l0uop.max
// CHECK: %[[SROW:.*]] = l0uop.neg %[[SM]]
// CHECK: %[[SP:.*]] = l0uop.index %[[SRC]][%{{.*}}, %{{.*}}, %[[COL]]]
// CHECK: %[[X:.*]] = l0uop.load %[[SP]] : f32
// CHECK: %[[OP:.*]] = l0uop.index %[[S]][%[[SROW]], %[[COL]]]
// CHECK: %[[OLD:.*]] = l0uop.load %[[OP]] : f32
// CHECK: %[[MX:.*]] = l0uop.where %{{.*}}, %[[X]], %{{.*}} : f32
// CHECK: %[[NEW:.*]] = l0uop.add %[[OLD]], %[[MX]] : f32
// CHECK: l0uop.store %[[OP]], %[[NEW]]
// CHECK: l0uop.end %[[P]]
// CHECK: l0uop.end %[[COL]]
// CHECK: l0uop.kernel @g.k2_add inputs(%{{.*}} = @g.t1_scatter_add
// CHECK: l0uop.stream @stream_0 [@g.k0_gather, @g.k1_scatter_add, @g.k2_add]
l1.system @sys {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%t: tensor<10x8xf32>, %ids: tensor<2x3xi32>) {
  %e = l1.gather %t[%ids] : tensor<10x8xf32>, tensor<2x3xi32> -> tensor<2x3x8xf32>
  %c = l1.const 2.0 : tensor<f32>
  %y = l1.scale %e, %c : tensor<2x3x8xf32>, tensor<f32> -> tensor<2x3x8xf32>
  %s = l1.scatter_add %y[%ids] : tensor<2x3x8xf32>, tensor<2x3xi32> -> tensor<10x8xf32>
  %z = l1.add %s, %t : tensor<10x8xf32>, tensor<10x8xf32> -> tensor<10x8xf32>
  l1.return %z : tensor<10x8xf32>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<10x8xf32>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<10x8xf32>>
  l1.end
}

// -----

// CHECK-LABEL: l0uop.plan @sys
// CHECK: l0uop.kernel @g.k0_gather
// CHECK: %[[ID:.*]] = l0uop.load %{{.*}} : ui8
// CHECK: %[[ROW:.*]] = l0uop.cast %[[ID]] : ui8 to index
// CHECK-NOT: l0uop.cmplt
// CHECK-NOT: l0uop.where
// CHECK: l0uop.index %{{.*}}[%[[ROW]], %{{.*}}] : !l0uop.buf<256x4xf32>
// CHECK: l0uop.kernel @g.k1_scatter_add
// CHECK: %[[SID:.*]] = l0uop.load %{{.*}} : ui8
// CHECK: %[[SROW:.*]] = l0uop.cast %[[SID]] : ui8 to index
// CHECK-NOT: l0uop.where
// CHECK: l0uop.index %{{.*}}[%[[SROW]], %{{.*}}] : !l0uop.buf<256x4xf32>
// CHECK-NOT: l0uop.where
// CHECK: l0uop.end
l1.system @sys {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%t: tensor<256x4xf32>, %ids: tensor<5xui8>) {
  %e = l1.gather %t[%ids] : tensor<256x4xf32>, tensor<5xui8> -> tensor<5x4xf32>
  %s = l1.scatter_add %e[%ids] : tensor<5x4xf32>, tensor<5xui8> -> tensor<256x4xf32>
  l1.return %s : tensor<256x4xf32>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<256x4xf32>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<256x4xf32>>
  l1.end
}
