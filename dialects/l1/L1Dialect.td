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

    | row | kind | checked by |
    |---|---|---|
    | L1.1 topology | safety | `l1.edge` (endpoints exist, differ, not disk-to-disk; rate parses); placement on compute nodes (`l1.stage`, `l1.tensor_graph`, `l1.actor`); `l1.field` on storage; buffer nodes hold memory; a path of edges for every `l1.transfer`, `l1.read_batch`, `l1.forward`, `l1.send` and `then` |
    | L1.2 ref resolution | safety | every symbol use: nodes, forward/send/then targets, `reads`, window fields and readers, state fields, data fields, pipeline elements and links, schedule entries |
    | L1.3 forwarding signatures | safety | `l1.forward`, `l1.send`, `l1.tensor_graph` `then`: arity and tensor types against the target's entry block |
    | L1.4 window separation | safety | `l1.window` (within a step: writers' messages follow every reader), `l1.schedule` (across steps: the actor fences at depth > 1), `reads` (readers are listed) |
    | L1.5 shape propagation | consistency | every tensor op (rules in `synpl/Analysis/Shapes.h`), `l1.read_batch`, `l1.window_read`/`window_copy`, `l1.state_read`/`state_write`, `l1.transfer` |
    | L1.6 region provenance | consistency | the same forwarding sites: the buffer's node is the one the target expects; `l1.window_copy` lands on the actor's node |
    | L1.7 buffer conservation | liveness | `l1.stage` region: every CFG path (`synpl/Analysis/CFGPaths.h`) |
    | L1.8 tensor reachability | liveness | `l1.tensor_graph` and `l1.handler` regions |
    | L1.9 persistent memory | resource | `l1.actor`: state of all actors on a node against its memory |
    | L1.10 DAG finiteness | resource | `l1.tensor_graph` (def-use cycles), `l1.pipeline` (repeats), `l1.stage`/`l1.tensor_graph` (forward cycles), `l1.stage` (CFG loops) |
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
