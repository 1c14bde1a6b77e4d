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

// Any depth bound is counted at once (in closed form), and a count past
// 2^64 saturates instead of wrapping.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{search L3->L2 @classify: too many candidates: more than 18446744073709551614 candidates (the count saturated) exceed the cap of 10000}}
l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [depth(10000000000), width(512)]

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

// -----

// equivariant(translation) reads images channels-first.
l3.data @photos {
  l3.field @rgb : tensor<32x32x3xf32>
}
// expected-error @below {{search L3->L2 @classify: no candidates: not supported: equivariant(translation) with input tensor<32x32x3xf32>: it looks channels-last ([H, W, C]); the grammar reads images channels-first, [C, H, W]}}
l3.model @classify in @photos::@rgb out !l3.dist<10>
    properties [depth(3), width(64), equivariant(translation)]

// -----

// Volumes: the grammar's convolutions are 2-D.
l3.data @scans {
  l3.field @volume : tensor<1x16x16x16xf32>
}
// expected-error @below {{not supported: equivariant(translation) with input tensor<1x16x16x16xf32>: the grammar convolves images of two spatial dimensions, [H, W] or channels-first [C, H, W]; this input has 4 dimensions}}
l3.model @classify in @scans::@volume out !l3.dist<2>
    properties [depth(3), width(64), equivariant(translation)]

// -----

// A feature vector has no spatial dimensions to convolve over.
l3.data @d {
  l3.field @x : tensor<13xf32>
}
// expected-error @below {{not supported: equivariant(translation) with input tensor<13xf32>: the grammar convolves images of two spatial dimensions, [H, W] or channels-first [C, H, W]; this input has 1 dimensions}}
l3.model @m in @d::@x out !l3.dist<2>
    properties [depth(3), width(64), equivariant(translation)]

// -----

// Nor does a sequence of feature vectors.
l3.data @d {
  l3.field @x : !l3.sequence<tensor<8xf32>, 16>
}
// expected-error @below {{not supported: equivariant(translation) with input !l3.sequence<tensor<8xf32>, 16>: the grammar's translation-equivariant stages are 2-D convolutions over an image tensor, not a sequence}}
l3.model @m in @d::@x out !l3.dist<2>
    properties [depth(3), width(64), equivariant(translation)]

// -----

// A conv stack needs a conv stage and a head.
l3.data @mnist {
  l3.field @images : tensor<1x28x28xf32>
}
// expected-error @below {{search L3->L2 @classify: no candidates: the grammar has no architecture within depth(1) and width(64): a conv stack needs depth(2) (conv, head) and width(8)}}
l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [depth(1), width(64), equivariant(translation)]

// -----

// A transformer block is three stages deep (attn and the MLP's two
// linears), between the embedding and the head.
l3.data @corpus {
  l3.field @bytes : !l3.sequence<!l3.scalar<ui8>, 64>
}
// expected-error @below {{search L3->L2 @lm: no candidates: the grammar has no architecture within depth(4) and width(512): a decoder-only transformer needs depth(5) (embed, attn, the MLP's two linears, head) and width(32) (its MLP is 4 x dim wide, dim >= 8)}}
l3.model @lm in @corpus::@bytes out !l3.sequence<!l3.dist<256>, 64>
    properties [depth(4), width(512), causal]

// -----

// Token ids wider than 16 bits give no vocabulary to embed.
l3.data @corpus {
  l3.field @tokens : !l3.sequence<!l3.scalar<i32>, 16>
}
// expected-error @below {{not supported: input !l3.sequence<!l3.scalar<i32>, 16>: token ids of 32 bits give no vocabulary the grammar can embed (embed(vocab, dim) needs ids of at most 16 bits)}}
l3.model @lm in @corpus::@tokens out !l3.sequence<!l3.dist<256>, 16>
    properties [depth(5), width(128), causal]

// -----

// The heads compute floats.
l3.data @d {
  l3.field @x : tensor<13xf32>
}
// expected-error @below {{not supported: output tensor<2xi32>: the grammar's heads compute floats (a linear layer); integer outputs are not in the grammar}}
l3.model @m in @d::@x out tensor<2xi32>
    properties [depth(2), width(64)]
