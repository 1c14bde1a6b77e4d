// RUN: synpl-opt %s -split-input-file -verify-diagnostics
// Malformed l3 programs: syntax and structure errors that are not one of the
// spec's verification rows (those are in ref-resolution.mlir (L3.1),
// domain-compatibility.mlir (L3.2), loss-signature.mlir (L3.3),
// constraint-agreement.mlir (L3.4) and finiteness.mlir (L3.5); each of those
// files also has one program per row violation below, collected here so that
// `invalid.mlir` shows one failing program for every row).

// L3.1
// expected-note @below {{@mnist has fields @images}}
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{[safety] L3.1: in @mnist::@pixels does not resolve: data @mnist has no field @pixels}}
l3.model @classify in @mnist::@pixels out !l3.dist<10> properties []

// -----

// L3.2
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
l3.loss @objective {
  // expected-error @below {{[consistency] L3.2: divergence between @classify::@out (!l3.dist<10>) and @mnist::@images (tensor<28x28xf32>) is not defined}}
  l3.divergence @ce(@classify::@out, @mnist::@images) weight 1.0
} combine weighted_sum

// -----

// L3.3
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
  l3.field @labels : tensor<1xui8>
}
// expected-note @below {{model @classify exposes @in, @out and @params}}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
l3.loss @objective {
  // expected-error @below {{[safety] L3.3: predicted @classify::@hidden reads @hidden, which model @classify does not expose}}
  l3.divergence @ce(@classify::@hidden, @mnist::@labels) weight 1.0
} combine weighted_sum

// -----

// L3.4
l3.data @mnist {
  // expected-note @below {{field declared here}}
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{[consistency] L3.4: autoregressive feeds the output back as input, but out !l3.dist<10> cannot be fed back into input @mnist::@images}}
l3.model @classify in @mnist::@images out !l3.dist<10> properties [depth(2), autoregressive]

// -----

// L3.5
l3.data @corpus {
  // expected-error @below {{[resource] L3.5: field @tokens domain is not finite}}
  l3.field @tokens : !l3.sequence<!l3.scalar<i32>, ?>
}

// -----

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{unknown model constraint 'deep'; expected depth(n), width(n), causal, autoregressive, equivariant(group), param_budget(n) or latency_budget(t)}}
l3.model @classify in @mnist::@images out !l3.dist<10> properties [deep(3)]

// -----

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{'1.5' is not an exact count}}
l3.model @classify in @mnist::@images out !l3.dist<10> properties [param_budget(1.5)]

// -----

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{expected a time unit (ms, us or s)}}
l3.model @classify in @mnist::@images out !l3.dist<10> properties [latency_budget(5)]

// -----

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{expected a time unit (ms, us or s), got 'min'}}
l3.model @classify in @mnist::@images out !l3.dist<10> properties [latency_budget(5 min)]

// -----

l3.data @mnist {
  // expected-error @below {{scalar dtype must be an integer, index or float type, got 'tensor<2xf32>'}}
  l3.field @images : !l3.scalar<tensor<2xf32>>
}

// -----

l3.data @records {
  // expected-error @below {{table column 'a' is declared twice}}
  l3.field @rows : !l3.table<a: !l3.scalar<f32>, a: !l3.scalar<i32>>
}

// -----

l3.data @records {
  // expected-error @below {{table must have at least one column}}
  l3.field @rows : !l3.table<>
}

// -----

l3.data @mnist {
  // expected-error @below {{'l3.field' op field @images domain is malformed: tensor element type !l3.dist<3> is not a numeric dtype}}
  l3.field @images : tensor<2x!l3.dist<3>>
}

// -----

l3.data @mnist {
  // expected-error @below {{'l3.field' op field @x domain is malformed: f32 is not an L3 domain}}
  l3.field @x : !l3.sequence<f32, 4>
}

// -----

l3.data @mnist {
  // expected-error @below {{'l3.field' op attribute 'domain' failed to satisfy constraint: type attribute of an L3 domain}}
  l3.field @images : memref<28x28xf32>
}

// -----

l3.data @mnist {
  // expected-error @below {{'l3.goal' op expects parent op 'builtin.module'}}
  l3.goal minimize(@x)
}

// -----

// expected-error @below {{'l3.field' op expects parent op 'l3.data'}}
l3.field @images : tensor<28x28xf32>

// -----

// expected-error @below {{'l3.loss' op has no terms}}
l3.loss @objective {
} combine weighted_sum

// -----

l3.loss @objective {
  // expected-error @below {{'l3.field' op expects parent op 'l3.data'}}
  l3.field @images : tensor<28x28xf32>
} combine weighted_sum

// -----

// expected-error @below {{'l3.goal' op minimize takes exactly one target, got 2}}
l3.goal minimize([@a, @b])

// -----

l3.loss @objective {
  // expected-error @below {{'l3.norm' op exponent p must be positive, got 0}}
  l3.norm @n(@classify::@params, p = 0) weight 1.0
} combine weighted_sum

// -----

l3.loss @objective {
  // expected-error @below {{'l3.custom' op reads nothing; a custom term must read at least one value}}
  l3.custom @c("f", reads []) weight 1.0
} combine weighted_sum

// -----

// expected-error @below {{'l3.model' op properties entry 5 : i64 is not a model constraint}}
"l3.model"() <{constraints = [#l3.depth<3>, 5 : i64], in_ref = @mnist::@images, out_domain = !l3.dist<10>, sym_name = "classify"}> : () -> ()

// -----

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{expected ':'}}
l3.model @classify in @mnist::@images out !l3.dist<10> properties [] hints [#l3.hint<l2 backward>]

// -----

l3.loss @objective {
  l3.divergence @ce(@a::@b, @c) weight 1.0
// expected-error @below {{expected a combinator: weighted_sum, sum, mean or max}}
} combine softmax

// -----

l3.loss @objective {
  // expected-error @below {{expected a comparison: lt, le, gt, ge, eq or ne}}
  l3.constraint @c(@a::@out <= 1.0) weight 1.0
} combine weighted_sum

// -----

// expected-error @below {{expected minimize, maximize or pareto}}
l3.goal optimize(@objective)

// -----

l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{expected a non-negative count}}
l3.model @classify in @mnist::@images out !l3.dist<10> properties [param_budget(-5)]

// -----

// expected-error @below {{'l3.data' op region should have no arguments}}
"l3.data"() <{sym_name = "d"}> ({
^bb0(%x: i32):
}) : () -> ()
