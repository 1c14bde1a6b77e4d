// RUN: synpl-opt %s --synpl-l1-split-reductions | FileCheck %s
// RUN: synpl-opt %s --synpl-l1-split-reductions | synpl-opt --synpl-l1-split-reductions | FileCheck %s
// RUN: synpl-opt %s --synpl-l1-split-reductions=units=1 | FileCheck %s --check-prefix=ONE
// RUN: synpl-opt %s --synpl-l1-split-reductions=summary --synpl-search-report 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// Long reductions with small results, on a node of 4 cores: the weight
// gradient Xᵀ·dY (its left operand a transpose: the activations are
// sliced under it), a product whose left operand is row-major, a bias
// gradient, and a mean and a max over the leading axis of a 3-D tensor
// (two leading blocks already: two slices fill the four cores). Left
// whole: a row reduction, a short one, and a matmul whose right operand
// is a transpose (its slices would gather the partials' lanes). Running
// the pass again changes nothing (second RUN line); on one core nothing
// is split.

// CHECK-LABEL: l1.tensor_graph @grads
// CHECK:      %[[XS:.*]] = l1.reshape %arg0 : tensor<8192x64xf32> -> tensor<4x2048x64xf32>
// CHECK-NEXT: %[[XT:.*]] = l1.transpose %[[XS]] perm [0, 2, 1] : tensor<4x2048x64xf32> -> tensor<4x64x2048xf32>
// CHECK-NEXT: %[[DS:.*]] = l1.reshape %arg1 : tensor<8192x32xf32> -> tensor<4x2048x32xf32>
// CHECK-NEXT: %[[P:.*]] = l1.matmul %[[XT]], %[[DS]] : tensor<4x64x2048xf32>, tensor<4x2048x32xf32> -> tensor<4x64x32xf32>
// CHECK-NEXT: %[[GW:.*]] = l1.reduce_sum %[[P]] axis 0 : tensor<4x64x32xf32> -> tensor<64x32xf32>
// CHECK-NEXT: %[[BS:.*]] = l1.reshape %arg1 : tensor<8192x32xf32> -> tensor<4x2048x32xf32>
// CHECK-NEXT: %[[BP:.*]] = l1.reduce_sum %[[BS]] axis 1 : tensor<4x2048x32xf32> -> tensor<4x32xf32>
// CHECK-NEXT: %[[GB:.*]] = l1.reduce_sum %[[BP]] axis 0 : tensor<4x32xf32> -> tensor<32xf32>
// CHECK-NEXT: %[[WS:.*]] = l1.reshape %arg2 : tensor<64x8192xf32> -> tensor<64x4x2048xf32>
// CHECK-NEXT: %[[WT:.*]] = l1.transpose %[[WS]] perm [1, 0, 2] : tensor<64x4x2048xf32> -> tensor<4x64x2048xf32>
// CHECK-NEXT: %[[DS2:.*]] = l1.reshape %arg1 : tensor<8192x32xf32> -> tensor<4x2048x32xf32>
// CHECK-NEXT: %[[P2:.*]] = l1.matmul %[[WT]], %[[DS2]] : tensor<4x64x2048xf32>, tensor<4x2048x32xf32> -> tensor<4x64x32xf32>
// CHECK-NEXT: %[[GP:.*]] = l1.reduce_sum %[[P2]] axis 0 : tensor<4x64x32xf32> -> tensor<64x32xf32>
// CHECK-NEXT: %[[TS:.*]] = l1.reshape %arg3 : tensor<4096x2x16xf32> -> tensor<2x2048x2x16xf32>
// CHECK-NEXT: %[[MP:.*]] = l1.reduce_mean %[[TS]] axis 1 : tensor<2x2048x2x16xf32> -> tensor<2x2x16xf32>
// CHECK-NEXT: %[[GM:.*]] = l1.reduce_mean %[[MP]] axis 0 : tensor<2x2x16xf32> -> tensor<2x16xf32>
// CHECK-NEXT: %[[TS2:.*]] = l1.reshape %arg3 : tensor<4096x2x16xf32> -> tensor<2x2048x2x16xf32>
// CHECK-NEXT: %[[XP:.*]] = l1.reduce_max %[[TS2]] axis 1 : tensor<2x2048x2x16xf32> -> tensor<2x2x16xf32>
// CHECK-NEXT: %[[GX:.*]] = l1.reduce_max %[[XP]] axis 0 : tensor<2x2x16xf32> -> tensor<2x16xf32>
// CHECK-NEXT: %[[ROWS:.*]] = l1.reduce_sum %arg1 axis 1 : tensor<8192x32xf32> -> tensor<8192xf32>
// CHECK-NEXT: %[[SHORT:.*]] = l1.reduce_sum %arg4 axis 0 : tensor<1024x32xf32> -> tensor<32xf32>
// CHECK-NEXT: %[[VT:.*]] = l1.transpose %arg5 : tensor<32x8192xf32> -> tensor<8192x32xf32>
// CHECK-NEXT: %[[GT:.*]] = l1.matmul %arg2, %[[VT]] : tensor<64x8192xf32>, tensor<8192x32xf32> -> tensor<64x32xf32>
// CHECK-NEXT: l1.return %[[GW]], %[[GB]], %[[GP]], %[[GM]], %[[GX]], %[[ROWS]], %[[SHORT]], %[[GT]] :

// ONE-LABEL: l1.tensor_graph @grads
// ONE-NOT:   l1.reshape
// ONE:       l1.return

// REPORT: search L1 split @grads %1 = l1.matmul: 7 enumerated, 2 rejected, 5 survived; winner: S=4
// REPORT: min-slice         2  S=32: slices of 256 are shorter than min-slice 512
// REPORT: S=1        stream_us
// REPORT: remark: split into 4 slices of 2048 on 4 cores
// REPORT: search L1 split @grads {{.*}} = l1.reduce_mean: {{.*}} winner: S=2
// REPORT: remark: split into 2 slices of 2048 on 4 cores
// REPORT-NEXT: l1.reduce_mean
l1.system @s {
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {cores = 4, isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @grads on @cpu_0 then @sink compute(%x: tensor<8192x64xf32>, %dy: tensor<8192x32xf32>, %w: tensor<64x8192xf32>, %t: tensor<4096x2x16xf32>, %small: tensor<1024x32xf32>, %v: tensor<32x8192xf32>) {
  %xt = l1.transpose %x : tensor<8192x64xf32> -> tensor<64x8192xf32>
  %gw = l1.matmul %xt, %dy : tensor<64x8192xf32>, tensor<8192x32xf32> -> tensor<64x32xf32>
  %gb = l1.reduce_sum %dy axis 0 : tensor<8192x32xf32> -> tensor<32xf32>
  %gp = l1.matmul %w, %dy : tensor<64x8192xf32>, tensor<8192x32xf32> -> tensor<64x32xf32>
  %gm = l1.reduce_mean %t axis 0 : tensor<4096x2x16xf32> -> tensor<2x16xf32>
  %gx = l1.reduce_max %t axis 0 : tensor<4096x2x16xf32> -> tensor<2x16xf32>
  %rows = l1.reduce_sum %dy axis 1 : tensor<8192x32xf32> -> tensor<8192xf32>
  %short = l1.reduce_sum %small axis 0 : tensor<1024x32xf32> -> tensor<32xf32>
  %vt = l1.transpose %v : tensor<32x8192xf32> -> tensor<8192x32xf32>
  %gt = l1.matmul %w, %vt : tensor<64x8192xf32>, tensor<8192x32xf32> -> tensor<64x32xf32>
  l1.return %gw, %gb, %gp, %gm, %gx, %rows, %short, %gt : tensor<64x32xf32>, tensor<32xf32>, tensor<64x32xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<8192xf32>, tensor<32xf32>, tensor<64x32xf32>
}
l1.stage @sink on @cpu_0 process(%a: !l1.buf<@ram_0, tensor<64x32xf32>>, %b: !l1.buf<@ram_0, tensor<32xf32>>, %c: !l1.buf<@ram_0, tensor<64x32xf32>>, %d: !l1.buf<@ram_0, tensor<2x16xf32>>, %e: !l1.buf<@ram_0, tensor<2x16xf32>>, %f: !l1.buf<@ram_0, tensor<8192xf32>>, %g: !l1.buf<@ram_0, tensor<32xf32>>, %h: !l1.buf<@ram_0, tensor<64x32xf32>>) {
  l1.drop %a : !l1.buf<@ram_0, tensor<64x32xf32>>
  l1.drop %b : !l1.buf<@ram_0, tensor<32xf32>>
  l1.drop %c : !l1.buf<@ram_0, tensor<64x32xf32>>
  l1.drop %d : !l1.buf<@ram_0, tensor<2x16xf32>>
  l1.drop %e : !l1.buf<@ram_0, tensor<2x16xf32>>
  l1.drop %f : !l1.buf<@ram_0, tensor<8192xf32>>
  l1.drop %g : !l1.buf<@ram_0, tensor<32xf32>>
  l1.drop %h : !l1.buf<@ram_0, tensor<64x32xf32>>
  l1.end
}
l1.pipeline @p = @grads
l1.pipeline @q = @sink
l1.schedule pipelines [@p, @q] actors [] pipeline_depth 1
