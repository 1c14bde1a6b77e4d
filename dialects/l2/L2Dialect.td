//===- L2Dialect.td - The l2 dialect ------------------------*- tablegen -*-===//
#ifndef SYNPL_DIALECT_L2_DIALECT_TD
#define SYNPL_DIALECT_L2_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def L2_Dialect : Dialect {
  let name = "l2";
  let cppNamespace = "::synpl::l2";
  let summary = "L2 Method: how to train (sampling, infer DAG, backward, update chain)";
  let description = [{
    See reference/spec.md and docs/spec-map.md for how each form of the spec
    maps onto this dialect.
  }];
}

class L2_Op<string mnemonic, list<Trait> traits = []>
    : Op<L2_Dialect, mnemonic, traits>;

#endif // SYNPL_DIALECT_L2_DIALECT_TD
