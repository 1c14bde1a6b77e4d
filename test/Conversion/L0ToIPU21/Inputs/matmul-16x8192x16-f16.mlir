// A 16x8192 . 8192x16 f16 product (f32 sums): small enough to check every
// number in Python, long enough in k that two tiles take it in two chunks.
l0uop.plan @mm pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 64MiB
  l0uop.slot @a pool @dev offset 0 size 262144 lifetime(0, 0) : !l0uop.buf<16x8192xf16>
  l0uop.slot @b pool @dev offset 262144 size 262144 lifetime(0, 0) : !l0uop.buf<8192x16xf16>
  l0uop.slot @c pool @dev offset 524288 size 1024 lifetime(0, 0) : !l0uop.buf<16x16xf32>
  l0uop.kernel @mm inputs(%a = @a : !l0uop.buf<16x8192xf16>, %b = @b : !l0uop.buf<8192x16xf16>) outputs(%c = @c : !l0uop.buf<16x16xf32>) grid(16, 1, 1) block(16, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 16 over group_x : index
    %j = l0uop.range 0 to 16 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 8192 : index
    %pa = l0uop.index %a[%i, %k] : !l0uop.buf<16x8192xf16>
    %va = l0uop.load %pa : f16
    %fa = l0uop.cast %va : f16 to f32
    %pb = l0uop.index %b[%k, %j] : !l0uop.buf<8192x16xf16>
    %vb = l0uop.load %pb : f16
    %fb = l0uop.cast %vb : f16 to f32
    %p = l0uop.mul %fa, %fb : f32
    l0uop.end %k
    %s = l0uop.reduce add %p over %k init %zero : f32
    %pc = l0uop.index %c[%i, %j] : !l0uop.buf<16x16xf32>
    l0uop.store %pc, %s : f32
    l0uop.end %j
    l0uop.end %i
  }
  l0uop.stream @s0 [@mm]
}
