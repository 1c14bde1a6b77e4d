//===- IPU21Attrs.td - The ipu21 dialect's attributes ---------------*- tablegen -*-===//
#ifndef SYNPL_DIALECT_IPU21_ATTRS_TD
#define SYNPL_DIALECT_IPU21_ATTRS_TD

include "synpl/Dialect/IPU21/IPU21Dialect.td"
include "mlir/IR/EnumAttr.td"

def IPU21_CodeletKind : I32EnumAttr<"CodeletKind", "what a codelet computes", [
    I32EnumAttrCase<"amp_matmul", 0>, I32EnumAttrCase<"reduce_add", 1>,
    I32EnumAttrCase<"copy", 2>, I32EnumAttrCase<"fill", 3>,
    I32EnumAttrCase<"uop", 4>]> {
  let cppNamespace = "::synpl::ipu21";
  let genSpecializedAttr = 0;
}
def IPU21_CodeletKindAttr : EnumAttr<IPU21_Dialect, IPU21_CodeletKind, "codelet_kind">;

def IPU21_TargetAttr : AttrDef<IPU21_Dialect, "Target"> {
  let mnemonic = "target";
  let summary = "the IPU a graph is compiled for";
  let description = [{
    ```mlir
    #ipu21.target<arch = "ipu21", tiles = 1472, bytes_per_tile = 638976,
                  element_bytes = 16384, workers = 6, clock_hz = 1490000000,
                  sram_base = 311296, exec_end = 524288,
                  interleaved_begin = 524288, sram_end = 950272,
                  rpt_count_max = 65535>
    ```
    `arch` is "ipu21" (FP8 AMP) or "ipu2". Each tile's SRAM spans
    `[sram_base, sram_end)`, `bytes_per_tile` bytes; code may only lie in
    `[sram_base, exec_end)`, and `[interleaved_begin, sram_end)` interleaves
    memory elements of `element_bytes` bytes. `rpt_count_max` bounds a
    zero-overhead loop. The compiler fills it from its facts of the part
    (docs/ipu21.md cites each).
  }];
  let parameters = (ins StringRefParameter<"\"ipu21\" or \"ipu2\"">:$arch,
                        "int64_t":$tiles, "int64_t":$bytes_per_tile,
                        "int64_t":$element_bytes, "int64_t":$workers,
                        "int64_t":$clock_hz, "int64_t":$sram_base,
                        "int64_t":$exec_end, "int64_t":$interleaved_begin,
                        "int64_t":$sram_end, "int64_t":$rpt_count_max);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // SYNPL_DIALECT_IPU21_ATTRS_TD
