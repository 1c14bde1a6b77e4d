// RUN: synpl-opt %s | synpl-opt | FileCheck %s
// RUN: synpl-opt %s -mlir-print-op-generic | synpl-opt | FileCheck %s
// The generic codelet: a UOp body (y[i, j] = x[i, j] * s[i] + b[j]) run on
// two tiles, each over its row of the parallel RANGE, with its fields bound
// to windows of the body's buffers (row i of x and y, element i of s, all
// of b). It passes every check.

// CHECK-LABEL: ipu21.graph @rows
ipu21.graph @rows target #ipu21.target<arch = "ipu21", tiles = 1472,
    bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000,
    sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272,
    rpt_count_max = 65535> {
  ipu21.tensor @x : tensor<2x4xf32> mapping {0: [0, 4), 1: [4, 8)} at 0x80000
  ipu21.tensor @s : tensor<2xf32> mapping {0: [0, 1), 1: [1, 2)} at 0x80040
  ipu21.tensor @y : tensor<2x4xf32> mapping {0: [0, 4), 1: [4, 8)} at 0x80080
  ipu21.buffer @b_in : 4 x f32 on tiles [0, 2) at 0x800C0
  ipu21.tensor @b : tensor<4xf32> mapping {2: [0, 4)} at 0x80000
  // CHECK: ipu21.codelet @affine uop fields ["x", "s", "b", "y"] inputs 3 code 512 at 0x4C000 {
  // CHECK-NEXT: ^bb0(%[[X:.*]]: !l0uop.buf<2x4xf32>, %{{.*}}: !l0uop.buf<2xf32>, %{{.*}}: !l0uop.buf<4xf32>, %{{.*}}: !l0uop.buf<2x4xf32>):
  // CHECK: l0uop.range 0 to 2 over group_x : index
  // CHECK: l0uop.index %[[X]][
  ipu21.codelet @affine uop fields ["x", "s", "b", "y"] inputs 3 code 512 at 0x4C000 {
  ^bb0(%x: !l0uop.buf<2x4xf32>, %s: !l0uop.buf<2xf32>, %b: !l0uop.buf<4xf32>, %y: !l0uop.buf<2x4xf32>):
    %i = l0uop.range 0 to 2 over group_x : index
    %j = l0uop.range 0 to 4 : index
    %px = l0uop.index %x[%i, %j] : !l0uop.buf<2x4xf32>
    %vx = l0uop.load %px : f32
    %ps = l0uop.index %s[%i] : !l0uop.buf<2xf32>
    %vs = l0uop.load %ps : f32
    %pb = l0uop.index %b[%j] : !l0uop.buf<4xf32>
    %vb = l0uop.load %pb : f32
    %v = l0uop.mulacc %vx, %vs, %vb : f32
    %py = l0uop.index %y[%i, %j] : !l0uop.buf<2x4xf32>
    l0uop.store %py, %v : f32
    l0uop.end %j
    l0uop.end %i
  }
  ipu21.compute_set @step {
    // CHECK: ipu21.vertex @affine on tiles [0, 1) (x = @x[0, 4), s = @s[0, 1), b = @b_in[0, 4), y = @y[0, 4))
    // CHECK-SAME: params(b_ext0 = 4, b_lo0 = 0, p0_hi = 1, p0_lo = 0, s_ext0 = 1, s_lo0 = 0, x_ext0 = 1, x_ext1 = 4, x_lo0 = 0, x_lo1 = 0, y_ext0 = 1, y_ext1 = 4, y_lo0 = 0, y_lo1 = 0)
    ipu21.vertex @affine on tiles [0, 1) (x = @x[0, 4), s = @s[0, 1), b = @b_in[0, 4), y = @y[0, 4))
        params(p0_lo = 0, p0_hi = 1, x_lo0 = 0, x_ext0 = 1, x_lo1 = 0, x_ext1 = 4, s_lo0 = 0,
               s_ext0 = 1, b_lo0 = 0, b_ext0 = 4, y_lo0 = 0, y_ext0 = 1, y_lo1 = 0, y_ext1 = 4)
        state at 0x4C200
    ipu21.vertex @affine on tiles [1, 2) (x = @x[0, 4), s = @s[0, 1), b = @b_in[0, 4), y = @y[0, 4))
        params(p0_lo = 1, p0_hi = 2, x_lo0 = 1, x_ext0 = 1, x_lo1 = 0, x_ext1 = 4, s_lo0 = 1,
               s_ext0 = 1, b_lo0 = 0, b_ext0 = 4, y_lo0 = 1, y_ext0 = 1, y_lo1 = 0, y_ext1 = 4)
        state at 0x4C200
  }
  ipu21.exchange @bias descriptors at 0x4C300 {
    ipu21.send @b[0, 4) to @b_in[0, 4) on tiles [0, 2)
  }
  ipu21.program @main {
    ipu21.stream_in "x" to @x
    ipu21.sync
    ipu21.stream_in "s" to @s
    ipu21.sync
    ipu21.stream_in "b" to @b
    ipu21.sync
    ipu21.copy @bias
    ipu21.sync
    ipu21.execute @step
    ipu21.sync
    ipu21.stream_out @y to "y"
    ipu21.sync
  }
}
