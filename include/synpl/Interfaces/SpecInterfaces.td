//===- SpecInterfaces.td - What a lower layer reads of a spec -*- tablegen -*-===//
//
// The interfaces through which a lower dialect checks itself against the
// spec that it refines, without knowing the dialect that states the spec:
// the l2 verifiers read an `l3.model` as a ModelSpecOpInterface, its domains
// as ExampleDomainTypeInterface and its escape hatches as
// EscapeHatchAttrInterface. The l3 dialect implements them; the l2 dialect
// links only this library.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_INTERFACES_SPECINTERFACES_TD
#define SYNPL_INTERFACES_SPECINTERFACES_TD

include "mlir/IR/OpBase.td"

def Synpl_EscapeHatchAttrInterface : AttrInterface<"EscapeHatchAttrInterface"> {
  let cppNamespace = "::synpl";
  let description = [{
    An escape hatch `#[<layer>::<directive>(<args>)]` as a declaration carries
    it down the layers: the layer it targets (`l2`, `l1`, `l0`), the
    directive and its arguments as written. The layer it targets reads it;
    every other layer passes it on untouched.
  }];
  let methods = [
    InterfaceMethod<"The layer the hatch targets: `l2`, `l1` or `l0`.",
      "::llvm::StringRef", "getLayer">,
    InterfaceMethod<"The directive: `backward`, `on`, `kernel`, ...",
      "::llvm::StringRef", "getDirective">,
    InterfaceMethod<"The arguments as written, without the parentheses.",
      "::llvm::StringRef", "getArgs">,
    InterfaceMethod<"The hatch as the user writes it: `#[l1::on(gpu_1)]`.",
      "std::string", "spelled">,
  ];
}

def Synpl_ExampleDomainTypeInterface : TypeInterface<"ExampleDomainTypeInterface"> {
  let cppNamespace = "::synpl";
  let description = [{
    A spec domain with a fixed tensor view of one example: `scalar<dt>` is a
    0-d `dt`, `sequence<d, n>` is n examples of d, `dist<n>` is n
    probabilities. A domain without one (a table) does not implement it.
    `synpl::exampleShape(Type)` reads it, and builtin ranked tensors as they
    are.
  }];
  let methods = [
    InterfaceMethod<[{
        The shape of one example, with its element type; failure when the
        domain has no fixed tensor view after all (a sequence of tables).
      }],
      "::mlir::FailureOr<::synpl::ExampleShape>", "getExampleShape">,
    InterfaceMethod<[{
        Whether an example is a probability distribution, whose tensor may be
        of any float type.
      }],
      "bool", "isDistribution", (ins), [{}], [{ return false; }]>,
  ];
}

def Synpl_ModelSpecOpInterface : OpInterface<"ModelSpecOpInterface"> {
  let cppNamespace = "::synpl";
  let description = [{
    A model as the spec declares it: its input field and output domain, and
    the constraints and escape hatches that bound how it may be trained. An
    `l2.methods` names one with `for` and verifies itself against it.
  }];
  let methods = [
    InterfaceMethod<"The model's name (its symbol).",
      "::llvm::StringRef", "getSymName">,
    InterfaceMethod<"The reference to the input field, as written.",
      "::mlir::SymbolRefAttr", "getInRef">,
    InterfaceMethod<"The data field `in` names, or null if it does not resolve.",
      "::mlir::Operation *", "resolveInputField",
      (ins "::mlir::SymbolTableCollection &":$symbols)>,
    InterfaceMethod<[{
        The input domain: the restated `in` domain if there is one, else the
        domain of the field `in` names; null if neither is known.
      }],
      "::mlir::Type", "resolveInDomain",
      (ins "::mlir::SymbolTableCollection &":$symbols)>,
    InterfaceMethod<"The output domain.", "::mlir::Type", "getOutDomain">,
    InterfaceMethod<"`depth(n)`: the most composed stages a method may build.",
      "std::optional<int64_t>", "getDepthLimit">,
    InterfaceMethod<"`width(n)`: the largest hidden dimension.",
      "std::optional<int64_t>", "getWidthLimit">,
    InterfaceMethod<"`param_budget(n)`: the most parameters.",
      "std::optional<uint64_t>", "getParamBudget">,
    InterfaceMethod<"`latency_budget(t)`, in milliseconds.",
      "std::optional<double>", "getLatencyBudgetMs">,
    InterfaceMethod<"`causal`: no position may attend to a later one.",
      "bool", "isCausal">,
    InterfaceMethod<[{
        The escape hatches on the model (EscapeHatchAttrInterface
        attributes), or null.
      }],
      "::mlir::ArrayAttr", "getHintsAttr">,
  ];
}

#endif // SYNPL_INTERFACES_SPECINTERFACES_TD
