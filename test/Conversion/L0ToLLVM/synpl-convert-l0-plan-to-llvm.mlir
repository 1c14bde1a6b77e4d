// RUN: synpl-opt %s --synpl-convert-l0ctl-to-llvm --synpl-convert-l0uop-to-llvm --synpl-convert-l0-plan-to-llvm | FileCheck %s
// RUN: synpl-opt %s --synpl-convert-l0ctl-to-llvm --synpl-convert-l0uop-to-llvm --synpl-convert-l0-plan-to-llvm=main=false | FileCheck %s --check-prefix=NOMAIN
// RUN: not synpl-opt %s --synpl-convert-l0-plan-to-llvm 2>&1 | FileCheck %s --check-prefix=UNLOWERED

// The plan becomes tables; nothing of l0uop or l0ctl is left.
// CHECK-NOT: l0uop.
// CHECK-NOT: l0ctl.
// The table starts with the magic "SYNPLAN1" and version 7 (little-endian
// int64 words), then the name's string offset, the pipeline depth (1) and
// the training loop's defaults: epochs 0 (none: 1), checkpoint_every 0,
// evaluate -1 (none: t10k), device_arch and min_driver 0 (no CUDA kernel),
// steps 0 (the whole split), ranks 1 (one process).
// CHECK: llvm.mlir.global internal constant @synpl_plan_table(dense<"0x53594E504C414E310800000000000000{{[0-9A-F]+}}010000000000000000000000000000000000000000000000FFFFFFFFFFFFFFFF0000000000000000000000000000000000000000000000000100000000000000
// CHECK: llvm.mlir.global internal constant @synpl_plan_strings("host\00x\00y\00scale\00tx\00s0\00/d/train-images\00read0\00loss\00q\00st\00p_dispatch\00p\00")
// The kernels are called through one packed ABI.
// CHECK: llvm.func internal @p_scale.packed(%[[ARGS:.*]]: !llvm.ptr, %[[B:.*]]: i64, %[[E:.*]]: i64)
// CHECK:   %[[P0:.*]] = llvm.getelementptr %[[ARGS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK:   %[[X:.*]] = llvm.load %[[P0]] : !llvm.ptr -> !llvm.ptr
// CHECK:   %[[P1:.*]] = llvm.getelementptr %[[ARGS]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK:   %[[Y:.*]] = llvm.load %[[P1]] : !llvm.ptr -> !llvm.ptr
// CHECK:   llvm.call @p_scale(%[[X]], %[[Y]], %[[B]], %[[E]])
// CHECK: llvm.mlir.global internal constant @synpl_plan_kernels() {{.*}} : !llvm.array<1 x ptr>
// CHECK:   llvm.mlir.addressof @p_scale.packed
// CHECK: llvm.mlir.global internal constant @synpl_plan_programs() {{.*}} : !llvm.array<1 x ptr>
// CHECK:   llvm.mlir.addressof @p_dispatch
// CHECK: llvm.mlir.global external constant @synpl_plan() {{.*}} : !llvm.struct<(ptr, i64, ptr, i64, ptr, i64, ptr, i64, ptr, i64, ptr, i64)>
// CHECK: llvm.func @synpl_rt_main(i32, !llvm.ptr, !llvm.ptr) -> i32
// CHECK: llvm.func @main(%[[ARGC:.*]]: i32, %[[ARGV:.*]]: !llvm.ptr) -> i32
// CHECK:   %[[DESC:.*]] = llvm.mlir.addressof @synpl_plan : !llvm.ptr
// CHECK:   llvm.call @synpl_rt_main(%[[ARGC]], %[[ARGV]], %[[DESC]])

// NOMAIN: @synpl_plan()
// NOMAIN-NOT: llvm.func @main

// UNLOWERED: error: lowered 9 of 12 ops; not lowered: l0uop.kernel at {{.*}}: the kernel has no host function yet (run --synpl-convert-l0uop-to-llvm first)
// UNLOWERED: note: also not lowered: l0ctl.program: the control program is not lowered yet

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @host persistent on host capacity 1KiB
  l0uop.slot @x pool @host offset 0 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
  l0uop.slot @y pool @host offset 256 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
  l0uop.kernel @scale inputs(%x = @x : !l0uop.buf<4xf32>) outputs(%y = @y : !l0uop.buf<4xf32>) grid(1, 1, 1) block(4, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 4 over local_x : index
    %p = l0uop.index %x[%i] : !l0uop.buf<4xf32>
    %v = l0uop.load %p : f32
    %two = l0uop.const 2.0 : f32
    %r = l0uop.mul %v, %two : f32
    %q = l0uop.index %y[%i] : !l0uop.buf<4xf32>
    l0uop.store %q, %r : f32
    l0uop.end %i
  }
  l0uop.transfer @tx @x -> @y h2h bytes 16
  l0uop.stream @s0 [@tx, @scale]
  l0uop.init ones @x
  l0uop.ingest @read0 into [@x] from ["/d/train-images"] format "idx" batch 4 seed 0
  l0uop.report "loss" @y
  l0ctl.region @q size 64 access wo queue 8
  l0ctl.region @st size 16 access rw
  l0ctl.program @dispatch {
    %0 = l0ctl.load @st[0] : i64
    l0ctl.queue_push @q, %0 : i64
    l0ctl.terminate
  }
}
