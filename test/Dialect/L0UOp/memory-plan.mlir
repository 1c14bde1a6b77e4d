// RUN: synpl-opt %s -split-input-file -verify-diagnostics
// Rows L0.2 (safety, buffer lifetime safety), L0.5 (resource, memory
// capacity) and L0.6 (resource, pool exhaustion) on the memory plan.

// L0.2 valid: @b reuses @a's bytes after @a's last use (tick 2 < tick 3).
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @arena arena on device capacity 1KiB
  l0uop.slot @a pool @arena offset 0 size 512 lifetime(0, 2) : !l0uop.buf<128xf32>
  l0uop.slot @b pool @arena offset 256 size 512 lifetime(3, 5) : !l0uop.buf<128xf32>
  l0uop.slot @c pool @arena offset 768 size 256 lifetime(0, 5) : !l0uop.buf<64xf32>
}

// -----

// L0.2: @b shares bytes [256, 512) with @a while both are live at ticks 2..2.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @arena arena on device capacity 1KiB
  // expected-note @+1 {{the other slot}}
  l0uop.slot @a pool @arena offset 0 size 512 lifetime(0, 2) : !l0uop.buf<128xf32>
  // expected-error @+1 {{[safety] L0.2: slots @a and @b share bytes [256, 512) of pool @arena while both are live (ticks 2 to 2)}}
  l0uop.slot @b pool @arena offset 256 size 512 lifetime(2, 5) : !l0uop.buf<128xf32>
}

// -----

// L0.2: a slot beyond its pool.
l0uop.plan @p pipeline_depth 1 {
  // expected-note @+1 {{the pool}}
  l0uop.pool @arena arena on device capacity 1KiB
  // expected-error @+1 {{[safety] L0.2: slot @a occupies bytes [768, 1280) of pool @arena, past its capacity of 1024 bytes}}
  l0uop.slot @a pool @arena offset 768 size 512 lifetime(0, 2) : !l0uop.buf<128xf32>
}

// -----

// L0.2: a run-time-placed slot larger than its pool.
l0uop.plan @p pipeline_depth 1 {
  // expected-note @+1 {{the pool}}
  l0uop.pool @staging freelist on host capacity 1KiB
  // expected-error @+1 {{[safety] L0.2: slot @a (2048 bytes) is larger than its pool @staging (1024 bytes)}}
  l0uop.slot @a pool @staging size 2048 lifetime(0, 2) : !l0uop.buf<512xf32>
}

// -----

// L0.5 valid: staggered lifetimes keep at most 1024 bytes live.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @staging freelist on host capacity 1KiB
  l0uop.slot @a pool @staging size 512 lifetime(0, 2) : !l0uop.buf<128xf32>
  l0uop.slot @b pool @staging size 512 lifetime(1, 3) : !l0uop.buf<128xf32>
  l0uop.slot @c pool @staging size 512 lifetime(3, 4) : !l0uop.buf<128xf32>
}

// -----

// L0.5: at t=2 three 512-byte slots are live in a 1 KiB pool.
l0uop.plan @p pipeline_depth 1 {
  // expected-error @+1 {{[resource] L0.5: at t=2 the live slots of pool @staging sum to 1536 bytes, past its capacity of 1024 bytes}}
  l0uop.pool @staging freelist on host capacity 1KiB
  // expected-note @+1 {{live at t=2: 512 bytes}}
  l0uop.slot @a pool @staging size 512 lifetime(0, 2) : !l0uop.buf<128xf32>
  // expected-note @+1 {{live at t=2: 512 bytes}}
  l0uop.slot @b pool @staging size 512 lifetime(1, 3) : !l0uop.buf<128xf32>
  // expected-note @+1 {{live at t=2: 512 bytes}}
  l0uop.slot @c pool @staging size 500 lifetime(2, 4) : !l0uop.buf<125xf32>
}

// -----

// L0.5: run-time allocations are rounded up to the pool's alignment: two
// 100-byte slots take 2 x 4096 bytes of a 4 KiB pool.
l0uop.plan @p pipeline_depth 1 {
  // expected-error @+1 {{[resource] L0.5: at t=0 the live slots of pool @staging sum to 8192 bytes, past its capacity of 4096 bytes}}
  l0uop.pool @staging freelist on host capacity 4KiB align 4096
  // expected-note @+1 {{live at t=0: 4096 bytes}}
  l0uop.slot @a pool @staging size 100 lifetime(0, 0) : !l0uop.buf<25xf32>
  // expected-note @+1 {{live at t=0: 4096 bytes}}
  l0uop.slot @b pool @staging size 100 lifetime(0, 0) : !l0uop.buf<25xf32>
}

// -----

// L0.6 valid: depth 2 needs 2 x 1024 bytes of staging, and the pool has it.
l0uop.plan @p pipeline_depth 2 {
  l0uop.pool @staging freelist on host capacity 2KiB
  l0uop.slot @a pool @staging size 512 lifetime(0, 2) : !l0uop.buf<128xf32>
  l0uop.slot @b pool @staging size 512 lifetime(1, 3) : !l0uop.buf<128xf32>
}

// -----

// L0.6 valid: the same pool at depth 1 holds its one copy.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @staging freelist on host capacity 1KiB
  l0uop.slot @a pool @staging size 512 lifetime(0, 2) : !l0uop.buf<128xf32>
  l0uop.slot @b pool @staging size 512 lifetime(1, 3) : !l0uop.buf<128xf32>
}

// -----

// L0.6: at depth 2 the 1024-byte peak is needed twice.
// expected-note @+1 {{pipeline_depth set here}}
l0uop.plan @p pipeline_depth 2 {
  // expected-error @+1 {{[resource] L0.6: freelist pool @staging has no headroom at pipeline_depth 2: its peak of 1024 bytes (t=1) is allocated once per step in flight, 2 x 1024 = 2048 bytes, past its capacity of 1024 bytes}}
  l0uop.pool @staging freelist on host capacity 1KiB
  l0uop.slot @a pool @staging size 512 lifetime(0, 2) : !l0uop.buf<128xf32>
  l0uop.slot @b pool @staging size 512 lifetime(1, 3) : !l0uop.buf<128xf32>
}

// -----

// L0.6 applies to freelist pools only: persistent state is one copy.
l0uop.plan @p pipeline_depth 4 {
  l0uop.pool @params persistent on device capacity 1KiB
  l0uop.slot @w pool @params offset 0 size 1024 lifetime(0, 9) : !l0uop.buf<256xf32>
}
