//===- L0CtlDialect.td - The l0ctl dialect ------------------------*- tablegen -*-===//
#ifndef SYNPL_DIALECT_L0CTL_DIALECT_TD
#define SYNPL_DIALECT_L0CTL_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def L0Ctl_Dialect : Dialect {
  let name = "l0ctl";
  let cppNamespace = "::synpl::l0ctl";
  let summary = "L0 control IR: ten control ops over named, sized, access-controlled regions";
  let description = [{
    See reference/spec.md and docs/spec-map.md for how each form of the spec
    maps onto this dialect.
  }];
}

class L0Ctl_Op<string mnemonic, list<Trait> traits = []>
    : Op<L0Ctl_Dialect, mnemonic, traits>;

#endif // SYNPL_DIALECT_L0CTL_DIALECT_TD
