//===- L0UOpDialect.td - The l0uop dialect ------------------------*- tablegen -*-===//
#ifndef SYNPL_DIALECT_L0UOP_DIALECT_TD
#define SYNPL_DIALECT_L0UOP_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def L0UOp_Dialect : Dialect {
  let name = "l0uop";
  let cppNamespace = "::synpl::l0uop";
  let summary = "L0 compute IR and plan: the memory, kernel, stream, sync, transfer and init plans and the ~25 UOps";
  let description = [{
    The spec's `L0_IR`: the fully explicit execution plan that the L1 → L0
    emission passes (memory planning, stream inference, kernel scheduling)
    produce, and the Compute IR (UOps) that tensor graphs emit to.

    ```mlir
    l0uop.plan @mnist pipeline_depth 2 {
      l0uop.pool @dev_arena arena on device capacity 64MiB
      l0uop.slot @h1 pool @dev_arena offset 0 size 131072 lifetime(1, 4)
          : !l0uop.buf<128x256xf32>
      l0uop.kernel @gelu inputs(%x = @h1 : !l0uop.buf<128x256xf32>)
          outputs(%y = @a1 : !l0uop.buf<128x256xf32>)
          grid(128, 1, 1) block(256, 1, 1) shared_mem 0 { ...UOps... }
      l0uop.stream @s0 [@fc1, @gelu]
      l0uop.event @e0
      l0uop.record @e0 after @gelu on @s0
      l0uop.wait @e0 before @fc1 on @s1
      l0uop.transfer @tx_x @x_host -> @x_dev h2d bytes 401408
      l0uop.init kaiming @w1 fan_in 784
    }
    ```

    | `L0_IR` field   | here                                              |
    |-----------------|---------------------------------------------------|
    | memory_plan     | `l0uop.pool`, `l0uop.slot`                        |
    | kernel_plan     | `l0uop.kernel` (a flat UOp sequence in its body)  |
    | stream_plan     | `l0uop.stream`                                    |
    | sync_plan       | `l0uop.event`, `l0uop.record`, `l0uop.wait`       |
    | transfer_plan   | `l0uop.transfer`                                  |
    | init_plan       | `l0uop.init`                                      |
    | control_blocks  | `l0ctl.region`, `l0ctl.program` (the l0ctl dialect; they may sit in the plan's body) |

    The UOps are the spec's `(op, dtype, src[], arg)` nodes: `src` are the
    operands, `dtype` the result type (a builtin scalar or vector type),
    `arg` the attributes. A kernel body is the flat sequence the spec shows:
    `RANGE … END` and `IF … ENDIF` bracket the ops they govern and must
    nest. Buffers are the kernel's block arguments, typed
    `!l0uop.buf<shape x dtype>`; `INDEX` turns a buffer and indices into a
    `!l0uop.ptr<dtype>` that `LOAD` and `STORE` use.

    Phase-2 verification (read-only; the rows of docs/spec-map.md):

    | row  | kind     | where                                      |
    |------|----------|--------------------------------------------|
    | L0.1 | safety   | each UOp's verifier and the kernel's body verifier |
    | L0.2 | safety   | `l0uop.plan` (per pool)                    |
    | L0.3 | safety   | `l0uop.plan` (happens-before over streams and syncs) |
    | L0.4 | liveness | `l0uop.plan` (events, cross-stream dependencies) |
    | L0.5 | resource | `l0uop.plan` (lifetime sweep per pool)     |
    | L0.6 | resource | `l0uop.plan` (freelist pools × pipeline_depth) |
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let extraClassDeclaration = [{
    // Defined beside the type and attribute storage classes (L0UOpOps.cpp).
    void registerTypesAndAttributes();
  }];
}

class L0UOp_Op<string mnemonic, list<Trait> traits = []>
    : Op<L0UOp_Dialect, mnemonic, traits>;

// An op whose single-block region holds a UOp body: `l0uop.kernel`, and
// the generic codelets of the sinks that run UOp bodies themselves (an
// `ipu21.uop_codelet`). Its verifier checks the body with
// synpl::l0uop::verifyUOpBody.
def L0UOp_UOpScope : NativeOpTrait<"UOpScope"> {
  let cppNamespace = "::synpl::l0uop";
}
// A UOp: it sits directly in a UOpScope op's body.
def L0UOp_InUOpScope : NativeOpTrait<"InUOpScope"> {
  let cppNamespace = "::synpl::l0uop";
}

#endif // SYNPL_DIALECT_L0UOP_DIALECT_TD
