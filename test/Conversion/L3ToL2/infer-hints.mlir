// #[l2::infer(...)] pins the architecture: the search keeps its sample,
// backward and update axes and builds the hinted DAG (the .syn infer
// syntax), which the L2 verifiers judge against the model's constraints.
// A hint that does not parse, does not build, or breaks a constraint is an
// error at the model.
// RUN: synpl-opt %s -split-input-file -verify-diagnostics --synpl-l3-to-l2 | FileCheck %s
// RUN: not synpl-opt %s -split-input-file --synpl-l3-to-l2 --synpl-search-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// The PyTorch peer's CNN, forced: positional and keyed arguments, bare
// activations, the sample and update still searched.
// CHECK-LABEL: l2.methods @classify_method for @classify
// CHECK-NEXT:    sample epoch_shuffle<batch = 128, drop_last = true>
// CHECK-NEXT:    infer(%[[IN:.*]]: tensor<128x1x28x28xf32>) {
// CHECK-NEXT:      l2.conv(1, 32, kernel = 3, stride = 1, padding = 1) %[[IN]] as "conv1"
// CHECK-NEXT:      l2.act(relu)
// CHECK-NEXT:      l2.pool(max, kernel = 2)
// CHECK-NEXT:      l2.conv(32, 64, kernel = 3, stride = 1, padding = 1) %{{.*}} as "conv2"
// CHECK-NEXT:      l2.act(relu)
// CHECK-NEXT:      l2.pool(max, kernel = 2)
// CHECK-NEXT:      l2.flatten
// CHECK-NEXT:      l2.linear(3136, 128) %{{.*}} as "fc1"
// CHECK-NEXT:      l2.act(relu)
// CHECK-NEXT:      l2.linear(128, 10) %{{.*}} as "fc2"
// CHECK-NEXT:      l2.softmax
// CHECK-NEXT:      l2.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    backward autodiff<mode = reverse>
// CHECK-NEXT:    update schedule<warmup = 1000, decay = cosine, inner = adam<lr = {{0.0003|3.0e-4}}>>
// REPORT: search L3->L2 @classify: 9 enumerated (space 9), 0 rejected, 9 survived; winner: epoch_shuffle(128) infer hint autodiff<mode = reverse> schedule(adam)
// REPORT: why: cost
l3.data @mnist {
  l3.field @images : tensor<1x28x28xf32>
}
l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [depth(4), width(128), param_budget(500K)]
    hints [#l3.hint<l2::infer, "sequential [conv(1, 32, 3, stride: 1, padding: 1), relu, pool(max, 2), conv(32, 64, kernel: 3, padding: 1), act(relu), pool(max, 2), linear(3136, 128), relu, linear(128, 10), softmax]">]

// -----

// residual [...] and the call form sequential([...]).
// CHECK-LABEL: l2.methods @res_method for @res
// CHECK:         %[[A:.*]] = l2.act(gelu)
// CHECK-NEXT:    %[[B:.*]] = l2.linear(64, 64) %[[A]] as "fc2"
// CHECK-NEXT:    %[[C:.*]] = l2.norm(layer) %[[B]] as "norm1"
// CHECK-NEXT:    l2.add %[[A]], %[[C]]
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
l3.model @res in @mnist::@images out !l3.dist<10>
    properties [depth(3), width(64)]
    hints [#l3.hint<l2::infer, "sequential([linear(784, 64), gelu, residual [linear(64, 64), norm(layer)], linear(64, 10), softmax])">]

// -----

// The hinted DAG is checked against the constraints: too wide.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{[consistency] L2.2: escape hatch #[l2::infer(sequential [linear(784, 256), relu, linear(256, 10), softmax])] violates the constraints of @wide: check 'width' rejected 9 of 9 (first: epoch_shuffle(64) infer hint autodiff<mode = reverse> schedule(adam): [consistency] L2.2: 'l2.linear' "fc1" is 256 wide, but @wide allows width(64))}}
l3.model @wide in @mnist::@images out !l3.dist<10>
    properties [depth(3), width(64)]
    hints [#l3.hint<l2::infer, "sequential [linear(784, 256), relu, linear(256, 10), softmax]">]

// -----

// Over the parameter budget.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{violates the constraints of @big: check 'param_budget' rejected 9 of 9 (first: epoch_shuffle(64) infer hint autodiff<mode = reverse> schedule(adam): [consistency] L2.2: the infer DAG has 50890 parameters, over @big's param_budget(10000)}}
l3.model @big in @mnist::@images out !l3.dist<10>
    properties [depth(3), width(64), param_budget(10K)]
    hints [#l3.hint<l2::infer, "sequential [linear(784, 64), relu, linear(64, 10), softmax]">]

// -----

// Too deep.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{check 'depth' rejected 9 of 9 (first: epoch_shuffle(64) infer hint autodiff<mode = reverse> schedule(adam): [consistency] L2.2: the infer DAG composes 3 stages (linear, conv, attn, embed) on its longest path, but @deep allows depth(2))}}
l3.model @deep in @mnist::@images out !l3.dist<10>
    properties [depth(2), width(64)]
    hints [#l3.hint<l2::infer, "sequential [linear(784, 64), relu, linear(64, 64), relu, linear(64, 10), softmax]">]

// -----

// Not the output domain.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{check 'output-domain' rejected 9 of 9}}
l3.model @out in @mnist::@images out !l3.dist<10>
    properties [depth(2), width(64)]
    hints [#l3.hint<l2::infer, "sequential [linear(784, 64), relu, linear(64, 5), softmax]">]

// -----

// Non-causal attention in a causal model.
l3.data @corpus {
  l3.field @bytes : !l3.sequence<!l3.scalar<ui8>, 16>
}
// expected-error @below {{check 'causal' rejected 6 of 6 (first: stream_window(32) infer hint autodiff<mode = reverse> schedule(adam): [consistency] L2.2: 'l2.attn' "attn1" attends to future positions, but @lm is causal; write attn(..., causal)}}
l3.model @lm in @corpus::@bytes out !l3.sequence<!l3.dist<256>, 16>
    properties [depth(3), width(64), causal]
    hints [#l3.hint<l2::infer, "sequential [embed(256, 32, positions: 16), attn(2, 32), linear(32, 256), softmax]">]

// -----

// A layer whose shape rule rejects its input (row L2.1).
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{[consistency] L2.2: escape hatch #[l2::infer(sequential [conv(1, 8, 3), relu])] does not build: [consistency] L2.1: conv(1, 8, ...) expects 1 input channels (dimension 1), got tensor<64x28x28xf32>}}
l3.model @shape in @mnist::@images out !l3.dist<10>
    properties [depth(2), width(64)]
    hints [#l3.hint<l2::infer, "sequential [conv(1, 8, 3), relu]">]

// -----

// Not a layer.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{escape hatch #[l2::infer(sequential [dense(784, 10)])] does not build: 'dense' is not a layer (linear, conv, attn, norm, act, embed, pool, dropout, softmax, flatten, reshape, relu, gelu, silu, swish, sequential, residual)}}
l3.model @name in @mnist::@images out !l3.dist<10>
    properties [depth(2), width(64)]
    hints [#l3.hint<l2::infer, "sequential [dense(784, 10)]">]

// -----

// Bad arguments.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{does not build: linear has no argument 'width' (it takes in, out)}}
l3.model @args in @mnist::@images out !l3.dist<10>
    properties [depth(2), width(64)]
    hints [#l3.hint<l2::infer, "sequential [linear(784, width: 10)]">]

// -----

// Does not parse.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{[consistency] L2.2: escape hatch #[l2::infer(sequential [linear(784, 10)] softmax)] is not an infer method: unexpected 'softmax' after the method}}
l3.model @syntax in @mnist::@images out !l3.dist<10>
    properties [depth(2), width(64)]
    hints [#l3.hint<l2::infer, "sequential [linear(784, 10)] softmax">]

// -----

// Two infer hints.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{escape hatch #[l2::infer(sequential [linear(784, 10)])]: a second l2::infer hint on @two}}
l3.model @two in @mnist::@images out !l3.dist<10>
    properties [depth(2), width(64)]
    hints [#l3.hint<l2::infer, "sequential [linear(784, 10), softmax]">, #l3.hint<l2::infer, "sequential [linear(784, 10)]">]
