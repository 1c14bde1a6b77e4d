// --synpl-convert-l0uop-to-ipu21 converts a plan whole or fails, naming the
// first item it cannot place, how many it could, and why; the module is
// left as it was.
// RUN: synpl-opt %s -split-input-file --synpl-convert-l0uop-to-ipu21 -verify-diagnostics
// RUN: not synpl-opt %s -split-input-file --synpl-convert-l0uop-to-ipu21 2>&1 | FileCheck %s
// RUN: not synpl-opt %s -split-input-file --synpl-convert-l0uop-to-ipu21="arch=ipu3" 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: not synpl-opt %S/Inputs/matmul-4096-f16.mlir --synpl-convert-l0uop-to-ipu21="tiles=1" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOFIT
// ARCH: error: unknown IPU 'ipu3'; known: ipu21, ipu2
// A 4096^3 product on one tile: the search says which check rejected what.
// NOFIT: error: search IPU21 tiles @mm: no candidates: all 1 candidates were rejected; 'tile-memory' rejected 1 (first: 1x1 grid of 4096x4096 blocks: a 4096x4096 block needs {{[0-9]+}} bytes per tile even in chunks of 16)


// A kernel whose threads share a block's scratch buffer: a tile's workers
// do not.
// CHECK: error: lowered 3 of 4 plan items; not lowered: kernel @shared at {{.*}}invalid.mlir:{{[0-9]+}}:{{[0-9]+}}: it shares buffers between the threads of a block; a tile's workers do not
// CHECK-NOT: ipu21.graph
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 64MiB
  l0uop.slot @x pool @dev offset 0 size 1024 lifetime(0, 0) : !l0uop.buf<256xf32>
  l0uop.slot @y pool @dev offset 1024 size 1024 lifetime(0, 0) : !l0uop.buf<256xf32>
  // expected-error @+1 {{lowered 3 of 4 plan items; not lowered: kernel @shared at}}
  l0uop.kernel @shared inputs(%x = @x : !l0uop.buf<256xf32>) outputs(%y = @y : !l0uop.buf<256xf32>) grid(16, 1, 1) block(16, 1, 1) shared_mem 64 shared(%t : !l0uop.buf<16xf32>) {
    %g = l0uop.range 0 to 16 over group_x : index
    %l = l0uop.range 0 to 16 over local_x : index
    %c16 = l0uop.const 16 : index
    %base = l0uop.mul %g, %c16 : index
    %i = l0uop.add %base, %l : index
    %px = l0uop.index %x[%i] : !l0uop.buf<256xf32>
    %v = l0uop.load %px : f32
    %pt = l0uop.index %t[%l] : !l0uop.buf<16xf32>
    l0uop.store %pt, %v : f32
    l0uop.barrier
    %w = l0uop.load %pt : f32
    %py = l0uop.index %y[%i] : !l0uop.buf<256xf32>
    l0uop.store %py, %w : f32
    l0uop.end %l
    l0uop.end %g
  }
}

// -----

// Vector lanes: a worker runs scalar UOps.
// CHECK: error: lowered 3 of 4 plan items; not lowered: kernel @lanes at {{.*}}: its 'l0uop.load' computes in vector<4xf32>, which an IPU worker does not (scalars: f32, f16, integers, index)
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 64MiB
  l0uop.slot @x pool @dev offset 0 size 1024 lifetime(0, 0) : !l0uop.buf<256xf32>
  l0uop.slot @y pool @dev offset 1024 size 1024 lifetime(0, 0) : !l0uop.buf<256xf32>
  // expected-error @+1 {{not lowered: kernel @lanes at}}
  l0uop.kernel @lanes inputs(%x = @x : !l0uop.buf<256xf32>) outputs(%y = @y : !l0uop.buf<256xf32>) grid(64, 1, 1) block(1, 1, 1) shared_mem 0 {
    %g = l0uop.range 0 to 64 over group_x : index
    %c4 = l0uop.const 4 : index
    %i = l0uop.mul %g, %c4 : index
    %px = l0uop.index %x[%i] : !l0uop.buf<256xf32>
    %v = l0uop.load %px : vector<4xf32>
    %py = l0uop.index %y[%i] : !l0uop.buf<256xf32>
    l0uop.store %py, %v : vector<4xf32>
    l0uop.end %g
  }
}

// -----

// A buffer of a type a tile does not store.
// CHECK: error: lowered 3 of 4 plan items; not lowered: kernel @wide at {{.*}}: buffer #0 holds bf16, which an IPU tile does not store (f32, f16, i32, 8-bit, i1)
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 64MiB
  l0uop.slot @x pool @dev offset 0 size 512 lifetime(0, 0) : !l0uop.buf<256xbf16>
  l0uop.slot @y pool @dev offset 1024 size 1024 lifetime(0, 0) : !l0uop.buf<256xf32>
  // expected-error @+1 {{not lowered: kernel @wide at}}
  l0uop.kernel @wide inputs(%x = @x : !l0uop.buf<256xbf16>) outputs(%y = @y : !l0uop.buf<256xf32>) grid(256, 1, 1) block(1, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 256 over group_x : index
    %px = l0uop.index %x[%i] : !l0uop.buf<256xbf16>
    %v = l0uop.load %px : bf16
    %f = l0uop.cast %v : bf16 to f32
    %py = l0uop.index %y[%i] : !l0uop.buf<256xf32>
    l0uop.store %py, %f : f32
    l0uop.end %i
  }
}

// -----

// A transfer that is neither a batch in nor a report out: a tile has one
// memory.
// CHECK: error: lowered 9 of 10 plan items; not lowered: transfer @t at {{.*}}: it moves @x to @y (h2d); the ipu21 sink streams only batches in (h2d from an ingest's slot) and reports out (d2h to a report's slot)
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 64MiB
  l0uop.slot @a pool @dev offset 0 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf16>
  l0uop.slot @b pool @dev offset 1024 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf16>
  l0uop.slot @c pool @dev offset 2048 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf32>
  l0uop.slot @bias pool @dev offset 3072 size 64 lifetime(0, 0) : !l0uop.buf<16xf32>
  l0uop.kernel @mm inputs(%a = @a : !l0uop.buf<16x16xf16>, %b = @b : !l0uop.buf<16x16xf16>, %bias = @bias : !l0uop.buf<16xf32>) outputs(%c = @c : !l0uop.buf<16x16xf32>) grid(16, 1, 1) block(16, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 16 over group_x : index
    %j = l0uop.range 0 to 16 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 16 : index
    %pa = l0uop.index %a[%i, %k] : !l0uop.buf<16x16xf16>
    %va = l0uop.load %pa : f16
    %fa = l0uop.cast %va : f16 to f32
    %pb = l0uop.index %b[%k, %j] : !l0uop.buf<16x16xf16>
    %vb = l0uop.load %pb : f16
    %fb = l0uop.cast %vb : f16 to f32
    %p = l0uop.mul %fa, %fb : f32
    l0uop.end %k
    %s = l0uop.reduce add %p over %k init %zero : f32
    %pc = l0uop.index %c[%i, %j] : !l0uop.buf<16x16xf32>
    l0uop.store %pc, %s : f32
    l0uop.end %j
    l0uop.end %i
  }
  l0uop.pool @host persistent on host capacity 1MiB
  l0uop.slot @x pool @host offset 0 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf32>
  l0uop.slot @y pool @dev offset 4096 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf32>
  // expected-error @+1 {{not lowered: transfer @t at}}
  l0uop.transfer @t @x -> @y h2d bytes 1024
}

// -----

// A stream that runs a kernel before the one listed before it.
// CHECK: error: lowered 7 of 8 plan items; not lowered: stream @s at {{.*}}: it runs its kernels in another order than the plan lists them
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 64MiB
  l0uop.slot @a pool @dev offset 0 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf16>
  l0uop.slot @b pool @dev offset 1024 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf16>
  l0uop.slot @c pool @dev offset 2048 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf32>
  l0uop.slot @bias pool @dev offset 3072 size 64 lifetime(0, 0) : !l0uop.buf<16xf32>
  l0uop.kernel @mm inputs(%a = @a : !l0uop.buf<16x16xf16>, %b = @b : !l0uop.buf<16x16xf16>, %bias = @bias : !l0uop.buf<16xf32>) outputs(%c = @c : !l0uop.buf<16x16xf32>) grid(16, 1, 1) block(16, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 16 over group_x : index
    %j = l0uop.range 0 to 16 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 16 : index
    %pa = l0uop.index %a[%i, %k] : !l0uop.buf<16x16xf16>
    %va = l0uop.load %pa : f16
    %fa = l0uop.cast %va : f16 to f32
    %pb = l0uop.index %b[%k, %j] : !l0uop.buf<16x16xf16>
    %vb = l0uop.load %pb : f16
    %fb = l0uop.cast %vb : f16 to f32
    %p = l0uop.mul %fa, %fb : f32
    l0uop.end %k
    %s = l0uop.reduce add %p over %k init %zero : f32
    %pc = l0uop.index %c[%i, %j] : !l0uop.buf<16x16xf32>
    l0uop.store %pc, %s : f32
    l0uop.end %j
    l0uop.end %i
  }
  l0uop.kernel @mm2 inputs(%a = @a : !l0uop.buf<16x16xf16>, %b = @b : !l0uop.buf<16x16xf16>, %bias = @bias : !l0uop.buf<16xf32>) outputs(%c = @c : !l0uop.buf<16x16xf32>) grid(16, 1, 1) block(16, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 16 over group_x : index
    %j = l0uop.range 0 to 16 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 16 : index
    %pa = l0uop.index %a[%i, %k] : !l0uop.buf<16x16xf16>
    %va = l0uop.load %pa : f16
    %fa = l0uop.cast %va : f16 to f32
    %pb = l0uop.index %b[%k, %j] : !l0uop.buf<16x16xf16>
    %vb = l0uop.load %pb : f16
    %fb = l0uop.cast %vb : f16 to f32
    %p = l0uop.mul %fa, %fb : f32
    l0uop.end %k
    %s = l0uop.reduce add %p over %k init %zero : f32
    %pc = l0uop.index %c[%i, %j] : !l0uop.buf<16x16xf32>
    l0uop.store %pc, %s : f32
    l0uop.end %j
    l0uop.end %i
  }
  // expected-error @+1 {{not lowered: stream @s at}}
  l0uop.stream @s [@mm2, @mm]
}
