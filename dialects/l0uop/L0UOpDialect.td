//===- L0UOpDialect.td - The l0uop dialect ------------------------*- tablegen -*-===//
#ifndef SYNPL_DIALECT_L0UOP_DIALECT_TD
#define SYNPL_DIALECT_L0UOP_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def L0UOp_Dialect : Dialect {
  let name = "l0uop";
  let cppNamespace = "::synpl::l0uop";
  let summary = "L0 compute IR and plan: the memory, kernel, stream, sync, transfer and init plans and the ~25 UOps";
  let description = [{
    See reference/spec.md and docs/spec-map.md for how each form of the spec
    maps onto this dialect.
  }];
}

class L0UOp_Op<string mnemonic, list<Trait> traits = []>
    : Op<L0UOp_Dialect, mnemonic, traits>;

#endif // SYNPL_DIALECT_L0UOP_DIALECT_TD
