// RUN: synpl-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// Tensor parallelism at L0: a slot that holds one rank's shard
// (`shard_rows`), its init, and the `rank` init.

// Valid: a [4, 8] weight split by columns over two ranks (4 rows of 4
// columns each), kaiming with the full tensor's fan-in, and the rank.
// CHECK: l0uop.slot @w pool @m offset 0 size 64 lifetime(0, 0) shard_rows 4 : !l0uop.buf<4x4xf32>
// CHECK: l0uop.init kaiming @w fan_in 4 seed 1
// CHECK: l0uop.init rank @r
l0uop.plan @p pipeline_depth 1 ranks 2 {
  l0uop.pool @m persistent on host capacity 1KiB
  l0uop.slot @w pool @m offset 0 size 64 lifetime(0, 0) shard_rows 4 : !l0uop.buf<4x4xf32>
  l0uop.slot @r pool @m offset 256 size 4 lifetime(0, 0) : !l0uop.buf<1xf32>
  l0uop.init kaiming @w fan_in 4 seed 1
  l0uop.init rank @r
}

// -----

l0uop.plan @p pipeline_depth 1 ranks 2 {
  l0uop.pool @m persistent on host capacity 1KiB
  // expected-error @+1 {{'l0uop.slot' op shard_rows 3 does not divide its 16 elements into rows}}
  l0uop.slot @w pool @m offset 0 size 64 lifetime(0, 0) shard_rows 3 : !l0uop.buf<4x4xf32>
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m persistent on host capacity 1KiB
  // expected-error @+1 {{'l0uop.slot' op holds one rank's shard, but the plan runs on one rank: give the plan `ranks` (at least 2)}}
  l0uop.slot @w pool @m offset 0 size 64 lifetime(0, 0) shard_rows 4 : !l0uop.buf<4x4xf32>
}

// -----

l0uop.plan @p pipeline_depth 1 ranks 2 {
  l0uop.pool @m persistent on host capacity 1KiB
  l0uop.slot @w pool @m offset 0 size 64 lifetime(0, 0) shard_rows 1 : !l0uop.buf<16xf32>
  // expected-error @+1 {{'l0uop.init' op kaiming init of the sharded slot @w needs the full tensor's `fan_in`}}
  l0uop.init kaiming @w seed 1
}

// -----

l0uop.plan @p pipeline_depth 1 ranks 2 {
  l0uop.pool @m persistent on host capacity 1KiB
  l0uop.slot @r pool @m offset 0 size 8 lifetime(0, 0) : !l0uop.buf<2xf32>
  // expected-error @+1 {{'l0uop.init' op rank init fills one f32, not '!l0uop.buf<2xf32>'}}
  l0uop.init rank @r
}
