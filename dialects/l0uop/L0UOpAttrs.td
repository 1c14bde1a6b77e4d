//===- L0UOpAttrs.td - The l0uop dialect's enums ------------------*- tablegen -*-===//
#ifndef SYNPL_DIALECT_L0UOP_ATTRS_TD
#define SYNPL_DIALECT_L0UOP_ATTRS_TD

include "synpl/Dialect/L0UOp/L0UOpDialect.td"
include "mlir/IR/EnumAttr.td"

class L0UOp_Enum<string name, string summary, list<I32EnumAttrCase> cases>
    : I32EnumAttr<name, summary, cases> {
  let cppNamespace = "::synpl::l0uop";
  let genSpecializedAttr = 0;
}

def L0UOp_PoolKind : L0UOp_Enum<"PoolKind", "memory-planning strategy of a pool", [
    I32EnumAttrCase<"persistent", 0>, I32EnumAttrCase<"arena", 1>,
    I32EnumAttrCase<"freelist", 2>]>;
def L0UOp_PoolKindAttr : EnumAttr<L0UOp_Dialect, L0UOp_PoolKind, "pool_kind">;

def L0UOp_MemSpace : L0UOp_Enum<"MemSpace", "physical memory a pool lives in", [
    I32EnumAttrCase<"host", 0>, I32EnumAttrCase<"device", 1>]>;
def L0UOp_MemSpaceAttr : EnumAttr<L0UOp_Dialect, L0UOp_MemSpace, "mem_space">;

def L0UOp_Direction : L0UOp_Enum<"Direction", "direction of a transfer", [
    I32EnumAttrCase<"h2d", 0>, I32EnumAttrCase<"d2h", 1>,
    I32EnumAttrCase<"d2d", 2>, I32EnumAttrCase<"h2h", 3>]>;
def L0UOp_DirectionAttr : EnumAttr<L0UOp_Dialect, L0UOp_Direction, "direction">;

def L0UOp_InitKind : L0UOp_Enum<"InitKind", "what an init op writes into a slot", [
    I32EnumAttrCase<"zeros", 0>, I32EnumAttrCase<"ones", 1>,
    I32EnumAttrCase<"constant", 2>, I32EnumAttrCase<"kaiming", 3>,
    I32EnumAttrCase<"xavier", 4>, I32EnumAttrCase<"uniform", 5>,
    I32EnumAttrCase<"normal", 6>, I32EnumAttrCase<"decode_idx", 7>,
    I32EnumAttrCase<"planned_steps", 8>, I32EnumAttrCase<"training_mode", 9>,
    I32EnumAttrCase<"rank", 10>]>;
def L0UOp_InitKindAttr : EnumAttr<L0UOp_Dialect, L0UOp_InitKind, "init_kind">;

def L0UOp_RangeKind : L0UOp_Enum<"RangeKind", "how a RANGE is iterated", [
    I32EnumAttrCase<"loop", 0>,
    I32EnumAttrCase<"global_x", 1>, I32EnumAttrCase<"global_y", 2>,
    I32EnumAttrCase<"global_z", 3>,
    I32EnumAttrCase<"group_x", 4>, I32EnumAttrCase<"group_y", 5>,
    I32EnumAttrCase<"group_z", 6>,
    I32EnumAttrCase<"local_x", 7>, I32EnumAttrCase<"local_y", 8>,
    I32EnumAttrCase<"local_z", 9>]>;
def L0UOp_RangeKindAttr : EnumAttr<L0UOp_Dialect, L0UOp_RangeKind, "range_kind">;

def L0UOp_ReduceKind : L0UOp_Enum<"ReduceKind", "combining op of a REDUCE", [
    I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"mul", 1>,
    I32EnumAttrCase<"max", 2>]>;
def L0UOp_ReduceKindAttr : EnumAttr<L0UOp_Dialect, L0UOp_ReduceKind, "reduce_kind">;

def L0UOp_CollectiveKind : L0UOp_Enum<"CollectiveKind", "what a collective does across the ranks", [
    I32EnumAttrCase<"all_reduce", 0>, I32EnumAttrCase<"all_gather", 1>,
    I32EnumAttrCase<"reduce_scatter", 2>, I32EnumAttrCase<"broadcast", 3>]>;
def L0UOp_CollectiveKindAttr : EnumAttr<L0UOp_Dialect, L0UOp_CollectiveKind, "collective_kind">;

def L0UOp_CollectiveReduce : L0UOp_Enum<"CollectiveReduce", "how a collective combines the ranks' values", [
    I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"mean", 1>,
    I32EnumAttrCase<"max", 2>, I32EnumAttrCase<"min", 3>]>;
def L0UOp_CollectiveReduceAttr : EnumAttr<L0UOp_Dialect, L0UOp_CollectiveReduce, "collective_reduce">;

#endif // SYNPL_DIALECT_L0UOP_ATTRS_TD
