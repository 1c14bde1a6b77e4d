// RUN: synpl-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// A buffer (or a scratch tensor) holds data from the first top-level step
// of @main that uses it to the last; objects whose lifetimes do not meet
// may share memory (row IPU.2 allows their overlap; IPU.1 counts the bytes
// once).

// Two windows, each used by its own step, at one address.
// CHECK-LABEL: ipu21.graph @shared
ipu21.graph @shared target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @x : tensor<16xf32> mapping {1: [0, 16)} at 0x80000
  // CHECK: ipu21.buffer @first : 16 x f32 on tiles [0, 1) at 0x80000
  // CHECK: ipu21.buffer @second : 16 x f32 on tiles [0, 1) at 0x80000
  ipu21.buffer @first : 16 x f32 on tiles [0, 1) at 0x80000
  ipu21.buffer @second : 16 x f32 on tiles [0, 1) at 0x80000
  ipu21.exchange @in1 descriptors at 0x4C000 {
    ipu21.send @x[0, 16) to @first[0, 16) on tiles [0, 1)
  }
  ipu21.exchange @in2 descriptors at 0x4C100 {
    ipu21.send @x[0, 16) to @second[0, 16) on tiles [0, 1)
  }
  ipu21.program @main {
    ipu21.copy @in1
    ipu21.sync
    ipu21.copy @in2
    ipu21.sync
  }
}

// -----

// Both used by one step: live together, so they may not overlap.
ipu21.graph @together target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @x : tensor<16xf32> mapping {1: [0, 16)} at 0x80000
  // expected-note @+1 {{buffer @first}}
  ipu21.buffer @first : 16 x f32 on tiles [0, 1) at 0x80000
  // expected-error @+1 {{[safety] IPU.2: buffer @second at 0x80020 overlaps buffer @first ([0x80000, 0x80040)) on tile 0}}
  ipu21.buffer @second : 16 x f32 on tiles [0, 1) at 0x80020
  ipu21.exchange @in descriptors at 0x4C000 {
    ipu21.send @x[0, 16) to @first[0, 16) on tiles [0, 1)
    ipu21.send @x[0, 16) to @second[0, 16) on tiles [0, 1)
  }
  ipu21.program @main {
    ipu21.copy @in
    ipu21.sync
  }
}

// -----

// A buffer @main does not use lives throughout.
ipu21.graph @unused target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @x : tensor<16xf32> mapping {1: [0, 16)} at 0x80000
  // expected-note @+1 {{buffer @spare}}
  ipu21.buffer @spare : 16 x f32 on tiles [0, 1) at 0x80000
  // expected-error @+1 {{[safety] IPU.2: buffer @first at 0x80000 overlaps buffer @spare}}
  ipu21.buffer @first : 16 x f32 on tiles [0, 1) at 0x80000
  ipu21.exchange @in descriptors at 0x4C000 {
    ipu21.send @x[0, 16) to @first[0, 16) on tiles [0, 1)
  }
  ipu21.program @main {
    ipu21.copy @in
    ipu21.sync
  }
}

// -----

// A scratch tensor has a lifetime too: @t, streamed in and sent by the
// first steps, shares its memory with @later, used only after; a stream
// counts as a use.
// CHECK-LABEL: ipu21.graph @scratch
ipu21.graph @scratch target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  // CHECK: ipu21.tensor @t : tensor<16xf32> mapping {1: [0, 16)} at 0x80000 scratch
  ipu21.tensor @t : tensor<16xf32> mapping {1: [0, 16)} at 0x80000 scratch
  ipu21.tensor @later : tensor<16xf32> mapping {1: [0, 16)} at 0x80000 scratch
  ipu21.buffer @b : 16 x f32 on tiles [0, 1) at 0x80000
  ipu21.exchange @out descriptors at 0x4C000 {
    ipu21.send @t[0, 16) to @b[0, 16) on tiles [0, 1)
  }
  ipu21.exchange @back descriptors at 0x4C100 {
    ipu21.send @b[0, 16) from tile 0 to @later[0, 16)
  }
  ipu21.program @main {
    ipu21.stream_in "batch" to @t
    ipu21.sync
    ipu21.copy @out
    ipu21.sync
    ipu21.copy @back
    ipu21.sync
    ipu21.stream_out @later to "result"
    ipu21.sync
  }
}

// -----

// The stream into @t is a use: @t lives from it to its send, through the
// step that uses @other, so the two may not share memory.
ipu21.graph @streamed target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  // expected-note @+1 {{tensor @t}}
  ipu21.tensor @t : tensor<16xf32> mapping {1: [0, 16)} at 0x80000 scratch
  // expected-error @+1 {{[safety] IPU.2: tensor @other at 0x80000 overlaps tensor @t}}
  ipu21.tensor @other : tensor<16xf32> mapping {1: [0, 16)} at 0x80000 scratch
  ipu21.buffer @b : 16 x f32 on tiles [0, 1) at 0x80000
  ipu21.buffer @b2 : 16 x f32 on tiles [0, 1) at 0x80000
  ipu21.exchange @x1 descriptors at 0x4C000 {
    ipu21.send @other[0, 16) to @b[0, 16) on tiles [0, 1)
  }
  ipu21.exchange @x2 descriptors at 0x4C100 {
    ipu21.send @t[0, 16) to @b2[0, 16) on tiles [0, 1)
  }
  ipu21.program @main {
    ipu21.stream_in "batch" to @t
    ipu21.sync
    ipu21.copy @x1
    ipu21.sync
    ipu21.copy @x2
    ipu21.sync
  }
}

// -----

// A tensor that is not scratch lives throughout, whatever uses it.
ipu21.graph @state target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  // expected-note @+1 {{tensor @w}}
  ipu21.tensor @w : tensor<16xf32> mapping {1: [0, 16)} at 0x80000
  // expected-error @+1 {{[safety] IPU.2: tensor @t at 0x80000 overlaps tensor @w}}
  ipu21.tensor @t : tensor<16xf32> mapping {1: [0, 16)} at 0x80000 scratch
  ipu21.buffer @b : 16 x f32 on tiles [0, 1) at 0x80000
  ipu21.exchange @x descriptors at 0x4C000 {
    ipu21.send @t[0, 16) to @b[0, 16) on tiles [0, 1)
  }
  ipu21.program @main {
    ipu21.copy @x
    ipu21.sync
  }
}
