// RUN: synpl-opt %s -split-input-file -verify-diagnostics
// Rows L0.3 (safety, stream hazard) and L0.4 (liveness, sync completeness)
// over the stream and sync plans.

// L0.3 valid: both streams update @h, and an event orders step N before
// step N+1 (the spec's stream inference example).
l0uop.plan @p pipeline_depth 2 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @x pool @m offset 0 size 1024 lifetime(0, 2) : !l0uop.buf<256xf32>
  l0uop.slot @h pool @m offset 1024 size 1024 lifetime(0, 2) : !l0uop.buf<256xf32>
  l0uop.kernel @k0 inputs(%x = @x : !l0uop.buf<256xf32>) outputs(%h = @h : !l0uop.buf<256xf32>) grid(1, 1, 1) block(256, 1, 1) shared_mem 0 {}
  l0uop.kernel @sgd inputs() outputs(%h = @h : !l0uop.buf<256xf32>) grid(1, 1, 1) block(256, 1, 1) shared_mem 0 {}
  l0uop.stream @s0 [@k0, @sgd]
  l0uop.stream @s1 [@k0, @sgd]
  l0uop.event @e0
  l0uop.record @e0 after @sgd on @s0
  l0uop.wait @e0 before @k0 on @s1
}

// -----

// L0.3: the same plan without the sync.
l0uop.plan @p pipeline_depth 2 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @x pool @m offset 0 size 1024 lifetime(0, 2) : !l0uop.buf<256xf32>
  l0uop.slot @h pool @m offset 1024 size 1024 lifetime(0, 2) : !l0uop.buf<256xf32>
  l0uop.kernel @k0 inputs(%x = @x : !l0uop.buf<256xf32>) outputs(%h = @h : !l0uop.buf<256xf32>) grid(1, 1, 1) block(256, 1, 1) shared_mem 0 {}
  // expected-note @+1 {{the other stream}}
  l0uop.stream @s0 [@k0]
  // expected-error @+1 {{[safety] L0.3: slot @h is written by @k0 on stream @s0 and written by @k0 on stream @s1, and no sync orders them}}
  l0uop.stream @s1 [@k0]
}

// -----

// L0.3 valid: happens-before is transitive, s0 -> s1 -> s2.
l0uop.plan @p pipeline_depth 3 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @h pool @m offset 0 size 1024 lifetime(0, 2) : !l0uop.buf<256xf32>
  l0uop.slot @y pool @m offset 1024 size 1024 lifetime(0, 2) : !l0uop.buf<256xf32>
  l0uop.kernel @w inputs() outputs(%h = @h : !l0uop.buf<256xf32>) grid(1, 1, 1) block(256, 1, 1) shared_mem 0 {}
  l0uop.kernel @other inputs() outputs(%y = @y : !l0uop.buf<256xf32>) grid(1, 1, 1) block(256, 1, 1) shared_mem 0 {}
  l0uop.stream @s0 [@w]
  l0uop.stream @s1 [@other]
  l0uop.stream @s2 [@w]
  l0uop.event @e0
  l0uop.event @e1
  l0uop.record @e0 after @w on @s0
  l0uop.wait @e0 before @other on @s1
  l0uop.record @e1 after @other on @s1
  l0uop.wait @e1 before @w on @s2
}

// -----

// L0.3: the sync orders the wrong pair: s1's writer runs before the wait.
l0uop.plan @p pipeline_depth 2 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @h pool @m offset 0 size 1024 lifetime(0, 2) : !l0uop.buf<256xf32>
  l0uop.slot @y pool @m offset 1024 size 1024 lifetime(0, 2) : !l0uop.buf<256xf32>
  l0uop.kernel @w inputs() outputs(%h = @h : !l0uop.buf<256xf32>) grid(1, 1, 1) block(256, 1, 1) shared_mem 0 {}
  l0uop.kernel @other inputs() outputs(%y = @y : !l0uop.buf<256xf32>) grid(1, 1, 1) block(256, 1, 1) shared_mem 0 {}
  // expected-note @+1 {{the other stream}}
  l0uop.stream @s0 [@w]
  // expected-error @+1 {{[safety] L0.3: slot @h is written by @w on stream @s0 and written by @w on stream @s1, and no sync orders them}}
  l0uop.stream @s1 [@w, @other]
  l0uop.event @e0
  l0uop.record @e0 after @w on @s0
  l0uop.wait @e0 before @other on @s1
}

// -----

// L0.4 valid: a transfer stream produces @x_dev, the compute stream waits.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @host freelist on host capacity 1MiB
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @x_host pool @host size 1024 lifetime(0, 1) : !l0uop.buf<256xf32>
  l0uop.slot @x pool @m offset 0 size 1024 lifetime(0, 2) : !l0uop.buf<256xf32>
  l0uop.slot @y pool @m offset 1024 size 1024 lifetime(1, 2) : !l0uop.buf<256xf32>
  l0uop.transfer @tx @x_host -> @x h2d bytes 1024
  l0uop.kernel @k inputs(%x = @x : !l0uop.buf<256xf32>) outputs(%y = @y : !l0uop.buf<256xf32>) grid(1, 1, 1) block(256, 1, 1) shared_mem 0 {}
  l0uop.stream @copy [@tx]
  l0uop.stream @compute [@k]
  l0uop.event @x_ready
  l0uop.record @x_ready after @tx on @copy
  l0uop.wait @x_ready before @k on @compute
}

// -----

// L0.4: the consumer on @compute has no event from the producer on @copy.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @host freelist on host capacity 1MiB
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @x_host pool @host size 1024 lifetime(0, 1) : !l0uop.buf<256xf32>
  l0uop.slot @x pool @m offset 0 size 1024 lifetime(0, 2) : !l0uop.buf<256xf32>
  l0uop.slot @y pool @m offset 1024 size 1024 lifetime(1, 2) : !l0uop.buf<256xf32>
  l0uop.transfer @tx @x_host -> @x h2d bytes 1024
  l0uop.kernel @k inputs(%x = @x : !l0uop.buf<256xf32>) outputs(%y = @y : !l0uop.buf<256xf32>) grid(1, 1, 1) block(256, 1, 1) shared_mem 0 {}
  // expected-note @+1 {{the producer's stream}}
  l0uop.stream @copy [@tx]
  // expected-error @+1 {{[liveness] L0.4: @k on stream @compute reads slot @x, which @tx on stream @copy produces, but no event recorded after @tx is waited before @k}}
  l0uop.stream @compute [@k]
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @y pool @m offset 0 size 1024 lifetime(1, 2) : !l0uop.buf<256xf32>
  l0uop.kernel @k inputs() outputs(%y = @y : !l0uop.buf<256xf32>) grid(1, 1, 1) block(256, 1, 1) shared_mem 0 {}
  l0uop.stream @s0 [@k]
  l0uop.event @e0
  // L0.4: recorded, never waited.
  // expected-error @+1 {{[liveness] L0.4: event @e0 is recorded after @k on @s0 but no stream waits for it}}
  l0uop.record @e0 after @k on @s0
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @y pool @m offset 0 size 1024 lifetime(1, 2) : !l0uop.buf<256xf32>
  l0uop.kernel @k inputs() outputs(%y = @y : !l0uop.buf<256xf32>) grid(1, 1, 1) block(256, 1, 1) shared_mem 0 {}
  l0uop.stream @s0 [@k]
  l0uop.event @e0
  // L0.4: waited, never recorded.
  // expected-error @+1 {{[liveness] L0.4: stream @s0 waits for event @e0 before @k, but no stream records it: the wait never returns}}
  l0uop.wait @e0 before @k on @s0
}

// -----

l0uop.plan @p pipeline_depth 1 {
  // L0.4: an event nothing uses.
  // expected-error @+1 {{[liveness] L0.4: event @e0 is never recorded nor waited}}
  l0uop.event @e0
}

// -----

l0uop.plan @p pipeline_depth 2 {
  l0uop.pool @m arena on device capacity 1MiB
  l0uop.slot @y pool @m offset 0 size 1024 lifetime(1, 2) : !l0uop.buf<256xf32>
  l0uop.kernel @k inputs() outputs(%y = @y : !l0uop.buf<256xf32>) grid(1, 1, 1) block(256, 1, 1) shared_mem 0 {}
  l0uop.kernel @k2 inputs() outputs() grid(1, 1, 1) block(256, 1, 1) shared_mem 0 {}
  l0uop.stream @s0 [@k, @k2]
  l0uop.stream @s1 [@k2]
  l0uop.event @e0
  // expected-note @+1 {{first recorded here}}
  l0uop.record @e0 after @k on @s0
  // expected-error @+1 {{[liveness] L0.4: event @e0 is recorded twice; a wait could pair with either}}
  l0uop.record @e0 after @k2 on @s0
  l0uop.wait @e0 before @k2 on @s1
}

// -----

// L0.4: two streams each wait for an event the other records later.
l0uop.plan @p pipeline_depth 2 {
  l0uop.kernel @a inputs() outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {}
  l0uop.kernel @b inputs() outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {}
  l0uop.stream @s0 [@a, @b]
  l0uop.stream @s1 [@a, @b]
  l0uop.event @e0
  l0uop.event @e1
  l0uop.record @e0 after @b on @s0
  // expected-error @+1 {{[liveness] L0.4: the sync plan deadlocks: waiting for @e0 before @a on @s1 closes a cycle of waits, so the event is never recorded}}
  l0uop.wait @e0 before @a on @s1
  l0uop.record @e1 after @b on @s1
  l0uop.wait @e1 before @a on @s0
}
