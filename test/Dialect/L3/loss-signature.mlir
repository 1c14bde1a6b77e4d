// RUN: synpl-opt %s -split-input-file -verify-diagnostics
// Row L3.3 (safety, loss signature): a loss term (or goal) reads only what a
// model exposes (@in, @out, @params) and values, not whole declarations.

// L3.3 passes: terms read a model's @in, @out and @params.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
  l3.field @labels : tensor<1xui8>
}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
l3.loss @objective {
  l3.divergence @ce(@classify::@out, @mnist::@labels) weight 1.0
  l3.norm @sparse(@classify::@params, p = 1) weight 1.0e-4
  l3.custom @probe("probe", reads [@classify::@in, @classify::@out]) weight 0.1
} combine weighted_sum
l3.goal minimize(@objective)

// -----

// L3.3 fails: a loss term reading `classify.hidden`, which the model does not expose.
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

// L3.3 fails: a custom term reading a model as a whole.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-note @below {{model @classify exposes @in, @out and @params}}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
l3.loss @objective {
  // expected-error @below {{[safety] L3.3: read #1 @classify reads model @classify as a whole; read one of its members}}
  l3.custom @c("c", reads [@mnist::@images, @classify]) weight 1.0
} combine weighted_sum

// -----

// L3.3 fails: a member of a member.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-note @below {{model @classify exposes @in, @out and @params}}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
l3.loss @objective {
  // expected-error @below {{[safety] L3.3: target @classify::@params::@w reads a member of @params, which has no members}}
  l3.norm @n(@classify::@params::@w, p = 2) weight 1.0
} combine weighted_sum

// -----

// L3.3 fails: a term reading a whole data declaration.
// expected-note @below {{@mnist has fields @images, @labels}}
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
  l3.field @labels : tensor<1xui8>
}
l3.model @autoenc in @mnist::@images out tensor<28x28xf32> properties []
l3.loss @objective {
  // expected-error @below {{[safety] L3.3: input @mnist reads data declaration @mnist as a whole; read one of its fields}}
  l3.reconstruction @rec(@mnist, @autoenc::@out) weight 1.0
} combine weighted_sum

// -----

// L3.3 fails: a goal reading a member the model does not expose.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-note @below {{model @critic exposes @in, @out and @params}}
l3.model @critic in @mnist::@images out !l3.scalar<f32> properties []
// expected-error @below {{[safety] L3.3: goal target @critic::@value reads @value, which model @critic does not expose}}
l3.goal maximize(@critic::@value)
