// RUN: synpl-opt %s -split-input-file -verify-diagnostics
// Row L3.5 (resource, finiteness): every domain is bounded and concrete,
// weights are finite, and no declaration refers to itself recursively.

// L3.5 passes: bounded sequences, static positive shapes, a loss reading
// another loss and a term reading a sibling term (no cycle).
l3.data @corpus {
  l3.field @tokens : !l3.sequence<!l3.scalar<i32>, 512>
  l3.field @nested : !l3.sequence<!l3.sequence<tensor<4xf32>, 8>, 16>
  l3.field @rows : !l3.table<id: !l3.scalar<i64>, words: !l3.sequence<!l3.scalar<i32>, 32>>
  l3.field @next : !l3.scalar<i32>
}
l3.model @lm in @corpus::@tokens out !l3.dist<100> properties [causal, autoregressive]
l3.loss @base {
  l3.divergence @ce(@lm::@out, @corpus::@next) weight 1.0
  l3.custom @scaled("scale", reads [@base::@ce]) weight 0.5
} combine weighted_sum
l3.loss @total {
  l3.custom @all("sum", reads [@base]) weight 1.0
} combine weighted_sum
l3.goal minimize(@total)

// -----

// L3.5 fails: a `sequence` without `max_len`.
l3.data @corpus {
  // expected-error @below {{[resource] L3.5: field @tokens domain is not finite: !l3.sequence<!l3.scalar<i32>, ?> is unbounded; give it a max_len}}
  l3.field @tokens : !l3.sequence<!l3.scalar<i32>, ?>
}

// -----

// L3.5 fails: an unbounded sequence nested in a table column.
l3.data @records {
  // expected-error @below {{[resource] L3.5: field @rows domain is not finite: !l3.sequence<!l3.scalar<i32>, ?> is unbounded; give it a max_len}}
  l3.field @rows : !l3.table<id: !l3.scalar<i64>, words: !l3.sequence<!l3.scalar<i32>, ?>>
}

// -----

// L3.5 fails: an empty sequence bound.
l3.data @corpus {
  // expected-error @below {{[resource] L3.5: field @tokens domain is not finite: !l3.sequence<!l3.scalar<i32>, 0> has max_len 0; it must be positive}}
  l3.field @tokens : !l3.sequence<!l3.scalar<i32>, 0>
}

// -----

// L3.5 fails: a tensor with a dynamic dimension.
l3.data @mnist {
  // expected-error @below {{[resource] L3.5: field @images domain is not finite: tensor<?x28xf32> has a dynamic dimension (#0); every dimension must be a constant}}
  l3.field @images : tensor<?x28xf32>
}

// -----

// L3.5 fails: an unranked tensor.
l3.data @mnist {
  // expected-error @below {{[resource] L3.5: field @images domain is not finite: tensor<*xf32> has no fixed shape}}
  l3.field @images : tensor<*xf32>
}

// -----

// L3.5 fails: a zero-sized dimension.
l3.data @mnist {
  // expected-error @below {{[resource] L3.5: field @images domain is not finite: tensor<28x0xf32> has a dimension of size 0 (#1); sizes must be positive}}
  l3.field @images : tensor<28x0xf32>
}

// -----

// L3.5 fails: a distribution over no classes.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
// expected-error @below {{[resource] L3.5: out domain is not finite: !l3.dist<0> is over 0 classes; the class count must be positive}}
l3.model @classify in @mnist::@images out !l3.dist<0> properties []

// -----

// L3.5 fails: an unbounded model output.
l3.data @corpus {
  l3.field @tokens : !l3.sequence<!l3.scalar<i32>, 512>
}
// expected-error @below {{[resource] L3.5: out domain is not finite: !l3.sequence<!l3.dist<100>, ?> is unbounded; give it a max_len}}
l3.model @gen in @corpus::@tokens out !l3.sequence<!l3.dist<100>, ?> properties []

// -----

// L3.5 fails: a loss that reads itself.
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
  l3.field @labels : tensor<1xui8>
}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
// expected-error @below {{[resource] L3.5: loss @objective depends on itself: @objective -> @objective::@self -> @objective; declarations may not refer to each other recursively}}
l3.loss @objective {
  l3.divergence @ce(@classify::@out, @mnist::@labels) weight 1.0
  l3.custom @self("again", reads [@objective]) weight 1.0
} combine weighted_sum

// -----

// L3.5 fails: two losses that read each other (the first one reports it).
// expected-error @below {{[resource] L3.5: loss @a depends on itself: @a -> @a::@t -> @b -> @b::@t -> @a}}
l3.loss @a {
  l3.custom @t("f", reads [@b]) weight 1.0
} combine weighted_sum
l3.loss @b {
  l3.custom @t("g", reads [@a]) weight 1.0
} combine weighted_sum

// -----

// L3.5 fails: two terms of one loss that read each other.
// expected-error @below {{[resource] L3.5: loss @l depends on itself: @l::@y -> @l::@x -> @l::@y}}
l3.loss @l {
  l3.custom @x("f", reads [@l::@y]) weight 1.0
  l3.custom @y("g", reads [@l::@x]) weight 1.0
} combine weighted_sum

// -----

// L3.5 fails: a non-finite weight (only writable in the generic form).
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
l3.model @classify in @mnist::@images out !l3.dist<10> properties []
l3.loss @objective {
  // expected-error @below {{[resource] L3.5: term @n has a non-finite weight}}
  "l3.norm"() <{sym_name = "n", target = @classify::@params, p = 1.0 : f64, weight = 0x7FF0000000000000 : f64}> : () -> ()
} combine weighted_sum
