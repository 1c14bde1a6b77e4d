// Kernel scheduling & fusion of --synpl-l1-to-l0: elementwise ops over one
// iteration space fuse, a reduction is a kernel boundary, different
// iteration spaces do not fuse, movement ops are index arithmetic.
// RUN: synpl-opt %s -split-input-file --synpl-l1-to-l0 | FileCheck %s

// An elementwise chain over one iteration space is one kernel; its
// intermediates stay in registers (no arena slot, one store).
// CHECK-LABEL: l0uop.plan @sys_chain
// CHECK-NOT: @chain.t
// CHECK: l0uop.kernel @chain.k0
// CHECK: l0uop.exp2
// CHECK-COUNT-1: l0uop.store
// CHECK-NOT: l0uop.kernel
// CHECK: l0uop.stream @stream_0 [@chain.k0{{[^,]*}}]
l1.system @sys_chain {
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "1GB"}
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.tensor_graph @chain on @gpu_0 then @sink compute(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) {
  %a = l1.add %x, %y : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %b = l1.exp %a : tensor<4x8xf32> -> tensor<4x8xf32>
  %c = l1.mul %b, %a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %d = l1.tanh %c : tensor<4x8xf32> -> tensor<4x8xf32>
  l1.return %d : tensor<4x8xf32>
}
l1.stage @sink on @cpu_0 process(%c: !l1.buf<@gpu_0, tensor<4x8xf32>>) {
  l1.drop %c : !l1.buf<@gpu_0, tensor<4x8xf32>>
  l1.end
}

// -----

// A reduction splits: the row sums are a kernel of their own (the
// single-use exp feeding them is fused into the loop), stored to the arena,
// and read back through the broadcast by the kernel after them.
// CHECK-LABEL: l0uop.plan @sys_split
// CHECK: l0uop.slot @[[SUM:split.t[0-9]+_reduce_sum]] pool @split.arena {{.*}} : !l0uop.buf<4xf32>
// CHECK: l0uop.kernel @[[K0:split.k0[^ ]*]] inputs({{.*}}) outputs(%{{.*}} = @[[SUM]] : !l0uop.buf<4xf32>)
// CHECK: l0uop.range 0 to 8 : index
// CHECK: l0uop.exp2
// CHECK: l0uop.end
// CHECK: l0uop.reduce add
// CHECK: l0uop.kernel @[[K1:split.k1[^ ]*]] inputs({{.*}}@[[SUM]] : !l0uop.buf<4xf32>{{.*}}) outputs
// CHECK-NOT: l0uop.reduce
// CHECK: l0uop.stream @stream_0 [@[[K0]], @[[K1]]]
l1.system @sys_split {
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "1GB"}
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.tensor_graph @split on @gpu_0 then @sink compute(%x: tensor<4x8xf32>) {
  %e = l1.exp %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %s = l1.reduce_sum %e axis 1 : tensor<4x8xf32> -> tensor<4xf32>
  %sb = l1.broadcast %s dims [0] : tensor<4xf32> -> tensor<4x8xf32>
  %r = l1.div %x, %sb : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  l1.return %r : tensor<4x8xf32>
}
l1.stage @sink on @cpu_0 process(%c: !l1.buf<@gpu_0, tensor<4x8xf32>>) {
  l1.drop %c : !l1.buf<@gpu_0, tensor<4x8xf32>>
  l1.end
}

// -----

// Two iteration spaces do not fuse, even with no dependency between them.
// CHECK-LABEL: l0uop.plan @sys_spaces
// CHECK: l0uop.kernel @spaces.k0{{.*}} grid(4, 1, 1) block(8, 1, 1)
// CHECK: l0uop.kernel @spaces.k1{{.*}} grid(1, 1, 1) block(16, 1, 1)
// CHECK-NOT: l0uop.kernel
l1.system @sys_spaces {
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "1GB"}
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.tensor_graph @spaces on @gpu_0 then @sink compute(%x: tensor<4x8xf32>, %y: tensor<16xf32>) {
  %a = l1.neg %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %b = l1.sqrt %y : tensor<16xf32> -> tensor<16xf32>
  l1.return %a, %b : tensor<4x8xf32>, tensor<16xf32>
}
l1.stage @sink on @cpu_0 process(%a: !l1.buf<@gpu_0, tensor<4x8xf32>>, %b: !l1.buf<@gpu_0, tensor<16xf32>>) {
  l1.drop %a : !l1.buf<@gpu_0, tensor<4x8xf32>>
  l1.drop %b : !l1.buf<@gpu_0, tensor<16xf32>>
  l1.end
}

// -----

// A matmul is a RANGE nest folded by REDUCE; its elementwise consumer (the
// bias) fuses after it; the transpose is index arithmetic (no copy kernel).
// CHECK-LABEL: l0uop.plan @sys_linear
// CHECK: l0uop.kernel @linear.k0_matmul
// CHECK: %[[I:.*]] = l0uop.range 0 to 2 over group_x
// CHECK: %[[J:.*]] = l0uop.range 0 to 3 over local_x
// CHECK: %[[K:.*]] = l0uop.range 0 to 5 : index
// CHECK: l0uop.index %{{.*}}[%[[I]], %[[K]]] : !l0uop.buf<2x5xf32>
// CHECK: l0uop.index %{{.*}}[%[[J]], %[[K]]] : !l0uop.buf<3x5xf32>
// CHECK: l0uop.end %[[K]]
// CHECK: l0uop.reduce add %{{.*}} over %[[K]]
// CHECK: l0uop.add
// CHECK: l0uop.store
// CHECK-NOT: l0uop.kernel
l1.system @sys_linear {
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "1GB"}
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.tensor_graph @linear on @gpu_0 then @sink compute(%x: tensor<2x5xf32>, %wt: tensor<3x5xf32>, %b: tensor<3xf32>) {
  %w = l1.transpose %wt : tensor<3x5xf32> -> tensor<5x3xf32>
  %m = l1.matmul %x, %w : tensor<2x5xf32>, tensor<5x3xf32> -> tensor<2x3xf32>
  %bb = l1.broadcast %b : tensor<3xf32> -> tensor<2x3xf32>
  %y = l1.add %m, %bb : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  l1.return %y : tensor<2x3xf32>
}
l1.stage @sink on @cpu_0 process(%c: !l1.buf<@gpu_0, tensor<2x3xf32>>) {
  l1.drop %c : !l1.buf<@gpu_0, tensor<2x3xf32>>
  l1.end
}

// -----

// A max pool's mask (a compare with the pooled maximum, cast to floats),
// read by the window's count and by the gradient: recomputed in both from
// the activation and the maximum (the relu before it too) rather than
// stored once and read back twice, so no kernel or slot of its own.
// CHECK-LABEL: l0uop.plan @sys_mask
// CHECK-NOT: l0uop.slot @mask.t{{[0-9]+}}_c
// CHECK: l0uop.kernel @mask.k0_reduce_max
// CHECK: l0uop.kernel @mask.k1_reduce_sum inputs(%{{[^ ]*}} = @mask.in0 {{[^,]*}}, %{{[^ ]*}} = @mask.out0
// CHECK: l0uop.cmpne
// CHECK: l0uop.kernel @mask.k2_mul inputs(%{{[^ ]*}} = @mask.in0 {{[^,]*}}, %{{[^ ]*}} = @mask.out0
// CHECK: l0uop.cmpne
// CHECK: l0uop.stream @stream_0 [@mask.k0_reduce_max, @mask.k1_reduce_sum, @mask.k2_mul]
l1.system @sys_mask {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @mask on @cpu_0 then @sink compute(%x: tensor<4x8x2xf32>, %dy: tensor<4x8xf32>) {
  %zero = l1.const 0.0 : tensor<4x8x2xf32>
  %r = l1.max %x, %zero : tensor<4x8x2xf32>, tensor<4x8x2xf32> -> tensor<4x8x2xf32>
  %p = l1.reduce_max %r axis 2 : tensor<4x8x2xf32> -> tensor<4x8xf32>
  %pb = l1.broadcast %p dims [0, 1] : tensor<4x8xf32> -> tensor<4x8x2xf32>
  %hit = l1.cmp eq, %r, %pb : tensor<4x8x2xf32>, tensor<4x8x2xf32> -> tensor<4x8x2xi1>
  %m = l1.cast %hit : tensor<4x8x2xi1> -> tensor<4x8x2xf32>
  %n = l1.reduce_sum %m axis 2 : tensor<4x8x2xf32> -> tensor<4x8xf32>
  %share = l1.div %dy, %n : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %sb = l1.broadcast %share dims [0, 1] : tensor<4x8xf32> -> tensor<4x8x2xf32>
  %dx = l1.mul %m, %sb : tensor<4x8x2xf32>, tensor<4x8x2xf32> -> tensor<4x8x2xf32>
  l1.return %p, %dx : tensor<4x8xf32>, tensor<4x8x2xf32>
}
l1.stage @sink on @cpu_0 process(%a: !l1.buf<@ram_0, tensor<4x8xf32>>, %b: !l1.buf<@ram_0, tensor<4x8x2xf32>>) {
  l1.drop %a : !l1.buf<@ram_0, tensor<4x8xf32>>
  l1.drop %b : !l1.buf<@ram_0, tensor<4x8x2xf32>>
  l1.end
}
l1.pipeline @p = @mask
l1.pipeline @q = @sink
l1.schedule pipelines [@p, @q] actors [] pipeline_depth 1

// -----

// A bias add read by two consumers stays in the matmul's epilogue (its
// operand is computed there in registers): stored once, read by both.
// CHECK-LABEL: l0uop.plan @sys_epi
// CHECK: l0uop.kernel @epi.k0_matmul {{.*}} outputs(%{{[^ ]*}} = @[[ADD:epi.t[0-9]+_add]] :
// CHECK: l0uop.kernel @epi.k1_reduce_sum inputs(%{{[^ ]*}} = @[[ADD]] :
// CHECK: l0uop.kernel @epi.k2_sub inputs(%{{[^ ]*}} = @[[ADD]] :
l1.system @sys_epi {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @epi on @cpu_0 then @sink compute(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) {
  %h = l1.matmul %x, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %bb = l1.broadcast %b : tensor<8xf32> -> tensor<4x8xf32>
  %hb = l1.add %h, %bb : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  %s = l1.reduce_sum %hb axis 1 : tensor<4x8xf32> -> tensor<4xf32>
  %sb = l1.broadcast %s dims [0] : tensor<4xf32> -> tensor<4x8xf32>
  %d = l1.sub %hb, %sb : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  l1.return %d : tensor<4x8xf32>
}
l1.stage @sink on @cpu_0 process(%a: !l1.buf<@ram_0, tensor<4x8xf32>>) {
  l1.drop %a : !l1.buf<@ram_0, tensor<4x8xf32>>
  l1.end
}
l1.pipeline @p = @epi
l1.pipeline @q = @sink
l1.schedule pipelines [@p, @q] actors [] pipeline_depth 1

// -----

// The mask read through a reshape as well (a max pool's gradient moved into
// the ReLU's gradient's shape by --synpl-l1-fuse-across-reshapes): still one
// element per reader, so still recomputed in both the count and the
// product, which joins the select: two kernels, no slot for the mask or
// the product.
// CHECK-LABEL: l0uop.plan @sys_mask2
// CHECK-NOT: l0uop.slot @pg.t{{[0-9]+}}_c
// CHECK-NOT: l0uop.slot @pg.t{{[0-9]+}}_mul
// CHECK: l0uop.kernel @pg.k{{[0-9]+}}_reduce_sum
// CHECK: l0uop.kernel @pg.k{{[0-9]+}}_mul {{.*}} outputs(%{{[^ ]*}} = @pg.out0
// CHECK: l0uop.cmpne
// CHECK: l0uop.where
// CHECK: l0uop.stream @stream_0 [@pg.k{{[0-9]+}}_reduce_max, @pg.k{{[0-9]+}}_reduce_sum, @pg.k{{[0-9]+}}_mul]
l1.system @sys_mask2 {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @pg on @cpu_0 then @sink compute(%relu: tensor<2x4x4x4xf32>, %mask: tensor<2x4x4x4xi1>, %dy: tensor<2x4x2x4xf32>) {
  %zero = l1.const 0.0 : tensor<2x4x4x4xf32>
  %win = l1.reshape %relu : tensor<2x4x4x4xf32> -> tensor<2x4x2x2x4xf32>
  %wmax = l1.reduce_max %win axis 3 : tensor<2x4x2x2x4xf32> -> tensor<2x4x2x4xf32>
  %wb = l1.broadcast %wmax dims [0, 1, 2, 4] : tensor<2x4x2x4xf32> -> tensor<2x4x2x2x4xf32>
  %hit = l1.cmp eq, %win, %wb : tensor<2x4x2x2x4xf32>, tensor<2x4x2x2x4xf32> -> tensor<2x4x2x2x4xi1>
  %hf = l1.cast %hit : tensor<2x4x2x2x4xi1> -> tensor<2x4x2x2x4xf32>
  %n = l1.reduce_sum %hf axis 3 : tensor<2x4x2x2x4xf32> -> tensor<2x4x2x4xf32>
  %share = l1.div %dy, %n : tensor<2x4x2x4xf32>, tensor<2x4x2x4xf32> -> tensor<2x4x2x4xf32>
  %sb = l1.broadcast %share dims [0, 1, 2, 4] : tensor<2x4x2x4xf32> -> tensor<2x4x2x2x4xf32>
  %hf4 = l1.reshape %hf : tensor<2x4x2x2x4xf32> -> tensor<2x4x4x4xf32>
  %sb4 = l1.reshape %sb : tensor<2x4x2x2x4xf32> -> tensor<2x4x4x4xf32>
  %g = l1.mul %hf4, %sb4 : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
  %dx = l1.select %mask, %g, %zero : tensor<2x4x4x4xi1>, tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
  l1.return %dx : tensor<2x4x4x4xf32>
}
l1.stage @sink on @cpu_0 process(%a: !l1.buf<@ram_0, tensor<2x4x4x4xf32>>) {
  l1.drop %a : !l1.buf<@ram_0, tensor<2x4x4x4xf32>>
  l1.end
}
l1.pipeline @p = @pg
l1.pipeline @q = @sink
l1.schedule pipelines [@p, @q] actors [] pipeline_depth 1

// -----

// A 2 x 2 max pool: the maximum over the column pair, reshaped, then over
// the row pair. The first reduction (over 2) has one reader, the second:
// it runs as a loop nested in the second's loop, one kernel in all, with
// no slot for the column maxima. The mean's inner sum over 8 nests too;
// the sum over 9 stays a kernel of its own and is stored.
// CHECK-LABEL: l0uop.plan @sys_pool
// CHECK-NOT: l0uop.slot @pool.t{{[0-9]+}}_reduce_max
// CHECK: l0uop.slot @pool.t{{[0-9]+}}_reduce_sum {{.*}} : !l0uop.buf<2x3x4xf32>
// CHECK-NOT: l0uop.slot @pool.t{{[0-9]+}}_reduce_sum
// CHECK: l0uop.kernel @pool.k0_reduce_max inputs(%{{[^ ]*}} = @pool.in0 {{.*}}) outputs(%{{[^ ]*}} = @pool.out0
// CHECK: %[[ROWS:.*]] = l0uop.range 0 to 2 : index
// CHECK: %[[COLS:.*]] = l0uop.range 0 to 2 : index
// CHECK: l0uop.reduce max %{{.*}} over %[[COLS]]
// CHECK: l0uop.reduce max %{{.*}} over %[[ROWS]]
// CHECK: l0uop.kernel @pool.k1_reduce_mean
// CHECK: l0uop.range 0 to 8 : index
// CHECK: l0uop.kernel @pool.k2_reduce_sum
// CHECK: l0uop.range 0 to 9 : index
// CHECK: l0uop.kernel @pool.k3_reduce_sum
// CHECK: l0uop.stream @stream_0 [@pool.k0_reduce_max, @pool.k1_reduce_mean, @pool.k2_reduce_sum, @pool.k3_reduce_sum]
l1.system @sys_pool {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @pool on @cpu_0 then @sink compute(%x: tensor<2x4x4x3xf32>, %y: tensor<2x3x4x8xf32>, %z: tensor<2x3x4x9xf32>) {
  %w = l1.reshape %x : tensor<2x4x4x3xf32> -> tensor<2x4x2x2x3xf32>
  %cm = l1.reduce_max %w axis 3 : tensor<2x4x2x2x3xf32> -> tensor<2x4x2x3xf32>
  %h = l1.reshape %cm : tensor<2x4x2x3xf32> -> tensor<2x2x2x2x3xf32>
  %pm = l1.reduce_max %h axis 2 : tensor<2x2x2x2x3xf32> -> tensor<2x2x2x3xf32>
  %ys = l1.reduce_sum %y axis 3 : tensor<2x3x4x8xf32> -> tensor<2x3x4xf32>
  %ym = l1.reduce_mean %ys axis 2 : tensor<2x3x4xf32> -> tensor<2x3xf32>
  %zs = l1.reduce_sum %z axis 3 : tensor<2x3x4x9xf32> -> tensor<2x3x4xf32>
  %zt = l1.reduce_sum %zs axis 2 : tensor<2x3x4xf32> -> tensor<2x3xf32>
  l1.return %pm, %ym, %zt : tensor<2x2x2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
l1.stage @sink on @cpu_0 process(%a: !l1.buf<@ram_0, tensor<2x2x2x3xf32>>, %b: !l1.buf<@ram_0, tensor<2x3xf32>>, %c: !l1.buf<@ram_0, tensor<2x3xf32>>) {
  l1.drop %a : !l1.buf<@ram_0, tensor<2x2x2x3xf32>>
  l1.drop %b : !l1.buf<@ram_0, tensor<2x3xf32>>
  l1.drop %c : !l1.buf<@ram_0, tensor<2x3xf32>>
  l1.end
}
l1.pipeline @p = @pool
l1.pipeline @q = @sink
l1.schedule pipelines [@p, @q] actors [] pipeline_depth 1

// -----

// Sibling fusion: %h has no operand a kernel computes, so it joins a kernel
// of its iteration space, the one that already reads %a (the exp's), not
// the latest one (the matmul's), which would read %a a second time.
// CHECK-LABEL: l0uop.plan @sys_sibling
// CHECK: l0uop.kernel @sib.k0_exp inputs(%{{[^ ]*}} = @sib.in0 : {{[^)]*}}) outputs(%{{[^ ]*}} = @sib.out0 : {{[^,]*}}, %{{[^ ]*}} = @sib.out2
// CHECK: l0uop.kernel @sib.k1_matmul inputs(%{{[^ ]*}} = @sib.in2 : {{[^,]*}}, %{{[^ ]*}} = @sib.in3 : {{[^)]*}}) outputs(%{{[^ ]*}} = @sib.out1 : {{[^)]*}})
l1.system @sys_sibling {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @sib on @cpu_0 then @sink compute(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %p: tensor<4x3xf32>, %q: tensor<3x8xf32>) {
  %e = l1.exp %a : tensor<4x8xf32> -> tensor<4x8xf32>
  %mm = l1.matmul %p, %q : tensor<4x3xf32>, tensor<3x8xf32> -> tensor<4x8xf32>
  %h = l1.add %a, %b : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  l1.return %e, %mm, %h : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
l1.stage @sink on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4x8xf32>>, %y: !l1.buf<@ram_0, tensor<4x8xf32>>, %z: !l1.buf<@ram_0, tensor<4x8xf32>>) {
  l1.drop %x : !l1.buf<@ram_0, tensor<4x8xf32>>
  l1.drop %y : !l1.buf<@ram_0, tensor<4x8xf32>>
  l1.drop %z : !l1.buf<@ram_0, tensor<4x8xf32>>
  l1.end
}
l1.pipeline @p = @sib
l1.pipeline @q = @sink
l1.schedule pipelines [@p, @q] actors [] pipeline_depth 1
