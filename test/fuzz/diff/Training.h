//===- Training.h - Random training programs, one step checked -*- C++ -*-===//
//
// The differential fuzzer's second kind of program: a whole training step.
// A recipe is a classifier written as a user writes it, in `.syn`: a data
// set (a vector, an image, a sequence of vectors or of byte tokens, and a
// label), a `methods` block whose infer DAG stacks random layers (an
// embedding of the tokens, linear, layer and RMS norms, ReLU / GELU / SiLU,
// residual blocks, convolutions, average and max pooling, multi-head
// attention, dropout) before a linear head and
// a softmax, a cross-entropy loss with an optional L1 or L2 penalty, and a
// random optimizer (SGD, Adam, Lion, each possibly inside a warm-up /
// decay schedule, gradient clipping or an EMA). The recipe is rendered as
// source and compiled as synplc compiles it: the `.syn` front end, the
// L3 -> L2 search (which keeps the written method), the system, and the
// L2 -> L1 lowering (backward expansion, update, placement).
//
// One step is then checked: the actor's state (parameters from their
// initializers, optimizer moments and counters mid-training) and a batch
// are drawn, the reference interpreter runs the forward/backward graph and
// the update handler with RunningBounds alongside, and the oracle compares
// the graph's results (loss, gradients, correct count) and every state
// field after the update on each target, each element within its running
// bound.
//
// Recipes stay small (batches of 1-4, widths up to 33) so that the
// reference interpreter and the CUDA SIMT interpreter finish in seconds.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TEST_FUZZ_DIFF_TRAINING_H
#define SYNPL_TEST_FUZZ_DIFF_TRAINING_H

#include "Oracle.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace synpl::difffuzz {

struct TrainLayer {
  enum Kind { Linear, Norm, Act, Residual, Conv, Pool, Attn, Dropout, Flatten, Embed } kind =
      Linear;
  /// Linear: out features; conv: out channels; attn: heads; embed: width.
  int64_t n = 0;
  /// Conv: kernel, stride, padding; pool: kernel.
  int64_t kernel = 1, stride = 1, padding = 0;
  /// Norm: layer | rms; act: relu | gelu | silu; pool: avg | max.
  std::string variant;
  /// Dropout: the probability; attn: 1 for causal.
  double p = 0;
  /// Residual: the block (it keeps the shape).
  std::vector<TrainLayer> body;
};

/// The optimizer: a base method inside zero or more wrappers.
struct UpdateSpec {
  enum Base { Sgd, Adam, Lion } base = Sgd;
  double lr = 0.05, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  struct Wrapper {
    enum Kind { Schedule, Clip, Ema } kind = Schedule;
    int64_t warmup = 0;
    std::string decay = "constant";
    double value = 0; // clip: max_norm; ema: decay
  };
  /// Outermost first.
  std::vector<Wrapper> wrappers;
  /// `schedule(warmup: 5, decay: cosine, inner: adam(lr: 0.01))`.
  std::string str() const;
};

struct TrainRecipe {
  /// The input field's shape (no batch): [D], [C, H, W] or [T, D] of f32,
  /// or [T] tokens (u8, embedded by the first layer).
  std::vector<int64_t> in;
  bool tokens = false;
  int64_t classes = 2, batch = 2;
  /// The layers before the head (flatten, linear(., classes), softmax).
  std::vector<TrainLayer> layers;
  UpdateSpec update;
  /// Weight of norm(params, p = penaltyP) in the loss (0: none).
  double penalty = 0;
  int penaltyP = 1;

  /// The shape after `layers`, or nothing with `why` when a layer does not
  /// fit its input (the reducer's deletions can make that happen).
  std::optional<std::vector<int64_t>> outShape(std::string &why) const;
  /// The `.syn` program.
  std::string syn() const;
  /// `[4, 7] x3: linear, norm(rms), residual[...]; adam`.
  std::string summary() const;
};

/// A random recipe, valid by construction.
TrainRecipe generateTraining(uint64_t seed);

/// Compiles a `.syn` training program down to L1 as synplc does, placed on
/// a system of one CPU (`cuda`: and a GPU, with the tensor graph required
/// on it). Null with `why` on a compile error.
mlir::OwningOpRef<mlir::ModuleOp> compileTraining(mlir::MLIRContext *ctx,
                                                  const std::string &syn,
                                                  llvm::StringRef name, bool cuda,
                                                  std::string &why);

/// One step of the L1 training program `l1`: state and batch drawn with
/// `seed`, the reference's graph results and state after the update, and
/// their running bounds (RunningBounds.h), as a case for the oracle. The
/// batch's feeds name the plan's ingest slots as `ingest#<i>` (the oracle
/// resolves them once the plan exists). False with `why` when the program
/// is not a valid test (the reference fails, or the loss has no finite
/// bound; other elements without one are counted by the oracle, not compared).
bool referenceStep(mlir::ModuleOp l1, uint64_t seed, StepCase &out, std::string &why);

} // namespace synpl::difffuzz

#endif // SYNPL_TEST_FUZZ_DIFF_TRAINING_H
