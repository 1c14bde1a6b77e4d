// RUN: synpl-opt %s --split-input-file --synpl-l0-block-reduce | FileCheck %s
// RUN: synpl-opt %s --split-input-file --synpl-l0-block-reduce="device-only=false threads=64" | FileCheck %s --check-prefix=ALL

// Row sums and row maxima of a 100 x 300 device buffer, one thread per row:
// each row becomes a block of 256 threads (64 with threads=64) that share
// the loop, two shared buffers, eight halvings, and thread 0 finishing.
// CHECK-LABEL: l0uop.kernel @rows
// CHECK-SAME: grid(100, 1, 1) block(256, 1, 1) shared_mem 2048 shared(%[[S0:.*]] : !l0uop.buf<256xf32>, %[[S1:.*]] : !l0uop.buf<256xf32>)
// CHECK: %[[R:.*]] = l0uop.range 0 to 100 over group_x
// CHECK: %[[T:.*]] = l0uop.range 0 to 256 over local_x
// CHECK: %[[ROUND:.*]] = l0uop.range 0 to 2 : index
// CHECK: %[[IN:.*]] = l0uop.cmplt
// CHECK: l0uop.where %[[IN]]
// CHECK: l0uop.end %[[ROUND]]
// CHECK: l0uop.reduce add %{{.*}} over %[[ROUND]]
// CHECK: l0uop.reduce max %{{.*}} over %[[ROUND]]
// CHECK-COUNT-9: l0uop.barrier
// CHECK-NOT: l0uop.barrier
// CHECK: l0uop.if
// CHECK: l0uop.index %[[S0]][
// CHECK: l0uop.store
// CHECK: l0uop.endif
// CHECK: l0uop.end %[[T]]
// CHECK: l0uop.end %[[R]]
// ALL-LABEL: l0uop.kernel @rows
// ALL-SAME: grid(100, 1, 1) block(64, 1, 1) shared_mem 512
// ALL-COUNT-7: l0uop.barrier
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev arena on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 120000 lifetime(0, 0) : !l0uop.buf<100x300xf32>
  l0uop.slot @y pool @dev offset 120064 size 400 lifetime(0, 0) : !l0uop.buf<100xf32>
  l0uop.kernel @rows inputs(%x = @x : !l0uop.buf<100x300xf32>) outputs(%y = @y : !l0uop.buf<100xf32>)
      grid(1, 1, 1) block(100, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 100 over local_x : index
    %z = l0uop.const 0.0 : f32
    %m0 = l0uop.const -1.0e30 : f32
    %k = l0uop.range 0 to 300 : index
    %p = l0uop.index %x[%i, %k] : !l0uop.buf<100x300xf32>
    %v = l0uop.load %p : f32
    l0uop.end %k
    %s = l0uop.reduce add %v over %k init %z : f32
    %m = l0uop.reduce max %v over %k init %m0 : f32
    %d = l0uop.add %s, %m : f32
    %q = l0uop.index %y[%i] : !l0uop.buf<100xf32>
    l0uop.store %q, %d : f32
    l0uop.end %i
  }
  l0uop.stream @s0 [@rows]
}

// -----

// Host kernels stay loops unless device-only=false; a short loop stays.
// CHECK-LABEL: l0uop.kernel @host_rows
// CHECK-SAME: grid(1, 1, 1) block(8, 1, 1) shared_mem 0 {
// CHECK-LABEL: l0uop.kernel @short_rows
// CHECK-SAME: grid(1, 1, 1) block(8, 1, 1) shared_mem 0 {
// ALL-LABEL: l0uop.kernel @host_rows
// ALL-SAME: grid(8, 1, 1) block(64, 1, 1) shared_mem 256
// ALL-LABEL: l0uop.kernel @short_rows
// ALL-SAME: grid(1, 1, 1) block(8, 1, 1) shared_mem 0 {
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @host arena on host capacity 1MiB
  l0uop.pool @dev arena on device capacity 1MiB
  l0uop.slot @x pool @host offset 0 size 2048 lifetime(0, 0) : !l0uop.buf<8x64xf32>
  l0uop.slot @y pool @host offset 2048 size 32 lifetime(0, 0) : !l0uop.buf<8xf32>
  l0uop.slot @a pool @dev offset 0 size 512 lifetime(0, 0) : !l0uop.buf<8x16xf32>
  l0uop.slot @b pool @dev offset 512 size 32 lifetime(0, 0) : !l0uop.buf<8xf32>
  l0uop.kernel @host_rows inputs(%x = @x : !l0uop.buf<8x64xf32>) outputs(%y = @y : !l0uop.buf<8xf32>)
      grid(1, 1, 1) block(8, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 8 over local_x : index
    %z = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 64 : index
    %p = l0uop.index %x[%i, %k] : !l0uop.buf<8x64xf32>
    %v = l0uop.load %p : f32
    l0uop.end %k
    %s = l0uop.reduce add %v over %k init %z : f32
    %q = l0uop.index %y[%i] : !l0uop.buf<8xf32>
    l0uop.store %q, %s : f32
    l0uop.end %i
  }
  l0uop.kernel @short_rows inputs(%a = @a : !l0uop.buf<8x16xf32>) outputs(%b = @b : !l0uop.buf<8xf32>)
      grid(1, 1, 1) block(8, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 8 over local_x : index
    %z = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 16 : index
    %p = l0uop.index %a[%i, %k] : !l0uop.buf<8x16xf32>
    %v = l0uop.load %p : f32
    l0uop.end %k
    %s = l0uop.reduce add %v over %k init %z : f32
    %q = l0uop.index %b[%i] : !l0uop.buf<8xf32>
    l0uop.store %q, %s : f32
    l0uop.end %i
  }
  l0uop.stream @s0 [@host_rows, @short_rows]
}

// -----

// A whole-buffer reduction (no parallel RANGE: one thread) is one row: a
// single block whose threads share the loop; thread 0 stores.
// CHECK-LABEL: l0uop.kernel @whole
// CHECK-SAME: grid(1, 1, 1) block(256, 1, 1) shared_mem 1024 shared(
// CHECK-NOT: over group_x
// CHECK: %[[T:.*]] = l0uop.range 0 to 256 over local_x
// CHECK: l0uop.reduce add
// CHECK-COUNT-9: l0uop.endif
// CHECK-NEXT: l0uop.end %[[T]]
// CHECK-NEXT: }
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev arena on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 3136 lifetime(0, 0) : !l0uop.buf<784xf32>
  l0uop.slot @y pool @dev offset 3328 size 4 lifetime(0, 0) : !l0uop.buf<1xf32>
  l0uop.kernel @whole inputs(%x = @x : !l0uop.buf<784xf32>) outputs(%y = @y : !l0uop.buf<1xf32>)
      grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %z = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 784 : index
    %p = l0uop.index %x[%k] : !l0uop.buf<784xf32>
    %v = l0uop.load %p : f32
    l0uop.end %k
    %s = l0uop.reduce add %v over %k init %z : f32
    %c0 = l0uop.const 0 : index
    %q = l0uop.index %y[%c0] : !l0uop.buf<1xf32>
    l0uop.store %q, %s : f32
  }
  l0uop.stream @s0 [@whole]
}

// -----

// A REDUCE of indices stays a loop: a block-shared buffer holds integers
// or floats, not indices.
// CHECK-LABEL: l0uop.kernel @imax
// CHECK-SAME: grid(1, 1, 1) block(4, 1, 1) shared_mem 0 {
// ALL-LABEL: l0uop.kernel @imax
// ALL-SAME: grid(1, 1, 1) block(4, 1, 1) shared_mem 0 {
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev arena on device capacity 1MiB
  l0uop.slot @y pool @dev offset 0 size 32 lifetime(0, 0) : !l0uop.buf<4xi64>
  l0uop.kernel @imax inputs() outputs(%y = @y : !l0uop.buf<4xi64>)
      grid(1, 1, 1) block(4, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 4 over local_x : index
    %lo = l0uop.const -1000 : index
    %k = l0uop.range 0 to 40 : index
    %nk = l0uop.neg %k : index
    l0uop.end %k
    %m = l0uop.reduce max %nk over %k init %lo : index
    %v = l0uop.cast %m : index to i64
    %q = l0uop.index %y[%i] : !l0uop.buf<4xi64>
    l0uop.store %q, %v : i64
    l0uop.end %i
  }
  l0uop.stream @s0 [@imax]
}
