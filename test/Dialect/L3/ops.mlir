// RUN: synpl-opt %s | synpl-opt | FileCheck %s
// RUN: synpl-opt %s -mlir-print-op-generic | synpl-opt | FileCheck %s
// RUN: synpl-opt %s -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Every op, type, attribute and loss kind of the l3 dialect, round-tripped
// through the custom and the generic form.

// CHECK-LABEL: l3.data @mnist {
// CHECK-NEXT:    l3.field @images : tensor<28x28xf32>
// CHECK-NEXT:    l3.field @labels : tensor<1xui8>
// CHECK-NEXT:  }
l3.data @mnist {
  l3.field @images : tensor<28x28xf32>
  l3.field @labels : tensor<1xui8>
}

// CHECK-LABEL: l3.data @corpus hints [#l3.hint<l1::on, "ssd_0">] {
// CHECK-NEXT:    l3.field @tokens : !l3.sequence<!l3.scalar<i32>, 512>
// CHECK-NEXT:    l3.field @next : !l3.scalar<i32>
// CHECK-NEXT:    l3.field @rows : !l3.table<age: !l3.scalar<i32>, "blood pressure": !l3.scalar<f32>, label: !l3.dist<3>>
// CHECK-NEXT:    l3.field @clips : !l3.sequence<!l3.sequence<tensor<16xf32>, 8>, 64>
// CHECK-NEXT:    l3.field @ids : tensor<i64>
// CHECK-NEXT:  }
l3.data @corpus hints [#l3.hint<l1::on, "ssd_0">] {
  l3.field @tokens : !l3.sequence<!l3.scalar<i32>, 512>
  l3.field @next : !l3.scalar<i32>
  l3.field @rows : !l3.table<age: !l3.scalar<i32>, "blood pressure": !l3.scalar<f32>, label: !l3.dist<3>>
  l3.field @clips : !l3.sequence<!l3.sequence<tensor<16xf32>, 8>, 64>
  l3.field @ids : tensor<i64>
}

// CHECK-LABEL: l3.model @classify in @mnist::@images out !l3.dist<10>
// CHECK-NEXT:    properties [depth(3), width(512), param_budget(500K)]
// CHECK-NEXT:    hints [#l3.hint<l2::backward, "evolution(pop: 50)">]
l3.model @classify in @mnist::@images out !l3.dist<10>
    properties [depth(3), width(512), param_budget(500K)]
    hints [#l3.hint<l2::backward, "evolution(pop: 50)">]

// A restated input domain; every constraint kind; budgets in other units.
// CHECK-LABEL: l3.model @lm in @corpus::@tokens : !l3.sequence<!l3.scalar<i32>, 512> out !l3.dist<32000>
// CHECK-NEXT:    properties [depth(12), width(768), causal, autoregressive, equivariant(permutation), param_budget(1500M), latency_budget(0.25ms)]
// CHECK-NEXT:    hints [#l3.hint<l1::on, "gpu_1">, #l3.hint<l0::kernel, "\22fused_gelu.ptx\22">]
l3.model @lm in @corpus::@tokens : !l3.sequence<!l3.scalar<i32>, 512> out !l3.dist<32000>
    properties [depth(12), width(768), causal, autoregressive,
                equivariant(permutation), param_budget(1.5G),
                latency_budget(250us)]
    hints [#l3.hint<l1::on, "gpu_1">, #l3.hint<l0::kernel, "\"fused_gelu.ptx\"">]

// CHECK-LABEL: l3.model @autoenc in @mnist::@images out tensor<28x28xf32>
// CHECK-NEXT:    properties [param_budget(123456), latency_budget(2ms), equivariant("SO(2)")]
// CHECK-NOT:     hints
l3.model @autoenc in @mnist::@images out tensor<28x28xf32>
    properties [param_budget(123456), latency_budget(0.002s), equivariant("SO(2)")]

// CHECK-LABEL: l3.model @critic in @corpus::@rows out !l3.scalar<f32>
// CHECK-NEXT:    properties []
l3.model @critic in @corpus::@rows out !l3.scalar<f32> properties []

// The six loss kinds.
// CHECK-LABEL: l3.loss @objective {
// CHECK-NEXT:    l3.divergence @ce(@classify::@out, @mnist::@labels) weight 1.0
// CHECK-NEXT:    l3.norm @sparse(@classify::@params, p = 1) weight 0.0001
// CHECK-NEXT:    l3.norm @decay(@autoenc::@params, p = 2.5) weight 1.0e-07
// CHECK-NEXT:    l3.constraint @bounded(@classify::@params le 1.0) weight 10.0
// CHECK-NEXT:    l3.constraint @nonneg(@autoenc::@out ge 0.0) weight 2.0
// CHECK-NEXT:    l3.constraint @close(@autoenc::@out lt @autoenc::@in) weight 0.5
// CHECK-NEXT:    l3.constraint @floor(@autoenc::@out gt -1.5) weight -0.5
// CHECK-NEXT:    l3.reconstruction @rec(@autoenc::@in, @autoenc::@out) weight 1.0
// CHECK-NEXT:    l3.contrastive @triplet(@autoenc::@out, @autoenc::@in, @mnist::@images) weight 0.25
// CHECK-NEXT:    l3.custom @center("center_loss", reads [@classify::@out, @mnist::@labels]) weight 0.1
// CHECK-NEXT:  } combine weighted_sum
l3.loss @objective {
  l3.divergence @ce(@classify::@out, @mnist::@labels) weight 1.0
  l3.norm @sparse(@classify::@params, p = 1) weight 1.0e-4
  l3.norm @decay(@autoenc::@params, p = 2.5) weight 1.0e-7
  l3.constraint @bounded(@classify::@params le 1) weight 10
  l3.constraint @nonneg(@autoenc::@out ge 0.0) weight 2.0
  l3.constraint @close(@autoenc::@out lt @autoenc::@in) weight 0.5
  l3.constraint @floor(@autoenc::@out gt -1.5) weight -0.5
  l3.reconstruction @rec(@autoenc::@in, @autoenc::@out) weight 1.0
  l3.contrastive @triplet(@autoenc::@out, @autoenc::@in, @mnist::@images) weight 0.25
  l3.custom @center("center_loss", reads [@classify::@out, @mnist::@labels]) weight 0.1
} combine weighted_sum

// Other combinators; divergence against a dist, a class label and a
// probability vector; sequence divergence; a term reading another loss.
// CHECK-LABEL: l3.loss @lm_loss {
// CHECK-NEXT:    l3.divergence @next_token(@lm::@out, @corpus::@next) weight 1.0
// CHECK-NEXT:    l3.divergence @ids(@lm::@out, @corpus::@ids) weight 1.0
// CHECK-NEXT:  } combine sum hints [#l3.hint<l2::divergence, "kl">]
l3.loss @lm_loss {
  l3.divergence @next_token(@lm::@out, @corpus::@next) weight 1.0
  l3.divergence @ids(@lm::@out, @corpus::@ids) weight 1.0
} combine sum hints [#l3.hint<l2::divergence, "kl">]

// CHECK-LABEL: l3.loss @total {
// CHECK-NEXT:    l3.custom @parts("sum_of", reads [@objective, @lm_loss::@next_token]) weight 1.0
// CHECK-NEXT:    l3.reconstruction @rows(@corpus::@rows, @corpus::@rows) weight 1.0
// CHECK-NEXT:  } combine max
l3.loss @total {
  l3.custom @parts("sum_of", reads [@objective, @lm_loss::@next_token]) weight 1.0
  l3.reconstruction @rows(@corpus::@rows, @corpus::@rows) weight 1.0
} combine max

// CHECK-LABEL: l3.loss @mean_loss {
// CHECK-NEXT:    l3.divergence @self(@classify::@out, @classify::@out) weight 1.0
// CHECK-NEXT:  } combine mean
l3.loss @mean_loss {
  l3.divergence @self(@classify::@out, @classify::@out) weight 1.0
} combine mean

// CHECK: l3.goal pareto([@objective, @lm_loss::@next_token, @total])
l3.goal pareto([@objective, @lm_loss::@next_token, @total])

// GENERIC: "l3.model"() <{constraints = [#l3.depth<3>, #l3.width<512>, #l3.param_budget<500K>], hints = [#l3.hint<l2::backward, "evolution(pop: 50)">], in_ref = @mnist::@images, out_domain = !l3.dist<10>, sym_name = "classify"}>
// GENERIC: constraints = [#l3.depth<12>, #l3.width<768>, #l3.causal, #l3.autoregressive, #l3.equivariant<permutation>, #l3.param_budget<1500M>, #l3.latency_budget<0.25ms>]
// GENERIC: "l3.loss"() <{combine = #l3<combinator weighted_sum>, sym_name = "objective"}>
// GENERIC: "l3.constraint"() <{lhs = @autoenc::@out, predicate = #l3<cmp lt>, rhs = @autoenc::@in
// GENERIC: "l3.goal"() <{kind = #l3<goal_kind pareto>, targets = [@objective, @lm_loss::@next_token, @total]}>
