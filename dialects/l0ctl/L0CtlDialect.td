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
    The Control IR (Machine IR) of the spec's layer L0: the CPU-side
    orchestration that stages and actor handlers of L1 emit to (data loading,
    transfers, message dispatch, pipeline coordination).

    Memory is not a flat address space. Every byte the control code touches
    lies in an `l0ctl.region`: a named, sized, aligned memory with an access
    mode (`ro`, `rw`, `wo`); queues are regions too. Every `load`, `store`,
    `queue_push` and `queue_pop` names its region, so a backend knows all
    aliasing without analysis (LLVM: one `noalias` pointer per region).

    Code lives in `l0ctl.program` ops: one execution unit each, a CFG of
    blocks over SSA registers (`i1`, `i8`, `i16`, `i32`, `i64`) ending in
    `branch`, `jump` or `terminate`. The ten ops of the spec are `load`,
    `store`, `hash`, `arith`, `cmp`, `branch`, `jump`, `queue_push`,
    `queue_pop` and `terminate`; `l0ctl.const` materialises the immediates
    every backend encodes inline.

    Regions sit beside the programs that use them, in the same symbol
    table: the module, or the `l0uop.plan` whose `control_blocks` they are
    (the MNIST example keeps them in the plan).

    Structural checks (not verification rows of the spec: they make a
    program well formed): regions resolve; static offsets lie inside the
    region and are naturally aligned; the access mode allows the access;
    queue ops only on queue regions and plain loads/stores never on them;
    registers have the right widths; successors are blocks of the same
    program; the CFG has no cycle (Machine IR has no loops: execution is
    bounded by construction, as the eBPF backend requires).
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    // Defined beside the attribute storage classes (L0CtlOps.cpp).
    void registerAttributes();
  }];
}

class L0Ctl_Op<string mnemonic, list<Trait> traits = []>
    : Op<L0Ctl_Dialect, mnemonic, traits>;

#endif // SYNPL_DIALECT_L0CTL_DIALECT_TD
