// RUN: synpl-opt %s -split-input-file -verify-diagnostics
// Structural checks of the l0uop plan: references resolve to the right kind
// of op, headers are well formed. (The rows L0.1-L0.6 have their own files.)

// expected-error @+1 {{pipeline_depth must be at least 1, got 0}}
l0uop.plan @p pipeline_depth 0 {
}

// -----

l0uop.plan @p pipeline_depth 1 {
  // expected-error @+1 {{capacity must be positive, got 0}}
  l0uop.pool @m arena on device capacity 0
}

// -----

l0uop.plan @p pipeline_depth 1 {
  // expected-error @+1 {{alignment must be a power of two, got 48}}
  l0uop.pool @m arena on device capacity 1KiB align 48
}

// -----

l0uop.plan @p pipeline_depth 1 {
  // expected-error @+1 {{names pool @nowhere, which is not an l0uop.pool}}
  l0uop.slot @a pool @nowhere offset 0 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1KiB
  // expected-error @+1 {{size 8 is smaller than its '!l0uop.buf<4xf32>' (16 bytes)}}
  l0uop.slot @a pool @m offset 0 size 8 lifetime(0, 1) : !l0uop.buf<4xf32>
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1KiB
  // expected-error @+1 {{lifetime (3, 1) is not an interval of ticks}}
  l0uop.slot @a pool @m offset 0 size 16 lifetime(3, 1) : !l0uop.buf<4xf32>
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1KiB
  // expected-error @+1 {{is in arena pool @m and needs a static `offset`}}
  l0uop.slot @a pool @m size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m freelist on host capacity 1KiB
  // expected-error @+1 {{is in freelist pool @m, whose slots get their offsets at run time}}
  l0uop.slot @a pool @m offset 0 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1KiB
  // expected-error @+1 {{offset 16 is not a multiple of pool @m's alignment 256}}
  l0uop.slot @a pool @m offset 16 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
}

// -----

l0uop.plan @p pipeline_depth 1 {
  // expected-error @+1 {{buffer dimensions are positive, got 0}}
  l0uop.pool @m arena on device capacity 1KiB {bad = !l0uop.buf<0xf32>}
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1KiB
  l0uop.slot @a pool @m offset 0 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
  // expected-error @+1 {{binds slot @a of type '!l0uop.buf<4xf32>' as '!l0uop.buf<4xi32>'}}
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<4xi32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {}
}

// -----

l0uop.plan @p pipeline_depth 1 {
  // expected-error @+1 {{binds @a, which is not an l0uop.slot}}
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<4xi32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {}
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1KiB
  l0uop.slot @a pool @m offset 0 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
  // expected-error @+1 {{lists slot @a twice; a slot it reads and writes is an output}}
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<4xf32>) outputs(%b = @a : !l0uop.buf<4xf32>) grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {}
}

// -----

l0uop.plan @p pipeline_depth 1 {
  // expected-error @+1 {{block dimensions are positive, got 0}}
  l0uop.kernel @k inputs() outputs() grid(1, 1, 1) block(0, 1, 1) shared_mem 0 {}
}

// -----

l0uop.plan @p pipeline_depth 1 {
  // expected-error @+1 {{grid has 3 dimensions (x, y, z), got 2}}
  l0uop.kernel @k inputs() outputs() grid(1, 1) block(1, 1, 1) shared_mem 0 {}
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on device capacity 1KiB
  l0uop.slot @a pool @m offset 0 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
  // expected-error @+1 {{runs @a, which is not an l0uop.kernel, l0uop.transfer or l0uop.collective}}
  l0uop.stream @s [@a]
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.kernel @k inputs() outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {}
  // expected-error @+1 {{runs @k twice}}
  l0uop.stream @s [@k, @k]
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.kernel @k inputs() outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {}
  l0uop.kernel @k2 inputs() outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {}
  l0uop.stream @s [@k]
  l0uop.event @e
  // expected-error @+1 {{names @k2, which stream @s does not run}}
  l0uop.record @e after @k2 on @s
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.kernel @k inputs() outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {}
  l0uop.stream @s [@k]
  // expected-error @+1 {{names event @e, which is not an l0uop.event}}
  l0uop.wait @e before @k on @s
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @h freelist on host capacity 1KiB
  l0uop.pool @d arena on device capacity 1KiB
  l0uop.slot @a pool @h size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
  l0uop.slot @b pool @d offset 0 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
  // expected-error @+1 {{is d2h but copies from host to device}}
  l0uop.transfer @t @a -> @b d2h bytes 16
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @h freelist on host capacity 1KiB
  l0uop.pool @d arena on device capacity 1KiB
  l0uop.slot @a pool @h size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
  l0uop.slot @b pool @d offset 0 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
  // expected-error @+1 {{moves 32 bytes; the source has 16 and the destination 16}}
  l0uop.transfer @t @a -> @b h2d bytes 32
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @d arena on device capacity 1KiB
  l0uop.slot @b pool @d offset 0 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
  // expected-error @+1 {{kaiming init of the rank-1 slot @b needs `fan_in`}}
  l0uop.init kaiming @b
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @d arena on device capacity 1KiB
  l0uop.slot @b pool @d offset 0 size 16 lifetime(0, 1) : !l0uop.buf<4xi32>
  // expected-error @+1 {{normal init fills float slots, not '!l0uop.buf<4xi32>'}}
  l0uop.init normal @b
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @d arena on device capacity 1KiB
  l0uop.slot @b pool @d offset 0 size 16 lifetime(0, 1) : !l0uop.buf<16xi8>
  // expected-error @+1 {{decode_idx runs on the host; slot @b is in device pool @d}}
  l0uop.init decode_idx @b path "t10k-labels-idx1-ubyte"
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @d arena on device capacity 1KiB
  l0uop.slot @b pool @d offset 0 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
  // expected-error @+1 {{constant init needs a `value`}}
  l0uop.init constant @b
}

// -----

// UOps live in kernels, plan items in plans.
func.func @f() {
  // expected-error @+1 {{expects parent op to hold a UOp body ('l0uop.kernel' or a generic codelet), got func.func}}
  %c = l0uop.const 1 : index
  return
}

// -----

// expected-error @+1 {{expects parent op 'l0uop.plan'}}
l0uop.pool @m arena on device capacity 1KiB

// -----

l0uop.plan @p pipeline_depth 1 {
  // expected-error @+1 {{byte size '99999999999TiB' is too large}}
  l0uop.pool @m arena on device capacity 99999999999 TiB
}

// -----

// l0uop.ingest: the slots, paths and decoder agree.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @h freelist on host capacity 1KiB
  l0uop.slot @a pool @h size 16 lifetime(0, 1) : !l0uop.buf<4xui8>
  // expected-error @+1 {{has 1 slots but 2 paths}}
  l0uop.ingest @r into [@a] from ["a", "b"] format "idx" batch 4 seed 0
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @h freelist on host capacity 1KiB
  l0uop.slot @a pool @h size 16 lifetime(0, 1) : !l0uop.buf<4xui8>
  // expected-error @+1 {{format 'jpeg' has no host decoder (known: idx, text)}}
  l0uop.ingest @r into [@a] from ["a"] format "jpeg" batch 4 seed 0
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @h freelist on host capacity 1KiB
  l0uop.slot @a pool @h size 16 lifetime(0, 1) : !l0uop.buf<4xui8>
  // expected-error @+1 {{gathers batches of 8 into @a of type '!l0uop.buf<4xui8>'; its leading dimension must be the batch}}
  l0uop.ingest @r into [@a] from ["a"] format "idx" batch 8 seed 0
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @d arena on device capacity 1KiB
  l0uop.slot @a pool @d offset 0 size 16 lifetime(0, 1) : !l0uop.buf<4xui8>
  // expected-error @+1 {{runs on the host; slot @a is in device pool @d}}
  l0uop.ingest @r into [@a] from ["a"] format "idx" batch 4 seed 0
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @h freelist on host capacity 1KiB
  l0uop.slot @a pool @h size 16 lifetime(0, 1) : !l0uop.buf<4xui8>
  // expected-error @+1 {{has 2 class bounds for 1 slots}}
  l0uop.ingest @r into [@a] from ["a"] format "idx" batch 4 seed 0 classes [10, 10]
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @h freelist on host capacity 1KiB
  // expected-error @+1 {{names @nope, which is not an l0uop.slot}}
  l0uop.ingest @r into [@nope] from ["a"] format "idx" batch 4 seed 0
}

// -----

// l0uop.report: an f32 slot.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @h freelist on host capacity 1KiB
  l0uop.slot @a pool @h size 16 lifetime(0, 1) : !l0uop.buf<4xui8>
  // expected-error @+1 {{reports f32 values; slot @a holds '!l0uop.buf<4xui8>'}}
  l0uop.report "loss" @a
}

// -----

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @m arena on host capacity 1KiB
  l0uop.slot @a pool @m offset 0 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
  // expected-error @+1 {{attribute 'opt_level' failed to satisfy constraint: 32-bit signless integer attribute whose minimum value is 0 whose maximum value is 3}}
  l0uop.kernel @k inputs(%a = @a : !l0uop.buf<4xf32>) outputs() grid(1, 1, 1) block(1, 1, 1) shared_mem 0 attributes {opt_level = 4 : i32} {}
}
