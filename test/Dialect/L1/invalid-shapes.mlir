// L1.5 consistency: tensor shape propagation. Every tensor op checks its
// operand and result shapes (synpl/Analysis/Shapes.h); batch reads, window
// reads, state accesses and transfers keep their tensor types.
// RUN: synpl-opt %s -split-input-file -verify-diagnostics

// L1.5 positive: a linear layer with a broadcast bias and a mean loss.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.tensor_graph @g on @gpu_0 then @sink compute(%x: tensor<128x784xf32>, %w: tensor<784x256xf32>, %b: tensor<256xf32>) {
  %h = l1.matmul %x, %w : tensor<128x784xf32>, tensor<784x256xf32> -> tensor<128x256xf32>
  %bb = l1.broadcast %b : tensor<256xf32> -> tensor<128x256xf32>
  %y = l1.add %h, %bb : tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
  %m = l1.reduce_sum %y axis 1 : tensor<128x256xf32> -> tensor<128xf32>
  %l = l1.reduce_mean %m : tensor<128xf32> -> tensor<f32>
  l1.return %l : tensor<f32>
}
l1.stage @sink on @cpu_0 process(%r0: !l1.buf<@gpu_0, tensor<f32>>) {
  l1.drop %r0 : !l1.buf<@gpu_0, tensor<f32>>
  l1.end
}

// -----

// L1.5: tensor_matmul of [128,784] by [256,784].
l1.tensor_graph @g on @gpu_0 compute(%x: tensor<128x784xf32>, %w: tensor<256x784xf32>) {
  // expected-error @+1 {{[consistency] L1.5: matmul: matmul of [128, 784] by [256, 784]: inner dimensions 784 and 256 differ}}
  %h = l1.matmul %x, %w : tensor<128x784xf32>, tensor<256x784xf32> -> tensor<128x256xf32>
  l1.return %h : tensor<128x256xf32>
}

// -----

// L1.5: a declared result shape that the rule does not give.
l1.tensor_graph @g on @gpu_0 compute(%x: tensor<128x784xf32>, %w: tensor<784x256xf32>) {
  // expected-error @+1 {{[consistency] L1.5: matmul: result shape [128, 784] should be [128, 256]}}
  %h = l1.matmul %x, %w : tensor<128x784xf32>, tensor<784x256xf32> -> tensor<128x784xf32>
  l1.return %h : tensor<128x784xf32>
}

// -----

// L1.5: elementwise ops need equal shapes (broadcast is explicit).
l1.tensor_graph @g on @gpu_0 compute(%a: tensor<128x256xf32>, %b: tensor<256xf32>) {
  // expected-error @+1 {{[consistency] L1.5: add: elementwise operands have shapes [128, 256] and [256] (broadcast explicitly)}}
  %s = l1.add %a, %b : tensor<128x256xf32>, tensor<256xf32> -> tensor<128x256xf32>
  l1.return %s : tensor<128x256xf32>
}

// -----

// L1.5: a broadcast that does not fit.
l1.tensor_graph @g on @gpu_0 compute(%b: tensor<128xf32>) {
  // expected-error @+1 {{[consistency] L1.5: broadcast: cannot broadcast [128] to [128, 256]: input dimension 0 (128) is neither 1 nor 256}}
  %s = l1.broadcast %b : tensor<128xf32> -> tensor<128x256xf32>
  l1.return %s : tensor<128x256xf32>
}

// -----

// L1.5: a reduction over an axis the tensor does not have.
l1.tensor_graph @g on @gpu_0 compute(%a: tensor<128x10xf32>) {
  // expected-error @+1 {{[consistency] L1.5: reduce_max: axis 2 is out of range for [128, 10]}}
  %m = l1.reduce_max %a axis 2 : tensor<128x10xf32> -> tensor<128xf32>
  l1.return %m : tensor<128xf32>
}

// -----

// L1.5: element types must agree.
l1.tensor_graph @g on @gpu_0 compute(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{[consistency] L1.5: mul: element types 'f32' and 'f16' differ}}
  %m = l1.mul %a, %b : tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>
  l1.return %m : tensor<4xf32>
}

// -----

// L1.5: transcendental ops take floats.
l1.tensor_graph @g on @gpu_0 compute(%a: tensor<4xi32>) {
  // expected-error @+1 {{[consistency] L1.5: exp: takes floats, got 'tensor<4xi32>'}}
  %e = l1.exp %a : tensor<4xi32> -> tensor<4xi32>
  l1.return %e : tensor<4xi32>
}

// -----

// L1.5: a reshape that changes the element count.
l1.tensor_graph @g on @gpu_0 compute(%a: tensor<128x28x28xf32>) {
  // expected-error @+1 {{[consistency] L1.5: reshape: reshape from [128, 28, 28] to [128, 785] changes the number of elements}}
  %r = l1.reshape %a : tensor<128x28x28xf32> -> tensor<128x785xf32>
  l1.return %r : tensor<128x785xf32>
}

// -----

// L1.5: scale takes a rank-0 scalar.
l1.tensor_graph @g on @gpu_0 compute(%a: tensor<4xf32>, %s: tensor<1xf32>) {
  // expected-error @+1 {{[consistency] L1.5: scale: the scalar is a rank-0 tensor, got shape [1]}}
  %r = l1.scale %a, %s : tensor<4xf32>, tensor<1xf32> -> tensor<4xf32>
  l1.return %r : tensor<4xf32>
}

// -----

// L1.5: select needs an i1 condition of the operands' shape.
l1.tensor_graph @g on @gpu_0 compute(%c: tensor<4xf32>, %a: tensor<4xf32>) {
  // expected-error @+1 {{[consistency] L1.5: select: the condition has i1 elements, got 'tensor<4xf32>'}}
  %r = l1.select %c, %a, %a : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  l1.return %r : tensor<4xf32>
}

// -----

// L1.5: one_hot of labels appends the class dimension.
l1.tensor_graph @g on @gpu_0 compute(%y: tensor<128xui8>) {
  // expected-error @+1 {{[consistency] L1.5: one_hot: result shape [128, 11] should be [128, 10]}}
  %r = l1.one_hot %y classes 10 : tensor<128xui8> -> tensor<128x11xf32>
  l1.return %r : tensor<128x11xf32>
}

// -----

// L1.5: a transpose to the wrong shape.
l1.tensor_graph @g on @gpu_0 compute(%a: tensor<128x784xf32>) {
  // expected-error @+1 {{[consistency] L1.5: transpose: result shape [128, 784] should be [784, 128]}}
  %t = l1.transpose %a : tensor<128x784xf32> -> tensor<128x784xf32>
  l1.return %t : tensor<128x784xf32>
}

// -----

// L1.5: a batch read of a field yields [batch] ++ the field's shape.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.data @d {
  l1.field @images : tensor<28x28xui8> at @ssd_0 path "/tmp/i" format idx
}
l1.stage @load on @cpu_0 process() {
  // expected-error @+1 {{[consistency] L1.5: a batch of 128 of field @images ('tensor<28x28xui8>') is 'tensor<128x28x28xui8>', not 'tensor<128x784xui8>'}}
  %x = l1.read_batch @d [@images] batch 128 shuffle : !l1.buf<@ram_0, tensor<128x784xui8>>
  l1.drop %x : !l1.buf<@ram_0, tensor<128x784xui8>>
  l1.end
}

// -----

// L1.5: a window read with another type than the field's.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.actor @m on @gpu_0 {
  l1.state @w : tensor<784x256xf32> init kaiming
  l1.window @win [@w] readers [@g]
}
l1.tensor_graph @g on @gpu_0 reads [@m::@win] then @sink compute() {
  // expected-error @+1 {{[consistency] L1.5: field @w is 'tensor<784x256xf32>', read as 'tensor<256x784xf32>'}}
  %w = l1.window_read @m::@win[@w] : tensor<256x784xf32>
  l1.return %w : tensor<256x784xf32>
}
l1.stage @sink on @cpu_0 process(%r0: !l1.buf<@gpu_0, tensor<256x784xf32>>) {
  l1.drop %r0 : !l1.buf<@gpu_0, tensor<256x784xf32>>
  l1.end
}

// -----

// L1.5: a handler writing a value of another shape into a state field.
l1.system @s {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64"}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l1.actor @m on @gpu_0 {
  l1.state @b : tensor<256xf32> init zeros
  l1.handler @Set(%v: tensor<10xf32>) {
    // expected-error @+1 {{[consistency] L1.5: state field @b is 'tensor<256xf32>', not 'tensor<10xf32>'}}
    l1.state_write @b, %v : tensor<10xf32>
    l1.return
  }
}

// -----

// L1.5: a transfer keeps the tensor.
l1.stage @s on @cpu_0 process(%x: !l1.buf<@ram_0, tensor<4xf32>>) {
  // expected-error @+1 {{[consistency] L1.5: transfer keeps the tensor: 'tensor<4xf32>' becomes 'tensor<8xf32>'}}
  %g = l1.transfer %x : !l1.buf<@ram_0, tensor<4xf32>> -> !l1.buf<@gpu_0, tensor<8xf32>>
  l1.drop %g : !l1.buf<@gpu_0, tensor<8xf32>>
  l1.end
}

// -----

// L1.5: unfold's windows are [N, O..., C, K...]: a declared result in
// another order is refused.
l1.tensor_graph @g on @gpu_0 compute(%x: tensor<2x3x5x5xf32>) {
  // expected-error @+1 {{[consistency] L1.5: unfold: result shape [2, 3, 5, 5, 3, 3] should be [2, 5, 5, 3, 3, 3]}}
  %p = l1.unfold %x kernel [3, 3] stride [1, 1] padding [1, 1] : tensor<2x3x5x5xf32> -> tensor<2x3x5x5x3x3xf32>
  l1.return %p : tensor<2x3x5x5x3x3xf32>
}

// -----

// L1.5: channels last, the windows are [N, O..., K..., C]: the
// channels-first order is refused.
l1.tensor_graph @g on @gpu_0 compute(%x: tensor<2x5x5x2xf32>) {
  // expected-error @+1 {{[consistency] L1.5: unfold: result shape [2, 5, 5, 2, 3, 3] should be [2, 5, 5, 3, 3, 2]}}
  %p = l1.unfold %x kernel [3, 3] stride [1, 1] padding [1, 1] channels_last : tensor<2x5x5x2xf32> -> tensor<2x5x5x2x3x3xf32>
  l1.return %p : tensor<2x5x5x2x3x3xf32>
}

// -----

// L1.5: channels last, fold's result is [N, spatial..., C]: windows of 2
// channels do not sum onto 3.
l1.tensor_graph @g on @gpu_0 compute(%p: tensor<2x5x5x3x3x2xf32>) {
  // expected-error @+1 {{[consistency] L1.5: fold: the windows of [2, 5, 5, 3] are [2, 5, 5, 3, 3, 3], not [2, 5, 5, 3, 3, 2]}}
  %x = l1.fold %p kernel [3, 3] stride [1, 1] padding [1, 1] channels_last : tensor<2x5x5x3x3x2xf32> -> tensor<2x5x5x3xf32>
  l1.return %x : tensor<2x5x5x3xf32>
}

// -----

// L1.5: one kernel extent per spatial dimension.
l1.tensor_graph @g on @gpu_0 compute(%x: tensor<2x3x5x5xf32>) {
  // expected-error @+1 {{[consistency] L1.5: unfold: kernel, stride and padding need 2 entries (one per spatial dimension of [2, 3, 5, 5])}}
  %p = l1.unfold %x kernel [3] stride [1] padding [1] : tensor<2x3x5x5xf32> -> tensor<2x5x3x3xf32>
  l1.return %p : tensor<2x5x3x3xf32>
}

// -----

// L1.5: a kernel larger than the padded input.
l1.tensor_graph @g on @gpu_0 compute(%x: tensor<2x3x2xf32>) {
  // expected-error @+1 {{[consistency] L1.5: unfold: a kernel of 5 does not fit spatial dimension 0 of [2, 3, 2] (padding 1)}}
  %p = l1.unfold %x kernel [5] stride [1] padding [1] : tensor<2x3x2xf32> -> tensor<2x1x3x5xf32>
  l1.return %p : tensor<2x1x3x5xf32>
}

// -----

// L1.5: fold sums the windows of a tensor of its result's shape.
l1.tensor_graph @g on @gpu_0 compute(%p: tensor<2x5x5x3x3x3xf32>) {
  // expected-error @+1 {{[consistency] L1.5: fold: the windows of [2, 3, 6, 6] are [2, 6, 6, 3, 3, 3], not [2, 5, 5, 3, 3, 3]}}
  %x = l1.fold %p kernel [3, 3] stride [1, 1] padding [1, 1] : tensor<2x5x5x3x3x3xf32> -> tensor<2x3x6x6xf32>
  l1.return %x : tensor<2x3x6x6xf32>
}
