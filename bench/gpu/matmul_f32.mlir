// C[4096x4096] = A[4096x4096] . B[4096x4096], all f32 (no tf32): the FFMA
// tiled kernel, benchmarked by matmul_bench.py against cuBLAS in f32 with
// torch.backends.cuda.matmul.allow_tf32 = False.
l0uop.plan @bench pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 256MiB
  l0uop.slot @a pool @dev offset 0 size 67108864 lifetime(0, 0) : !l0uop.buf<4096x4096xf32>
  l0uop.slot @b pool @dev offset 67108864 size 67108864 lifetime(0, 0) : !l0uop.buf<4096x4096xf32>
  l0uop.slot @c pool @dev offset 134217728 size 67108864 lifetime(0, 0) : !l0uop.buf<4096x4096xf32>
  l0uop.kernel @matmul_f32 inputs(%a = @a : !l0uop.buf<4096x4096xf32>, %b = @b : !l0uop.buf<4096x4096xf32>) outputs(%c = @c : !l0uop.buf<4096x4096xf32>) grid(16, 4096, 1) block(256, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 4096 over global_y : index
    %j = l0uop.range 0 to 4096 over global_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 4096 : index
    %pa = l0uop.index %a[%i, %k] : !l0uop.buf<4096x4096xf32>
    %va = l0uop.load %pa : f32
    %pb = l0uop.index %b[%k, %j] : !l0uop.buf<4096x4096xf32>
    %vb = l0uop.load %pb : f32
    %p = l0uop.mul %va, %vb : f32
    l0uop.end %k
    %s = l0uop.reduce add %p over %k init %zero : f32
    %pc = l0uop.index %c[%i, %j] : !l0uop.buf<4096x4096xf32>
    l0uop.store %pc, %s : f32
    l0uop.end %j
    l0uop.end %i
  }
}
