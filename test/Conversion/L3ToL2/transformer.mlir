// Token sequences (sequence(scalar(u8), n)): decoder-only transformers,
// embed(vocab, dim, positions: n), pre-norm residual blocks of causal
// attention and a 4 x dim gelu MLP, a final norm and a head per position.
// RUN: synpl-opt %s -split-input-file --synpl-l3-to-l2 | FileCheck %s
// RUN: synpl-opt %s -split-input-file --synpl-l3-to-l2 | synpl-opt -split-input-file -verify-each > /dev/null
// RUN: synpl-opt %s -split-input-file --synpl-l3-to-l2 --synpl-search-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// The character LM of the PyTorch peer: D = 128, 2 blocks, 4 heads, context
// 64, 256 byte values (470,784 parameters).
// CHECK-LABEL: l2.methods @lm_method for @lm
// CHECK-NEXT:    sample stream_window<window = 64, stride = 1, batch = [[B:[0-9]+]]>
// CHECK-NEXT:    infer(%[[IN:.*]]: tensor<[[B]]x64xui8>) {
// CHECK-NEXT:      %[[E:.*]] = l2.embed(vocab = 256, dim = 128, positions = 64) %[[IN]] as "embed1"
// CHECK-NEXT:      %[[N1:.*]] = l2.norm(layer) %[[E]] as "norm1" : tensor<[[B]]x64x128xf32>
// CHECK-NEXT:      %[[A1:.*]] = l2.attn(heads = 4, dim = 128, causal) %[[N1]] as "attn1"
// CHECK-NEXT:      %[[X1:.*]] = l2.add %[[E]], %[[A1]]
// CHECK-NEXT:      %[[N2:.*]] = l2.norm(layer) %[[X1]] as "norm2"
// CHECK-NEXT:      %[[U:.*]] = l2.linear(128, 512) %[[N2]] as "fc1"
// CHECK-NEXT:      %[[G:.*]] = l2.act(gelu) %[[U]] : tensor<[[B]]x64x512xf32>
// CHECK-NEXT:      %[[D:.*]] = l2.linear(512, 128) %[[G]] as "fc2"
// CHECK-NEXT:      %[[X2:.*]] = l2.add %[[X1]], %[[D]]
// CHECK:           l2.attn(heads = 4, dim = 128, causal) %{{.*}} as "attn2"
// CHECK:           l2.linear(512, 128) %{{.*}} as "fc4"
// CHECK-NEXT:      %[[X4:.*]] = l2.add
// CHECK-NEXT:      %[[NF:.*]] = l2.norm(layer) %[[X4]] as "norm5"
// CHECK-NEXT:      %[[H:.*]] = l2.linear(128, 256) %[[NF]] as "fc5"
// CHECK-NEXT:      %[[S:.*]] = l2.softmax %[[H]] : tensor<[[B]]x64x256xf32>
// CHECK-NEXT:      l2.yield %[[S]] : tensor<[[B]]x64x256xf32>
// REPORT: search L3->L2 @lm: [[N:[0-9]+]] enumerated (space [[N]]), {{[0-9]+}} rejected, {{[0-9]+}} survived; winner: stream_window({{32|64}}) depth 8 transformer dim 128 blocks 2 heads 4
// REPORT: 1 {{.*}} depth 8 transformer dim 128 blocks 2 heads 4 {{.*}} params 18.84{{[0-9]*}}, flops/example
// REPORT: why: cost
l3.data @corpus {
  l3.field @bytes : !l3.sequence<!l3.scalar<ui8>, 64>
}
l3.model @lm in @corpus::@bytes out !l3.sequence<!l3.dist<256>, 64>
    properties [depth(8), width(512), causal]

// -----

// autoregressive alone also gives causal attention (the transformer is
// trained on every prefix at once); depth(5) leaves room for one block.
// CHECK-LABEL: l2.methods @gen_method for @gen
// CHECK:         l2.embed(vocab = 256, dim = 32, positions = 16)
// CHECK:         l2.attn(heads = 1, dim = 32, causal)
// CHECK-NOT:     l2.attn
// CHECK:         l2.softmax %{{.*}} : tensor<{{32|64}}x16x256xf32>
l3.data @corpus {
  l3.field @bytes : !l3.sequence<!l3.scalar<ui8>, 16>
}
l3.model @gen in @corpus::@bytes out !l3.sequence<!l3.dist<256>, 16>
    properties [depth(5), width(128), autoregressive]

// -----

// A single label for a whole sequence: the head reads the flattened
// sequence.
// CHECK-LABEL: l2.methods @sentiment_method for @sentiment
// CHECK:         l2.flatten %{{.*}} : tensor<{{32|64}}x8x{{[0-9]+}}xf32>
// CHECK:         l2.softmax %{{.*}} : tensor<{{32|64}}x2xf32>
l3.data @reviews {
  l3.field @text : !l3.sequence<!l3.scalar<ui8>, 8>
}
l3.model @sentiment in @reviews::@text out !l3.dist<2>
    properties [depth(5), width(64)]
