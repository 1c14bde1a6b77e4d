// RUN: synpl-opt %s -split-input-file --synpl-convert-l0uop-to-nvvm | FileCheck %s

// Shared buffers: one dynamic shared array at 16-byte aligned offsets
// (1024 + 16 + 32 = 1072 bytes, the kernel's new shared_mem). Threads past
// 1000 are masked off: the guard is split at the barrier so that every
// thread of the block reaches bar.sync; the values the second phase reads
// (lane, 255) cross it through registers (one-element allocas).

// CHECK: l0uop.kernel @rev {{.*}} shared_mem 1072 shared({{.*}}) attributes {device_entry = "p_rev"}
// CHECK: llvm.mlir.global external @__synpl_dynamic_shared() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK-LABEL: llvm.func @p_rev(
// CHECK: %[[SH:.*]] = llvm.mlir.addressof @__synpl_dynamic_shared : !llvm.ptr<3>
// CHECK: %[[T:.*]] = llvm.addrspacecast %[[SH]] : !llvm.ptr<3> to !llvm.ptr
// CHECK: %[[IN:.*]] = llvm.icmp "ult"
// CHECK: llvm.cond_br %[[IN]], ^[[P0:.*]], ^[[B:.*]]
// CHECK: ^[[P0]]:
// CHECK: llvm.getelementptr %[[T]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: llvm.store
// CHECK: llvm.br ^[[B]]
// CHECK: ^[[B]]:
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: llvm.cond_br %[[IN]], ^[[P1:.*]], ^[[EXIT:.*]]
// CHECK: ^[[P1]]:
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK: llvm.getelementptr %[[T]]
// CHECK: ^[[EXIT]]:
// CHECK-NEXT: llvm.return
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 4000 lifetime(0, 1) : !l0uop.buf<1000xf32>
  l0uop.slot @y pool @dev offset 4096 size 4000 lifetime(0, 1) : !l0uop.buf<1000xf32>
  l0uop.kernel @rev inputs(%x = @x : !l0uop.buf<1000xf32>) outputs(%y = @y : !l0uop.buf<1000xf32>)
      grid(4, 1, 1) block(256, 1, 1) shared_mem 1100 shared(%t : !l0uop.buf<256xf32>, %u : !l0uop.buf<3xi8>, %w : !l0uop.buf<4xf64>) {
    %i = l0uop.range 0 to 1000 over global_x : index
    %c255 = l0uop.const 255 : index
    %c256 = l0uop.const 256 : index
    %lane = l0uop.mod %i, %c256 : index
    %px = l0uop.index %x[%i] : !l0uop.buf<1000xf32>
    %v = l0uop.load %px : f32
    %pt = l0uop.index %t[%lane] : !l0uop.buf<256xf32>
    l0uop.store %pt, %v : f32
    l0uop.barrier
    %nl = l0uop.neg %lane : index
    %rl = l0uop.add %c255, %nl : index
    %pr = l0uop.index %t[%rl] : !l0uop.buf<256xf32>
    %r = l0uop.load %pr : f32
    %py = l0uop.index %y[%i] : !l0uop.buf<1000xf32>
    l0uop.store %py, %r : f32
    l0uop.end %i
  }
}

// -----

// The third shared buffer sits at 16-byte aligned offset 48 (12 bytes, then
// 32, each rounded up to 16); a
// barrier outside any masking guard (exact cover) is a plain bar.sync, also
// in a loop.

// CHECK-LABEL: llvm.func @q_tile(
// CHECK: %[[SH:.*]] = llvm.mlir.addressof @__synpl_dynamic_shared
// CHECK: llvm.getelementptr %[[SH]][48] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NOT: llvm.icmp "ult"
// CHECK: ^[[LOOP:.*]](%{{.*}}: i64, %{{.*}}: f32):
// CHECK: nvvm.barrier0
// CHECK: nvvm.barrier0
l0uop.plan @q pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 1024 lifetime(0, 1) : !l0uop.buf<256xf32>
  l0uop.kernel @tile inputs() outputs(%x = @x : !l0uop.buf<256xf32>)
      grid(1, 1, 1) block(16, 1, 1) shared_mem 128
      shared(%a : !l0uop.buf<3xi32>, %b : !l0uop.buf<8xf32>, %c : !l0uop.buf<16xf32>) {
    %t = l0uop.range 0 to 16 over local_x : index
    %k = l0uop.range 0 to 16 : index
    %pc = l0uop.index %c[%t] : !l0uop.buf<16xf32>
    %one = l0uop.const 1.0 : f32
    l0uop.store %pc, %one : f32
    l0uop.barrier
    %v = l0uop.load %pc : f32
    l0uop.barrier
    l0uop.end %k
    %zero = l0uop.const 0.0 : f32
    %sum = l0uop.reduce add %v over %k init %zero : f32
    %px = l0uop.index %x[%t] : !l0uop.buf<256xf32>
    l0uop.store %px, %sum : f32
    l0uop.end %t
  }
}
