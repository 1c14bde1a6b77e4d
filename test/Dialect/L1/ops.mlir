// Round trip of every l1 form, in the custom syntax and in the generic form.
// RUN: synpl-opt %s | synpl-opt | FileCheck %s
// RUN: synpl-opt %s -mlir-print-op-generic | synpl-opt | FileCheck %s

// CHECK-LABEL: l1.system @single_gpu {
// CHECK: l1.node @ssd_0 storage
// CHECK: l1.node @ram_0 memory {capacity = "32GB"}
// CHECK: l1.node @gpu_0 compute {isa = "cuda", sm = 84, vram = "24GB"}
// CHECK: l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
// CHECK: l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
// CHECK-LABEL: l1.data @mnist {
// CHECK: l1.field @images : tensor<28x28xui8> at @ssd_0 path "{{.*}}train-images-idx3-ubyte.gz" format idx
// CHECK-LABEL: l1.actor @model_state on @gpu_0 {
// CHECK: l1.state @w : tensor<784x10xf32> init kaiming
// CHECK: l1.window @weights [@w] readers [@fb]
// CHECK: l1.window @steps [@t] readers [@snap]
// CHECK: l1.handler @GradUpdate(%[[GW:.*]]: tensor<784x10xf32>) {
// CHECK: l1.state_read @w : tensor<784x10xf32>
// CHECK: l1.state_write @w, %{{.*}} : tensor<784x10xf32>
// CHECK-NEXT: l1.return
// CHECK-LABEL: l1.stage @load on @cpu_0 process() {
// CHECK: l1.read_batch @mnist [@images, @labels] batch 128 shuffle seed 7 : !l1.buf<@ram_0, tensor<128x28x28xui8>>, !l1.buf<@ram_0, tensor<128x1xui8>>
// CHECK: l1.batch_full %{{.*}} : !l1.buf<@ram_0, tensor<128x28x28xui8>>
// CHECK: cf.cond_br
// CHECK: l1.transfer %{{.*}} : !l1.buf<@ram_0, tensor<128x28x28xui8>> -> !l1.buf<@gpu_0, tensor<128x28x28xui8>>
// CHECK: l1.forward @fb(%{{.*}}, %{{.*}}) : !l1.buf<@gpu_0, tensor<128x28x28xui8>>, !l1.buf<@gpu_0, tensor<128x1xui8>>
// CHECK: l1.drop %{{.*}} : !l1.buf<@ram_0, tensor<128x28x28xui8>>
// CHECK: l1.end
// CHECK-LABEL: l1.tensor_graph @fb on @gpu_0 reads [@model_state::@weights] then @ret compute(%{{.*}}: tensor<128x28x28xui8>, %{{.*}}: tensor<128x1xui8>) {
// CHECK: l1.window_read @model_state::@weights[@w] : tensor<784x10xf32>
// CHECK: l1.return %{{.*}}, %{{.*}} : tensor<f32>, tensor<784x10xf32>
// CHECK-LABEL: l1.stage @ret on @cpu_0 process(
// CHECK: l1.report "loss", %{{.*}} : !l1.buf<@gpu_0, tensor<f32>>
// CHECK: l1.send @model_state::@GradUpdate(%{{.*}}) : !l1.buf<@gpu_0, tensor<784x10xf32>>
// CHECK-LABEL: l1.stage @snap on @cpu_0 reads [@model_state::@steps] process() {
// CHECK: l1.window_copy @model_state::@steps[@t] : !l1.buf<@gpu_0, tensor<f32>>
// CHECK-LABEL: l1.tensor_graph @allops on @gpu_0 then @allsink compute(
// CHECK: l1.add
// CHECK: l1.sub
// CHECK: l1.mul
// CHECK: l1.div
// CHECK: l1.max
// CHECK: l1.min
// CHECK: l1.exp
// CHECK: l1.log
// CHECK: l1.sqrt
// CHECK: l1.reciprocal
// CHECK: l1.tanh
// CHECK: l1.cos
// CHECK: l1.abs
// CHECK: l1.sign
// CHECK: l1.neg
// CHECK: l1.broadcast %{{.*}} : tensor<10xf32> -> tensor<4x10xf32>
// CHECK: l1.broadcast %{{.*}} dims [0] : tensor<4xf32> -> tensor<4x10xf32>
// CHECK: l1.transpose %{{.*}} perm [1, 0] : tensor<4x10xf32> -> tensor<10x4xf32>
// CHECK: l1.reduce_sum %{{.*}} axis 1 : tensor<4x10xf32> -> tensor<4xf32>
// CHECK: l1.reduce_max %{{.*}} axis 0 : tensor<4x10xf32> -> tensor<10xf32>
// CHECK: l1.cmp gt, %{{.*}}, %{{.*}} : tensor<4x10xf32>, tensor<4x10xf32> -> tensor<4x10xi1>
// CHECK: l1.const 5.000000e-01 : tensor<4x10xf32>
// CHECK: l1.select
// CHECK: l1.cast %{{.*}} : tensor<4x10xi1> -> tensor<4x10xf32>
// CHECK: l1.scale
// CHECK-LABEL: l1.pipeline @train = @load -> @fb
// CHECK: l1.schedule pipelines [@train, @grad_return] actors [@model_state] pipeline_depth 2

l1.system @single_gpu {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 8}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB", sm = 84}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.data @mnist {
  l1.field @images : tensor<28x28xui8> at @ssd_0 path "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz" format idx
  l1.field @labels : tensor<1xui8> at @ssd_0 path "/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz" format idx
}
l1.actor @model_state on @gpu_0 {
  l1.state @w : tensor<784x10xf32> init kaiming
  l1.state @t : tensor<f32> init zeros
  l1.window @weights [@w] readers [@fb]
  l1.window @steps [@t] readers [@snap]
  l1.handler @GradUpdate(%gw: tensor<784x10xf32>) {
    %w = l1.state_read @w : tensor<784x10xf32>
    %lr = l1.const 1.0e-3 : tensor<f32>
    %s = l1.scale %gw, %lr : tensor<784x10xf32>, tensor<f32> -> tensor<784x10xf32>
    %n = l1.sub %w, %s : tensor<784x10xf32>, tensor<784x10xf32> -> tensor<784x10xf32>
    l1.state_write @w, %n : tensor<784x10xf32>
    l1.return
  }
}
l1.stage @load on @cpu_0 process() {
  %x, %y = l1.read_batch @mnist [@images, @labels] batch 128 shuffle seed 7 : !l1.buf<@ram_0, tensor<128x28x28xui8>>, !l1.buf<@ram_0, tensor<128x1xui8>>
  %full = l1.batch_full %x : !l1.buf<@ram_0, tensor<128x28x28xui8>>
  cf.cond_br %full, ^go(%x : !l1.buf<@ram_0, tensor<128x28x28xui8>>), ^skip
^go(%a: !l1.buf<@ram_0, tensor<128x28x28xui8>>):
  %g = l1.transfer %a : !l1.buf<@ram_0, tensor<128x28x28xui8>> -> !l1.buf<@gpu_0, tensor<128x28x28xui8>>
  %gy = l1.transfer %y : !l1.buf<@ram_0, tensor<128x1xui8>> -> !l1.buf<@gpu_0, tensor<128x1xui8>>
  l1.forward @fb(%g, %gy) : !l1.buf<@gpu_0, tensor<128x28x28xui8>>, !l1.buf<@gpu_0, tensor<128x1xui8>>
^skip:
  l1.drop %x : !l1.buf<@ram_0, tensor<128x28x28xui8>>
  l1.drop %y : !l1.buf<@ram_0, tensor<128x1xui8>>
  l1.end
}
l1.tensor_graph @fb on @gpu_0 reads [@model_state::@weights] then @ret compute(%x: tensor<128x28x28xui8>, %y: tensor<128x1xui8>) {
  %w = l1.window_read @model_state::@weights[@w] : tensor<784x10xf32>
  %xf = l1.cast %x : tensor<128x28x28xui8> -> tensor<128x28x28xf32>
  %xr = l1.reshape %xf : tensor<128x28x28xf32> -> tensor<128x784xf32>
  %z = l1.matmul %xr, %w : tensor<128x784xf32>, tensor<784x10xf32> -> tensor<128x10xf32>
  %yr = l1.reshape %y : tensor<128x1xui8> -> tensor<128xui8>
  %oh = l1.one_hot %yr classes 10 : tensor<128xui8> -> tensor<128x10xf32>
  %d = l1.sub %z, %oh : tensor<128x10xf32>, tensor<128x10xf32> -> tensor<128x10xf32>
  %loss = l1.reduce_mean %d : tensor<128x10xf32> -> tensor<f32>
  %xt = l1.transpose %xr : tensor<128x784xf32> -> tensor<784x128xf32>
  %gw = l1.matmul %xt, %d : tensor<784x128xf32>, tensor<128x10xf32> -> tensor<784x10xf32>
  l1.return %loss, %gw : tensor<f32>, tensor<784x10xf32>
}
l1.stage @ret on @cpu_0 process(%loss: !l1.buf<@gpu_0, tensor<f32>>, %gw: !l1.buf<@gpu_0, tensor<784x10xf32>>) {
  l1.report "loss", %loss : !l1.buf<@gpu_0, tensor<f32>>
  l1.drop %loss : !l1.buf<@gpu_0, tensor<f32>>
  l1.send @model_state::@GradUpdate(%gw) : !l1.buf<@gpu_0, tensor<784x10xf32>>
  l1.end
}
l1.stage @snap on @cpu_0 reads [@model_state::@steps] process() {
  %t = l1.window_copy @model_state::@steps[@t] : !l1.buf<@gpu_0, tensor<f32>>
  l1.drop %t : !l1.buf<@gpu_0, tensor<f32>>
  l1.end
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

l1.pipeline @train = @load -> @fb
l1.pipeline @grad_return = @ret
l1.schedule pipelines [@train, @grad_return] actors [@model_state] pipeline_depth 2

// The window ops of a convolution: unfold (im2col) and fold (col2im) in
// two and one spatial dimensions.
// CHECK-LABEL: l1.tensor_graph @windows
// CHECK: l1.unfold %{{.*}} kernel [3, 3] stride [1, 1] padding [1, 1] : tensor<2x3x5x5xf32> -> tensor<2x5x5x3x3x3xf32>
// CHECK: l1.fold %{{.*}} kernel [3, 3] stride [1, 1] padding [1, 1] : tensor<2x5x5x3x3x3xf32> -> tensor<2x3x5x5xf32>
// CHECK: l1.unfold %{{.*}} kernel [4] stride [2] padding [0] : tensor<2x3x10xf32> -> tensor<2x4x3x4xf32>
// Channels last: [N, spatial..., C] and windows [N, O..., K..., C].
// CHECK: l1.unfold %{{.*}} kernel [3, 3] stride [2, 2] padding [1, 1] channels_last : tensor<2x5x5x3xf32> -> tensor<2x3x3x3x3x3xf32>
// CHECK: l1.fold %{{.*}} kernel [3, 3] stride [2, 2] padding [1, 1] channels_last : tensor<2x3x3x3x3x3xf32> -> tensor<2x5x5x3xf32>
l1.tensor_graph @windows on @gpu_0 then @winsink compute(%x: tensor<2x3x5x5xf32>, %s: tensor<2x3x10xf32>, %y: tensor<2x5x5x3xf32>) {
  %p = l1.unfold %x kernel [3, 3] stride [1, 1] padding [1, 1] : tensor<2x3x5x5xf32> -> tensor<2x5x5x3x3x3xf32>
  %f = l1.fold %p kernel [3, 3] stride [1, 1] padding [1, 1] : tensor<2x5x5x3x3x3xf32> -> tensor<2x3x5x5xf32>
  %q = l1.unfold %s kernel [4] stride [2] padding [0] : tensor<2x3x10xf32> -> tensor<2x4x3x4xf32>
  %r = l1.unfold %y kernel [3, 3] stride [2, 2] padding [1, 1] channels_last : tensor<2x5x5x3xf32> -> tensor<2x3x3x3x3x3xf32>
  %g = l1.fold %r kernel [3, 3] stride [2, 2] padding [1, 1] channels_last : tensor<2x3x3x3x3x3xf32> -> tensor<2x5x5x3xf32>
  l1.return %f, %q, %g : tensor<2x3x5x5xf32>, tensor<2x4x3x4xf32>, tensor<2x5x5x3xf32>
}
l1.stage @winsink on @cpu_0 process(%f: !l1.buf<@gpu_0, tensor<2x3x5x5xf32>>, %q: !l1.buf<@gpu_0, tensor<2x4x3x4xf32>>, %g: !l1.buf<@gpu_0, tensor<2x5x5x3xf32>>) {
  l1.drop %f : !l1.buf<@gpu_0, tensor<2x3x5x5xf32>>
  l1.drop %q : !l1.buf<@gpu_0, tensor<2x4x3x4xf32>>
  l1.drop %g : !l1.buf<@gpu_0, tensor<2x5x5x3xf32>>
  l1.end
}
