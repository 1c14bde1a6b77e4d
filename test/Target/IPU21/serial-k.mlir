// RUN: synpl-translate --synpl-ipu21-to-program %s -o %t.ipu
// RUN: %python %S/Inputs/serial_k.py inputs %t
// RUN: synpl-ipu21-sim %t.ipu --tensor-in A=%t.a --tensor-in B=%t.b --tensor-out y=%t.y \
// RUN:   | FileCheck %s
// RUN: %python %S/Inputs/serial_k.py check %t | FileCheck %s --check-prefix=NUMBERS
//
// A product whose k dimension is split into runs of one repeat: one
// exchange moves each run's chunk, its sends advancing through A (8 rows
// of 16 elements, 64 apart: a block of rows) and B (256 elements) with the
// repeat's run, and the AMP vertex accumulates. y = A[8x64] . B[64x16].

// NUMBERS: serial k ok

// Per run, tile 4 receives 8x16 + 16x16 f32 (1536 bytes, 384 cycles); the
// AMP takes f32 in 8-channel passes: 2 x 1 blocks of 8 cycles per row,
// 331 + 32 + 2 x 8 x 8 = 491 cycles.
// CHECK-DAG: chunk copy 4 1536
// CHECK-DAG: acc execute 4 1964

ipu21.graph @serial_k target #ipu21.target<arch = "ipu21", tiles = 8,
    bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000,
    sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272,
    rpt_count_max = 65535> {
  ipu21.tensor @A : tensor<8x64xf32> mapping blocked(first_tile = 0, per_tile = 256) at 0x80000
  ipu21.tensor @B : tensor<64x16xf32> mapping blocked(first_tile = 2, per_tile = 512) at 0x80000
  ipu21.tensor @y : tensor<8x16xf32> mapping {4: [0, 128)} at 0x80000
  ipu21.buffer @a_in : 128 x f32 on tiles [4, 5) at 0x4D000
  ipu21.buffer @b_in : 256 x f32 on tiles [4, 5) at 0x84000
  ipu21.codelet @amp amp_matmul(f32 -> f32) code 1024 at 0x4C000
  ipu21.codelet @fill fill(f32 -> f32) code 64 at 0x4C400
  ipu21.compute_set @zero {
    ipu21.vertex @fill on tiles [4, 5) (dst = @y[0, 128)) params(count = 128, value = 0.0)
        state at 0x4C500
  }
  ipu21.compute_set @acc {
    ipu21.vertex @amp on tiles [4, 5) (in = @a_in[0, 128), weights = @b_in[0, 256),
        out = @y[0, 128)) params(m = 8, n = 16, k = 16, accumulate = 1) state at 0x4C540
  }
  ipu21.exchange @chunk descriptors at 0x4C600 {
    ipu21.send @A[0, 16) rows 8 stride 64 advance 16 to @a_in[0, 128) on tiles [4, 5)
    ipu21.send @B[0, 256) advance 256 to @b_in[0, 256) on tiles [4, 5)
  }
  ipu21.program @main {
    ipu21.execute @zero
    ipu21.sync
    ipu21.repeat 4 {
      ipu21.copy @chunk
      ipu21.sync
      ipu21.execute @acc
      ipu21.sync
    }
  }
}
