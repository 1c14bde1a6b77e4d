//===- GraphBuilder.h - The builder of an L1 training graph ----*- C++ -*-===//
//
// Internal to lib/Conversion/L2ToL1: the state of one backward expansion
// (Autodiff.cpp: validation, the forward pass, the reverse pass;
// AutodiffLoss.cpp: the L3 loss terms and their seeds).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_CONVERSION_L2TOL1_GRAPHBUILDER_H
#define SYNPL_LIB_CONVERSION_L2TOL1_GRAPHBUILDER_H

#include "synpl/Conversion/L2ToL1/TrainingGraph.h"

#include "AutodiffRules.h"

#include "synpl/Dialect/L2/L2Model.h"
#include "synpl/Support/NotLowered.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"

#include <memory>
#include <string>

namespace synpl::l2tol1::detail {
using namespace mlir;

/// An op or loss term as a diagnostic names it.
std::string describeOp(Operation *op);

/// One op or loss term that is not lowered, and why.
struct Problem {
  Operation *op;
  std::string why;
};

/// What a loss term reads: the model output, its parameters, or a batch input.
struct Ref {
  enum Kind { ModelOut, ModelParams, Input, Unknown } kind = Unknown;
  unsigned input = 0; ///< for Input: the graph argument
};

/// A seed of the reverse pass for one loss term: d loss / d term, as a
/// constant folded into the term's own constants, times `ind` if set (the
/// indicator of the `max` combinator's winning term).
struct Seed {
  Value ind;
};

/// The loss terms the lowering knows.
enum class TermKind {
  CrossEntropyLogits,
  CrossEntropyProbs,
  NormParams,
  NormValue,
  Reconstruction
};

struct Term {
  Operation *op;
  TermKind kind;
  double factor = 1.0; ///< d loss / d term for the linear combinators
  Value value;         ///< factor * term
  // Cross-entropy.
  Value target; ///< [R, n] f32 (one-hot rows or a distribution)
  bool integerLabels = false;
  const Instance *softmax = nullptr; ///< fused: the output softmax
  Value probs;                       ///< [R, n] predicted probabilities (unfused)
  Value predicted;                   ///< the model output as the graph holds it
  double rows = 1;
  // Norms.
  double p = 1;
  Value normed; ///< NormValue: the value normed
  double divisor = 1;
  // Reconstruction.
  Value input, decoded, diff;
};

class GraphBuilder {
public:
  GraphBuilder(l1::TensorGraphOp graph, const TrainingGraphSpec &spec,
               ArrayRef<TrainableParam> params)
      : graph(graph), spec(spec), params(params), ob(graph.getContext()), e(ob) {}

  FailureOr<TrainingGraphOutputs> run();

private:
  // Validation (nothing emitted).
  LogicalResult validate();
  void scanInfer(Block &block, unsigned &count, unsigned &failed);
  Ref resolve(SymbolRefAttr ref);
  void scanTerm(Operation *op);

  // Emission.
  LogicalResult lowerBlock(Block &block);
  LogicalResult lowerOp(Operation *op);
  void recordInstance(Instance inst);
  Value inputValue(unsigned i) { return graph.getEntry().getArgument(i); }
  /// The model's output distribution: `dist(n)`, or the `dist(n)` at every
  /// position of a `sequence(dist(n), N)` (null: neither).
  l3::DistType outputDist() {
    Type out = l3::ModelOp(spec.model).getOutDomain();
    if (auto seq = dyn_cast<l3::SequenceType>(out))
      out = seq.getElementDomain();
    return dyn_cast<l3::DistType>(out);
  }
  /// The graph input a divergence compares with: a text field's next
  /// element at every position (next-token prediction), else the field.
  unsigned targetInput(SymbolRefAttr ref) {
    for (auto [field, next] : spec.nextInputs)
      if (field == ref)
        return next;
    return resolve(ref).input;
  }
  Value targetRows(Value target, int64_t rows, int64_t classes, bool &integer);
  void emitTerm(Term &t);
  void backwardTerm(const Term &t, Seed seed);
  void accumulate(Value key, Value adjoint);
  void accumulateParam(unsigned index, Value grad);
  Value seeded(Value v, double c, Seed seed);
  void sweepDeadOps();

  l1::TensorGraphOp graph;
  TrainingGraphSpec spec; // a copy: op handles are used non-const
  ArrayRef<TrainableParam> params;
  OpBuilder ob;
  Emitter e;

  l2::AutodiffAttr autodiff;
  llvm::StringSet<> checkpointed;
  llvm::MapVector<Operation *, std::string> names;
  llvm::DenseMap<Operation *, SmallVector<unsigned, 4>> layerParams;
  SmallVector<Problem> problems;
  unsigned inferOps = 0, inferFailed = 0;

  llvm::DenseMap<Value, Value> mapped; ///< L2 value -> L1 value (current instance)
  SmallVector<Value> paramValues;
  SmallVector<std::unique_ptr<Instance>> tape;
  llvm::DenseSet<Value> active;
  /// The L1 values that hold their layer output channels last
  /// (Instance::outLast).
  llvm::DenseSet<Value> channelsLast;
  llvm::DenseMap<Value, Value> adjoints;
  SmallVector<Value> paramGrads;
  Value modelOutput;
  const Instance *outputSoftmax = nullptr;
  /// What random layers read (window reads, made on first use) and the
  /// next instance's stream.
  Value randomCounter, trainingFlag;
  Value rankValue; ///< tensor parallelism: this rank (a window read)
  int64_t nextStream = 0;
};

} // namespace synpl::l2tol1::detail

#endif // SYNPL_LIB_CONVERSION_L2TOL1_GRAPHBUILDER_H
