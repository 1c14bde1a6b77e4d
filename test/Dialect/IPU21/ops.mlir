// RUN: synpl-opt %s | synpl-opt | FileCheck %s
// RUN: synpl-opt %s -mlir-print-op-generic | synpl-opt | FileCheck %s
// A graph that uses every ipu21 op and both mapping forms: a [64,16]x[16,16]
// f16 product on four tiles, its column sums gathered and reduced on a
// fifth, inside a repeated, streamed program. It passes every check.

// CHECK-LABEL: ipu21.graph @product target #ipu21.target<arch = "ipu21", tiles = 1472
ipu21.graph @product target #ipu21.target<arch = "ipu21", tiles = 1472,
    bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000,
    sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272,
    rpt_count_max = 65535> {
  // CHECK: ipu21.tensor @x : tensor<64x16xf16> mapping blocked(first_tile = 0, per_tile = 256) at 0x80000
  ipu21.tensor @x : tensor<64x16xf16> mapping blocked(first_tile = 0, per_tile = 256) at 0x80000
  // CHECK: ipu21.tensor @w : tensor<16x16xf16> mapping {4: [0, 128) [192, 256), 5: [128, 192)} at 0x80000
  ipu21.tensor @w : tensor<16x16xf16> mapping {4: [0, 128) [192, 256), 5: [128, 192)} at 0x80000
  ipu21.tensor @y : tensor<64x16xf32> mapping blocked(first_tile = 0, per_tile = 256) at 0x88000
  ipu21.tensor @sums : tensor<16xf32> mapping {6: [0, 16)} at 0x80000
  ipu21.tensor @go : tensor<1xi32> mapping {6: [0, 1)} at 0x80040
  // CHECK: ipu21.buffer @w_in : 256 x f16 on tiles [0, 4) at 0x84000
  ipu21.buffer @w_in : 256 x f16 on tiles [0, 4) at 0x84000
  // CHECK: ipu21.buffer @parts : 64 x f32 on tiles [6, 7) at 0x80400
  ipu21.buffer @parts : 64 x f32 on tiles [6, 7) at 0x80400
  // CHECK: ipu21.codelet @amp amp_matmul(f16 -> f32) code 1024 at 0x4C000
  ipu21.codelet @amp amp_matmul(f16 -> f32) code 1024 at 0x4C000
  ipu21.codelet @sum reduce_add(f32 -> f32) code 256 at 0x4C400
  ipu21.codelet @zero fill(f32 -> f32) code 128 at 0x4C500
  ipu21.codelet @widen copy(f16 -> f32) code 128 at 0x4C580

  // CHECK: ipu21.compute_set @mm {
  ipu21.compute_set @mm {
    // CHECK-NEXT: ipu21.vertex @amp on tiles [0, 4) (in = @x[0, 256), weights = @w_in[0, 256), out = @y[0, 256)) params(accumulate = 0, k = 16, m = 16, n = 16) state at 0x4C600
    ipu21.vertex @amp on tiles [0, 4) (in = @x[0, 256), weights = @w_in[0, 256),
        out = @y[0, 256)) params(m = 16, n = 16, k = 16, accumulate = 0) state at 0x4C600
  }
  ipu21.compute_set @reduce {
    ipu21.vertex @sum on tiles [6, 7) (partials = @parts[0, 64), out = @sums[0, 16))
        params(p = 4, n = 16, accumulate = 0) state at 0x4C600
  }
  ipu21.compute_set @clear {
    // CHECK: params(count = 16, value = 0.000000e+00 : f64)
    ipu21.vertex @zero on tiles [6, 7) (dst = @sums[0, 16)) params(count = 16, value = 0.0)
        state at 0x4C640
  }

  // CHECK: ipu21.exchange @load_w descriptors at 0x4C680 {
  ipu21.exchange @load_w descriptors at 0x4C680 {
    // CHECK-NEXT: ipu21.send @w[0, 256) to @w_in[0, 256) on tiles [0, 4)
    ipu21.send @w[0, 256) to @w_in[0, 256) on tiles [0, 4)
  }
  ipu21.exchange @gather descriptors at 0x4C690 {
    ipu21.send @y[0, 16) to @parts[0, 16) on tiles [6, 7)
    ipu21.send @y[256, 272) to @parts[16, 32) on tiles [6, 7)
    ipu21.send @y[512, 528) to @parts[32, 48) on tiles [6, 7)
    ipu21.send @y[768, 784) to @parts[48, 64) on tiles [6, 7)
  }
  // CHECK: ipu21.exchange @blocks descriptors at 0x4C6E0 {
  // CHECK-NEXT: ipu21.send @y[0, 4) rows 4 stride 16 advance 4 to @parts[0, 16) on tiles [6, 7)
  ipu21.exchange @blocks descriptors at 0x4C6E0 {
    ipu21.send @y[0, 4) rows 4 stride 16 advance 4 to @parts[0, 16) on tiles [6, 7)
  }
  ipu21.exchange @scatter descriptors at 0x4C6C0 {
    // CHECK: ipu21.send @parts[0, 16) from tile 6 to @y[0, 16)
    ipu21.send @parts[0, 16) from tile 6 to @y[0, 16)
  }

  // CHECK: ipu21.program @main {
  ipu21.program @main {
    // CHECK-NEXT: ipu21.stream_in "images" to @x
    ipu21.stream_in "images" to @x
    ipu21.sync
    ipu21.copy @load_w
    ipu21.sync
    // CHECK: ipu21.repeat 3 {
    ipu21.repeat 3 {
      ipu21.execute @mm
      ipu21.sync
      ipu21.copy @gather
      ipu21.sync
      ipu21.copy @blocks
      ipu21.sync
    }
    // CHECK: ipu21.if @go {
    ipu21.if @go {
      ipu21.execute @reduce
      ipu21.sync
    } else {
      ipu21.sequence {
        ipu21.execute @clear
        ipu21.sync
      }
    }
    ipu21.copy @scatter
    ipu21.sync
    // CHECK: ipu21.stream_out @sums to "loss"
    ipu21.stream_out @sums to "loss"
    ipu21.sync
  }
}
