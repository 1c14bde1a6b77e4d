//===- L0CtlAttrs.td - The l0ctl dialect's enums ------------------*- tablegen -*-===//
#ifndef SYNPL_DIALECT_L0CTL_ATTRS_TD
#define SYNPL_DIALECT_L0CTL_ATTRS_TD

include "synpl/Dialect/L0Ctl/L0CtlDialect.td"
include "mlir/IR/EnumAttr.td"

def L0Ctl_Access : I32EnumAttr<"Access", "access mode of a region", [
    I32EnumAttrCase<"ro", 0>, I32EnumAttrCase<"rw", 1>, I32EnumAttrCase<"wo", 2>]> {
  let cppNamespace = "::synpl::l0ctl";
  let genSpecializedAttr = 0;
}
def L0Ctl_AccessAttr : EnumAttr<L0Ctl_Dialect, L0Ctl_Access, "access">;

def L0Ctl_ArithKind : I32EnumAttr<"ArithKind", "integer arithmetic of `l0ctl.arith`", [
    I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"sub", 1>, I32EnumAttrCase<"mul", 2>,
    I32EnumAttrCase<"and_", 3, "and">, I32EnumAttrCase<"or_", 4, "or">,
    I32EnumAttrCase<"shl", 5>, I32EnumAttrCase<"shr", 6>]> {
  let cppNamespace = "::synpl::l0ctl";
  let genSpecializedAttr = 0;
}
def L0Ctl_ArithKindAttr : EnumAttr<L0Ctl_Dialect, L0Ctl_ArithKind, "arith_kind">;

def L0Ctl_CmpKind : I32EnumAttr<"CmpKind", "comparison of `l0ctl.cmp`", [
    I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"neq", 1>,
    I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"gt", 3>]> {
  let cppNamespace = "::synpl::l0ctl";
  let genSpecializedAttr = 0;
}
def L0Ctl_CmpKindAttr : EnumAttr<L0Ctl_Dialect, L0Ctl_CmpKind, "cmp_kind">;

#endif // SYNPL_DIALECT_L0CTL_ATTRS_TD
