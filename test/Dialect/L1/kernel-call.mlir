// `l1.kernel_call` (a user kernel, #[l0::kernel("file")]): round trip, with
// and without a stated boundary, and the verifier's rejection. What the file
// holds is checked by the L1 -> L0 lowering (test/Tools/synplc/user-kernel.test).
// RUN: synpl-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK: l1.kernel_call "relu" from "relu.ll"(%{{.*}}) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: l1.kernel_call "axpy" from "axpy.o"(%{{.*}}, %{{.*}}) {boundary = "axpy(f32[4,8], f32[4,8]) -> f32[4,8]"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
l1.system @s {
  l1.node @ram_0 memory {capacity = "1GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l1.tensor_graph @g on @cpu_0 then @sink compute(%x: tensor<4x8xf32>) {
  %r = l1.kernel_call "relu" from "relu.ll"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = l1.kernel_call "axpy" from "axpy.o"(%x, %r) {boundary = "axpy(f32[4,8], f32[4,8]) -> f32[4,8]"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  l1.return %s : tensor<4x8xf32>
}
l1.stage @sink on @cpu_0 process(%o: !l1.buf<@ram_0, tensor<4x8xf32>>) {
  l1.drop %o : !l1.buf<@ram_0, tensor<4x8xf32>>
  l1.end
}

// -----

l1.tensor_graph @g on @cpu_0 compute(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'l1.kernel_call' op names a kernel by a function and a file, both non-empty}}
  %r = l1.kernel_call "relu" from ""(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  l1.return %r : tensor<4x8xf32>
}
