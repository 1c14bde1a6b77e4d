// The L3 properties bound what the search builds: depth(n) and width(n) the
// chain, causal the attention, autoregressive a feedback loop. The output
// verifies against the L3 program (the L2 rows that read it).
// RUN: synpl-opt %s -split-input-file --synpl-l3-to-l2 | FileCheck %s
// RUN: synpl-opt %s -split-input-file --synpl-l3-to-l2 | synpl-opt -split-input-file -verify-each > /dev/null

// depth(2) + width(64): one hidden stage, at most 64 wide.
// CHECK-LABEL: l2.methods @small_method for @small
// CHECK:         l2.linear(784, 64) %{{.*}} as "fc1"
// CHECK:         l2.linear(64, 10) %{{.*}} as "fc2"
// CHECK-NOT:     l2.linear
// CHECK:         backward
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
l3.model @small in @mnist::@images out !l3.dist<10>
    properties [depth(2), width(64)]

// -----

// causal, on a sequence tagger: the positions mix only through causal
// attention.
// CHECK-LABEL: l2.methods @tagger_method for @tagger
// CHECK:         infer(%{{.*}}: tensor<128x100x64xf32>)
// CHECK:         l2.attn(heads = {{[0-9]+}}, dim = {{[0-9]+}}, causal)
// CHECK:         l2.softmax %{{.*}} : tensor<128x100x5xf32>
l3.data @corpus {
  l3.field @frames : !l3.sequence<tensor<64xf32>, 100>
}
l3.model @tagger in @corpus::@frames out !l3.sequence<!l3.dist<5>, 100>
    properties [depth(3), width(128), causal]

// -----

// autoregressive: the output sequence is fed back as the next input,
// max_len times (an l2.recurrent; the cell counts once for depth).
// CHECK-LABEL: l2.methods @seq2seq_method for @seq2seq
// CHECK:         %[[R:.*]] = l2.recurrent(steps = 100) %{{.*}} as "feedback" : tensor<128x100x64xf32> {
// CHECK:           l2.yield %{{.*}} : tensor<128x100x64xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    l2.yield %[[R]] : tensor<128x100x64xf32>
l3.data @corpus {
  l3.field @frames : !l3.sequence<tensor<64xf32>, 100>
}
l3.model @seq2seq in @corpus::@frames out !l3.sequence<tensor<64xf32>, 100>
    properties [depth(3), width(128), autoregressive]

// -----

// causal + autoregressive, one frame out: the feedback loop, then a head
// over the whole sequence; the head is a stage too, so the cell has at most
// depth - 1 stages.
// CHECK-LABEL: l2.methods @forecast_method for @forecast
// CHECK:         %[[R:.*]] = l2.recurrent(steps = 100)
// CHECK:         %[[F:.*]] = l2.flatten %[[R]] : tensor<128x100x64xf32>
// CHECK-NEXT:    %[[O:.*]] = l2.linear(6400, 64) %[[F]]
// CHECK-NEXT:    l2.yield %[[O]] : tensor<128x64xf32>
l3.data @corpus {
  l3.field @frames : !l3.sequence<tensor<64xf32>, 100>
}
l3.model @forecast in @corpus::@frames out tensor<64xf32>
    properties [depth(3), width(128), causal, autoregressive]

// -----

// param_budget picks the widest chain that fits: 784*128 + 128*10 + ... is
// over 50K, so the hidden stage shrinks below the capacity target.
// CHECK-LABEL: l2.methods @budget_method for @budget
// CHECK:         l2.linear(784, 32) %{{.*}} as "fc1"
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
}
l3.model @budget in @mnist::@images out !l3.dist<10>
    properties [depth(2), width(512), param_budget(50K)]
