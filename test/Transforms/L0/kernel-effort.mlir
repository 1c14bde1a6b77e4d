// RUN: synpl-opt %s --split-input-file --synpl-l0-kernel-effort | FileCheck %s
// RUN: synpl-opt %s --split-input-file --synpl-l0-kernel-effort='light-slowdown=1' | FileCheck %s --check-prefix=ROOF
// RUN: synpl-opt %s --split-input-file --synpl-l0-kernel-effort='hot-share=0.5 hot-level=2 light-level=0' | FileCheck %s --check-prefix=HALF
// RUN: synpl-opt %s --split-input-file --synpl-l0-kernel-effort='hot-share=1' | FileCheck %s --check-prefix=ALL
// RUN: synpl-opt %s --split-input-file --synpl-l0-kernel-effort='hot-share=0' | FileCheck %s --check-prefix=NONE
// RUN: not synpl-opt %s --split-input-file --synpl-l0-kernel-effort='light-level=4' 2>&1 | FileCheck %s --check-prefix=BADLEVEL
// RUN: not synpl-opt %s --split-input-file --synpl-l0-kernel-effort='hot-share=1.5' 2>&1 | FileCheck %s --check-prefix=BADSHARE
// RUN: not synpl-opt %s --split-input-file --synpl-l0-kernel-effort='light-slowdown=0.5' 2>&1 | FileCheck %s --check-prefix=BADSLOW

// Estimates with the default balance of 4 flop/B: @mm is compute-bound
// (2*64*64*64 = 524288 flop over 3 * 16 KiB touched), @big moves 64 KiB
// (4 * 65536 = 262144), @small 512 B (2048). Ranked @mm, @big, @small.
// @manual keeps the level it was given.

// By default a light kernel is taken to run 8 times its estimate: @small
// would take 16384 of 788480, more than the 1% the default hot-share
// leaves, so it is hot too.
// CHECK-LABEL: l0uop.plan @p
// CHECK: l0uop.kernel @mm {{.*}} attributes {opt_level = 3 : i32}
// CHECK: l0uop.kernel @big {{.*}} attributes {opt_level = 3 : i32}
// CHECK: l0uop.kernel @small {{.*}} attributes {opt_level = 3 : i32}
// CHECK: l0uop.kernel @manual {{.*}} attributes {opt_level = 0 : i32}
// CHECK: l0uop.kernel @gpu
// CHECK-NOT: opt_level
// CHECK: l0uop.stream

// At its estimate (light-slowdown=1), @small's 2048 fits the 1% (7885).
// ROOF-LABEL: l0uop.plan @p
// ROOF: l0uop.kernel @mm {{.*}} attributes {opt_level = 3 : i32}
// ROOF: l0uop.kernel @big {{.*}} attributes {opt_level = 3 : i32}
// ROOF: l0uop.kernel @small {{.*}} attributes {opt_level = 1 : i32}

// Half: @big and @small, 34% of the estimate, would take 270% at 8 times
// it, @small alone 2%: @small is the light one.
// HALF-LABEL: l0uop.plan @p
// HALF: l0uop.kernel @mm {{.*}} attributes {opt_level = 2 : i32}
// HALF: l0uop.kernel @big {{.*}} attributes {opt_level = 2 : i32}
// HALF: l0uop.kernel @small {{.*}} attributes {opt_level = 0 : i32}

// ALL: l0uop.kernel @mm {{.*}} attributes {opt_level = 3 : i32}
// ALL: l0uop.kernel @big {{.*}} attributes {opt_level = 3 : i32}
// ALL: l0uop.kernel @small {{.*}} attributes {opt_level = 3 : i32}

// NONE: l0uop.kernel @mm {{.*}} attributes {opt_level = 1 : i32}
// NONE: l0uop.kernel @big {{.*}} attributes {opt_level = 1 : i32}
// NONE: l0uop.kernel @small {{.*}} attributes {opt_level = 1 : i32}

// BADLEVEL: error: synpl-l0-kernel-effort: levels are 0 to 3, got hot-level=3 light-level=4
// BADSHARE: error: synpl-l0-kernel-effort: hot-share is 0 to 1, balance positive and light-slowdown at least 1, got hot-share=1.5 balance=4 light-slowdown=8
// BADSLOW: error: synpl-l0-kernel-effort: hot-share is 0 to 1, balance positive and light-slowdown at least 1, got hot-share=0.99 balance=4 light-slowdown=0.5

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @host persistent on host capacity 256KiB
  l0uop.pool @dev persistent on device capacity 1KiB
  l0uop.slot @a pool @host offset 0 size 16384 lifetime(0, 1) : !l0uop.buf<64x64xf32>
  l0uop.slot @b pool @host offset 16384 size 16384 lifetime(0, 1) : !l0uop.buf<64x64xf32>
  l0uop.slot @c pool @host offset 32768 size 16384 lifetime(0, 1) : !l0uop.buf<64x64xf32>
  l0uop.slot @x pool @host offset 65536 size 32768 lifetime(2, 3) : !l0uop.buf<8192xf32>
  l0uop.slot @y pool @host offset 98304 size 32768 lifetime(2, 3) : !l0uop.buf<8192xf32>
  l0uop.slot @s pool @host offset 131072 size 256 lifetime(4, 5) : !l0uop.buf<64xf32>
  l0uop.slot @t pool @host offset 131328 size 256 lifetime(4, 5) : !l0uop.buf<64xf32>
  l0uop.slot @d pool @dev offset 0 size 256 lifetime(0, 5) : !l0uop.buf<64xf32>
  l0uop.kernel @mm inputs(%a = @a : !l0uop.buf<64x64xf32>, %b = @b : !l0uop.buf<64x64xf32>)
      outputs(%c = @c : !l0uop.buf<64x64xf32>) grid(64, 1, 1) block(64, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 64 over group_x : index
    %j = l0uop.range 0 to 64 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 64 : index
    %pa = l0uop.index %a[%i, %k] : !l0uop.buf<64x64xf32>
    %va = l0uop.load %pa : f32
    %pb = l0uop.index %b[%k, %j] : !l0uop.buf<64x64xf32>
    %vb = l0uop.load %pb : f32
    %prod = l0uop.mul %va, %vb : f32
    l0uop.end %k
    %acc = l0uop.reduce add %prod over %k init %zero : f32
    %pc = l0uop.index %c[%i, %j] : !l0uop.buf<64x64xf32>
    l0uop.store %pc, %acc : f32
    l0uop.end %j
    l0uop.end %i
  }
  l0uop.kernel @big inputs(%x = @x : !l0uop.buf<8192xf32>) outputs(%y = @y : !l0uop.buf<8192xf32>)
      grid(32, 1, 1) block(256, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 8192 over global_x : index
    %px = l0uop.index %x[%i] : !l0uop.buf<8192xf32>
    %v = l0uop.load %px : f32
    %py = l0uop.index %y[%i] : !l0uop.buf<8192xf32>
    l0uop.store %py, %v : f32
    l0uop.end %i
  }
  l0uop.kernel @small inputs(%s = @s : !l0uop.buf<64xf32>) outputs(%t = @t : !l0uop.buf<64xf32>)
      grid(1, 1, 1) block(64, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 64 over global_x : index
    %ps = l0uop.index %s[%i] : !l0uop.buf<64xf32>
    %v = l0uop.load %ps : f32
    %pt = l0uop.index %t[%i] : !l0uop.buf<64xf32>
    l0uop.store %pt, %v : f32
    l0uop.end %i
  }
  l0uop.kernel @manual inputs(%s = @s : !l0uop.buf<64xf32>) outputs(%t = @t : !l0uop.buf<64xf32>)
      grid(1, 1, 1) block(64, 1, 1) shared_mem 0 attributes {opt_level = 0 : i32} {
    %i = l0uop.range 0 to 64 over global_x : index
    %ps = l0uop.index %s[%i] : !l0uop.buf<64xf32>
    %v = l0uop.load %ps : f32
    %pt = l0uop.index %t[%i] : !l0uop.buf<64xf32>
    l0uop.store %pt, %v : f32
    l0uop.end %i
  }
  l0uop.kernel @gpu inputs() outputs(%d = @d : !l0uop.buf<64xf32>)
      grid(1, 1, 1) block(64, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 64 over global_x : index
    %v = l0uop.const 1.0 : f32
    %pd = l0uop.index %d[%i] : !l0uop.buf<64xf32>
    l0uop.store %pd, %v : f32
    l0uop.end %i
  }
  l0uop.stream @st [@mm, @big, @small, @manual, @gpu]
}

// -----

// Kernels with the same code are compiled once, so they get one level:
// @r1, @r2 and @r3 (1024 each, 32 floats copied) rank as one of 3072,
// above @other (2048). At light-slowdown=1 the 1% of 267264 (2672) takes
// @other alone; ranked one by one, @r2 and @r3 would be the light ones.
// By default everything is hot (2048 x 8 is more than the 1%).
// CHECK-LABEL: l0uop.plan @same
// CHECK-COUNT-5: opt_level = 3
// ROOF-LABEL: l0uop.plan @same
// ROOF: l0uop.kernel @big {{.*}} attributes {opt_level = 3 : i32}
// ROOF: l0uop.kernel @r1 {{.*}} attributes {opt_level = 3 : i32}
// ROOF: l0uop.kernel @r2 {{.*}} attributes {opt_level = 3 : i32}
// ROOF: l0uop.kernel @r3 {{.*}} attributes {opt_level = 3 : i32}
// ROOF: l0uop.kernel @other {{.*}} attributes {opt_level = 1 : i32}

l0uop.plan @same pipeline_depth 1 {
  l0uop.pool @host persistent on host capacity 256KiB
  l0uop.slot @x pool @host offset 0 size 32768 lifetime(0, 1) : !l0uop.buf<8192xf32>
  l0uop.slot @y pool @host offset 32768 size 32768 lifetime(0, 1) : !l0uop.buf<8192xf32>
  l0uop.slot @s pool @host offset 65536 size 128 lifetime(2, 3) : !l0uop.buf<32xf32>
  l0uop.slot @t pool @host offset 65792 size 128 lifetime(2, 3) : !l0uop.buf<32xf32>
  l0uop.slot @u pool @host offset 66048 size 256 lifetime(4, 5) : !l0uop.buf<64xf32>
  l0uop.slot @w pool @host offset 66304 size 256 lifetime(4, 5) : !l0uop.buf<64xf32>
  l0uop.kernel @big inputs(%x = @x : !l0uop.buf<8192xf32>) outputs(%y = @y : !l0uop.buf<8192xf32>)
      grid(32, 1, 1) block(256, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 8192 over global_x : index
    %px = l0uop.index %x[%i] : !l0uop.buf<8192xf32>
    %v = l0uop.load %px : f32
    %py = l0uop.index %y[%i] : !l0uop.buf<8192xf32>
    l0uop.store %py, %v : f32
    l0uop.end %i
  }
  l0uop.kernel @r1 inputs(%s = @s : !l0uop.buf<32xf32>) outputs(%t = @t : !l0uop.buf<32xf32>)
      grid(1, 1, 1) block(32, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 32 over global_x : index
    %ps = l0uop.index %s[%i] : !l0uop.buf<32xf32>
    %v = l0uop.load %ps : f32
    %pt = l0uop.index %t[%i] : !l0uop.buf<32xf32>
    l0uop.store %pt, %v : f32
    l0uop.end %i
  }
  l0uop.kernel @r2 inputs(%s = @s : !l0uop.buf<32xf32>) outputs(%t = @t : !l0uop.buf<32xf32>)
      grid(1, 1, 1) block(32, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 32 over global_x : index
    %ps = l0uop.index %s[%i] : !l0uop.buf<32xf32>
    %v = l0uop.load %ps : f32
    %pt = l0uop.index %t[%i] : !l0uop.buf<32xf32>
    l0uop.store %pt, %v : f32
    l0uop.end %i
  }
  l0uop.kernel @r3 inputs(%s = @s : !l0uop.buf<32xf32>) outputs(%t = @t : !l0uop.buf<32xf32>)
      grid(1, 1, 1) block(32, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 32 over global_x : index
    %ps = l0uop.index %s[%i] : !l0uop.buf<32xf32>
    %v = l0uop.load %ps : f32
    %pt = l0uop.index %t[%i] : !l0uop.buf<32xf32>
    l0uop.store %pt, %v : f32
    l0uop.end %i
  }
  l0uop.kernel @other inputs(%u = @u : !l0uop.buf<64xf32>) outputs(%w = @w : !l0uop.buf<64xf32>)
      grid(1, 1, 1) block(64, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 64 over global_x : index
    %pu = l0uop.index %u[%i] : !l0uop.buf<64xf32>
    %v = l0uop.load %pu : f32
    %c = l0uop.const 2.0 : f32
    %m = l0uop.mul %v, %c : f32
    %pw = l0uop.index %w[%i] : !l0uop.buf<64xf32>
    l0uop.store %pw, %m : f32
    l0uop.end %i
  }
  l0uop.stream @st [@big, @r1, @r2, @r3, @other]
}
