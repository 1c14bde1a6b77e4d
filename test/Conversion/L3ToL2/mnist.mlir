// The spec's MNIST trace: examples/mnist/mnist.l3.mlir lowers to the method
// of "Trace — MNIST at L2" (examples/mnist/mnist.l2.mlir): 784 -> 256 -> 256
// -> 10 with layer norm and gelu, softmax, batch 128, reverse-mode autodiff,
// adam(3e-4) under a 1000-step warmup and cosine decay.
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l3.mlir --synpl-l3-to-l2 | FileCheck %s
// The output parses, verifies, and the pass is idempotent on it.
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l3.mlir --synpl-l3-to-l2 | synpl-opt --synpl-l3-to-l2 | synpl-opt | FileCheck %s --check-prefix=ROUND
// The search report.
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l3.mlir --synpl-l3-to-l2 --synpl-search-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: synpl-opt %synpl_src_root/examples/mnist/mnist.l3.mlir --synpl-l3-to-l2=summary -o /dev/null 2>&1 | FileCheck %s --check-prefix=SUMMARY

// CHECK:      l3.goal minimize(@objective)
// CHECK-NEXT: l2.methods @classify_method for @classify
// CHECK-NEXT:   sample epoch_shuffle<batch = 128, drop_last = true>
// CHECK-NEXT:   infer(%[[IN:.*]]: tensor<128x28x28xf32>) {
// CHECK-NEXT:     %[[X:.*]] = l2.flatten %[[IN]] : tensor<128x28x28xf32>
// CHECK-NEXT:     %[[H0:.*]] = l2.linear(784, 256) %[[X]] as "fc1" : tensor<128x784xf32>
// CHECK-NEXT:     %[[N0:.*]] = l2.norm(layer) %[[H0]] as "norm1" : tensor<128x256xf32>
// CHECK-NEXT:     %[[A0:.*]] = l2.act(gelu) %[[N0]] : tensor<128x256xf32>
// CHECK-NEXT:     %[[H1:.*]] = l2.linear(256, 256) %[[A0]] as "fc2" : tensor<128x256xf32>
// CHECK-NEXT:     %[[N1:.*]] = l2.norm(layer) %[[H1]] as "norm2" : tensor<128x256xf32>
// CHECK-NEXT:     %[[A1:.*]] = l2.act(gelu) %[[N1]] : tensor<128x256xf32>
// CHECK-NEXT:     %[[H2:.*]] = l2.linear(256, 10) %[[A1]] as "fc3" : tensor<128x256xf32>
// CHECK-NEXT:     %[[P:.*]] = l2.softmax %[[H2]] : tensor<128x10xf32>
// CHECK-NEXT:     l2.yield %[[P]] : tensor<128x10xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   backward autodiff<mode = reverse>
// CHECK-NEXT:   update schedule<warmup = 1000, decay = cosine, inner = adam<lr = {{0.0003|3.0e-4}}>>

// ROUND-COUNT-1: l2.methods
// ROUND-NOT:     l2.methods

// REPORT:      search L3->L2 @classify: [[N:[0-9]+]] enumerated (space [[N]]), {{[0-9]+}} rejected, {{[0-9]+}} survived; winner: epoch_shuffle(128) depth 3 [256-256] norm gelu autodiff<mode = reverse> schedule(adam) [{{.*}} ms; cap 10000, budget 10000 ms]
// REPORT:      param_budget {{ *[1-9][0-9]*}}  {{.*}}: [consistency] L2.2: the infer DAG has {{[0-9]+}} parameters, over @classify's param_budget(500000)
// REPORT:      top 5 of
// REPORT-NEXT: # cost candidate
// REPORT-NEXT: 1 {{.*}} epoch_shuffle(128) depth 3 [256-256] norm gelu autodiff<mode = reverse> schedule(adam) params 18.04{{[0-9]*}}, flops/example
// REPORT:      why: cost

// SUMMARY: remark: L3->L2 chose epoch_shuffle(128) depth 3 [256-256] norm gelu autodiff<mode = reverse> schedule(adam) out of {{[0-9]+}} candidates ({{[0-9]+}} verified) in {{[0-9]+}} us
