//===- IPU21Dialect.td - The ipu21 dialect -------------------------*- tablegen -*-===//
#ifndef SYNPL_DIALECT_IPU21_DIALECT_TD
#define SYNPL_DIALECT_IPU21_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def IPU21_Dialect : Dialect {
  let name = "ipu21";
  let cppNamespace = "::synpl::ipu21";
  let summary = "Graphcore IPU tile programs: tensors mapped to tiles, vertices, exchanges, BSP programs";
  let description = [{
    The sink for Graphcore's IPU (the FP8-capable Mk2 of the C600 card, and
    the earlier ipu2 parts): 1,472 tiles, each with its own 624 KiB of SRAM
    and its own code, no shared memory, and bulk-synchronous execution. A
    program alternates compute (every tile runs its vertices), exchange
    (tiles send words over the statically timed fabric) and sync (every
    tile meets).

    ```mlir
    ipu21.graph @step target #ipu21.target<arch = "ipu21", tiles = 1472, ...> {
      ipu21.tensor @x : tensor<1024x16xf16> mapping blocked(first_tile = 0, per_tile = 256) at 0x80000
      ipu21.buffer @w_in : 256 x f16 on tiles [0, 4) at 0x80200
      ipu21.codelet @amp amp_matmul(f16 -> f32) code 1024 at 0x4C000
      ipu21.compute_set @mm {
        ipu21.vertex @amp on tiles [0, 4) (in = @x[0, 256), weights = @w_in[0, 256),
                                          out = @y[0, 256)) params(m = 16, n = 16, k = 16, accumulate = 0)
                                          state at 0x4C400
      }
      ipu21.exchange @load_w descriptors at 0x4C600 {
        ipu21.send @w[0, 256) to @w_in[0, 256) on tiles [0, 4)
      }
      ipu21.program @main {
        ipu21.copy @load_w
        ipu21.sync
        ipu21.execute @mm
        ipu21.sync
      }
    }
    ```

    **Memory.** Every object a tile holds is placed explicitly: a tensor's
    home piece, a buffer, a codelet's code, a vertex's state, an exchange's
    descriptors. An object sits at one address on every tile that holds it.
    A tensor's elements on a tile are stored there contiguously in the
    order of that tile's intervals: its *tile-local* index space, which
    vertex fields and buffer endpoints address.

    **Checks.** The graph's verifier checks the program against its
    `#ipu21.target`, tagged with the property kind and row id of
    docs/spec-map.md:

    | row | kind | check |
    |---|---|---|
    | IPU.1 | resource | each tile's live bytes (tensors, buffers, code, vertex state, exchange descriptors) fit its SRAM; every object lies inside it |
    | IPU.2 | safety | objects on one tile that are live together do not overlap (buffers of different steps may share memory); code lies in the executable region |
    | IPU.3 | safety | vertex fields: inside their object, aligned for their codelet, interleaved fields in the interleaved region, `elem(a) != elem(b)` constraints |
    | IPU.4 | consistency | every element of a tensor is mapped to exactly one existing tile |
    | IPU.5 | consistency | exchanges: endpoints resolve, lie inside their objects and on existing tiles of their buffers, and agree in type and count |
    | IPU.6 | safety | every `rpt` loop of a vertex runs at most `rpt_count_max` (16 bits) times |
    | IPU.7 | consistency | FP8 AMP codelets only on an ipu21 target |
    | IPU.8 | safety | bulk-synchronous discipline: every `execute` and `copy` is followed by a `sync` before the next phase and before its block ends |
    | IPU.9 | consistency | vertex shape: a codelet's fields and parameters, with counts that agree |
    | IPU.10 | safety | no two sends of one exchange write the same element of a tile |
    | IPU.11 | consistency | a generic (`uop`) codelet's body: row L0.1's structure, scalar UOps a tile runs, buffers a tile holds, each REDUCE's init before its RANGE |
  }];
  // A generic codelet's body holds l0uop UOps.
  let dependentDialects = ["::synpl::l0uop::L0UOpDialect"];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class IPU21_Op<string mnemonic, list<Trait> traits = []>
    : Op<IPU21_Dialect, mnemonic, traits>;

#endif // SYNPL_DIALECT_IPU21_DIALECT_TD
