// RUN: synpl-opt %s -split-input-file -verify-diagnostics
// l0ctl's structural checks: regions resolve, accesses respect size, access
// mode, alignment and queue-ness, registers are well typed, CFGs are acyclic.

// expected-error @+1 {{region size must be positive}}
l0ctl.region @r size 0 access rw

// -----

// expected-error @+1 {{region alignment must be a power of two, got 12}}
l0ctl.region @r size 64 access rw align 12

// -----

// expected-error @+1 {{queue size 20 is not a whole number of 8-byte entries}}
l0ctl.region @q size 20 access rw queue 8

// -----

// expected-error @+1 {{queue entries are 1, 2, 4 or 8 bytes, got 3}}
l0ctl.region @q size 24 access rw queue 3

// -----

l0ctl.program @p {
  // expected-error @+1 {{names region @nowhere, which does not exist}}
  %v = l0ctl.load @nowhere[0] : i32
  l0ctl.terminate
}

// -----

l0ctl.program @other {
  l0ctl.terminate
}
l0ctl.program @p {
  // expected-error @+1 {{names @other, which is a 'l0ctl.program', not an l0ctl.region}}
  %v = l0ctl.load @other[0] : i32
  l0ctl.terminate
}

// -----

l0ctl.region @r size 64 access rw
l0ctl.program @p {
  // expected-error @+1 {{accesses bytes [64, 68) of region @r, which has 64 bytes}}
  %v = l0ctl.load @r[64] : i32
  l0ctl.terminate
}

// -----

l0ctl.region @r size 64 access rw
l0ctl.program @p {
  %c = l0ctl.const 60 : i64
  // A constant offset is static: 60 + 8 > 64.
  // expected-error @+1 {{accesses bytes [60, 68) of region @r, which has 64 bytes}}
  %v = l0ctl.load @r[%c] : i64
  l0ctl.terminate
}

// -----

l0ctl.region @r size 64 access rw
l0ctl.program @p {
  %d = l0ctl.load @r[0] : i64
  // Even with a dynamic offset the displacement alone runs past the end.
  // expected-error @+1 {{accesses bytes [62, 70) of region @r, which has 64 bytes}}
  l0ctl.store @r[%d + 62], %d : i64
  l0ctl.terminate
}

// -----

l0ctl.region @r size 64 access rw
l0ctl.program @p {
  // expected-error @+1 {{accesses 4 bytes at offset 6, which is not a multiple of 4}}
  %v = l0ctl.load @r[6] : i32
  l0ctl.terminate
}

// -----

l0ctl.region @r size 64 access rw align 4
l0ctl.program @p {
  // expected-error @+1 {{accesses 8 bytes but region @r is only aligned to 4}}
  %v = l0ctl.load @r[0] : i64
  l0ctl.terminate
}

// -----

l0ctl.region @r size 64 access ro
l0ctl.program @p {
  %v = l0ctl.load @r[0] : i32
  // expected-error @+1 {{stores into region @r, whose access is ro; stores need rw}}
  l0ctl.store @r[4], %v : i32
  l0ctl.terminate
}

// -----

l0ctl.region @r size 64 access wo
l0ctl.program @p {
  %c = l0ctl.const 1 : i32
  // expected-error @+1 {{stores into region @r, whose access is wo; stores need rw}}
  l0ctl.store @r[4], %c : i32
  l0ctl.terminate
}

// -----

l0ctl.region @r size 64 access wo
l0ctl.program @p {
  // expected-error @+1 {{loads from write-only region @r}}
  %v = l0ctl.load @r[0] : i32
  l0ctl.terminate
}

// -----

l0ctl.region @q size 64 access rw queue 8
l0ctl.program @p {
  // expected-error @+1 {{reaches queue region @q with a plain access}}
  %v = l0ctl.load @q[0] : i64
  l0ctl.terminate
}

// -----

l0ctl.region @r size 64 access rw
l0ctl.program @p {
  // expected-error @+1 {{names region @r, which is not a queue}}
  %v = l0ctl.queue_pop @r : i64
  l0ctl.terminate
}

// -----

l0ctl.region @q size 64 access ro queue 8
l0ctl.program @p {
  %v = l0ctl.queue_pop @q : i64
  // expected-error @+1 {{pushes onto queue @q, whose access is ro}}
  l0ctl.queue_push @q, %v : i64
  l0ctl.terminate
}

// -----

l0ctl.region @q size 64 access wo queue 8
l0ctl.program @p {
  // expected-error @+1 {{pops from queue @q, whose access is wo}}
  %v = l0ctl.queue_pop @q : i64
  l0ctl.terminate
}

// -----

l0ctl.region @q size 64 access rw queue 8
l0ctl.program @p {
  // expected-error @+1 {{moves 4-byte values but queue @q holds 8-byte entries}}
  %v = l0ctl.queue_pop @q : i32
  l0ctl.terminate
}

// -----

l0ctl.region @q size 64 access rw queue 8
l0ctl.program @p {
  %v = l0ctl.queue_pop @q : i64
  %c = l0ctl.const 1 : i64
  %lt = l0ctl.cmp lt %v, %c : i64
  l0ctl.branch %lt, ^a, ^b
^a:
  l0ctl.jump ^b
^b:
  // expected-error @+1 {{closes the control-flow cycle ^bb1 -> ^bb2 -> ^bb1; Machine IR has no loops}}
  l0ctl.jump ^a
}

// -----

// expected-error @+1 {{the entry block takes no arguments}}
l0ctl.program @p {
^entry(%x: i64):
  l0ctl.terminate
}

// -----

l0ctl.program @p {
  %c = arith.constant 1 : i64
  // expected-error @-1 {{is not a control op; an l0ctl.program holds only l0ctl operations}}
  l0ctl.terminate
}

// -----

l0ctl.program @p {
  // expected-note @+1 {{prior use here}}
  %c = l0ctl.const 1 : i64
  // The condition of a branch is a 1-bit register.
  // expected-error @+1 {{use of value '%c' expects different type than prior uses: 'i1' vs 'i64'}}
  l0ctl.branch %c, ^a, ^a
^a:
  l0ctl.terminate
}

// -----

l0ctl.program @p {
  %c = l0ctl.const 1 : i64
  %d = l0ctl.const 1 : i32
  // expected-error @+1 {{'l0ctl.arith' op requires the same type for all operands and results}}
  %r = "l0ctl.arith"(%c, %d) {kind = #l0ctl<arith_kind add>} : (i64, i32) -> i64
  l0ctl.terminate
}

// -----

l0ctl.program @p {
  %c = l0ctl.const 1.0 : f32
  // expected-error @-1 {{result #0 must be register}}
  l0ctl.terminate
}

// -----

// A block must end in branch, jump or terminate.
l0ctl.program @p {
  // expected-error @+1 {{block with no terminator}}
  %c = l0ctl.const 1 : i64
}

// -----

func.func @f() {
  // expected-error @+1 {{expects parent op 'l0ctl.program'}}
  l0ctl.terminate
}

// -----

l0ctl.program @p {
  %c = l0ctl.const 1 : i64
  // Successor operands match the target block's registers.
  // expected-error @+1 {{type mismatch for bb argument #0 of successor #0}}
  l0ctl.jump ^b(%c : i64)
^b(%x: i32):
  l0ctl.terminate
}

// -----

l0ctl.program @p {
  %c = l0ctl.const 1 : i64
  // expected-error @+1 {{branch has 1 operands for successor #0, but target block has 0}}
  l0ctl.jump ^b(%c : i64)
^b:
  l0ctl.terminate
}

// -----

// Valid: one rw queue, popped and pushed.
l0ctl.region @q size 16 access rw queue 8
l0ctl.program @ok {
  %v = l0ctl.queue_pop @q : i64
  l0ctl.queue_push @q, %v : i64
  l0ctl.terminate
}
