//===- L1Dialect.td - The l1 dialect ------------------------*- tablegen -*-===//
#ifndef SYNPL_DIALECT_L1_DIALECT_TD
#define SYNPL_DIALECT_L1_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def L1_Dialect : Dialect {
  let name = "l1";
  let cppNamespace = "::synpl::l1";
  let summary = "L1 Placement: where and when (topology, data sources, actors, stages, tensor graphs, pipelines, schedule)";
  let description = [{
    The `l1` dialect is the spec's L1 Placement layer: it maps an L2 method
    onto specific hardware and says when each piece runs. A program is a
    module holding, at its top level:

    * one `l1.system` (the hardware graph: `l1.node`s and `l1.edge`s);
    * `l1.data` sources binding L3's data fields to storage nodes;
    * `l1.actor`s, the only owners of mutable state, with read windows and
      message handlers (the only writers);
    * `l1.stage`s, stateless CFG regions over buffers typed
      `!l1.buf<@node, tensor<...>>` (region provenance in the type);
    * `l1.tensor_graph`s, pure DAGs of primitive tensor ops;
    * `l1.pipeline`s and one `l1.schedule`.

    Every cross reference is a symbol reference. Node references (`on @gpu_0`,
    `!l1.buf<@ram_0, ...>`, edge endpoints) resolve in the module's single
    `l1.system`; window references are nested (`@model_state::@weights`), and
    so are handler references (`@model_state::@GradUpdate`).

    The ten phase-1 verification rows (L1.1 - L1.10) are op, region and
    symbol-use verifiers; each diagnostic is tagged with its property kind and
    row id. They are read-only.
  }];
  let useDefaultTypePrinterParser = 1;
  // Stage bodies branch with cf.br / cf.cond_br.
  let dependentDialects = ["::mlir::cf::ControlFlowDialect"];
  let extraClassDeclaration = [{
    void registerTypes();
  }];
}

class L1_Op<string mnemonic, list<Trait> traits = []>
    : Op<L1_Dialect, mnemonic, traits>;

#endif // SYNPL_DIALECT_L1_DIALECT_TD
