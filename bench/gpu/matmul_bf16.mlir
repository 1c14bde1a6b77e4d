// C[4096x4096] (bf16) = A[4096x4096] (bf16, row-major M x K) .
// B[4096x4096] (bf16, row-major K x N), accumulated in f32: the L0 form of a
// bf16 matmul with f32 accumulation (loads cast to f32 before the product,
// REDUCE add in f32, the result cast back to bf16 on store) -- what
// torch.matmul(a, b) computes for bf16 tensors. Benchmarked by
// matmul_bench.py against cuBLAS.
l0uop.plan @bench pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 128MiB
  l0uop.slot @a pool @dev offset 0 size 33554432 lifetime(0, 0) : !l0uop.buf<4096x4096xbf16>
  l0uop.slot @b pool @dev offset 33554432 size 33554432 lifetime(0, 0) : !l0uop.buf<4096x4096xbf16>
  l0uop.slot @c pool @dev offset 67108864 size 33554432 lifetime(0, 0) : !l0uop.buf<4096x4096xbf16>
  l0uop.kernel @matmul_bf16 inputs(%a = @a : !l0uop.buf<4096x4096xbf16>, %b = @b : !l0uop.buf<4096x4096xbf16>) outputs(%c = @c : !l0uop.buf<4096x4096xbf16>) grid(16, 4096, 1) block(256, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 4096 over global_y : index
    %j = l0uop.range 0 to 4096 over global_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 4096 : index
    %pa = l0uop.index %a[%i, %k] : !l0uop.buf<4096x4096xbf16>
    %va = l0uop.load %pa : bf16
    %fa = l0uop.cast %va : bf16 to f32
    %pb = l0uop.index %b[%k, %j] : !l0uop.buf<4096x4096xbf16>
    %vb = l0uop.load %pb : bf16
    %fb = l0uop.cast %vb : bf16 to f32
    %p = l0uop.mul %fa, %fb : f32
    l0uop.end %k
    %s = l0uop.reduce add %p over %k init %zero : f32
    %r = l0uop.cast %s : f32 to bf16
    %pc = l0uop.index %c[%i, %j] : !l0uop.buf<4096x4096xbf16>
    l0uop.store %pc, %r : bf16
    l0uop.end %j
    l0uop.end %i
  }
}
