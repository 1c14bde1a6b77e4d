// RUN: synpl-opt %s -split-input-file --synpl-convert-l0uop-to-nvvm | FileCheck %s
// RUN: synpl-opt %s -split-input-file --synpl-convert-l0uop-to-nvvm=keep-uops=true | FileCheck %s --check-prefix=KEEP
// A kept kernel is still lowered for the host (the test fallback).
// RUN: synpl-opt %s -split-input-file --synpl-convert-l0uop-to-nvvm=keep-uops=true --synpl-convert-l0uop-to-llvm | FileCheck %s --check-prefix=HOST

// global_x over 1000 iterations on 4 x 256 threads: ctaid*256 + tid, masked
// by `index < 1000`. The host kernel (a slot on the host) is left alone.

// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: l0uop.kernel @ew.1 {{.*}} grid(4, 1, 1) block(256, 1, 1) shared_mem 0 attributes {device_entry = "p_ew_1"} {
// CHECK-NEXT: }
// CHECK: l0uop.kernel @host_k
// CHECK-NEXT: l0uop.range 0 to 1000
// CHECK: gpu.module @p_cuda [#nvvm.target<chip = "sm_80", features = "+ptx70">] {
// CHECK-NOT: llvm.func @p_host_k
// CHECK: llvm.func @p_ew_1(%[[X:.*]]: !llvm.ptr {llvm.align = 256 : i64, llvm.noalias}, %[[Y:.*]]: !llvm.ptr {llvm.align = 256 : i64, llvm.noalias})
// CHECK-SAME: attributes {nvvm.kernel, nvvm.maxntid = array<i32: 256, 1, 1>}
// CHECK-DAG: %[[N:.*]] = llvm.mlir.constant(1000 : i64)
// CHECK-DAG: %[[B:.*]] = llvm.mlir.constant(256 : i64)
// CHECK: %[[CTA:.*]] = nvvm.read.ptx.sreg.ctaid.x : i32
// CHECK: %[[CTA64:.*]] = llvm.zext %[[CTA]] : i32 to i64
// CHECK: %[[BASE:.*]] = llvm.mul %[[CTA64]], %[[B]]
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[TID64:.*]] = llvm.zext %[[TID]] : i32 to i64
// CHECK: %[[I:.*]] = llvm.add %[[BASE]], %[[TID64]]
// CHECK: %[[IN:.*]] = llvm.icmp "ult" %[[I]], %[[N]]
// CHECK: llvm.cond_br %[[IN]], ^[[BODY:.*]], ^[[EXIT:.*]]
// CHECK: ^[[BODY]]:
// CHECK: llvm.getelementptr %[[X]][%[[I]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: llvm.fadd
// CHECK: llvm.getelementptr %[[Y]][%[[I]]]
// CHECK: llvm.store
// CHECK: llvm.br ^[[EXIT]]
// CHECK: ^[[EXIT]]:
// CHECK-NEXT: llvm.return

// KEEP: l0uop.kernel @ew.1 {{.*}} attributes {device_entry = "p_ew_1"} {
// KEEP-NEXT: l0uop.range 0 to 1000 over global_x

// HOST: l0uop.kernel @ew.1 {{.*}} attributes {device_entry = "p_ew_1", host_entry = @p_ew.1, host_iterations = 1000 : i64} {
// HOST: gpu.module @p_cuda
// HOST: llvm.func @p_ew_1(
// HOST: llvm.func @p_ew.1(
// HOST: llvm.func @p_host_k(
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.pool @host persistent on host capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 4000 lifetime(0, 1) : !l0uop.buf<1000xf32>
  l0uop.slot @y pool @dev offset 4096 size 4000 lifetime(0, 1) : !l0uop.buf<1000xf32>
  l0uop.slot @h pool @host offset 0 size 4000 lifetime(0, 1) : !l0uop.buf<1000xf32>
  l0uop.kernel @ew.1 inputs(%x = @x : !l0uop.buf<1000xf32>) outputs(%y = @y : !l0uop.buf<1000xf32>)
      grid(4, 1, 1) block(256, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 1000 over global_x : index
    %px = l0uop.index %x[%i] : !l0uop.buf<1000xf32>
    %v = l0uop.load %px : f32
    %w = l0uop.add %v, %v : f32
    %py = l0uop.index %y[%i] : !l0uop.buf<1000xf32>
    l0uop.store %py, %w : f32
    l0uop.end %i
  }
  l0uop.kernel @host_k inputs(%x = @h : !l0uop.buf<1000xf32>) outputs()
      grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 1000 : index
    l0uop.end %i
  }
  l0uop.stream @s [@ew.1, @host_k]
}

// -----

// group_y x local_x, exactly covered (no guard), lower and step applied:
// row = 2 + 3 * ctaid.y, col = tid.x; a loop RANGE carrying a REDUCE.

// CHECK-LABEL: gpu.module @q_cuda
// CHECK: llvm.func @q_rows(
// CHECK-DAG: %[[C3:.*]] = llvm.mlir.constant(3 : i64)
// CHECK-DAG: %[[C2:.*]] = llvm.mlir.constant(2 : i64)
// CHECK: %[[CTA:.*]] = nvvm.read.ptx.sreg.ctaid.y : i32
// CHECK: %[[R0:.*]] = llvm.zext %[[CTA]]
// CHECK: %[[R1:.*]] = llvm.mul %[[R0]], %[[C3]]
// CHECK: %[[ROW:.*]] = llvm.add %[[R1]], %[[C2]]
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[COL:.*]] = llvm.zext %[[TID]]
// CHECK-NOT: llvm.icmp "ult"
// The k loop: a phi carries the sum.
// CHECK: llvm.br ^[[HEAD:.*]](%{{.*}}, %{{.*}} : i64, f32)
// CHECK: ^[[HEAD]](%[[K:.*]]: i64, %[[ACC:.*]]: f32):
// CHECK: llvm.icmp "slt" %[[K]]
// CHECK: llvm.fadd %[[ACC]], %{{.*}} : f32
// CHECK: llvm.store
l0uop.plan @q pipeline_depth 1 {
  l0uop.pool @dev arena on device capacity 1MiB
  l0uop.slot @m pool @dev offset 0 size 65536 lifetime(0, 1) : !l0uop.buf<16x8x128xf32>
  l0uop.slot @s pool @dev offset 65536 size 4096 lifetime(0, 1) : !l0uop.buf<16x8xf32>
  l0uop.kernel @rows inputs(%m = @m : !l0uop.buf<16x8x128xf32>) outputs(%s = @s : !l0uop.buf<16x8xf32>)
      grid(1, 5, 1) block(8, 1, 1) shared_mem 0 {
    %r = l0uop.range 2 to 16 step 3 over group_y : index
    %c = l0uop.range 0 to 8 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 128 : index
    %p = l0uop.index %m[%r, %c, %k] : !l0uop.buf<16x8x128xf32>
    %v = l0uop.load %p : f32
    l0uop.end %k
    %sum = l0uop.reduce add %v over %k init %zero : f32
    %ps = l0uop.index %s[%r, %c] : !l0uop.buf<16x8xf32>
    l0uop.store %ps, %sum : f32
    l0uop.end %c
    l0uop.end %r
  }
}

// -----

// A STORE outside the RANGEs that map the block's 64 threads and the grid's
// 2 blocks runs on thread 0 of block 0 only; one inside `local_x` runs on
// block 0's threads only (group axis x unmapped).

// CHECK-LABEL: llvm.func @l_leader(
// CHECK: %[[T:.*]] = nvvm.read.ptx.sreg.tid.x
// CHECK: %[[T0:.*]] = llvm.icmp "eq" %[[T]], %{{.*}} : i32
// CHECK: %[[B:.*]] = nvvm.read.ptx.sreg.ctaid.x
// CHECK: %[[B0:.*]] = llvm.icmp "eq" %[[B]], %{{.*}} : i32
// CHECK: %[[BOTH:.*]] = llvm.and %[[T0]], %[[B0]]
// CHECK: llvm.cond_br %[[BOTH]]
// CHECK: llvm.store
// CHECK: nvvm.read.ptx.sreg.tid.x
// CHECK: %[[B2:.*]] = nvvm.read.ptx.sreg.ctaid.x
// CHECK: %[[B20:.*]] = llvm.icmp "eq" %[[B2]], %{{.*}} : i32
// CHECK-NEXT: llvm.cond_br %[[B20]]
// CHECK: llvm.store
l0uop.plan @l pipeline_depth 1 {
  l0uop.pool @dev arena on device capacity 1MiB
  l0uop.slot @o pool @dev offset 0 size 256 lifetime(0, 1) : !l0uop.buf<64xf32>
  l0uop.kernel @leader inputs() outputs(%o = @o : !l0uop.buf<64xf32>)
      grid(2, 1, 1) block(64, 1, 1) shared_mem 0 {
    %c0 = l0uop.const 0 : index
    %one = l0uop.const 1.0 : f32
    %p0 = l0uop.index %o[%c0] : !l0uop.buf<64xf32>
    l0uop.store %p0, %one : f32
    %i = l0uop.range 0 to 64 over local_x : index
    %p = l0uop.index %o[%i] : !l0uop.buf<64xf32>
    l0uop.store %p, %one : f32
    l0uop.end %i
  }
}

// -----

// Entry names: characters outside [A-Za-z0-9_] become `_`, made unique.

// CHECK: l0uop.kernel @"a-b" {{.*}}device_entry = "n_a_b"
// CHECK: l0uop.kernel @a.b {{.*}}device_entry = "n_a_b_1"
// CHECK: llvm.func @n_a_b(
// CHECK: llvm.func @n_a_b_1(
l0uop.plan @n pipeline_depth 1 {
  l0uop.pool @dev arena on device capacity 1MiB
  l0uop.slot @o pool @dev offset 0 size 256 lifetime(0, 1) : !l0uop.buf<64xf32>
  l0uop.kernel @"a-b" inputs() outputs(%o = @o : !l0uop.buf<64xf32>)
      grid(1, 1, 1) block(64, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 64 over local_x : index
    %one = l0uop.const 1.0 : f32
    %p = l0uop.index %o[%i] : !l0uop.buf<64xf32>
    l0uop.store %p, %one : f32
    l0uop.end %i
  }
  l0uop.kernel @a.b inputs() outputs(%o = @o : !l0uop.buf<64xf32>)
      grid(1, 1, 1) block(64, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 64 over local_x : index
    %one = l0uop.const 2.0 : f32
    %p = l0uop.index %o[%i] : !l0uop.buf<64xf32>
    l0uop.store %p, %one : f32
    l0uop.end %i
  }
}
