//===- RunningBounds.h - Per-element f32 error bounds along one run -*- C++ -*-===//
//
// Bounds.h bounds a generated graph's values from the *ranges* of its
// inputs, before anything runs. A whole training step defeats that: the
// intervals of a dozen layers, a softmax, a layer norm's reciprocal square
// root and an optimizer grow without limit (every op forgets how its
// operands are correlated), and ReLU's mask, max pooling and the count of
// correct predictions compare values that carry rounding error, which a
// range analysis can only refuse.
//
// RunningBounds follows one actual run of the reference interpreter instead
// (running error analysis; Higham, Accuracy and Stability of Numerical
// Algorithms, 2nd ed., 3.3). For every op it sees the exact (double)
// values of the operands and, per element, a bound on how far any correct
// f32 lowering's operands may lie from them; from these it bounds the
// result's elements the same way, with the rounding allowances of Bounds.h's
// ErrorModel (sums in any order or tree within gamma(n), transcendental
// functions within their ulps):
//
//   * a monotone function (exp, log, sqrt, reciprocal, tanh, sign, a
//     float-to-integer cast) moves by at most max |f(a +- e) - f(a)|;
//     products, quotients and matmuls by the exact first-plus-second-order
//     terms (|a| e_b + |b| e_a + e_a e_b); views and gathers carry their
//     operand's bounds along (the op itself applied to the bound tensor);
//   * a discontinuous op is exact where its operands are farther from the
//     threshold than their errors and *unstable* elsewhere: both outcomes
//     are allowed, and the element carries the difference between them
//     (a compare 1, a select |x - y| plus the other branch's error). So
//     ReLU's backward, max pooling's argmax and the correct count widen the
//     tolerance only at the elements a rounding could really flip;
//   * an element whose bound is unbounded (a log or a divisor within its
//     error of zero, an index with error, a value near f32 overflow) gets
//     an infinite bound and the first such op is remembered: the oracle
//     counts such elements instead of comparing them, and a step whose loss
//     has no finite bound is refused as not a valid test.
//
// The graph's inputs and the actor state it starts from are exact (they
// are written to both paths as the same f32 numbers); a handler's message
// arguments carry the bounds of the graph results that feed them.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TEST_FUZZ_DIFF_RUNNINGBOUNDS_H
#define SYNPL_TEST_FUZZ_DIFF_RUNNINGBOUNDS_H

#include "Bounds.h"

#include "synpl/Reference/L1Interpreter.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"

#include <map>
#include <string>

namespace synpl::l1 {
class CmpOp;
}

namespace synpl::difffuzz {

class RunningBounds {
public:
  explicit RunningBounds(ErrorModel model = {}) : model(model) {}

  /// An observer for ref::InterpretOptions: bounds each op's result as the
  /// interpreter computes it. Block arguments it has no bound for are exact
  /// unless set() first.
  ref::OpObserver observer();

  /// Sets the bound of a value (a handler's message argument).
  void set(mlir::Value v, ref::Tensor err) { errs[v] = std::move(err); }
  /// The per-element bound of `v` (null: never seen, i.e. exact).
  const ref::Tensor *lookup(mlir::Value v) const;
  /// The bound of what the last handler wrote to `field` (null: unwritten,
  /// i.e. exact).
  const ref::Tensor *field(llvm::StringRef name) const;
  /// Forgets the handler's state bounds (a new actor).
  void clearFields() { fields.clear(); }

  /// The first op that made a bound infinite, with why ("" if none).
  const std::string &unbounded() const { return firstUnbounded; }

private:
  void observe(mlir::Operation *op, llvm::ArrayRef<const ref::Tensor *> values,
               const ref::Tensor *result);
  /// The result's bound from the operands' values and bounds.
  ref::Tensor bound(mlir::Operation *op, llvm::ArrayRef<const ref::Tensor *> values,
                    llvm::ArrayRef<ref::Tensor> in, const ref::Tensor &result);
  /// `op` applied to `operands` (the reference's own semantics), or a
  /// tensor of infinities shaped like `like` after noting why.
  ref::Tensor apply(mlir::Operation *op, llvm::ArrayRef<ref::Tensor> operands,
                    const ref::Tensor &like);
  void noteUnbounded(mlir::Operation *op, const std::string &why);
  bool compareWithOwnMax(l1::CmpOp c, llvm::ArrayRef<const ref::Tensor *> values,
                         llvm::ArrayRef<ref::Tensor> in, ref::Tensor &out);

  ErrorModel model;
  llvm::DenseMap<mlir::Value, ref::Tensor> errs;
  std::map<std::string, ref::Tensor> fields;
  std::string firstUnbounded;
};

} // namespace synpl::difffuzz

#endif // SYNPL_TEST_FUZZ_DIFF_RUNNINGBOUNDS_H
