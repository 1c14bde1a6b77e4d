// The FP16 4096^3 product of the ipu21 sink's performance target.
l0uop.plan @mm pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 256MiB
  l0uop.slot @a pool @dev offset 0 size 33554432 lifetime(0, 0) : !l0uop.buf<4096x4096xf16>
  l0uop.slot @b pool @dev offset 33554432 size 33554432 lifetime(0, 0) : !l0uop.buf<4096x4096xf16>
  l0uop.slot @c pool @dev offset 67108864 size 67108864 lifetime(0, 0) : !l0uop.buf<4096x4096xf32>
  l0uop.kernel @mm inputs(%a = @a : !l0uop.buf<4096x4096xf16>, %b = @b : !l0uop.buf<4096x4096xf16>) outputs(%c = @c : !l0uop.buf<4096x4096xf32>) grid(4096, 1, 1) block(4096, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 4096 over group_x : index
    %j = l0uop.range 0 to 4096 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 4096 : index
    %pa = l0uop.index %a[%i, %k] : !l0uop.buf<4096x4096xf16>
    %va = l0uop.load %pa : f16
    %fa = l0uop.cast %va : f16 to f32
    %pb = l0uop.index %b[%k, %j] : !l0uop.buf<4096x4096xf16>
    %vb = l0uop.load %pb : f16
    %fb = l0uop.cast %vb : f16 to f32
    %p = l0uop.mul %fa, %fb : f32
    l0uop.end %k
    %s = l0uop.reduce add %p over %k init %zero : f32
    %pc = l0uop.index %c[%i, %j] : !l0uop.buf<4096x4096xf32>
    l0uop.store %pc, %s : f32
    l0uop.end %j
    l0uop.end %i
  }
  l0uop.stream @s0 [@mm]
}
