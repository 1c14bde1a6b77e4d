// Column sums of a [4096][8] matrix: eight parallel results, each a fold of
// 4096 rows. Cut along its parallel RANGE alone it would use eight tiles, a
// fold each; the kernel planner also weighs cutting the fold in two stages.
l0uop.plan @colsum pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 131072 lifetime(0, 0) : !l0uop.buf<4096x8xf32>
  l0uop.slot @y pool @dev offset 131072 size 32 lifetime(0, 0) : !l0uop.buf<8xf32>
  l0uop.kernel @colsum inputs(%x = @x : !l0uop.buf<4096x8xf32>) outputs(%y = @y : !l0uop.buf<8xf32>) grid(1, 1, 1) block(8, 1, 1) shared_mem 0 {
    %j = l0uop.range 0 to 8 over local_x : index
    %one = l0uop.const 1.0 : f32
    %i = l0uop.range 0 to 4096 : index
    %p = l0uop.index %x[%i, %j] : !l0uop.buf<4096x8xf32>
    %v = l0uop.load %p : f32
    l0uop.end %i
    %s = l0uop.reduce add %v over %i init %one : f32
    %q = l0uop.index %y[%j] : !l0uop.buf<8xf32>
    l0uop.store %q, %s : f32
    l0uop.end %j
  }
  l0uop.stream @s0 [@colsum]
}
