// The first layer of the spec's Fashion-MNIST model, as the compiler's L0
// plan has it (a product with its bias, the LayerNorm's mean, centring and
// variance, the normalisation, gain, bias and GELU), at a small size:
// batch 16, 64 inputs, 32 features. Every kernel is a generic one: the
// product has an epilogue (the bias), the others are maps and reductions.
l0uop.plan @layer pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @images pool @dev offset 0 size 4096 lifetime(0, 4) : !l0uop.buf<1024xf32>
  l0uop.slot @w pool @dev offset 4096 size 8192 lifetime(0, 4) : !l0uop.buf<64x32xf32>
  l0uop.slot @bias pool @dev offset 12288 size 128 lifetime(0, 4) : !l0uop.buf<32xf32>
  l0uop.slot @h pool @dev offset 12544 size 2048 lifetime(0, 4) : !l0uop.buf<16x32xf32>
  l0uop.slot @mean pool @dev offset 14592 size 64 lifetime(0, 4) : !l0uop.buf<16xf32>
  l0uop.slot @xc pool @dev offset 14848 size 2048 lifetime(0, 4) : !l0uop.buf<16x32xf32>
  l0uop.slot @rstd pool @dev offset 16896 size 64 lifetime(0, 4) : !l0uop.buf<16xf32>
  l0uop.slot @gain pool @dev offset 17152 size 128 lifetime(0, 4) : !l0uop.buf<32xf32>
  l0uop.slot @beta pool @dev offset 17408 size 128 lifetime(0, 4) : !l0uop.buf<32xf32>
  l0uop.slot @xn pool @dev offset 17664 size 2048 lifetime(0, 4) : !l0uop.buf<16x32xf32>
  l0uop.slot @y pool @dev offset 19712 size 2048 lifetime(0, 4) : !l0uop.buf<16x32xf32>
  l0uop.kernel @k0_matmul inputs(%a = @images : !l0uop.buf<1024xf32>, %w = @w : !l0uop.buf<64x32xf32>, %b = @bias : !l0uop.buf<32xf32>) outputs(%h = @h : !l0uop.buf<16x32xf32>) grid(16, 1, 1) block(32, 1, 1) shared_mem 0 {
    %0 = l0uop.range 0 to 16 over group_x : index
    %1 = l0uop.range 0 to 32 over local_x : index
    %2 = l0uop.const 0.000000e+00 : f32
    %3 = l0uop.range 0 to 64 : index
    %4 = l0uop.const 64 : index
    %5 = l0uop.mul %0, %4 : index
    %6 = l0uop.add %5, %3 : index
    %7 = l0uop.index %a[%6] : !l0uop.buf<1024xf32>
    %8 = l0uop.load %7 : f32
    %9 = l0uop.index %w[%3, %1] : !l0uop.buf<64x32xf32>
    %10 = l0uop.load %9 : f32
    %11 = l0uop.mul %8, %10 : f32
    l0uop.end %3
    %12 = l0uop.reduce add %11 over %3 init %2 : f32
    %13 = l0uop.index %b[%1] : !l0uop.buf<32xf32>
    %14 = l0uop.load %13 : f32
    %15 = l0uop.add %12, %14 : f32
    %16 = l0uop.index %h[%0, %1] : !l0uop.buf<16x32xf32>
    l0uop.store %16, %15 : f32
    l0uop.end %1
    l0uop.end %0
  }
  l0uop.kernel @k1_mean inputs(%h = @h : !l0uop.buf<16x32xf32>) outputs(%m = @mean : !l0uop.buf<16xf32>) grid(1, 1, 1) block(16, 1, 1) shared_mem 0 {
    %0 = l0uop.range 0 to 16 over local_x : index
    %1 = l0uop.const 0.000000e+00 : f32
    %2 = l0uop.range 0 to 32 : index
    %3 = l0uop.index %h[%0, %2] : !l0uop.buf<16x32xf32>
    %4 = l0uop.load %3 : f32
    l0uop.end %2
    %5 = l0uop.reduce add %4 over %2 init %1 : f32
    %6 = l0uop.const 0.03125 : f32
    %7 = l0uop.mul %5, %6 : f32
    %8 = l0uop.index %m[%0] : !l0uop.buf<16xf32>
    l0uop.store %8, %7 : f32
    l0uop.end %0
  }
  l0uop.kernel @k2_sub inputs(%h = @h : !l0uop.buf<16x32xf32>, %m = @mean : !l0uop.buf<16xf32>) outputs(%x = @xc : !l0uop.buf<16x32xf32>) grid(16, 1, 1) block(32, 1, 1) shared_mem 0 {
    %0 = l0uop.range 0 to 16 over group_x : index
    %1 = l0uop.range 0 to 32 over local_x : index
    %2 = l0uop.index %m[%0] : !l0uop.buf<16xf32>
    %3 = l0uop.load %2 : f32
    %4 = l0uop.neg %3 : f32
    %5 = l0uop.index %h[%0, %1] : !l0uop.buf<16x32xf32>
    %6 = l0uop.load %5 : f32
    %7 = l0uop.add %6, %4 : f32
    %8 = l0uop.index %x[%0, %1] : !l0uop.buf<16x32xf32>
    l0uop.store %8, %7 : f32
    l0uop.end %1
    l0uop.end %0
  }
  l0uop.kernel @k3_rstd inputs(%x = @xc : !l0uop.buf<16x32xf32>) outputs(%r = @rstd : !l0uop.buf<16xf32>) grid(1, 1, 1) block(16, 1, 1) shared_mem 0 {
    %0 = l0uop.range 0 to 16 over local_x : index
    %1 = l0uop.const 0.000000e+00 : f32
    %2 = l0uop.range 0 to 32 : index
    %3 = l0uop.index %x[%0, %2] : !l0uop.buf<16x32xf32>
    %4 = l0uop.load %3 : f32
    %7 = l0uop.mul %4, %4 : f32
    l0uop.end %2
    %8 = l0uop.reduce add %7 over %2 init %1 : f32
    %9 = l0uop.const 0.03125 : f32
    %10 = l0uop.mul %8, %9 : f32
    %11 = l0uop.const 9.99999974E-6 : f32
    %12 = l0uop.add %10, %11 : f32
    %13 = l0uop.sqrt %12 : f32
    %14 = l0uop.reciprocal %13 : f32
    %15 = l0uop.index %r[%0] : !l0uop.buf<16xf32>
    l0uop.store %15, %14 : f32
    l0uop.end %0
  }
  l0uop.kernel @k4_norm_gelu inputs(%x = @xc : !l0uop.buf<16x32xf32>, %r = @rstd : !l0uop.buf<16xf32>, %g = @gain : !l0uop.buf<32xf32>, %bb = @beta : !l0uop.buf<32xf32>) outputs(%n = @xn : !l0uop.buf<16x32xf32>, %y = @y : !l0uop.buf<16x32xf32>) grid(16, 1, 1) block(32, 1, 1) shared_mem 0 {
    %0 = l0uop.range 0 to 16 over group_x : index
    %1 = l0uop.range 0 to 32 over local_x : index
    %2 = l0uop.index %x[%0, %1] : !l0uop.buf<16x32xf32>
    %3 = l0uop.load %2 : f32
    %4 = l0uop.index %r[%0] : !l0uop.buf<16xf32>
    %5 = l0uop.load %4 : f32
    %6 = l0uop.mul %3, %5 : f32
    %7 = l0uop.index %g[%1] : !l0uop.buf<32xf32>
    %8 = l0uop.load %7 : f32
    %9 = l0uop.mul %6, %8 : f32
    %10 = l0uop.index %bb[%1] : !l0uop.buf<32xf32>
    %11 = l0uop.load %10 : f32
    %12 = l0uop.add %9, %11 : f32
    %13 = l0uop.mul %12, %12 : f32
    %14 = l0uop.mul %13, %12 : f32
    %15 = l0uop.const 4.471500e-02 : f32
    %16 = l0uop.mul %14, %15 : f32
    %17 = l0uop.add %12, %16 : f32
    %18 = l0uop.const 0.797884583 : f32
    %19 = l0uop.mul %17, %18 : f32
    %20 = l0uop.const -2.885390e+00 : f32
    %21 = l0uop.mul %19, %20 : f32
    %22 = l0uop.exp2 %21 : f32
    %23 = l0uop.const 1.000000e+00 : f32
    %24 = l0uop.add %22, %23 : f32
    %25 = l0uop.reciprocal %24 : f32
    %26 = l0uop.const 2.000000e+00 : f32
    %27 = l0uop.const -1.000000e+00 : f32
    %28 = l0uop.mulacc %25, %26, %27 : f32
    %30 = l0uop.add %23, %28 : f32
    %31 = l0uop.const 5.000000e-01 : f32
    %32 = l0uop.mul %12, %31 : f32
    %33 = l0uop.mul %32, %30 : f32
    %46 = l0uop.index %n[%0, %1] : !l0uop.buf<16x32xf32>
    l0uop.store %46, %6 : f32
    %47 = l0uop.index %y[%0, %1] : !l0uop.buf<16x32xf32>
    l0uop.store %47, %33 : f32
    l0uop.end %1
    l0uop.end %0
  }
  l0uop.stream @s0 [@k0_matmul, @k1_mean, @k2_sub, @k3_rstd, @k4_norm_gelu]
}
