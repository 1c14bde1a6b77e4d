// Every tensor op of L1 lowers to UOps (the spec's table): exp/log through
// EXP2/LOG2 with the ln 2 scaling, tanh through EXP2, cos through SIN with a
// pi/2 shift, cmp/select/sign through CMPLT/CMPNE/WHERE, min through MAX,
// div through RECIPROCAL; a returned view is stored by a copy kernel.
// RUN: synpl-opt %s --synpl-l1-to-l0-pipeline | FileCheck %s
// Idempotent on its own output.
// RUN: synpl-opt %s --synpl-l1-to-l0-pipeline --synpl-l1-to-l0 | FileCheck %s

// CHECK-LABEL: l0uop.plan @sys_allops
// CHECK-DAG: l0uop.exp2
// CHECK-DAG: l0uop.log2
// CHECK-DAG: l0uop.sin
// CHECK-DAG: l0uop.sqrt
// CHECK-DAG: l0uop.reciprocal
// CHECK-DAG: l0uop.cmplt
// CHECK-DAG: l0uop.where
// CHECK-DAG: l0uop.max
// CHECK-DAG: l0uop.reduce max
// CHECK-DAG: l0uop.reduce add
// The transpose of a computed value, returned: a copy kernel.
// CHECK-DAG: l0uop.kernel @allops.k{{[0-9]+}}_copy {{.*}}outputs(%{{.*}} = @allops.out1 : !l0uop.buf<10x4xf32>)
// CHECK: l0uop.stream @stream_0
// CHECK-NOT: l1.
l1.system @sys_allops {
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "1GB"}
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.tensor_graph @allops on @gpu_0 then @allsink compute(%a: tensor<4x10xf32>, %b: tensor<4x10xf32>, %v: tensor<10xf32>, %r: tensor<4xf32>) {
  %0 = l1.add %a, %b : tensor<4x10xf32>, tensor<4x10xf32> -> tensor<4x10xf32>
  %1 = l1.sub %0, %b : tensor<4x10xf32>, tensor<4x10xf32> -> tensor<4x10xf32>
  %2 = l1.mul %1, %b : tensor<4x10xf32>, tensor<4x10xf32> -> tensor<4x10xf32>
  %3 = l1.div %2, %b : tensor<4x10xf32>, tensor<4x10xf32> -> tensor<4x10xf32>
  %4 = l1.max %3, %b : tensor<4x10xf32>, tensor<4x10xf32> -> tensor<4x10xf32>
  %5 = l1.min %4, %b : tensor<4x10xf32>, tensor<4x10xf32> -> tensor<4x10xf32>
  %6 = l1.exp %5 : tensor<4x10xf32> -> tensor<4x10xf32>
  %7 = l1.log %6 : tensor<4x10xf32> -> tensor<4x10xf32>
  %8 = l1.sqrt %7 : tensor<4x10xf32> -> tensor<4x10xf32>
  %9 = l1.reciprocal %8 : tensor<4x10xf32> -> tensor<4x10xf32>
  %10 = l1.tanh %9 : tensor<4x10xf32> -> tensor<4x10xf32>
  %11 = l1.cos %10 : tensor<4x10xf32> -> tensor<4x10xf32>
  %12 = l1.abs %11 : tensor<4x10xf32> -> tensor<4x10xf32>
  %13 = l1.sign %12 : tensor<4x10xf32> -> tensor<4x10xf32>
  %14 = l1.neg %13 : tensor<4x10xf32> -> tensor<4x10xf32>
  %15 = l1.broadcast %v : tensor<10xf32> -> tensor<4x10xf32>
  %16 = l1.broadcast %r dims [0] : tensor<4xf32> -> tensor<4x10xf32>
  %17 = l1.add %15, %16 : tensor<4x10xf32>, tensor<4x10xf32> -> tensor<4x10xf32>
  %18 = l1.transpose %17 perm [1, 0] : tensor<4x10xf32> -> tensor<10x4xf32>
  %19 = l1.reduce_sum %14 axis 1 : tensor<4x10xf32> -> tensor<4xf32>
  %20 = l1.reduce_max %17 axis 0 : tensor<4x10xf32> -> tensor<10xf32>
  %21 = l1.cmp gt, %14, %17 : tensor<4x10xf32>, tensor<4x10xf32> -> tensor<4x10xi1>
  %22 = l1.const 0.5 : tensor<4x10xf32>
  %23 = l1.select %21, %14, %22 : tensor<4x10xi1>, tensor<4x10xf32>, tensor<4x10xf32> -> tensor<4x10xf32>
  %24 = l1.cast %21 : tensor<4x10xi1> -> tensor<4x10xf32>
  %25 = l1.reduce_mean %24 : tensor<4x10xf32> -> tensor<f32>
  %26 = l1.scale %23, %25 : tensor<4x10xf32>, tensor<f32> -> tensor<4x10xf32>
  l1.return %26, %18, %19, %20 : tensor<4x10xf32>, tensor<10x4xf32>, tensor<4xf32>, tensor<10xf32>
}
l1.stage @allsink on @cpu_0 process(%r0: !l1.buf<@gpu_0, tensor<4x10xf32>>, %r1: !l1.buf<@gpu_0, tensor<10x4xf32>>, %r2: !l1.buf<@gpu_0, tensor<4xf32>>, %r3: !l1.buf<@gpu_0, tensor<10xf32>>) {
  l1.drop %r0 : !l1.buf<@gpu_0, tensor<4x10xf32>>
  l1.drop %r1 : !l1.buf<@gpu_0, tensor<10x4xf32>>
  l1.drop %r2 : !l1.buf<@gpu_0, tensor<4xf32>>
  l1.drop %r3 : !l1.buf<@gpu_0, tensor<10xf32>>
  l1.end
}
