// The matmul kernels of the Fashion-MNIST training step as L1 -> L0 emits
// them (synplc examples/fashion_mnist/fashion_mnist.syn --system
// test/Tools/synplc/Inputs/single_gpu.syn --emit=l0), with their slots:
// the inputs of tiled-matmul-ptxas.test and of TiledMatmulTest.cpp.
module {
  l0uop.plan @single_gpu pipeline_depth 2 epochs 3 evaluate "t10k" checkpoint_every 0 {
    l0uop.pool @gpu_0.persistent persistent on device capacity 3245312
    l0uop.pool @ram_0.freelist freelist on host capacity 804352
    l0uop.pool @gpu_0.io.arena arena on device capacity 1449KiB
    l0uop.pool @forward_backward.arena arena on device capacity 2939136
    l0uop.pool @model_state.GradUpdate.arena arena on device capacity 512
    l0uop.slot @model_state.fc1_weight pool @gpu_0.persistent offset 0 size 802816 lifetime(0, 61) : !l0uop.buf<784x256xf32>
    l0uop.slot @model_state.fc1_bias pool @gpu_0.persistent offset 802816 size 1024 lifetime(0, 61) : !l0uop.buf<256xf32>
    l0uop.slot @model_state.norm1_gain pool @gpu_0.persistent offset 803840 size 1024 lifetime(0, 61) : !l0uop.buf<256xf32>
    l0uop.slot @model_state.fc2_weight pool @gpu_0.persistent offset 805888 size 262144 lifetime(0, 61) : !l0uop.buf<256x256xf32>
    l0uop.slot @model_state.fc2_bias pool @gpu_0.persistent offset 1068032 size 1024 lifetime(0, 61) : !l0uop.buf<256xf32>
    l0uop.slot @model_state.norm2_gain pool @gpu_0.persistent offset 1069056 size 1024 lifetime(0, 61) : !l0uop.buf<256xf32>
    l0uop.slot @model_state.fc3_weight pool @gpu_0.persistent offset 1071104 size 10240 lifetime(0, 61) : !l0uop.buf<256x10xf32>
    l0uop.slot @model_state.fc3_bias pool @gpu_0.persistent offset 1081344 size 40 lifetime(0, 61) : !l0uop.buf<10xf32>
    l0uop.slot @transfer_to_gpu_0.tx0 pool @gpu_0.io.arena offset 802816 size 401408 lifetime(0, 52) : !l0uop.buf<100352xf32>
    l0uop.slot @forward_backward.out1 pool @gpu_0.io.arena offset 0 size 802816 lifetime(52, 57) : !l0uop.buf<784x256xf32>
    l0uop.slot @forward_backward.out5 pool @gpu_0.io.arena offset 1204224 size 262144 lifetime(44, 59) : !l0uop.buf<256x256xf32>
    l0uop.slot @forward_backward.out9 pool @gpu_0.io.arena offset 1466368 size 10240 lifetime(36, 60) : !l0uop.buf<256x10xf32>
    l0uop.slot @forward_backward.t0_add pool @forward_backward.arena offset 0 size 131072 lifetime(2, 4) : !l0uop.buf<128x256xf32>
    l0uop.slot @forward_backward.t5_mul pool @forward_backward.arena offset 0 size 131072 lifetime(6, 51) : !l0uop.buf<128x256xf32>
    l0uop.slot @forward_backward.t6_mul pool @forward_backward.arena offset 393216 size 131072 lifetime(6, 44) : !l0uop.buf<128x256xf32>
    l0uop.slot @forward_backward.t7_add pool @forward_backward.arena offset 262144 size 131072 lifetime(6, 46) : !l0uop.buf<128x256xf32>
    l0uop.slot @forward_backward.t8_add pool @forward_backward.arena offset 131072 size 131072 lifetime(7, 9) : !l0uop.buf<128x256xf32>
    l0uop.slot @forward_backward.t13_mul pool @forward_backward.arena offset 131072 size 131072 lifetime(11, 43) : !l0uop.buf<128x256xf32>
    l0uop.slot @forward_backward.t14_mul pool @forward_backward.arena offset 786432 size 131072 lifetime(11, 36) : !l0uop.buf<128x256xf32>
    l0uop.slot @forward_backward.t15_add pool @forward_backward.arena offset 655360 size 131072 lifetime(11, 38) : !l0uop.buf<128x256xf32>
    l0uop.slot @forward_backward.t16_add pool @forward_backward.arena offset 524288 size 5120 lifetime(12, 16) : !l0uop.buf<128x10xf32>
    l0uop.slot @forward_backward.t41_scale pool @forward_backward.arena offset 1179648 size 5120 lifetime(35, 38) : !l0uop.buf<128x10xf32>
    l0uop.slot @forward_backward.t42_mul pool @forward_backward.arena offset 917504 size 131072 lifetime(38, 40) : !l0uop.buf<128x256xf32>
    l0uop.slot @forward_backward.t43_mul pool @forward_backward.arena offset 1048576 size 131072 lifetime(38, 39) : !l0uop.buf<128x256xf32>
    l0uop.slot @forward_backward.t44_mul pool @forward_backward.arena offset 524288 size 131072 lifetime(38, 43) : !l0uop.buf<128x256xf32>
    l0uop.slot @forward_backward.t45_mul pool @forward_backward.arena offset 786432 size 131072 lifetime(38, 42) : !l0uop.buf<128x256xf32>
    l0uop.slot @forward_backward.t48_mul pool @forward_backward.arena offset 655360 size 131072 lifetime(43, 46) : !l0uop.buf<128x256xf32>
    l0uop.slot @forward_backward.t49_mul pool @forward_backward.arena offset 524288 size 131072 lifetime(46, 48) : !l0uop.buf<128x256xf32>
    l0uop.slot @forward_backward.t50_mul pool @forward_backward.arena offset 786432 size 131072 lifetime(46, 47) : !l0uop.buf<128x256xf32>
    l0uop.slot @forward_backward.t51_mul pool @forward_backward.arena offset 131072 size 131072 lifetime(46, 51) : !l0uop.buf<128x256xf32>
    l0uop.slot @forward_backward.t52_mul pool @forward_backward.arena offset 393216 size 131072 lifetime(46, 50) : !l0uop.buf<128x256xf32>
    l0uop.slot @forward_backward.t55_mul pool @forward_backward.arena offset 262144 size 131072 lifetime(51, 53) : !l0uop.buf<128x256xf32>
    l0uop.kernel @forward_backward.k0_matmul inputs(%arg0 = @transfer_to_gpu_0.tx0 : !l0uop.buf<100352xf32>, %arg1 = @model_state.fc1_weight : !l0uop.buf<784x256xf32>, %arg2 = @model_state.fc1_bias : !l0uop.buf<256xf32>) outputs(%arg3 = @forward_backward.t0_add : !l0uop.buf<128x256xf32>) grid(128, 1, 1) block(256, 1, 1) shared_mem 0 {
      %0 = l0uop.range 0 to 128 over group_x : index
      %1 = l0uop.range 0 to 256 over local_x : index
      %2 = l0uop.const 0.000000e+00 : f32
      %3 = l0uop.range 0 to 784 : index
      %4 = l0uop.const 784 : index
      %5 = l0uop.mul %0, %4 : index
      %6 = l0uop.add %5, %3 : index
      %7 = l0uop.index %arg0[%6] : !l0uop.buf<100352xf32>
      %8 = l0uop.load %7 : f32
      %9 = l0uop.index %arg1[%3, %1] : !l0uop.buf<784x256xf32>
      %10 = l0uop.load %9 : f32
      %11 = l0uop.mul %8, %10 : f32
      l0uop.end %3
      %12 = l0uop.reduce add %11 over %3 init %2 : f32
      %13 = l0uop.index %arg2[%1] : !l0uop.buf<256xf32>
      %14 = l0uop.load %13 : f32
      %15 = l0uop.add %12, %14 : f32
      %16 = l0uop.index %arg3[%0, %1] : !l0uop.buf<128x256xf32>
      l0uop.store %16, %15 : f32
      l0uop.end %1
      l0uop.end %0
    }
    l0uop.kernel @forward_backward.k5_matmul inputs(%arg0 = @forward_backward.t6_mul : !l0uop.buf<128x256xf32>, %arg1 = @model_state.fc2_weight : !l0uop.buf<256x256xf32>, %arg2 = @model_state.fc2_bias : !l0uop.buf<256xf32>) outputs(%arg3 = @forward_backward.t8_add : !l0uop.buf<128x256xf32>) grid(128, 1, 1) block(256, 1, 1) shared_mem 0 {
      %0 = l0uop.range 0 to 128 over group_x : index
      %1 = l0uop.range 0 to 256 over local_x : index
      %2 = l0uop.const 0.000000e+00 : f32
      %3 = l0uop.range 0 to 256 : index
      %4 = l0uop.index %arg0[%0, %3] : !l0uop.buf<128x256xf32>
      %5 = l0uop.load %4 : f32
      %6 = l0uop.index %arg1[%3, %1] : !l0uop.buf<256x256xf32>
      %7 = l0uop.load %6 : f32
      %8 = l0uop.mul %5, %7 : f32
      l0uop.end %3
      %9 = l0uop.reduce add %8 over %3 init %2 : f32
      %10 = l0uop.index %arg2[%1] : !l0uop.buf<256xf32>
      %11 = l0uop.load %10 : f32
      %12 = l0uop.add %9, %11 : f32
      %13 = l0uop.index %arg3[%0, %1] : !l0uop.buf<128x256xf32>
      l0uop.store %13, %12 : f32
      l0uop.end %1
      l0uop.end %0
    }
    l0uop.kernel @forward_backward.k10_matmul inputs(%arg0 = @forward_backward.t14_mul : !l0uop.buf<128x256xf32>, %arg1 = @model_state.fc3_weight : !l0uop.buf<256x10xf32>, %arg2 = @model_state.fc3_bias : !l0uop.buf<10xf32>) outputs(%arg3 = @forward_backward.t16_add : !l0uop.buf<128x10xf32>) grid(128, 1, 1) block(10, 1, 1) shared_mem 0 {
      %0 = l0uop.range 0 to 128 over group_x : index
      %1 = l0uop.range 0 to 10 over local_x : index
      %2 = l0uop.const 0.000000e+00 : f32
      %3 = l0uop.range 0 to 256 : index
      %4 = l0uop.index %arg0[%0, %3] : !l0uop.buf<128x256xf32>
      %5 = l0uop.load %4 : f32
      %6 = l0uop.index %arg1[%3, %1] : !l0uop.buf<256x10xf32>
      %7 = l0uop.load %6 : f32
      %8 = l0uop.mul %5, %7 : f32
      l0uop.end %3
      %9 = l0uop.reduce add %8 over %3 init %2 : f32
      %10 = l0uop.index %arg2[%1] : !l0uop.buf<10xf32>
      %11 = l0uop.load %10 : f32
      %12 = l0uop.add %9, %11 : f32
      %13 = l0uop.index %arg3[%0, %1] : !l0uop.buf<128x10xf32>
      l0uop.store %13, %12 : f32
      l0uop.end %1
      l0uop.end %0
    }
    l0uop.kernel @forward_backward.k34_matmul inputs(%arg0 = @forward_backward.t14_mul : !l0uop.buf<128x256xf32>, %arg1 = @forward_backward.t41_scale : !l0uop.buf<128x10xf32>, %arg2 = @model_state.fc3_weight : !l0uop.buf<256x10xf32>) outputs(%arg3 = @forward_backward.out9 : !l0uop.buf<256x10xf32>) grid(256, 1, 1) block(10, 1, 1) shared_mem 0 {
      %0 = l0uop.range 0 to 256 over group_x : index
      %1 = l0uop.range 0 to 10 over local_x : index
      %2 = l0uop.const 0.000000e+00 : f32
      %3 = l0uop.range 0 to 128 : index
      %4 = l0uop.index %arg0[%3, %0] : !l0uop.buf<128x256xf32>
      %5 = l0uop.load %4 : f32
      %6 = l0uop.index %arg1[%3, %1] : !l0uop.buf<128x10xf32>
      %7 = l0uop.load %6 : f32
      %8 = l0uop.mul %5, %7 : f32
      l0uop.end %3
      %9 = l0uop.reduce add %8 over %3 init %2 : f32
      %10 = l0uop.index %arg2[%0, %1] : !l0uop.buf<256x10xf32>
      %11 = l0uop.load %10 : f32
      %12 = l0uop.const 0.000000e+00 : f32
      %13 = l0uop.const 1.000000e+00 : f32
      %14 = l0uop.const -1.000000e+00 : f32
      %15 = l0uop.cmplt %12, %11 : f32
      %16 = l0uop.cmplt %11, %12 : f32
      %17 = l0uop.where %16, %14, %12 : f32
      %18 = l0uop.where %15, %13, %17 : f32
      %19 = l0uop.const 9.99999974E-5 : f32
      %20 = l0uop.mul %18, %19 : f32
      %21 = l0uop.add %20, %9 : f32
      %22 = l0uop.index %arg3[%0, %1] : !l0uop.buf<256x10xf32>
      l0uop.store %22, %21 : f32
      l0uop.end %1
      l0uop.end %0
    }
    l0uop.kernel @forward_backward.k36_matmul inputs(%arg0 = @forward_backward.t41_scale : !l0uop.buf<128x10xf32>, %arg1 = @model_state.fc3_weight : !l0uop.buf<256x10xf32>, %arg2 = @forward_backward.t15_add : !l0uop.buf<128x256xf32>, %arg3 = @forward_backward.t13_mul : !l0uop.buf<128x256xf32>, %arg4 = @model_state.norm2_gain : !l0uop.buf<256xf32>) outputs(%arg5 = @forward_backward.t42_mul : !l0uop.buf<128x256xf32>, %arg6 = @forward_backward.t43_mul : !l0uop.buf<128x256xf32>, %arg7 = @forward_backward.t44_mul : !l0uop.buf<128x256xf32>, %arg8 = @forward_backward.t45_mul : !l0uop.buf<128x256xf32>) grid(128, 1, 1) block(256, 1, 1) shared_mem 0 {
      %0 = l0uop.range 0 to 128 over group_x : index
      %1 = l0uop.range 0 to 256 over local_x : index
      %2 = l0uop.const 0.000000e+00 : f32
      %3 = l0uop.range 0 to 10 : index
      %4 = l0uop.index %arg0[%0, %3] : !l0uop.buf<128x10xf32>
      %5 = l0uop.load %4 : f32
      %6 = l0uop.index %arg1[%1, %3] : !l0uop.buf<256x10xf32>
      %7 = l0uop.load %6 : f32
      %8 = l0uop.mul %5, %7 : f32
      l0uop.end %3
      %9 = l0uop.reduce add %8 over %3 init %2 : f32
      %10 = l0uop.index %arg2[%0, %1] : !l0uop.buf<128x256xf32>
      %11 = l0uop.load %10 : f32
      %12 = l0uop.mul %9, %11 : f32
      %13 = l0uop.index %arg3[%0, %1] : !l0uop.buf<128x256xf32>
      %14 = l0uop.load %13 : f32
      %15 = l0uop.mul %12, %14 : f32
      %16 = l0uop.index %arg4[%1] : !l0uop.buf<256xf32>
      %17 = l0uop.load %16 : f32
      %18 = l0uop.mul %12, %17 : f32
      %19 = l0uop.mul %18, %14 : f32
      %20 = l0uop.index %arg5[%0, %1] : !l0uop.buf<128x256xf32>
      l0uop.store %20, %12 : f32
      %21 = l0uop.index %arg6[%0, %1] : !l0uop.buf<128x256xf32>
      l0uop.store %21, %15 : f32
      %22 = l0uop.index %arg7[%0, %1] : !l0uop.buf<128x256xf32>
      l0uop.store %22, %18 : f32
      %23 = l0uop.index %arg8[%0, %1] : !l0uop.buf<128x256xf32>
      l0uop.store %23, %19 : f32
      l0uop.end %1
      l0uop.end %0
    }
    l0uop.kernel @forward_backward.k42_matmul inputs(%arg0 = @forward_backward.t6_mul : !l0uop.buf<128x256xf32>, %arg1 = @forward_backward.t48_mul : !l0uop.buf<128x256xf32>, %arg2 = @model_state.fc2_weight : !l0uop.buf<256x256xf32>) outputs(%arg3 = @forward_backward.out5 : !l0uop.buf<256x256xf32>) grid(256, 1, 1) block(256, 1, 1) shared_mem 0 {
      %0 = l0uop.range 0 to 256 over group_x : index
      %1 = l0uop.range 0 to 256 over local_x : index
      %2 = l0uop.const 0.000000e+00 : f32
      %3 = l0uop.range 0 to 128 : index
      %4 = l0uop.index %arg0[%3, %0] : !l0uop.buf<128x256xf32>
      %5 = l0uop.load %4 : f32
      %6 = l0uop.index %arg1[%3, %1] : !l0uop.buf<128x256xf32>
      %7 = l0uop.load %6 : f32
      %8 = l0uop.mul %5, %7 : f32
      l0uop.end %3
      %9 = l0uop.reduce add %8 over %3 init %2 : f32
      %10 = l0uop.index %arg2[%0, %1] : !l0uop.buf<256x256xf32>
      %11 = l0uop.load %10 : f32
      %12 = l0uop.const 0.000000e+00 : f32
      %13 = l0uop.const 1.000000e+00 : f32
      %14 = l0uop.const -1.000000e+00 : f32
      %15 = l0uop.cmplt %12, %11 : f32
      %16 = l0uop.cmplt %11, %12 : f32
      %17 = l0uop.where %16, %14, %12 : f32
      %18 = l0uop.where %15, %13, %17 : f32
      %19 = l0uop.const 9.99999974E-5 : f32
      %20 = l0uop.mul %18, %19 : f32
      %21 = l0uop.add %20, %9 : f32
      %22 = l0uop.index %arg3[%0, %1] : !l0uop.buf<256x256xf32>
      l0uop.store %22, %21 : f32
      l0uop.end %1
      l0uop.end %0
    }
    l0uop.kernel @forward_backward.k44_matmul inputs(%arg0 = @forward_backward.t48_mul : !l0uop.buf<128x256xf32>, %arg1 = @model_state.fc2_weight : !l0uop.buf<256x256xf32>, %arg2 = @forward_backward.t7_add : !l0uop.buf<128x256xf32>, %arg3 = @forward_backward.t5_mul : !l0uop.buf<128x256xf32>, %arg4 = @model_state.norm1_gain : !l0uop.buf<256xf32>) outputs(%arg5 = @forward_backward.t49_mul : !l0uop.buf<128x256xf32>, %arg6 = @forward_backward.t50_mul : !l0uop.buf<128x256xf32>, %arg7 = @forward_backward.t51_mul : !l0uop.buf<128x256xf32>, %arg8 = @forward_backward.t52_mul : !l0uop.buf<128x256xf32>) grid(128, 1, 1) block(256, 1, 1) shared_mem 0 {
      %0 = l0uop.range 0 to 128 over group_x : index
      %1 = l0uop.range 0 to 256 over local_x : index
      %2 = l0uop.const 0.000000e+00 : f32
      %3 = l0uop.range 0 to 256 : index
      %4 = l0uop.index %arg0[%0, %3] : !l0uop.buf<128x256xf32>
      %5 = l0uop.load %4 : f32
      %6 = l0uop.index %arg1[%1, %3] : !l0uop.buf<256x256xf32>
      %7 = l0uop.load %6 : f32
      %8 = l0uop.mul %5, %7 : f32
      l0uop.end %3
      %9 = l0uop.reduce add %8 over %3 init %2 : f32
      %10 = l0uop.index %arg2[%0, %1] : !l0uop.buf<128x256xf32>
      %11 = l0uop.load %10 : f32
      %12 = l0uop.mul %9, %11 : f32
      %13 = l0uop.index %arg3[%0, %1] : !l0uop.buf<128x256xf32>
      %14 = l0uop.load %13 : f32
      %15 = l0uop.mul %12, %14 : f32
      %16 = l0uop.index %arg4[%1] : !l0uop.buf<256xf32>
      %17 = l0uop.load %16 : f32
      %18 = l0uop.mul %12, %17 : f32
      %19 = l0uop.mul %18, %14 : f32
      %20 = l0uop.index %arg5[%0, %1] : !l0uop.buf<128x256xf32>
      l0uop.store %20, %12 : f32
      %21 = l0uop.index %arg6[%0, %1] : !l0uop.buf<128x256xf32>
      l0uop.store %21, %15 : f32
      %22 = l0uop.index %arg7[%0, %1] : !l0uop.buf<128x256xf32>
      l0uop.store %22, %18 : f32
      %23 = l0uop.index %arg8[%0, %1] : !l0uop.buf<128x256xf32>
      l0uop.store %23, %19 : f32
      l0uop.end %1
      l0uop.end %0
    }
    l0uop.kernel @forward_backward.k50_matmul inputs(%arg0 = @transfer_to_gpu_0.tx0 : !l0uop.buf<100352xf32>, %arg1 = @forward_backward.t55_mul : !l0uop.buf<128x256xf32>, %arg2 = @model_state.fc1_weight : !l0uop.buf<784x256xf32>) outputs(%arg3 = @forward_backward.out1 : !l0uop.buf<784x256xf32>) grid(784, 1, 1) block(256, 1, 1) shared_mem 0 {
      %0 = l0uop.range 0 to 784 over group_x : index
      %1 = l0uop.range 0 to 256 over local_x : index
      %2 = l0uop.const 0.000000e+00 : f32
      %3 = l0uop.range 0 to 128 : index
      %4 = l0uop.const 784 : index
      %5 = l0uop.mul %3, %4 : index
      %6 = l0uop.add %5, %0 : index
      %7 = l0uop.index %arg0[%6] : !l0uop.buf<100352xf32>
      %8 = l0uop.load %7 : f32
      %9 = l0uop.index %arg1[%3, %1] : !l0uop.buf<128x256xf32>
      %10 = l0uop.load %9 : f32
      %11 = l0uop.mul %8, %10 : f32
      l0uop.end %3
      %12 = l0uop.reduce add %11 over %3 init %2 : f32
      %13 = l0uop.index %arg2[%0, %1] : !l0uop.buf<784x256xf32>
      %14 = l0uop.load %13 : f32
      %15 = l0uop.const 0.000000e+00 : f32
      %16 = l0uop.const 1.000000e+00 : f32
      %17 = l0uop.const -1.000000e+00 : f32
      %18 = l0uop.cmplt %15, %14 : f32
      %19 = l0uop.cmplt %14, %15 : f32
      %20 = l0uop.where %19, %17, %15 : f32
      %21 = l0uop.where %18, %16, %20 : f32
      %22 = l0uop.const 9.99999974E-5 : f32
      %23 = l0uop.mul %21, %22 : f32
      %24 = l0uop.add %23, %12 : f32
      %25 = l0uop.index %arg3[%0, %1] : !l0uop.buf<784x256xf32>
      l0uop.store %25, %24 : f32
      l0uop.end %1
      l0uop.end %0
    }
  }
}
