// As written, this plan does not verify: a naive emitter left @d unplaced,
// and bumped every other slot to fresh bytes, past the arena (row L0.2).
// RUN: not synpl-opt %s 2>&1 | FileCheck %s --check-prefix=ASIS
// ASIS: error: 'l0uop.slot' op is in arena pool @arena and needs a static `offset`
// RUN: sed 's/@d pool @arena size/@d pool @arena offset 1536 size/' %s \
// RUN:   | not synpl-opt 2>&1 | FileCheck %s --check-prefix=ASIS-L02
// ASIS-L02: error: [safety] L0.2: slot @c occupies bytes [1024, 1536) of pool @arena, past its capacity of 1024 bytes
//
// Packing (on the plan parsed without verification) places every slot, and
// the result passes every L0 row: it is verified after the pass and again
// when re-parsed.
// RUN: synpl-opt %s -mlir-very-unsafe-disable-verifier-on-parsing \
// RUN:   --synpl-l0-pack-memory -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK
// RUN: synpl-opt %s -mlir-very-unsafe-disable-verifier-on-parsing \
// RUN:   --synpl-l0-pack-memory 2>/dev/null | FileCheck %s
// RUN: synpl-opt %s -mlir-very-unsafe-disable-verifier-on-parsing \
// RUN:   --synpl-l0-pack-memory 2>/dev/null | synpl-opt --synpl-l0-pack-memory \
// RUN:   2>/dev/null | FileCheck %s

// REMARK: remark: pool @arena: 4 slots, peak 768 B, lower bound 768 B, unplaced before packing
// CHECK: l0uop.slot @a pool @arena offset 0 size 512 lifetime(0, 1)
// CHECK: l0uop.slot @b pool @arena offset 0 size 512 lifetime(2, 3)
// CHECK: l0uop.slot @c pool @arena offset 0 size 512 lifetime(4, 5)
// CHECK: l0uop.slot @d pool @arena offset 512 size 256 lifetime(0, 5)
l0uop.plan @rescue pipeline_depth 1 {
  l0uop.pool @arena arena on device capacity 1KiB
  l0uop.slot @a pool @arena offset 0 size 512 lifetime(0, 1) : !l0uop.buf<128xf32>
  l0uop.slot @b pool @arena offset 512 size 512 lifetime(2, 3) : !l0uop.buf<128xf32>
  l0uop.slot @c pool @arena offset 1024 size 512 lifetime(4, 5) : !l0uop.buf<128xf32>
  l0uop.slot @d pool @arena size 256 lifetime(0, 5) : !l0uop.buf<64xf32>
}

// Every slot placed, but @a and @b share bytes [256, 512) at ticks 2 and 3:
// not a valid layout (row L0.2), so it is not one to keep.
// REMARK: remark: pool @arena: 2 slots, peak 1.0 KB (1024 bytes), lower bound 1.0 KB (1024 bytes), no valid layout before packing
// CHECK: l0uop.slot @a pool @arena offset 0 size 512 lifetime(0, 3)
// CHECK: l0uop.slot @b pool @arena offset 512 size 512 lifetime(2, 5)
l0uop.plan @overlap pipeline_depth 1 {
  l0uop.pool @arena arena on device capacity 1KiB
  l0uop.slot @a pool @arena offset 0 size 512 lifetime(0, 3) : !l0uop.buf<128xf32>
  l0uop.slot @b pool @arena offset 256 size 512 lifetime(2, 5) : !l0uop.buf<128xf32>
}
