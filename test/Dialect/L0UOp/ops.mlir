// RUN: synpl-opt %s | synpl-opt | FileCheck %s
// RUN: synpl-opt %s -mlir-print-op-generic | synpl-opt | FileCheck %s

// CHECK-LABEL: l0uop.plan @all_forms pipeline_depth 2
l0uop.plan @all_forms pipeline_depth 2 {
  // CHECK: l0uop.pool @host persistent on host capacity 1GiB
  l0uop.pool @host persistent on host capacity 1GiB
  // CHECK: l0uop.pool @staging freelist on host capacity 2MiB align 4096
  l0uop.pool @staging freelist on host capacity 2MiB align 4096
  // CHECK: l0uop.pool @params persistent on device capacity 24GB
  l0uop.pool @params persistent on device capacity 24GB
  // CHECK: l0uop.pool @arena arena on device capacity 1MB{{$}}
  l0uop.pool @arena arena on device capacity 1000000 align 256

  // CHECK: l0uop.slot @images pool @host offset 0 size 47040000 lifetime(0, 9) : !l0uop.buf<60000x784xi8>
  l0uop.slot @images pool @host offset 0 size 47040000 lifetime(0, 9) : !l0uop.buf<60000x784xi8>
  // CHECK: l0uop.slot @x_host pool @staging size 401408 lifetime(0, 1) : !l0uop.buf<128x784xf32>
  l0uop.slot @x_host pool @staging size 401408 lifetime(0, 1) : !l0uop.buf<128x784xf32>
  l0uop.slot @x pool @arena offset 0 size 401408 lifetime(1, 2) : !l0uop.buf<128x784xf32>
  l0uop.slot @w pool @params offset 0 size 802816 lifetime(0, 9) : !l0uop.buf<784x256xf32>
  l0uop.slot @b pool @params offset 802816 size 1024 lifetime(0, 9) : !l0uop.buf<256xf32>
  l0uop.slot @h pool @arena offset 401408 size 131072 lifetime(2, 3) : !l0uop.buf<128x256xf32>
  l0uop.slot @t pool @arena offset 532480 size 4096 lifetime(2, 3) : !l0uop.buf<16x16xf32>

  // CHECK-LABEL: l0uop.kernel @all_uops
  // CHECK-SAME: inputs(%{{.*}} = @x : !l0uop.buf<128x784xf32>, %{{.*}} = @w : !l0uop.buf<784x256xf32>, %{{.*}} = @b : !l0uop.buf<256xf32>)
  // CHECK-SAME: outputs(%{{.*}} = @h : !l0uop.buf<128x256xf32>, %{{.*}} = @t : !l0uop.buf<16x16xf32>)
  // CHECK-SAME: grid(128, 1, 1) block(256, 1, 1) shared_mem 0 {
  l0uop.kernel @all_uops inputs(%x = @x : !l0uop.buf<128x784xf32>, %w = @w : !l0uop.buf<784x256xf32>, %b = @b : !l0uop.buf<256xf32>)
      outputs(%h = @h : !l0uop.buf<128x256xf32>, %t = @t : !l0uop.buf<16x16xf32>)
      grid(128, 1, 1) block(256, 1, 1) shared_mem 0 {
    // CHECK: l0uop.range 0 to 128 over group_x : index
    %i = l0uop.range 0 to 128 over group_x : index
    // CHECK: l0uop.range 0 to 256 over local_x : index
    %j = l0uop.range 0 to 256 over local_x : index
    // CHECK: l0uop.const 0.000000e+00 : f32
    %zero = l0uop.const 0.0 : f32
    // CHECK: l0uop.range 0 to 784 : index
    %k = l0uop.range 0 to 784 : index
    // CHECK: l0uop.index %{{.*}}[%{{.*}}, %{{.*}}] : !l0uop.buf<128x784xf32>
    %px = l0uop.index %x[%i, %k] : !l0uop.buf<128x784xf32>
    // CHECK: l0uop.load %{{.*}} : f32
    %a = l0uop.load %px : f32
    %pw = l0uop.index %w[%k, %j] : !l0uop.buf<784x256xf32>
    %bw = l0uop.load %pw : f32
    // CHECK: l0uop.mul %{{.*}}, %{{.*}} : f32
    %p = l0uop.mul %a, %bw : f32
    // CHECK: l0uop.end %{{.*}}
    l0uop.end %k
    %pb = l0uop.index %b[%j] : !l0uop.buf<256xf32>
    %bias = l0uop.load %pb : f32
    // CHECK: l0uop.reduce add %{{.*}} over %{{.*}} init %{{.*}} : f32
    %dot = l0uop.reduce add %p over %k init %bias : f32
    // CHECK: l0uop.reduce max
    %k2 = l0uop.range 0 to 4 : index
    %k2f = l0uop.cast %k2 : index to f32
    l0uop.end %k2
    %mx = l0uop.reduce max %k2f over %k2 init %zero : f32
    // CHECK: l0uop.add %{{.*}}, %{{.*}} : f32
    %s = l0uop.add %dot, %mx : f32
    // CHECK: l0uop.mulacc %{{.*}}, %{{.*}}, %{{.*}} : f32
    %m = l0uop.mulacc %s, %s, %bias : f32
    // CHECK: l0uop.neg %{{.*}} : f32
    %n = l0uop.neg %m : f32
    // CHECK: l0uop.reciprocal
    %r = l0uop.reciprocal %n : f32
    // CHECK: l0uop.max
    %mm = l0uop.max %r, %zero : f32
    // CHECK: l0uop.exp2
    %e = l0uop.exp2 %mm : f32
    // CHECK: l0uop.log2
    %l = l0uop.log2 %e : f32
    // CHECK: l0uop.sin
    %sn = l0uop.sin %l : f32
    // CHECK: l0uop.sqrt
    %sq = l0uop.sqrt %sn : f32
    // CHECK: l0uop.cmplt %{{.*}}, %{{.*}} : f32
    %c = l0uop.cmplt %sq, %zero : f32
    // CHECK: l0uop.cmpne %{{.*}}, %{{.*}} : index
    %jne = l0uop.cmpne %j, %i : index
    // CHECK: l0uop.where %{{.*}}, %{{.*}}, %{{.*}} : f32
    %w2 = l0uop.where %c, %zero, %sq : f32
    %c4 = l0uop.const 4 : index
    // CHECK: l0uop.mod %{{.*}}, %{{.*}} : index
    %jm = l0uop.mod %j, %c4 : index
    // CHECK: l0uop.div %{{.*}}, %{{.*}} : index
    %jd = l0uop.div %j, %c4 : index
    // CHECK: l0uop.bitcast %{{.*}} : f32 to i32
    %bits = l0uop.bitcast %w2 : f32 to i32
    // CHECK: l0uop.cast %{{.*}} : i32 to f32
    %back = l0uop.cast %bits : i32 to f32
    // CHECK: l0uop.vectorize %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : f32
    %v = l0uop.vectorize %back, %back, %w2, %w2 : f32
    // CHECK: l0uop.gep %{{.*}}[2] : vector<4xf32> -> f32
    %g = l0uop.gep %v[2] : vector<4xf32> -> f32
    // CHECK: l0uop.if %{{.*}}
    l0uop.if %jne
    %ph = l0uop.index %h[%i, %j] : !l0uop.buf<128x256xf32>
    // CHECK: l0uop.store %{{.*}}, %{{.*}} : f32
    l0uop.store %ph, %g : f32
    // CHECK: l0uop.endif
    l0uop.endif
    // CHECK: l0uop.barrier
    l0uop.barrier
    %ta = l0uop.custom "load_tile_f16"(%x) : (!l0uop.buf<128x784xf32>) -> vector<16x16xf16>
    %tc = l0uop.custom "zero_tile"() : () -> vector<16x16xf32>
    // CHECK: l0uop.wmma %{{.*}}, %{{.*}}, %{{.*}} : vector<16x16xf16>, vector<16x16xf16>, vector<16x16xf32> -> vector<16x16xf32>
    %d = l0uop.wmma %ta, %ta, %tc : vector<16x16xf16>, vector<16x16xf16>, vector<16x16xf32> -> vector<16x16xf32>
    // CHECK: l0uop.custom "store_tile"(%{{.*}}, %{{.*}}) : (vector<16x16xf32>, !l0uop.buf<16x16xf32>) -> ()
    l0uop.custom "store_tile"(%d, %t) : (vector<16x16xf32>, !l0uop.buf<16x16xf32>) -> ()
    %pv = l0uop.index %h[%i, %jm] : !l0uop.buf<128x256xf32>
    // CHECK: l0uop.load %{{.*}} : vector<4xf32>
    %lv = l0uop.load %pv : vector<4xf32>
    l0uop.store %pv, %lv : vector<4xf32>
    l0uop.end %j
    l0uop.end %i
  }

  l0uop.slot @v64 pool @arena offset 536576 size 256 lifetime(0, 1) : !l0uop.buf<64xf32>
  l0uop.slot @r64 pool @arena offset 536832 size 256 lifetime(0, 1) : !l0uop.buf<64xf32>
  // Block-shared scratch: each block reverses its 16 elements through a
  // shared tile, with a barrier between the writes and the reads.
  // CHECK-LABEL: l0uop.kernel @reverse_blocks
  // CHECK-SAME: grid(4, 1, 1) block(16, 1, 1) shared_mem 64 shared(%{{.*}} : !l0uop.buf<16xf32>) {
  l0uop.kernel @reverse_blocks inputs(%a = @v64 : !l0uop.buf<64xf32>) outputs(%o = @r64 : !l0uop.buf<64xf32>)
      grid(4, 1, 1) block(16, 1, 1) shared_mem 64 shared(%tile : !l0uop.buf<16xf32>) {
    %g = l0uop.range 0 to 4 over group_x : index
    %t = l0uop.range 0 to 16 over local_x : index
    %c16 = l0uop.const 16 : index
    %base = l0uop.mul %g, %c16 : index
    %idx = l0uop.add %base, %t : index
    %pa = l0uop.index %a[%idx] : !l0uop.buf<64xf32>
    %v = l0uop.load %pa : f32
    %ps = l0uop.index %tile[%t] : !l0uop.buf<16xf32>
    l0uop.store %ps, %v : f32
    l0uop.barrier
    %c15 = l0uop.const 15 : index
    %nt = l0uop.neg %t : index
    %rev = l0uop.add %c15, %nt : index
    %pr = l0uop.index %tile[%rev] : !l0uop.buf<16xf32>
    %w = l0uop.load %pr : f32
    %po = l0uop.index %o[%idx] : !l0uop.buf<64xf32>
    l0uop.store %po, %w : f32
    l0uop.end %t
    l0uop.end %g
  }

  // CHECK: l0uop.ingest @read0 into [@x_host] from ["/data/train-images-idx3-ubyte.gz"] format "idx" batch 128 shuffle drop_last seed 3 classes [0]
  l0uop.ingest @read0 into [@x_host] from ["/data/train-images-idx3-ubyte.gz"] format "idx" batch 128 shuffle drop_last seed 3 classes [0]
  // CHECK: l0uop.ingest @read1 into [@x_host] from ["x.idx"] format "idx" batch 128 seed 0{{$}}
  l0uop.ingest @read1 into [@x_host] from ["x.idx"] format "idx" batch 128 seed 0
  // CHECK: l0uop.transfer @tx_x @x_host -> @x h2d bytes 401408
  l0uop.transfer @tx_x @x_host -> @x h2d bytes 401408
  // CHECK: l0uop.report "loss" @b
  l0uop.report "loss" @b
  // CHECK: l0uop.stream @s0 [@tx_x, @all_uops]
  l0uop.stream @s0 [@tx_x, @all_uops]
  l0uop.stream @s1 [@tx_x, @all_uops]
  // CHECK: l0uop.event @e0
  l0uop.event @e0
  // CHECK: l0uop.record @e0 after @all_uops on @s0
  l0uop.record @e0 after @all_uops on @s0
  // CHECK: l0uop.wait @e0 before @tx_x on @s1
  l0uop.wait @e0 before @tx_x on @s1

  // CHECK: l0uop.init kaiming @w fan_in 784 seed 7
  l0uop.init kaiming @w fan_in 784 seed 7
  // CHECK: l0uop.init zeros @b
  l0uop.init zeros @b
  // CHECK: l0uop.init constant @t value 1.000000e+00
  l0uop.init constant @t value 1.0
  // CHECK: l0uop.init decode_idx @images path "train-images-idx3-ubyte"
  l0uop.init decode_idx @images path "train-images-idx3-ubyte"
}
