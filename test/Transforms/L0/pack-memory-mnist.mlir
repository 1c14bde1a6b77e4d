// The MNIST training step's plan (examples/mnist/mnist.l0.mlir), packed.
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l0.mlir \
// RUN:   --synpl-l0-pack-memory -o /dev/null -mlir-print-op-on-diagnostic=false 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l0.mlir --synpl-l0-pack-memory \
// RUN:   2>/dev/null | FileCheck %s
// Idempotent, and the packed plan verifies when parsed again.
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l0.mlir --synpl-l0-pack-memory \
// RUN:   2>/dev/null | synpl-opt --synpl-l0-pack-memory 2>/dev/null | FileCheck %s

// The host data and the parameters live for the whole step: nothing to
// share. The four 40-byte biases are padded to the 256-byte alignment; all
// but the topmost must be (3 x 216 bytes above the 4325536 live bytes), so
// the example's layout meets the lower bound already and is kept.
// REMARK: remark: pool @host_data: 2 slots, peak 47.1 MB (47100000 bytes), lower bound 47.1 MB (47100000 bytes), was 47.1 MB (47100000 bytes) before packing (layout kept: the packer's best was 47.1 MB (47100000 bytes))
// The staging pair is placed at run time: its peak is the two slots rounded
// up to 4 KiB, twice at pipeline_depth 2 (row L0.6).
// REMARK: remark: pool @host_staging: 2 slots placed at run time, peak 405.5 KB (405504 bytes) per step, 811.0 KB (811008 bytes) at pipeline_depth 2
// REMARK: remark: pool @dev_params: 40 slots, peak 4.3 MB (4326184 bytes), lower bound 4.3 MB (4326184 bytes), was 4.3 MB (4326184 bytes) before packing (layout kept: the packer's best was 4.3 MB (4326184 bytes))
// The activations: the example's hand layout puts two backward buffers on
// dead bytes (1460992 bytes); packing puts all four there and meets the
// lower bound (1324036 bytes, 9.4% less).
// REMARK: remark: pool @dev_arena: 15 slots, peak 1.3 MB (1324036 bytes), lower bound 1.3 MB (1324036 bytes), was 1.5 MB (1460992 bytes) before packing{{$}}

// The backward buffers take the bytes of the forward activations that are
// dead by then: @da2 on @logits' (dead after t=8), @dh2 on @a2's, @da1 on
// @h2's, @dh1 on @a1's.
// CHECK: l0uop.slot @w1 pool @dev_params offset 0 size 802816
// CHECK: l0uop.slot @b1 pool @dev_params offset 802816 size 1024
// CHECK: l0uop.slot @x pool @dev_arena offset 0 size 401408 lifetime(0, 13)
// CHECK: l0uop.slot @y pool @dev_arena offset 1192960 size 512 lifetime(0, 8)
// CHECK: l0uop.slot @h1 pool @dev_arena offset 401408 size 131072 lifetime(1, 12)
// CHECK: l0uop.slot @n1 pool @dev_arena offset 532480 size 131072 lifetime(2, 12)
// CHECK: l0uop.slot @a1 pool @dev_arena offset 663552 size 131072 lifetime(3, 11)
// CHECK: l0uop.slot @h2 pool @dev_arena offset 794624 size 131072 lifetime(4, 10)
// CHECK: l0uop.slot @n2 pool @dev_arena offset 925696 size 131072 lifetime(5, 10)
// CHECK: l0uop.slot @a2 pool @dev_arena offset 1056768 size 131072 lifetime(6, 9)
// CHECK: l0uop.slot @logits pool @dev_arena offset 1187840 size 5120 lifetime(7, 8)
// CHECK: l0uop.slot @loss pool @dev_arena offset 1324032 size 4 lifetime(8, 14)
// CHECK: l0uop.slot @dlogits pool @dev_arena offset 1318912 size 5120 lifetime(8, 9)
// CHECK: l0uop.slot @da2 pool @dev_arena offset 1187840 size 131072 lifetime(9, 10)
// CHECK: l0uop.slot @dh2 pool @dev_arena offset 1056768 size 131072 lifetime(10, 11)
// CHECK: l0uop.slot @da1 pool @dev_arena offset 794624 size 131072 lifetime(11, 12)
// CHECK: l0uop.slot @dh1 pool @dev_arena offset 663552 size 131072 lifetime(12, 13)
