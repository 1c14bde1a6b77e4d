// RUN: synpl-opt %s -split-input-file -verify-diagnostics
// The checks of a generic (uop) codelet and its vertices fire: each split
// breaks one rule (rows IPU.11, L0.1 in a codelet's body, IPU.9 and IPU.3
// for its vertices).

// -----

// A generic codelet has a body.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  // expected-error @+1 {{a uop codelet has fields, inputs and a body}}
  ipu21.codelet @c uop fields ["x"] inputs 1 code 64 at 0x4C000
}

// -----

// Only a generic codelet has fields.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  // expected-error @+1 {{only a uop codelet has fields, inputs and a body}}
  ipu21.codelet @c copy(f32 -> f32) fields ["x"] inputs 1 code 64 at 0x4C000
}

// -----

// A field per body argument.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  // expected-error @+1 {{[consistency] IPU.11: the body takes 2 buffers but `fields` names 1}}
  ipu21.codelet @copy uop fields ["x"] inputs 1 code 256 at 0x4C000 {
  ^bb0(%x: !l0uop.buf<2x4xf32>, %y: !l0uop.buf<2x4xf32>):
    %i = l0uop.range 0 to 2 over group_x : index
    %j = l0uop.range 0 to 4 : index
    %px = l0uop.index %x[%i, %j] : !l0uop.buf<2x4xf32>
    %v = l0uop.load %px : f32
    %py = l0uop.index %y[%i, %j] : !l0uop.buf<2x4xf32>
    l0uop.store %py, %v : f32
    l0uop.end %j
    l0uop.end %i
  }
}

// -----

// Field names are fresh identifiers: parameters are named after them.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  // expected-error @+1 {{[consistency] IPU.11: field name 'x' is not a fresh identifier}}
  ipu21.codelet @copy uop fields ["x", "x"] inputs 1 code 256 at 0x4C000 {
  ^bb0(%x: !l0uop.buf<2x4xf32>, %y: !l0uop.buf<2x4xf32>):
    %i = l0uop.range 0 to 2 over group_x : index
    %j = l0uop.range 0 to 4 : index
    %px = l0uop.index %x[%i, %j] : !l0uop.buf<2x4xf32>
    %v = l0uop.load %px : f32
    %py = l0uop.index %y[%i, %j] : !l0uop.buf<2x4xf32>
    l0uop.store %py, %v : f32
    l0uop.end %j
    l0uop.end %i
  }
}

// -----

// Fields hold element types a tile stores.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  // expected-error @+1 {{[consistency] IPU.11: field 'x' holds 'bf16', which a tile does not store}}
  ipu21.codelet @c uop fields ["x"] inputs 1 code 256 at 0x4C000 {
  ^bb0(%x: !l0uop.buf<4xbf16>):
  }
}

// -----

// Row L0.1 holds in a generic codelet: no STORE into an input.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.codelet @c uop fields ["x"] inputs 1 code 256 at 0x4C000 {
  ^bb0(%x: !l0uop.buf<4xf32>):
    %z = l0uop.const 0.0 : f32
    %i = l0uop.range 0 to 4 : index
    %p = l0uop.index %x[%i] : !l0uop.buf<4xf32>
    // expected-error @+1 {{[safety] L0.1: STORE into input field 'x'; kernels write only their outputs}}
    l0uop.store %p, %z : f32
    l0uop.end %i
  }
}

// -----

// Row L0.1 holds in a generic codelet: RANGEs close.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.codelet @c uop fields ["x"] inputs 0 code 256 at 0x4C000 {
  ^bb0(%x: !l0uop.buf<4xf32>):
    // expected-error @+1 {{[safety] L0.1: RANGE is never closed by END}}
    %i = l0uop.range 0 to 4 : index
  }
}

// -----

// No BARRIER: a vertex is one worker.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.codelet @c uop fields ["x"] inputs 0 code 256 at 0x4C000 {
  ^bb0(%x: !l0uop.buf<4xf32>):
    // expected-error @+1 {{[consistency] IPU.11: 'l0uop.barrier' does not run in a generic codelet}}
    l0uop.barrier
  }
}

// -----

// Scalar values only.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.codelet @c uop fields ["x"] inputs 0 code 256 at 0x4C000 {
  ^bb0(%x: !l0uop.buf<8xf32>):
    %i = l0uop.const 0 : index
    %p = l0uop.index %x[%i] : !l0uop.buf<8xf32>
    // expected-error @+1 {{[consistency] IPU.11: computes in 'vector<4xf32>', which a tile does not}}
    %v = l0uop.load %p : vector<4xf32>
  }
}

// -----

// A REDUCE starts from its init: it is defined before the RANGE.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.codelet @c uop fields ["x", "y"] inputs 1 code 256 at 0x4C000 {
  ^bb0(%x: !l0uop.buf<4xf32>, %y: !l0uop.buf<1xf32>):
    %k = l0uop.range 0 to 4 : index
    %p = l0uop.index %x[%k] : !l0uop.buf<4xf32>
    %v = l0uop.load %p : f32
    l0uop.end %k
    %z = l0uop.const 0.0 : f32
    // expected-error @+1 {{[consistency] IPU.11: REDUCE's init is defined after its RANGE starts}}
    %s = l0uop.reduce add %v over %k init %z : f32
    %c = l0uop.const 0 : index
    %q = l0uop.index %y[%c] : !l0uop.buf<1xf32>
    l0uop.store %q, %s : f32
  }
}

// -----

// A vertex binds the codelet's fields, in order.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @x : tensor<2x4xf32> mapping {0: [0, 4), 1: [4, 8)} at 0x80000
  ipu21.tensor @y : tensor<2x4xf32> mapping {0: [0, 4), 1: [4, 8)} at 0x80040
  ipu21.codelet @copy uop fields ["x", "y"] inputs 1 code 256 at 0x4C000 {
  ^bb0(%x: !l0uop.buf<2x4xf32>, %y: !l0uop.buf<2x4xf32>):
    %i = l0uop.range 0 to 2 over group_x : index
    %j = l0uop.range 0 to 4 : index
    %px = l0uop.index %x[%i, %j] : !l0uop.buf<2x4xf32>
    %v = l0uop.load %px : f32
    %py = l0uop.index %y[%i, %j] : !l0uop.buf<2x4xf32>
    l0uop.store %py, %v : f32
    l0uop.end %j
    l0uop.end %i
  }
  ipu21.compute_set @cs {
    // expected-error @+1 {{[consistency] IPU.9: a vertex of @copy binds the fields (x, y), in that order}}
    ipu21.vertex @copy on tiles [0, 1) (y = @y[0, 4), x = @x[0, 4))
        params(p0_lo = 0, p0_hi = 1, x_lo0 = 0, x_ext0 = 1, x_lo1 = 0, x_ext1 = 4, y_lo0 = 0, y_ext0 = 1, y_lo1 = 0, y_ext1 = 4) state at 0x4C200
  }
}

// -----

// A vertex gives every parameter.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @x : tensor<2x4xf32> mapping {0: [0, 4), 1: [4, 8)} at 0x80000
  ipu21.tensor @y : tensor<2x4xf32> mapping {0: [0, 4), 1: [4, 8)} at 0x80040
  ipu21.codelet @copy uop fields ["x", "y"] inputs 1 code 256 at 0x4C000 {
  ^bb0(%x: !l0uop.buf<2x4xf32>, %y: !l0uop.buf<2x4xf32>):
    %i = l0uop.range 0 to 2 over group_x : index
    %j = l0uop.range 0 to 4 : index
    %px = l0uop.index %x[%i, %j] : !l0uop.buf<2x4xf32>
    %v = l0uop.load %px : f32
    %py = l0uop.index %y[%i, %j] : !l0uop.buf<2x4xf32>
    l0uop.store %py, %v : f32
    l0uop.end %j
    l0uop.end %i
  }
  ipu21.compute_set @cs {
    // expected-error @+1 {{[consistency] IPU.9: a vertex of @copy needs the integer parameter 'y_ext1'}}
    ipu21.vertex @copy on tiles [0, 1) (x = @x[0, 4), y = @y[0, 4))
        params(p0_lo = 0, p0_hi = 1, x_lo0 = 0, x_ext0 = 1, x_lo1 = 0, x_ext1 = 4, y_lo0 = 0, y_ext0 = 1, y_lo1 = 0) state at 0x4C200
  }
}

// -----

// ... and no other.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @x : tensor<2x4xf32> mapping {0: [0, 4), 1: [4, 8)} at 0x80000
  ipu21.tensor @y : tensor<2x4xf32> mapping {0: [0, 4), 1: [4, 8)} at 0x80040
  ipu21.codelet @copy uop fields ["x", "y"] inputs 1 code 256 at 0x4C000 {
  ^bb0(%x: !l0uop.buf<2x4xf32>, %y: !l0uop.buf<2x4xf32>):
    %i = l0uop.range 0 to 2 over group_x : index
    %j = l0uop.range 0 to 4 : index
    %px = l0uop.index %x[%i, %j] : !l0uop.buf<2x4xf32>
    %v = l0uop.load %px : f32
    %py = l0uop.index %y[%i, %j] : !l0uop.buf<2x4xf32>
    l0uop.store %py, %v : f32
    l0uop.end %j
    l0uop.end %i
  }
  ipu21.compute_set @cs {
    // expected-error @+1 {{[consistency] IPU.9: a vertex of @copy has no parameter 'z'}}
    ipu21.vertex @copy on tiles [0, 1) (x = @x[0, 4), y = @y[0, 4))
        params(p0_lo = 0, p0_hi = 1, x_lo0 = 0, x_ext0 = 1, x_lo1 = 0, x_ext1 = 4, y_lo0 = 0, y_ext0 = 1, y_lo1 = 0, y_ext1 = 4, z = 1) state at 0x4C200
  }
}

// -----

// A vertex's slice of a parallel RANGE lies inside it.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @x : tensor<2x4xf32> mapping {0: [0, 4), 1: [4, 8)} at 0x80000
  ipu21.tensor @y : tensor<2x4xf32> mapping {0: [0, 4), 1: [4, 8)} at 0x80040
  ipu21.codelet @copy uop fields ["x", "y"] inputs 1 code 256 at 0x4C000 {
  ^bb0(%x: !l0uop.buf<2x4xf32>, %y: !l0uop.buf<2x4xf32>):
    %i = l0uop.range 0 to 2 over group_x : index
    %j = l0uop.range 0 to 4 : index
    %px = l0uop.index %x[%i, %j] : !l0uop.buf<2x4xf32>
    %v = l0uop.load %px : f32
    %py = l0uop.index %y[%i, %j] : !l0uop.buf<2x4xf32>
    l0uop.store %py, %v : f32
    l0uop.end %j
    l0uop.end %i
  }
  ipu21.compute_set @cs {
    // expected-error @+1 {{[consistency] IPU.9: parallel RANGE 0 takes [1, 3) on this vertex, outside its [0, 2)}}
    ipu21.vertex @copy on tiles [0, 1) (x = @x[0, 4), y = @y[0, 4))
        params(p0_lo = 1, p0_hi = 3, x_lo0 = 0, x_ext0 = 1, x_lo1 = 0, x_ext1 = 4, y_lo0 = 0, y_ext0 = 1, y_lo1 = 0, y_ext1 = 4) state at 0x4C200
  }
}

// -----

// A window lies inside its buffer.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @x : tensor<2x4xf32> mapping {0: [0, 4), 1: [4, 8)} at 0x80000
  ipu21.tensor @y : tensor<2x4xf32> mapping {0: [0, 4), 1: [4, 8)} at 0x80040
  ipu21.codelet @copy uop fields ["x", "y"] inputs 1 code 256 at 0x4C000 {
  ^bb0(%x: !l0uop.buf<2x4xf32>, %y: !l0uop.buf<2x4xf32>):
    %i = l0uop.range 0 to 2 over group_x : index
    %j = l0uop.range 0 to 4 : index
    %px = l0uop.index %x[%i, %j] : !l0uop.buf<2x4xf32>
    %v = l0uop.load %px : f32
    %py = l0uop.index %y[%i, %j] : !l0uop.buf<2x4xf32>
    l0uop.store %py, %v : f32
    l0uop.end %j
    l0uop.end %i
  }
  ipu21.compute_set @cs {
    // expected-error @+1 {{[consistency] IPU.9: field 'x' windows [2, 6) of dimension 1, outside its 4 (or empty)}}
    ipu21.vertex @copy on tiles [0, 1) (x = @x[0, 4), y = @y[0, 4))
        params(p0_lo = 0, p0_hi = 1, x_lo0 = 0, x_ext0 = 1, x_lo1 = 2, x_ext1 = 4, y_lo0 = 0, y_ext0 = 1, y_lo1 = 0, y_ext1 = 4) state at 0x4C200
  }
}

// -----

// A field binds its window's elements.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @x : tensor<2x4xf32> mapping {0: [0, 4), 1: [4, 8)} at 0x80000
  ipu21.tensor @y : tensor<2x4xf32> mapping {0: [0, 4), 1: [4, 8)} at 0x80040
  ipu21.codelet @copy uop fields ["x", "y"] inputs 1 code 256 at 0x4C000 {
  ^bb0(%x: !l0uop.buf<2x4xf32>, %y: !l0uop.buf<2x4xf32>):
    %i = l0uop.range 0 to 2 over group_x : index
    %j = l0uop.range 0 to 4 : index
    %px = l0uop.index %x[%i, %j] : !l0uop.buf<2x4xf32>
    %v = l0uop.load %px : f32
    %py = l0uop.index %y[%i, %j] : !l0uop.buf<2x4xf32>
    l0uop.store %py, %v : f32
    l0uop.end %j
    l0uop.end %i
  }
  ipu21.compute_set @cs {
    // expected-error @+1 {{[consistency] IPU.9: field 'x' binds 3 elements; the parameters make it 4}}
    ipu21.vertex @copy on tiles [0, 1) (x = @x[0, 3), y = @y[0, 4))
        params(p0_lo = 0, p0_hi = 1, x_lo0 = 0, x_ext0 = 1, x_lo1 = 0, x_ext1 = 4, y_lo0 = 0, y_ext0 = 1, y_lo1 = 0, y_ext1 = 4) state at 0x4C200
  }
}

// -----

// A field binds an object of its buffer's type.
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @x : tensor<2x4xf16> mapping {0: [0, 4), 1: [4, 8)} at 0x80000
  ipu21.tensor @y : tensor<2x4xf32> mapping {0: [0, 4), 1: [4, 8)} at 0x80040
  ipu21.codelet @copy uop fields ["x", "y"] inputs 1 code 256 at 0x4C000 {
  ^bb0(%x: !l0uop.buf<2x4xf32>, %y: !l0uop.buf<2x4xf32>):
    %i = l0uop.range 0 to 2 over group_x : index
    %j = l0uop.range 0 to 4 : index
    %px = l0uop.index %x[%i, %j] : !l0uop.buf<2x4xf32>
    %v = l0uop.load %px : f32
    %py = l0uop.index %y[%i, %j] : !l0uop.buf<2x4xf32>
    l0uop.store %py, %v : f32
    l0uop.end %j
    l0uop.end %i
  }
  ipu21.compute_set @cs {
    // expected-error @+1 {{[consistency] IPU.9: field 'x' is 'f32' in @copy, but @x holds 'f16'}}
    ipu21.vertex @copy on tiles [0, 1) (x = @x[0, 4), y = @y[0, 4))
        params(p0_lo = 0, p0_hi = 1, x_lo0 = 0, x_ext0 = 1, x_lo1 = 0, x_ext1 = 4, y_lo0 = 0, y_ext0 = 1, y_lo1 = 0, y_ext1 = 4) state at 0x4C200
  }
}

// -----

// A field binds inside its object on each tile (IPU.3 as for every codelet).
ipu21.graph @g target #ipu21.target<arch = "ipu21", tiles = 8, bytes_per_tile = 638976, element_bytes = 16384, workers = 6, clock_hz = 1490000000, sram_base = 311296, exec_end = 524288, interleaved_begin = 524288, sram_end = 950272, rpt_count_max = 65535> {
  ipu21.tensor @x : tensor<2x4xf32> mapping {0: [0, 2), 1: [2, 8)} at 0x80000
  ipu21.tensor @y : tensor<2x4xf32> mapping {0: [0, 4), 1: [4, 8)} at 0x80040
  ipu21.codelet @copy uop fields ["x", "y"] inputs 1 code 256 at 0x4C000 {
  ^bb0(%x: !l0uop.buf<2x4xf32>, %y: !l0uop.buf<2x4xf32>):
    %i = l0uop.range 0 to 2 over group_x : index
    %j = l0uop.range 0 to 4 : index
    %px = l0uop.index %x[%i, %j] : !l0uop.buf<2x4xf32>
    %v = l0uop.load %px : f32
    %py = l0uop.index %y[%i, %j] : !l0uop.buf<2x4xf32>
    l0uop.store %py, %v : f32
    l0uop.end %j
    l0uop.end %i
  }
  ipu21.compute_set @cs {
    // expected-error @+1 {{[safety] IPU.3: field 'x' binds [0, 4) of tensor @x, but tile 0 holds 2 of its elements}}
    ipu21.vertex @copy on tiles [0, 1) (x = @x[0, 4), y = @y[0, 4))
        params(p0_lo = 0, p0_hi = 1, x_lo0 = 0, x_ext0 = 1, x_lo1 = 0, x_ext1 = 4, y_lo0 = 0, y_ext0 = 1, y_lo1 = 0, y_ext1 = 4) state at 0x4C200
  }
}
