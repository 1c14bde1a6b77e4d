//===- L2Model.h - Analyses of an L2 method ------------------*- C++ -*-===//
//
// What the L2 verifiers and the L3→L2 / L2→L1 searches need to know about an
// `l2.methods` op: its parameters (named, with shapes), the depth and width of
// its infer DAG, cycles, and a resource estimate (parameters, FLOPs per
// training step, memory). All functions are read-only.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_DIALECT_L2_MODEL_H
#define SYNPL_DIALECT_L2_MODEL_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>

namespace synpl::l2 {

class MethodsOp;

/// The L2 cost model's nominal accelerator throughput, in FLOP/s: 10 TFLOP/s
/// sustained (a 2020s data-centre GPU at fp32). It is the ONLY hardware
/// number at L2; it turns a FLOP count into a forward-pass time for
/// `latency_budget` (row L2.7). L1 replaces it with the placed node's own
/// throughput from its target description.
inline constexpr double kReferenceFlopsPerSecond = 1.0e13;

/// One parameter slot of a layer: `weight` [in, out], `bias` [out], ...
struct ParamSlot {
  llvm::StringRef slot;
  llvm::SmallVector<int64_t, 4> shape;
};

/// One trainable parameter of an infer DAG.
struct ParamInfo {
  std::string name;                   ///< "<layer>.<slot>", e.g. "fc1.weight"
  llvm::SmallVector<int64_t, 4> shape;
  mlir::Operation *layer = nullptr;   ///< the layer op that owns it
  unsigned elementBytes = 4;
  uint64_t count() const;
};

/// The parameter slots of one layer op; empty for parameter-free ops and for
/// region ops (their parameters are those of the layers inside).
llvm::SmallVector<ParamSlot> layerParamSlots(mlir::Operation *op);

/// The name of every l2 layer and region op of `methods`' infer region, in
/// pre-order: its label (`as "fc1"`) or `<mnemonic>_<k>`.
llvm::MapVector<mlir::Operation *, std::string> layerNames(MethodsOp methods);

/// `'l2.linear' "fc1"` (or without the label): how diagnostics name a layer.
std::string describeLayer(mlir::Operation *op);

/// Every parameter of the infer DAG, in pre-order of their layers. Shared
/// cells (recurrent, diffusion denoiser) are counted once.
llvm::SmallVector<ParamInfo> collectParams(MethodsOp methods);

/// A cycle among the ops of a graph-region block, as the ops along it (the
/// first op's input comes from the last); empty when the block is acyclic.
/// A use inside a nested region counts as a use by the op holding it.
llvm::SmallVector<mlir::Operation *> findCycle(mlir::Block &block);

/// Row L2.6: rejects a cycle in `block` (owned by `owner`), naming it.
mlir::LogicalResult verifyAcyclic(mlir::Block &block, mlir::Operation *owner);

/// Whether `op` composes as a stage for `depth(n)`: linear, conv, attn, embed.
bool isStageLayer(mlir::Operation *op);

/// Hidden width a layer introduces (linear out, conv out_ch, attn dim, embed
/// dim); std::nullopt for other ops.
std::optional<int64_t> layerWidth(mlir::Operation *op);

/// The longest chain of stage layers from an infer input to the output.
/// Recurrent cells and diffusion denoisers count once (their weights are one
/// stage repeated). Requires an acyclic infer DAG.
int64_t composedDepth(MethodsOp methods);

/// The examples per step the sample method gives the infer DAG (for
/// distributed_shard, the inner method's per-shard batch).
int64_t sampleBatch(mlir::Attribute sample);

/// Data parallelism: the infer DAG of `methods` retyped for batches of
/// `batch` examples (its input's leading dimension), every op's result
/// given by its shape rule again. Fails, changing nothing, naming the op
/// when one has no shape rule or its rule refuses the new shapes.
mlir::LogicalResult rebatchInfer(MethodsOp methods, int64_t batch);

/// The value `v` views (through flatten and reshape ops), or `v` itself.
mlir::Value throughViews(mlir::Value v);

/// Forward FLOPs of one parameter-free or layer op (not region ops), for
/// its operand shapes. Multiply-add counts as 2.
uint64_t layerForwardFlops(mlir::Operation *op);

/// The L2 resource estimate: what one training step costs.
struct ResourceEstimate {
  uint64_t params = 0;              ///< trainable parameters (exact)
  uint64_t paramBytes = 0;          ///< parameter storage
  uint64_t optimizerStateBytes = 0; ///< update-chain state (moments, EMA copy)
  uint64_t gradientBytes = 0;       ///< gradient buffers (gradient-based backward)
  uint64_t forwardFlops = 0;        ///< one forward pass over one batch
  uint64_t flopsPerStep = 0;        ///< forward + backward method + update
  /// The part of a step that is compute-bound: the contractions' (linear,
  /// conv, attention) multiply-adds, forward and backward, without the
  /// gradient of the model's input.
  uint64_t contractionFlopsPerStep = 0;
  /// The memory-bound rest: bytes the elementwise layers (norms,
  /// activations, softmax, ...) read and write in one step, forward and
  /// backward; and the bytes the update reads and writes (parameters,
  /// gradients, optimizer state).
  uint64_t elementwiseStreamBytes = 0;
  uint64_t updateStreamBytes = 0;
  uint64_t activationBytes = 0;     ///< activations kept for the backward method
  /// The largest value a layer computes (not the model's input, nor a
  /// view of a value: flatten, reshape): a bound on each gradient the
  /// backward method holds besides what it kept.
  uint64_t largestComputedBytes = 0;
  /// The layer ops one forward pass runs (views aside; a recurrence's
  /// cell once per step): each is at least one kernel, forward and
  /// backward, whose fixed cost a small model's step is made of.
  uint64_t forwardLayerOps = 0;
  /// Everything resident during a step.
  uint64_t totalBytes() const;
  /// The forward pass time at kReferenceFlopsPerSecond, in milliseconds.
  double forwardLatencyMs() const;
};

/// Estimates `methods`' cost (a verified op: the searches estimate the
/// candidates that passed the L2 verifiers). Fails (without diagnostics) when
/// the infer DAG has a cycle, an unbounded recurrence, or a count past 2^64.
mlir::FailureOr<ResourceEstimate> estimateResources(MethodsOp methods);

} // namespace synpl::l2

#endif // SYNPL_DIALECT_L2_MODEL_H
