// RUN: synpl-opt %s --synpl-l1-bucket-all-reduce=bucket-bytes=1024 | FileCheck %s
// RUN: synpl-opt %s --synpl-l1-bucket-all-reduce=bucket-bytes=1024 | synpl-opt --synpl-l1-bucket-all-reduce=bucket-bytes=1024 | FileCheck %s
// RUN: synpl-opt %s --synpl-l1-bucket-all-reduce=bucket-bytes=0 | FileCheck %s --check-prefix=ONE
// Adjacent all-reduces of one reduction, in order, into buckets of at most
// 1024 bytes: 4x16 floats (256 B) + 128 floats (512 B) fit; the next 128
// (512 B) would make 1280: a new bucket, which the 4 floats join; the
// 512-float gradient (2 KiB) is a bucket of its own; the sum is another
// reduction. Running the pass again changes nothing (second RUN line).

// CHECK-LABEL: l1.stage @report
// CHECK-NEXT:    %[[A:.*]]:2 = l1.all_reduce mean %arg0, %arg1 : {{.*}}tensor<4x16xf32>>, {{.*}}tensor<128xf32>>
// CHECK-NEXT:    %[[B:.*]]:2 = l1.all_reduce mean %arg2, %arg3 : {{.*}}tensor<128xf32>>, {{.*}}tensor<4xf32>>
// CHECK-NEXT:    %[[C:.*]] = l1.all_reduce mean %arg4 : {{.*}}tensor<512xf32>>
// CHECK-NEXT:    %[[D:.*]] = l1.all_reduce sum %arg5
// CHECK-NEXT:    l1.drop %[[A]]#0
// CHECK-NEXT:    l1.drop %[[A]]#1
// CHECK-NEXT:    l1.drop %[[B]]#0
// CHECK-NEXT:    l1.drop %[[B]]#1
// CHECK-NEXT:    l1.drop %[[C]]
// CHECK-NEXT:    l1.drop %[[D]]

// ONE-LABEL: l1.stage @report
// ONE-NEXT:    l1.all_reduce mean %arg0, %arg1, %arg2, %arg3, %arg4 :
// ONE-NEXT:    l1.all_reduce sum %arg5
l1.system @s {
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @cpu_1 compute {isa = "x86_64"}
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @ram_0 <-> @cpu_1 bandwidth "50GB/s"
}
l1.stage @report on @cpu_0 process(%a: !l1.buf<@ram_0, tensor<4x16xf32>>, %b: !l1.buf<@ram_0, tensor<128xf32>>, %c: !l1.buf<@ram_0, tensor<128xf32>>, %d: !l1.buf<@ram_0, tensor<4xf32>>, %e: !l1.buf<@ram_0, tensor<512xf32>>, %n: !l1.buf<@ram_0, tensor<f32>>) {
  %0 = l1.all_reduce mean %a : !l1.buf<@ram_0, tensor<4x16xf32>> -> !l1.buf<@ram_0, tensor<4x16xf32>>
  %1 = l1.all_reduce mean %b : !l1.buf<@ram_0, tensor<128xf32>> -> !l1.buf<@ram_0, tensor<128xf32>>
  %2 = l1.all_reduce mean %c : !l1.buf<@ram_0, tensor<128xf32>> -> !l1.buf<@ram_0, tensor<128xf32>>
  %3 = l1.all_reduce mean %d : !l1.buf<@ram_0, tensor<4xf32>> -> !l1.buf<@ram_0, tensor<4xf32>>
  %4 = l1.all_reduce mean %e : !l1.buf<@ram_0, tensor<512xf32>> -> !l1.buf<@ram_0, tensor<512xf32>>
  %5 = l1.all_reduce sum %n : !l1.buf<@ram_0, tensor<f32>> -> !l1.buf<@ram_0, tensor<f32>>
  l1.drop %0 : !l1.buf<@ram_0, tensor<4x16xf32>>
  l1.drop %1 : !l1.buf<@ram_0, tensor<128xf32>>
  l1.drop %2 : !l1.buf<@ram_0, tensor<128xf32>>
  l1.drop %3 : !l1.buf<@ram_0, tensor<4xf32>>
  l1.drop %4 : !l1.buf<@ram_0, tensor<512xf32>>
  l1.drop %5 : !l1.buf<@ram_0, tensor<f32>>
  l1.end
}
l1.pipeline @p = @report
l1.schedule pipelines [@p] actors [] pipeline_depth 1 replicas [@cpu_0, @cpu_1]
