//===- L1Types.td - The l1 dialect's types and enums -------*- tablegen -*-===//
#ifndef SYNPL_DIALECT_L1_TYPES_TD
#define SYNPL_DIALECT_L1_TYPES_TD

include "synpl/Dialect/L1/L1Dialect.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/BuiltinTypes.td"

def L1_BufType : TypeDef<L1_Dialect, "Buf"> {
  let mnemonic = "buf";
  let summary = "a buffer with region provenance";
  let description = [{
    `!l1.buf<@ram_0, tensor<128x784xf32>>` is a buffer holding one tensor in
    the memory of topology node `@ram_0` (a memory node, or a compute node
    with its own memory such as a GPU's `vram`). The node is part of the type,
    so a buffer forwarded to a consumer placed elsewhere is a provenance
    mismatch at the forwarding site (L1.6). Buffers live in stages; each one a
    stage receives or creates must be consumed exactly once on every path
    (forwarded, sent, transferred or dropped; L1.7).
  }];
  let parameters = (ins "::mlir::FlatSymbolRefAttr":$node,
                        "::mlir::RankedTensorType":$tensor);
  let assemblyFormat = "`<` $node `,` $tensor `>`";
  let genVerifyDecl = 1;
}

def L1_NodeKind : I32EnumAttr<"NodeKind", "topology node kind", [
    I32EnumAttrCase<"storage", 0>,
    I32EnumAttrCase<"memory", 1>,
    I32EnumAttrCase<"compute", 2>]> {
  let cppNamespace = "::synpl::l1";
}

def L1_InitKind : I32EnumAttr<"InitKind", "actor state initializer", [
    I32EnumAttrCase<"zeros", 0>,
    I32EnumAttrCase<"ones", 1>,
    I32EnumAttrCase<"kaiming", 2>,
    I32EnumAttrCase<"xavier", 3>,
    I32EnumAttrCase<"planned_steps", 4>,
    I32EnumAttrCase<"training_mode", 5>,
    I32EnumAttrCase<"rank", 6>]> {
  let cppNamespace = "::synpl::l1";
}

def L1_DataFormat : I32EnumAttr<"DataFormat", "on-disk format of a data field", [
    I32EnumAttrCase<"idx", 0>,
    I32EnumAttrCase<"raw", 1>,
    I32EnumAttrCase<"text", 2>]> {
  let cppNamespace = "::synpl::l1";
}

def L1_BatchOrder : I32EnumAttr<"BatchOrder", "sample order of a batch reader", [
    I32EnumAttrCase<"sequential", 0>,
    I32EnumAttrCase<"shuffle", 1>]> {
  let cppNamespace = "::synpl::l1";
}

def L1_ReduceKind : I32EnumAttr<"ReduceKind", "how a collective combines the replicas' values", [
    I32EnumAttrCase<"sum", 0>,
    I32EnumAttrCase<"mean", 1>,
    I32EnumAttrCase<"max", 2>,
    I32EnumAttrCase<"min", 3>]> {
  let cppNamespace = "::synpl::l1";
}

def L1_CmpPredicate : I32EnumAttr<"CmpPredicate", "elementwise comparison", [
    I32EnumAttrCase<"eq", 0>,
    I32EnumAttrCase<"ne", 1>,
    I32EnumAttrCase<"lt", 2>,
    I32EnumAttrCase<"le", 3>,
    I32EnumAttrCase<"gt", 4>,
    I32EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::synpl::l1";
}

#endif // SYNPL_DIALECT_L1_TYPES_TD
