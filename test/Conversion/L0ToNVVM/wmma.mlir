// RUN: synpl-opt %s -split-input-file --synpl-convert-l0uop-to-nvvm | FileCheck %s
// RUN: synpl-opt %s -split-input-file --synpl-convert-l0uop-to-nvvm=tensor-cores=false | FileCheck %s --check-prefix=NOTC

// WMMA on the tensor cores: each warp of a block loads A, B and C as
// fragments (host.tile_load), multiplies (wmma.mma) and stores D
// (host.tile_store); f16 at m16n16k16 with f32 accumulation. The leading
// dimension is the buffer's row length (64).

// CHECK-LABEL: llvm.func @p_mm(
// CHECK: %[[LD:.*]] = llvm.mlir.constant(64 : i32) : i32
// CHECK: %[[A:.*]] = nvvm.wmma.load %{{.*}}, %[[LD]] {eltype = #nvvm.mma_type<f16>, frag = #nvvm.mma_frag<a>, k = 16 : i32, layout = #nvvm.mma_layout<row>, m = 16 : i32, n = 16 : i32}
// CHECK: nvvm.wmma.load %{{.*}}, %[[LD]] {eltype = #nvvm.mma_type<f16>, frag = #nvvm.mma_frag<b>
// CHECK: nvvm.wmma.load %{{.*}}, %[[LD]] {eltype = #nvvm.mma_type<f32>, frag = #nvvm.mma_frag<c>
// CHECK-SAME: -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
// CHECK: nvvm.wmma.mma {{.*}} {eltypeA = #nvvm.mma_type<f16>, eltypeB = #nvvm.mma_type<f32>, k = 16 : i32
// CHECK: nvvm.wmma.store %{{.*}}, %[[LD]], {{.*}} {eltype = #nvvm.mma_type<f32>, k = 16 : i32

// Without tensor cores every thread computes the whole tile (the host's
// per-thread form): 16 x 16 x 16 fmas.
// NOTC-LABEL: llvm.func @p_mm(
// NOTC-NOT: nvvm.wmma
// NOTC: llvm.intr.fma
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @a pool @dev offset 0 size 8192 lifetime(0, 1) : !l0uop.buf<64x64xf16>
  l0uop.slot @b pool @dev offset 8192 size 8192 lifetime(0, 1) : !l0uop.buf<64x64xf16>
  l0uop.slot @c pool @dev offset 16384 size 16384 lifetime(0, 1) : !l0uop.buf<64x64xf32>

  l0uop.kernel @mm inputs(%a = @a : !l0uop.buf<64x64xf16>, %b = @b : !l0uop.buf<64x64xf16>) outputs(%c = @c : !l0uop.buf<64x64xf32>)
      grid(4, 4, 1) block(32, 1, 1) shared_mem 0 {
    %ti = l0uop.range 0 to 64 step 16 over group_y : index
    %tj = l0uop.range 0 to 64 step 16 over group_x : index
    %k = l0uop.range 0 to 64 step 16 : index
    %ta = l0uop.custom "host.tile_load"(%a, %ti, %k) : (!l0uop.buf<64x64xf16>, index, index) -> vector<16x16xf16>
    %tb = l0uop.custom "host.tile_load"(%b, %k, %tj) : (!l0uop.buf<64x64xf16>, index, index) -> vector<16x16xf16>
    %tc = l0uop.custom "host.tile_load"(%c, %ti, %tj) : (!l0uop.buf<64x64xf32>, index, index) -> vector<16x16xf32>
    %d = l0uop.wmma %ta, %tb, %tc : vector<16x16xf16>, vector<16x16xf16>, vector<16x16xf32> -> vector<16x16xf32>
    l0uop.custom "host.tile_store"(%c, %ti, %tj, %d) : (!l0uop.buf<64x64xf32>, index, index, vector<16x16xf32>) -> ()
    l0uop.end %k
    l0uop.end %tj
    l0uop.end %ti
  }
}

// -----

// bf16: the NVVM dialect's wmma table lacks it, so the LLVM intrinsics
// (4 x i32 fragments of bf16 pairs).

// CHECK-LABEL: llvm.func @pb_mm(
// CHECK: llvm.call_intrinsic "llvm.nvvm.wmma.m16n16k16.load.a.row.stride.bf16"(%{{.*}}, %{{.*}}) : (!llvm.ptr, i32) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK: llvm.call_intrinsic "llvm.nvvm.wmma.m16n16k16.load.b.row.stride.bf16"
// CHECK: nvvm.wmma.load {{.*}}frag = #nvvm.mma_frag<c>
// CHECK: llvm.call_intrinsic "llvm.nvvm.wmma.m16n16k16.mma.row.row.bf16"
// CHECK: nvvm.wmma.store
l0uop.plan @pb pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @a pool @dev offset 0 size 8192 lifetime(0, 1) : !l0uop.buf<64x64xbf16>
  l0uop.slot @b pool @dev offset 8192 size 8192 lifetime(0, 1) : !l0uop.buf<64x64xbf16>
  l0uop.slot @c pool @dev offset 16384 size 16384 lifetime(0, 1) : !l0uop.buf<64x64xf32>

  l0uop.kernel @mm inputs(%a = @a : !l0uop.buf<64x64xbf16>, %b = @b : !l0uop.buf<64x64xbf16>) outputs(%c = @c : !l0uop.buf<64x64xf32>)
      grid(4, 4, 1) block(32, 1, 1) shared_mem 0 {
    %ti = l0uop.range 0 to 64 step 16 over group_y : index
    %tj = l0uop.range 0 to 64 step 16 over group_x : index
    %k = l0uop.range 0 to 64 step 16 : index
    %ta = l0uop.custom "host.tile_load"(%a, %ti, %k) : (!l0uop.buf<64x64xbf16>, index, index) -> vector<16x16xbf16>
    %tb = l0uop.custom "host.tile_load"(%b, %k, %tj) : (!l0uop.buf<64x64xbf16>, index, index) -> vector<16x16xbf16>
    %tc = l0uop.custom "host.tile_load"(%c, %ti, %tj) : (!l0uop.buf<64x64xf32>, index, index) -> vector<16x16xf32>
    %d = l0uop.wmma %ta, %tb, %tc : vector<16x16xbf16>, vector<16x16xbf16>, vector<16x16xf32> -> vector<16x16xf32>
    l0uop.custom "host.tile_store"(%c, %ti, %tj, %d) : (!l0uop.buf<64x64xf32>, index, index, vector<16x16xf32>) -> ()
    l0uop.end %k
    l0uop.end %tj
    l0uop.end %ti
  }
}

// -----

// f32 operands run as tf32 at m16n16k8 (A 16x8, B 8x16); the accumulator
// is loaded and stored at the same m16n16k8 shape as its WMMA.

// CHECK-LABEL: llvm.func @pt_mm(
// CHECK: nvvm.wmma.load {{.*}}eltype = #nvvm.mma_type<tf32>, frag = #nvvm.mma_frag<a>, k = 8 : i32
// CHECK: nvvm.wmma.load {{.*}}eltype = #nvvm.mma_type<tf32>, frag = #nvvm.mma_frag<b>, k = 8 : i32
// CHECK: nvvm.wmma.load {{.*}}eltype = #nvvm.mma_type<f32>, frag = #nvvm.mma_frag<c>, k = 8 : i32
// CHECK: nvvm.wmma.mma {{.*}}eltypeA = #nvvm.mma_type<tf32>, eltypeB = #nvvm.mma_type<f32>, k = 8 : i32
// CHECK: nvvm.wmma.store {{.*}}eltype = #nvvm.mma_type<f32>, k = 8 : i32
l0uop.plan @pt pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @a pool @dev offset 0 size 16384 lifetime(0, 1) : !l0uop.buf<64x64xf32>
  l0uop.slot @b pool @dev offset 16384 size 16384 lifetime(0, 1) : !l0uop.buf<64x64xf32>
  l0uop.slot @c pool @dev offset 32768 size 16384 lifetime(0, 1) : !l0uop.buf<64x64xf32>
  l0uop.kernel @mm inputs(%a = @a : !l0uop.buf<64x64xf32>, %b = @b : !l0uop.buf<64x64xf32>) outputs(%c = @c : !l0uop.buf<64x64xf32>)
      grid(4, 4, 1) block(32, 1, 1) shared_mem 0 {
    %ti = l0uop.range 0 to 64 step 16 over group_y : index
    %tj = l0uop.range 0 to 64 step 16 over group_x : index
    %k = l0uop.range 0 to 64 step 8 : index
    %ta = l0uop.custom "host.tile_load"(%a, %ti, %k) : (!l0uop.buf<64x64xf32>, index, index) -> vector<16x8xf32>
    %tb = l0uop.custom "host.tile_load"(%b, %k, %tj) : (!l0uop.buf<64x64xf32>, index, index) -> vector<8x16xf32>
    %tc = l0uop.custom "host.tile_load"(%c, %ti, %tj) : (!l0uop.buf<64x64xf32>, index, index) -> vector<16x16xf32>
    %d = l0uop.wmma %ta, %tb, %tc : vector<16x8xf32>, vector<8x16xf32>, vector<16x16xf32> -> vector<16x16xf32>
    l0uop.custom "host.tile_store"(%c, %ti, %tj, %d) : (!l0uop.buf<64x64xf32>, index, index, vector<16x16xf32>) -> ()
    l0uop.end %k
    l0uop.end %tj
    l0uop.end %ti
  }
}

// -----

// WMMA needs a 32-byte aligned tile address and a 16-byte row stride: in a
// pool aligned to 16 bytes the address is not provably aligned, so the
// kernel keeps the per-thread form (its tiles as per-lane loops).

// CHECK-LABEL: llvm.func @pu_mm(
// CHECK-NOT: nvvm.wmma
// CHECK: llvm.return
l0uop.plan @pu pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB align 16
  l0uop.slot @a pool @dev offset 0 size 16384 lifetime(0, 1) : !l0uop.buf<64x64xf32>
  l0uop.slot @b pool @dev offset 16384 size 16384 lifetime(0, 1) : !l0uop.buf<64x64xf32>
  l0uop.slot @c pool @dev offset 32768 size 16384 lifetime(0, 1) : !l0uop.buf<64x64xf32>
  l0uop.kernel @mm inputs(%a = @a : !l0uop.buf<64x64xf32>, %b = @b : !l0uop.buf<64x64xf32>) outputs(%c = @c : !l0uop.buf<64x64xf32>)
      grid(4, 4, 1) block(32, 1, 1) shared_mem 0 {
    %ti = l0uop.range 0 to 64 step 16 over group_y : index
    %tj = l0uop.range 0 to 64 step 16 over group_x : index
    %k = l0uop.range 0 to 64 step 8 : index
    %ta = l0uop.custom "host.tile_load"(%a, %ti, %k) : (!l0uop.buf<64x64xf32>, index, index) -> vector<16x8xf32>
    %tb = l0uop.custom "host.tile_load"(%b, %k, %tj) : (!l0uop.buf<64x64xf32>, index, index) -> vector<8x16xf32>
    %tc = l0uop.custom "host.tile_load"(%c, %ti, %tj) : (!l0uop.buf<64x64xf32>, index, index) -> vector<16x16xf32>
    %d = l0uop.wmma %ta, %tb, %tc : vector<16x8xf32>, vector<8x16xf32>, vector<16x16xf32> -> vector<16x16xf32>
    l0uop.custom "host.tile_store"(%c, %ti, %tj, %d) : (!l0uop.buf<64x64xf32>, index, index, vector<16x16xf32>) -> ()
    l0uop.end %k
    l0uop.end %tj
    l0uop.end %ti
  }
}
