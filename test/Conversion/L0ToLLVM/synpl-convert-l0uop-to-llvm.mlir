// RUN: synpl-opt %s -split-input-file -verify-diagnostics --synpl-convert-l0uop-to-llvm | FileCheck %s
// RUN: synpl-opt %s -split-input-file -verify-diagnostics --synpl-convert-l0uop-to-llvm=keep-plan=false | synpl-translate -split-input-file --mlir-to-llvmir | FileCheck %s --check-prefix=LLVMIR
// RUN: synpl-opt %s -split-input-file -verify-diagnostics --synpl-convert-l0uop-to-llvm=inline-exp2=false | FileCheck %s --check-prefix=LIBM
// Idempotent on its own output.
// RUN: synpl-opt %s -split-input-file -verify-diagnostics --synpl-convert-l0uop-to-llvm | synpl-opt -split-input-file --synpl-convert-l0uop-to-llvm | FileCheck %s

// Elementwise UOps over a split global_x range; one input from a freelist
// pool aligned to 16 (llvm.align 16), the others 64.

// The plan stays, each kernel reduced to its host entry.
// CHECK-LABEL: l0uop.plan @p
// CHECK: l0uop.slot @o
// CHECK: l0uop.kernel @ew {{.*}} attributes {host_entry = @p_ew, host_iterations = 64 : i64} {
// CHECK-NEXT: }
// CHECK: l0uop.stream @s [@ew]

// CHECK-LABEL: llvm.func @p_ew(
// CHECK-SAME: %[[X:[^:]*]]: !llvm.ptr {llvm.align = 64 : i64, llvm.noalias},
// CHECK-SAME: %[[Y:[^:]*]]: !llvm.ptr {llvm.align = 16 : i64, llvm.noalias},
// CHECK-SAME: %[[O:[^:]*]]: !llvm.ptr {llvm.align = 64 : i64, llvm.noalias},
// CHECK-SAME: %[[BEGIN:[^:]*]]: i64, %[[END:[^:]*]]: i64)
// CHECK-SAME: attributes {synpl.iterations = 64 : i64}
// The chunk [begin, end) clamped to the split range's 64 iterations.
// CHECK: %[[LB:.*]] = llvm.intr.smax(%[[BEGIN]], %{{.*}})
// CHECK: %[[UB:.*]] = llvm.intr.smin(%[[END]], %{{.*}})
// CHECK: llvm.getelementptr %[[X]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-DAG: llvm.fadd
// CHECK-DAG: llvm.intr.fma
// CHECK-DAG: llvm.fneg
// CHECK-DAG: llvm.fdiv
// CHECK-DAG: llvm.intr.maximum
// CHECK-DAG: llvm.fcmp "olt"
// CHECK-DAG: llvm.fcmp "une"
// CHECK-DAG: llvm.select
// CHECK-DAG: llvm.intr.roundeven
// CHECK-DAG: llvm.intr.log2
// CHECK-DAG: llvm.intr.sin
// CHECK-DAG: llvm.intr.sqrt
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr

// LLVMIR-LABEL: define void @p_ew(ptr noalias align 64 %0, ptr noalias align 16 %1, ptr noalias align 64 %2, i64 %3, i64 %4)
// LLVMIR: call float @llvm.fma.f32
// LLVMIR: call float @llvm.roundeven.f32
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.pool @stage freelist on host capacity 1MiB align 16
  l0uop.slot @x pool @dev offset 0 size 256 lifetime(0, 0) : !l0uop.buf<64xf32>
  l0uop.slot @y pool @stage size 256 lifetime(0, 0) : !l0uop.buf<64xf32>
  l0uop.slot @o pool @dev offset 256 size 256 lifetime(0, 0) : !l0uop.buf<64xf32>
  l0uop.kernel @ew inputs(%x = @x : !l0uop.buf<64xf32>, %y = @y : !l0uop.buf<64xf32>)
      outputs(%o = @o : !l0uop.buf<64xf32>)
      grid(1, 1, 1) block(64, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 64 over global_x : index
    %px = l0uop.index %x[%i] : !l0uop.buf<64xf32>
    %a = l0uop.load %px : f32
    %py = l0uop.index %y[%i] : !l0uop.buf<64xf32>
    %b = l0uop.load %py : f32
    %s = l0uop.add %a, %b : f32
    %m = l0uop.mulacc %a, %b, %s : f32
    %n = l0uop.neg %m : f32
    %r = l0uop.reciprocal %n : f32
    %mx = l0uop.max %r, %a : f32
    %lt = l0uop.cmplt %a, %b : f32
    %ne = l0uop.cmpne %a, %b : f32
    %w = l0uop.where %lt, %mx, %b : f32
    %e = l0uop.exp2 %w : f32
    %l = l0uop.log2 %e : f32
    %sn = l0uop.sin %l : f32
    %sq = l0uop.sqrt %sn : f32
    %w2 = l0uop.where %ne, %sq, %a : f32
    %po = l0uop.index %o[%i] : !l0uop.buf<64xf32>
    l0uop.store %po, %w2 : f32
    l0uop.end %i
  }
  l0uop.stream @s [@ew]
}

// -----

// A REDUCE is the loop-carried accumulator of its RANGE's loop, started
// from its init when the init is computed before the RANGE.

// CHECK-LABEL: llvm.func @p_rows(
// CHECK-SAME: attributes {synpl.iterations = 8 : i64}
// CHECK: %[[INIT:.*]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK: llvm.br ^[[HEAD:bb[0-9]+]](%{{.*}}, %[[INIT]] : i64, f32)
// CHECK: ^[[HEAD]](%{{.*}}: i64, %[[ACC:.*]]: f32):
// CHECK: %[[NEXT:.*]] = llvm.fadd %[[ACC]], %{{.*}} : f32
// CHECK: llvm.br ^[[HEAD]](%{{.*}}, %[[NEXT]] : i64, f32)
// CHECK: llvm.store %[[ACC]]
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 128 lifetime(0, 0) : !l0uop.buf<8x4xf32>
  l0uop.slot @o pool @dev offset 256 size 32 lifetime(0, 0) : !l0uop.buf<8xf32>
  l0uop.kernel @rows inputs(%x = @x : !l0uop.buf<8x4xf32>)
      outputs(%o = @o : !l0uop.buf<8xf32>)
      grid(8, 1, 1) block(1, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 8 over group_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 4 : index
    %p = l0uop.index %x[%i, %k] : !l0uop.buf<8x4xf32>
    %v = l0uop.load %p : f32
    l0uop.end %k
    %sum = l0uop.reduce add %v over %k init %zero : f32
    %po = l0uop.index %o[%i] : !l0uop.buf<8xf32>
    l0uop.store %po, %sum : f32
    l0uop.end %i
  }
}

// -----

// A STORE outside every parallel RANGE makes the kernel unsplittable: one
// iteration, run whole by the call whose chunk is not empty.

// CHECK-LABEL: llvm.func @p_scalar(
// CHECK-SAME: %[[O:[^:]*]]: !llvm.ptr {llvm.align = 64 : i64, llvm.noalias}, %[[BEGIN:[^:]*]]: i64, %[[END:[^:]*]]: i64)
// CHECK-SAME: attributes {synpl.iterations = 1 : i64}
// CHECK: %[[GO:.*]] = llvm.icmp "slt" %[[BEGIN]], %[[END]] : i64
// CHECK: llvm.cond_br %[[GO]]
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @o pool @dev offset 0 size 4 lifetime(0, 0) : !l0uop.buf<1xf32>
  l0uop.kernel @scalar inputs() outputs(%o = @o : !l0uop.buf<1xf32>)
      grid(1, 1, 1) block(1, 1, 1) shared_mem 0 {
    %z = l0uop.const 0 : index
    %c = l0uop.const 2.5 : f32
    %po = l0uop.index %o[%z] : !l0uop.buf<1xf32>
    l0uop.store %po, %c : f32
  }
}

// -----

// Vectors, integers, IF, BARRIER, shared scratch, WMMA and the host tile
// intrinsics.

// CHECK-LABEL: llvm.func @p_misc(
// CHECK: llvm.alloca %{{.*}} x f32 {alignment = 64 : i64}
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK: llvm.extractelement
// CHECK: llvm.insertelement
// CHECK: llvm.fadd %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<4xf32>, !llvm.ptr
// CHECK: llvm.srem
// CHECK: llvm.sitofp
// CHECK: llvm.bitcast
// The store under the IF.
// CHECK: llvm.cond_br
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr
// CHECK: llvm.intr.fma({{.*}}) : (f32, f32, f32) -> f32
// CHECK: llvm.return
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @a pool @dev offset 0 size 64 lifetime(0, 0) : !l0uop.buf<4x4xf32>
  l0uop.slot @o pool @dev offset 256 size 64 lifetime(0, 0) : !l0uop.buf<4x4xf32>
  l0uop.slot @n pool @dev offset 512 size 16 lifetime(0, 0) : !l0uop.buf<4xi32>
  l0uop.kernel @misc inputs(%a = @a : !l0uop.buf<4x4xf32>)
      outputs(%o = @o : !l0uop.buf<4x4xf32>, %n = @n : !l0uop.buf<4xi32>)
      grid(4, 1, 1) block(1, 1, 1) shared_mem 64
      shared(%tmp : !l0uop.buf<16xf32>) {
    %zero = l0uop.const 0 : index
    %three = l0uop.const 3 : index
    %r = l0uop.range 0 to 4 over group_x : index
    %pa = l0uop.index %a[%r, %zero] : !l0uop.buf<4x4xf32>
    %row = l0uop.load %pa : vector<4xf32>
    %e0 = l0uop.gep %row[0] : vector<4xf32> -> f32
    %e3 = l0uop.gep %row[3] : vector<4xf32> -> f32
    %sw = l0uop.vectorize %e3, %e0, %e3, %e0 : f32
    %sum = l0uop.add %row, %sw : vector<4xf32>
    %po = l0uop.index %o[%r, %zero] : !l0uop.buf<4x4xf32>
    l0uop.store %po, %sum : vector<4xf32>
    %m = l0uop.mod %r, %three : index
    %mf = l0uop.cast %m : index to f32
    %bits = l0uop.bitcast %mf : f32 to i32
    %pt = l0uop.index %tmp[%r] : !l0uop.buf<16xf32>
    l0uop.store %pt, %mf : f32
    l0uop.barrier
    %c = l0uop.cmpne %m, %zero : index
    l0uop.if %c
    %pn = l0uop.index %n[%r] : !l0uop.buf<4xi32>
    l0uop.store %pn, %bits : i32
    l0uop.endif
    l0uop.end %r
    %t = l0uop.custom "host.tile_load"(%a, %zero, %zero) : (!l0uop.buf<4x4xf32>, index, index) -> vector<4x4xf32>
    %d = l0uop.wmma %t, %t, %t : vector<4x4xf32>, vector<4x4xf32>, vector<4x4xf32> -> vector<4x4xf32>
    l0uop.custom "host.tile_store"(%o, %zero, %zero, %d) : (!l0uop.buf<4x4xf32>, index, index, vector<4x4xf32>) -> ()
  }
}

// -----

// All or nothing: a CUSTOM without a host lowering fails the conversion,
// which counts what it could lower and leaves the module as it was.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 256 lifetime(0, 0) : !l0uop.buf<64xf32>
  l0uop.slot @o pool @dev offset 256 size 256 lifetime(0, 0) : !l0uop.buf<64xf32>
  l0uop.kernel @escape inputs(%x = @x : !l0uop.buf<64xf32>)
      outputs(%o = @o : !l0uop.buf<64xf32>)
      grid(1, 1, 1) block(64, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 64 over global_x : index
    %px = l0uop.index %x[%i] : !l0uop.buf<64xf32>
    %v = l0uop.load %px : f32
    // expected-error-re @+1 {{lowered 6 of 8 ops; not lowered: l0uop.custom at {{.*}}synpl-convert-l0uop-to-llvm.mlir:{{[0-9]+}}:{{[0-9]+}}: CUSTOM "fused_gelu.ptx" has no host lowering (host intrinsics: host.tile_load, host.tile_store)}}
    %g = l0uop.custom "fused_gelu.ptx"(%v) : (f32) -> f32
    %po = l0uop.index %o[%i] : !l0uop.buf<64xf32>
    l0uop.store %po, %g : f32
    l0uop.end %i
  }
}

// -----

// A BARRIER between threads of a block that the host runs one after
// another splits their RANGE: one loop per phase, and a value a later phase
// reads (%sq) goes through a per-thread array. The block is not split over
// host threads (the group range is).

// CHECK-LABEL: llvm.func @p_exchange(
// CHECK-SAME: attributes {synpl.iterations = 2 : i64}
// The shared scratch, then the array of %sq.
// CHECK: llvm.alloca %{{.*}} x f32 {alignment = 64 : i64}
// CHECK: %[[SQS:.*]] = llvm.alloca %{{.*}} x f32 {alignment = 64 : i64}
// Phase 0 stores the square for its thread...
// CHECK: %[[SQ:.*]] = llvm.fmul
// CHECK: %[[SLOT0:.*]] = llvm.getelementptr %[[SQS]][%[[IT0:.*]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: llvm.store %[[SQ]], %[[SLOT0]]
// ...phase 1, a loop of its own, reads it back.
// CHECK: %[[SLOT1:.*]] = llvm.getelementptr %[[SQS]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK: %[[BACK:.*]] = llvm.load %[[SLOT1]]
// CHECK: llvm.fadd %{{.*}}, %[[BACK]]
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 128 lifetime(0, 0) : !l0uop.buf<2x16xf32>
  l0uop.slot @o pool @dev offset 256 size 128 lifetime(0, 0) : !l0uop.buf<2x16xf32>
  l0uop.kernel @exchange inputs(%x = @x : !l0uop.buf<2x16xf32>)
      outputs(%o = @o : !l0uop.buf<2x16xf32>)
      grid(2, 1, 1) block(16, 1, 1) shared_mem 64
      shared(%tmp : !l0uop.buf<16xf32>) {
    %one = l0uop.const 1 : index
    %n = l0uop.const 16 : index
    %g = l0uop.range 0 to 2 over group_x : index
    %t = l0uop.range 0 to 16 over local_x : index
    %px = l0uop.index %x[%g, %t] : !l0uop.buf<2x16xf32>
    %v = l0uop.load %px : f32
    %sq = l0uop.mul %v, %v : f32
    %pt = l0uop.index %tmp[%t] : !l0uop.buf<16xf32>
    l0uop.store %pt, %v : f32
    l0uop.barrier
    %t1 = l0uop.add %t, %one : index
    %nb = l0uop.mod %t1, %n : index
    %pn = l0uop.index %tmp[%nb] : !l0uop.buf<16xf32>
    %w = l0uop.load %pn : f32
    %r = l0uop.add %w, %sq : f32
    %po = l0uop.index %o[%g, %t] : !l0uop.buf<2x16xf32>
    l0uop.store %po, %r : f32
    l0uop.end %t
    l0uop.end %g
  }
}

// -----

// A BARRIER nested in a loop inside the threads' RANGE would need the loop
// interchanged with the threads: refused, not silently dropped.
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @o pool @dev offset 0 size 64 lifetime(0, 0) : !l0uop.buf<16xf32>
  l0uop.kernel @tiled inputs() outputs(%o = @o : !l0uop.buf<16xf32>)
      grid(1, 1, 1) block(16, 1, 1) shared_mem 64
      shared(%tmp : !l0uop.buf<16xf32>) {
    %t = l0uop.range 0 to 16 over local_x : index
    %k = l0uop.range 0 to 4 : index
    %kf = l0uop.cast %k : index to f32
    %pt = l0uop.index %tmp[%t] : !l0uop.buf<16xf32>
    l0uop.store %pt, %kf : f32
    // expected-error-re @+1 {{lowered 11 of 12 ops; not lowered: l0uop.barrier at {{.*}}: BARRIER nested in a loop inside a RANGE over local_x: the host runs a block's threads one after another and splits that RANGE only at barriers directly in its body}}
    l0uop.barrier
    %v = l0uop.load %pt : f32
    %po = l0uop.index %o[%t] : !l0uop.buf<16xf32>
    l0uop.store %po, %v : f32
    l0uop.end %k
    l0uop.end %t
  }
}

// -----

// A RANGE over global_x split at its BARRIER spans 4 blocks: the host would
// run each phase over all 1000 threads with one block's shared buffer, so a
// block would read another's values (CUDA gives each block its own):
// refused, not silently wrong.
l0uop.plan @g pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 4000 lifetime(0, 1) : !l0uop.buf<1000xf32>
  l0uop.slot @y pool @dev offset 4096 size 4000 lifetime(0, 1) : !l0uop.buf<1000xf32>
  l0uop.kernel @rev inputs(%x = @x : !l0uop.buf<1000xf32>) outputs(%y = @y : !l0uop.buf<1000xf32>)
      grid(4, 1, 1) block(256, 1, 1) shared_mem 1024 shared(%t : !l0uop.buf<256xf32>) {
    // expected-error-re @+1 {{lowered 16 of 17 ops; not lowered: l0uop.range at {{.*}}: a RANGE over global_x of 1000 iterations holds BARRIERs but spans several blocks of 256 threads: the host runs its barrier phases over the whole range; map it over group_ and local_ instead}}
    %i = l0uop.range 0 to 1000 over global_x : index
    %c255 = l0uop.const 255 : index
    %c256 = l0uop.const 256 : index
    %lane = l0uop.mod %i, %c256 : index
    %px = l0uop.index %x[%i] : !l0uop.buf<1000xf32>
    %v = l0uop.load %px : f32
    %pt = l0uop.index %t[%lane] : !l0uop.buf<256xf32>
    l0uop.store %pt, %v : f32
    l0uop.barrier
    %nl = l0uop.neg %lane : index
    %rl = l0uop.add %c255, %nl : index
    %pr = l0uop.index %t[%rl] : !l0uop.buf<256xf32>
    %r = l0uop.load %pr : f32
    %py = l0uop.index %y[%i] : !l0uop.buf<1000xf32>
    l0uop.store %py, %r : f32
    l0uop.end %i
  }
}

// -----

// Unsigned data (ui8 pixels and labels) is signless i8 in LLVM: it compares,
// takes its maximum and remainder unsigned, and converts with uitofp, so 200
// stays 200 rather than becoming -56.
// CHECK-LABEL: llvm.func @u_unsigned(
// CHECK-DAG: llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr -> i8
// CHECK-DAG: llvm.icmp "ult"
// CHECK-DAG: llvm.intr.umax
// CHECK-DAG: llvm.urem
// CHECK-DAG: llvm.udiv
// CHECK-DAG: llvm.uitofp %{{.*}} : i8 to f32
l0uop.plan @u pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @a pool @dev offset 0 size 64 lifetime(0, 0) : !l0uop.buf<64xui8>
  l0uop.slot @b pool @dev offset 256 size 64 lifetime(0, 0) : !l0uop.buf<64xui8>
  l0uop.slot @o pool @dev offset 512 size 256 lifetime(0, 0) : !l0uop.buf<64xf32>
  l0uop.kernel @unsigned inputs(%a = @a : !l0uop.buf<64xui8>, %b = @b : !l0uop.buf<64xui8>)
      outputs(%o = @o : !l0uop.buf<64xf32>)
      grid(1, 1, 1) block(64, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 64 over global_x : index
    %pa = l0uop.index %a[%i] : !l0uop.buf<64xui8>
    %x = l0uop.load %pa : ui8
    %pb = l0uop.index %b[%i] : !l0uop.buf<64xui8>
    %y = l0uop.load %pb : ui8
    %lt = l0uop.cmplt %x, %y : ui8
    %mx = l0uop.max %x, %y : ui8
    %r = l0uop.mod %mx, %y : ui8
    %q = l0uop.div %r, %y : ui8
    %w = l0uop.where %lt, %q, %x : ui8
    %f = l0uop.cast %w : ui8 to f32
    %po = l0uop.index %o[%i] : !l0uop.buf<64xf32>
    l0uop.store %po, %f : f32
    l0uop.end %i
  }
  l0uop.stream @s [@unsigned]
}

// -----

// EXP2 flushes results below the smallest normal to zero: its input is
// clamped at -126 (so the vector math library, with inline-exp2=false, keeps
// to its fast path, even for a masked score of -inf) and the lanes below
// select 0. By default 2^x is inline: n = roundeven(min(x, 128)), a
// degree-6 polynomial in x - n (six FMAs), 2^n as two exponent-bit powers,
// NaN passed through.
// CHECK-LABEL: llvm.func @p_e(
// CHECK-DAG: %[[ZERO:.*]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK-DAG: %[[LO:.*]] = llvm.mlir.constant(-1.260000e+02 : f32) : f32
// CHECK: %[[X:.*]] = llvm.load
// CHECK: %[[C:.*]] = llvm.intr.maximum(%[[X]], %[[LO]])
// CHECK: %[[M:.*]] = llvm.intr.minimum(%[[C]], %{{.*}})
// CHECK: %[[N:.*]] = llvm.intr.roundeven(%[[M]])
// CHECK: llvm.fsub %[[M]], %[[N]]
// CHECK-COUNT-6: llvm.intr.fma
// CHECK: llvm.fptosi %[[N]]
// CHECK: llvm.shl
// CHECK: llvm.bitcast
// CHECK: %[[NAN:.*]] = llvm.fcmp "uno" %[[C]], %[[C]]
// CHECK: %[[E:.*]] = llvm.select %[[NAN]], %[[C]], %{{.*}}
// CHECK: %[[BELOW:.*]] = llvm.fcmp "olt" %[[X]], %[[LO]]
// CHECK: llvm.select %[[BELOW]], %[[ZERO]], %[[E]]
// LIBM-LABEL: llvm.func @p_e(
// LIBM: %[[C:.*]] = llvm.intr.maximum
// LIBM: llvm.intr.exp2(%[[C]])
// LIBM-NOT: llvm.intr.roundeven
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 256 lifetime(0, 0) : !l0uop.buf<64xf32>
  l0uop.slot @o pool @dev offset 256 size 256 lifetime(0, 0) : !l0uop.buf<64xf32>
  l0uop.kernel @e inputs(%x = @x : !l0uop.buf<64xf32>)
      outputs(%o = @o : !l0uop.buf<64xf32>)
      grid(1, 1, 1) block(64, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 64 over global_x : index
    %px = l0uop.index %x[%i] : !l0uop.buf<64xf32>
    %a = l0uop.load %px : f32
    %e = l0uop.exp2 %a : f32
    %po = l0uop.index %o[%i] : !l0uop.buf<64xf32>
    l0uop.store %po, %e : f32
    l0uop.end %i
  }
  l0uop.stream @s [@e]
}

// -----

// An i1 in memory is a byte holding 0 or 1 (a relu's mask kept for the
// backward pass): stored as the zero-extended i8 and read back as the i8
// truncated, so that LLVM's loop vectorizer moves byte vectors instead of
// one byte per lane.
// CHECK-LABEL: llvm.func @pm_mask(
// CHECK: %[[C:.*]] = llvm.fcmp "olt"
// CHECK: %[[B:.*]] = llvm.zext %[[C]] : i1 to i8
// CHECK: llvm.store %[[B]], %{{.*}} {alignment = 1 : i64} : i8, !llvm.ptr
// CHECK-LABEL: llvm.func @pm_use(
// CHECK: %[[L:.*]] = llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr -> i8
// CHECK: %[[T:.*]] = llvm.trunc %[[L]] : i8 to i1
// CHECK: llvm.select %[[T]]
// LLVMIR-LABEL: define void @pm_mask(
// LLVMIR: zext i1 %{{.*}} to i8
// LLVMIR: store i8
l0uop.plan @pm pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 256 lifetime(0, 1) : !l0uop.buf<64xf32>
  l0uop.slot @m pool @dev offset 256 size 64 lifetime(0, 1) : !l0uop.buf<64xi1>
  l0uop.slot @o pool @dev offset 512 size 256 lifetime(1, 1) : !l0uop.buf<64xf32>
  l0uop.kernel @mask inputs(%x = @x : !l0uop.buf<64xf32>) outputs(%m = @m : !l0uop.buf<64xi1>)
      grid(1, 1, 1) block(64, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 64 over global_x : index
    %px = l0uop.index %x[%i] : !l0uop.buf<64xf32>
    %a = l0uop.load %px : f32
    %z = l0uop.const 0.000000e+00 : f32
    %c = l0uop.cmplt %z, %a : f32
    %pm = l0uop.index %m[%i] : !l0uop.buf<64xi1>
    l0uop.store %pm, %c : i1
    l0uop.end %i
  }
  l0uop.kernel @use inputs(%x = @x : !l0uop.buf<64xf32>, %m = @m : !l0uop.buf<64xi1>) outputs(%o = @o : !l0uop.buf<64xf32>)
      grid(1, 1, 1) block(64, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 64 over global_x : index
    %pm = l0uop.index %m[%i] : !l0uop.buf<64xi1>
    %c = l0uop.load %pm : i1
    %px = l0uop.index %x[%i] : !l0uop.buf<64xf32>
    %a = l0uop.load %px : f32
    %z = l0uop.const 0.000000e+00 : f32
    %w = l0uop.where %c, %a, %z : f32
    %po = l0uop.index %o[%i] : !l0uop.buf<64xf32>
    l0uop.store %po, %w : f32
    l0uop.end %i
  }
  l0uop.stream @s [@mask, @use]
}
