// The search filters by the target's rules: a GPU whose vram cannot hold
// the parameters and Adam moments is rejected by the `memory` check, so the
// model goes to the CPU even though the GPU is faster; and a second CPU
// without a path from storage cannot host the stages (`topology`).
//
// RUN: cat %s %synpl_src_root/examples/mnist/mnist.l2.mlir \
// RUN:   | synpl-opt --synpl-l2-to-l1 --synpl-search-report 2> %t.report | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT < %t.report

// REPORT: winner: graph+actor@cpu_0 host@cpu_0 staging@ram_0
// REPORT: topology {{[0-9]+}} {{.*}}no path from storage @ssd_0 to host @cpu_1
// REPORT: memory {{[0-9]+}} {{.*}}parameters and optimizer state ({{.*}}) exceed @gpu_0 (1.0 MB

// CHECK: l1.actor @model_state on @cpu_0
// CHECK: l1.tensor_graph @forward_backward on @cpu_0
// CHECK-NOT: l1.transfer

l1.system @small_gpu {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 8}
  l1.node @cpu_1 compute {isa = "x86_64", cores = 8}
  l1.node @gpu_0 compute {isa = "cuda", vram = "1MB", sm = 84}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
  l1.edge @cpu_1 -> @gpu_0 bandwidth "32GB/s"
}
