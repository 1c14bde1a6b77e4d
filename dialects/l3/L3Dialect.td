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
    See reference/spec.md and docs/spec-map.md for how each form of the spec
    maps onto this dialect.
  }];
}

class L3_Op<string mnemonic, list<Trait> traits = []>
    : Op<L3_Dialect, mnemonic, traits>;

#endif // SYNPL_DIALECT_L3_DIALECT_TD
