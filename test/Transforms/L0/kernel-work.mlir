// RUN: synpl-opt %s --synpl-l0-kernel-work --verify-diagnostics -o /dev/null

// A 4x8 matmul over K = 16: MUL and the REDUCE add each 4*8*16 = 512, so
// 1024 flop = 2*M*N*K; it binds (64 + 128 + 32) floats = 896 B; its loads
// move 2*512 floats and its store 32: 4224 B; 1024 / 896 = 1.14 flop/B.
// The second kernel: one MULACC (2 flop) and an EXP2 (1) per lane of a
// 4-lane vector, 16 times: 192 flop over 2 * 64 floats = 512 B.

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @host persistent on host capacity 1KiB
  l0uop.slot @a pool @host offset 0 size 256 lifetime(0, 1) : !l0uop.buf<4x16xf32>
  l0uop.slot @b pool @host offset 256 size 512 lifetime(0, 1) : !l0uop.buf<16x8xf32>
  l0uop.slot @c pool @host offset 768 size 128 lifetime(0, 1) : !l0uop.buf<4x8xf32>
  l0uop.slot @x pool @host offset 0 size 256 lifetime(2, 3) : !l0uop.buf<64xf32>
  l0uop.slot @y pool @host offset 256 size 256 lifetime(2, 3) : !l0uop.buf<64xf32>
  // expected-remark @below {{kernel @mm: 1024 flop, 896 B touched, 4224 B accessed, 1.14 flop/B}}
  l0uop.kernel @mm inputs(%a = @a : !l0uop.buf<4x16xf32>, %b = @b : !l0uop.buf<16x8xf32>)
      outputs(%c = @c : !l0uop.buf<4x8xf32>) grid(4, 1, 1) block(8, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 4 over group_x : index
    %j = l0uop.range 0 to 8 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to 16 : index
    %pa = l0uop.index %a[%i, %k] : !l0uop.buf<4x16xf32>
    %va = l0uop.load %pa : f32
    %pb = l0uop.index %b[%k, %j] : !l0uop.buf<16x8xf32>
    %vb = l0uop.load %pb : f32
    %prod = l0uop.mul %va, %vb : f32
    l0uop.end %k
    %acc = l0uop.reduce add %prod over %k init %zero : f32
    %pc = l0uop.index %c[%i, %j] : !l0uop.buf<4x8xf32>
    l0uop.store %pc, %acc : f32
    l0uop.end %j
    l0uop.end %i
  }
  // expected-remark @below {{kernel @vec: 192 flop, 512 B touched, 512 B accessed, 0.38 flop/B}}
  l0uop.kernel @vec inputs(%x = @x : !l0uop.buf<64xf32>) outputs(%y = @y : !l0uop.buf<64xf32>)
      grid(1, 1, 1) block(16, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 16 over local_x : index
    %four = l0uop.const 4 : index
    %base = l0uop.mul %i, %four : index
    %px = l0uop.index %x[%base] : !l0uop.buf<64xf32>
    %v = l0uop.load %px : vector<4xf32>
    %m = l0uop.mulacc %v, %v, %v : vector<4xf32>
    %e = l0uop.exp2 %m : vector<4xf32>
    %py = l0uop.index %y[%base] : !l0uop.buf<64xf32>
    l0uop.store %py, %e : vector<4xf32>
    l0uop.end %i
  }
  l0uop.stream @s [@mm, @vec]
}
