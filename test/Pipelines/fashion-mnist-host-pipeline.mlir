// The Fashion-MNIST program placed on this host (examples/fashion_mnist/
// fashion_mnist.l1.mlir: system @single_cpu, no accelerator) goes down the
// pinned host pipeline. Everything lives in host memory: the batch the
// first kernel reads is the read_batch slot itself (no transfer, no device
// pool), and every kernel has a host entry.
// RUN: synpl-opt %synpl_src_root/examples/fashion_mnist/fashion_mnist.l1.mlir --synpl-host-pipeline \
// RUN:   -mlir-print-op-on-diagnostic=false 2>/dev/null > %t.host.mlir
// RUN: FileCheck %s < %t.host.mlir
// RUN: not grep -E "on device|l0uop\.transfer|(^| )l1\." %t.host.mlir
// CHECK-LABEL: l0uop.plan @single_cpu pipeline_depth 2 {
// CHECK-DAG: l0uop.pool @cpu_0.persistent persistent on host
// CHECK-DAG: l0uop.pool @ram_0.freelist freelist on host
// CHECK-DAG: l0uop.pool @cpu_0.io.arena arena on host
// CHECK-DAG: l0uop.pool @forward_backward.arena arena on host
// CHECK-DAG: l0uop.pool @model_state.GradUpdate.arena arena on host
// The state, the batch (in ram_0's freelist) and the graph's outputs: the
// loss first, correct last (a scalar), the gradients between.
// CHECK-DAG: l0uop.slot @model_state.w1 pool @cpu_0.persistent {{.*}} : !l0uop.buf<784x256xf32>
// CHECK-DAG: l0uop.slot @load_data.images pool @ram_0.freelist size 100352 {{.*}} : !l0uop.buf<128x28x28xui8>
// CHECK-DAG: l0uop.slot @load_data.labels pool @ram_0.freelist size 128 {{.*}} : !l0uop.buf<128xui8>
// CHECK-DAG: l0uop.slot @forward_backward.out0 pool @cpu_0.io.arena {{.*}} : !l0uop.buf<1xf32>
// CHECK-DAG: l0uop.slot @forward_backward.out10 pool @cpu_0.io.arena {{.*}} : !l0uop.buf<10xf32>
// CHECK-DAG: l0uop.slot @forward_backward.out11 pool @cpu_0.io.arena {{.*}} : !l0uop.buf<1xf32>
// The first kernel reads the pixels straight from the read_batch slot.
// CHECK: l0uop.kernel @forward_backward.k0_{{[a-z_]+}} inputs(%arg0 = @load_data.images : !l0uop.buf<128x28x28xui8>) {{.*}}host_entry = @single_cpu_forward_backward.k0_
// CHECK: l0uop.kernel @forward_backward.k{{[0-9]+}}_matmul {{.*}}host_entry = @single_cpu_forward_backward.k{{[0-9]+}}_matmul
// A kernel writes correct.
// CHECK: l0uop.kernel @forward_backward.{{.*}}outputs({{.*}}= @forward_backward.out11 : !l0uop.buf<1xf32>)
// CHECK: l0uop.kernel @model_state.GradUpdate.{{.*}}host_entry = @single_cpu_model_state.GradUpdate.
// CHECK: l0uop.stream @stream_0 [@forward_backward.k0_
// CHECK: l0uop.init kaiming @model_state.w1 fan_in 784 seed 1
// CHECK: llvm.func @single_cpu_step_dispatch(
// CHECK: llvm.func @single_cpu_forward_backward.k0_
// CHECK: llvm.func @single_cpu_model_state.GradUpdate.k0_
//
// With llvm-only=true: LLVM IR and an x86-64 object.
// RUN: synpl-opt %synpl_src_root/examples/fashion_mnist/fashion_mnist.l1.mlir \
// RUN:   --synpl-host-pipeline=llvm-only=true -o %t.llvm.mlir 2>/dev/null
// RUN: synpl-translate --mlir-to-llvmir %t.llvm.mlir -o %t.ll
// RUN: FileCheck %s --check-prefix=IR < %t.ll
// RUN: llc -O2 -filetype=obj %t.ll -o %t.o
// IR-DAG: define void @single_cpu_step_dispatch(
// IR-DAG: define void @{{.*}}single_cpu_forward_backward.k{{[0-9]+}}_matmul(ptr noalias align 64 %{{.*}}, i64 %{{.*}}, i64 %{{.*}})
// IR-DAG: define void @{{.*}}single_cpu_model_state.GradUpdate.k{{[0-9]+}}_
