// RUN: synpl-opt %s --synpl-l1-sink-reshapes | FileCheck %s
// RUN: synpl-opt %s --synpl-l1-sink-reshapes | synpl-opt --synpl-l1-sink-reshapes | FileCheck %s
// RUN: synpl-opt %s --synpl-l1-sink-reshapes=summary 2>&1 >/dev/null | FileCheck %s --check-prefix=SUMMARY
// A convolution-like epilogue: the product plus bias is reshaped to
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

// SUMMARY: remark: 2 elementwise ops moved into their producers' shapes
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
