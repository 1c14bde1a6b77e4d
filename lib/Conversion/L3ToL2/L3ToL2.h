//===- L3ToL2.h - The L3 -> L2 search: grammar, cost model, hints -*- C++ -*-===//
//
// The pieces of the L3 -> L2 lowering (`--synpl-l3-to-l2`):
//
//   Problem.cpp    what a model's L3 declaration allows (Problem): the input
//                  and output as tensors, the family of architectures
//                  (chains, conv stacks, transformers) and the bounds;
//   Grammar.cpp    the architecture grammar, enumerated and counted, never
//                  materialized;
//   Builder.cpp    writes a candidate as a real `l2.methods` op;
//   CostModel.cpp  the scoring of a verified candidate: resources from
//                  l2::estimateResources plus documented convergence priors;
//   Hints.cpp      `#[l2::sample|backward|update(...)]` escape hatches, parsed
//                  from the spec's call syntax into L2 method attributes;
//   InferHint.cpp  `#[l2::infer(...)]`: the infer DAG a hint forces;
//   L3ToL2.cpp     the pass: runs synpl::search over
//                  sample x architecture x backward x update, filters each
//                  candidate with the L2 verifiers, and writes the winner.
//
// docs/l3-to-l2.md describes the grammar and the cost model.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_CONVERSION_L3TOL2_L3TOL2_H
#define SYNPL_LIB_CONVERSION_L3TOL2_L3TOL2_H

#include "synpl/Dialect/L2/L2Model.h"
#include "synpl/Dialect/L2/L2Ops.h"
#include "synpl/Dialect/L3/L3Ops.h"
#include "synpl/Search/Search.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace synpl::l3tol2 {

/// The grammar's own bounds, used where the L3 model states none. They are
/// deliberately wide: a model without depth(n) or width(n) gives a space far
/// over the search cap, which the search reports as TooManyCandidates (the
/// spec's "representation too loose"), with the exact count.
inline constexpr int64_t kGrammarMaxDepth = 64;
inline constexpr int64_t kGrammarMaxWidth = int64_t(1) << 16;
/// The narrowest hidden width the grammar tries (widths are powers of two).
inline constexpr int64_t kGrammarMinWidth = 8;
/// Transformer candidates: heads = dim / kTransformerHeadDim (at least 1).
inline constexpr int64_t kTransformerHeadDim = 32;
/// Batches tried for epoch_shuffle.
inline constexpr int64_t kBatches[] = {64, 128, 256};
/// Windows per step of a token stream (stream_window's batch).
inline constexpr int64_t kWindowBatches[] = {32, 64};
/// The training steps a searched model over a token stream runs by default
/// (the executable's --steps overrides).
inline constexpr int64_t kStreamSteps = 1000;

/// The kind of model the grammar builds for an input domain.
enum class Family {
  /// Feed-forward chains of linear / norm / act stages (flat tensors, float
  /// sequences): the default.
  Chain,
  /// conv / act / pool stacks, then flatten and a linear head: image-shaped
  /// inputs under equivariant(translation).
  Conv,
  /// Decoder-only transformers: token-id sequences.
  Transformer,
};

/// What the model's L3 declaration fixes for the search.
struct Problem {
  mutable l3::ModelOp model; // op handles are not const-correct
  Family family = Family::Chain;
  /// One example of the input, as the infer input lays it out (without the
  /// batch dimension), and its element type.
  llvm::SmallVector<int64_t> inShape;
  mlir::Type inElement;
  /// The input is a sequence: inShape = [T, features] (float vectors) or
  /// [T] (token ids).
  bool sequence = false;
  /// Features the first stage reads: the flattened example (tensors), the
  /// per-position features (sequences) or the vocabulary (token ids).
  int64_t inFeatures = 0;
  /// Conv: the image as channels-first [C, H, W] (a [H, W] input is given a
  /// channel with l2.reshape first: addChannel).
  llvm::SmallVector<int64_t> image;
  bool addChannel = false;
  /// Transformer: token ids are < vocab (2^bits of the id type).
  int64_t vocab = 0;
  /// The output: one example of the out domain.
  llvm::SmallVector<int64_t> outShape;
  mlir::Type outElement;
  /// Width of the output head (classes of dist(n), features otherwise; the
  /// element count of a tensor output of another rank).
  int64_t outWidth = 0;
  /// The output is a tensor of rank != 1: the head's [N, outWidth] is laid
  /// out as outShape with l2.reshape.
  bool reshapeOut = false;
  /// The output is a distribution (dist(n), or a sequence of them): the DAG
  /// ends in l2.softmax.
  bool softmax = false;
  /// A sequence input with a single (non-sequence) output: the head reads
  /// the flattened sequence.
  bool poolSequence = false;
  /// Bounds: from depth(n) / width(n), else the grammar's own.
  int64_t maxDepth = kGrammarMaxDepth;
  int64_t maxWidth = kGrammarMaxWidth;
  bool depthBounded = false, widthBounded = false;
  bool causal = false;
  bool autoregressive = false;
  /// Autoregressive with an output of the input's type: the recurrent's
  /// result is the output (no head after the feedback loop).
  bool sameAsInput = false;
  /// Stages outside the enumerated chain (the head after an autoregressive
  /// feedback loop): the chain may use maxDepth - extraStages.
  int64_t extraStages = 0;
  /// The most stages the enumerated chain may have.
  int64_t chainDepth() const { return maxDepth - extraStages; }
};

/// Analyses `model` (a verified l3.model). Fails with a located error when
/// the grammar has no architecture for its domains or properties
/// (e.g. equivariant(group), a table input).
mlir::FailureOr<Problem> analyzeModel(l3::ModelOp model,
                                      mlir::SymbolTableCollection &symbols);

/// A parsed `#[l2::infer(...)]` escape hatch: the infer DAG it forces, in
/// the spec's call syntax (a tree of HintValues, see parseLayerCall).
struct HintValue;
struct InferHint {
  std::string text;                 ///< as written
  std::shared_ptr<HintValue> tree;  ///< sequential [...], residual [...] or a layer
};

/// One architecture of the grammar.
struct Architecture {
  Family family = Family::Chain;
  /// Chain: widths of the hidden stages, in order (non-increasing); the last
  /// stage is the output head, whose width the output domain fixes.
  /// Conv: the hidden linear stage between the flattened features and the
  /// head (none or one).
  llvm::SmallVector<int64_t, 8> hidden;
  /// norm(layer) after every hidden stage.
  bool norm = false;
  l2::ActFn act = l2::ActFn::gelu;
  /// Hidden stages whose input and output widths agree are residual blocks
  /// (x + act(norm(stage(x)))).
  bool residual = false;
  /// Sequence inputs: the hidden -> hidden stages are self-attention
  /// (causal when the model is); the first stage projects the features.
  bool attention = false;
  /// Conv: output channels of each conv(3, stride 1, padding 1) / act /
  /// pool(max, 2) stage.
  llvm::SmallVector<int64_t, 4> channels;
  /// Transformer: model width, residual blocks, attention heads.
  int64_t dim = 0, blocks = 0, heads = 0;
  /// Set when an l2::infer hint forces the DAG (the fields above are unused).
  std::shared_ptr<const InferHint> hinted;

  /// Stages (linear, conv, attn, embed) on the longest path, the head
  /// included (as the L2.2 depth check counts them).
  int64_t depth() const;
  std::string str() const;
};

/// How many architectures the grammar holds for `problem` (saturating).
uint64_t countArchitectures(const Problem &problem);
/// Conv: how many times pool(max, 2) can halve the image (both spatial
/// sizes even each time).
int64_t poolableStages(const Problem &problem);
/// Transformer: the model widths tried (4 * dim within width(n)), widest
/// first, and the most blocks depth(n) allows (2 + 3 * blocks stages).
llvm::SmallVector<int64_t> transformerDims(const Problem &problem);
int64_t maxTransformerBlocks(const Problem &problem);
/// Calls `yield` per architecture; stops when it returns false.
void enumerateArchitectures(const Problem &problem,
                            llvm::function_ref<bool(const Architecture &)> yield);

/// A full candidate: sample x architecture x backward x update.
struct Choice {
  mlir::Attribute sample;
  Architecture arch;
  mlir::Attribute backward;
  mlir::Attribute update;
};

/// Writes `choice` as `l2.methods @<name> for @<model>` at the builder's
/// insertion point. Fails (with the shape rule's L2.1 diagnostic, the
/// partial op erased) only for a hinted DAG whose layers do not fit.
mlir::FailureOr<l2::MethodsOp> buildMethods(mlir::OpBuilder &builder, mlir::Location loc,
                           llvm::StringRef name, const Problem &problem,
                           const Choice &choice);

/// The examples per step of a sample method.
int64_t batchOf(mlir::Attribute sample);

/// Scores a candidate that passed the L2 verifiers, from its resource
/// estimate and the convergence priors (docs/l3-to-l2.md).
llvm::SmallVector<search::CostTerm> scoreChoice(const Problem &problem,
                                                const Choice &choice,
                                                const l2::ResourceEstimate &est);

/// The capacity target: the hidden width below which the capacity prior
/// charges, min(width(n), pow2ceil(max(inFeatures / 4, outWidth))).
int64_t capacityTarget(const Problem &problem);
/// Conv: the channel target of conv stage `stage` (0-based),
/// min(width(n), 32 * 2^stage), and the features the flatten after the
/// stack hands to the head.
int64_t convChannelTarget(const Problem &problem, int64_t stage);
int64_t convFlatFeatures(const Problem &problem, const Architecture &arch);
/// Transformer: the model width below which the capacity prior charges,
/// min(width(n) / 4, pow2ceil(max(vocab / 4, out))).
int64_t transformerDimTarget(const Problem &problem);

/// Parses the argument text of an `l2::<directive>` escape hatch (the spec's
/// call syntax, `evolution(pop: 50)`, or the attribute form
/// `#l2.evolution<pop = 50>`) into an L2 method attribute, filling the
/// arguments the hatch leaves out with the defaults of docs/l3-to-l2.md.
/// `outWidth` is the default dfa feedback_dim. On failure returns null and
/// sets `error`.
mlir::Attribute parseHintMethod(mlir::MLIRContext *context, llvm::StringRef text,
                                int64_t outWidth, std::string &error);

/// A value of the spec's call syntax: a word, number, string, call
/// `name(key: value, ...)` (keys optional when `positional`) or list.
/// `name [...]` is read as the call `name([...])`.
struct HintValue {
  enum Kind { Word, Number, String, Call, List } kind = Word;
  std::string text; // Word, Number, String (unquoted); Call: the name
  std::vector<std::pair<std::string, HintValue>> args; // Call (key may be empty)
  std::vector<HintValue> items;                        // List
};

/// Parses an infer method in the call syntax (positional arguments allowed,
/// `sequential [...]`). On failure returns std::nullopt and sets `error`.
std::optional<HintValue> parseLayerCall(llvm::StringRef text, std::string &error);

/// Builds the infer DAG of an l2::infer hint over `input` at the builder's
/// insertion point (layers labelled fc1, conv1, ... as the .syn front end
/// does). Fails with the layer's own diagnostic (an unknown layer, a bad
/// argument, or an L2.1 shape error).
mlir::FailureOr<mlir::Value> buildHintedInfer(mlir::OpBuilder &builder, mlir::Location loc,
                                              const HintValue &tree, mlir::Value input);

/// The spec's call syntax of a method attribute: `adam(lr: 3e-4)`.
std::string methodString(mlir::Attribute method);

} // namespace synpl::l3tol2

#endif // SYNPL_LIB_CONVERSION_L3TOL2_L3TOL2_H
