//===- L0CtlOps.td - The l0ctl dialect's operations -------------*- tablegen -*-===//
#ifndef SYNPL_DIALECT_L0CTL_OPS_TD
#define SYNPL_DIALECT_L0CTL_OPS_TD

include "synpl/Dialect/L0Ctl/L0CtlDialect.td"
include "synpl/Dialect/L0Ctl/L0CtlAttrs.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// A 64-bit signless integer attribute read as int64_t (I64Attr reads
// uint64_t, which would turn a negative size into a huge one).
def L0Ctl_I64Attr : TypedSignlessIntegerAttrBase<I64, "int64_t",
                                                "64-bit signless integer attribute"> {
  let convertFromStorage = "$_self.getValue().getSExtValue()";
}

// Registers: the integer widths a control program computes on. Memory words
// (what load/store/queue ops move) are the byte-sized ones.
def L0Ctl_Reg : AnyTypeOf<[I1, I8, I16, I32, I64], "register (i1, i8, i16, i32 or i64)">;
def L0Ctl_Word : AnyTypeOf<[I8, I16, I32, I64], "memory word (i8, i16, i32 or i64)">;

//===----------------------------------------------------------------------===//
// Regions and programs
//===----------------------------------------------------------------------===//

def L0Ctl_RegionOp : L0Ctl_Op<"region", [Symbol]> {
  let summary = "a named, sized, aligned, access-controlled memory region";
  let description = [{
    ```mlir
    l0ctl.region @staging size 401408 access rw align 64
    l0ctl.region @batch_queue size 64 access rw queue 8
    ```

    A region is the only kind of memory control code can touch. `size` is
    in bytes. `access` says what the programs of this module may do to it:
    `ro` (load, queue_pop), `rw` (everything), `wo` (queue_push only: the
    spec's `store` is for `rw` regions alone). `align` (bytes, a power of
    two, default 8) is the alignment the runtime allocates the region with;
    every access is naturally aligned, so the widest access into a region is
    its alignment.

    `queue N` makes the region a ring buffer of `size / N` descriptors of
    `N` bytes (1, 2, 4 or 8) that only `queue_push` and `queue_pop` reach;
    the runtime's `queue_push/pop` primitives keep head and tail outside the
    region.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, L0Ctl_I64Attr:$size,
                       L0Ctl_AccessAttr:$access,
                       DefaultValuedAttr<L0Ctl_I64Attr, "8">:$alignment,
                       OptionalAttr<L0Ctl_I64Attr>:$queue_entry);
  let assemblyFormat = [{
    $sym_name `size` $size `access` `` $access (`align` $alignment^)?
    (`queue` $queue_entry^)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    bool isQueue() { return getQueueEntry().has_value(); }
    bool isReadable() { return getAccess() != Access::wo; }
    bool isWritable() { return getAccess() != Access::ro; }
  }];
}

def L0Ctl_ProgramOp : L0Ctl_Op<"program", [Symbol, IsolatedFromAbove]> {
  let summary = "an execution unit: a CFG of control blocks";
  let description = [{
    ```mlir
    l0ctl.program @actor_dispatch {
      %d = l0ctl.queue_pop @batch_queue : i64
      ...
      l0ctl.terminate
    }
    ```

    One execution unit of the Control IR (a stage, an actor handler, the
    schedule loop's body): the spec's `control_blocks`. The body is an SSA
    CFG whose entry block takes no arguments (all state is in regions) and
    whose blocks end in `branch`, `jump` or `terminate`. The CFG must be
    acyclic: Machine IR has no loops, so every execution of a program is
    bounded by its number of blocks; repetition comes from the runtime
    running the program again.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name);
  let regions = (region MinSizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
}

//===----------------------------------------------------------------------===//
// The ten control ops (and immediates)
//===----------------------------------------------------------------------===//

class L0Ctl_InstOp<string mnemonic, list<Trait> traits = []>
    : L0Ctl_Op<mnemonic, !listconcat(traits, [HasParent<"ProgramOp">])>;

def L0Ctl_ConstOp : L0Ctl_InstOp<"const",
    [ConstantLike, Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "an immediate operand";
  let description = [{
    ```mlir
    %c = l0ctl.const 16 : i64
    ```
    Not one of the ten ops: it names an immediate that every backend encodes
    inside the instruction using it. Static offsets built from constants are
    bounds-checked like literal ones.
  }];
  let arguments = (ins TypedAttrInterface:$value);
  let results = (outs L0Ctl_Reg:$result);
  let assemblyFormat = "$value attr-dict";
  let hasVerifier = 1;
}

class L0Ctl_RegionAccessOp<string mnemonic, list<Trait> traits = []>
    : L0Ctl_InstOp<mnemonic, !listconcat(traits,
          [DeclareOpInterfaceMethods<SymbolUserOpInterface>])>;

def L0Ctl_LoadOp : L0Ctl_RegionAccessOp<"load", [MemoryEffects<[MemRead]>]> {
  let summary = "load.{sz}: read 1, 2, 4 or 8 bytes from a region";
  let description = [{
    ```mlir
    %v = l0ctl.load @staging[16] : i32
    %w = l0ctl.load @staging[%off + 8] : i64
    ```
    Reads `sz` bytes (the width of the result: i8/i16/i32/i64 = 1/2/4/8) at
    byte offset `%off + disp` of the region (`%off` optional, unsigned, i64).
    The region must be readable (`ro` or `rw`) and not a queue. A static
    offset (no `%off`, or `%off` an `l0ctl.const`) must keep the access
    inside the region and naturally aligned; with a dynamic `%off`, `disp +
    sz` must still fit.
  }];
  let arguments = (ins FlatSymbolRefAttr:$region, Optional<I64>:$offset,
                       L0Ctl_I64Attr:$disp);
  let results = (outs L0Ctl_Word:$result);
  let assemblyFormat = [{
    $region `` custom<RegionAddress>($offset, $disp) attr-dict `:` type($result)
  }];
}

def L0Ctl_StoreOp : L0Ctl_RegionAccessOp<"store", [MemoryEffects<[MemWrite]>]> {
  let summary = "store.{sz}: write 1, 2, 4 or 8 bytes into an rw region";
  let description = [{
    ```mlir
    l0ctl.store @staging[%off + 8], %v : i64
    ```
    Writes the value (its width is `sz`) at byte offset `%off + disp`. Only
    `rw` regions take stores; offsets are checked as for `l0ctl.load`.
  }];
  let arguments = (ins FlatSymbolRefAttr:$region, Optional<I64>:$offset,
                       L0Ctl_I64Attr:$disp, L0Ctl_Word:$value);
  let assemblyFormat = [{
    $region `` custom<RegionAddress>($offset, $disp) `,` $value attr-dict
    `:` type($value)
  }];
}

def L0Ctl_HashOp : L0Ctl_InstOp<"hash", [Pure]> {
  let summary = "deterministic 64-bit hash of a register";
  let description = [{
    ```mlir
    %h = l0ctl.hash %key : i32
    ```
    Zero-extends the value to 64 bits and applies the splitmix64 finaliser
    (`x ^= x >> 30; x *= 0xbf58476d1ce4e5b9; x ^= x >> 27;
    x *= 0x94d049bb133111eb; x ^= x >> 31`): the same on every backend, so
    map indices computed at compile time and at run time agree.
  }];
  let arguments = (ins L0Ctl_Reg:$value);
  let results = (outs I64:$result);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

def L0Ctl_ArithOp : L0Ctl_InstOp<"arith", [Pure, SameOperandsAndResultType]> {
  let summary = "integer arithmetic: add, sub, mul, and, or, shl, shr";
  let description = [{
    ```mlir
    %r = l0ctl.arith add %a, %b : i64
    ```
    Two's-complement, wrapping. `shr` is a logical shift; shift amounts are
    taken modulo the width.
  }];
  let arguments = (ins L0Ctl_ArithKindAttr:$kind, L0Ctl_Reg:$lhs, L0Ctl_Reg:$rhs);
  let results = (outs L0Ctl_Reg:$result);
  let assemblyFormat = "`` $kind $lhs `,` $rhs attr-dict `:` type($result)";
}

def L0Ctl_CmpOp : L0Ctl_InstOp<"cmp", [Pure, SameTypeOperands]> {
  let summary = "integer comparison to a 1-bit register: eq, neq, lt, gt";
  let description = [{
    ```mlir
    %c = l0ctl.cmp lt %a, %b : i64
    ```
    `lt` and `gt` compare unsigned: control registers hold offsets, counts
    and descriptors.
  }];
  let arguments = (ins L0Ctl_CmpKindAttr:$kind, L0Ctl_Reg:$lhs, L0Ctl_Reg:$rhs);
  let results = (outs I1:$result);
  let assemblyFormat = "`` $kind $lhs `,` $rhs attr-dict `:` type($lhs)";
}

def L0Ctl_BranchOp : L0Ctl_InstOp<"branch", [
    AttrSizedOperandSegments, Pure, Terminator,
    DeclareOpInterfaceMethods<BranchOpInterface, ["getSuccessorForOperands"]>]> {
  let summary = "conditional jump on a 1-bit register";
  let description = [{
    ```mlir
    l0ctl.branch %c, ^full(%n : i64), ^empty
    ```
  }];
  let arguments = (ins I1:$condition, Variadic<L0Ctl_Reg>:$trueDestOperands,
                       Variadic<L0Ctl_Reg>:$falseDestOperands);
  let successors = (successor AnySuccessor:$trueDest, AnySuccessor:$falseDest);
  let assemblyFormat = [{
    $condition `,`
    $trueDest (`(` $trueDestOperands^ `:` type($trueDestOperands) `)`)? `,`
    $falseDest (`(` $falseDestOperands^ `:` type($falseDestOperands) `)`)?
    attr-dict
  }];
}

def L0Ctl_JumpOp : L0Ctl_InstOp<"jump", [
    Pure, Terminator, DeclareOpInterfaceMethods<BranchOpInterface>]> {
  let summary = "unconditional jump";
  let description = [{
    ```mlir
    l0ctl.jump ^done(%v : i64)
    ```
  }];
  let arguments = (ins Variadic<L0Ctl_Reg>:$destOperands);
  let successors = (successor AnySuccessor:$dest);
  let assemblyFormat = [{
    $dest (`(` $destOperands^ `:` type($destOperands) `)`)? attr-dict
  }];
}

def L0Ctl_QueuePushOp : L0Ctl_RegionAccessOp<"queue_push",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "push a descriptor onto a queue region";
  let description = [{
    ```mlir
    l0ctl.queue_push @dispatch_queue, %desc : i64
    ```
    The region must be a queue that this module may write (`rw` or `wo`),
    and the value as wide as the queue's entries.
  }];
  let arguments = (ins FlatSymbolRefAttr:$queue, L0Ctl_Word:$value);
  let assemblyFormat = "$queue `,` $value attr-dict `:` type($value)";
}

def L0Ctl_QueuePopOp : L0Ctl_RegionAccessOp<"queue_pop",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "pop a descriptor from a queue region";
  let description = [{
    ```mlir
    %desc = l0ctl.queue_pop @batch_queue : i64
    ```
    The region must be a queue that this module may read (`ro` or `rw`),
    and the result as wide as the queue's entries.
  }];
  let arguments = (ins FlatSymbolRefAttr:$queue);
  let results = (outs L0Ctl_Word:$result);
  let assemblyFormat = "$queue attr-dict `:` type($result)";
}

def L0Ctl_TerminateOp : L0Ctl_InstOp<"terminate", [Terminator]> {
  let summary = "end of the execution unit";
  let description = [{
    ```mlir
    l0ctl.terminate
    ```
  }];
  let assemblyFormat = "attr-dict";
}

#endif // SYNPL_DIALECT_L0CTL_OPS_TD
