// RUN: synpl-opt %s -split-input-file -verify-diagnostics
// Every check of an ipu21.graph fires: each split breaks one rule (rows
// IPU.1 ... IPU.10 of docs/spec-map.md, and the ops' own structure).

// The target names a known IPU.
// expected-error @+1 {{arch is "ipu3"; expected "ipu21" or "ipu2"}}
ipu21.graph @g target #ipu21.target<arch = "ipu3", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
}

// -----

// The SRAM span is the tile size.
// expected-error @+1 {{the SRAM span [311296, 950000) is not 638976 bytes (bytes_per_tile)}}
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950000, rpt_count_max = 65535> {
}

// -----

// A tile has at most 64 workers (six on every IPU).
// expected-error @+1 {{workers 65 is more than a tile has (at most 64)}}
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 65, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
}

// -----

// Element types a tile holds.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  // expected-error @+1 {{element type 'bf16' is not one an IPU tile holds}}
  ipu21.tensor @x : tensor<4xbf16> mapping {0: [0, 4)} at 0x80000
}

// -----

// A repeat runs at least once.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.program @main {
    // expected-error @+1 {{repeats its body at least once, not 0 times}}
    ipu21.repeat 0 {
    }
  }
}

// -----

// A compute set holds vertices only.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.compute_set @cs {
    // expected-error @+1 {{cannot be in an 'ipu21.compute_set' (it holds ipu21.vertex ops)}}
    %c = arith.constant 0 : i32
  }
}

// -----

// execute names a compute set.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.exchange @ex descriptors at 0x4C000 {
  }
  ipu21.program @main {
    // expected-error @+1 {{'ex' is not an ipu21.compute_set of this graph}}
    ipu21.execute @ex
    ipu21.sync
  }
}

// -----

// IPU.4: a tile the target does not have.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  // expected-error @+1 {{[consistency] IPU.4: elements [0, 4) are mapped to tile 9, but the target has 8 tiles}}
  ipu21.tensor @x : tensor<8xf32> mapping {9: [0, 4), 1: [4, 8)} at 0x80000
}

// -----

// IPU.4: elements on no tile.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  // expected-error @+1 {{[consistency] IPU.4: elements [4, 6) are mapped to no tile}}
  ipu21.tensor @x : tensor<8xf32> mapping {0: [0, 4), 1: [6, 8)} at 0x80000
}

// -----

// IPU.4: elements on two tiles.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  // expected-error @+1 {{[consistency] IPU.4: element 3 is mapped to tile 0 and to tile 1; each element has exactly one home}}
  ipu21.tensor @x : tensor<8xf32> mapping {0: [0, 5), 1: [3, 8)} at 0x80000
}

// -----

// IPU.4: the tail of a tensor on no tile.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  // expected-error @+1 {{[consistency] IPU.4: elements [6, 8) are mapped to no tile}}
  ipu21.tensor @x : tensor<8xf32> mapping {0: [0, 6)} at 0x80000
}

// -----

// IPU.4: a blocked mapping past the last tile.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  // expected-error @+1 {{[consistency] IPU.4: the blocked mapping puts 100 elements, 10 per tile from tile 0, on tiles up to 9, but the target has 8 tiles}}
  ipu21.tensor @x : tensor<100xf32> mapping blocked(first_tile = 0, per_tile = 10) at 0x80000
}

// -----

// IPU.4: a buffer on tiles the target does not have.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  // expected-error @+1 {{[consistency] IPU.4: buffer tiles [4, 12) names tile 11, but the target has 8 tiles}}
  ipu21.buffer @b : 16 x f32 on tiles [4, 12) at 0x80000
}

// -----

// IPU.1: more than a tile holds.
// expected-error @+1 {{[resource] IPU.1: tile 2 holds 640000 bytes (code, vertex state, descriptors, tensors and buffers); a tile has 638976}}
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  // expected-note @+1 {{tensor @big: 640000 bytes}}
  ipu21.tensor @big : tensor<160000xf32> mapping {2: [0, 160000)} at 0x4C000
}

// -----

// IPU.1: an object outside the SRAM.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  // expected-error @+1 {{[resource] IPU.1: buffer @b on tile 0 spans [0x40000, 0x40040), outside the tile's SRAM [0x4C000, 0xE8000)}}
  ipu21.buffer @b : 16 x f32 on tiles [0, 1) at 0x40000
}

// -----

// IPU.2: two objects on one tile overlap.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  // expected-note @+1 {{tensor @a}}
  ipu21.tensor @a : tensor<64xf32> mapping {3: [0, 64)} at 0x80000
  // expected-error @+1 {{[safety] IPU.2: buffer @b at 0x800F0 overlaps tensor @a ([0x80000, 0x80100)) on tile 3}}
  ipu21.buffer @b : 16 x f32 on tiles [2, 4) at 0x800F0
}

// -----

// IPU.2: code outside the executable region.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @x : tensor<16x16xf16> mapping {0: [0, 256)} at 0x80000
  ipu21.buffer @w : 256 x f16 on tiles [0, 1) at 0x84000
  ipu21.tensor @y : tensor<16x16xf32> mapping {0: [0, 256)} at 0x88000
  // expected-error @+1 {{[safety] IPU.2: code of @amp ends at 0x80300, past the executable region's end 0x80000}}
  ipu21.codelet @amp amp_matmul(f16 -> f32) code 1024 at 0x7FF00
  ipu21.compute_set @cs {
    ipu21.vertex @amp on tiles [0, 1) (in = @x[0, 256), weights = @w[0, 256), out = @y[0, 256)) params(m = 16, n = 16, k = 16, accumulate = 0) state at 0x4C400
  }
}

// -----

// IPU.2: vertex state over a tensor.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  // expected-note @+1 {{tensor @x}}
  ipu21.tensor @x : tensor<16x16xf16> mapping {0: [0, 256)} at 0x80000
  ipu21.buffer @w : 256 x f16 on tiles [0, 1) at 0x84000
  ipu21.tensor @y : tensor<16x16xf32> mapping {0: [0, 256)} at 0x88000
  ipu21.codelet @amp amp_matmul(f16 -> f32) code 1024 at 0x4C000
  ipu21.compute_set @cs {
    // expected-error @+1 {{[safety] IPU.2: the state of a @amp vertex in @cs at 0x80010 overlaps tensor @x ([0x80000, 0x80200)) on tile 0}}
    ipu21.vertex @amp on tiles [0, 1) (in = @x[0, 256), weights = @w[0, 256), out = @y[0, 256)) params(m = 16, n = 16, k = 16, accumulate = 0) state at 0x80010
  }
}

// -----

// IPU.3: an output field not 16-byte aligned.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @x : tensor<16x16xf16> mapping {0: [0, 256)} at 0x80000
  ipu21.buffer @w : 256 x f16 on tiles [0, 1) at 0x84000
  ipu21.tensor @y : tensor<16x16xf32> mapping {0: [0, 256)} at 0x88008
  ipu21.codelet @amp amp_matmul(f16 -> f32) code 1024 at 0x4C000
  ipu21.compute_set @cs {
    // expected-error @+1 {{[safety] IPU.3: field 'out' starts at 0x88008, not 16-byte aligned as a amp_matmul needs}}
    ipu21.vertex @amp on tiles [0, 1) (in = @x[0, 256), weights = @w[0, 256), out = @y[0, 256)) params(m = 16, n = 16, k = 16, accumulate = 0) state at 0x4C400
  }
}

// -----

// IPU.3: weights outside interleaved memory.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @x : tensor<16x16xf16> mapping {0: [0, 256)} at 0x80000
  ipu21.buffer @w : 256 x f16 on tiles [0, 1) at 0x70000
  ipu21.tensor @y : tensor<16x16xf32> mapping {0: [0, 256)} at 0x88000
  ipu21.codelet @amp amp_matmul(f16 -> f32) code 1024 at 0x4C000
  ipu21.compute_set @cs {
    // expected-error @+1 {{[safety] IPU.3: field 'weights' ([0x70000, 0x70200)) must lie in interleaved memory [0x80000, 0xE8000)}}
    ipu21.vertex @amp on tiles [0, 1) (in = @x[0, 256), weights = @w[0, 256), out = @y[0, 256)) params(m = 16, n = 16, k = 16, accumulate = 0) state at 0x4C400
  }
}

// -----

// IPU.3: elem(in) != elem(out).
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @x : tensor<16x16xf16> mapping {0: [0, 256)} at 0x80000
  ipu21.buffer @w : 256 x f16 on tiles [0, 1) at 0x84000
  ipu21.tensor @y : tensor<16x16xf32> mapping {0: [0, 256)} at 0x80400
  ipu21.codelet @amp amp_matmul(f16 -> f32) code 1024 at 0x4C000
  ipu21.compute_set @cs {
    // expected-error @+1 {{[safety] IPU.3: elem(in) != elem(out) fails: both use memory element 32 (16384 bytes each)}}
    ipu21.vertex @amp on tiles [0, 1) (in = @x[0, 256), weights = @w[0, 256), out = @y[0, 256)) params(m = 16, n = 16, k = 16, accumulate = 0) state at 0x4C400
  }
}

// -----

// IPU.3: a field past its buffer.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @x : tensor<16x16xf16> mapping {0: [0, 256)} at 0x80000
  ipu21.buffer @w : 256 x f16 on tiles [0, 1) at 0x84000
  ipu21.tensor @y : tensor<16x16xf32> mapping {0: [0, 256)} at 0x88000
  ipu21.codelet @amp amp_matmul(f16 -> f32) code 1024 at 0x4C000
  ipu21.compute_set @cs {
    // expected-error @+1 {{[safety] IPU.3: field 'weights' binds [16, 272) of buffer @w, which has 256 elements per tile}}
    ipu21.vertex @amp on tiles [0, 1) (in = @x[0, 256), weights = @w[16, 272), out = @y[0, 256)) params(m = 16, n = 16, k = 16, accumulate = 0) state at 0x4C400
  }
}

// -----

// IPU.3: a field on tiles its buffer is not on.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @x : tensor<16x16xf16> mapping {0: [0, 256)} at 0x80000
  ipu21.buffer @w : 256 x f16 on tiles [0, 1) at 0x84000
  ipu21.tensor @y : tensor<16x16xf32> mapping {0: [0, 256)} at 0x88000
  ipu21.codelet @amp amp_matmul(f16 -> f32) code 1024 at 0x4C000
  ipu21.compute_set @cs {
    // expected-error @+1 {{[safety] IPU.3: field 'in' binds [0, 256) of tensor @x, but tile 1 holds 0 of its elements}}
    ipu21.vertex @amp on tiles [0, 2) (in = @x[0, 256), weights = @w[0, 256), out = @y[0, 256)) params(m = 16, n = 16, k = 16, accumulate = 0) state at 0x4C400
  }
}

// -----

// IPU.3: an empty field range.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.buffer @b : 16 x f32 on tiles [0, 1) at 0x80000
  ipu21.codelet @z fill(f32 -> f32) code 64 at 0x4C000
  ipu21.compute_set @cs {
    // expected-error @+1 {{[safety] IPU.3: field 'dst' binds [4, 4), an empty or negative range}}
    ipu21.vertex @z on tiles [0, 1) (dst = @b[4, 4)) params(count = 0, value = 1.0) state at 0x4C100
  }
}

// -----

// IPU.5: counts differ.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @t : tensor<64xf32> mapping blocked(first_tile = 0, per_tile = 16) at 0x80000
  ipu21.tensor @h : tensor<64xf16> mapping blocked(first_tile = 0, per_tile = 16) at 0x80100
  ipu21.buffer @b : 32 x f32 on tiles [4, 6) at 0x80000
  ipu21.exchange @ex descriptors at 0x4C000 {
    // expected-error @+1 {{[consistency] IPU.5: the source has 16 elements and the destination 8}}
    ipu21.send @t[0, 16) to @b[0, 8) on tiles [4, 5)
  }
}

// -----

// IPU.5: types differ.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @t : tensor<64xf32> mapping blocked(first_tile = 0, per_tile = 16) at 0x80000
  ipu21.tensor @h : tensor<64xf16> mapping blocked(first_tile = 0, per_tile = 16) at 0x80100
  ipu21.buffer @b : 32 x f32 on tiles [4, 6) at 0x80000
  ipu21.exchange @ex descriptors at 0x4C000 {
    // expected-error @+1 {{[consistency] IPU.5: sends 'f16' elements of @h into @b, which holds 'f32'}}
    ipu21.send @h[0, 16) to @b[0, 16) on tiles [4, 5)
  }
}

// -----

// IPU.5: a tensor destination names no tiles.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @t : tensor<64xf32> mapping blocked(first_tile = 0, per_tile = 16) at 0x80000
  ipu21.tensor @h : tensor<64xf16> mapping blocked(first_tile = 0, per_tile = 16) at 0x80100
  ipu21.buffer @b : 32 x f32 on tiles [4, 6) at 0x80000
  ipu21.exchange @ex descriptors at 0x4C000 {
    // expected-error @+1 {{[consistency] IPU.5: the destination is tensor @t, whose elements' tiles are their homes: name no tiles}}
    ipu21.send @b[0, 16) from tile 4 to @t[0, 16) on tiles [0, 1)
  }
}

// -----

// IPU.5: a buffer source names its tile.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @t : tensor<64xf32> mapping blocked(first_tile = 0, per_tile = 16) at 0x80000
  ipu21.tensor @h : tensor<64xf16> mapping blocked(first_tile = 0, per_tile = 16) at 0x80100
  ipu21.buffer @b : 32 x f32 on tiles [4, 6) at 0x80000
  ipu21.exchange @ex descriptors at 0x4C000 {
    // expected-error @+1 {{[consistency] IPU.5: the source is buffer @b: name its tile (`from tile`)}}
    ipu21.send @b[0, 16) to @t[0, 16)
  }
}

// -----

// IPU.5: a source past its tensor.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @t : tensor<64xf32> mapping blocked(first_tile = 0, per_tile = 16) at 0x80000
  ipu21.tensor @h : tensor<64xf16> mapping blocked(first_tile = 0, per_tile = 16) at 0x80100
  ipu21.buffer @b : 32 x f32 on tiles [4, 6) at 0x80000
  ipu21.exchange @ex descriptors at 0x4C000 {
    // expected-error @+1 {{[consistency] IPU.5: the source [60, 70) lies outside tensor @t's 64 elements}}
    ipu21.send @t[60, 70) to @b[0, 10) on tiles [4, 5)
  }
}

// -----

// IPU.5: a destination tile the buffer is not on.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @t : tensor<64xf32> mapping blocked(first_tile = 0, per_tile = 16) at 0x80000
  ipu21.tensor @h : tensor<64xf16> mapping blocked(first_tile = 0, per_tile = 16) at 0x80100
  ipu21.buffer @b : 32 x f32 on tiles [4, 6) at 0x80000
  ipu21.exchange @ex descriptors at 0x4C000 {
    // expected-error @+1 {{[consistency] IPU.5: the destination names tiles where buffer @b does not exist}}
    ipu21.send @t[0, 16) to @b[0, 16) on tiles [3, 5)
  }
}

// -----

// IPU.5: a source tile the target does not have.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @t : tensor<64xf32> mapping blocked(first_tile = 0, per_tile = 16) at 0x80000
  ipu21.tensor @h : tensor<64xf16> mapping blocked(first_tile = 0, per_tile = 16) at 0x80100
  ipu21.buffer @b : 32 x f32 on tiles [4, 6) at 0x80000
  ipu21.exchange @ex descriptors at 0x4C000 {
    // expected-error @+1 {{[consistency] IPU.5: sends from tile 8, which the target does not have}}
    ipu21.send @b[0, 16) from tile 8 to @t[0, 16)
  }
}

// -----

// IPU.5: an unknown endpoint.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @t : tensor<64xf32> mapping blocked(first_tile = 0, per_tile = 16) at 0x80000
  ipu21.tensor @h : tensor<64xf16> mapping blocked(first_tile = 0, per_tile = 16) at 0x80100
  ipu21.buffer @b : 32 x f32 on tiles [4, 6) at 0x80000
  ipu21.exchange @ex descriptors at 0x4C000 {
    // expected-error @+1 {{[consistency] IPU.5: the source 'nothing' is not an ipu21.tensor or ipu21.buffer}}
    ipu21.send @nothing[0, 16) to @b[0, 16) on tiles [4, 5)
  }
}

// -----

// IPU.5: rows closer than a row.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @t : tensor<64xf32> mapping blocked(first_tile = 0, per_tile = 16) at 0x80000
  ipu21.buffer @b : 32 x f32 on tiles [4, 6) at 0x80000
  ipu21.exchange @ex descriptors at 0x4C000 {
    // expected-error @+1 {{[consistency] IPU.5: a block of 4 rows of 8 elements needs at least one row and a stride of at least the row}}
    ipu21.send @t[0, 8) rows 4 stride 4 to @b[0, 32) on tiles [4, 5)
  }
}

// -----

// IPU.5: a buffer source is one range.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @t : tensor<64xf32> mapping blocked(first_tile = 0, per_tile = 16) at 0x80000
  ipu21.buffer @b : 32 x f32 on tiles [4, 6) at 0x80000
  ipu21.exchange @ex descriptors at 0x4C000 {
    // expected-error @+1 {{[consistency] IPU.5: rows and advance read tensors; a buffer source is one range on one tile}}
    ipu21.send @b[0, 8) from tile 4 advance 8 to @t[0, 8)
  }
}

// -----

// IPU.5: the last run of an advancing send leaves its tensor.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @t : tensor<64xf32> mapping blocked(first_tile = 0, per_tile = 16) at 0x80000
  ipu21.buffer @b : 32 x f32 on tiles [4, 6) at 0x80000
  ipu21.exchange @ex descriptors at 0x4C000 {
    // expected-error @+1 {{[consistency] IPU.5: the source reaches element 67 (its last row in its last run) outside tensor @t's 64 elements}}
    ipu21.send @t[0, 4) rows 2 stride 32 advance 4 to @b[0, 8) on tiles [4, 5)
  }
  ipu21.program @main {
    ipu21.repeat 9 {
      ipu21.copy @ex
      ipu21.sync
    }
  }
}

// -----

// IPU.10: two sends write the same element.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @t : tensor<64xf32> mapping blocked(first_tile = 0, per_tile = 16) at 0x80000
  ipu21.tensor @h : tensor<64xf16> mapping blocked(first_tile = 0, per_tile = 16) at 0x80100
  ipu21.buffer @b : 32 x f32 on tiles [4, 6) at 0x80000
  ipu21.exchange @ex descriptors at 0x4C000 {
    // expected-note @+1 {{the other send}}
    ipu21.send @t[0, 16) to @b[0, 16) on tiles [4, 6)
    // expected-error @+1 {{[safety] IPU.10: writes element 8 of @b that another send of the exchange also writes}}
    ipu21.send @t[16, 32) to @b[8, 24) on tiles [5, 6)
  }
}

// -----

// IPU.6: a loop longer than rpt counts.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.buffer @x : 70000 x f16 on tiles [0, 1) at 0x4D000
  ipu21.buffer @w : 1 x f16 on tiles [0, 1) at 0x80000
  ipu21.buffer @y : 70000 x f32 on tiles [0, 1) at 0x84000
  ipu21.codelet @amp amp_matmul(f16 -> f32) code 1024 at 0x4C000
  ipu21.compute_set @cs {
    // expected-error @+1 {{[safety] IPU.6: the amp_matmul loop runs 70000 times; rpt counts at most 65535 (a 16-bit register): split the vertex}}
    ipu21.vertex @amp on tiles [0, 1) (in = @x[0, 70000), weights = @w[0, 1), out = @y[0, 70000)) params(m = 70000, n = 1, k = 1, accumulate = 0) state at 0x4C400
  }
}

// -----

// IPU.7: FP8 AMP on an ipu2.
ipu21.graph @g target #ipu21.target<arch = "ipu2", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  // expected-error @+1 {{[consistency] IPU.7: FP8 AMP ('f8E4M3FN') exists only on ipu21, and the target is ipu2}}
  ipu21.codelet @amp amp_matmul(f8E4M3FN -> f16) code 1024 at 0x4C000
}

// -----

// IPU.7: FP8 AMP is fine on an ipu21.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.codelet @amp amp_matmul(f8E4M3FN -> f16) code 1024 at 0x4C000
  // expected-error @+1 {{cannot be in an ipu21.graph}}
  l0ctl.region @r size 64 access rw
}

// -----

// IPU.8: an exchange right after a compute phase.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @t : tensor<16xf32> mapping {0: [0, 16)} at 0x80000
  ipu21.buffer @b : 16 x f32 on tiles [1, 2) at 0x80000
  ipu21.codelet @z fill(f32 -> f32) code 64 at 0x4C000
  ipu21.compute_set @cs {
    ipu21.vertex @z on tiles [0, 1) (dst = @t[0, 16)) params(count = 16, value = 1.0) state at 0x4C100
  }
  ipu21.exchange @ex descriptors at 0x4C200 {
    ipu21.send @t[0, 16) to @b[0, 16) on tiles [1, 2)
  }
  ipu21.program @main {
    // expected-note @+1 {{the phase without a sync}}
    ipu21.execute @cs
    // expected-error @+1 {{[safety] IPU.8: 'ipu21.copy' begins before the previous phase synced: put an ipu21.sync between them}}
    ipu21.copy @ex
    ipu21.sync
  }
}

// -----

// IPU.8: a program that ends unsynced.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @t : tensor<16xf32> mapping {0: [0, 16)} at 0x80000
  ipu21.buffer @b : 16 x f32 on tiles [1, 2) at 0x80000
  ipu21.codelet @z fill(f32 -> f32) code 64 at 0x4C000
  ipu21.compute_set @cs {
    ipu21.vertex @z on tiles [0, 1) (dst = @t[0, 16)) params(count = 16, value = 1.0) state at 0x4C100
  }
  ipu21.exchange @ex descriptors at 0x4C200 {
    ipu21.send @t[0, 16) to @b[0, 16) on tiles [1, 2)
  }
  ipu21.program @main {
    ipu21.execute @cs
    ipu21.sync
    // expected-error @+1 {{[safety] IPU.8: this phase is the last of its block and no sync follows it}}
    ipu21.copy @ex
  }
}

// -----

// IPU.8: a repeated body that ends unsynced.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @t : tensor<16xf32> mapping {0: [0, 16)} at 0x80000
  ipu21.buffer @b : 16 x f32 on tiles [1, 2) at 0x80000
  ipu21.codelet @z fill(f32 -> f32) code 64 at 0x4C000
  ipu21.compute_set @cs {
    ipu21.vertex @z on tiles [0, 1) (dst = @t[0, 16)) params(count = 16, value = 1.0) state at 0x4C100
  }
  ipu21.exchange @ex descriptors at 0x4C200 {
    ipu21.send @t[0, 16) to @b[0, 16) on tiles [1, 2)
  }
  ipu21.program @main {
    ipu21.repeat 4 {
      ipu21.execute @cs
      ipu21.sync
      // expected-error @+1 {{[safety] IPU.8: this phase is the last of its block and no sync follows it}}
      ipu21.copy @ex
    }
  }
}

// -----

// IPU.8: a loop entered unsynced.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @t : tensor<16xf32> mapping {0: [0, 16)} at 0x80000
  ipu21.buffer @b : 16 x f32 on tiles [1, 2) at 0x80000
  ipu21.codelet @z fill(f32 -> f32) code 64 at 0x4C000
  ipu21.compute_set @cs {
    ipu21.vertex @z on tiles [0, 1) (dst = @t[0, 16)) params(count = 16, value = 1.0) state at 0x4C100
  }
  ipu21.exchange @ex descriptors at 0x4C200 {
    ipu21.send @t[0, 16) to @b[0, 16) on tiles [1, 2)
  }
  ipu21.program @main {
    // expected-note @+1 {{the phase without a sync}}
    ipu21.execute @cs
    // expected-error @+1 {{[safety] IPU.8: 'ipu21.repeat' begins before the previous phase synced}}
    ipu21.repeat 2 {
      ipu21.sync
    }
  }
}

// -----

// IPU.9: the codelet's fields, in order.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @x : tensor<16x16xf16> mapping {0: [0, 256)} at 0x80000
  ipu21.buffer @w : 256 x f16 on tiles [0, 1) at 0x84000
  ipu21.tensor @y : tensor<16x16xf32> mapping {0: [0, 256)} at 0x88000
  ipu21.codelet @amp amp_matmul(f16 -> f32) code 1024 at 0x4C000
  ipu21.compute_set @cs {
    // expected-error @+1 {{[consistency] IPU.9: a amp_matmul vertex binds the fields (in, weights, out), in that order}}
    ipu21.vertex @amp on tiles [0, 1) (weights = @w[0, 256), in = @x[0, 256), out = @y[0, 256)) params(m = 16, n = 16, k = 16, accumulate = 0) state at 0x4C400
  }
}

// -----

// IPU.9: a missing parameter.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @x : tensor<16x16xf16> mapping {0: [0, 256)} at 0x80000
  ipu21.buffer @w : 256 x f16 on tiles [0, 1) at 0x84000
  ipu21.tensor @y : tensor<16x16xf32> mapping {0: [0, 256)} at 0x88000
  ipu21.codelet @amp amp_matmul(f16 -> f32) code 1024 at 0x4C000
  ipu21.compute_set @cs {
    // expected-error @+1 {{[consistency] IPU.9: a amp_matmul vertex needs the integer parameter 'k'}}
    ipu21.vertex @amp on tiles [0, 1) (in = @x[0, 256), weights = @w[0, 256), out = @y[0, 256)) params(m = 16, n = 16, accumulate = 0) state at 0x4C400
  }
}

// -----

// IPU.9: an unknown parameter.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @x : tensor<16x16xf16> mapping {0: [0, 256)} at 0x80000
  ipu21.buffer @w : 256 x f16 on tiles [0, 1) at 0x84000
  ipu21.tensor @y : tensor<16x16xf32> mapping {0: [0, 256)} at 0x88000
  ipu21.codelet @amp amp_matmul(f16 -> f32) code 1024 at 0x4C000
  ipu21.compute_set @cs {
    // expected-error @+1 {{[consistency] IPU.9: a amp_matmul vertex has no parameter 'stride'}}
    ipu21.vertex @amp on tiles [0, 1) (in = @x[0, 256), weights = @w[0, 256), out = @y[0, 256)) params(m = 16, n = 16, k = 16, accumulate = 0, stride = 2) state at 0x4C400
  }
}

// -----

// IPU.9: counts that disagree with the parameters.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @x : tensor<16x16xf16> mapping {0: [0, 256)} at 0x80000
  ipu21.buffer @w : 256 x f16 on tiles [0, 1) at 0x84000
  ipu21.tensor @y : tensor<16x16xf32> mapping {0: [0, 256)} at 0x88000
  ipu21.codelet @amp amp_matmul(f16 -> f32) code 1024 at 0x4C000
  ipu21.compute_set @cs {
    // expected-error @+1 {{[consistency] IPU.9: field 'in' binds 256 elements; the parameters make it 128}}
    ipu21.vertex @amp on tiles [0, 1) (in = @x[0, 256), weights = @w[0, 256), out = @y[0, 256)) params(m = 8, n = 16, k = 16, accumulate = 0) state at 0x4C400
  }
}

// -----

// IPU.9: a field of the wrong type.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @x : tensor<16x16xf16> mapping {0: [0, 256)} at 0x80000
  ipu21.buffer @w : 256 x f32 on tiles [0, 1) at 0x84000
  ipu21.tensor @y : tensor<16x16xf32> mapping {0: [0, 256)} at 0x88000
  ipu21.codelet @amp amp_matmul(f16 -> f32) code 1024 at 0x4C000
  ipu21.compute_set @cs {
    // expected-error @+1 {{[consistency] IPU.9: field 'weights' is 'f16' in a amp_matmul('f16' -> 'f32') codelet, but @w holds 'f32'}}
    ipu21.vertex @amp on tiles [0, 1) (in = @x[0, 256), weights = @w[0, 256), out = @y[0, 256)) params(m = 16, n = 16, k = 16, accumulate = 0) state at 0x4C400
  }
}

// -----

// IPU.9: accumulate is 0 or 1.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @x : tensor<16x16xf16> mapping {0: [0, 256)} at 0x80000
  ipu21.buffer @w : 256 x f16 on tiles [0, 1) at 0x84000
  ipu21.tensor @y : tensor<16x16xf32> mapping {0: [0, 256)} at 0x88000
  ipu21.codelet @amp amp_matmul(f16 -> f32) code 1024 at 0x4C000
  ipu21.compute_set @cs {
    // expected-error @+1 {{[consistency] IPU.9: 'accumulate' is 0 or 1, not 2}}
    ipu21.vertex @amp on tiles [0, 1) (in = @x[0, 256), weights = @w[0, 256), out = @y[0, 256)) params(m = 16, n = 16, k = 16, accumulate = 2) state at 0x4C400
  }
}

// -----

// IPU.9: vertex tiles the target does not have.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @x : tensor<16x16xf16> mapping {0: [0, 256)} at 0x80000
  ipu21.buffer @w : 256 x f16 on tiles [0, 1) at 0x84000
  ipu21.tensor @y : tensor<16x16xf32> mapping {0: [0, 256)} at 0x88000
  ipu21.codelet @amp amp_matmul(f16 -> f32) code 1024 at 0x4C000
  ipu21.compute_set @cs {
    // expected-error @+1 {{[consistency] IPU.9: vertex tiles [0, 9) names tile 8, but the target has 8 tiles}}
    ipu21.vertex @amp on tiles [0, 9) (in = @x[0, 256), weights = @w[0, 256), out = @y[0, 256)) params(m = 16, n = 16, k = 16, accumulate = 0) state at 0x4C400
  }
}

// -----

// A vertex names a codelet.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @x : tensor<16x16xf16> mapping {0: [0, 256)} at 0x80000
  ipu21.buffer @w : 256 x f16 on tiles [0, 1) at 0x84000
  ipu21.tensor @y : tensor<16x16xf32> mapping {0: [0, 256)} at 0x88000
  ipu21.codelet @amp amp_matmul(f16 -> f32) code 1024 at 0x4C000
  ipu21.compute_set @cs {
    // expected-error @+1 {{'x' is not an ipu21.codelet}}
    ipu21.vertex @x on tiles [0, 1) (in = @x[0, 256), weights = @w[0, 256), out = @y[0, 256)) params(m = 16, n = 16, k = 16, accumulate = 0) state at 0x4C400
  }
}
