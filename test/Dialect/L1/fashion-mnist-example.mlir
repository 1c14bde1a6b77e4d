// The Fashion-MNIST program placed on this host (examples/fashion_mnist/
// fashion_mnist.l1.mlir) verifies against every phase-1 row and round-trips,
// in custom and generic form. Its tensor graph and handler are the MNIST
// example's (mnist-example-numerics.test diffs them); here: the placement.
// RUN: synpl-opt %synpl_src_root/examples/fashion_mnist/fashion_mnist.l1.mlir | FileCheck %s
// RUN: synpl-opt %synpl_src_root/examples/fashion_mnist/fashion_mnist.l1.mlir | synpl-opt | FileCheck %s
// RUN: synpl-opt %synpl_src_root/examples/fashion_mnist/fashion_mnist.l1.mlir -mlir-print-op-generic | synpl-opt | FileCheck %s
// Nothing is transferred and nothing names a GPU.
// RUN: synpl-opt %synpl_src_root/examples/fashion_mnist/fashion_mnist.l1.mlir | not grep -E "l1\.transfer|gpu"
// CHECK-LABEL: l1.system @single_cpu
// CHECK-NEXT: l1.node @ssd_0 storage
// CHECK-NEXT: l1.node @ram_0 memory {capacity = "16GB"}
// CHECK-NEXT: l1.node @cpu_0 compute {cores = 2, isa = "x86_64"}
// CHECK-NEXT: l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
// CHECK-NEXT: l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
// CHECK-NEXT: }
// CHECK-LABEL: l1.data @fashion_mnist
// CHECK: path "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz" format idx
// CHECK: path "/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz" format idx
// CHECK-LABEL: l1.actor @model_state on @cpu_0
// CHECK: l1.window @weights [@w1, @b1, @g1, @be1, @w2, @b2, @g2, @be2, @w3, @b3] readers [@forward_backward]
// CHECK: l1.handler @GradUpdate(
// The batch goes from the read straight into the graph, in ram_0.
// CHECK-LABEL: l1.stage @load_data on @cpu_0 process()
// CHECK-NEXT: %[[IMG:.*]], %[[LAB:.*]] = l1.read_batch @fashion_mnist [@images, @labels] batch 128 shuffle drop_last seed 0 : !l1.buf<@ram_0, tensor<128x28x28xui8>>, !l1.buf<@ram_0, tensor<128x1xui8>>
// CHECK-NEXT: l1.forward @forward_backward(%[[IMG]], %[[LAB]]) : !l1.buf<@ram_0, tensor<128x28x28xui8>>, !l1.buf<@ram_0, tensor<128x1xui8>>
// CHECK-NEXT: }
// CHECK-LABEL: l1.tensor_graph @forward_backward on @cpu_0 reads [@model_state::@weights] then @report_and_send
// CHECK: l1.cmp ge
// CHECK: l1.return {{.*}} : tensor<f32>, tensor<784x256xf32>, {{.*}}, tensor<10xf32>, tensor<f32>{{$}}
// The results come back in ram_0: loss and correct are reported there, the
// gradients sent to the actor.
// CHECK-LABEL: l1.stage @report_and_send on @cpu_0 process(%{{.*}}: !l1.buf<@ram_0, tensor<f32>>,
// CHECK: l1.report "loss", %{{.*}} : !l1.buf<@ram_0, tensor<f32>>
// CHECK-NEXT: l1.drop
// CHECK-NEXT: l1.report "correct", %{{.*}} : !l1.buf<@ram_0, tensor<f32>>
// CHECK-NEXT: l1.drop
// CHECK-NEXT: l1.send @model_state::@GradUpdate(
// CHECK: l1.pipeline @train = @load_data -> @forward_backward
// CHECK-NEXT: l1.pipeline @grad_return = @report_and_send
// CHECK-NEXT: l1.schedule pipelines [@train, @grad_return] actors [@model_state] pipeline_depth 2
