// RUN: synpl-opt %s -split-input-file --synpl-l1-fuse-across-reshapes | FileCheck %s
// RUN: synpl-opt %s -split-input-file --synpl-l1-fuse-across-reshapes | synpl-opt -split-input-file --synpl-l1-fuse-across-reshapes | FileCheck %s
// RUN: synpl-opt %s -split-input-file --synpl-l1-fuse-across-reshapes=summary 2>&1 >/dev/null | FileCheck %s --check-prefix=SUMMARY
// Into the producer's shape. A convolution-like epilogue: the product plus bias is reshaped to
// [N, H, W, C] for its ReLU and its mask. Both readers of the reshape are
// cheap and read nothing else of another shape, so both run in the
// product's [N*H*W, C] (one zero constant for them, at the top of the
// graph) and their results are reshaped instead; the pool reads the ReLU
// through the reshape. The second product's reshape is left: one of its
// readers is a tanh (kept out of matmul epilogues), so its other reader
// stays too. The graph on the GPU node is left as written. Running the
// pass again changes nothing (second RUN line).

// CHECK-LABEL: l1.tensor_graph @conv
// CHECK-NEXT:  %[[ZERO:.*]] = l1.const 0.000000e+00 : tensor<32x4xf32>
// CHECK-NEXT:  %[[P:.*]] = l1.matmul %arg0, %arg1
// CHECK-NEXT:  %[[BB:.*]] = l1.broadcast %arg2
// CHECK-NEXT:  %[[A:.*]] = l1.add %[[P]], %[[BB]] : tensor<32x4xf32>
// CHECK-NEXT:  %[[RELU:.*]] = l1.max %[[A]], %[[ZERO]] : tensor<32x4xf32>, tensor<32x4xf32> -> tensor<32x4xf32>
// CHECK-NEXT:  %[[RELU4:.*]] = l1.reshape %[[RELU]] : tensor<32x4xf32> -> tensor<2x4x4x4xf32>
// CHECK-NEXT:  %[[MASK:.*]] = l1.cmp gt, %[[A]], %[[ZERO]] : tensor<32x4xf32>, tensor<32x4xf32> -> tensor<32x4xi1>
// CHECK-NEXT:  %[[MASK4:.*]] = l1.reshape %[[MASK]] : tensor<32x4xi1> -> tensor<2x4x4x4xi1>
// CHECK-NEXT:  %[[POOL:.*]] = l1.reduce_max %[[RELU4]] axis 2
// CHECK-NEXT:  %[[Q:.*]] = l1.matmul %arg3, %arg1
// CHECK-NEXT:  %[[QR:.*]] = l1.reshape %[[Q]] : tensor<32x4xf32> -> tensor<2x4x4x4xf32>
// CHECK-NEXT:  %[[T:.*]] = l1.tanh %[[QR]] : tensor<2x4x4x4xf32>
// CHECK-NEXT:  %[[S:.*]] = l1.add %[[QR]], %[[RELU4]] : tensor<2x4x4x4xf32>
// CHECK-NEXT:  l1.return %[[POOL]], %[[MASK4]], %[[T]], %[[S]]

// CHECK-LABEL: l1.tensor_graph @dev
// CHECK-NEXT:  l1.matmul
// CHECK-NEXT:  l1.reshape
// CHECK-NEXT:  l1.const 0.000000e+00 : tensor<2x4x4x4xf32>
// CHECK-NEXT:  l1.max {{.*}} : tensor<2x4x4x4xf32>

// SUMMARY: remark: 2 elementwise ops moved into their producers' shapes, 0 into their readers'
// SUMMARY: remark: 0 elementwise ops moved into their producers' shapes, 1 into their readers'
// SUMMARY-NOT: remark
l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {cores = 2, isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "1GB"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.tensor_graph @conv on @cpu_0 then @sink compute(%x: tensor<32x9xf32>, %w: tensor<9x4xf32>, %b: tensor<4xf32>, %y: tensor<32x9xf32>) {
  %p = l1.matmul %x, %w : tensor<32x9xf32>, tensor<9x4xf32> -> tensor<32x4xf32>
  %bb = l1.broadcast %b : tensor<4xf32> -> tensor<32x4xf32>
  %a = l1.add %p, %bb : tensor<32x4xf32>, tensor<32x4xf32> -> tensor<32x4xf32>
  %r = l1.reshape %a : tensor<32x4xf32> -> tensor<2x4x4x4xf32>
  %zero = l1.const 0.0 : tensor<2x4x4x4xf32>
  %relu = l1.max %r, %zero : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
  %mask = l1.cmp gt, %r, %zero : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32> -> tensor<2x4x4x4xi1>
  %pool = l1.reduce_max %relu axis 2 : tensor<2x4x4x4xf32> -> tensor<2x4x4xf32>
  %q = l1.matmul %y, %w : tensor<32x9xf32>, tensor<9x4xf32> -> tensor<32x4xf32>
  %qr = l1.reshape %q : tensor<32x4xf32> -> tensor<2x4x4x4xf32>
  %t = l1.tanh %qr : tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
  %s = l1.add %qr, %relu : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
  l1.return %pool, %mask, %t, %s : tensor<2x4x4xf32>, tensor<2x4x4x4xi1>, tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>
}
l1.tensor_graph @dev on @gpu_0 then @sink2 compute(%x: tensor<32x9xf32>, %w: tensor<9x4xf32>) {
  %p = l1.matmul %x, %w : tensor<32x9xf32>, tensor<9x4xf32> -> tensor<32x4xf32>
  %r = l1.reshape %p : tensor<32x4xf32> -> tensor<2x4x4x4xf32>
  %zero = l1.const 0.0 : tensor<2x4x4x4xf32>
  %relu = l1.max %r, %zero : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
  l1.return %relu : tensor<2x4x4x4xf32>
}
l1.stage @sink on @cpu_0 process(%a: !l1.buf<@ram_0, tensor<2x4x4xf32>>, %b: !l1.buf<@ram_0, tensor<2x4x4x4xi1>>, %c: !l1.buf<@ram_0, tensor<2x4x4x4xf32>>, %d: !l1.buf<@ram_0, tensor<2x4x4x4xf32>>) {
  l1.drop %a : !l1.buf<@ram_0, tensor<2x4x4xf32>>
  l1.drop %b : !l1.buf<@ram_0, tensor<2x4x4x4xi1>>
  l1.drop %c : !l1.buf<@ram_0, tensor<2x4x4x4xf32>>
  l1.drop %d : !l1.buf<@ram_0, tensor<2x4x4x4xf32>>
  l1.end
}
l1.stage @sink2 on @cpu_0 process(%a: !l1.buf<@gpu_0, tensor<2x4x4x4xf32>>) {
  l1.drop %a : !l1.buf<@gpu_0, tensor<2x4x4x4xf32>>
  l1.end
}
l1.pipeline @p = @conv
l1.pipeline @q = @sink
l1.pipeline @p2 = @dev
l1.pipeline @q2 = @sink2
l1.schedule pipelines [@p, @q, @p2, @q2] actors [] pipeline_depth 1

// -----

// Into the readers' shape. A max pool's gradient over 2-wide windows,
// mask * broadcast(share), is formed from views alone (the activation seen
// as windows, the pooled maximum and the share broadcast over them): no
// kernel computes anything of its shape. Its one reader, through a
// reshape, is the select of the ReLU's gradient: the product moves into
// [2, 4, 4, 4] over reshapes of its operands, and joins the select. The
// mask's cast and compare stay (the count reads them too).
// CHECK-LABEL: l1.tensor_graph @poolgrad
// CHECK:       %[[HF:.*]] = l1.cast %{{.*}} : tensor<2x4x2x2x4xi1> -> tensor<2x4x2x2x4xf32>
// CHECK:       %[[HF4:.*]] = l1.reshape %[[HF]] : tensor<2x4x2x2x4xf32> -> tensor<2x4x4x4xf32>
// CHECK-NEXT:  %[[SB4:.*]] = l1.reshape %[[SB:.*]] : tensor<2x4x2x2x4xf32> -> tensor<2x4x4x4xf32>
// CHECK-NEXT:  %[[G:.*]] = l1.mul %[[HF4]], %[[SB4]] : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
// CHECK-NEXT:  %{{.*}} = l1.select %arg1, %[[G]], %{{.*}} : tensor<2x4x4x4xi1>, tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
l1.system @s2 {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {cores = 2, isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @poolgrad on @cpu_0 then @sink compute(%relu: tensor<2x4x4x4xf32>, %mask: tensor<2x4x4x4xi1>, %dy: tensor<2x4x2x4xf32>) {
  %zero = l1.const 0.0 : tensor<2x4x4x4xf32>
  %win = l1.reshape %relu : tensor<2x4x4x4xf32> -> tensor<2x4x2x2x4xf32>
  %wmax = l1.reduce_max %win axis 3 : tensor<2x4x2x2x4xf32> -> tensor<2x4x2x4xf32>
  %wb = l1.broadcast %wmax dims [0, 1, 2, 4] : tensor<2x4x2x4xf32> -> tensor<2x4x2x2x4xf32>
  %hit = l1.cmp eq, %win, %wb : tensor<2x4x2x2x4xf32>, tensor<2x4x2x2x4xf32> -> tensor<2x4x2x2x4xi1>
  %hf = l1.cast %hit : tensor<2x4x2x2x4xi1> -> tensor<2x4x2x2x4xf32>
  %n = l1.reduce_sum %hf axis 3 : tensor<2x4x2x2x4xf32> -> tensor<2x4x2x4xf32>
  %share = l1.div %dy, %n : tensor<2x4x2x4xf32>, tensor<2x4x2x4xf32> -> tensor<2x4x2x4xf32>
  %sb = l1.broadcast %share dims [0, 1, 2, 4] : tensor<2x4x2x4xf32> -> tensor<2x4x2x2x4xf32>
  %g = l1.mul %hf, %sb : tensor<2x4x2x2x4xf32>, tensor<2x4x2x2x4xf32> -> tensor<2x4x2x2x4xf32>
  %g4 = l1.reshape %g : tensor<2x4x2x2x4xf32> -> tensor<2x4x4x4xf32>
  %dx = l1.select %mask, %g4, %zero : tensor<2x4x4x4xi1>, tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
  l1.return %dx : tensor<2x4x4x4xf32>
}
l1.stage @sink on @cpu_0 process(%a: !l1.buf<@ram_0, tensor<2x4x4x4xf32>>) {
  l1.drop %a : !l1.buf<@ram_0, tensor<2x4x4x4xf32>>
  l1.end
}
l1.pipeline @p = @poolgrad
l1.pipeline @q = @sink
l1.schedule pipelines [@p, @q] actors [] pipeline_depth 1
