// --synpl-pipeline{from=... to=...}: the compiler's phases (l3, l2, l1, l0,
// device, llvm) as one pipeline, the same passes synplc runs.
//
// L3 -> L2: the method search.
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l3.mlir --synpl-pipeline="from=l3 to=l2" | FileCheck %s --check-prefix=TO-L2
// TO-L2: l2.methods @{{.*}} for @
// TO-L2-NOT: l1.actor
//
// L2 -> L0 over a system the input declares: placement, then emission.
// RUN: cat %S/../Conversion/L2ToL1/Inputs/single_cpu.mlir %synpl_src_root/examples/mnist/mnist.l2.mlir \
// RUN:   | synpl-opt --synpl-pipeline="from=l2 to=l0" | FileCheck %s --check-prefix=TO-L0
// TO-L0: l0uop.plan @single_cpu
// TO-L0: l0ctl.program @step_dispatch
// TO-L0-NOT: l1.actor
//
// The same in two halves gives the same plan.
// RUN: cat %S/../Conversion/L2ToL1/Inputs/single_cpu.mlir %synpl_src_root/examples/mnist/mnist.l2.mlir \
// RUN:   | synpl-opt --synpl-pipeline="from=l2 to=l1" | synpl-opt --synpl-pipeline="from=l1 to=l0" > %t.halves.mlir
// RUN: cat %S/../Conversion/L2ToL1/Inputs/single_cpu.mlir %synpl_src_root/examples/mnist/mnist.l2.mlir \
// RUN:   | synpl-opt --synpl-pipeline="from=l2 to=l0" > %t.whole.mlir
// RUN: diff %t.halves.mlir %t.whole.mlir
//
// L1 -> LLVM for the host: every l0 op is lowered, the plan becomes tables.
// RUN: synpl-opt %synpl_src_root/examples/fashion_mnist/fashion_mnist.l1.mlir --synpl-pipeline="from=l1 to=llvm" | FileCheck %s --check-prefix=TO-LLVM
// TO-LLVM-NOT: l0uop.
// TO-LLVM: llvm.mlir.global external constant @synpl_plan()
// TO-LLVM: llvm.func @main(
//
// The device phase with target=cuda compiles the device kernels to PTX.
// RUN: synpl-opt %S/synpl-cuda-kernel-pipeline.mlir --synpl-pipeline="from=l0 to=device target=cuda chip=sm_90" | FileCheck %s --check-prefix=TO-DEVICE
// TO-DEVICE: gpu.binary @p_cuda [#gpu.object<#nvvm.target<chip = "sm_90"{{.*}}.target sm_90
//
// Bad options are errors, not a silent pipeline.
// RUN: not synpl-opt %s --synpl-pipeline="from=l1 to=l3" 2>&1 | FileCheck %s --check-prefix=UP
// UP: synpl-pipeline: cannot compile from l1 up to l3: the phases run l3, l2, l1, l0, device, llvm
// RUN: not synpl-opt %s --synpl-pipeline="from=l1 to=l9" 2>&1 | FileCheck %s --check-prefix=PHASE
// PHASE: synpl-pipeline: unknown phase 'l9' (the phases: l3, l2, l1, l0, device, llvm)
// RUN: not synpl-opt %s --synpl-pipeline="target=ipu" 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: synpl-pipeline: unknown target 'ipu' (host, cuda or ipu21)
// RUN: not synpl-opt %s --synpl-pipeline="from=l0 to=device target=cuda chip=sm_75" 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: synpl-pipeline: chip 'sm_75': the CUDA sink emits for sm_80, sm_86, sm_89, sm_90, sm_90a
// RUN: not synpl-opt %s --synpl-pipeline="from=l0 to=llvm target=ipu21" 2>&1 | FileCheck %s --check-prefix=IPU-LLVM
// IPU-LLVM: synpl-pipeline: the ipu21 sink ends at the device phase
//
// The device phase with target=ipu21 makes the plan an ipu21 graph.
// RUN: synpl-opt %S/../Conversion/L0ToIPU21/Inputs/matmul-16x8192x16-f16.mlir --synpl-pipeline="from=l0 to=device target=ipu21 ipu-arch=ipu2" | FileCheck %s --check-prefix=TO-IPU21
// TO-IPU21: ipu21.graph @mm target #ipu21.target<arch = "ipu2"
// TO-IPU21-NOT: l0uop.

module {}
