//===- L3Ops.td - The l3 dialect's operations -------------*- tablegen -*-===//
#ifndef SYNPL_DIALECT_L3_OPS_TD
#define SYNPL_DIALECT_L3_OPS_TD

include "synpl/Dialect/L3/L3Dialect.td"
include "synpl/Dialect/L3/L3Types.td"
include "synpl/Dialect/L3/L3Attrs.td"
include "synpl/Dialect/L3/L3Interfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/OpAsmInterface.td"

def L3_HintArrayAttr : TypedArrayAttrBase<L3_HintAttr, "escape hatches">;

//===----------------------------------------------------------------------===//
// data
//===----------------------------------------------------------------------===//

def L3_DataOp : L3_Op<"data", [
    Symbol, SymbolTable, NoTerminator, SingleBlock, NoRegionArguments,
    IsolatedFromAbove, HasParent<"::mlir::ModuleOp">]> {
  let summary = "a data declaration: `data <name> { <field> : <domain> ... }`";
  let description = [{
    Declares a data set by the domains of its fields. Fields are `l3.field`
    symbols nested in the declaration, referenced from elsewhere as
    `@mnist::@images` (the spec's `mnist.images`). Where the data lives and
    how it is decoded is decided at L1.

    ```mlir
    l3.data @mnist {
      l3.field @images : tensor<28x28xf32>
      l3.field @labels : tensor<1xui8>
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       OptionalAttr<L3_HintArrayAttr>:$hints);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name (`hints` $hints^)? attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The field named `name`, or null when there is none.
    FieldOp lookupField(::llvm::StringRef name);
  }];
}

def L3_FieldOp : L3_Op<"field", [Symbol, HasParent<"DataOp">]> {
  let summary = "a field of a data declaration: `<field> : <domain>`";
  let description = [{
    One field of an `l3.data` declaration and its domain. The domain must be
    finite and concrete (row L3.5): a ranked tensor with static, positive
    dimensions, a `sequence` with a positive `max_len`, a `dist` over a
    positive number of classes, and so on recursively.

    ```mlir
    l3.field @tokens : !l3.sequence<!l3.scalar<i32>, 512>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<L3_AnyDomain>:$domain);
  let assemblyFormat = "$sym_name `:` $domain attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// model
//===----------------------------------------------------------------------===//

def L3_ModelOp : L3_Op<"model", [
    Symbol, HasParent<"::mlir::ModuleOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>, Synpl_ModelSpecOpInterface]> {
  let summary = "a model declaration: `model <name> { in, out, properties }`";
  let description = [{
    Declares a model by its input (a data field), its output domain and the
    constraints that bound what L2 may build for it. These are not
    implementations; L2's search enumerates architectures that satisfy them.

    ```mlir
    l3.model @classify in @mnist::@images out !l3.dist<10>
        properties [depth(3), width(512), param_budget(500K)]
        hints [#l3.hint<l2::backward, "evolution(pop: 50)">]
    ```

    `in` may restate the field's domain (`in @mnist::@images :
    tensor<28x28xf32>`); it must then agree with the field (L3.2). The
    constraints are `depth(n)`, `width(n)`, `causal`, `autoregressive`,
    `equivariant(group)`, `param_budget(n)` (with `K`/`M`/`G` suffixes) and
    `latency_budget(<time>)` (`ms`, `us` or `s`); each may appear once
    (L3.4). In the generic form they are `#l3.depth<3>`, `#l3.causal`,
    `#l3.param_budget<500K>`, ... in the `constraints` array.

    A model exposes three readable members to losses and goals:
    `@classify::@in` (the input, of the field's domain), `@classify::@out`
    (of the `out` domain) and `@classify::@params` (its parameters, which
    have no domain: only a `norm` or `constraint` may read them). Reading
    anything else is a loss-signature error (L3.3).

    Checks: `in` names an existing data field (L3.1); a restated `in`
    domain equals the field's (L3.2); constraints are positive, unique and
    agree with each other and with the domains, e.g. `autoregressive` needs
    an output that can be fed back into a sequence input and `causal` needs
    a sequence input (L3.4); domains are finite (L3.5); hints target a lower
    layer (L3.1).
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       SymbolRefAttr:$in_ref,
                       OptionalAttr<TypeAttrOf<L3_AnyDomain>>:$in_domain,
                       TypeAttrOf<L3_AnyDomain>:$out_domain,
                       DefaultValuedAttr<ArrayAttr, "{}">:$constraints,
                       OptionalAttr<L3_HintArrayAttr>:$hints);
  let assemblyFormat = [{
    $sym_name `in` $in_ref (`:` $in_domain^)?
    custom<ModelProperties>($out_domain, $constraints, $hints) attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// `depth(n)`: the most composed stages L2 may build.
    std::optional<int64_t> getDepthLimit();
    /// `width(n)`: the largest hidden dimension L2 may build.
    std::optional<int64_t> getWidthLimit();
    /// `param_budget(n)`: the most parameters the model may have.
    std::optional<uint64_t> getParamBudget();
    /// `latency_budget(t)`, in milliseconds.
    std::optional<double> getLatencyBudgetMs();
    bool isCausal();
    bool isAutoregressive();
    /// `equivariant(group)`: the symmetry group's name.
    std::optional<::llvm::StringRef> getEquivariantGroup();
    /// The data field `in` names, or null if it does not resolve.
    FieldOp resolveInField(::mlir::SymbolTableCollection &symbols);
    /// resolveInField as ModelSpecOpInterface asks for it.
    ::mlir::Operation *resolveInputField(::mlir::SymbolTableCollection &symbols) {
      return resolveInField(symbols);
    }
    /// The input domain: the restated `in` domain if there is one, else the
    /// domain of the field `in` names; null if neither is known.
    ::mlir::Type resolveInDomain(::mlir::SymbolTableCollection &symbols);

    /// The members a model exposes to losses and goals.
    static bool isExposedMember(::llvm::StringRef name) {
      return name == "in" || name == "out" || name == "params";
    }
  }];
}

//===----------------------------------------------------------------------===//
// loss
//===----------------------------------------------------------------------===//

def L3_LossOp : L3_Op<"loss", [
    Symbol, SymbolTable, NoTerminator, SingleBlock, NoRegionArguments,
    IsolatedFromAbove, HasParent<"::mlir::ModuleOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a loss declaration: weighted terms and a combinator";
  let description = [{
    A loss is a list of named, weighted terms (one op per loss kind:
    `l3.divergence`, `l3.norm`, `l3.constraint`, `l3.reconstruction`,
    `l3.contrastive`, `l3.custom`) combined by `combine`:

    ```mlir
    l3.loss @objective {
      l3.divergence @ce(@classify::@out, @mnist::@labels) weight 1.0
      l3.norm @sparse(@classify::@params, p = 1) weight 1.0e-04
    } combine weighted_sum
    ```

    Combinators: `weighted_sum` (sum of weight * term), `max` (the largest
    weight * term), `sum` and `mean` (the plain sum and mean; every weight
    must then be 1.0, L3.4). The loss's value is a scalar that goals and
    other losses may read as `@objective`, and each term's as
    `@objective::@ce`; a loss that reads itself, directly or through other
    losses, is rejected (L3.5).
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       L3_CombinatorAttr:$combine,
                       OptionalAttr<L3_HintArrayAttr>:$hints);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name $body `combine` custom<Combinator>($combine) (`hints` $hints^)?
    attr-dict
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The terms of this loss, in order.
    ::llvm::SmallVector<LossTermOpInterface> getTerms();
  }];
}

class L3_TermOp<string mnemonic, list<Trait> traits = []>
    : L3_Op<mnemonic, !listconcat(traits, [
        Symbol, HasParent<"LossOp">,
        DeclareOpInterfaceMethods<SymbolUserOpInterface>,
        DeclareOpInterfaceMethods<L3_LossTermOpInterface, ["getReadRefs"]>])> {
  let hasVerifier = 1;
}

def L3_DivergenceOp : L3_TermOp<"divergence"> {
  let summary = "loss term `divergence(predicted, target)`";
  let description = [{
    A divergence between a prediction and a target (cross-entropy, KL, ...;
    which one is L2's choice). The domains must be compatible (L3.2): a
    `dist<n>` against an integer class label, a `dist<n>`, or a float vector
    `tensor<nxf*>`; sequences element-wise with equal `max_len`; any other
    domain against the same domain.

    ```mlir
    l3.divergence @ce(@classify::@out, @mnist::@labels) weight 1.0
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, SymbolRefAttr:$predicted,
                       SymbolRefAttr:$target, F64Attr:$weight);
  let assemblyFormat = [{
    $sym_name `(` $predicted `,` $target `)` `weight` custom<Real>($weight)
    attr-dict
  }];
}

def L3_NormOp : L3_TermOp<"norm"> {
  let summary = "loss term `norm(target, p)`";
  let description = [{
    The Lp norm of model parameters or of a numeric value. `p` is positive
    (`p = 1` for sparsity, `p = 2` for weight decay). A table cannot be
    normed (L3.2).

    ```mlir
    l3.norm @sparse(@classify::@params, p = 1) weight 1.0e-04
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, SymbolRefAttr:$target,
                       F64Attr:$p, F64Attr:$weight);
  let assemblyFormat = [{
    $sym_name `(` $target `,` `p` `=` custom<Exponent>($p) `)`
    `weight` custom<Real>($weight) attr-dict
  }];
}

def L3_ConstraintOp : L3_TermOp<"constraint"> {
  let summary = "loss term `constraint(predicate)`: a hard constraint as a penalty";
  let description = [{
    A predicate comparing a value against a constant or another value of the
    same domain, turned into a penalty by L2. The comparison is one of `lt`,
    `le`, `gt`, `ge`, `eq`, `ne`.

    ```mlir
    l3.constraint @bounded(@classify::@params le 1.0) weight 10.0
    l3.constraint @ordered(@ranker::@out le @ranker::@in) weight 1.0
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, SymbolRefAttr:$lhs,
                       L3_CmpPredicateAttr:$predicate,
                       AnyAttrOf<[F64Attr, SymbolRefAttr]>:$rhs,
                       F64Attr:$weight);
  let assemblyFormat = [{
    $sym_name `(` $lhs custom<CmpPredicate>($predicate)
    custom<ConstraintRhs>($rhs) `)`
    `weight` custom<Real>($weight) attr-dict
  }];
}

def L3_ReconstructionOp : L3_TermOp<"reconstruction"> {
  let summary = "loss term `reconstruction(input, decoded)`";
  let description = [{
    How well `decoded` reproduces `input` (autoencoders). Both must have the
    same domain (L3.2).

    ```mlir
    l3.reconstruction @rec(@autoenc::@in, @autoenc::@out) weight 1.0
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, SymbolRefAttr:$input,
                       SymbolRefAttr:$decoded, F64Attr:$weight);
  let assemblyFormat = [{
    $sym_name `(` $input `,` $decoded `)` `weight` custom<Real>($weight)
    attr-dict
  }];
}

def L3_ContrastiveOp : L3_TermOp<"contrastive"> {
  let summary = "loss term `contrastive(anchor, positive, negative)`";
  let description = [{
    Representation learning: pull `anchor` towards `positive` and away from
    `negative`. All three must have the same domain (L3.2).

    ```mlir
    l3.contrastive @triplet(@embed::@out, @pairs::@positive, @pairs::@negative) weight 1.0
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, SymbolRefAttr:$anchor,
                       SymbolRefAttr:$positive, SymbolRefAttr:$negative,
                       F64Attr:$weight);
  let assemblyFormat = [{
    $sym_name `(` $anchor `,` $positive `,` $negative `)`
    `weight` custom<Real>($weight) attr-dict
  }];
}

def L3_CustomOp : L3_TermOp<"custom"> {
  let summary = "loss term `custom(name, reads: [refs])`: a user-defined loss";
  let description = [{
    The escape hatch among loss kinds: a user-defined loss `name` that reads
    the listed values. L3 checks that every read resolves to something that
    exists and is exposed (L3.1, L3.3); what the function computes is
    opaque.

    ```mlir
    l3.custom @center("center_loss", reads [@classify::@out, @mnist::@labels]) weight 0.1
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrAttr:$fn,
                       SymbolRefArrayAttr:$reads, F64Attr:$weight);
  let assemblyFormat = [{
    $sym_name `(` $fn `,` `reads` $reads `)` `weight` custom<Real>($weight)
    attr-dict
  }];
}

//===----------------------------------------------------------------------===//
// goal
//===----------------------------------------------------------------------===//

def L3_GoalOp : L3_Op<"goal", [
    HasParent<"::mlir::ModuleOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "the goal: `minimize(loss)`, `maximize(ref)` or `pareto([refs])`";
  let description = [{
    What training optimizes. One goal per module (L3.4).

    ```mlir
    l3.goal minimize(@objective)
    l3.goal maximize(@reward)
    l3.goal pareto([@accuracy, @latency])
    ```

    `minimize` and `maximize` take one target, `pareto` at least two
    distinct ones (L3.4). `minimize` and `pareto` targets are losses or
    loss terms (`@objective::@ce`); `maximize` may also name a model output
    whose domain is a scalar. Targets must resolve (L3.1) and be
    scalar-valued (L3.2).
  }];
  let arguments = (ins L3_GoalKindAttr:$kind, SymbolRefArrayAttr:$targets);
  let assemblyFormat = [{
    custom<GoalKind>($kind) `(` custom<GoalTargets>(ref($kind), $targets) `)`
    attr-dict
  }];
  let hasVerifier = 1;
}

#endif // SYNPL_DIALECT_L3_OPS_TD
