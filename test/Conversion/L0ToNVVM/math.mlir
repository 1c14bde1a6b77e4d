// RUN: synpl-opt %s -split-input-file --synpl-convert-l0uop-to-nvvm | FileCheck %s --check-prefixes=CHECK,FAST
// RUN: synpl-opt %s -split-input-file --synpl-convert-l0uop-to-nvvm=fast-math=false | FileCheck %s --check-prefixes=CHECK,EXACT

// f32: the fast PTX forms (ftz approximations), or the IEEE-rounded ones
// where PTX has them; SIN reduces by 2 pi (Cody-Waite) before sin.approx.

// CHECK-LABEL: llvm.func @p_math(
// FAST: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%{{.*}}) : (f32) -> f32
// EXACT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"(%{{.*}}) : (f32) -> f32
// FAST: llvm.call_intrinsic "llvm.nvvm.lg2.approx.ftz.f"
// EXACT: llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"
// FAST: llvm.call_intrinsic "llvm.nvvm.rcp.approx.ftz.f"
// EXACT: llvm.call_intrinsic "llvm.nvvm.rcp.rn.f"
// FAST: llvm.call_intrinsic "llvm.nvvm.sqrt.approx.ftz.f"
// EXACT: llvm.call_intrinsic "llvm.nvvm.sqrt.rn.f"
// fast-math lets products and sums contract into fma (nvcc's -fmad).
// FAST: llvm.fmul %{{.*}}, %{{.*}} {fastmathFlags = #llvm.fastmath<contract>} : f32
// EXACT: llvm.fmul %{{[0-9]+}}, %{{[0-9]+}} : f32
// CHECK: %[[Q:.*]] = llvm.intr.roundeven
// CHECK: llvm.intr.fma
// CHECK: %[[R:.*]] = llvm.intr.fma
// FAST: llvm.call_intrinsic "llvm.nvvm.sin.approx.ftz.f"(%[[R]])
// EXACT: llvm.call_intrinsic "llvm.nvvm.sin.approx.f"(%[[R]])
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 1024 lifetime(0, 1) : !l0uop.buf<256xf32>
  l0uop.kernel @math inputs() outputs(%x = @x : !l0uop.buf<256xf32>)
      grid(1, 1, 1) block(256, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 256 over local_x : index
    %p = l0uop.index %x[%i] : !l0uop.buf<256xf32>
    %v = l0uop.load %p : f32
    %e = l0uop.exp2 %v : f32
    %l = l0uop.log2 %e : f32
    %r = l0uop.reciprocal %l : f32
    %s = l0uop.sqrt %r : f32
    %n = l0uop.sin %s : f32
    l0uop.store %p, %n : f32
    l0uop.end %i
  }
}

// -----

// f16 and bf16 compute in f32; vectors lane by lane; f64 SQRT and
// RECIPROCAL take sqrt.rn.f64 / rcp.rn.f64.

// CHECK-LABEL: llvm.func @h_narrow(
// CHECK: %[[W:.*]] = llvm.fpext %{{.*}} : f16 to f32
// FAST: %[[E:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[W]])
// EXACT: %[[E:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"(%[[W]])
// CHECK: llvm.fptrunc %[[E]] : f32 to f16
// CHECK: llvm.fpext %{{.*}} : bf16 to f32
// CHECK: llvm.fptrunc %{{.*}} : f32 to bf16
// CHECK: llvm.extractelement
// CHECK: llvm.fpext %{{.*}} : f16 to f32
// CHECK: llvm.insertelement
// CHECK: llvm.extractelement
// CHECK: llvm.insertelement
// CHECK: llvm.call_intrinsic "llvm.nvvm.sqrt.rn.d"(%{{.*}}) : (f64) -> f64
// CHECK: llvm.call_intrinsic "llvm.nvvm.rcp.rn.d"(%{{.*}}) : (f64) -> f64
l0uop.plan @h pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @a pool @dev offset 0 size 512 lifetime(0, 1) : !l0uop.buf<256xf16>
  l0uop.slot @b pool @dev offset 512 size 512 lifetime(0, 1) : !l0uop.buf<256xbf16>
  l0uop.slot @c pool @dev offset 1024 size 512 lifetime(0, 1) : !l0uop.buf<128x2xf16>
  l0uop.slot @d pool @dev offset 1536 size 2048 lifetime(0, 1) : !l0uop.buf<256xf64>
  l0uop.kernel @narrow inputs() outputs(%a = @a : !l0uop.buf<256xf16>, %b = @b : !l0uop.buf<256xbf16>, %c = @c : !l0uop.buf<128x2xf16>, %d = @d : !l0uop.buf<256xf64>)
      grid(1, 1, 1) block(128, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 128 over local_x : index
    %pa = l0uop.index %a[%i] : !l0uop.buf<256xf16>
    %va = l0uop.load %pa : f16
    %ea = l0uop.exp2 %va : f16
    l0uop.store %pa, %ea : f16
    %pb = l0uop.index %b[%i] : !l0uop.buf<256xbf16>
    %vb = l0uop.load %pb : bf16
    %lb = l0uop.log2 %vb : bf16
    l0uop.store %pb, %lb : bf16
    %c0 = l0uop.const 0 : index
    %pc = l0uop.index %c[%i, %c0] : !l0uop.buf<128x2xf16>
    %vc = l0uop.load %pc : vector<2xf16>
    %sc = l0uop.sqrt %vc : vector<2xf16>
    l0uop.store %pc, %sc : vector<2xf16>
    %pd = l0uop.index %d[%i] : !l0uop.buf<256xf64>
    %vd = l0uop.load %pd : f64
    %sd = l0uop.sqrt %vd : f64
    %rd = l0uop.reciprocal %sd : f64
    l0uop.store %pd, %rd : f64
    l0uop.end %i
  }
}
