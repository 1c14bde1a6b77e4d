// Data binding: a field's `l1.at` / `l1.path` (what the front end writes for
// `images : tensor(f32, [8]) @ ssd_1, path: "..."`) become its l1.field's
// node and path; a field without them is at the storage node the search
// picked, with path "" (bound by name from --data when the program runs).
// Only the fields the model and the loss read are bound (@unused is not).
//
// RUN: synpl-opt %s --synpl-l2-to-l1 | FileCheck %s

// CHECK: l1.data @d {
// CHECK-NEXT: l1.field @x : tensor<8xf32> at @ssd_1 path "/data/x-idx2-ubyte" format idx
// CHECK-NEXT: l1.field @y : tensor<1xui8> at @ssd_0 path "" format idx
// CHECK-NEXT: }
// CHECK: l1.read_batch @d [@x, @y] batch 4 shuffle seed 0 : !l1.buf<@ram_0, tensor<4x8xf32>>, !l1.buf<@ram_0, tensor<4x1xui8>>

l1.system @two_disks {
  l1.node @ssd_0 storage
  l1.node @ssd_1 storage
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 4}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ssd_1 -> @ram_0 bandwidth "1GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}

l3.data @d {
  l3.field @x : tensor<8xf32> {l1.at = @ssd_1, l1.path = "/data/x-idx2-ubyte"}
  l3.field @y : tensor<1xui8>
  l3.field @unused : tensor<3xf32>
}
l3.model @m in @d::@x out !l3.dist<4> properties []
l3.loss @objective {
  l3.divergence @ce(@m::@out, @d::@y) weight 1.0
} combine weighted_sum
l3.goal minimize(@objective)

l2.methods @method for @m
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x8xf32>) {
      %h = l2.linear(8, 4) %x as "fc1" : tensor<4x8xf32>
      %p = l2.softmax %h : tensor<4x4xf32>
      l2.yield %p : tensor<4x4xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>
