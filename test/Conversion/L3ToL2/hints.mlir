// Escape hatches l2::sample / l2::backward / l2::update on a model force
// that axis of the L3 -> L2 search; a malformed or incompatible hatch is an
// error at the model that carries it.
// RUN: synpl-opt %s -split-input-file -verify-diagnostics --synpl-l3-to-l2 | FileCheck %s

// The spec's #[l2::backward(evolution(pop: 50))]: missing arguments take the
// documented defaults; the other axes are forced too.
// CHECK-LABEL: l2.methods @classify_method for @classify
// CHECK-NEXT:    sample epoch_shuffle<batch = 32, drop_last = true>
// CHECK-NEXT:    infer(%{{.*}}: tensor<32x28x28xf32>)
// CHECK:         backward evolution<pop = 50, sigma = 0.02, selection = truncation>
// CHECK-NEXT:    update schedule<warmup = 10, decay = cosine, inner = sgd<lr = 0.1>>
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [depth(2), width(128)]
    hints [#l3.hint<l2::backward, "evolution(pop: 50)">,
           #l3.hint<l2::update, "schedule(warmup: 10, inner: sgd(lr: 1e-1))">,
           #l3.hint<l2::sample, "epoch_shuffle(batch: 32)">]

// -----

// Lists, integer floats, and the attribute form.
// CHECK-LABEL: l2.methods @classify_method for @classify
// CHECK:         backward autodiff<mode = reverse, checkpoint = ["fc1"]>
// CHECK-NEXT:    update gradient_clip<max_norm = 1.0{{0*}}, inner = adam<lr = {{0.0003|3.0e-4}}>>
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [depth(2), width(128)]
    hints [#l3.hint<l2::backward, "#l2.autodiff<mode = reverse, checkpoint = [\22fc1\22]>">,
           #l3.hint<l2::update, "gradient_clip(max_norm: 1, inner: adam(lr: 3e-4))">]

// -----

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{[consistency] L2.2: escape hatch #[l2::backward(evolution(50))] is not a valid L2 method: argument 1 of evolution has no key; write evolution(key: value, ...)}}
l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [depth(2), width(128)]
    hints [#l3.hint<l2::backward, "evolution(50)">]

// -----

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{[consistency] L2.2: escape hatch #[l2::backward(adam(lr: 3e-4))] names #l2.adam<lr = 0.0003>, which is not a backward method}}
l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [depth(2), width(128)]
    hints [#l3.hint<l2::backward, "adam(lr: 3e-4)">]

// -----

// The l2 dialect's own attribute verifier judges the arguments.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{[consistency] L2.2: escape hatch #[l2::backward(evolution(pop: 0))] is not a valid L2 method: as an L2 attribute, #l2.evolution<pop = 0, sigma = 2.0e-2, selection = truncation>: pop must be positive, got 0}}
l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [depth(2), width(128)]
    hints [#l3.hint<l2::backward, "evolution(pop: 0)">]

// -----

// Incompatible: dfa's feedback must be the 10-wide output error.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{[consistency] L2.2: escape hatch #[l2::backward(dfa(feedback_dim: 7))] is incompatible with every candidate architecture: check 'backward' rejected}}
l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [depth(2), width(128)]
    hints [#l3.hint<l2::backward, "dfa(feedback_dim: 7)">]

// -----

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{[consistency] L2.2: escape hatch #[l2::loss(sequential)]: the L3->L2 search takes l2::sample, l2::infer, l2::backward and l2::update; 'loss' is none of them}}
l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [depth(2), width(128)]
    hints [#l3.hint<l2::loss, "sequential">]

// -----

// Incompatible: muon updates matrices only, and every chain has biases.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{[consistency] L2.2: escape hatch #[l2::update(muon(lr: 2e-2))] is incompatible with every candidate architecture: check 'update' rejected}}
l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [depth(2), width(128)]
    hints [#l3.hint<l2::update, "muon(lr: 2e-2)">]

// -----

// Per-parameter routing makes muon compatible (matrices muon, vectors adam).
// CHECK-LABEL: l2.methods @classify_method for @classify
// CHECK:         update per_param<others = adam<lr = {{0.0003|3.0e-4}}>, matrix = muon<lr = 0.02>>
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [depth(2), width(128)]
    hints [#l3.hint<l2::update, "per_param(matrix: muon(lr: 2e-2), others: adam())">]

// -----

// Two hatches for one axis.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{[consistency] L2.2: escape hatch #[l2::backward(autodiff(mode: forward))]: a second l2::backward hint on @classify}}
l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [depth(2), width(128)]
    hints [#l3.hint<l2::backward, "autodiff(mode: reverse)">, #l3.hint<l2::backward, "autodiff(mode: forward)">]

// -----

// A nested method is a call: `adam()`, not `adam`.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{escape hatch #[l2::update(gradient_clip(max_norm: 1.0, inner: adam))] is not a valid L2 method: write the nested method 'adam' as a call, adam(...) (adam() for its defaults)}}
l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [depth(2), width(128)]
    hints [#l3.hint<l2::update, "gradient_clip(max_norm: 1.0, inner: adam)">]
