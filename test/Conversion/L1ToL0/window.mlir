// The window ops (Patterns/Window.cpp) are kernels of their own: unfold
// stores the windows a convolution's matmul reads as plain rows (clamping
// the index and zeroing what falls in the padding); fold sums the kernel
// offsets back, unrolled, testing divisibility by the stride.
// RUN: synpl-opt %s -split-input-file --synpl-l1-to-l0-pipeline | FileCheck %s

// Padding 1: each spatial index is clamped into the input and guarded.
// CHECK-LABEL: l0uop.plan @sys_pad
// CHECK: l0uop.kernel @g.k0_unfold inputs(%[[X:.*]] = @g.in0 : !l0uop.buf<2x3x5x5xf32>) outputs(%{{.*}} = @g.t0_unfold : !l0uop.buf<1350xf32>)
// CHECK: l0uop.mulacc
// CHECK: l0uop.cmplt
// CHECK: l0uop.index %[[X]]
// CHECK: l0uop.where
// The matmul reads the stored windows as rows: one linear index.
// CHECK: l0uop.kernel @g.k1_matmul inputs(%[[P:.*]] = @g.t0_unfold : !l0uop.buf<1350xf32>
// CHECK-NOT: l0uop.div
// CHECK: l0uop.reduce add
l1.system @sys_pad {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%x: tensor<2x3x5x5xf32>, %w: tensor<27x4xf32>) {
  %p = l1.unfold %x kernel [3, 3] stride [1, 1] padding [1, 1] : tensor<2x3x5x5xf32> -> tensor<2x5x5x3x3x3xf32>
  %rows = l1.reshape %p : tensor<2x5x5x3x3x3xf32> -> tensor<50x27xf32>
  %z = l1.matmul %rows, %w : tensor<50x27xf32>, tensor<27x4xf32> -> tensor<50x4xf32>
  l1.return %z : tensor<50x4xf32>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<50x4xf32>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<50x4xf32>>
  l1.end
}

// -----

// No padding: the window never leaves the input; no guard, no clamp.
// CHECK-LABEL: l0uop.plan @sys_nopad
// CHECK: l0uop.kernel @g.k0_unfold
// CHECK-NOT: l0uop.where
// CHECK-NOT: l0uop.cmplt
// CHECK: l0uop.stream
l1.system @sys_nopad {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%x: tensor<2x3x8xf32>) {
  %p = l1.unfold %x kernel [3] stride [2] padding [0] : tensor<2x3x8xf32> -> tensor<2x3x3x3xf32>
  l1.return %p : tensor<2x3x3x3xf32>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<2x3x3x3xf32>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<2x3x3x3xf32>>
  l1.end
}

// -----

// Fold with stride 2: each of the 3 kernel offsets tests that i + padding
// - k divides by the stride (MOD), then reads window (i + padding - k) / 2.
// CHECK-LABEL: l0uop.plan @sys_fold
// CHECK: l0uop.kernel @g.k0_fold inputs(%{{.*}} = @g.in0 : !l0uop.buf<2x4x3x3xf32>) outputs(%{{.*}} = @g.out0 : !l0uop.buf<2x3x8xf32>)
// CHECK-COUNT-3: l0uop.mod
// CHECK: l0uop.stream
l1.system @sys_fold {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%p: tensor<2x4x3x3xf32>) {
  %x = l1.fold %p kernel [3] stride [2] padding [1] : tensor<2x4x3x3xf32> -> tensor<2x3x8xf32>
  l1.return %x : tensor<2x3x8xf32>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<2x3x8xf32>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<2x3x8xf32>>
  l1.end
}

// -----

// Channels last: the channel is the lanes' range (local_x), the innermost
// index of the input, the windows and the sums alike.
// CHECK-LABEL: l0uop.plan @sys_last
// CHECK: l0uop.kernel @g.k0_unfold inputs(%[[X:.*]] = @g.in0 : !l0uop.buf<2x5x5x8xf32>) outputs(%[[P:.*]] = @g.t0_unfold : !l0uop.buf<2x5x5x3x3x8xf32>)
// CHECK: %[[C:.*]] = l0uop.range 0 to 8 over local_x
// CHECK: l0uop.index %[[X]][%{{.*}}, %{{.*}}, %{{.*}}, %[[C]]]
// CHECK: l0uop.index %[[P]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C]]]
// CHECK: l0uop.kernel @g.k1_fold inputs(%[[W:.*]] = @g.t0_unfold : !l0uop.buf<2x5x5x3x3x8xf32>) outputs(%[[F:.*]] = @g.out0 : !l0uop.buf<2x5x5x8xf32>)
// CHECK: %[[D:.*]] = l0uop.range 0 to 8 over local_x
// CHECK-COUNT-9: l0uop.index %[[W]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[D]]]
// CHECK: l0uop.index %[[F]][%{{.*}}, %{{.*}}, %{{.*}}, %[[D]]]
l1.system @sys_last {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%x: tensor<2x5x5x8xf32>) {
  %p = l1.unfold %x kernel [3, 3] stride [1, 1] padding [1, 1] channels_last : tensor<2x5x5x8xf32> -> tensor<2x5x5x3x3x8xf32>
  %f = l1.fold %p kernel [3, 3] stride [1, 1] padding [1, 1] channels_last : tensor<2x5x5x3x3x8xf32> -> tensor<2x5x5x8xf32>
  l1.return %f : tensor<2x5x5x8xf32>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<2x5x5x8xf32>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<2x5x5x8xf32>>
  l1.end
}
