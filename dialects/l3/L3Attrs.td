//===- L3Attrs.td - The l3 dialect's attributes and enums ---*- tablegen -*-===//
//
// Model constraints (`depth(3)`, `param_budget(500K)`, ...), escape hatches
// (`#[l2::backward(...)]`) and the enums of loss combinators, goal kinds and
// constraint comparisons.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_DIALECT_L3_ATTRS_TD
#define SYNPL_DIALECT_L3_ATTRS_TD

include "synpl/Dialect/L3/L3Dialect.td"
include "mlir/IR/EnumAttr.td"
include "synpl/Interfaces/SpecInterfaces.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def L3_Combinator : I32EnumAttr<"Combinator",
    "how a loss combines its weighted terms", [
  I32EnumAttrCase<"WeightedSum", 0, "weighted_sum">,
  I32EnumAttrCase<"Sum", 1, "sum">,
  I32EnumAttrCase<"Mean", 2, "mean">,
  I32EnumAttrCase<"Max", 3, "max">]> {
  let cppNamespace = "::synpl::l3";
  let genSpecializedAttr = 0;
}
def L3_CombinatorAttr : EnumAttr<L3_Dialect, L3_Combinator, "combinator">;

def L3_GoalKind : I32EnumAttr<"GoalKind", "what the goal asks of its targets", [
  I32EnumAttrCase<"Minimize", 0, "minimize">,
  I32EnumAttrCase<"Maximize", 1, "maximize">,
  I32EnumAttrCase<"Pareto", 2, "pareto">]> {
  let cppNamespace = "::synpl::l3";
  let genSpecializedAttr = 0;
}
def L3_GoalKindAttr : EnumAttr<L3_Dialect, L3_GoalKind, "goal_kind">;

def L3_CmpPredicate : I32EnumAttr<"CmpPredicate",
    "the comparison of a `constraint` loss term", [
  I32EnumAttrCase<"LT", 0, "lt">,
  I32EnumAttrCase<"LE", 1, "le">,
  I32EnumAttrCase<"GT", 2, "gt">,
  I32EnumAttrCase<"GE", 3, "ge">,
  I32EnumAttrCase<"EQ", 4, "eq">,
  I32EnumAttrCase<"NE", 5, "ne">]> {
  let cppNamespace = "::synpl::l3";
  let genSpecializedAttr = 0;
}
def L3_CmpPredicateAttr : EnumAttr<L3_Dialect, L3_CmpPredicate, "cmp">;

//===----------------------------------------------------------------------===//
// Model constraints. In `l3.model`'s custom form they are written as in the
// spec (`properties [depth(3), causal, param_budget(500K)]`); the attributes
// below are their generic form.
//===----------------------------------------------------------------------===//

def L3_DepthAttr : L3_Attr<"Depth", "depth"> {
  let summary = "`depth(n)`: at most n composed stages";
  let parameters = (ins "int64_t":$value);
  let assemblyFormat = "`<` $value `>`";
}

def L3_WidthAttr : L3_Attr<"Width", "width"> {
  let summary = "`width(n)`: hidden dimensions of at most n";
  let parameters = (ins "int64_t":$value);
  let assemblyFormat = "`<` $value `>`";
}

def L3_CausalAttr : L3_Attr<"Causal", "causal"> {
  let summary = "`causal`: output_t depends only on input_<=t";
}

def L3_AutoregressiveAttr : L3_Attr<"Autoregressive", "autoregressive"> {
  let summary = "`autoregressive`: the output is fed back as input";
}

def L3_EquivariantAttr : L3_Attr<"Equivariant", "equivariant"> {
  let summary = "`equivariant(group)`: a symmetry constraint";
  let parameters = (ins StringRefParameter<"the symmetry group">:$group);
  let hasCustomAssemblyFormat = 1;
}

def L3_ParamBudgetAttr : L3_Attr<"ParamBudget", "param_budget"> {
  let summary = "`param_budget(n)`: at most n parameters (`500K` = 500000)";
  let parameters = (ins "uint64_t":$count);
  let hasCustomAssemblyFormat = 1;
}

def L3_LatencyBudgetAttr : L3_Attr<"LatencyBudget", "latency_budget"> {
  let summary = "`latency_budget(ms)`: a forward pass takes at most this long";
  let description = [{
    Written with its unit: `latency_budget(5ms)`, `latency_budget(250us)`,
    `latency_budget(1s)`; stored in milliseconds. Checking it needs L1
    information (row L2.7 and below); L3 only checks that it is positive.
  }];
  let parameters = (ins APFloatParameter<"milliseconds">:$value);
  let builders = [
    AttrBuilder<(ins "double":$millis), [{
      return $_get($_ctxt, ::llvm::APFloat(millis));
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    double getMillis() const { return getValue().convertToDouble(); }
  }];
}

//===----------------------------------------------------------------------===//
// Escape hatches
//===----------------------------------------------------------------------===//

def L3_HintAttr : L3_Attr<"Hint", "hint", [Synpl_EscapeHatchAttrInterface]> {
  let summary = "an escape hatch `#[<layer>::<directive>(<args>)]`";
  let description = [{
    `#[l2::backward(evolution(pop: 50))]` on a model is
    `#l3.hint<l2::backward, "evolution(pop: 50)">`: the target layer, the
    directive and its arguments as written. L3 stores hints and checks that
    each targets a lower layer (`l2`, `l1` or `l0`; row L3.1); the directive
    and its arguments are verified at the target layer, and a failing hint's
    error points at the declaration that carries it.
  }];
  let parameters = (ins StringRefParameter<"target layer">:$layer,
                        StringRefParameter<"directive">:$directive,
                        StringRefParameter<"arguments">:$args);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    /// Whether the hint targets a layer below L3 (l2, l1, l0).
    bool targetsLowerLayer() const;
    /// The hatch as the user writes it: `#[l1::on(gpu_1)]`, `#[l0::x]`
    /// (no parentheses without arguments).
    std::string spelled() const;
  }];
}

#endif // SYNPL_DIALECT_L3_ATTRS_TD
