// RUN: synpl-opt %s -split-input-file -verify-diagnostics
// l0uop.collective: its own rows (kinds, element types, sizes, the plan's
// ranks), L0.3 while it is in flight, L0.7 (one stream, completion after it).

// Valid: a gradient bucket's all-reduce overlaps the kernel after it and
// completes before the update that reads it; a gather and a broadcast.
l0uop.plan @p pipeline_depth 1 ranks 2 {
  l0uop.pool @m arena on host capacity 1MiB
  l0uop.slot @g pool @m offset 0 size 1024 lifetime(0, 3) : !l0uop.buf<256xf32>
  l0uop.slot @h pool @m offset 1024 size 1024 lifetime(0, 3) : !l0uop.buf<256xf32>
  l0uop.slot @part pool @m offset 2048 size 512 lifetime(0, 3) : !l0uop.buf<128xf32>
  l0uop.slot @whole pool @m offset 2560 size 1024 lifetime(0, 3) : !l0uop.buf<256xf32>
  l0uop.kernel @grad inputs() outputs(%g = @g : !l0uop.buf<256xf32>) grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {}
  l0uop.kernel @other inputs() outputs(%h = @h : !l0uop.buf<256xf32>) grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {}
  l0uop.kernel @update inputs(%g = @g : !l0uop.buf<256xf32>) outputs(%h = @h : !l0uop.buf<256xf32>) grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {}
  l0uop.collective @ar all_reduce(mean) [@g] complete_before @update
  l0uop.collective @ag all_gather [@part, @whole]
  l0uop.collective @bc broadcast [@h] root 1
  l0uop.stream @s0 [@grad, @ar, @other, @update, @ag, @bc]
}

// -----

// L0.3: the kernel between the start and the completion writes the bucket.
l0uop.plan @p pipeline_depth 1 ranks 2 {
  l0uop.pool @m arena on host capacity 1MiB
  l0uop.slot @g pool @m offset 0 size 1024 lifetime(0, 3) : !l0uop.buf<256xf32>
  l0uop.kernel @grad inputs() outputs(%g = @g : !l0uop.buf<256xf32>) grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {}
  l0uop.kernel @late inputs() outputs(%g = @g : !l0uop.buf<256xf32>) grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {}
  l0uop.kernel @update inputs(%g = @g : !l0uop.buf<256xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {}
  l0uop.collective @ar all_reduce(sum) [@g] complete_before @update
  // expected-error @+1 {{[safety] L0.3: @late writes slot @g while collective @ar is in flight (from its entry to @update)}}
  l0uop.stream @s0 [@grad, @ar, @late, @update]
}

// -----

// L0.3: a gather's source is still being sent when a kernel rewrites it.
l0uop.plan @p pipeline_depth 1 ranks 2 {
  l0uop.pool @m arena on host capacity 1MiB
  l0uop.slot @part pool @m offset 0 size 512 lifetime(0, 3) : !l0uop.buf<128xf32>
  l0uop.slot @whole pool @m offset 512 size 1024 lifetime(0, 3) : !l0uop.buf<256xf32>
  l0uop.kernel @k inputs() outputs(%p = @part : !l0uop.buf<128xf32>) grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {}
  l0uop.kernel @use inputs(%w = @whole : !l0uop.buf<256xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {}
  l0uop.collective @ag all_gather [@part, @whole] complete_before @use
  // expected-error @+1 {{[safety] L0.3: @k writes slot @part, which collective @ag is still sending}}
  l0uop.stream @s0 [@ag, @k, @use]
}

// -----

// L0.7: on no stream, no rank runs it.
l0uop.plan @p pipeline_depth 1 ranks 2 {
  l0uop.pool @m arena on host capacity 1MiB
  l0uop.slot @g pool @m offset 0 size 1024 lifetime(0, 3) : !l0uop.buf<256xf32>
  // expected-error @+1 {{[liveness] L0.7: collective @ar is on no stream}}
  l0uop.collective @ar all_reduce(sum) [@g]
}

// -----

// L0.7: on two streams.
l0uop.plan @p pipeline_depth 2 ranks 2 {
  l0uop.pool @m arena on host capacity 1MiB
  l0uop.slot @g pool @m offset 0 size 1024 lifetime(0, 3) : !l0uop.buf<256xf32>
  // expected-error @+1 {{[liveness] L0.7: collective @ar runs on streams @s0 and @s1: every rank must reach its collectives once per step, in one order}}
  l0uop.collective @ar all_reduce(sum) [@g]
  // expected-note @+1 {{the other stream}}
  l0uop.stream @s0 [@ar]
  // expected-error @+1 {{[safety] L0.3: slot @g is written by @ar on stream @s0 and written by @ar on stream @s1, and no sync orders them}}
  l0uop.stream @s1 [@ar]
}

// -----

// L0.7: the completion comes before the start.
l0uop.plan @p pipeline_depth 1 ranks 2 {
  l0uop.pool @m arena on host capacity 1MiB
  l0uop.slot @g pool @m offset 0 size 1024 lifetime(0, 3) : !l0uop.buf<256xf32>
  l0uop.kernel @k inputs(%g = @g : !l0uop.buf<256xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {}
  // expected-error @+1 {{[liveness] L0.7: collective @ar completes before @k, which does not come after it on stream @s0}}
  l0uop.collective @ar all_reduce(sum) [@g] complete_before @k
  l0uop.stream @s0 [@k, @ar]
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on host capacity 1MiB
  l0uop.slot @g pool @m offset 0 size 1024 lifetime(0, 3) : !l0uop.buf<256xf32>
  // expected-error @+1 {{combines the work of several ranks, but plan @p is placed on one process (its `ranks` is 1)}}
  l0uop.collective @ar all_reduce(sum) [@g]
  l0uop.stream @s0 [@ar]
}

// -----

l0uop.plan @p pipeline_depth 1 ranks 4 {
  l0uop.pool @m arena on host capacity 1MiB
  l0uop.slot @part pool @m offset 0 size 512 lifetime(0, 3) : !l0uop.buf<128xf32>
  l0uop.slot @whole pool @m offset 512 size 1024 lifetime(0, 3) : !l0uop.buf<256xf32>
  // expected-error @+1 {{pair (@part, @whole): all_gather over 4 ranks needs the destination to hold 4 x 128 elements, not 256}}
  l0uop.collective @ag all_gather [@part, @whole]
  l0uop.stream @s0 [@ag]
}

// -----

l0uop.plan @p pipeline_depth 1 ranks 2 {
  l0uop.pool @m arena on host capacity 1MiB
  l0uop.slot @n pool @m offset 0 size 1024 lifetime(0, 3) : !l0uop.buf<256xi32>
  // expected-error @+1 {{takes the mean of slot @n, which holds integers}}
  l0uop.collective @ar all_reduce(mean) [@n]
  l0uop.stream @s0 [@ar]
}

// -----

l0uop.plan @p pipeline_depth 1 ranks 2 {
  l0uop.pool @m arena on host capacity 1MiB
  l0uop.slot @b pool @m offset 0 size 256 lifetime(0, 3) : !l0uop.buf<256xui8>
  // expected-error @+1 {{combines f32, f64, i32 or i64 values; slot @b holds}}
  l0uop.collective @ar all_reduce(sum) [@b]
  l0uop.stream @s0 [@ar]
}

// -----

l0uop.plan @p pipeline_depth 1 ranks 2 {
  l0uop.pool @m arena on host capacity 1MiB
  l0uop.slot @g pool @m offset 0 size 1024 lifetime(0, 3) : !l0uop.buf<256xf32>
  // expected-error @+1 {{all_reduce needs how to combine the ranks' values (sum, mean, max or min)}}
  l0uop.collective @ar all_reduce [@g]
}

// -----

l0uop.plan @p pipeline_depth 1 ranks 2 {
  l0uop.pool @m arena on host capacity 1MiB
  l0uop.slot @g pool @m offset 0 size 1024 lifetime(0, 3) : !l0uop.buf<256xf32>
  // expected-error @+1 {{broadcasts from rank 2, but the plan has 2 ranks}}
  l0uop.collective @bc broadcast [@g] root 2
  l0uop.stream @s0 [@bc]
}

// -----

l0uop.plan @p pipeline_depth 1 ranks 2 {
  l0uop.pool @m arena on host capacity 1MiB
  l0uop.slot @g pool @m offset 0 size 1024 lifetime(0, 3) : !l0uop.buf<256xf32>
  // expected-error @+1 {{all_gather takes (source, destination) pairs; it names 1 slots}}
  l0uop.collective @ag all_gather [@g]
}
