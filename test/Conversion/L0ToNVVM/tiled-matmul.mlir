// RUN: synpl-tiled-matmul %s --chip=sm_80 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=LOG < %t.err
// RUN: synpl-tiled-matmul %s --chip=sm_90 --no-tensor-cores 2>&1 >/dev/null | FileCheck %s --check-prefix=NOTC
// RUN: synpl-tiled-matmul %s --chip=sm_90 --allow-tf32 2>&1 | FileCheck %s --check-prefix=TF32

// The tiled matmul lowering (lib/Conversion/L0ToNVVM/TiledMatmul.cpp)
// through its test driver: which kernels it takes, and the structure of
// what it emits. The numerics are checked by test/unit/TiledMatmulTest.cpp
// (a CPU SIMT interpreter of the emitted functions); tiled-matmul-ptxas.mlir
// assembles them.

// LOG: tiled: mm_bf16: mma.sync m16n8k16 bf16, block {{[0-9]+}}x{{[0-9]+}}x{{32|64}}, {{4|8}} warps
// LOG: tiled: mm_f16_at: mma.sync m16n8k16 f16
// LOG: tiled: mm_f32_bt: ffma f32, block
// LOG: declined: copy
// LOG: declined: mm_odd_k

// NOTC: declined: mm_bf16
// NOTC: declined: mm_f16_at
// NOTC: tiled: mm_f32_bt: ffma f32

// With tf32 allowed the f32 kernel goes to the tensor cores: B [N][K] is
// copied 16 bytes at a time, A [M][K] too; both read with ldmatrix.
// TF32: tiled: mm_f32_bt: mma.sync m16n8k8 tf32
// TF32: gpu.module @mm_f32_bt_cuda
// TF32: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg
// TF32: nvvm.ldmatrix %{{.*}} {{{.*}}layout = #nvvm.mma_layout<row>
// TF32: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>

// CHECK: module attributes {gpu.container_module}
// CHECK: gpu.module @mm_bf16_cuda [#nvvm.target<O = 3, chip = "sm_80", features = "+ptx{{[0-9]+}}">]
// CHECK: llvm.mlir.global external @mm_bf16_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK: llvm.func @mm_bf16(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK-SAME: nvvm.kernel
// CHECK-SAME: nvvm.maxntid = array<i32: {{128|256}}, 1, 1>
// CHECK: nvvm.read.ptx.sreg.tid.x
// CHECK: nvvm.read.ptx.sreg.ctaid.x
// The prologue fills stages - 1 ring slots with 16-byte zero-filling copies,
// waits for the first and loads its first fragments: A [M][K] with ldmatrix,
// B [K][N] with ldmatrix.trans.
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.wait.group {{[0-9]+}}
// CHECK-NEXT: nvvm.barrier0
// CHECK: nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// CHECK: nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// The k loop carries the tile index, the accumulators and the fragments of
// the tile's first k step: refill the ring, then per k step load the next
// step's fragments (for the last one: wait, barrier, the next tile's first)
// and multiply.
// CHECK: ^bb1(%{{.*}}: i32, %{{.*}}: f32,
// CHECK-SAME: %{{.*}}: i32)
// CHECK: llvm.cond_br
// CHECK: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.ldmatrix
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: nvvm.cp.async.wait.group {{[0-9]+}}
// CHECK-NEXT: nvvm.barrier0
// CHECK: nvvm.ldmatrix
// CHECK: nvvm.mma.sync
// CHECK: llvm.br ^bb1
// The epilogue, per element: bias[j], ReLU, bf16 store; no guards (the
// tiles divide 256 x 256).
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NOT: llvm.cond_br
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK: llvm.fadd
// CHECK: llvm.intr.maximum
// CHECK: llvm.fptrunc %{{.*}} : f32 to bf16
// CHECK: llvm.store %{{.*}}, %{{.*}} : bf16, !llvm.ptr
// CHECK: llvm.return

// A stored [K][M]: ldmatrix.trans for A; B [N][K]... here [K][N]: trans.
// CHECK: gpu.module @mm_f16_at_cuda
// CHECK: llvm.func @mm_f16_at(
// CHECK: nvvm.ldmatrix %{{.*}} {{{.*}}layout = #nvvm.mma_layout<col>
// CHECK: llvm.bitcast %{{.*}} : i32 to vector<2xf16>
// CHECK: nvvm.mma.sync {{.*}} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// M = 104 and N = 72 overhang the tile: guarded stores.
// CHECK: llvm.cond_br
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr

// f32: FFMA over [k][m] / [k][n] shared tiles, 4-byte copies for the
// K-contiguous B^T, 16-byte ones for A... A is [M][K] too: 4-byte.
// CHECK: gpu.module @mm_f32_bt_cuda
// CHECK: llvm.func @mm_f32_bt(
// CHECK-SAME: nvvm.maxntid = array<i32: 256, 1, 1>
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache = ca
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK: llvm.intr.fma
// CHECK-NOT: gpu.module @copy_cuda
// CHECK-NOT: gpu.module @mm_odd_k_cuda

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 64MiB
  l0uop.slot @a pool @dev offset 0 size 65536 lifetime(0, 0) : !l0uop.buf<256x128xbf16>
  l0uop.slot @b pool @dev offset 65536 size 65536 lifetime(0, 0) : !l0uop.buf<128x256xbf16>
  l0uop.slot @bias pool @dev offset 131072 size 1024 lifetime(0, 0) : !l0uop.buf<256xf32>
  l0uop.slot @c pool @dev offset 132096 size 131072 lifetime(0, 0) : !l0uop.buf<256x256xbf16>
  l0uop.slot @at pool @dev offset 263168 size 13312 lifetime(0, 0) : !l0uop.buf<64x104xf16>
  l0uop.slot @b2 pool @dev offset 276480 size 9216 lifetime(0, 0) : !l0uop.buf<64x72xf16>
  l0uop.slot @c2 pool @dev offset 285696 size 29952 lifetime(0, 0) : !l0uop.buf<104x72xf32>
  l0uop.slot @x pool @dev offset 315648 size 8192 lifetime(0, 0) : !l0uop.buf<64x32xf32>
  l0uop.slot @w pool @dev offset 323840 size 6144 lifetime(0, 0) : !l0uop.buf<48x32xf32>
  l0uop.slot @y pool @dev offset 329984 size 12288 lifetime(0, 0) : !l0uop.buf<64x48xf32>
  l0uop.slot @z pool @dev offset 342272 size 12288 lifetime(0, 0) : !l0uop.buf<64x48xf32>
  l0uop.slot @ak pool @dev offset 354560 size 2304 lifetime(0, 0) : !l0uop.buf<32x36xbf16>
  l0uop.slot @bk pool @dev offset 356864 size 2304 lifetime(0, 0) : !l0uop.buf<36x32xbf16>
  l0uop.slot @ck pool @dev offset 359168 size 4096 lifetime(0, 0) : !l0uop.buf<32x32xf32>

  // bf16 x bf16 -> f32 accumulate, bias + ReLU, bf16 out.
  l0uop.kernel @mm_bf16 inputs(%a = @a : !l0uop.buf<256x128xbf16>, %b = @b : !l0uop.buf<128x256xbf16>, %bias = @bias : !l0uop.buf<256xf32>) outputs(%c = @c : !l0uop.buf<256x256xbf16>) grid(256, 1, 1) block(256, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 256 over group_x : index
    %j = l0uop.range 0 to 256 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 128 : index
    %pa = l0uop.index %a[%i, %k] : !l0uop.buf<256x128xbf16>
    %va = l0uop.load %pa : bf16
    %fa = l0uop.cast %va : bf16 to f32
    %pb = l0uop.index %b[%k, %j] : !l0uop.buf<128x256xbf16>
    %vb = l0uop.load %pb : bf16
    %fb = l0uop.cast %vb : bf16 to f32
    %p = l0uop.mul %fa, %fb : f32
    l0uop.end %k
    %s = l0uop.reduce add %p over %k init %zero : f32
    %pbias = l0uop.index %bias[%j] : !l0uop.buf<256xf32>
    %vbias = l0uop.load %pbias : f32
    %sb = l0uop.add %s, %vbias : f32
    %relu = l0uop.max %sb, %zero : f32
    %lo = l0uop.cast %relu : f32 to bf16
    %pc = l0uop.index %c[%i, %j] : !l0uop.buf<256x256xbf16>
    l0uop.store %pc, %lo : bf16
    l0uop.end %j
    l0uop.end %i
  }

  // f16, A stored [K][M] (X^T . dY form), M and N off the tile.
  l0uop.kernel @mm_f16_at inputs(%a = @at : !l0uop.buf<64x104xf16>, %b = @b2 : !l0uop.buf<64x72xf16>) outputs(%c = @c2 : !l0uop.buf<104x72xf32>) grid(104, 1, 1) block(72, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 104 over group_x : index
    %j = l0uop.range 0 to 72 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 64 : index
    %pa = l0uop.index %a[%k, %i] : !l0uop.buf<64x104xf16>
    %va = l0uop.load %pa : f16
    %fa = l0uop.cast %va : f16 to f32
    %pb = l0uop.index %b[%k, %j] : !l0uop.buf<64x72xf16>
    %vb = l0uop.load %pb : f16
    %fb = l0uop.cast %vb : f16 to f32
    %p = l0uop.mul %fa, %fb : f32
    l0uop.end %k
    %s = l0uop.reduce add %p over %k init %zero : f32
    %pc = l0uop.index %c[%i, %j] : !l0uop.buf<104x72xf32>
    l0uop.store %pc, %s : f32
    l0uop.end %j
    l0uop.end %i
  }

  // f32, B stored [N][K] (dY . W^T form).
  l0uop.kernel @mm_f32_bt inputs(%x = @x : !l0uop.buf<64x32xf32>, %w = @w : !l0uop.buf<48x32xf32>) outputs(%y = @y : !l0uop.buf<64x48xf32>) grid(64, 1, 1) block(48, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 64 over group_x : index
    %j = l0uop.range 0 to 48 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 32 : index
    %pa = l0uop.index %x[%i, %k] : !l0uop.buf<64x32xf32>
    %va = l0uop.load %pa : f32
    %pb = l0uop.index %w[%j, %k] : !l0uop.buf<48x32xf32>
    %vb = l0uop.load %pb : f32
    %p = l0uop.mul %va, %vb : f32
    l0uop.end %k
    %s = l0uop.reduce add %p over %k init %zero : f32
    %pc = l0uop.index %y[%i, %j] : !l0uop.buf<64x48xf32>
    l0uop.store %pc, %s : f32
    l0uop.end %j
    l0uop.end %i
  }

  // Not a matmul: declined (the caller lowers it one thread per element).
  l0uop.kernel @copy inputs(%y = @y : !l0uop.buf<64x48xf32>) outputs(%z = @z : !l0uop.buf<64x48xf32>) grid(64, 1, 1) block(48, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 64 over group_x : index
    %j = l0uop.range 0 to 48 over local_x : index
    %p = l0uop.index %y[%i, %j] : !l0uop.buf<64x48xf32>
    %v = l0uop.load %p : f32
    %q = l0uop.index %z[%i, %j] : !l0uop.buf<64x48xf32>
    l0uop.store %q, %v : f32
    l0uop.end %j
    l0uop.end %i
  }

  // bf16 with K = 36: rows of A are not 16-byte aligned; declined.
  l0uop.kernel @mm_odd_k inputs(%a = @ak : !l0uop.buf<32x36xbf16>, %b = @bk : !l0uop.buf<36x32xbf16>) outputs(%c = @ck : !l0uop.buf<32x32xf32>) grid(32, 1, 1) block(32, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 32 over group_x : index
    %j = l0uop.range 0 to 32 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 36 : index
    %pa = l0uop.index %a[%i, %k] : !l0uop.buf<32x36xbf16>
    %va = l0uop.load %pa : bf16
    %fa = l0uop.cast %va : bf16 to f32
    %pb = l0uop.index %b[%k, %j] : !l0uop.buf<36x32xbf16>
    %vb = l0uop.load %pb : bf16
    %fb = l0uop.cast %vb : bf16 to f32
    %p = l0uop.mul %fa, %fb : f32
    l0uop.end %k
    %s = l0uop.reduce add %p over %k init %zero : f32
    %pc = l0uop.index %c[%i, %j] : !l0uop.buf<32x32xf32>
    l0uop.store %pc, %s : f32
    l0uop.end %j
    l0uop.end %i
  }
}
