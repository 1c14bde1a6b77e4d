//===- L2ToL1Impl.h - L2 -> L1: update rules and placement ----*- C++ -*-===//
//
// The private halves of the L2 -> L1 pass (lib/Conversion/L2ToL1/L2ToL1.cpp)
// that have logic of their own and are unit-tested on their own:
//
//  * update materialisation (UpdateRules.cpp): an L2 update chain becomes
//    the state fields and the message handler of the actor that owns the
//    parameters, written as explicit l1 tensor arithmetic;
//  * placement search (Placement.cpp): where the tensor graph, the actor,
//    the host stages and the staging buffers go, and the pipeline depth,
//    chosen by the search driver (synpl/Search/Search.h).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_CONVERSION_L2TOL1_L2TOL1IMPL_H
#define SYNPL_LIB_CONVERSION_L2TOL1_L2TOL1IMPL_H

#include "synpl/Conversion/L2ToL1/TrainingGraph.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Dialect/L2/L2Ops.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <string>

namespace synpl::l2tol1 {

//===----------------------------------------------------------------------===//
// Update materialisation
//===----------------------------------------------------------------------===//

/// One parameter the update writes.
struct UpdateParam {
  /// The actor state field holding it (`fc1_weight`); it must exist in the
  /// actor, typed tensor<shape x f32>.
  std::string state;
  /// The L2 name (`fc1.weight`) that `param_override` entries match.
  std::string l2Name;
  llvm::SmallVector<int64_t, 4> shape;
  /// Tensor parallelism: the axis `shape` (one rank's block) splits; the
  /// optimizer state the rules add for it is split alike.
  std::optional<uint64_t> shard = std::nullopt;
  /// Update sharding (data-parallel replicas, ZeRO stage 1): `shape` is the
  /// replica's block of rows of a parameter `replicaBlocks` times taller.
  /// The gradient and the optimizer state are the block (the state split
  /// alike, `shard 0`); the handler reads the block of the whole parameter
  /// at the rank (l1.block_slice) and writes the replicas' updated blocks
  /// gathered (l1.all_gather). 0: the whole parameter.
  int64_t replicaBlocks = 0;
};

/// Constants of the update rules that the spec's forms leave open. One
/// definition each; docs/l2-to-l1.md lists them.
struct UpdateConstants {
  /// Muon: momentum (Nesterov) and the Newton–Schulz quintic coefficients
  /// of the Muon reference implementation.
  double muonMomentum = 0.95;
  double nsA = 3.4445, nsB = -4.7750, nsC = 2.0315;
  double nsEps = 1.0e-7;
  /// Muon on a parameter of rank < 2: Adam with these values, under the
  /// same schedule.
  double muonFallbackLr = 3.0e-4;
  /// gradient_clip: norm + eps in the denominator.
  double clipEps = 1.0e-6;
};

/// The actor's update counter (`step : tensor<f32>`, the number of updates
/// so far), which the update rules advance and the step-dependent rules
/// share: bias correction, schedules, the draws of random layers.
inline constexpr llvm::StringLiteral kStepField = "step";

/// The process's rank (`init rank`): a tensor-parallel shard's, or under
/// update sharding a replica's, block index.
inline constexpr llvm::StringLiteral kRankField = "rank";

/// Adds to `actor` the state the update chain `update` needs (moments, the
/// step counter, EMA shadow copies, the decay horizon `total_steps` with init
/// `planned_steps`) after its existing state fields, and a handler
/// `handlerName` taking one gradient per `params` (in order, each of its
/// parameter's shape) whose body applies the update with explicit tensor
/// ops and ends in `l1.return`. With `countSteps`, the handler advances the
/// step counter `step` (added when missing) even when no rule of the chain
/// reads it. Fails, adding nothing, with an error located at `diagLoc`
/// naming the method that cannot be lowered and why.
mlir::FailureOr<l1::HandlerOp>
materializeUpdate(l1::ActorOp actor, llvm::StringRef handlerName,
                  mlir::Attribute update, llvm::ArrayRef<UpdateParam> params,
                  mlir::Location diagLoc, const UpdateConstants &constants = {},
                  bool countSteps = false);

/// Why `update` cannot be materialised for `params` (`<method>: <why>`,
/// naming the innermost method at fault), or std::nullopt when it can.
std::optional<std::string> whyUpdateNotLowered(mlir::Attribute update,
                                               llvm::ArrayRef<UpdateParam> params);

//===----------------------------------------------------------------------===//
// Placement search
//===----------------------------------------------------------------------===//

/// Tensor parallelism: a linear layer a placement on several shards may
/// split (TensorParallel.cpp), and how a placement on `ranks` shards splits
/// it (splitLinears).
struct SplitLinear {
  mlir::Operation *layer = nullptr;
  std::string name; ///< the layer's name (its weight's state, less `_weight`)
  unsigned weight = 0, bias = 0; ///< indices of its TrainableParams
  int64_t rows = 0, in = 0, out = 0;
  /// Whether the backward pass needs its input's gradient.
  bool inputGrad = true;
  /// The splittable linear this one's output reaches through elementwise
  /// activations alone (each the only user of the last), or -1.
  int feeds = -1;

  /// How a placement splits it. By columns: a rank holds a block of the
  /// weight's columns and of the bias, computes its block of the output
  /// and the ranks gather the blocks; the input's gradient is the sum of
  /// the ranks' partials. By rows: a rank holds a block of the weight's
  /// rows (the bias whole), multiplies its block of the input, and the
  /// ranks sum the partial outputs; the input's gradient is gathered.
  enum class Axis { columns, rows } axis = Axis::columns;
  /// Megatron's pairing of a column split with the row split it feeds:
  /// the column split's output stays this rank's block (no gather), goes
  /// through the activations as a block and is the row split's input
  /// block (no slice); in the backward pass, the row split's input
  /// gradient is that block (no gather) and is the column split's output
  /// gradient block.
  bool blockOut = false, blockIn = false;

  /// The axis of the weight [in, out] a split divides.
  unsigned weightAxis() const { return axis == Axis::columns ? 1 : 0; }
  /// Whether `ranks` shards can split it along `a`.
  bool divides(int64_t ranks, Axis a) const {
    return (a == Axis::columns ? out : in) % ranks == 0;
  }
};
/// The smallest weight (in elements) worth splitting: below it the
/// collectives cost more than the split saves.
constexpr int64_t kMinSplitElements = 16384;
/// The linears of `params` a tensor-parallel placement may split, in order.
llvm::SmallVector<SplitLinear> splittableLinears(llvm::ArrayRef<TrainableParam> params);
/// How a placement on `ranks` shards splits `splittable`: the linears it
/// splits, each with its axis and pairing. Pairs first (a column split
/// feeding a row split through activations); every other linear by the
/// axis whose collectives move fewer bytes (columns: a gather of the output
/// and a sum of the input's gradient; rows: a sum of the output and a
/// gather of the input's gradient), columns on a tie.
llvm::SmallVector<SplitLinear> splitLinears(llvm::ArrayRef<SplitLinear> splittable,
                                            int64_t ranks);
/// `fc1 by columns, fc2 by rows (paired with fc1)`.
std::string describeSplits(llvm::ArrayRef<SplitLinear> splits);
/// Why `methods` cannot run tensor parallel, or nullopt.
std::optional<std::string> tensorParallelObstacle(l2::MethodsOp methods);
/// Makes the parameters `splits` divide into one rank's blocks: their
/// params' and update params' shapes become a block, `shard` their axis.
void shardParams(llvm::ArrayRef<SplitLinear> splits, int64_t ranks,
                 llvm::MutableArrayRef<TrainableParam> params,
                 llvm::MutableArrayRef<UpdateParam> update);

/// The first rule of `update` that needs whole tensors (gradient_clip: the
/// norm of every gradient; muon: whole matrices), or null: what neither a
/// tensor-parallel split nor update sharding can run on blocks.
mlir::Attribute wholeTensorRule(mlir::Attribute update);

/// Update sharding (ZeRO stage 1) across data-parallel replicas: whether
/// `update` can update a replica's block of a parameter (its rules are
/// elementwise per parameter), else why not.
std::optional<std::string> updateShardingObstacle(mlir::Attribute update);

/// The parameters (by index; `rows` their first dimension, `elements`
/// their size) whose update `replicas` replicas shard: those of at least
/// kMinSplitElements elements whose rows the replicas divide. Smaller ones
/// stay in the all-reduce's buckets, updated whole on every replica.
llvm::SmallVector<unsigned>
shardedUpdateParams(llvm::ArrayRef<std::pair<int64_t, int64_t>> rowsAndElements,
                    int64_t replicas);

/// Whether the placement search may shard the replicas' update.
enum class UpdateSharding { Auto, On, Off };

struct PlacementProblem;
/// Why `replicas` replicas cannot shard `problem`'s update (its rules need
/// whole tensors, or no parameter qualifies), or std::nullopt when they can.
std::optional<std::string> whyUpdateNotSharded(const PlacementProblem &problem,
                                               int64_t replicas);

/// What the placement search needs to know about the training program.
struct PlacementProblem {
  l1::SystemOp system;
  /// Parameters and optimizer state: resident on the graph's node.
  uint64_t persistentBytes = 0;
  /// One step's input batch (all fields), as read into staging memory.
  uint64_t batchBytes = 0;
  /// One step's gradients (the message to the actor).
  uint64_t gradientBytes = 0;
  /// The metrics the host reports per step (loss, correct).
  uint64_t reportBytes = 0;
  /// Activations kept for the backward pass, per step in flight.
  uint64_t activationBytes = 0;
  /// Gradients in flight besides them: a VJP reads one and writes another,
  /// each at most the largest value a layer computes.
  uint64_t gradientTemporaryBytes = 0;
  /// One training step of the global batch: the contractions' FLOPs
  /// (forward and backward), the bytes the elementwise layers stream, and
  /// the bytes the update streams (l2::ResourceEstimate).
  uint64_t contractionFlops = 0;
  uint64_t elementwiseStreamBytes = 0;
  uint64_t updateStreamBytes = 0;
  /// The largest value a layer computes (one replica's): whether a host's
  /// memory-bound kernels are large enough to split among its cores.
  uint64_t largestComputedBytes = 0;
  /// The kernels one step runs, about: six per forward layer op (its
  /// forward, and its backward's products and reductions) and one per
  /// parameter (its update); the Fashion-MNIST MLP runs 58 (estimated 58),
  /// the CNN 57 (68), the character LM 195 (158). Each has a fixed cost on
  /// top of its FLOPs and bytes.
  uint64_t kernelsPerStep = 0;
  /// The gradients the backward pass produces last (the first layer's
  /// parameters): their all-reduce has no backward work left to hide it.
  uint64_t lastGradientBytes = 0;
  /// The storage nodes the data fields are bound to (`l1.at`).
  llvm::SmallVector<std::string> storageNodes;
  /// Whether some field has no `l1.at`: it goes to the first storage node
  /// (by name) that reaches the staging memory.
  bool hasUnboundFields = false;
  /// A `#[l1::on(node)]` hatch: the node the graph and actor must use.
  std::optional<std::string> forcedNode;
  /// The isa the graph's node must have (the pass's graph-isa); empty: any.
  std::string graphIsa;
  /// Data parallelism. The global batch (every replica's slices together)
  /// and, under `distributed_shard(shards: n)`, the replica count it fixes
  /// (0: any count that divides the global batch).
  int64_t globalBatch = 1;
  int64_t shards = 0;
  /// Tensor parallelism: the linears a split may divide, their parameters'
  /// bytes with their optimizer state, and why the model cannot be split
  /// at all ("" when it can).
  llvm::SmallVector<SplitLinear> splittable;
  double optimizerStatePerParam = 0;
  std::string tensorParallelObstacle;
  /// The bytes the update streams per parameter byte (a shard streams its
  /// block of the split parameters' share).
  double updateBytesPerParamByte = 0;
  /// Scalars every rank sums in a split step (a norm of the parameters).
  int64_t scalarSums = 0;
  /// Update sharding: each parameter's rows and elements (f32), why the
  /// update cannot be sharded ("" when it can), and the user's choice.
  llvm::SmallVector<std::pair<int64_t, int64_t>> paramRowsAndElements;
  std::string updateShardingObstacle;
  UpdateSharding updateSharding = UpdateSharding::Auto;
};

/// The chosen placement.
struct Placement {
  std::string compute;   ///< tensor graph and actor
  std::string host;      ///< load / transfer / report stages
  std::string staging;   ///< memory node the batches are read into
  std::string deviceMem; ///< where the graph's buffers live
  std::string storage;   ///< where unbound data fields live ("": none reaches staging)
  int64_t depth = 1;     ///< pipeline_depth
  /// Data parallel: the compute nodes of the replicas, `compute` first
  /// (one rank each); empty: one process.
  llvm::SmallVector<std::string> replicas;
  int64_t replicaCount() const { return replicas.empty() ? 1 : (int64_t)replicas.size(); }
  /// Data parallel: each replica updates its block of the large parameters
  /// (ZeRO stage 1; shardedUpdateParams).
  bool shardedUpdate = false;
  /// Tensor parallel: the compute nodes of the shards, `compute` first (one
  /// rank each, every one on the whole batch); empty: none.
  llvm::SmallVector<std::string> shards;
  int64_t shardCount() const { return shards.empty() ? 1 : (int64_t)shards.size(); }
  /// The processes of the run.
  int64_t rankCount() const { return replicaCount() * shardCount(); }
  bool needsTransfer() const { return deviceMem != staging; }
  /// Stages and graphs of the program: load, [transfer,] graph, report.
  unsigned stageCount() const { return needsTransfer() ? 4 : 3; }
};

/// Nominal throughput of a compute node, in FLOP/s, from its properties
/// (see docs/l2-to-l1.md); std::nullopt for an isa that cannot run tensor
/// graphs.
std::optional<double> nominalThroughput(l1::NodeOp node);

/// The memory node a compute node keeps its buffers in: itself when it has
/// vram, else the memory node it has an edge to (the first by name), else
/// none.
std::optional<std::string> bufferNodeOf(l1::SystemOp system, l1::NodeOp node);

/// Runs the L2 -> L1 placement search and records its report; on failure
/// emits the SearchFailure at `loc`.
mlir::FailureOr<Placement> searchPlacement(mlir::Location loc,
                                           const PlacementProblem &problem);

} // namespace synpl::l2tol1

#endif // SYNPL_LIB_CONVERSION_L2TOL1_L2TOL1IMPL_H
