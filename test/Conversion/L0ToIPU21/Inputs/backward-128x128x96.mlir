// The backward pass's products, each reading an operand transposed: a
// weight gradient dw = x^T . g (A stored [K][M]) and an input gradient
// dx = g . w^T (B stored [N][K]): dw = x^T g is [128][96] from x [128][128]
// and g [128][96]; dx = g w^T is [128][128] from g and w [128][96].
l0uop.plan @backward pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 65536 lifetime(0, 1) : !l0uop.buf<128x128xf32>
  l0uop.slot @g pool @dev offset 65536 size 49152 lifetime(0, 1) : !l0uop.buf<128x96xf32>
  l0uop.slot @w pool @dev offset 114688 size 49152 lifetime(0, 1) : !l0uop.buf<128x96xf32>
  l0uop.slot @dw pool @dev offset 163840 size 49152 lifetime(0, 1) : !l0uop.buf<128x96xf32>
  l0uop.slot @dx pool @dev offset 212992 size 65536 lifetime(0, 1) : !l0uop.buf<128x128xf32>
  l0uop.kernel @k_dw inputs(%x = @x : !l0uop.buf<128x128xf32>, %g = @g : !l0uop.buf<128x96xf32>) outputs(%dw = @dw : !l0uop.buf<128x96xf32>) grid(128, 1, 1) block(96, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 128 over group_x : index
    %j = l0uop.range 0 to 96 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 128 : index
    %pa = l0uop.index %x[%k, %i] : !l0uop.buf<128x128xf32>
    %va = l0uop.load %pa : f32
    %pb = l0uop.index %g[%k, %j] : !l0uop.buf<128x96xf32>
    %vb = l0uop.load %pb : f32
    %p = l0uop.mul %va, %vb : f32
    l0uop.end %k
    %s = l0uop.reduce add %p over %k init %zero : f32
    %pc = l0uop.index %dw[%i, %j] : !l0uop.buf<128x96xf32>
    l0uop.store %pc, %s : f32
    l0uop.end %j
    l0uop.end %i
  }
  l0uop.kernel @k_dx inputs(%g = @g : !l0uop.buf<128x96xf32>, %w = @w : !l0uop.buf<128x96xf32>) outputs(%dx = @dx : !l0uop.buf<128x128xf32>) grid(128, 1, 1) block(128, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 128 over group_x : index
    %j = l0uop.range 0 to 128 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 96 : index
    %pa = l0uop.index %g[%i, %k] : !l0uop.buf<128x96xf32>
    %va = l0uop.load %pa : f32
    %pb = l0uop.index %w[%j, %k] : !l0uop.buf<128x96xf32>
    %vb = l0uop.load %pb : f32
    %p = l0uop.mul %va, %vb : f32
    l0uop.end %k
    %s = l0uop.reduce add %p over %k init %zero : f32
    %pc = l0uop.index %dx[%i, %j] : !l0uop.buf<128x128xf32>
    l0uop.store %pc, %s : f32
    l0uop.end %j
    l0uop.end %i
  }
  l0uop.stream @s0 [@k_dw, @k_dx]
}
