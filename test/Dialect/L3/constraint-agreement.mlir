// RUN: synpl-opt %s -split-input-file -verify-diagnostics
// Row L3.4 (consistency, constraint agreement): declared constraints agree
// with each other and with the declarations' structure.

// L3.4 passes: a causal, autoregressive language model whose sampled token
// feeds back into its token-sequence input; an autoregressive sequence model;
// every constraint once; a pareto goal of two objectives; `sum` with unit
// weights.
l3.data @corpus {
  l3.field @tokens : !l3.sequence<!l3.scalar<i32>, 512>
  l3.field @next : !l3.scalar<i32>
  l3.field @frames : !l3.sequence<tensor<64xf32>, 100>
}
l3.model @lm in @corpus::@tokens out !l3.dist<32000>
    properties [depth(2), width(512), causal, autoregressive,
                equivariant(translation), param_budget(10M), latency_budget(5ms)]
l3.model @forecast in @corpus::@frames out tensor<64xf32>
    properties [causal, autoregressive]
l3.model @seq2seq in @corpus::@frames out !l3.sequence<tensor<64xf32>, 100>
    properties [autoregressive]
l3.loss @ce {
  l3.divergence @next(@lm::@out, @corpus::@next) weight 1.0
} combine sum
l3.loss @size {
  l3.norm @l1(@lm::@params, p = 1) weight 1.0
} combine mean
l3.goal pareto([@ce, @size])

// -----

// L3.4 fails: `depth(2)` + `autoregressive` where the output (dist(10))
// cannot feed back into the input domain.
l3.data @mnist {
  // expected-note @below {{field declared here}}
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{[consistency] L3.4: autoregressive feeds the output back as input, but out !l3.dist<10> cannot be fed back into input @mnist::@images of domain tensor<28x28xf32> (a feedforward model under depth(2))}}
l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [depth(2), autoregressive]

// -----

// L3.4 fails: autoregressive over a sequence whose elements the output cannot become.
l3.data @audio {
  // expected-note @below {{field declared here}}
  l3.field @frames : !l3.sequence<tensor<64xf32>, 100>
}
// expected-error @below {{[consistency] L3.4: autoregressive feeds the output back as input, but out tensor<32xf32> cannot be fed back into input @audio::@frames of domain !l3.sequence<tensor<64xf32>, 100>}}
l3.model @gen in @audio::@frames out tensor<32xf32> properties [autoregressive]

// -----

// L3.4 fails: causal without a sequence input.
l3.data @mnist {
  // expected-note @below {{field declared here}}
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{[consistency] L3.4: causal constrains output_t to input_<=t, but input @mnist::@images of domain tensor<28x28xf32> is not a sequence}}
l3.model @classify in @mnist::@images out !l3.dist<10> properties [causal]

// -----

// L3.4 fails: a constraint given twice.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{[consistency] L3.4: constraint 'depth' is given twice}}
l3.model @classify in @mnist::@images out !l3.dist<10> properties [depth(3), width(512), depth(3)]

// -----

// L3.4 fails: conflicting values of one constraint.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{[consistency] L3.4: conflicting constraints #l3.param_budget<500K> and #l3.param_budget<1M>}}
l3.model @classify in @mnist::@images out !l3.dist<10> properties [param_budget(500K), param_budget(1M)]

// -----

// L3.4 fails: a non-positive depth admits no model.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{[consistency] L3.4: depth(0) admits no model; depth must be positive}}
l3.model @classify in @mnist::@images out !l3.dist<10> properties [depth(0)]

// -----

// L3.4 fails: a negative width admits no model.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{[consistency] L3.4: width(-8) admits no model; width must be positive}}
l3.model @classify in @mnist::@images out !l3.dist<10> properties [width(-8)]

// -----

// L3.4 fails: a zero parameter budget.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{[consistency] L3.4: param_budget(0) admits no model; the budget must be positive}}
l3.model @classify in @mnist::@images out !l3.dist<10> properties [param_budget(0)]

// -----

// L3.4 fails: a zero latency budget.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{[consistency] L3.4: latency_budget(0ms) admits no model; the budget must be positive and finite}}
l3.model @classify in @mnist::@images out !l3.dist<10> properties [latency_budget(0s)]

// -----

// L3.4 fails: equivariance to no group.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{[consistency] L3.4: equivariant() names no symmetry group}}
l3.model @classify in @mnist::@images out !l3.dist<10> properties [equivariant("")]

// -----

// L3.4 fails: `sum` ignores weights, so a weight other than 1.0 contradicts it.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
  l3.field @labels : tensor<1xui8>
}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
l3.loss @objective {
  l3.divergence @ce(@classify::@out, @mnist::@labels) weight 1.0
  // expected-error @below {{[consistency] L3.4: term @sparse has weight 0.0001, but combine sum ignores weights; use weighted_sum or weight 1.0}}
  l3.norm @sparse(@classify::@params, p = 1) weight 1.0e-4
} combine sum

// -----

// L3.4 fails: a pareto "front" of one objective.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
  l3.field @labels : tensor<1xui8>
}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
l3.loss @objective {
  l3.divergence @ce(@classify::@out, @mnist::@labels) weight 1.0
} combine weighted_sum
// expected-error @below {{[consistency] L3.4: pareto over 1 objective(s) is not a trade-off; use minimize or maximize}}
l3.goal pareto([@objective])

// -----

// L3.4 fails: a pareto front listing one objective twice.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
  l3.field @labels : tensor<1xui8>
}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
l3.loss @objective {
  l3.divergence @ce(@classify::@out, @mnist::@labels) weight 1.0
} combine weighted_sum
// expected-error @below {{[consistency] L3.4: pareto lists @objective twice}}
l3.goal pareto([@objective, @objective::@ce, @objective])

// -----

// L3.4 fails: two goals.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
  l3.field @labels : tensor<1xui8>
}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
l3.loss @objective {
  l3.divergence @ce(@classify::@out, @mnist::@labels) weight 1.0
} combine weighted_sum
// expected-note @below {{the first goal is here}}
l3.goal minimize(@objective)
// expected-error @below {{[consistency] L3.4: a spec has one goal; this is a second one}}
l3.goal minimize(@objective::@ce)
