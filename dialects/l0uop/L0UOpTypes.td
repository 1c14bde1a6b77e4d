//===- L0UOpTypes.td - The l0uop dialect's types ------------------*- tablegen -*-===//
#ifndef SYNPL_DIALECT_L0UOP_TYPES_TD
#define SYNPL_DIALECT_L0UOP_TYPES_TD

include "synpl/Dialect/L0UOp/L0UOpDialect.td"

def L0UOp_BufType : TypeDef<L0UOp_Dialect, "Buf"> {
  let mnemonic = "buf";
  let summary = "a kernel buffer: a memory slot seen with its shape and dtype";
  let description = [{
    `!l0uop.buf<128x784xf32>`: a dense row-major buffer of static shape.
    Kernel bodies receive their input and output slots as values of this
    type; `INDEX` is the only UOp that takes one.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    /// Elements, saturating at UINT64_MAX.
    uint64_t getNumElements() const;
    /// Bytes per element (i1 takes a byte).
    uint64_t getElementBytes() const;
    /// Bytes of the whole buffer, saturating.
    uint64_t getSizeInBytes() const;
  }];
}

def L0UOp_PtrType : TypeDef<L0UOp_Dialect, "Ptr"> {
  let mnemonic = "ptr";
  let summary = "an address inside a kernel buffer, produced by INDEX";
  let description = [{
    `!l0uop.ptr<f32>`: what `l0uop.index` yields and `l0uop.load` /
    `l0uop.store` take. It never leaves a kernel.
  }];
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
}

#endif // SYNPL_DIALECT_L0UOP_TYPES_TD
