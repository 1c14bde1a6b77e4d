//===- TrainingGraph.h - L2 -> L1: the explicit training graph --*- C++ -*-===//
//
// The contract between the two halves of the L2 -> L1 lowering:
//
//  * backward expansion (lib/Conversion/L2ToL1/Autodiff.cpp): the L2 infer
//    DAG, the L3 loss and the reverse-mode derivative of that loss with
//    respect to every trainable parameter, written as explicit l1 tensor ops
//    in the body of one `l1.tensor_graph`;
//  * the pass (lib/Conversion/L2ToL1/L2ToL1.cpp): placement search, the
//    actor (state, window, the update handler), stages, pipelines, schedule
//    and data binding around that graph.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_CONVERSION_L2TOL1_TRAININGGRAPH_H
#define SYNPL_CONVERSION_L2TOL1_TRAININGGRAPH_H

#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Dialect/L2/L2Ops.h"
#include "synpl/Dialect/L3/L3Ops.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace synpl::l2tol1 {

/// One trainable parameter of the model, as the L1 program names it.
struct TrainableParam {
  /// The actor state symbol: `<layer name>_<slot>` from l2::layerNames and
  /// l2::layerParamSlots, e.g. `fc1_weight`, `norm1_gain`.
  std::string state;
  llvm::SmallVector<int64_t, 4> shape;
  /// kaiming for matrices (fan_in = dim 0), zeros for biases and shifts,
  /// ones for norm gains.
  l1::InitKind init = l1::InitKind::zeros;
  /// The l2 layer op that owns it (diagnostics, `#[l1::on]` hatches).
  mlir::Operation *layer = nullptr;
  /// Tensor parallelism: the axis `shape` (one rank's block) splits. A
  /// linear's weight [in, out] split along 1 is split by columns (its bias
  /// along 0 with it), along 0 by rows (its bias whole).
  std::optional<uint64_t> shard = std::nullopt;
};

/// The trainable parameters of `methods`' infer DAG, in the order of
/// l2::collectParams. This order is also the order of the gradient results
/// of the training graph. Fails with a located error on a layer whose
/// parameters L1 cannot hold.
mlir::FailureOr<llvm::SmallVector<TrainableParam>>
collectTrainableParams(l2::MethodsOp methods);

/// What the training graph reads and computes.
struct TrainingGraphSpec {
  l3::ModelOp model;
  l3::LossOp loss;
  l2::MethodsOp methods;
  /// The batch inputs, in the order of the graph's `compute(...)` arguments:
  /// one per L3 data field the model or the loss reads (the field symbol,
  /// e.g. @mnist::@images). A batch arrives in the L3 domain's element type
  /// with the sample batch as leading dimension: images as
  /// tensor<128x28x28xf32>, labels as tensor<128x1xui8>.
  llvm::SmallVector<mlir::SymbolRefAttr> inputFields;
  /// Sequence fields read as text: (the field, the index in inputFields of
  /// the same windows shifted by one element). A divergence whose target is
  /// such a field compares the model's output at every position with the
  /// element that follows the input there: next-token cross-entropy.
  llvm::SmallVector<std::pair<mlir::SymbolRefAttr, unsigned>> nextInputs;
  /// The window the graph reads every parameter through
  /// (`@model_state::@weights`); it lists every TrainableParam::state.
  mlir::SymbolRefAttr window;
  /// For a model that draws random numbers (drawsRandomNumbers): the
  /// window's fields holding the update step (a rank-0 f32 counting
  /// updates, the draws' counter) and the train/eval flag (a rank-0 f32
  /// with init training_mode). Empty otherwise.
  std::string stepField, trainingField;
  /// Tensor parallelism: the number of ranks and the window's field holding
  /// this rank (a rank-0 f32, init rank); 1 and empty otherwise.
  int64_t ranks = 1;
  std::string rankField;
  /// Data parallelism: the replicas whose gradients the step sums. Every
  /// loss term's seed is scaled by 1 / replicas, so that the sum is the
  /// global batch's gradient (the mean of the replicas') with no pass over
  /// the gradients after the all-reduce; for a power-of-two count the
  /// floats are those of the mean. 1 otherwise.
  int64_t replicas = 1;
  /// Tensor parallelism, Megatron's pairing: the linears split by columns
  /// whose output stays this rank's block (into elementwise activations
  /// and then a row split, not gathered), and the linears split by rows
  /// whose input is that block (not sliced).
  llvm::SmallPtrSet<mlir::Operation *, 4> blockOutputs, blockInputs;
};

/// Whether the infer DAG of `methods` draws random numbers in training
/// (a dropout with p > 0, in any region).
bool drawsRandomNumbers(l2::MethodsOp methods);

/// The results of the graph's `l1.return`, in order.
struct TrainingGraphOutputs {
  /// Result 0 is the scalar loss (tensor<f32>): the L3 loss's combination of
  /// its terms, exactly as L3 weighs them.
  /// Results 1 .. params.size() are the gradients d loss / d param, in the
  /// order of `params`, each of its parameter's shape.
  /// When `hasCorrect`, the last result is `correct` (tensor<f32>): the
  /// batch's rows whose label's logit is the row max (the model's output is
  /// dist(n) and a divergence reads integer labels).
  bool hasCorrect = false;
};

/// Fills the body of `graph` (an `l1.tensor_graph` whose entry block has
/// one argument per spec.inputFields, typed as described there, and no ops)
/// with the forward pass of the infer DAG, the L3 loss, and the reverse-mode
/// derivative of the loss with respect to every parameter, ending in
/// `l1.return`. `autodiff(checkpoint: [...])` layers are recomputed in the
/// backward pass instead of keeping their activations. An op or loss term
/// it cannot lower is a located error
/// `lowered N of M ops; not lowered: <op> at <loc>: <why>` and failure;
/// the body is then left empty.
mlir::FailureOr<TrainingGraphOutputs>
buildTrainingGraph(l1::TensorGraphOp graph, const TrainingGraphSpec &spec,
                   llvm::ArrayRef<TrainableParam> params);

} // namespace synpl::l2tol1

#endif // SYNPL_CONVERSION_L2TOL1_TRAININGGRAPH_H
