//===- Bounds.h - Value ranges and f32 error bounds of an L1 graph -*- C++ -*-===//
//
// The differential fuzzer's tolerance, derived rather than guessed. For
// every value of an l1.tensor_graph it computes, from the ranges of the
// graph's inputs alone:
//
//   * an interval [lo, hi] holding every element (interval arithmetic);
//   * `err`, a bound on |computed - exact| for every element, where
//     `exact` is the real-number result the reference interpreter gives
//     (in double) and `computed` is what any correct f32 lowering may give:
//     every op rounds once or a few times, sums may run in any order and
//     any tree (split-K, threads, vector lanes), products may be fused into
//     FMAs, and the transcendental functions are approximations within a
//     stated number of ulps. The classic bounds are used: a sum of n terms
//     in any order is within gamma(n) = n u / (1 - n u) of the exact sum of
//     their magnitudes (Higham, Accuracy and Stability of Numerical
//     Algorithms, 2nd ed., 3.1), u = 2^-24, and errors in the operands
//     propagate through each op by its Lipschitz constant on the operands'
//     intervals.
//
// The same walk checks that the program is free of undefined or
// ill-conditioned behaviour, and refuses it (with the op and the reason)
// otherwise: a log, sqrt, reciprocal or division whose operand interval
// reaches zero; an exp that could overflow; a discontinuous op (cmp, sign,
// a float-to-integer cast, random's counter) that reads a value with any
// error (a rounding difference could then flip its result, and the two
// paths would legitimately disagree); a cast out of its target's range.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TEST_FUZZ_DIFF_BOUNDS_H
#define SYNPL_TEST_FUZZ_DIFF_BOUNDS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"

#include <string>

namespace synpl::l1 {
class TensorGraphOp;
}

namespace synpl::difffuzz {

/// The range and error bound of every element of one value.
struct Bound {
  double lo = 0, hi = 0;
  /// Bound on |computed - exact| of every element (0: exact).
  double err = 0;
  double mag() const { return std::max(std::abs(lo), std::abs(hi)); }
  bool exact() const { return err == 0; }
};

/// Ulp allowances of the approximations a lowering may use, in units of
/// u = 2^-24 of the result's magnitude (see Bounds.cpp for each).
struct ErrorModel {
  /// Plain arithmetic: one rounding, doubled for a division computed as a
  /// reciprocal and a product (fast-math's `arcp`).
  double arith = 2;
  /// exp, log, tanh, cos, sqrt: the host's inline exp2 polynomial and
  /// libmvec (at most 4 ulp), the CUDA .approx forms, and the extra
  /// roundings of their compositions (exp(x) = exp2(x log2 e) adds |x|
  /// ulps, accounted for separately).
  double transcendental = 16;
  /// The largest magnitude a value may reach before the program is
  /// refused as too close to f32 overflow.
  double maxMagnitude = 1e30;
  /// Absolute slack for flushed subnormals (2^-126 per op, far below any
  /// error that matters).
  double subnormal = 1e-37;
};

/// The bounds of every value of one graph.
class GraphBounds {
public:
  explicit GraphBounds(ErrorModel model = {}) : model(model) {}

  /// Walks `graph` in def-use order with `args` the bounds of its
  /// arguments. On failure `why` names the op (its name and location) and
  /// the reason; the graph is then not a valid differential test.
  bool run(l1::TensorGraphOp graph, llvm::ArrayRef<Bound> args, std::string &why);

  /// The bound of one op's result from its operands' (already set). False
  /// with `why` when the op is refused.
  bool transfer(mlir::Operation *op, Bound &out, std::string &why);

  void set(mlir::Value v, Bound b) { bounds[v] = b; }
  const Bound *lookup(mlir::Value v) const {
    auto it = bounds.find(v);
    return it == bounds.end() ? nullptr : &it->second;
  }

  const ErrorModel &getModel() const { return model; }

private:
  ErrorModel model;
  llvm::DenseMap<mlir::Value, Bound> bounds;
};

/// gamma(n) = n u / (1 - n u), u = 2^-24.
double gamma(double n);

} // namespace synpl::difffuzz

#endif // SYNPL_TEST_FUZZ_DIFF_BOUNDS_H
