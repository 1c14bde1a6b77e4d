// RUN: synpl-opt %s -split-input-file --synpl-convert-l0uop-to-ipu21="tiles=4" | FileCheck %s
// Kernels that are not bare products run on the generic (uop) codelet: the
// kernel's body becomes the codelet, its parallel RANGEs are spread over
// tiles, and each tile's windows of the buffers are bound in place or
// exchanged in and out (docs/ipu21.md). Numbers: layer.test.
// A broadcast: every row of C is the bias. The four tiles take four
// columns each (the rows are C's longer RANGE, left whole for each worker
// to cut); C's home is where each tile writes: its columns, run by run, so
// every field is bound in place and nothing is exchanged.
// CHECK-LABEL: ipu21.graph @p
// CHECK: ipu21.codelet @add.codelet uop fields ["bias", "c"] inputs 1 code {{[0-9]+}} at
// CHECK-NEXT: ^bb0(%[[BIAS:.*]]: !l0uop.buf<16xf32>, %[[C:.*]]: !l0uop.buf<16x16xf32>):
// CHECK: l0uop.index %[[BIAS]][
// CHECK: ipu21.tensor @c : tensor<16x16xf32> mapping {0: [0, 4) [16, 20) [32, 36)
// CHECK-SAME: 3: [12, 16) [28, 32)
// CHECK-NOT: ipu21.exchange
// CHECK: ipu21.compute_set @add {
// CHECK-NEXT: ipu21.vertex @add.codelet on tiles [0, 1) (bias = @bias[0, 4), c = @c[0, 64)) params(bias_ext0 = 4, bias_lo0 = 0, c_ext0 = 16, c_ext1 = 4, c_lo0 = 0, c_lo1 = 0, p0_hi = 16, p0_lo = 0, p1_hi = 4, p1_lo = 0)
// CHECK: ipu21.vertex @add.codelet on tiles [3, 4) (bias = @bias[0, 4), c = @c[0, 64)) params(bias_ext0 = 4, bias_lo0 = 12, c_ext0 = 16, c_ext1 = 4, c_lo0 = 0, c_lo1 = 12, p0_hi = 16, p0_lo = 0, p1_hi = 16, p1_lo = 12)
// CHECK-NEXT: }
// CHECK: ipu21.program @main {
// CHECK-NEXT: ipu21.execute @add
// CHECK-NEXT: ipu21.sync
// CHECK-NEXT: }
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 64MiB
  l0uop.slot @a pool @dev offset 0 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf16>
  l0uop.slot @b pool @dev offset 1024 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf16>
  l0uop.slot @c pool @dev offset 2048 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf32>
  l0uop.slot @bias pool @dev offset 3072 size 64 lifetime(0, 0) : !l0uop.buf<16xf32>
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

// A product with a bias epilogue: the product runs on the AMP into a C of
// its own (its grid), the bias on the generic codelet, reading that C as
// the fold's one partial (the search's other options fold on the workers).
// CHECK-LABEL: ipu21.graph @p
// CHECK: ipu21.codelet @mm_bias.epilogue.codelet uop fields ["a", "b", "bias", "partials0", "c"] inputs 4
// CHECK: ipu21.tensor @mm_bias.product.c : tensor<16x16xf32> mapping grid(
// CHECK: ipu21.codelet @amp_matmul_f16_f32 amp_matmul(f16 -> f32)
// CHECK: ipu21.exchange @mm_bias.epilogue.in
// CHECK-NEXT: ipu21.send @mm_bias.product.c[0, 4) rows 16 stride 16 to @mm_bias.epilogue.partials0[0, 64) on tiles [0, 1)
// CHECK: ipu21.program @main {
// CHECK-NEXT: ipu21.execute @mm_bias.product.zero
// CHECK: ipu21.execute @mm_bias.product.mm
// CHECK: ipu21.copy @mm_bias.epilogue.in
// CHECK-NEXT: ipu21.sync
// CHECK-NEXT: ipu21.execute @mm_bias.epilogue
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 64MiB
  l0uop.slot @a pool @dev offset 0 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf16>
  l0uop.slot @b pool @dev offset 1024 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf16>
  l0uop.slot @c pool @dev offset 2048 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf32>
  l0uop.slot @bias pool @dev offset 3072 size 64 lifetime(0, 0) : !l0uop.buf<16xf32>
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

// A product reading A transposed, with a buffer its body never indexes: A
// is transposed on the workers into a tensor of its own, the product runs
// on the AMP; the epilogue's fields that its body never indexes (A, B, the
// bias) bind a place and nothing is sent for them.
// CHECK-LABEL: ipu21.graph @p
// CHECK: ipu21.codelet @mm_at.epilogue.codelet uop
// CHECK: ipu21.codelet @mm_at.a_t.codelet uop fields ["src", "dst"] inputs 1
// CHECK: ipu21.tensor @mm_at.a_transposed : tensor<16x16xf16>
// CHECK: ipu21.exchange @mm_at.epilogue.in
// CHECK-NOT: @bias[
// CHECK: }
// CHECK: ipu21.compute_set @mm_at.epilogue
// CHECK: ipu21.program @main {
// CHECK-NEXT: ipu21.copy @mm_at.a_t.in
// CHECK-NEXT: ipu21.sync
// CHECK-NEXT: ipu21.execute @mm_at.a_t
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 64MiB
  l0uop.slot @a pool @dev offset 0 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf16>
  l0uop.slot @b pool @dev offset 1024 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf16>
  l0uop.slot @c pool @dev offset 2048 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf32>
  l0uop.slot @bias pool @dev offset 3072 size 64 lifetime(0, 0) : !l0uop.buf<16xf32>
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

// A mask: an i1 buffer is stored one byte per element.
// CHECK-LABEL: ipu21.graph @p
// CHECK: ipu21.codelet @mask.codelet uop fields ["x", "m"] inputs 1
// CHECK-NEXT: ^bb0(%{{.*}}: !l0uop.buf<256xf32>, %{{.*}}: !l0uop.buf<256xi1>):
// CHECK: ipu21.tensor @m : tensor<256xui8> mapping {0: [0, 64), 1: [64, 128), 2: [128, 192), 3: [192, 256)}
// CHECK: ipu21.vertex @mask.codelet on tiles [0, 1) (x = @x[0, 64), m = @m[0, 64))
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 64MiB
  l0uop.slot @x pool @dev offset 0 size 1024 lifetime(0, 0) : !l0uop.buf<256xf32>
  l0uop.slot @m pool @dev offset 1024 size 256 lifetime(0, 0) : !l0uop.buf<256xi1>
  l0uop.kernel @mask inputs(%x = @x : !l0uop.buf<256xf32>) outputs(%m = @m : !l0uop.buf<256xi1>) grid(256, 1, 1) block(1, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 256 over group_x : index
    %px = l0uop.index %x[%i] : !l0uop.buf<256xf32>
    %v = l0uop.load %px : f32
    %z = l0uop.const 0.0 : f32
    %c = l0uop.cmplt %z, %v : f32
    %pm = l0uop.index %m[%i] : !l0uop.buf<256xi1>
    l0uop.store %pm, %c : i1
    l0uop.end %i
  }
}
