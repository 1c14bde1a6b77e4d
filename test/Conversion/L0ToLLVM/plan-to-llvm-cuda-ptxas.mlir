// REQUIRES: ptxas
// With ptxas=<path>, the PTX is assembled for the chip and the cubin is
// embedded beside it; ptxas's own message is the error when it fails.
//
// RUN: synpl-opt %s --synpl-convert-l0-plan-to-llvm=ptxas=%ptxas | FileCheck %s
// CHECK: llvm.mlir.global internal constant @synpl_plan_device_ptx(
// CHECK: llvm.mlir.global internal constant @synpl_plan_device_cubin("\7FELF
// CHECK: llvm.mlir.global external constant @synpl_plan() {{.*}} : !llvm.struct<(ptr, ptr, ptr, ptr, ptr, i64, ptr, i64)>
// CHECK:   llvm.mlir.addressof @synpl_plan_device_ptx
// CHECK:   llvm.mlir.addressof @synpl_plan_device_cubin
//
// The same PTX with a syntax error: ptxas's message, located at the binary.
// RUN: sed -e 's/ret;/frobnicate;/' %s > %t.bad.mlir
// RUN: not synpl-opt %t.bad.mlir --synpl-convert-l0-plan-to-llvm=ptxas=%ptxas 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: ptxas ({{.*}}ptxas -arch=sm_80) failed on the CUDA kernels: {{.*}}error
//
// A ptxas that does not exist.
// RUN: not synpl-opt %s --synpl-convert-l0-plan-to-llvm=ptxas=%t.no-ptxas 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: ptxas={{.*}}no-ptxas: no such program (the CUDA toolkit's ptxas assembles the PTX into a cubin; leave the option out to embed the PTX only)

module attributes {gpu.container_module} {
  gpu.binary @p_cuda [#gpu.object<#nvvm.target<chip = "sm_80">, assembly = ".version 7.0\0A.target sm_80\0A.address_size 64\0A.visible .entry p_k(\0A\09.param .u64 p_k_param_0\0A)\0A{\0A\09ret;\0A}\0A">]
  l0uop.plan @p pipeline_depth 1 {
    l0uop.pool @dev persistent on device capacity 1KiB
    l0uop.slot @x pool @dev offset 0 size 16 lifetime(0, 1) : !l0uop.buf<4xf32>
    l0uop.kernel @k inputs() outputs(%x = @x : !l0uop.buf<4xf32>) grid(1, 1, 1) block(4, 1, 1) shared_mem 0 attributes {device_entry = "p_k"} {
    }
    l0uop.stream @s0 [@k]
  }
}
