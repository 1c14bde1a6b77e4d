// The host pipeline is exactly its pinned list of passes: its output equals
// running them one by one, and with llvm-only=true it leaves only LLVM
// dialect functions that translate to LLVM IR.
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l1.mlir --synpl-host-pipeline=llvm-only=true -o %t.pipeline.mlir
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l1.mlir --synpl-l1-to-l0 --synpl-l0-pack-memory \
// RUN:   --synpl-convert-l0ctl-to-llvm=keep-regions=false --synpl-convert-l0uop-to-llvm=keep-plan=false -o %t.passes.mlir
// RUN: diff %t.pipeline.mlir %t.passes.mlir
// RUN: not grep -E "l0uop\.|l0ctl\." %t.pipeline.mlir
// RUN: FileCheck %s --check-prefix=LLVMONLY < %t.pipeline.mlir
// RUN: synpl-translate --mlir-to-llvmir %t.pipeline.mlir -o /dev/null
// LLVMONLY: llvm.func @single_gpu_step_dispatch(

// By default the plan stays as data for the runtime, each kernel pointing at
// its host entry.
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l1.mlir --synpl-host-pipeline | FileCheck %s
// CHECK: l0uop.plan @single_gpu
// CHECK: l0uop.kernel @forward_backward.k{{[0-9]+}}_matmul {{.*}}host_entry = @single_gpu_forward_backward.k{{[0-9]+}}_matmul
// CHECK: llvm.func @single_gpu_forward_backward.k{{[0-9]+}}_matmul(
