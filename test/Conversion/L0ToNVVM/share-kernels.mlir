// RUN: synpl-opt %s --synpl-convert-l0uop-to-nvvm | FileCheck %s
// RUN: synpl-opt %s --synpl-convert-l0uop-to-nvvm=share-kernels=false | FileCheck %s --check-prefix=OWN

// Device kernels with the same code share one entry: @b is @a on other
// slots; @c differs in a constant.

// CHECK: l0uop.kernel @a {{.*}}device_entry = "p_a"
// CHECK: l0uop.kernel @b {{.*}}device_entry = "p_a"
// CHECK: l0uop.kernel @c {{.*}}device_entry = "p_c"
// CHECK: gpu.module @p_cuda
// CHECK-DAG: llvm.func @p_a(
// CHECK-DAG: llvm.func @p_c(
// CHECK-NOT: llvm.func @p_b(

// OWN: l0uop.kernel @b {{.*}}device_entry = "p_b"
// OWN: llvm.func @p_b(

l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev persistent on device capacity 1MiB
  l0uop.slot @x pool @dev offset 0 size 256 lifetime(0, 1) : !l0uop.buf<64xf32>
  l0uop.slot @y pool @dev offset 256 size 256 lifetime(0, 1) : !l0uop.buf<64xf32>
  l0uop.slot @u pool @dev offset 512 size 256 lifetime(0, 1) : !l0uop.buf<64xf32>
  l0uop.slot @v pool @dev offset 768 size 256 lifetime(0, 1) : !l0uop.buf<64xf32>
  l0uop.kernel @a inputs(%x = @x : !l0uop.buf<64xf32>) outputs(%y = @y : !l0uop.buf<64xf32>) grid(1, 1, 1) block(64, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 64 over global_x : index
    %p = l0uop.index %x[%i] : !l0uop.buf<64xf32>
    %v = l0uop.load %p : f32
    %two = l0uop.const 2.0 : f32
    %r = l0uop.mul %v, %two : f32
    %q = l0uop.index %y[%i] : !l0uop.buf<64xf32>
    l0uop.store %q, %r : f32
    l0uop.end %i
  }
  l0uop.kernel @b inputs(%x = @u : !l0uop.buf<64xf32>) outputs(%y = @v : !l0uop.buf<64xf32>) grid(1, 1, 1) block(64, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 64 over global_x : index
    %p = l0uop.index %x[%i] : !l0uop.buf<64xf32>
    %v = l0uop.load %p : f32
    %two = l0uop.const 2.0 : f32
    %r = l0uop.mul %v, %two : f32
    %q = l0uop.index %y[%i] : !l0uop.buf<64xf32>
    l0uop.store %q, %r : f32
    l0uop.end %i
  }
  l0uop.kernel @c inputs(%x = @u : !l0uop.buf<64xf32>) outputs(%y = @v : !l0uop.buf<64xf32>) grid(1, 1, 1) block(64, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 64 over global_x : index
    %p = l0uop.index %x[%i] : !l0uop.buf<64xf32>
    %v = l0uop.load %p : f32
    %two = l0uop.const 3.0 : f32
    %r = l0uop.mul %v, %two : f32
    %q = l0uop.index %y[%i] : !l0uop.buf<64xf32>
    l0uop.store %q, %r : f32
    l0uop.end %i
  }
  l0uop.stream @s0 [@a, @b, @c]
}
