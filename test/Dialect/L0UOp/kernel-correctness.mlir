// RUN: synpl-opt %s -split-input-file -verify-diagnostics
// Row L0.1 (safety, kernel correctness): UOps type-check, RANGE/END and
// IF/ENDIF nest, INDEX stays inside its buffer.

// L0.1 valid: a 32x32 copy over a flattened buffer; the largest index is
// 31 * 32 + 31 = 1023, inside the 1024 elements.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<1024xf32>
  l0uop.slot @o pool @m offset 4096 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<1024xf32>) outputs(%o = @o : !l0uop.buf<32x32xf32>) grid(1, 1, 1) block(32, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 32 over local_x : index
    %j = l0uop.range 0 to 32 : index
    %c32 = l0uop.const 32 : index
    %row = l0uop.mul %i, %c32 : index
    %flat = l0uop.add %row, %j : index
    %pa = l0uop.index %a[%flat] : !l0uop.buf<1024xf32>
    %v = l0uop.load %pa : f32
    %po = l0uop.index %o[%i, %j] : !l0uop.buf<32x32xf32>
    l0uop.store %po, %v : f32
    l0uop.end %j
    l0uop.end %i
  }
}

// -----

// L0.1: RANGE bounds times strides run past the buffer: i reaches 32.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<1024xf32>
  l0uop.slot @o pool @m offset 4096 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<1024xf32>) outputs(%o = @o : !l0uop.buf<32x32xf32>) grid(1, 1, 1) block(64, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 33 over local_x : index
    %j = l0uop.range 0 to 32 : index
    %c32 = l0uop.const 32 : index
    %row = l0uop.mul %i, %c32 : index
    // expected-note @+1 {{the index is computed here}}
    %flat = l0uop.add %row, %j : index
    // expected-error @+1 {{[safety] L0.1: index #0 ranges over [0, 1055], past dimension 0 of '!l0uop.buf<1024xf32>' (extent 1024)}}
    %pa = l0uop.index %a[%flat] : !l0uop.buf<1024xf32>
    l0uop.end %j
    l0uop.end %i
  }
}

// -----

// L0.1: a constant index past the extent.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %c0 = l0uop.const 0 : index
    // expected-note @+1 {{the index is computed here}}
    %c32 = l0uop.const 32 : index
    // expected-error @+1 {{[safety] L0.1: index #1 ranges over [32, 32], past dimension 1}}
    %p = l0uop.index %a[%c0, %c32] : !l0uop.buf<32x32xf32>
  }
}

// -----

// L0.1: a negative index.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<1024xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<1024xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 4 : index
    // expected-note @+1 {{the index is computed here}}
    %n = l0uop.neg %i : index
    // expected-error @+1 {{[safety] L0.1: index #0 ranges over [-3, 0]}}
    %p = l0uop.index %a[%n] : !l0uop.buf<1024xf32>
    l0uop.end %i
  }
}

// -----

// L0.1: a MOD keeps a wrapped index in bounds.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<1024xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<1024xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 5000 step 7 : index
    %c = l0uop.const 1024 : index
    %w = l0uop.mod %i, %c : index
    %p = l0uop.index %a[%w] : !l0uop.buf<1024xf32>
    %v = l0uop.load %p : f32
    l0uop.end %i
  }
}

// -----

// L0.1: a DIV by a constant bounds a split index: (i div 32, i mod 32) of
// a linear index over 32 x 32 stays inside the buffer.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 1024 : index
    %c = l0uop.const 32 : index
    %row = l0uop.div %i, %c : index
    %col = l0uop.mod %i, %c : index
    %p = l0uop.index %a[%row, %col] : !l0uop.buf<32x32xf32>
    %v = l0uop.load %p : f32
    l0uop.end %i
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 1056 : index
    %c = l0uop.const 32 : index
    // expected-note @+1 {{the index is computed here}}
    %row = l0uop.div %i, %c : index
    %col = l0uop.mod %i, %c : index
    // expected-error @+1 {{[safety] L0.1: index #0 ranges over [0, 32], past dimension 0}}
    %p = l0uop.index %a[%row, %col] : !l0uop.buf<32x32xf32>
    %v = l0uop.load %p : f32
    l0uop.end %i
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %f = l0uop.const 1.0 : f32
    %i = l0uop.const 1 : i32
    // L0.1: ADD of f32 and i32.
    // expected-error @+1 {{[safety] L0.1: operand #1 of 'l0uop.add' has type 'i32', expected 'f32'}}
    %r = l0uop.add %f, %i : (f32, i32) -> f32
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %f = l0uop.const 1.0 : f32
    // L0.1: WHERE with a non-i1 condition.
    // expected-error @+1 {{[safety] L0.1: the condition of 'l0uop.where' has type 'f32', expected 'i1'}}
    %r = l0uop.where %f, %f, %f : (f32, f32, f32) -> f32
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %f = l0uop.const 1.0 : f32
    // L0.1: MULACC takes three operands.
    // expected-error @+1 {{[safety] L0.1: 'l0uop.mulacc' takes 3 operands, got 2}}
    %r = l0uop.mulacc %f, %f : f32
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %f = l0uop.const 1.0 : f32
    // L0.1: CMPLT yields i1.
    // expected-error @+1 {{[safety] L0.1: 'l0uop.cmplt' yields 'i1', not 'f32'}}
    %r = l0uop.cmplt %f, %f : (f32, f32) -> f32
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %i = l0uop.const 3 : i32
    // L0.1: transcendentals are float-only.
    // expected-error @+1 {{[safety] L0.1: 'l0uop.exp2' computes on a float scalar or vector, not 'i32'}}
    %r = l0uop.exp2 %i : i32
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %f = l0uop.const 3.0 : f32
    // L0.1: MOD is integer-only.
    // expected-error @+1 {{[safety] L0.1: 'l0uop.mod' computes on an integer or index scalar or vector, not 'f32'}}
    %r = l0uop.mod %f, %f : f32
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %c = l0uop.const 0 : index
    %p = l0uop.index %a[%c, %c] : !l0uop.buf<32x32xf32>
    // L0.1: LOAD through a pointer to f32 cannot yield i32.
    // expected-error @+1 {{[safety] L0.1: 'l0uop.load' through '!l0uop.ptr<f32>' moves 'f32' or a 1-D vector of it, not 'i32'}}
    %v = l0uop.load %p : (!l0uop.ptr<f32>) -> i32
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %c = l0uop.const 0 : index
    // L0.1: one index per dimension.
    // expected-error @+1 {{[safety] L0.1: 'l0uop.index' into '!l0uop.buf<32x32xf32>' takes 2 indices, got 1}}
    %p = l0uop.index %a[%c] : (!l0uop.buf<32x32xf32>, index) -> !l0uop.ptr<f32>
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %c = l0uop.const 0 : index
    %i = l0uop.const 0 : i32
    // L0.1: indices are of type index.
    // expected-error @+1 {{[safety] L0.1: index #1 has type 'i32', expected index}}
    %p = l0uop.index %a[%c, %i] : (!l0uop.buf<32x32xf32>, index, i32) -> !l0uop.ptr<f32>
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %f = l0uop.const 1.0 : f32
    // expected-error @+1 {{[safety] L0.1: BITCAST from 'f32' (32 bits) to 'i64' (64 bits)}}
    %b = l0uop.bitcast %f : f32 to i64
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %f = l0uop.const 1.0 : f32
    %v = l0uop.vectorize %f, %f : f32
    // expected-error @+1 {{[safety] L0.1: GEP lane 2 is outside 'vector<2xf32>'}}
    %e = l0uop.gep %v[2] : vector<2xf32> -> f32
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %f = l0uop.const 1.0 : f32
    %h = l0uop.const 1.0 : f16
    // expected-error @+1 {{[safety] L0.1: operand #1 of 'l0uop.vectorize' has type 'f16', expected 'f32'}}
    %v = l0uop.vectorize %f, %h : (f32, f16) -> vector<2xf32>
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %ta = l0uop.custom "tile_a"() : () -> vector<16x8xf16>
    %tb = l0uop.custom "tile_b"() : () -> vector<16x16xf16>
    %tc = l0uop.custom "tile_c"() : () -> vector<16x16xf32>
    // expected-error @+1 {{[safety] L0.1: WMMA tiles disagree on K}}
    %d = l0uop.wmma %ta, %tb, %tc : vector<16x8xf16>, vector<16x16xf16>, vector<16x16xf32> -> vector<16x16xf32>
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 4 : index
    // expected-note @+1 {{still open}}
    %j = l0uop.range 0 to 4 : index
    // L0.1: END of an outer range while the inner one is open.
    // expected-error @+1 {{[safety] L0.1: END closes a RANGE while an inner RANGE is still open}}
    l0uop.end %i
    l0uop.end %j
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 4 : index
    %c = l0uop.const 1 : index
    %t = l0uop.cmpne %i, %c : index
    l0uop.if %t
    // expected-note @+1 {{still open}}
    %j = l0uop.range 0 to 4 : index
    // expected-error @+1 {{[safety] L0.1: ENDIF while a RANGE is still open}}
    l0uop.endif
    l0uop.end %j
    l0uop.end %i
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    // expected-error @+1 {{[safety] L0.1: RANGE is never closed by END}}
    %i = l0uop.range 0 to 4 : index
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    // expected-error @+1 {{[safety] L0.1: ENDIF with no open IF}}
    l0uop.endif
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %c = l0uop.const 1 : index
    // expected-error @+1 {{[safety] L0.1: END closes a RANGE, and its operand is not one}}
    l0uop.end %c
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    // expected-note @+1 {{inside this RANGE}}
    %i = l0uop.range 0 to 4 : index
    // expected-note @+1 {{defined here}}
    %f = l0uop.cast %i : index to f32
    l0uop.end %i
    // L0.1: a value of a closed range's body, outside a REDUCE.
    // expected-error @+1 {{[safety] L0.1: operand #0 is used after the RANGE that defines it is closed}}
    %g = l0uop.neg %f : f32
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %z = l0uop.const 0.0 : f32
    %i = l0uop.range 0 to 4 : index
    %f = l0uop.cast %i : index to f32
    // expected-error @+1 {{[safety] L0.1: REDUCE inside the RANGE it folds}}
    %s = l0uop.reduce add %f over %i init %z : f32
    l0uop.end %i
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %z = l0uop.const 0 : i32
    %i = l0uop.range 0 to 4 : index
    %f = l0uop.cast %i : index to f32
    l0uop.end %i
    // expected-error @+1 {{[safety] L0.1: REDUCE of 'f32' from 'i32' must yield the same dtype, not 'f32'}}
    %s = l0uop.reduce add %f over %i init %z : (f32, index, i32) -> f32
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.slot @o pool @m offset 4096 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs(%o = @o : !l0uop.buf<32x32xf32>) grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %c = l0uop.const 0 : index
    %f = l0uop.const 0.0 : f32
    %p = l0uop.index %a[%c, %c] : !l0uop.buf<32x32xf32>
    // expected-error @+1 {{[safety] L0.1: STORE into input @a; kernels write only their outputs}}
    l0uop.store %p, %f : f32
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(32, 1, 1) shared_mem 1024 {
    %i = l0uop.range 0 to 32 over local_x : index
    %c = l0uop.const 16 : index
    %t = l0uop.cmplt %i, %c : index
    // expected-note @+1 {{the IF}}
    l0uop.if %t
    // expected-error @+1 {{[safety] L0.1: BARRIER under an IF: threads that skip the IF never reach it}}
    l0uop.barrier
    l0uop.endif
    l0uop.end %i
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(4, 1, 1) block(256, 1, 1) shared_mem 0 {
    // L0.1: the launch has 4 x 256 threads along x, the range 2048 values.
    // expected-error @+1 {{[safety] L0.1: RANGE over global_x has 2048 iterations but the launch (grid(4, 1, 1) block(256, 1, 1)) provides 1024}}
    %i = l0uop.range 0 to 2048 over global_x : index
    l0uop.end %i
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    // expected-error @+1 {{[safety] L0.1: 'arith.constant' is not a UOp; kernel bodies hold UOps only}}
    %c = arith.constant 1 : index
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 4096 lifetime(0, 1) : !l0uop.buf<32x32xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<32x32xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    // expected-error @+1 {{[safety] L0.1: RANGE step must be positive, got 0}}
    %i = l0uop.range 0 to 4 step 0 : index
    l0uop.end %i
  }
}

// -----

// L0.1: a 4-lane LOAD whose first lane can be element 254 of 256.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 1024 lifetime(0, 1) : !l0uop.buf<256xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<256xf32>) outputs() grid(1, 1, 1) block(128, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 255 step 2 over local_x : index
    %p = l0uop.index %a[%i] : !l0uop.buf<256xf32>
    // expected-error @+1 {{[safety] L0.1: a 4-lane 'l0uop.load' starting at index 254 of the last dimension of '!l0uop.buf<256xf32>' runs past its extent 256}}
    %v = l0uop.load %p : vector<4xf32>
    l0uop.end %i
  }
}

// -----

// L0.1 valid: with step 4 the last 4-lane LOAD starts at 252.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 1024 lifetime(0, 1) : !l0uop.buf<256xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<256xf32>) outputs() grid(1, 1, 1) block(64, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 256 step 4 over local_x : index
    %p = l0uop.index %a[%i] : !l0uop.buf<256xf32>
    %v = l0uop.load %p : vector<4xf32>
    l0uop.end %i
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 1024 lifetime(0, 1) : !l0uop.buf<256xf32>
  // L0.1: a 16x16 f32 shared tile needs 1024 bytes of shared memory.
  // expected-error @+1 {{[safety] L0.1: shared buffers take 1024 bytes but the kernel reserves shared_mem 512}}
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<256xf32>) outputs() grid(1, 1, 1) block(16, 16, 1) shared_mem 512 shared(%t : !l0uop.buf<16x16xf32>) {
  }
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @a pool @m offset 0 size 1024 lifetime(0, 1) : !l0uop.buf<256xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<256xf32>) outputs() grid(1, 1, 1) block(16, 1, 1) shared_mem 64 shared(%t : !l0uop.buf<16xf32>) {
    %i = l0uop.range 0 to 16 over local_x : index
    %c = l0uop.const 16 : index
    // expected-note @+1 {{the index is computed here}}
    %j = l0uop.add %i, %c : index
    // L0.1: shared buffers are bounds-checked like the others.
    // expected-error @+1 {{[safety] L0.1: index #0 ranges over [16, 31], past dimension 0 of '!l0uop.buf<16xf32>' (extent 16)}}
    %p = l0uop.index %t[%j] : !l0uop.buf<16xf32>
    l0uop.end %i
  }
}
