// RUN: synpl-opt %s -split-input-file --synpl-l0-tune-launch | FileCheck %s
// RUN: synpl-opt %s -split-input-file --synpl-l0-tune-launch --synpl-search-report 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// The tuned plan still lowers.
// RUN: synpl-opt %s -split-input-file --synpl-l0-tune-launch --synpl-convert-l0uop-to-nvvm | FileCheck %s --check-prefix=NVVM

// A row reduction as L1 -> L0 emits it, grid(1) block(rows): the search
// spreads it over SMs (global_x, 4 blocks of 32 on sm_80's 108 SMs).

// CHECK-LABEL: l0uop.kernel @rowsum
// CHECK-SAME: grid(4, 1, 1) block(32, 1, 1)
// CHECK: l0uop.range 0 to 128 over global_x : index
// CHECK: l0uop.range 0 to 256 : index

// REPORT: search L0 launch @rowsum: 7 enumerated, 0 rejected, 7 survived; winner: global_x grid(4,1,1) block(32,1,1)
// REPORT: local_x grid(1,1,1) block(128,1,1) [as emitted]

// NVVM: llvm.func @p_rowsum(
// NVVM: nvvm.read.ptx.sreg.ctaid.x
// NVVM: nvvm.read.ptx.sreg.tid.x
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev arena on device capacity 1MiB
  l0uop.slot @h pool @dev offset 0 size 131072 lifetime(0, 1) : !l0uop.buf<128x256xf32>
  l0uop.slot @s pool @dev offset 131072 size 512 lifetime(0, 1) : !l0uop.buf<128xf32>
  l0uop.kernel @rowsum inputs(%h = @h : !l0uop.buf<128x256xf32>) outputs(%s = @s : !l0uop.buf<128xf32>)
      grid(1, 1, 1) block(128, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 128 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %j = l0uop.range 0 to 256 : index
    %p = l0uop.index %h[%i, %j] : !l0uop.buf<128x256xf32>
    %v = l0uop.load %p : f32
    l0uop.end %j
    %sum = l0uop.reduce add %v over %j init %zero : f32
    %ps = l0uop.index %s[%i] : !l0uop.buf<128xf32>
    l0uop.store %ps, %sum : f32
    l0uop.end %i
  }
}

// -----

// group_x x local_x over 16 x 1000 (a thread per element, 16 blocks of
// 1000 on 108 SMs): the search spreads the rows' elements over more
// blocks; the inner RANGE's kind and the launch are rewritten together and
// the kernel verifies (L0.1).

// CHECK-LABEL: l0uop.kernel @bias
// CHECK-SAME: grid(32, 16, 1) block(32, 1, 1)
// CHECK: l0uop.range 0 to 16 over group_y
// CHECK: l0uop.range 0 to 1000 over global_x
l0uop.plan @q pipeline_depth 1 {
  l0uop.pool @dev arena on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 64000 lifetime(0, 1) : !l0uop.buf<16x1000xf32>
  l0uop.slot @b pool @dev offset 64000 size 4000 lifetime(0, 1) : !l0uop.buf<1000xf32>
  l0uop.kernel @bias inputs(%b = @b : !l0uop.buf<1000xf32>) outputs(%x = @x : !l0uop.buf<16x1000xf32>)
      grid(16, 1, 1) block(1000, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 16 over group_x : index
    %j = l0uop.range 0 to 1000 over local_x : index
    %pb = l0uop.index %b[%j] : !l0uop.buf<1000xf32>
    %bv = l0uop.load %pb : f32
    %px = l0uop.index %x[%i, %j] : !l0uop.buf<16x1000xf32>
    %xv = l0uop.load %px : f32
    %y = l0uop.add %xv, %bv : f32
    l0uop.store %px, %y : f32
    l0uop.end %j
    l0uop.end %i
  }
}

// -----

// Not remappable, kept as emitted: a BARRIER (threads meet), shared
// buffers, code outside the parallel RANGEs, a host kernel.

// CHECK-LABEL: l0uop.kernel @barrier
// CHECK-SAME: grid(1, 1, 1) block(64, 1, 1)
// CHECK: over local_x
// CHECK-LABEL: l0uop.kernel @outside
// CHECK-SAME: grid(1, 1, 1) block(64, 1, 1)
// CHECK-LABEL: l0uop.kernel @host
// CHECK-SAME: grid(1, 1, 1) block(64, 1, 1)
// REPORT-NOT: @barrier
// REPORT-NOT: @outside
// REPORT-NOT: @host
l0uop.plan @r pipeline_depth 1 {
  l0uop.pool @dev arena on device capacity 1MiB
  l0uop.pool @cpu arena on host capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 256 lifetime(0, 1) : !l0uop.buf<64xf32>
  l0uop.slot @y pool @cpu offset 0 size 256 lifetime(0, 1) : !l0uop.buf<64xf32>
  l0uop.kernel @barrier inputs() outputs(%x = @x : !l0uop.buf<64xf32>)
      grid(1, 1, 1) block(64, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 64 over local_x : index
    l0uop.barrier
    l0uop.end %i
  }
  l0uop.kernel @outside inputs() outputs(%x = @x : !l0uop.buf<64xf32>)
      grid(1, 1, 1) block(64, 1, 1) shared_mem 0 {
    %one = l0uop.const 1.0 : f32
    %i = l0uop.range 0 to 64 over local_x : index
    %p = l0uop.index %x[%i] : !l0uop.buf<64xf32>
    l0uop.store %p, %one : f32
    l0uop.end %i
  }
  l0uop.kernel @host inputs() outputs(%y = @y : !l0uop.buf<64xf32>)
      grid(1, 1, 1) block(64, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 64 over local_x : index
    %one = l0uop.const 1.0 : f32
    %p = l0uop.index %y[%i] : !l0uop.buf<64xf32>
    l0uop.store %p, %one : f32
    l0uop.end %i
  }
}
