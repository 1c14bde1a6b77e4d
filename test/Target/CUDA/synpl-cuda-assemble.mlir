// REQUIRES: ptxas
// --synpl-cuda-assemble appends a cubin made by ptxas for the chip next to
// each PTX object; the plan lowering then embeds both. ptxas's own message is
// the error when it fails.
//
// RUN: synpl-opt %s --synpl-cuda-assemble=ptxas=%ptxas | FileCheck %s --check-prefix=OBJ
// OBJ: gpu.binary @p_cuda [#gpu.object<#nvvm.target<chip = "sm_80">, assembly = ".version 7.0
// OBJ-SAME: #gpu.object<#nvvm.target<chip = "sm_80">, bin = "\7FELF
//
// Run twice, it assembles nothing more.
// RUN: synpl-opt %s --synpl-cuda-assemble=ptxas=%ptxas --synpl-cuda-assemble=ptxas=%t.no-ptxas | FileCheck %s --check-prefix=OBJ
//
// RUN: synpl-opt %s --synpl-cuda-assemble=ptxas=%ptxas --synpl-convert-l0-plan-to-llvm | FileCheck %s
// CHECK: llvm.mlir.global internal constant @synpl_plan_device_ptx(
// CHECK: llvm.mlir.global internal constant @synpl_plan_device_cubin("\7FELF
// CHECK: llvm.mlir.global external constant @synpl_plan() {{.*}} : !llvm.struct<(ptr, i64, ptr, i64, ptr, i64, ptr, i64, ptr, i64, ptr, i64)>
// CHECK:   llvm.mlir.addressof @synpl_plan_device_ptx
// CHECK:   llvm.mlir.addressof @synpl_plan_device_cubin
//
// The same PTX with a syntax error: ptxas's message, located at the binary.
// RUN: sed -e 's/ret;/frobnicate;/' %s > %t.bad.mlir
// RUN: not synpl-opt %t.bad.mlir --synpl-cuda-assemble=ptxas=%ptxas 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: ptxas ({{.*}}ptxas -arch=sm_80) failed on the CUDA kernels: {{.*}}error
//
// A ptxas that does not exist.
// RUN: not synpl-opt %s --synpl-cuda-assemble=ptxas=%t.no-ptxas 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: ptxas={{.*}}no-ptxas: no such program (the CUDA toolkit's ptxas assembles the PTX into a cubin; leave the step out to embed the PTX only)
//
// A chip the CUDA sink does not know.
// RUN: sed -e 's/chip = "sm_80"/chip = "sm_75"/' %s > %t.chip.mlir
// RUN: not synpl-opt %t.chip.mlir --synpl-cuda-assemble=ptxas=%ptxas 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: error: unknown CUDA chip 'sm_75' (known: sm_80, sm_86, sm_89, sm_90, sm_90a)

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
