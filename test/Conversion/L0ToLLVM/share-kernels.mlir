// RUN: synpl-opt %s --synpl-convert-l0uop-to-llvm | FileCheck %s
// RUN: synpl-opt %s --synpl-convert-l0uop-to-llvm=share-kernels=false | FileCheck %s --check-prefix=OWN
// RUN: synpl-opt %s --synpl-convert-l0ctl-to-llvm --synpl-convert-l0uop-to-llvm --synpl-convert-l0-plan-to-llvm | FileCheck %s --check-prefix=PLAN

// Kernels with the same code share one function: @b is @a on other slots
// (the same pool), @c differs in a constant, @d binds a slot of a pool
// aligned to 16 (its function's llvm.align differs), @f has @a's body
// under other value names and locations.

// CHECK-LABEL: l0uop.plan @p
// CHECK: l0uop.kernel @a {{.*}} attributes {host_entry = @p_a, host_iterations = 4 : i64}
// CHECK: l0uop.kernel @b {{.*}} attributes {host_entry = @p_a, host_iterations = 4 : i64}
// CHECK: l0uop.kernel @c {{.*}} attributes {host_entry = @p_c, host_iterations = 4 : i64}
// CHECK: l0uop.kernel @d {{.*}} attributes {host_entry = @p_d, host_iterations = 4 : i64}
// CHECK: l0uop.kernel @f {{.*}} attributes {host_entry = @p_a, host_iterations = 4 : i64}
// CHECK-DAG: llvm.func @p_a(
// CHECK-DAG: llvm.func @p_c(
// CHECK-DAG: llvm.func @p_d(
// CHECK-NOT: llvm.func @p_b(
// CHECK-NOT: llvm.func @p_f(

// OWN: l0uop.kernel @a {{.*}}host_entry = @p_a
// OWN: l0uop.kernel @b {{.*}}host_entry = @p_b
// OWN: l0uop.kernel @f {{.*}}host_entry = @p_f
// OWN-DAG: llvm.func @p_b(
// OWN-DAG: llvm.func @p_f(

// One wrapper per function; the kernel table names it once per kernel.
// PLAN: llvm.func internal @p_a.packed(
// PLAN-NOT: llvm.func internal @p_b.packed(
// PLAN-NOT: llvm.func internal @p_f.packed(
// PLAN: llvm.mlir.global internal constant @synpl_plan_kernels() {{.*}} : !llvm.array<5 x ptr>
// PLAN-NEXT: llvm.mlir.undef
// PLAN-NEXT: llvm.mlir.addressof @p_a.packed
// PLAN-NEXT: llvm.insertvalue
// PLAN-NEXT: llvm.mlir.addressof @p_a.packed
// PLAN-NEXT: llvm.insertvalue
// PLAN-NEXT: llvm.mlir.addressof @p_c.packed
// PLAN-NEXT: llvm.insertvalue
// PLAN-NEXT: llvm.mlir.addressof @p_d.packed
// PLAN-NEXT: llvm.insertvalue
// PLAN-NEXT: llvm.mlir.addressof @p_a.packed

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @host persistent on host capacity 1KiB
  l0uop.pool @stage persistent on host capacity 1KiB align 16
  l0uop.slot @x pool @host offset 0 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
  l0uop.slot @y pool @host offset 256 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
  l0uop.slot @u pool @host offset 512 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
  l0uop.slot @v pool @host offset 768 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
  l0uop.slot @s pool @stage offset 0 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
  l0uop.kernel @a inputs(%x = @x : !l0uop.buf<4xf32>) outputs(%y = @y : !l0uop.buf<4xf32>) grid(1, 1, 1) block(4, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 4 over local_x : index
    %p = l0uop.index %x[%i] : !l0uop.buf<4xf32>
    %v = l0uop.load %p : f32
    %two = l0uop.const 2.0 : f32
    %r = l0uop.mul %v, %two : f32
    %q = l0uop.index %y[%i] : !l0uop.buf<4xf32>
    l0uop.store %q, %r : f32
    l0uop.end %i
  }
  l0uop.kernel @b inputs(%x = @u : !l0uop.buf<4xf32>) outputs(%y = @v : !l0uop.buf<4xf32>) grid(1, 1, 1) block(4, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 4 over local_x : index
    %p = l0uop.index %x[%i] : !l0uop.buf<4xf32>
    %v = l0uop.load %p : f32
    %two = l0uop.const 2.0 : f32
    %r = l0uop.mul %v, %two : f32
    %q = l0uop.index %y[%i] : !l0uop.buf<4xf32>
    l0uop.store %q, %r : f32
    l0uop.end %i
  }
  l0uop.kernel @c inputs(%x = @u : !l0uop.buf<4xf32>) outputs(%y = @v : !l0uop.buf<4xf32>) grid(1, 1, 1) block(4, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 4 over local_x : index
    %p = l0uop.index %x[%i] : !l0uop.buf<4xf32>
    %v = l0uop.load %p : f32
    %two = l0uop.const 3.0 : f32
    %r = l0uop.mul %v, %two : f32
    %q = l0uop.index %y[%i] : !l0uop.buf<4xf32>
    l0uop.store %q, %r : f32
    l0uop.end %i
  }
  l0uop.kernel @d inputs(%x = @s : !l0uop.buf<4xf32>) outputs(%y = @v : !l0uop.buf<4xf32>) grid(1, 1, 1) block(4, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 4 over local_x : index
    %p = l0uop.index %x[%i] : !l0uop.buf<4xf32>
    %v = l0uop.load %p : f32
    %two = l0uop.const 2.0 : f32
    %r = l0uop.mul %v, %two : f32
    %q = l0uop.index %y[%i] : !l0uop.buf<4xf32>
    l0uop.store %q, %r : f32
    l0uop.end %i
  }
  l0uop.kernel @f inputs(%in = @v : !l0uop.buf<4xf32>) outputs(%out = @x : !l0uop.buf<4xf32>) grid(1, 1, 1) block(4, 1, 1) shared_mem 0 {
    %row = l0uop.range 0 to 4 over local_x : index loc("elsewhere":3:1)
    %addr = l0uop.index %in[%row] : !l0uop.buf<4xf32>
    %val = l0uop.load %addr : f32
    %k = l0uop.const 2.0 : f32
    %res = l0uop.mul %val, %k : f32
    %dst = l0uop.index %out[%row] : !l0uop.buf<4xf32>
    l0uop.store %dst, %res : f32
    l0uop.end %row
  }
  l0uop.stream @s0 [@a, @b, @c, @d, @f]
  l0ctl.region @st size 16 access rw
  l0ctl.program @dispatch {
    l0ctl.terminate
  }
}
