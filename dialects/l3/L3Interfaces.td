//===- L3Interfaces.td - The l3 dialect's op interfaces -----*- tablegen -*-===//
#ifndef SYNPL_DIALECT_L3_INTERFACES_TD
#define SYNPL_DIALECT_L3_INTERFACES_TD

include "mlir/IR/OpBase.td"

def L3_LossTermOpInterface : OpInterface<"LossTermOpInterface"> {
  let cppNamespace = "::synpl::l3";
  let description = [{
    A term of an `l3.loss`: one of the spec's six loss kinds (`divergence`,
    `norm`, `constraint`, `reconstruction`, `contrastive`, `custom`). Every
    term is a symbol nested in its loss (`@objective::@ce`), has a weight, and
    reads values named by symbol references (data fields, model members,
    other losses or loss terms).
  }];
  let methods = [
    InterfaceMethod<"The references this term reads, in argument order.",
      "::llvm::SmallVector<::mlir::SymbolRefAttr>", "getReadRefs">,
    InterfaceMethod<"The term's name (its symbol).",
      "::llvm::StringRef", "getTermName", (ins), [{}],
      [{ return $_op.getSymName(); }]>,
    InterfaceMethod<"The term's weight in its loss.",
      "double", "getWeightValue", (ins), [{}],
      [{ return $_op.getWeight().convertToDouble(); }]>,
  ];
}

#endif // SYNPL_DIALECT_L3_INTERFACES_TD
