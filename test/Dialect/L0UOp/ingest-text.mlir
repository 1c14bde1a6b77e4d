// l0uop.ingest format "text": windows of a plain-text file into [batch, N]
// byte slots, each slot at its shift in the window (0 or 1), window starts
// `stride` bytes apart; then the plan's `steps`. Round trip, then the rules.
// RUN: synpl-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK: l0uop.plan @p pipeline_depth 1 epochs 1 steps 1000 {
// CHECK: l0uop.ingest @r into [@x, @y] from ["c.txt", "c.txt"] format "text" batch 4 shuffle drop_last seed 0 shifts [0, 1] stride 2
// CHECK: l0uop.ingest @flat into [@f] from ["c.txt"] format "text" batch 4 seed 0{{$}}
l0uop.plan @p pipeline_depth 1 epochs 1 steps 1000 {
  l0uop.pool @h freelist on host capacity 1KiB
  l0uop.slot @x pool @h size 32 lifetime(0, 1) : !l0uop.buf<4x8xui8>
  l0uop.slot @y pool @h size 32 lifetime(0, 1) : !l0uop.buf<4x8xui8>
  l0uop.slot @f pool @h size 32 lifetime(0, 1) : !l0uop.buf<32xui8>
  l0uop.ingest @r into [@x, @y] from ["c.txt", "c.txt"] format "text" batch 4 shuffle drop_last seed 0 shifts [0, 1] stride 2
  l0uop.ingest @flat into [@f] from ["c.txt"] format "text" batch 4 seed 0
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @h freelist on host capacity 1KiB
  l0uop.slot @x pool @h size 128 lifetime(0, 1) : !l0uop.buf<4x8xf32>
  // expected-error @+1 {{reads text windows into @x of type '!l0uop.buf<4x8xf32>'; a text slot is [batch, N] x ui8 (or, stored flat, [batch * N])}}
  l0uop.ingest @r into [@x] from ["c.txt"] format "text" batch 4 seed 0
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @h freelist on host capacity 1KiB
  l0uop.slot @x pool @h size 32 lifetime(0, 1) : !l0uop.buf<4x8xui8>
  // expected-error @+1 {{a text window of N + 1 bytes holds shifts 0 and 1, got 2}}
  l0uop.ingest @r into [@x] from ["c.txt"] format "text" batch 4 seed 0 shifts [2]
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @h freelist on host capacity 1KiB
  l0uop.slot @x pool @h size 32 lifetime(0, 1) : !l0uop.buf<4x8xui8>
  // expected-error @+1 {{has 2 shifts for 1 slots}}
  l0uop.ingest @r into [@x] from ["c.txt"] format "text" batch 4 seed 0 shifts [0, 1]
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @h freelist on host capacity 1KiB
  l0uop.slot @x pool @h size 32 lifetime(0, 1) : !l0uop.buf<4x8xui8>
  // expected-error @+1 {{shifts and stride belong to format "text"; this ingest reads format "idx"}}
  l0uop.ingest @r into [@x] from ["x.gz"] format "idx" batch 4 seed 0 stride 2
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @h freelist on host capacity 1KiB
  l0uop.slot @x pool @h size 32 lifetime(0, 1) : !l0uop.buf<4x8xui8>
  // expected-error @+1 {{stride must be positive, got 0}}
  l0uop.ingest @r into [@x] from ["c.txt"] format "text" batch 4 seed 0 stride 0
}

// -----

// expected-error @+1 {{steps must be positive, got 0}}
l0uop.plan @p pipeline_depth 1 steps 0 {
}
