// RUN: synpl-opt %s -split-input-file -verify-diagnostics
// Row L3.2 (consistency, domain compatibility): the domains a model or a loss
// term combines agree with each other.

// L3.2 passes: a restated input domain equal to the field's; a divergence
// between dist(10) and a u8 label, a dist(10), a probability vector; equal
// domains for reconstruction and contrastive; sequences element-wise.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
  l3.field @labels : tensor<1xui8>
  l3.field @soft : !l3.dist<10>
  l3.field @probs : tensor<10xf32>
  l3.field @other : tensor<28x28xf32>
  l3.field @tags : !l3.sequence<!l3.scalar<i32>, 16>
}
l3.model @classify in @mnist::@images : tensor<28x28xf32> out !l3.dist<10> properties []
l3.model @tagger in @mnist::@images out !l3.sequence<!l3.dist<5>, 16> properties []
l3.model @reward in @mnist::@images out !l3.scalar<f32> properties []
l3.loss @objective {
  l3.divergence @ce(@classify::@out, @mnist::@labels) weight 1.0
  l3.divergence @kl(@classify::@out, @mnist::@soft) weight 1.0
  l3.divergence @pv(@mnist::@probs, @classify::@out) weight 1.0
  l3.divergence @seq(@tagger::@out, @mnist::@tags) weight 1.0
  l3.reconstruction @rec(@classify::@in, @mnist::@other) weight 1.0
  l3.contrastive @con(@classify::@in, @mnist::@images, @mnist::@other) weight 1.0
  l3.norm @l2(@classify::@out, p = 2) weight 1.0
  l3.constraint @cap(@reward::@out le 10.0) weight 1.0
  l3.constraint @cmp(@classify::@in ge @reward::@out) weight 1.0
} combine weighted_sum
l3.goal maximize(@reward::@out)

// -----

// L3.2 fails: a model whose `in` domain differs from the data field it names.
l3.data @mnist {
  // expected-note @below {{field declared here}}
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{[consistency] L3.2: model input domain tensor<784xf32> differs from the domain tensor<28x28xf32> of data field @mnist::@images}}
l3.model @classify in @mnist::@images : tensor<784xf32> out !l3.dist<10> properties []

// -----

// L3.2 fails: a divergence between dist(10) and a float image.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
l3.loss @objective {
  // expected-error @below {{[consistency] L3.2: divergence between @classify::@out (!l3.dist<10>) and @mnist::@images (tensor<28x28xf32>) is not defined}}
  l3.divergence @ce(@classify::@out, @mnist::@images) weight 1.0
} combine weighted_sum

// -----

// L3.2 fails: a divergence between distributions over different class counts.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
  l3.field @soft : !l3.dist<100>
}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
l3.loss @objective {
  // expected-error @below {{[consistency] L3.2: divergence between @classify::@out (!l3.dist<10>) and @mnist::@soft (!l3.dist<100>) is not defined}}
  l3.divergence @kl(@classify::@out, @mnist::@soft) weight 1.0
} combine weighted_sum

// -----

// L3.2 fails: a divergence against a float "label" (a class label is an integer).
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
  l3.field @labels : tensor<1xf32>
}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
l3.loss @objective {
  // expected-error @below {{[consistency] L3.2: divergence between @classify::@out (!l3.dist<10>) and @mnist::@labels (tensor<1xf32>) is not defined}}
  l3.divergence @ce(@classify::@out, @mnist::@labels) weight 1.0
} combine weighted_sum

// -----

// L3.2 fails: sequences of different max_len.
l3.data @text {
  l3.field @tokens : !l3.sequence<!l3.scalar<i32>, 128>
  l3.field @tags : !l3.sequence<!l3.scalar<i32>, 64>
}
l3.model @tagger in @text::@tokens out !l3.sequence<!l3.dist<5>, 128> properties []
l3.loss @objective {
  // expected-error @below {{[consistency] L3.2: divergence between @tagger::@out (!l3.sequence<!l3.dist<5>, 128>) and @text::@tags (!l3.sequence<!l3.scalar<i32>, 64>) is not defined}}
  l3.divergence @ce(@tagger::@out, @text::@tags) weight 1.0
} combine weighted_sum

// -----

// L3.2 fails: a reconstruction between different domains.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
l3.model @autoenc in @mnist::@images out tensor<784xf32> properties []
l3.loss @objective {
  // expected-error @below {{[consistency] L3.2: reconstruction of @autoenc::@in (tensor<28x28xf32>) by @autoenc::@out (tensor<784xf32>): the decoded value must have the input's domain}}
  l3.reconstruction @rec(@autoenc::@in, @autoenc::@out) weight 1.0
} combine weighted_sum

// -----

// L3.2 fails: a contrastive triple with a negative of another domain.
l3.data @pairs {
  l3.field @anchor : tensor<64xf32>
  l3.field @positive : tensor<64xf32>
  l3.field @negative : tensor<32xf32>
}
l3.loss @objective {
  // expected-error @below {{[consistency] L3.2: contrastive negative @pairs::@negative (tensor<32xf32>) does not have the domain of anchor @pairs::@anchor (tensor<64xf32>)}}
  l3.contrastive @triplet(@pairs::@anchor, @pairs::@positive, @pairs::@negative) weight 1.0
} combine weighted_sum

// -----

// L3.2 fails: parameters have no domain to compare in a divergence.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
  l3.field @labels : tensor<1xui8>
}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
l3.loss @objective {
  // expected-error @below {{[consistency] L3.2: predicted @classify::@params names model parameters, which have no domain; only norm and constraint terms read @params}}
  l3.divergence @ce(@classify::@params, @mnist::@labels) weight 1.0
} combine weighted_sum

// -----

// L3.2 fails: a table has no norm.
l3.data @records {
  l3.field @rows : !l3.table<age: !l3.scalar<i32>, label: !l3.dist<2>>
}
l3.loss @objective {
  // expected-error @below {{[consistency] L3.2: norm of @records::@rows (!l3.table<age: !l3.scalar<i32>, label: !l3.dist<2>>) is not defined: a table has no norm}}
  l3.norm @n(@records::@rows, p = 2) weight 1.0
} combine weighted_sum

// -----

// L3.2 fails: a constraint comparing values of different domains.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
l3.loss @objective {
  // expected-error @below {{[consistency] L3.2: constraint compares @classify::@out (!l3.dist<10>) with @classify::@in (tensor<28x28xf32>); both sides must have the same domain, or the right side must be a scalar}}
  l3.constraint @c(@classify::@out le @classify::@in) weight 1.0
} combine weighted_sum

// -----

// L3.2 fails: maximize needs a scalar.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-note @below {{model declared here}}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
// expected-error @below {{[consistency] L3.2: maximize(@classify::@out) needs a scalar, but @classify::@out has domain !l3.dist<10>}}
l3.goal maximize(@classify::@out)
