// RUN: synpl-opt %s -split-input-file -verify-diagnostics --synpl-convert-l0uop-to-nvvm

// Every refusal is located at the op, in the lowering's all-or-nothing
// diagnostic; the module is left untouched.

// EXP2 on f64: PTX has no instruction for it, and no libdevice.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 2048 lifetime(0, 1) : !l0uop.buf<256xf64>
  l0uop.kernel @k inputs() outputs(%x = @x : !l0uop.buf<256xf64>)
      grid(1, 1, 1) block(256, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 256 over local_x : index
    %p = l0uop.index %x[%i] : !l0uop.buf<256xf64>
    %v = l0uop.load %p : f64
    // expected-error-re @+1 {{lowered 5 of 7 ops; not lowered: l0uop.exp2 at {{.*}}invalid.mlir:{{[0-9]+}}:{{[0-9]+}}: EXP2 on f64: PTX has no f64 instruction for it and the CUDA lowering does not link libdevice}}
    %e = l0uop.exp2 %v : f64
    l0uop.store %p, %e : f64
    l0uop.end %i
  }
}

// -----

// LOG2 and SIN on f64 likewise (the first is reported, the second noted).
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 2048 lifetime(0, 1) : !l0uop.buf<256xf64>
  l0uop.kernel @k inputs() outputs(%x = @x : !l0uop.buf<256xf64>)
      grid(1, 1, 1) block(256, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 256 over local_x : index
    %p = l0uop.index %x[%i] : !l0uop.buf<256xf64>
    %v = l0uop.load %p : f64
    // expected-error @+1 {{not lowered: l0uop.log2}}
    %l = l0uop.log2 %v : f64
    // expected-note @+1 {{also not lowered: l0uop.sin: SIN on f64}}
    %s = l0uop.sin %v : f64
    l0uop.store %p, %s : f64
    l0uop.end %i
  }
}

// -----

// CUSTOM with an unknown callee.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 1024 lifetime(0, 1) : !l0uop.buf<256xf32>
  l0uop.kernel @k inputs() outputs(%x = @x : !l0uop.buf<256xf32>)
      grid(1, 1, 1) block(256, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 256 over local_x : index
    %p = l0uop.index %x[%i] : !l0uop.buf<256xf32>
    %v = l0uop.load %p : f32
    // expected-error @+1 {{not lowered: l0uop.custom at}}
    %g = l0uop.custom "fused_gelu.ptx"(%v) : (f32) -> f32
    l0uop.store %p, %g : f32
    l0uop.end %i
  }
}

// -----

// A BARRIER in a loop under a guard that masks threads of a block
// (1000 < 4 x 256): masked threads would never arrive.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 4000 lifetime(0, 1) : !l0uop.buf<1000xf32>
  l0uop.kernel @k inputs() outputs(%x = @x : !l0uop.buf<1000xf32>)
      grid(4, 1, 1) block(256, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 1000 over global_x : index
    %k = l0uop.range 0 to 4 : index
    // expected-error @+1 {{not lowered: l0uop.barrier at}}
    l0uop.barrier
    l0uop.end %k
    l0uop.end %i
  }
}

// -----

// The same barrier with the launch exactly covering the range is fine; a
// masking guard over a group RANGE masks whole blocks, also fine. A guard
// within another masking guard cannot be split.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 4000 lifetime(0, 1) : !l0uop.buf<10x100xf32>
  l0uop.kernel @k inputs() outputs(%x = @x : !l0uop.buf<10x100xf32>)
      grid(1, 1, 1) block(128, 8, 1) shared_mem 0 {
    %r = l0uop.range 0 to 7 over local_y : index
    %c = l0uop.range 0 to 100 over local_x : index
    // expected-error @+1 {{BARRIER under the guard of RANGE local_y 0 to 7}}
    l0uop.barrier
    l0uop.end %c
    l0uop.end %r
  }
}

// -----

// More shared memory than an sm_80 block may have (166912 bytes).
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 1024 lifetime(0, 1) : !l0uop.buf<256xf32>
  // expected-error @+1 {{its shared buffers need 200000 bytes of shared memory; sm_80 allows at most 166912 per block}}
  l0uop.kernel @k inputs() outputs(%x = @x : !l0uop.buf<256xf32>)
      grid(1, 1, 1) block(256, 1, 1) shared_mem 200000 shared(%t : !l0uop.buf<50000xf32>) {
    %i = l0uop.range 0 to 256 over local_x : index
    %p = l0uop.index %t[%i] : !l0uop.buf<50000xf32>
    %v = l0uop.load %p : f32
    %q = l0uop.index %x[%i] : !l0uop.buf<256xf32>
    l0uop.store %q, %v : f32
    l0uop.end %i
  }
}

// -----

// Tensor-core tiles are warp-collective: not inside a RANGE over threads.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @a pool @dev offset 0 size 8192 lifetime(0, 1) : !l0uop.buf<64x64xf16>
  l0uop.slot @c pool @dev offset 8192 size 16384 lifetime(0, 1) : !l0uop.buf<64x64xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<64x64xf16>) outputs(%c = @c : !l0uop.buf<64x64xf32>)
      grid(1, 1, 1) block(4, 1, 1) shared_mem 0 {
    %t = l0uop.range 0 to 64 step 16 over local_x : index
    %z = l0uop.const 0 : index
    // expected-error @+1 {{a tensor-core tile op is warp-collective}}
    %ta = l0uop.custom "host.tile_load"(%a, %t, %z) : (!l0uop.buf<64x64xf16>, index, index) -> vector<16x16xf16>
    // expected-note @+1 {{also not lowered: l0uop.custom: a tensor-core tile op is warp-collective}}
    %tc = l0uop.custom "host.tile_load"(%c, %t, %z) : (!l0uop.buf<64x64xf32>, index, index) -> vector<16x16xf32>
    %d = l0uop.wmma %ta, %ta, %tc : vector<16x16xf16>, vector<16x16xf16>, vector<16x16xf32> -> vector<16x16xf32>
    l0uop.custom "host.tile_store"(%c, %t, %z, %d) : (!l0uop.buf<64x64xf32>, index, index, vector<16x16xf32>) -> ()
    l0uop.end %t
  }
}

// -----

// One tile in two roles (A and B).
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @a pool @dev offset 0 size 8192 lifetime(0, 1) : !l0uop.buf<64x64xf16>
  l0uop.slot @c pool @dev offset 8192 size 16384 lifetime(0, 1) : !l0uop.buf<64x64xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<64x64xf16>) outputs(%c = @c : !l0uop.buf<64x64xf32>)
      grid(1, 1, 1) block(32, 1, 1) shared_mem 0 {
    %z = l0uop.const 0 : index
    %ta = l0uop.custom "host.tile_load"(%a, %z, %z) : (!l0uop.buf<64x64xf16>, index, index) -> vector<16x16xf16>
    %tc = l0uop.custom "host.tile_load"(%c, %z, %z) : (!l0uop.buf<64x64xf32>, index, index) -> vector<16x16xf32>
    // expected-error @+1 {{a tile value is used in two WMMA roles}}
    %d = l0uop.wmma %ta, %ta, %tc : vector<16x16xf16>, vector<16x16xf16>, vector<16x16xf32> -> vector<16x16xf32>
    l0uop.custom "host.tile_store"(%c, %z, %z, %d) : (!l0uop.buf<64x64xf32>, index, index, vector<16x16xf32>) -> ()
  }
}

// -----

// A tile used element-wise: its elements are spread over a warp's lanes.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @a pool @dev offset 0 size 8192 lifetime(0, 1) : !l0uop.buf<64x64xf16>
  l0uop.slot @b pool @dev offset 8192 size 8192 lifetime(0, 1) : !l0uop.buf<64x64xf16>
  l0uop.slot @c pool @dev offset 16384 size 16384 lifetime(0, 1) : !l0uop.buf<64x64xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<64x64xf16>, %b = @b : !l0uop.buf<64x64xf16>) outputs(%c = @c : !l0uop.buf<64x64xf32>)
      grid(1, 1, 1) block(32, 1, 1) shared_mem 0 {
    %z = l0uop.const 0 : index
    %ta = l0uop.custom "host.tile_load"(%a, %z, %z) : (!l0uop.buf<64x64xf16>, index, index) -> vector<16x16xf16>
    %tb = l0uop.custom "host.tile_load"(%b, %z, %z) : (!l0uop.buf<64x64xf16>, index, index) -> vector<16x16xf16>
    %tc = l0uop.custom "host.tile_load"(%c, %z, %z) : (!l0uop.buf<64x64xf32>, index, index) -> vector<16x16xf32>
    %d = l0uop.wmma %ta, %tb, %tc : vector<16x16xf16>, vector<16x16xf16>, vector<16x16xf32> -> vector<16x16xf32>
    // expected-error-re @+1 {{not lowered: l0uop.add at {{.*}}: element-wise use of a tensor-core tile value}}
    %e = l0uop.add %d, %d : vector<16x16xf32>
    l0uop.custom "host.tile_store"(%c, %z, %z, %e) : (!l0uop.buf<64x64xf32>, index, index, vector<16x16xf32>) -> ()
  }
}

// -----

// A BARRIER between a REDUCE and its RANGE under a split guard.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 4000 lifetime(0, 1) : !l0uop.buf<1000xf32>
  l0uop.kernel @k inputs() outputs(%x = @x : !l0uop.buf<1000xf32>)
      grid(4, 1, 1) block(256, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 1000 over global_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 4 : index
    %p = l0uop.index %x[%i] : !l0uop.buf<1000xf32>
    %v = l0uop.load %p : f32
    l0uop.end %k
    l0uop.barrier
    // expected-error @+1 {{a BARRIER separates this REDUCE from its RANGE}}
    %s = l0uop.reduce add %v over %k init %zero : f32
    %q = l0uop.index %x[%i] : !l0uop.buf<1000xf32>
    l0uop.store %q, %s : f32
    l0uop.end %i
  }
}

// -----

// Malformed tile intrinsics are refused, not assumed.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @a pool @dev offset 0 size 8192 lifetime(0, 1) : !l0uop.buf<64x64xf16>
  l0uop.slot @c pool @dev offset 8192 size 16384 lifetime(0, 1) : !l0uop.buf<64x64xf32>
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<64x64xf16>) outputs(%c = @c : !l0uop.buf<64x64xf32>)
      grid(1, 1, 1) block(32, 1, 1) shared_mem 0 {
    %z = l0uop.const 0 : index
    %f = l0uop.const 1.0 : f32
    %ta = l0uop.custom "host.tile_load"(%a, %z, %z) : (!l0uop.buf<64x64xf16>, index, index) -> vector<16x16xf16>
    %tb = l0uop.custom "host.tile_load"(%a, %z, %z) : (!l0uop.buf<64x64xf16>, index, index) -> vector<16x16xf16>
    %tc = l0uop.custom "host.tile_load"(%c, %z, %z) : (!l0uop.buf<64x64xf32>, index, index) -> vector<16x16xf32>
    %d = l0uop.wmma %ta, %tb, %tc : vector<16x16xf16>, vector<16x16xf16>, vector<16x16xf32> -> vector<16x16xf32>
    // expected-error @+1 {{host.tile_store moves a 2-D vector of the buffer's element type}}
    l0uop.custom "host.tile_store"(%c, %z, %z, %f) : (!l0uop.buf<64x64xf32>, index, index, f32) -> ()
    // expected-note @+1 {{host.tile_store takes (buffer, index, index, tile) -> () on a 2-D buffer}}
    l0uop.custom "host.tile_store"(%c, %z) : (!l0uop.buf<64x64xf32>, index) -> ()
    l0uop.custom "host.tile_store"(%c, %z, %z, %d) : (!l0uop.buf<64x64xf32>, index, index, vector<16x16xf32>) -> ()
  }
}

// -----

// A launch the chip cannot run: more than 1024 threads per block.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 8192 lifetime(0, 1) : !l0uop.buf<2048xf32>
  // expected-error @+1 {{its block of 2048 threads exceeds the 1024 threads per block of sm_80}}
  l0uop.kernel @k inputs() outputs(%x = @x : !l0uop.buf<2048xf32>)
      grid(1, 1, 1) block(2048, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 2048 over local_x : index
    %one = l0uop.const 1.0 : f32
    %p = l0uop.index %x[%i] : !l0uop.buf<2048xf32>
    l0uop.store %p, %one : f32
    l0uop.end %i
  }
}

// -----

// ... or a grid past 65535 blocks along y.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 400000 lifetime(0, 1) : !l0uop.buf<100000xf32>
  // expected-error @+1 {{its grid (1, 100000, 1) exceeds sm_80's grid limits (2147483647, 65535, 65535)}}
  l0uop.kernel @k inputs() outputs(%x = @x : !l0uop.buf<100000xf32>)
      grid(1, 100000, 1) block(1, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 100000 over group_y : index
    %one = l0uop.const 1.0 : f32
    %p = l0uop.index %x[%i] : !l0uop.buf<100000xf32>
    l0uop.store %p, %one : f32
    l0uop.end %i
  }
}

// -----

// opt_level is a host code generation hint: a device kernel with one is
// refused, not compiled at some other level.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 1024 lifetime(0, 1) : !l0uop.buf<256xf32>
  // expected-error-re @+1 {{lowered 0 of 1 ops; not lowered: l0uop.kernel at {{.*}}invalid.mlir:{{[0-9]+}}:{{[0-9]+}}: opt_level is a host code generation hint; the device kernels are compiled at one level}}
  l0uop.kernel @k inputs() outputs(%x = @x : !l0uop.buf<256xf32>)
      grid(1, 1, 1) block(256, 1, 1) shared_mem 0 attributes {opt_level = 1 : i32} {
    %i = l0uop.range 0 to 256 over local_x : index
    %p = l0uop.index %x[%i] : !l0uop.buf<256xf32>
    %v = l0uop.const 1.0 : f32
    l0uop.store %p, %v : f32
    l0uop.end %i
  }
}
