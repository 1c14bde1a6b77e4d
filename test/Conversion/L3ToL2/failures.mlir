// The L3 -> L2 search's failures, each a SearchFailure at the model:
// NoCandidates naming the binding check, TooManyCandidates with the count,
// and a property the grammar cannot serve.
// RUN: synpl-opt %s -split-input-file -verify-diagnostics --synpl-l3-to-l2

// NoCandidates: even the single linear(784, 10) has 7850 parameters.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{the infer DAG has 7850 parameters, over @classify's param_budget(1000); by layer: fc1 7850); loosen the constraint behind 'param_budget'}}
// expected-note @below {{check 'param_budget' rejected}}
l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [depth(2), width(64), param_budget(1000)]

// -----

// NoCandidates: no forward pass fits 0.05 us at the reference 10 TFLOP/s.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{loosen the constraint behind 'latency_budget'}}
// expected-note @below {{check 'latency_budget' rejected}}
l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [depth(2), width(64), latency_budget(0.05us)]

// -----

// TooManyCandidates: without depth(n) and width(n) the grammar's own bounds
// give far more than 10K candidates; counted, not enumerated.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{search L3->L2 @classify: too many candidates: 60478813519070949 candidates exceed the cap of 10000; the representation is too loose}}
// expected-note @below {{@classify declares no depth(n) or width(n); the grammar's own bounds apply (64 stages, width 65536)}}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []

// -----

// A looser width alone is enough to pass the cap at depth(5).
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{too many candidates}}
// expected-note @below {{@classify declares no width(n)}}
l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [depth(5)]

// -----

// equivariant(group): no architecture of the grammar is equivariant.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{search L3->L2 @classify: no candidates: not supported: equivariant(rotation): no architecture of the L3->L2 grammar}}
l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [depth(3), width(512), equivariant(rotation)]

// -----

// A table input has no fixed tensor view.
l3.data @rows {
  l3.field @row : !l3.table<age: !l3.scalar<f32>, height: !l3.scalar<f32>>
}
// expected-error @below {{not supported: input}}
l3.model @regress in @rows::@row out tensor<1xf32>
    properties [depth(2), width(64)]

// -----

// Integer inputs would need an embedding vocabulary L3 does not declare.
l3.data @d {
  l3.field @x : tensor<4xi32>
}
// expected-error @below {{not supported: input tensor<4xi32> holds integers}}
l3.model @m in @d::@x out !l3.dist<2>
    properties [depth(2), width(8)]
