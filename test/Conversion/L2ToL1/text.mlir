// --synpl-l2-to-l1 over text: a sequence(scalar(u8), N) field bound with
// format text becomes two text fields of one file (the window's first N
// bytes and the N after the first, shift 1) read in one batch; the graph's
// embedding gathers the window's rows of its table (and scatters their
// gradient back); the divergence compares the output at every position with
// the next byte (one_hot of the shifted window, mean over batch x N rows); the loop's
// steps reach the schedule. Then the errors, at the field or the methods.
// RUN: synpl-opt %s --synpl-l2-to-l1 -split-input-file -verify-diagnostics | FileCheck %s

// CHECK: l1.data @corpus {
// CHECK-NEXT: l1.field @bytes : tensor<8xui8> at @ssd_0 path "corpus.txt" format text stride 2{{$}}
// CHECK-NEXT: l1.field @bytes_next : tensor<8xui8> at @ssd_0 path "corpus.txt" format text shift 1 stride 2{{$}}
// CHECK: l1.read_batch @corpus [@bytes, @bytes_next] batch 4 shuffle drop_last seed 0
// CHECK: l1.tensor_graph @forward_backward {{.*}} compute(%[[IN:.*]]: tensor<4x8xui8>, %[[NEXT:.*]]: tensor<4x8xui8>)
// CHECK: l1.gather %{{.*}}[%[[IN]]] : tensor<256x16xf32>, tensor<4x8xui8> -> tensor<4x8x16xf32>
// CHECK: %[[FLAT:.*]] = l1.reshape %[[NEXT]] : tensor<4x8xui8> -> tensor<32xui8>
// CHECK: l1.one_hot %[[FLAT]] classes 256 : tensor<32xui8> -> tensor<32x256xf32>
// CHECK: l1.const -3.125000e-02 : tensor<f32>
// CHECK: l1.scatter_add %{{.*}}[%[[IN]]] : tensor<4x8x16xf32>, tensor<4x8xui8> -> tensor<256x16xf32>
// CHECK: l1.schedule {{.*}} epochs 1 {{.*}}steps 100
l1.system @single_cpu {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l3.data @corpus {
  l3.field @bytes : !l3.sequence<!l3.scalar<ui8>, 8> {l1.at = @ssd_0, l1.format = "text", l1.path = "corpus.txt"}
}
l3.model @lm in @corpus::@bytes out !l3.sequence<!l3.dist<256>, 8> properties [causal]
l3.loss @objective {
  l3.divergence @ce(@lm::@out, @corpus::@bytes) weight 1.0
} combine weighted_sum
l3.goal minimize(@objective)
l2.methods @m for @lm
    sample stream_window<window = 8, stride = 2, batch = 4>
    infer(%x: tensor<4x8xui8>) {
      %0 = l2.embed(vocab = 256, dim = 16, positions = 8) %x as "embed1" : tensor<4x8xui8>
      %1 = l2.linear(16, 256) %0 as "fc1" : tensor<4x8x16xf32>
      %2 = l2.softmax %1 : tensor<4x8x256xf32>
      l2.yield %2 : tensor<4x8x256xf32>
    }
    backward autodiff<mode = reverse>
    update adam<lr = 0.001>
    train loop<epochs = 1, steps = 100>

// -----

l1.system @single_cpu {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l3.data @corpus {
  // expected-error @+1 {{data field @bytes is not lowered: a sequence field is read from a text file; bind it with `format: text`}}
  l3.field @bytes : !l3.sequence<!l3.scalar<ui8>, 8> {l1.at = @ssd_0, l1.path = "corpus.txt"}
}
l3.model @lm in @corpus::@bytes out !l3.sequence<!l3.dist<256>, 8> properties [causal]
l3.loss @objective {
  l3.divergence @ce(@lm::@out, @corpus::@bytes) weight 1.0
} combine weighted_sum
l3.goal minimize(@objective)
l2.methods @m for @lm
    sample stream_window<window = 8, stride = 1, batch = 4>
    infer(%x: tensor<4x8xui8>) {
      %0 = l2.embed(vocab = 256, dim = 16) %x as "embed1" : tensor<4x8xui8>
      %1 = l2.linear(16, 256) %0 as "fc1" : tensor<4x8x16xf32>
      %2 = l2.softmax %1 : tensor<4x8x256xf32>
      l2.yield %2 : tensor<4x8x256xf32>
    }
    backward autodiff<mode = reverse>
    update adam<lr = 0.001>

// -----

l1.system @single_cpu {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l3.data @d {
  // expected-error @+1 {{data field @x is not lowered: format text holds a sequence(scalar(u8), n); the field's domain is 'tensor<8xf32>'}}
  l3.field @x : tensor<8xf32> {l1.at = @ssd_0, l1.format = "text", l1.path = "x.txt"}
  l3.field @y : tensor<1xui8>
}
l3.model @m in @d::@x out !l3.dist<4> properties []
l3.loss @objective {
  l3.divergence @ce(@m::@out, @d::@y) weight 1.0
} combine weighted_sum
l3.goal minimize(@objective)
l2.methods @method for @m
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x8xf32>) {
      %o = l2.linear(8, 4) %x as "fc1" : tensor<4x8xf32>
      %p = l2.softmax %o : tensor<4x4xf32>
      l2.yield %p : tensor<4x4xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

l1.system @single_cpu {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l3.data @corpus {
  // expected-error @+1 {{data field @bytes is not lowered: a text field names its file (`@ <node>, path: "...", format: text`)}}
  l3.field @bytes : !l3.sequence<!l3.scalar<ui8>, 8> {l1.format = "text"}
}
l3.model @lm in @corpus::@bytes out !l3.sequence<!l3.dist<256>, 8> properties [causal]
l3.loss @objective {
  l3.divergence @ce(@lm::@out, @corpus::@bytes) weight 1.0
} combine weighted_sum
l3.goal minimize(@objective)
l2.methods @m for @lm
    sample stream_window<window = 8, stride = 1, batch = 4>
    infer(%x: tensor<4x8xui8>) {
      %0 = l2.embed(vocab = 256, dim = 16) %x as "embed1" : tensor<4x8xui8>
      %1 = l2.linear(16, 256) %0 as "fc1" : tensor<4x8x16xf32>
      %2 = l2.softmax %1 : tensor<4x8x256xf32>
      l2.yield %2 : tensor<4x8x256xf32>
    }
    backward autodiff<mode = reverse>
    update adam<lr = 0.001>

// -----

l1.system @single_cpu {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l3.data @corpus {
  l3.field @bytes : !l3.sequence<!l3.scalar<ui8>, 8> {l1.at = @ssd_0, l1.format = "text", l1.path = "corpus.txt"}
}
l3.model @lm in @corpus::@bytes out !l3.sequence<!l3.dist<256>, 8> properties [causal]
l3.loss @objective {
  l3.divergence @ce(@lm::@out, @corpus::@bytes) weight 1.0
} combine weighted_sum
l3.goal minimize(@objective)
// expected-error @+1 {{sample #l2.stream_window<window = 16, stride = 1, batch = 4> is not lowered: its window (16) is the length of the sequences it serves, and @bytes holds sequences of 8}}
l2.methods @m for @lm
    sample stream_window<window = 16, stride = 1, batch = 4>
    infer(%x: tensor<4x8xui8>) {
      %0 = l2.embed(vocab = 256, dim = 16) %x as "embed1" : tensor<4x8xui8>
      %1 = l2.linear(16, 256) %0 as "fc1" : tensor<4x8x16xf32>
      %2 = l2.softmax %1 : tensor<4x8x256xf32>
      l2.yield %2 : tensor<4x8x256xf32>
    }
    backward autodiff<mode = reverse>
    update adam<lr = 0.001>
