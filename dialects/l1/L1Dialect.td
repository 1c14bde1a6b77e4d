//===- L1Dialect.td - The l1 dialect ------------------------*- tablegen -*-===//
#ifndef SYNPL_DIALECT_L1_DIALECT_TD
#define SYNPL_DIALECT_L1_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def L1_Dialect : Dialect {
  let name = "l1";
  let cppNamespace = "::synpl::l1";
  let summary = "L1 Placement: where and when (topology, data sources, actors, stages, tensor graphs, pipelines, schedule)";
  let description = [{
    See reference/spec.md and docs/spec-map.md for how each form of the spec
    maps onto this dialect.
  }];
}

class L1_Op<string mnemonic, list<Trait> traits = []>
    : Op<L1_Dialect, mnemonic, traits>;

#endif // SYNPL_DIALECT_L1_DIALECT_TD
