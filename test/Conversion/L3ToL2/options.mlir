// The pass's options: the cap (the spec's 10K by default) and the summary.
// RUN: not synpl-opt %synpl_src_root/examples/mnist/mnist.l3.mlir --synpl-l3-to-l2=max-candidates=1000 -o /dev/null 2>&1 | FileCheck %s --check-prefix=CAP
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l3.mlir --synpl-l3-to-l2=max-candidates=1521 -o /dev/null
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l3.mlir "--synpl-l3-to-l2=summary budget-ms=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SUMMARY

// The MNIST space is 1521 candidates: 169 architectures x 3 batches x 1
// backward x 3 updates; counted, so nothing is built past the cap.
// CAP: error: search L3->L2 @classify: too many candidates: 1521 candidates exceed the cap of 1000

// SUMMARY: remark: L3->L2 chose epoch_shuffle(128) depth 3 [256-256] norm gelu autodiff<mode = reverse> schedule(adam) out of 1521 candidates (1413 verified) in {{[0-9]+}} us
