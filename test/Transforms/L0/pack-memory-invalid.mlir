// RUN: synpl-opt %s -mlir-very-unsafe-disable-verifier-on-parsing \
// RUN:   -split-input-file --synpl-l0-pack-memory -verify-diagnostics
// The plans are parsed without verification, as an emitter's unpacked
// output would be; the pass must report, never crash, and a plan it cannot
// pack is rejected with row L0.5 (resource, memory capacity).

// L0.5: three 512-byte slots are live at t=2; no layout fits 1 KiB.
l0uop.plan @p pipeline_depth 1 {
  // expected-error @+1 {{[resource] L0.5: pool @arena needs 1536 bytes once packed, past its capacity of 1024 bytes (at t=2 its live slots alone sum to 1536 bytes)}}
  l0uop.pool @arena arena on device capacity 1KiB
  // expected-note @+1 {{live at t=2: 512 bytes}}
  l0uop.slot @a pool @arena offset 0 size 512 lifetime(0, 2) : !l0uop.buf<128xf32>
  // expected-note @+1 {{live at t=2: 512 bytes}}
  l0uop.slot @b pool @arena offset 0 size 512 lifetime(1, 3) : !l0uop.buf<128xf32>
  // expected-note @+1 {{live at t=2: 512 bytes}}
  l0uop.slot @c pool @arena offset 0 size 512 lifetime(2, 4) : !l0uop.buf<128xf32>
}

// -----

// L0.5: the live bytes never pass 4096, and a layout of 4096 bytes exists
// (pack-memory.mlir, @kept), but the heuristic finds 4352 and the layout
// given is no layout (every slot at 0): the pass reports that it has none.
l0uop.plan @p pipeline_depth 1 {
  // expected-error @+1 {{[resource] L0.5: pool @arena needs 4352 bytes once packed, past its capacity of 4096 bytes (its live slots never sum to more than 4096 bytes, but the packer found no layout that fits)}}
  l0uop.pool @arena arena on device capacity 4KiB
  l0uop.slot @a pool @arena offset 0 size 256 lifetime(2, 5) : !l0uop.buf<64xf32>
  l0uop.slot @b pool @arena offset 0 size 1024 lifetime(2, 3) : !l0uop.buf<256xf32>
  l0uop.slot @c pool @arena offset 0 size 1280 lifetime(0, 4) : !l0uop.buf<320xf32>
  l0uop.slot @d pool @arena offset 0 size 768 lifetime(2, 5) : !l0uop.buf<192xf32>
  l0uop.slot @e pool @arena offset 0 size 1536 lifetime(0, 1) : !l0uop.buf<384xf32>
  l0uop.slot @f pool @arena offset 0 size 1280 lifetime(4, 5) : !l0uop.buf<320xf32>
  l0uop.slot @g pool @arena offset 0 size 768 lifetime(1, 3) : !l0uop.buf<192xf32>
}

// -----

// L0.5: 300 live bytes, but three slots live together at a 256-byte
// alignment take at least 256 + 256 + 100 bytes, more than the pool has.
l0uop.plan @p pipeline_depth 1 {
  // expected-error @+1 {{[resource] L0.5: pool @arena needs 612 bytes once packed, past its capacity of 512 bytes (its live slots sum to at most 300 bytes, but with the padding its alignment of 256 forces no layout takes less than 612)}}
  l0uop.pool @arena arena on device capacity 512
  l0uop.slot @a pool @arena offset 0 size 100 lifetime(0, 1) : !l0uop.buf<25xf32>
  l0uop.slot @b pool @arena offset 0 size 100 lifetime(0, 1) : !l0uop.buf<25xf32>
  l0uop.slot @c pool @arena offset 0 size 100 lifetime(0, 1) : !l0uop.buf<25xf32>
}

// -----

// A malformed slot (its verifier would reject it) is reported, not packed.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @arena arena on device capacity 1KiB
  // expected-error @+1 {{cannot pack slot @a: it needs a positive size and a lifetime (first_use, last_use) with 0 <= first_use <= last_use}}
  l0uop.slot @a pool @arena offset 0 size 512 lifetime(3, 1) : !l0uop.buf<128xf32>
}

// -----

// A slot whose pool does not resolve is skipped by the pass; the verifier
// that runs after it reports the dangling reference.
l0uop.plan @p pipeline_depth 1 {
  // expected-remark @+1 {{pool @arena: 1 slot, peak 512 B, lower bound 512 B, was 512 B before packing}}
  l0uop.pool @arena arena on device capacity 1KiB
  l0uop.slot @a pool @arena offset 0 size 512 lifetime(0, 1) : !l0uop.buf<128xf32>
  // expected-error @+1 {{'l0uop.slot' op names pool @nope, which is not an l0uop.pool}}
  l0uop.slot @b pool @nope offset 0 size 512 lifetime(0, 1) : !l0uop.buf<128xf32>
}
