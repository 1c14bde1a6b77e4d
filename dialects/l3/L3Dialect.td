//===- L3Dialect.td - The l3 dialect ------------------------*- tablegen -*-===//
#ifndef SYNPL_DIALECT_L3_DIALECT_TD
#define SYNPL_DIALECT_L3_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def L3_Dialect : Dialect {
  let name = "l3";
  let cppNamespace = "::synpl::l3";
  let summary = "L3 Spec: what to train (data, model constraints, loss, goal, hints)";
  let description = [{
    The `l3` dialect is the spec layer of synplexum: it declares *what* to
    train and nothing about *how*. A program is a builtin `module` whose
    top-level operations are the spec's declarations:

    ```mlir
    l3.data @mnist {
      l3.field @images : tensor<28x28xf32>
      l3.field @labels : tensor<1xui8>
    }
    l3.model @classify in @mnist::@images out !l3.dist<10>
        properties [depth(3), width(512), param_budget(500K)]
    l3.loss @objective {
      l3.divergence @ce(@classify::@out, @mnist::@labels) weight 1.0
      l3.norm @sparse(@classify::@params, p = 1) weight 1.0e-04
    } combine weighted_sum
    l3.goal minimize(@objective)
    ```

    The module is the symbol table: `data`, `model` and `loss` are symbols and
    every reference (`mnist.images` in the spec) is a `SymbolRefAttr`
    (`@mnist::@images`) resolved through it. Data fields are symbols nested in
    their `l3.data`; loss terms are symbols nested in their `l3.loss`; a model
    exposes three readable members, `@model::@in`, `@model::@out` and
    `@model::@params`.

    Domains are types: `tensor(f32, [28, 28])` is the builtin ranked tensor
    `tensor<28x28xf32>` (`u8` is `ui8`), and `sequence`, `table`, `dist` and
    `scalar` are the `!l3.sequence`, `!l3.table`, `!l3.dist` and `!l3.scalar`
    types below.

    Escape hatches (`#[l2::backward(evolution(pop: 50))]`) are `#l3.hint`
    attributes kept in the `hints` list of a declaration. L3 only checks that
    a hint targets a lower layer; its directive is verified at that layer.

    The spec's five L3 verification rows run as verifiers; every diagnostic
    carries the row's property kind and id:

    | row  | kind        | check                 | where |
    |------|-------------|-----------------------|-------|
    | L3.1 | safety      | ref resolution        | `verifySymbolUses` of `l3.model`, the loss terms and `l3.goal` |
    | L3.2 | consistency | domain compatibility  | `verifySymbolUses` of `l3.model`, the loss terms and `l3.goal` |
    | L3.3 | safety      | loss signature        | `verifySymbolUses` of the loss terms and `l3.goal` |
    | L3.4 | consistency | constraint agreement  | `verify` of `l3.model`, `l3.loss`, `l3.goal`; feedback/causality in `l3.model`'s `verifySymbolUses` |
    | L3.5 | resource    | finiteness            | `verify` of `l3.field`, `l3.model` (domains, weights); recursion in `l3.loss`'s `verifySymbolUses` |
  }];
  let useDefaultTypePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerTypesAndAttributes();
  }];
  let useDefaultAttributePrinterParser = 1;
}

class L3_Op<string mnemonic, list<Trait> traits = []>
    : Op<L3_Dialect, mnemonic, traits>;

class L3_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<L3_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

class L3_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<L3_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

#endif // SYNPL_DIALECT_L3_DIALECT_TD
