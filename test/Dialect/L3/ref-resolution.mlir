// RUN: synpl-opt %s -split-input-file -verify-diagnostics
// Row L3.1 (safety, ref resolution): every reference names an existing data
// field, model member, loss or loss term; hints target a lower layer.

// L3.1 passes: every reference resolves.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
  l3.field @labels : tensor<1xui8>
}
l3.model @classify in @mnist::@images out !l3.dist<10> properties [depth(3)]
    hints [#l3.hint<l2::backward, "evolution(pop: 50)">]
l3.loss @objective {
  l3.divergence @ce(@classify::@out, @mnist::@labels) weight 1.0
  l3.custom @aux("aux", reads [@objective::@ce]) weight 0.5
} combine weighted_sum
l3.goal minimize(@objective)

// -----

// L3.1 fails: `in: mnist.pixels` when mnist has no field pixels.
// expected-note @below {{@mnist has fields @images, @labels}}
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
  l3.field @labels : tensor<1xui8>
}
// expected-error @below {{[safety] L3.1: in @mnist::@pixels does not resolve: data @mnist has no field @pixels}}
l3.model @classify in @mnist::@pixels out !l3.dist<10> properties []

// -----

// L3.1 fails: the model's input names a data set that does not exist.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{[safety] L3.1: in @mnst::@images does not resolve: there is no declaration @mnst; did you mean @mnist?}}
l3.model @classify in @mnst::@images out !l3.dist<10> properties []

// -----

// L3.1 fails: the model's input names a whole data declaration.
// expected-note @below {{@mnist has fields @images}}
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{[safety] L3.1: in @mnist names data declaration @mnist as a whole; name one of its fields}}
l3.model @classify in @mnist out !l3.dist<10> properties []

// -----

// L3.1 fails: the model's input names another model.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
l3.model @encoder in @mnist::@images out tensor<32xf32> properties []
// expected-error @below {{[safety] L3.1: in @encoder::@out must name a data field, but @encoder is 'l3.model'}}
l3.model @classify in @encoder::@out out !l3.dist<10> properties []

// -----

// L3.1 fails: `goal: minimize(objectiv)`.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
  l3.field @labels : tensor<1xui8>
}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
l3.loss @objective {
  l3.divergence @ce(@classify::@out, @mnist::@labels) weight 1.0
} combine weighted_sum
// expected-error @below {{[safety] L3.1: goal target @objectiv does not resolve: there is no declaration @objectiv; did you mean @objective?}}
l3.goal minimize(@objectiv)

// -----

// L3.1 fails: a loss term reads a data field that does not exist.
// expected-note @below {{@mnist has fields @images, @labels}}
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
  l3.field @labels : tensor<1xui8>
}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
l3.loss @objective {
  // expected-error @below {{[safety] L3.1: target @mnist::@label does not resolve: data @mnist has no field @label}}
  l3.divergence @ce(@classify::@out, @mnist::@label) weight 1.0
} combine weighted_sum

// -----

// L3.1 fails: a loss term reads a model output of a model that does not exist.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
  l3.field @labels : tensor<1xui8>
}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
l3.loss @objective {
  // expected-error @below {{[safety] L3.1: predicted @clasify::@out does not resolve: there is no declaration @clasify; did you mean @classify?}}
  l3.divergence @ce(@clasify::@out, @mnist::@labels) weight 1.0
} combine weighted_sum

// -----

// L3.1 fails: a goal names a loss term that does not exist.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
  l3.field @labels : tensor<1xui8>
}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
// expected-note @below {{@objective has terms @ce}}
l3.loss @objective {
  l3.divergence @ce(@classify::@out, @mnist::@labels) weight 1.0
} combine weighted_sum
// expected-error @below {{[safety] L3.1: goal target @objective::@kl does not resolve: loss @objective has no term @kl}}
l3.goal pareto([@objective, @objective::@kl])

// -----

// L3.1 fails: minimize names a data field, not a loss.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
  // expected-note @below {{@mnist::@labels is declared here}}
  l3.field @labels : tensor<1xui8>
}
// expected-error @below {{[safety] L3.1: minimize target @mnist::@labels is a data field; minimize takes losses or loss terms}}
l3.goal minimize(@mnist::@labels)

// -----

// L3.1 fails: a reference names an op that is not an L3 declaration.
// expected-note @below {{@helper is here}}
func.func private @helper()
l3.loss @objective {
  // expected-error @below {{[safety] L3.1: read #0 @helper names 'func.func', which is not an L3 data, model or loss declaration}}
  l3.custom @c("c", reads [@helper]) weight 1.0
} combine weighted_sum

// -----

// L3.1 fails: an escape hatch must target a lower layer.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{[safety] L3.1: escape hatch #l3.hint<l3::inline> targets layer 'l3'; an L3 hint must target a lower layer (l2, l1 or l0)}}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
    hints [#l3.hint<l3::inline>]
