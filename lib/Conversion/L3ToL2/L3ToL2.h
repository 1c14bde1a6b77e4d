//===- L3ToL2.h - The L3 -> L2 search: grammar, cost model, hints -*- C++ -*-===//
//
// The pieces of the L3 -> L2 lowering (`--synpl-l3-to-l2`):
//
//   Grammar.cpp    what a model's L3 declaration allows (Problem), the
//                  architecture grammar (enumerated and counted, never
//                  materialized) and the builder that writes a candidate as
//                  a real `l2.methods` op;
//   CostModel.cpp  the scoring of a verified candidate: resources from
//                  l2::estimateResources plus documented convergence priors;
//   Hints.cpp      `#[l2::sample|backward|update(...)]` escape hatches, parsed
//                  from the spec's call syntax into L2 method attributes;
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
/// Batches tried for epoch_shuffle.
inline constexpr int64_t kBatches[] = {64, 128, 256};

/// What the model's L3 declaration fixes for the search.
struct Problem {
  mutable l3::ModelOp model; // op handles are not const-correct
  /// One example of the input, as the infer input lays it out (without the
  /// batch dimension), and its element type.
  llvm::SmallVector<int64_t> inShape;
  mlir::Type inElement;
  /// The input is a sequence: inShape = [T, features].
  bool sequence = false;
  /// Features the first stage reads: the flattened example (tensors) or the
  /// per-position features (sequences).
  int64_t inFeatures = 0;
  /// The output: one example of the out domain.
  llvm::SmallVector<int64_t> outShape;
  mlir::Type outElement;
  /// Width of the output head (classes of dist(n), features otherwise).
  int64_t outWidth = 0;
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

/// One architecture of the grammar: a chain of `depth()` stages.
struct Architecture {
  /// Widths of the hidden stages, in order (non-increasing); the last stage
  /// is the output head, whose width the output domain fixes.
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

  int64_t depth() const { return static_cast<int64_t>(hidden.size()) + 1; }
  std::string str() const;
};

/// How many architectures the grammar holds for `problem` (saturating).
uint64_t countArchitectures(const Problem &problem);
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
/// insertion point.
l2::MethodsOp buildMethods(mlir::OpBuilder &builder, mlir::Location loc,
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

/// Parses the argument text of an `l2::<directive>` escape hatch (the spec's
/// call syntax, `evolution(pop: 50)`, or the attribute form
/// `#l2.evolution<pop = 50>`) into an L2 method attribute, filling the
/// arguments the hatch leaves out with the defaults of docs/l3-to-l2.md.
/// `outWidth` is the default dfa feedback_dim. On failure returns null and
/// sets `error`.
mlir::Attribute parseHintMethod(mlir::MLIRContext *context, llvm::StringRef text,
                                int64_t outWidth, std::string &error);

/// The spec's call syntax of a method attribute: `adam(lr: 3e-4)`.
std::string methodString(mlir::Attribute method);

} // namespace synpl::l3tol2

#endif // SYNPL_LIB_CONVERSION_L3TOL2_L3TOL2_H
