// RUN: synpl-opt %s -split-input-file --synpl-convert-l0uop-to-nvvm | FileCheck %s

// The generic UOps lower as on the host (shared KernelBuilder code): CAST
// (incl. ui8, f16 <-> bf16 through f32), IF/ENDIF, REDUCE max/mul,
// VECTORIZE/GEP, CONST, compares, WHERE, MOD, MAX, NEG, MULACC, BITCAST.

// CHECK-LABEL: llvm.func @p_ops(
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x
// CAST ui8 -> f32 is unsigned.
// CHECK: %[[PX:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i8
// CHECK: %[[XF:.*]] = llvm.uitofp %[[PX]] : i8 to f32
// CAST f32 -> bf16 -> f16 (through f32).
// CHECK: %[[BF:.*]] = llvm.fptrunc %[[XF]] : f32 to bf16
// CHECK: %[[W:.*]] = llvm.fpext %[[BF]] : bf16 to f32
// CHECK: llvm.fptrunc %[[W]] : f32 to f16
// CMPLT f32, WHERE, MAX (f32: maximum), NEG, MULACC.
// CHECK: %[[LT:.*]] = llvm.fcmp "olt"
// CHECK: llvm.select %[[LT]]
// CHECK: llvm.intr.maximum
// CHECK: llvm.fneg
// CHECK: llvm.intr.fma
// IF/ENDIF: a branch around the store.
// CHECK: %[[NE:.*]] = llvm.fcmp "une"
// CHECK: llvm.cond_br %[[NE]]
// CHECK: llvm.store %{{.*}} : f16, !llvm.ptr
// REDUCE max over a loop, folded into its init.
// CHECK: ^[[HEAD:.*]](%{{.*}}: i64, %[[ACC:.*]]: f32):
// CHECK: llvm.intr.maximum(%[[ACC]], %{{.*}})
// REDUCE mul of i32 with MOD and DIV, integer MAX signed.
// CHECK: llvm.srem
// CHECK: llvm.sdiv
// CHECK: llvm.intr.smax
// CHECK: llvm.mul
// VECTORIZE / GEP (folded: lane 0 is the max) / BITCAST.
// CHECK: llvm.bitcast %[[ACC]] : f32 to i32
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 256 lifetime(0, 1) : !l0uop.buf<64xui8>
  l0uop.slot @h pool @dev offset 256 size 256 lifetime(0, 1) : !l0uop.buf<64xf16>
  l0uop.slot @m pool @dev offset 512 size 16384 lifetime(0, 1) : !l0uop.buf<64x64xf32>
  l0uop.slot @o pool @dev offset 16896 size 256 lifetime(0, 1) : !l0uop.buf<64xf32>
  l0uop.slot @q pool @dev offset 17152 size 256 lifetime(0, 1) : !l0uop.buf<64xi32>
  l0uop.kernel @ops inputs(%x = @x : !l0uop.buf<64xui8>, %m = @m : !l0uop.buf<64x64xf32>) outputs(%h = @h : !l0uop.buf<64xf16>, %o = @o : !l0uop.buf<64xf32>, %q = @q : !l0uop.buf<64xi32>)
      grid(1, 1, 1) block(64, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 64 over local_x : index
    %px = l0uop.index %x[%i] : !l0uop.buf<64xui8>
    %xv = l0uop.load %px : ui8
    %xf = l0uop.cast %xv : ui8 to f32
    %bf = l0uop.cast %xf : f32 to bf16
    %hf = l0uop.cast %bf : bf16 to f16
    %half = l0uop.const 0.5 : f32
    %lt = l0uop.cmplt %xf, %half : f32
    %sel = l0uop.where %lt, %half, %xf : f32
    %mx = l0uop.max %sel, %xf : f32
    %ng = l0uop.neg %mx : f32
    %fm = l0uop.mulacc %ng, %half, %xf : f32
    %ne = l0uop.cmpne %fm, %half : f32
    l0uop.if %ne
    %ph = l0uop.index %h[%i] : !l0uop.buf<64xf16>
    l0uop.store %ph, %hf : f16
    l0uop.endif
    %ninf = l0uop.const -1.0e+30 : f32
    %k = l0uop.range 0 to 64 : index
    %pm = l0uop.index %m[%i, %k] : !l0uop.buf<64x64xf32>
    %mv = l0uop.load %pm : f32
    l0uop.end %k
    %best = l0uop.reduce max %mv over %k init %ninf : f32
    %c3 = l0uop.const 3 : i32
    %one = l0uop.const 1 : i32
    %ii = l0uop.cast %i : index to i32
    %j = l0uop.range 0 to 4 : index
    %jj = l0uop.cast %j : index to i32
    %r = l0uop.mod %jj, %c3 : i32
    %d = l0uop.div %jj, %c3 : i32
    %r0 = l0uop.add %r, %d : i32
    %r1 = l0uop.max %r0, %one : i32
    l0uop.end %j
    %prod = l0uop.reduce mul %r1 over %j init %ii : i32
    %pq = l0uop.index %q[%i] : !l0uop.buf<64xi32>
    l0uop.store %pq, %prod : i32
    %vec = l0uop.vectorize %best, %fm : f32
    %lane = l0uop.gep %vec[0] : vector<2xf32> -> f32
    %bits = l0uop.bitcast %lane : f32 to i32
    %fb = l0uop.cast %bits : i32 to f32
    %po = l0uop.index %o[%i] : !l0uop.buf<64xf32>
    l0uop.store %po, %fb : f32
    l0uop.end %i
  }
}

// -----

// VECTORIZE and GEP as LLVM vector ops; RANGEs over y and z (global_y:
// ctaid.y * 4 + tid.y, local_z: tid.z), exactly covered.

// CHECK-LABEL: llvm.func @v_vec(
// CHECK: %[[CY:.*]] = nvvm.read.ptx.sreg.ctaid.y
// CHECK: %[[TY:.*]] = nvvm.read.ptx.sreg.tid.y
// CHECK: %[[TZ:.*]] = nvvm.read.ptx.sreg.tid.z
// CHECK-NOT: llvm.icmp "ult"
// CHECK: %[[V:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<2xf32>
// CHECK: %[[E:.*]] = llvm.extractelement %[[V]][%{{.*}} : i64] : vector<2xf32>
// CHECK: llvm.insertelement
// CHECK: %[[W:.*]] = llvm.insertelement
// CHECK: llvm.store %[[W]], %{{.*}} {alignment = 4 : i64} : vector<2xf32>, !llvm.ptr
l0uop.plan @v pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 1024 lifetime(0, 1) : !l0uop.buf<8x2x16xf32>
  l0uop.kernel @vec inputs() outputs(%x = @x : !l0uop.buf<8x2x16xf32>)
      grid(1, 2, 1) block(1, 4, 2) shared_mem 0 {
    %r = l0uop.range 0 to 8 over global_y : index
    %z = l0uop.range 0 to 2 over local_z : index
    %c0 = l0uop.const 0 : index
    %p = l0uop.index %x[%r, %z, %c0] : !l0uop.buf<8x2x16xf32>
    %v = l0uop.load %p : vector<2xf32>
    %a = l0uop.gep %v[1] : vector<2xf32> -> f32
    %b = l0uop.add %a, %a : f32
    %w = l0uop.vectorize %b, %a : f32
    l0uop.store %p, %w : vector<2xf32>
    l0uop.end %z
    l0uop.end %r
  }
}
