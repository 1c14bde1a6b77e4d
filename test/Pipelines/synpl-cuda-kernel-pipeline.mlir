// RUN: synpl-opt %s --synpl-cuda-kernel-pipeline | FileCheck %s --check-prefix=BLOCK
// RUN: synpl-opt %s --synpl-cuda-kernel-pipeline=block-reduce=false | FileCheck %s
// RUN: synpl-opt %s --synpl-cuda-kernel-pipeline="chip=sm_90 tune-launch=false block-reduce=false" | FileCheck %s --check-prefix=SM90
// Step by step: the same passes by name.
// RUN: synpl-opt %s --synpl-l0-tune-launch --synpl-convert-l0uop-to-nvvm --gpu-module-to-binary=format=isa | FileCheck %s
// Without the binary step the gpu.module stays.
// RUN: synpl-opt %s --synpl-cuda-kernel-pipeline=binary=false | FileCheck %s --check-prefix=MODULE

// By default each row of the reduction becomes a block of 256 threads
// (--synpl-l0-block-reduce), halving partial sums in shared memory.
// BLOCK: l0uop.kernel @rowsum {{.*}}grid(128, 1, 1) block(256, 1, 1) shared_mem 1024 shared(%{{.*}} : !l0uop.buf<256xf32>) attributes {device_entry = "p_rowsum"} {
// BLOCK: gpu.binary @p_cuda {{.*}}bar.sync

// Without it, the launch search spreads the row reduction over SMs, the
// kernel is lowered to NVVM, and gpu-module-to-binary leaves its PTX.

// CHECK: l0uop.kernel @rowsum {{.*}}grid(4, 1, 1) block(32, 1, 1) shared_mem 0 attributes {device_entry = "p_rowsum"} {
// CHECK-NEXT: }
// CHECK: gpu.binary @p_cuda [#gpu.object<#nvvm.target<chip = "sm_80", features = "+ptx70">, properties = {{.*}}, assembly = "{{.*}}.version 7.0\0A.target sm_80{{.*}}.visible .entry p_rowsum(

// SM90: l0uop.kernel @rowsum {{.*}}grid(1, 1, 1) block(128, 1, 1)
// SM90: gpu.binary @p_cuda [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx78">, {{.*}}.target sm_90{{.*}}.maxntid 128, 1, 1

// MODULE: gpu.module @p_cuda
// MODULE: llvm.func @p_rowsum(
l0uop.plan @p pipeline_depth 1 {
  l0uop.pool @dev arena on device capacity 1MiB
  l0uop.slot @h pool @dev offset 0 size 131072 lifetime(0, 1) : !l0uop.buf<128x256xf32>
  l0uop.slot @s pool @dev offset 131072 size 512 lifetime(0, 1) : !l0uop.buf<128xf32>
  l0uop.kernel @rowsum inputs(%h = @h : !l0uop.buf<128x256xf32>) outputs(%s = @s : !l0uop.buf<128xf32>)
      grid(1, 1, 1) block(128, 1, 1) shared_mem 0 {
    %i = l0uop.range 0 to 128 over local_x : index
    %zero = l0uop.const 0.0 : f32
    %j = l0uop.range 0 to 256 : index
    %p = l0uop.index %h[%i, %j] : !l0uop.buf<128x256xf32>
    %v = l0uop.load %p : f32
    l0uop.end %j
    %sum = l0uop.reduce add %v over %j init %zero : f32
    %ps = l0uop.index %s[%i] : !l0uop.buf<128xf32>
    l0uop.store %ps, %sum : f32
    l0uop.end %i
  }
}
