// An output of any tensor shape gets a head that produces it: a linear
// layer to the output's element count, then l2.reshape to its shape.
// RUN: synpl-opt %s -split-input-file --synpl-l3-to-l2 | FileCheck %s
// RUN: synpl-opt %s -split-input-file --synpl-l3-to-l2 | synpl-opt -split-input-file -verify-each > /dev/null

// An image autoencoder: reconstruction(data.images, ae.out) asks for the
// input's domain back (row L3.2).
// CHECK-LABEL: l2.methods @ae_method for @ae
// CHECK:         infer(%{{.*}}: tensor<128x28x28xf32>)
// CHECK:         %[[H:.*]] = l2.linear({{[0-9]+}}, 784) %{{.*}} as "fc{{[0-9]+}}"
// CHECK-NEXT:    %[[R:.*]] = l2.reshape [28, 28] %[[H]] : tensor<128x784xf32>
// CHECK-NEXT:    l2.yield %[[R]] : tensor<128x28x28xf32>
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
l3.model @ae in @mnist::@images out tensor<28x28xf32>
    properties [depth(3), width(256)]
l3.loss @objective {
  l3.reconstruction @rec(@mnist::@images, @ae::@out) weight 1.0
} combine weighted_sum
l3.goal minimize(@objective)

// -----

// A single value: a linear head of width 1 reshaped to a 0-d example.
// CHECK-LABEL: l2.methods @price_method for @price
// CHECK:         %[[H:.*]] = l2.linear({{[0-9]+}}, 1) %{{.*}} as "fc{{[0-9]+}}"
// CHECK-NEXT:    %[[R:.*]] = l2.reshape [] %[[H]] : tensor<128x1xf32>
// CHECK-NEXT:    l2.yield %[[R]] : tensor<128xf32>
l3.data @houses {
  l3.field @features : tensor<13xf32>
}
l3.model @price in @houses::@features out !l3.scalar<f32>
    properties [depth(2), width(32)]

// -----

// A conv autoencoder head: the conv stack's features decode to [1, 28, 28].
// CHECK-LABEL: l2.methods @cae_method for @cae
// CHECK:         l2.conv(1,
// CHECK:         %[[H:.*]] = l2.linear({{[0-9]+}}, 784)
// CHECK-NEXT:    %[[R:.*]] = l2.reshape [1, 28, 28] %[[H]] : tensor<128x784xf32>
// CHECK-NEXT:    l2.yield %[[R]] : tensor<128x1x28x28xf32>
l3.data @mnist {
  l3.field @images : tensor<1x28x28xf32>
}
l3.model @cae in @mnist::@images out tensor<1x28x28xf32>
    properties [depth(3), width(64), equivariant(translation)]
