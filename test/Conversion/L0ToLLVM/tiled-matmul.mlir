// The tiled lowering of matmul-shaped kernels: vectorised over the inner
// parallel RANGE, register-blocked over the split RANGE, a k loop of vector
// fma (see the pass description).
// RUN: synpl-opt %s -split-input-file --synpl-convert-l0uop-to-llvm | FileCheck %s
// RUN: synpl-opt %s -split-input-file --synpl-convert-l0uop-to-llvm="tile-lanes=8 tile-rows=4" | FileCheck %s --check-prefix=W8
// RUN: synpl-opt %s -split-input-file --synpl-convert-l0uop-to-llvm="tile-lanes=0" | FileCheck %s --check-prefix=OFF
// The kernels of the real workload (the MNIST step as L1 -> L0 emits it).
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l1.mlir --synpl-l1-to-l0-pipeline | synpl-opt --synpl-convert-l0uop-to-llvm | FileCheck %s --check-prefix=MNIST

// A[i,k]·B[k,j] + bias[j], as L1ToL0 emits it for fc1 (N = 256: no tail).

// Every chunk of rows packs B again: the kernel asks for one chunk per
// thread, of at least a row block (host_grain).
// CHECK-LABEL: l0uop.kernel @fc
// CHECK-SAME: host_entry = @p_fc, host_grain = 6 : i64, host_iterations = 128 : i64
// CHECK-LABEL: llvm.func @p_fc(
// CHECK-SAME: attributes {synpl.grain = 6 : i64, synpl.iterations = 128 : i64}
// k runs in 4 blocks of 196, outside the 16 lane blocks. Three arrays: a
// lane panel of B (196 k x 16 lanes: 12544 bytes), the row array of A (the
// panel's 128 rows x 196 k: 100352 bytes) and the accumulators parked
// between k blocks (128 rows x 16 lanes x 16 lane blocks: 131072 bytes).
// Over 32 KiB in all, they come from the runtime's per-thread kernel
// scratch, one after the other, not from the stack.
// CHECK-DAG: %[[BYTES:.*]] = llvm.mlir.constant(243968 : i64) : i64
// CHECK-NOT: llvm.alloca
// CHECK: %[[SCRATCH:.*]] = llvm.call @synpl_rt_kernel_scratch(%[[BYTES]]) : (i64) -> !llvm.ptr
// CHECK: %[[AROWS:.*]] = llvm.getelementptr %[[SCRATCH]][12544] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: llvm.getelementptr %[[SCRATCH]][112896] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NOT: llvm.alloca
// Each k block first copies the rows' slice of A into the row array...
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: %[[SLOT:.*]] = llvm.getelementptr %[[AROWS]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: llvm.store %{{.*}}, %[[SLOT]] {alignment = 4 : i64} : f32, !llvm.ptr
// ... then packs B's panel per lane block.
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 64 : i64} : vector<16xf32>, !llvm.ptr
// Each full row block asks for its share of the next lane block's panel
// into L2 (hint 2): 196 k over 21 row blocks of the 128-row panel, 10 each.
// CHECK-COUNT-10: "llvm.intr.prefetch"(%{{.*}}) <{cache = 1 : i32, hint = 2 : i32, rw = 0 : i32}>
// CHECK-NOT: "llvm.intr.prefetch"
// Six rows of accumulators share the panel's vector; A is a broadcast
// scalar read from the row array.
// CHECK-COUNT-6: llvm.getelementptr %[[AROWS]]
// CHECK: llvm.load %{{.*}} {alignment = 64 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK-COUNT-6: llvm.intr.fma(%{{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// Not the last k block: the accumulators are parked.
// CHECK-COUNT-6: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<16xf32>, !llvm.ptr
// The last k block asks for the epilogue's lines before its k loop: the
// bias's (read, the same for every row) and each row's output (write).
// CHECK: "llvm.intr.prefetch"(%{{.*}}) <{cache = 1 : i32, hint = 3 : i32, rw = 0 : i32}>
// CHECK-COUNT-6: "llvm.intr.prefetch"(%{{.*}}) <{cache = 1 : i32, hint = 3 : i32, rw = 1 : i32}>
// CHECK-NEXT: llvm.br
// CHECK-NOT: llvm.intr.prefetch
// CHECK: llvm.intr.fma
// CHECK-NOT: llvm.intr.masked
// CHECK: llvm.return

// W8-LABEL: llvm.func @p_fc(
// W8-COUNT-4: llvm.intr.fma(%{{.*}}) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>

// Untiled: the scalar triple loop.
// OFF-LABEL: llvm.func @p_fc(
// OFF-NOT: vector<
// OFF: llvm.return

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 2MiB
  l0uop.slot @x pool @dev offset 0 size 401408 lifetime(0, 0) : !l0uop.buf<128x784xf32>
  l0uop.slot @w pool @dev offset 401408 size 802816 lifetime(0, 0) : !l0uop.buf<784x256xf32>
  l0uop.slot @b pool @dev offset 1204224 size 1024 lifetime(0, 0) : !l0uop.buf<256xf32>
  l0uop.slot @y pool @dev offset 1205248 size 131072 lifetime(0, 0) : !l0uop.buf<128x256xf32>
  l0uop.kernel @fc inputs(%x = @x : !l0uop.buf<128x784xf32>, %w = @w : !l0uop.buf<784x256xf32>, %b = @b : !l0uop.buf<256xf32>)
      outputs(%y = @y : !l0uop.buf<128x256xf32>) grid(128, 1, 1) block(256, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 128 over group_x : index
    %j = l0uop.range 0 to 256 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 784 : index
    %px = l0uop.index %x[%i, %k] : !l0uop.buf<128x784xf32>
    %vx = l0uop.load %px : f32
    %pw = l0uop.index %w[%k, %j] : !l0uop.buf<784x256xf32>
    %vw = l0uop.load %pw : f32
    %p = l0uop.mul %vx, %vw : f32
    l0uop.end %k
    %s = l0uop.reduce add %p over %k init %zero : f32
    %pb = l0uop.index %b[%j] : !l0uop.buf<256xf32>
    %vb = l0uop.load %pb : f32
    %r = l0uop.add %s, %vb : f32
    %py = l0uop.index %y[%i, %j] : !l0uop.buf<128x256xf32>
    l0uop.store %py, %r : f32
    l0uop.end %j
    l0uop.end %i
  }
}

// -----

// X^T·W (a weight gradient: X is k x i, adjacent along the rows, 128
// floats apart along k): each k iteration's rows already lie in order, so
// the row blocks broadcast from X in place and there is no row array --
// the kernel scratch holds the lane panel (196 k x 16 lanes: 12544 bytes)
// and the parked accumulators (128 rows x 256 lanes: 131072 bytes) only.
// CHECK-LABEL: llvm.func @p_xtw(
// CHECK-DAG: %[[BYTES:.*]] = llvm.mlir.constant(143616 : i64) : i64
// CHECK: llvm.call @synpl_rt_kernel_scratch(%[[BYTES]]) : (i64) -> !llvm.ptr
// CHECK: llvm.return

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 2MiB
  l0uop.slot @x pool @dev offset 0 size 401408 lifetime(0, 0) : !l0uop.buf<784x128xf32>
  l0uop.slot @w pool @dev offset 401408 size 802816 lifetime(0, 0) : !l0uop.buf<784x256xf32>
  l0uop.slot @y pool @dev offset 1205248 size 131072 lifetime(0, 0) : !l0uop.buf<128x256xf32>
  l0uop.kernel @xtw inputs(%x = @x : !l0uop.buf<784x128xf32>, %w = @w : !l0uop.buf<784x256xf32>)
      outputs(%y = @y : !l0uop.buf<128x256xf32>) grid(128, 1, 1) block(256, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 128 over group_x : index
    %j = l0uop.range 0 to 256 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 784 : index
    %px = l0uop.index %x[%k, %i] : !l0uop.buf<784x128xf32>
    %vx = l0uop.load %px : f32
    %pw = l0uop.index %w[%k, %j] : !l0uop.buf<784x256xf32>
    %vw = l0uop.load %pw : f32
    %p = l0uop.mul %vx, %vw : f32
    l0uop.end %k
    %s = l0uop.reduce add %p over %k init %zero : f32
    %py = l0uop.index %y[%i, %j] : !l0uop.buf<128x256xf32>
    l0uop.store %py, %s : f32
    l0uop.end %j
    l0uop.end %i
  }
}

// -----


// -----

// X^T·W where X's k iterations are more than a page apart (X is k x 2048,
// the kernel takes its first 128 columns): the row array holds each k
// block's slice k-major (196 k x 128 rows), so that the copy walks X and
// the array in order -- the k iterations outside, the rows inside --
// where a row-major array would read X a row apart for every element. The
// row blocks read their broadcasts at row + k * 128.
// CHECK-LABEL: llvm.func @p_xtwfar(
// CHECK-DAG: %[[C128:.*]] = llvm.mlir.constant(128 : i64) : i64
// CHECK-DAG: %[[C2048:.*]] = llvm.mlir.constant(2048 : i64) : i64
// CHECK: %[[AROWS:.*]] = llvm.getelementptr %{{.*}}[12544] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: ^bb{{[0-9]+}}(%[[IT:.*]]: i64):
// CHECK: ^bb{{[0-9]+}}(%[[ROW:.*]]: i64):
// CHECK: %[[ITS:.*]] = llvm.mul %[[IT]], %[[C128]] : i64
// CHECK: %[[ROWS:.*]] = llvm.sub %[[ROW]], %{{.*}} : i64
// CHECK: %[[SLOT:.*]] = llvm.add %[[ITS]], %[[ROWS]] : i64
// CHECK: %[[XK:.*]] = llvm.mul %[[IT]], %[[C2048]] : i64
// CHECK: %[[XAT:.*]] = llvm.add %[[XK]], %[[ROW]] : i64
// CHECK: %[[X:.*]] = llvm.getelementptr %arg0[%[[XAT]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: %[[V:.*]] = llvm.load %[[X]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: %[[TO:.*]] = llvm.getelementptr %[[AROWS]][%[[SLOT]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: llvm.store %[[V]], %[[TO]] {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 64 : i64} : vector<16xf32>, !llvm.ptr
// CHECK: %[[KS:.*]] = llvm.mul %{{.*}}, %[[C128]] : i64
// CHECK-NEXT: %[[AT:.*]] = llvm.add %{{.*}}, %[[KS]] : i64
// CHECK-NEXT: llvm.getelementptr %[[AROWS]][%[[AT]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: llvm.return

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 8MiB
  l0uop.slot @x pool @dev offset 0 size 6422528 lifetime(0, 0) : !l0uop.buf<784x2048xf32>
  l0uop.slot @w pool @dev offset 6422528 size 802816 lifetime(0, 0) : !l0uop.buf<784x256xf32>
  l0uop.slot @y pool @dev offset 7225344 size 131072 lifetime(0, 0) : !l0uop.buf<128x256xf32>
  l0uop.kernel @xtwfar inputs(%x = @x : !l0uop.buf<784x2048xf32>, %w = @w : !l0uop.buf<784x256xf32>)
      outputs(%y = @y : !l0uop.buf<128x256xf32>) grid(128, 1, 1) block(256, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 128 over group_x : index
    %j = l0uop.range 0 to 256 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 784 : index
    %px = l0uop.index %x[%k, %i] : !l0uop.buf<784x2048xf32>
    %vx = l0uop.load %px : f32
    %pw = l0uop.index %w[%k, %j] : !l0uop.buf<784x256xf32>
    %vw = l0uop.load %pw : f32
    %p = l0uop.mul %vx, %vw : f32
    l0uop.end %k
    %s = l0uop.reduce add %p over %k init %zero : f32
    %py = l0uop.index %y[%i, %j] : !l0uop.buf<128x256xf32>
    l0uop.store %py, %s : f32
    l0uop.end %j
    l0uop.end %i
  }
}

// -----

// A·W^T with N = 256 (dY·W^T of a hidden layer): the lane panel's operand
// is a row of W (784 floats) apart per lane, and every lane block is full,
// so each k iteration packs 16 scalar loads at constant offsets from one
// pointer, not a gather of 16 pointers (which a target without fast
// gathers splits into the same loads after extracting each pointer).
// CHECK-LABEL: llvm.func @p_xwt(
// CHECK-NOT: llvm.intr.masked.gather
// CHECK: %[[W0:.*]] = llvm.getelementptr %arg1[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT: %[[V0:.*]] = llvm.load %[[W0]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT: %[[P0:.*]] = llvm.insertelement %[[V0]], %{{.*}}[%{{.*}} : i32] : vector<16xf32>
// CHECK-NEXT: %[[W1:.*]] = llvm.getelementptr %[[W0]][784] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK-NEXT: %[[V1:.*]] = llvm.load %[[W1]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT: llvm.insertelement %[[V1]], %[[P0]][%{{.*}} : i32] : vector<16xf32>
// CHECK: llvm.getelementptr %[[W0]][11760] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK-NOT: llvm.intr.masked.gather
// CHECK: llvm.return

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 2MiB
  l0uop.slot @x pool @dev offset 0 size 401408 lifetime(0, 0) : !l0uop.buf<784x128xf32>
  l0uop.slot @w pool @dev offset 401408 size 802816 lifetime(0, 0) : !l0uop.buf<256x784xf32>
  l0uop.slot @y pool @dev offset 1205248 size 131072 lifetime(0, 0) : !l0uop.buf<128x256xf32>
  l0uop.kernel @xwt inputs(%x = @x : !l0uop.buf<784x128xf32>, %w = @w : !l0uop.buf<256x784xf32>)
      outputs(%y = @y : !l0uop.buf<128x256xf32>) grid(128, 1, 1) block(256, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 128 over group_x : index
    %j = l0uop.range 0 to 256 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 784 : index
    %px = l0uop.index %x[%k, %i] : !l0uop.buf<784x128xf32>
    %vx = l0uop.load %px : f32
    %pw = l0uop.index %w[%j, %k] : !l0uop.buf<256x784xf32>
    %vw = l0uop.load %pw : f32
    %p = l0uop.mul %vx, %vw : f32
    l0uop.end %k
    %s = l0uop.reduce add %p over %k init %zero : f32
    %py = l0uop.index %y[%i, %j] : !l0uop.buf<128x256xf32>
    l0uop.store %py, %s : f32
    l0uop.end %j
    l0uop.end %i
  }
}

// -----

// A[i,k]·B[j,k] (dY·W^T) with N = 10: the strided operand is gathered into
// the panel once per lane block, the 10 lanes of 16 are masked.

// CHECK-LABEL: llvm.func @p_bt(
// Its one array, the panel (256 k x 16 lanes, 16 KiB), stays on the stack.
// CHECK-NOT: synpl_rt_kernel_scratch
// CHECK: llvm.alloca %{{.*}} x f32 {alignment = 64 : i64}
// CHECK-NOT: synpl_rt_kernel_scratch
// CHECK: llvm.intr.masked.gather %{{.*}} : (vector<16x!llvm.ptr>, vector<16xi1>, vector<16xf32>) -> vector<16xf32>
// CHECK: llvm.intr.fma(%{{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK: llvm.intr.masked.store %{{.*}} : vector<16xf32>, vector<16xi1> into !llvm.ptr

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @g pool @dev offset 0 size 131072 lifetime(0, 0) : !l0uop.buf<128x256xf32>
  l0uop.slot @w pool @dev offset 131072 size 10240 lifetime(0, 0) : !l0uop.buf<10x256xf32>
  l0uop.slot @o pool @dev offset 141312 size 5120 lifetime(0, 0) : !l0uop.buf<128x10xf32>
  l0uop.kernel @bt inputs(%g = @g : !l0uop.buf<128x256xf32>, %w = @w : !l0uop.buf<10x256xf32>)
      outputs(%o = @o : !l0uop.buf<128x10xf32>) grid(128, 1, 1) block(10, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 128 over group_x : index
    %j = l0uop.range 0 to 10 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 256 : index
    %pg = l0uop.index %g[%i, %k] : !l0uop.buf<128x256xf32>
    %vg = l0uop.load %pg : f32
    %pw = l0uop.index %w[%j, %k] : !l0uop.buf<10x256xf32>
    %vw = l0uop.load %pw : f32
    %p = l0uop.mul %vg, %vw : f32
    l0uop.end %k
    %s = l0uop.reduce add %p over %k init %zero : f32
    %po = l0uop.index %o[%i, %j] : !l0uop.buf<128x10xf32>
    l0uop.store %po, %s : f32
    l0uop.end %j
    l0uop.end %i
  }
}

// -----

// Not this shape (an IF in the body): lowered as before, no vectors.

// CHECK-LABEL: llvm.func @p_guarded(
// CHECK-NOT: vector<
// CHECK: llvm.return

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @a pool @dev offset 0 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf32>
  l0uop.slot @c pool @dev offset 1024 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf32>
  l0uop.kernel @guarded inputs(%a = @a : !l0uop.buf<16x16xf32>)
      outputs(%c = @c : !l0uop.buf<16x16xf32>) grid(16, 1, 1) block(16, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 16 over group_x : index
    %j = l0uop.range 0 to 16 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 16 : index
    %pa = l0uop.index %a[%i, %k] : !l0uop.buf<16x16xf32>
    %va = l0uop.load %pa : f32
    %pb = l0uop.index %a[%k, %j] : !l0uop.buf<16x16xf32>
    %vb = l0uop.load %pb : f32
    %p = l0uop.mul %va, %vb : f32
    l0uop.end %k
    %s = l0uop.reduce add %p over %k init %zero : f32
    %pos = l0uop.cmplt %zero, %s : f32
    l0uop.if %pos
    %pc = l0uop.index %c[%i, %j] : !l0uop.buf<16x16xf32>
    l0uop.store %pc, %s : f32
    l0uop.endif
    l0uop.end %j
    l0uop.end %i
  }
}

// -----

// Of this shape, but every lane stores to one address (the threads of a
// row race; the last one wins): the tiled lowering gives up half way and
// the kernel lowers as before.

// CHECK-LABEL: llvm.func @p_racy(
// CHECK-NOT: vector<
// CHECK: llvm.return

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @a pool @dev offset 0 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf32>
  l0uop.slot @c pool @dev offset 1024 size 256 lifetime(0, 0) : !l0uop.buf<16xf32>
  l0uop.kernel @racy inputs(%a = @a : !l0uop.buf<16x16xf32>)
      outputs(%c = @c : !l0uop.buf<16xf32>) grid(16, 1, 1) block(16, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 16 over group_x : index
    %j = l0uop.range 0 to 16 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 16 : index
    %pa = l0uop.index %a[%i, %k] : !l0uop.buf<16x16xf32>
    %va = l0uop.load %pa : f32
    %pb = l0uop.index %a[%k, %j] : !l0uop.buf<16x16xf32>
    %vb = l0uop.load %pb : f32
    %p = l0uop.mul %va, %vb : f32
    l0uop.end %k
    %s = l0uop.reduce add %p over %k init %zero : f32
    %pc = l0uop.index %c[%i] : !l0uop.buf<16xf32>
    l0uop.store %pc, %s : f32
    l0uop.end %j
    l0uop.end %i
  }
}

// Every matmul kernel of the MNIST step (3 forward, 5 backward) runs
// vector fma.
// MNIST-LABEL: llvm.func @{{.*}}_matmul(
// MNIST: llvm.intr.fma(%{{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// MNIST-LABEL: llvm.func @{{.*}}_matmul(
// MNIST: llvm.intr.fma(%{{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// MNIST-LABEL: llvm.func @{{.*}}_matmul(
// MNIST: llvm.intr.fma(%{{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// MNIST-LABEL: llvm.func @{{.*}}_matmul(
// MNIST: llvm.intr.fma(%{{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// MNIST-LABEL: llvm.func @{{.*}}_matmul(
// MNIST: llvm.intr.fma(%{{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// MNIST-LABEL: llvm.func @{{.*}}_matmul(
// MNIST: llvm.intr.fma(%{{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// MNIST-LABEL: llvm.func @{{.*}}_matmul(
// MNIST: llvm.intr.fma(%{{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// MNIST-LABEL: llvm.func @{{.*}}_matmul(
// MNIST: llvm.intr.fma(%{{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>

// -----

// A column sum over the batch (dY·X summed over 128 rows for 256 columns):
// one row, so the block takes 64 lanes -- 8 vector<8xf32> chains where 16
// lanes would keep 2 -- and packs nothing: one row block reads each k
// iteration once.

// CHECK-LABEL: llvm.func @p_colsum(
// CHECK-NOT: llvm.alloca
// CHECK-NOT: synpl_rt_kernel_scratch
// CHECK: llvm.intr.fma(%{{.*}}) : (vector<64xf32>, vector<64xf32>, vector<64xf32>) -> vector<64xf32>
// CHECK: llvm.return

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @dy pool @dev offset 0 size 131072 lifetime(0, 0) : !l0uop.buf<128x256xf32>
  l0uop.slot @x pool @dev offset 131072 size 131072 lifetime(0, 0) : !l0uop.buf<128x256xf32>
  l0uop.slot @g pool @dev offset 262144 size 1024 lifetime(0, 0) : !l0uop.buf<256xf32>
  l0uop.kernel @colsum inputs(%dy = @dy : !l0uop.buf<128x256xf32>, %x = @x : !l0uop.buf<128x256xf32>)
      outputs(%g = @g : !l0uop.buf<256xf32>) grid(1, 1, 1) block(256, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 1 over group_x : index
    %j = l0uop.range 0 to 256 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 128 : index
    %pd = l0uop.index %dy[%k, %j] : !l0uop.buf<128x256xf32>
    %vd = l0uop.load %pd : f32
    %px = l0uop.index %x[%k, %j] : !l0uop.buf<128x256xf32>
    %vx = l0uop.load %px : f32
    %p = l0uop.mul %vd, %vx : f32
    l0uop.end %k
    %s = l0uop.reduce add %p over %k init %zero : f32
    %pg = l0uop.index %g[%j] : !l0uop.buf<256xf32>
    l0uop.store %pg, %s : f32
    l0uop.end %j
    l0uop.end %i
  }
}

// -----

// A batched matmul (attention's scores): i runs over (batch n, head h,
// row r) = 3 x 2 x 29 and B[n, h, k, j] depends on i only through i / 29
// and i / 58. The row blocks stay within a group of 29 rows, so each k
// iteration loads B's lane vector once for the block's six rows (where
// B[k, j] of one matmul is shared the same way), not once per row.

// CHECK-LABEL: llvm.func @p_bmm(
// CHECK: %[[B:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<16xf32>
// CHECK-NOT: llvm.load
// CHECK-COUNT-6: llvm.intr.fma(%{{.*}}, %[[B]], %{{.*}})
// CHECK: llvm.return

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @a pool @dev offset 0 size 13248 lifetime(0, 0) : !l0uop.buf<3x29x2x19xf32>
  l0uop.slot @b pool @dev offset 13312 size 16872 lifetime(0, 0) : !l0uop.buf<3x2x19x37xf32>
  l0uop.slot @c pool @dev offset 30208 size 25752 lifetime(0, 0) : !l0uop.buf<3x2x29x37xf32>
  l0uop.kernel @bmm inputs(%a = @a : !l0uop.buf<3x29x2x19xf32>, %b = @b : !l0uop.buf<3x2x19x37xf32>)
      outputs(%c = @c : !l0uop.buf<3x2x29x37xf32>) grid(174, 1, 1) block(37, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 174 over group_x : index
    %j = l0uop.range 0 to 37 over local_x : index
    %c29 = l0uop.const 29 : index
    %r = l0uop.mod %i, %c29 : index
    %g = l0uop.div %i, %c29 : index
    %c2 = l0uop.const 2 : index
    %h = l0uop.mod %g, %c2 : index
    %c58 = l0uop.const 58 : index
    %n = l0uop.div %i, %c58 : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 19 : index
    %pa = l0uop.index %a[%n, %r, %h, %k] : !l0uop.buf<3x29x2x19xf32>
    %va = l0uop.load %pa : f32
    %pb = l0uop.index %b[%n, %h, %k, %j] : !l0uop.buf<3x2x19x37xf32>
    %vb = l0uop.load %pb : f32
    %p = l0uop.mul %va, %vb : f32
    l0uop.end %k
    %s = l0uop.reduce add %p over %k init %zero : f32
    %pc = l0uop.index %c[%n, %h, %r, %j] : !l0uop.buf<3x2x29x37xf32>
    l0uop.store %pc, %s : f32
    l0uop.end %j
    l0uop.end %i
  }
}
