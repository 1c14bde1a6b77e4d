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

// An elementwise kernel: the generic vertex codelets do not exist yet.
// CHECK: error: lowered 5 of 6 plan items; not lowered: kernel @add at {{.*}}invalid.mlir:{{[0-9]+}}:{{[0-9]+}}: not a matrix product: the ipu21 sink lowers matmul kernels so far (elementwise and reduction kernels need the generic vertex codelets, not built yet)
// CHECK-NOT: ipu21.graph
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 64MiB
  l0uop.slot @a pool @dev offset 0 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf16>
  l0uop.slot @b pool @dev offset 1024 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf16>
  l0uop.slot @c pool @dev offset 2048 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf32>
  l0uop.slot @bias pool @dev offset 3072 size 64 lifetime(0, 0) : !l0uop.buf<16xf32>
  // expected-error @+1 {{lowered 5 of 6 plan items; not lowered: kernel @add at}}
  l0uop.kernel @add inputs(%x = @bias : !l0uop.buf<16xf32>) outputs(%y = @c : !l0uop.buf<16x16xf32>) grid(16, 1, 1) block(16, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 16 over group_x : index
    %j = l0uop.range 0 to 16 over local_x : index
    %px = l0uop.index %x[%j] : !l0uop.buf<16xf32>
    %vx = l0uop.load %px : f32
    %py = l0uop.index %y[%i, %j] : !l0uop.buf<16x16xf32>
    l0uop.store %py, %vx : f32
    l0uop.end %j
    l0uop.end %i
  }
}

// -----

// A product with a bias epilogue.
// CHECK: error: lowered 5 of 6 plan items; not lowered: kernel @mm_bias at {{.*}}: the epilogue's 'l0uop.index' needs the generic vertex codelets, not built yet
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 64MiB
  l0uop.slot @a pool @dev offset 0 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf16>
  l0uop.slot @b pool @dev offset 1024 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf16>
  l0uop.slot @c pool @dev offset 2048 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf32>
  l0uop.slot @bias pool @dev offset 3072 size 64 lifetime(0, 0) : !l0uop.buf<16xf32>
  // expected-error @+1 {{not lowered: kernel @mm_bias at}}
  l0uop.kernel @mm_bias inputs(%a = @a : !l0uop.buf<16x16xf16>, %b = @b : !l0uop.buf<16x16xf16>, %bias = @bias : !l0uop.buf<16xf32>) outputs(%c = @c : !l0uop.buf<16x16xf32>) grid(16, 1, 1) block(16, 1, 1) shared_mem 0 {
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
    %pbias = l0uop.index %bias[%j] : !l0uop.buf<16xf32>
    %vbias = l0uop.load %pbias : f32
    %sb = l0uop.add %s, %vbias : f32
    %pc = l0uop.index %c[%i, %j] : !l0uop.buf<16x16xf32>
    l0uop.store %pc, %sb : f32
    l0uop.end %j
    l0uop.end %i
  }
}

// -----

// A transposed operand.
// CHECK: error: lowered 5 of 6 plan items; not lowered: kernel @mm_at at {{.*}}: A is not read row-major [M][K] from its start (a transposed operand needs a transposing exchange, not built yet)
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 64MiB
  l0uop.slot @a pool @dev offset 0 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf16>
  l0uop.slot @b pool @dev offset 1024 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf16>
  l0uop.slot @c pool @dev offset 2048 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf32>
  l0uop.slot @bias pool @dev offset 3072 size 64 lifetime(0, 0) : !l0uop.buf<16xf32>
  // expected-error @+1 {{not lowered: kernel @mm_at at}}
  l0uop.kernel @mm_at inputs(%a = @a : !l0uop.buf<16x16xf16>, %b = @b : !l0uop.buf<16x16xf16>, %bias = @bias : !l0uop.buf<16xf32>) outputs(%c = @c : !l0uop.buf<16x16xf32>) grid(16, 1, 1) block(16, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 16 over group_x : index
    %j = l0uop.range 0 to 16 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 16 : index
    %pa = l0uop.index %a[%k, %i] : !l0uop.buf<16x16xf16>
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
}

// -----

// Host work: an ingest.
// CHECK: error: lowered 8 of 9 plan items; not lowered: l0uop.ingest at {{.*}}: the ipu21 sink does not do reading batches from the host yet
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
  // expected-error @+1 {{not lowered: l0uop.ingest at}}
  l0uop.ingest @read into [@x] from ["x.idx"] format "idx" batch 16 seed 0
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
