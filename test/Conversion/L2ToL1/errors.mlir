// The errors of --synpl-l2-to-l1, each located where the user must fix
// it: a hatch at its layer (or at the L3 declaration no lowering reads it
// on), a method at the l2.methods, a binding at its field, a failed
// placement search at the l2.methods (with a note per check that rejected
// candidates). The module is left as it was.
//
// RUN: synpl-opt %s --synpl-l2-to-l1 -split-input-file -verify-diagnostics

// A hatch naming a node the system does not have (L1.2 at the layer).

l1.system @single_gpu {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 8}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB", sm = 84}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l3.data @d {
  l3.field @x : tensor<8xf32>
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
      // expected-error @+1 {{[safety] L1.2: escape hatch #[l1::on(gpu_7)] names @gpu_7, which is not a node of system @single_gpu}}
      %h = l2.linear(8, 8) %x as "fc1" hints [#l3.hint<l1::on, "gpu_7">] : tensor<4x8xf32>
      %o = l2.linear(8, 4) %h as "fc2" : tensor<4x8xf32>
      %p = l2.softmax %o : tensor<4x4xf32>
      l2.yield %p : tensor<4x4xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// A hatch placing a layer on a memory node (L1.1 at the layer).

l1.system @single_gpu {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 8}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB", sm = 84}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l3.data @d {
  l3.field @x : tensor<8xf32>
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
      %h = l2.linear(8, 8) %x as "fc1" : tensor<4x8xf32>
      // expected-error @+1 {{[safety] L1.1: escape hatch #[l1::on(ram_0)] places the layer on @ram_0, a memory node; work runs on compute nodes}}
      %o = l2.linear(8, 4) %h as "fc2" hints [#l3.hint<l1::on, "ram_0">] : tensor<4x8xf32>
      %p = l2.softmax %o : tensor<4x4xf32>
      l2.yield %p : tensor<4x4xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// Two layers forced onto different nodes: one tensor graph holds the model.

l1.system @single_gpu {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 8}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB", sm = 84}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l3.data @d {
  l3.field @x : tensor<8xf32>
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
      // expected-note @+1 {{forced onto @gpu_0 here}}
      %h = l2.linear(8, 8) %x as "fc1" hints [#l3.hint<l1::on, "gpu_0">] : tensor<4x8xf32>
      // expected-error @+1 {{escape hatch #[l1::on(cpu_0)] is not lowered: the model is one tensor graph, and another layer is forced onto @gpu_0}}
      %o = l2.linear(8, 4) %h as "fc2" hints [#l3.hint<l1::on, "cpu_0">] : tensor<4x8xf32>
      %p = l2.softmax %o : tensor<4x4xf32>
      l2.yield %p : tensor<4x4xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// No compute node fits: the parameters and Adam moments do not fit a 1KB RAM.

l1.system @single_cpu {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "1KB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l3.data @d {
  l3.field @x : tensor<8xf32>
  l3.field @y : tensor<1xui8>
}
l3.model @m in @d::@x out !l3.dist<4> properties []
l3.loss @objective {
  l3.divergence @ce(@m::@out, @d::@y) weight 1.0
} combine weighted_sum
l3.goal minimize(@objective)
// expected-error @+2 {{search L2->L1 @single_cpu: no candidates: all 3 candidates were rejected; 'memory' rejected 3}}
// expected-note @+1 {{check 'memory' rejected 3 of 3 candidates (first: graph+actor@cpu_0 host@cpu_0 staging@ram_0 depth=1: parameters and optimizer state}}
l2.methods @method for @m
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x8xf32>) {
      %h = l2.linear(8, 8) %x as "fc1" : tensor<4x8xf32>
      %o = l2.linear(8, 4) %h as "fc2" : tensor<4x8xf32>
      %p = l2.softmax %o : tensor<4x4xf32>
      l2.yield %p : tensor<4x4xf32>
    }
    backward autodiff<mode = reverse>
    update adam<lr = 0.001>

// -----

// A stream window over tensor records (it reads text).

l1.system @single_cpu {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l3.data @d {
  l3.field @x : tensor<8xf32>
  l3.field @y : tensor<1xui8>
}
l3.model @m in @d::@x out !l3.dist<4> properties []
l3.loss @objective {
  l3.divergence @ce(@m::@out, @d::@y) weight 1.0
} combine weighted_sum
l3.goal minimize(@objective)
// expected-error @+1 {{sample #l2.stream_window<window = 4, stride = 1> is not lowered: a stream window reads text (a sequence(scalar(u8), n) field with format: text); @x is 'tensor<8xf32>'}}
l2.methods @method for @m
    sample stream_window<window = 4, stride = 1>
    infer(%x: tensor<4x8xf32>) {
      %h = l2.linear(8, 8) %x as "fc1" : tensor<4x8xf32>
      %o = l2.linear(8, 4) %h as "fc2" : tensor<4x8xf32>
      %p = l2.softmax %o : tensor<4x4xf32>
      l2.yield %p : tensor<4x4xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// A backward method other than reverse-mode autodiff.

l1.system @single_cpu {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l3.data @d {
  l3.field @x : tensor<8xf32>
  l3.field @y : tensor<1xui8>
}
l3.model @m in @d::@x out !l3.dist<4> properties []
l3.loss @objective {
  l3.divergence @ce(@m::@out, @d::@y) weight 1.0
} combine weighted_sum
l3.goal minimize(@objective)
// expected-error @+1 {{lowered 2 of 3 methods of @method; not lowered: backward #l2.evolution<pop = 50, sigma = 0.1, selection = truncation>: only autodiff(mode: reverse) is expanded into an explicit backward graph}}
l2.methods @method for @m
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x8xf32>) {
      %h = l2.linear(8, 8) %x as "fc1" : tensor<4x8xf32>
      %o = l2.linear(8, 4) %h as "fc2" : tensor<4x8xf32>
      %p = l2.softmax %o : tensor<4x4xf32>
      l2.yield %p : tensor<4x4xf32>
    }
    backward evolution<pop = 50, sigma = 0.1, selection = truncation>
    update sgd<lr = 0.1>

// -----

// Forward-mode autodiff.

l1.system @single_cpu {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l3.data @d {
  l3.field @x : tensor<8xf32>
  l3.field @y : tensor<1xui8>
}
l3.model @m in @d::@x out !l3.dist<4> properties []
l3.loss @objective {
  l3.divergence @ce(@m::@out, @d::@y) weight 1.0
} combine weighted_sum
l3.goal minimize(@objective)
// expected-error @+1 {{not lowered: backward #l2.autodiff<mode = forward>: forward-mode autodiff is not expanded}}
l2.methods @method for @m
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x8xf32>) {
      %h = l2.linear(8, 8) %x as "fc1" : tensor<4x8xf32>
      %o = l2.linear(8, 4) %h as "fc2" : tensor<4x8xf32>
      %p = l2.softmax %o : tensor<4x4xf32>
      l2.yield %p : tensor<4x4xf32>
    }
    backward autodiff<mode = forward>
    update sgd<lr = 0.1>

// -----

// An update method whose decay has no L1 form; the sample fails too: both are named.

l1.system @single_cpu {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l3.data @d {
  l3.field @x : tensor<8xf32>
  l3.field @y : tensor<1xui8>
}
l3.model @m in @d::@x out !l3.dist<4> properties []
l3.loss @objective {
  l3.divergence @ce(@m::@out, @d::@y) weight 1.0
} combine weighted_sum
l3.goal minimize(@objective)
// expected-error @+1 {{lowered 1 of 3 methods of @method; not lowered: sample #l2.replay<buffer = 64, priority = uniform, batch = 4>: L1 has no replay buffer to draw batches from; update #l2.schedule<warmup = 10, decay = exponential, inner = sgd<lr = 0.1>>: decay exponential needs a rate or step size}}
l2.methods @method for @m
    sample replay<buffer = 64, priority = uniform, batch = 4>
    infer(%x: tensor<4x8xf32>) {
      %h = l2.linear(8, 8) %x as "fc1" : tensor<4x8xf32>
      %o = l2.linear(8, 4) %h as "fc2" : tensor<4x8xf32>
      %p = l2.softmax %o : tensor<4x4xf32>
      l2.yield %p : tensor<4x4xf32>
    }
    backward autodiff<mode = reverse>
    update schedule<warmup = 10, decay = exponential, inner = sgd<lr = 0.1>>

// -----

// A data field bound to a node that is not a storage node.

l1.system @single_cpu {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l3.data @d {
  // expected-error @+1 {{[safety] L1.1: data field @x is bound to @ram_0, which is a memory node; data lives at rest on storage nodes}}
  l3.field @x : tensor<8xf32> {l1.at = @ram_0, l1.path = "x.idx"}
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
      %h = l2.linear(8, 8) %x as "fc1" : tensor<4x8xf32>
      %o = l2.linear(8, 4) %h as "fc2" : tensor<4x8xf32>
      %p = l2.softmax %o : tensor<4x4xf32>
      l2.yield %p : tensor<4x4xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// A data field bound to a node the system does not have.

l1.system @single_cpu {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l3.data @d {
  // expected-error @+1 {{[safety] L1.2: data field @x is bound to @nvme_9, which is not a node of system @single_cpu}}
  l3.field @x : tensor<8xf32> {l1.at = @nvme_9}
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
      %h = l2.linear(8, 8) %x as "fc1" : tensor<4x8xf32>
      %o = l2.linear(8, 4) %h as "fc2" : tensor<4x8xf32>
      %p = l2.softmax %o : tensor<4x4xf32>
      l2.yield %p : tensor<4x4xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// Backward expansion cannot write a layer: its error, and nothing built stays.

l1.system @single_cpu {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
l3.data @d {
  l3.field @x : tensor<8xf32>
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
      %h = l2.linear(8, 4) %x as "fc1" : tensor<4x8xf32>
      // expected-error @+1 {{lowered 2 of 4 ops; not lowered: 'l2.recurrent' at}}
      %d = l2.recurrent(until("converged"), max_steps = 8) %h : tensor<4x4xf32> {
      ^bb0(%s: tensor<4x4xf32>):
        %0 = l2.linear(4, 4) %s : tensor<4x4xf32>
        l2.yield %0 : tensor<4x4xf32>
      }
      %p = l2.softmax %d : tensor<4x4xf32>
      l2.yield %p : tensor<4x4xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// A user-supplied kernel hatch (#[l0::kernel]) written wrong: refused at the
// layer, never compiled as if the hatch were not there.

l1.system @single_gpu {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 8}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB", sm = 84}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l3.data @d {
  l3.field @x : tensor<8xf32>
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
      // expected-error @+1 {{escape hatch #[l0::kernel("a.ptx", "b", "c")]: write #[l0::kernel("file")], #[l0::kernel("file", "function")] or #[l0::kernel("file", "function(types) -> type")]}}
      %h = l2.linear(8, 8) %x as "fc1" hints [#l3.hint<l0::kernel, "\"a.ptx\", \"b\", \"c\"">] : tensor<4x8xf32>
      %o = l2.linear(8, 4) %h as "fc2" : tensor<4x8xf32>
      %p = l2.softmax %o : tensor<4x4xf32>
      l2.yield %p : tensor<4x4xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// A placement hatch on the model: no lowering reads it there.

l1.system @single_gpu {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 8}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB", sm = 84}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
l3.data @d {
  l3.field @x : tensor<8xf32>
  l3.field @y : tensor<1xui8>
}
// expected-error @+1 {{escape hatch #[l1::on(gpu_0)] is not lowered: no lowering reads l1 hatches on an l3.model (#[l1::on(<node>)] places a layer: write it on the layer in a methods block)}}
l3.model @m in @d::@x out !l3.dist<4> properties [] hints [#l3.hint<l1::on, "gpu_0">]
l3.loss @objective {
  l3.divergence @ce(@m::@out, @d::@y) weight 1.0
} combine weighted_sum
l3.goal minimize(@objective)
l2.methods @method for @m
    sample epoch_shuffle<batch = 4>
    infer(%x: tensor<4x8xf32>) {
      %h = l2.linear(8, 8) %x as "fc1" : tensor<4x8xf32>
      %o = l2.linear(8, 4) %h as "fc2" : tensor<4x8xf32>
      %p = l2.softmax %o : tensor<4x4xf32>
      l2.yield %p : tensor<4x4xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>

// -----

// Any hatch on a data source.

l1.system @single_gpu {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 8}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB", sm = 84}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
}
// expected-error @+1 {{escape hatch #[l2::sample(epoch_shuffle(batch: 4))] is not lowered: no lowering reads l2 hatches on an l3.data}}
l3.data @d hints [#l3.hint<l2::sample, "epoch_shuffle(batch: 4)">] {
  l3.field @x : tensor<8xf32>
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
      %h = l2.linear(8, 8) %x as "fc1" : tensor<4x8xf32>
      %o = l2.linear(8, 4) %h as "fc2" : tensor<4x8xf32>
      %p = l2.softmax %o : tensor<4x4xf32>
      l2.yield %p : tensor<4x4xf32>
    }
    backward autodiff<mode = reverse>
    update sgd<lr = 0.1>
