//===- Program.h - A random L1 graph as a recipe of steps ------*- C++ -*-===//
//
// The differential fuzzer keeps each generated program as a recipe rather
// than as IR, so that the reducer can delete ops and shrink shapes and then
// rebuild a program that is again well formed:
//
//   * every dimension of every tensor is a node of a small expression
//     graph over symbolic sizes: a symbol (`syms[i]`, the sizes the reducer
//     shrinks), a literal (a kernel window), the product of two nodes (what
//     merging two adjacent dimensions gives; splitting it back gives its
//     factors) or a convolution's output size (I + 2 p - K) / s + 1. Shapes
//     therefore agree for every choice of the symbols, and a reshape keeps
//     its element count whatever they become;
//   * values are numbered: the inputs first, then one per step;
//   * the graph returns every value nothing reads (row L1.8).
//
// buildGraph() turns a recipe into an `l1.tensor_graph` with OpBuilder,
// verifies it and computes its bounds (Bounds.h); a recipe whose symbols
// make a size non-positive, a tensor too large, or a bound refused is
// rejected there, with the reason.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TEST_FUZZ_DIFF_PROGRAM_H
#define SYNPL_TEST_FUZZ_DIFF_PROGRAM_H

#include "Bounds.h"

#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Reference/L1Interpreter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace synpl::difffuzz {

enum class OpKind {
  Add, Sub, Mul, Div, Max, Min,
  Exp, Log, Sqrt, Reciprocal, Tanh, Cos, Abs, Sign, Neg,
  Matmul, Scale, Broadcast, Transpose, Reshape, Unfold, Fold,
  ReduceSum, ReduceMean, ReduceMax, Cmp, Select, Cast, OneHot,
  Gather, ScatterAdd, Random, Const,
};
/// The op's mnemonic (`add`, `reduce_sum`).
const char *opName(OpKind kind);

enum class Elem { F32, I1, UI8 };

struct DimNode {
  enum Kind { Sym, Lit, Prod, Conv } kind = Sym;
  /// Sym: the symbol; Prod: the factors; Conv: `a` the input size.
  int a = -1, b = -1;
  /// Lit: the size; Conv: kernel, stride, padding.
  int64_t lit = 0, k = 0, s = 1, p = 0;
  bool operator==(const DimNode &o) const {
    return kind == o.kind && a == o.a && b == o.b && lit == o.lit && k == o.k && s == o.s &&
           p == o.p;
  }
};

struct ValueSpec {
  std::vector<int> shape; // dimension nodes
  Elem elem = Elem::F32;
};

struct InputSpec : ValueSpec {
  /// Values are drawn uniformly from [lo, hi] (integers: the integers in
  /// it), rounded to f32: the exact numbers both paths start from.
  double lo = -1, hi = 1;
};

struct Step {
  OpKind kind = OpKind::Add;
  std::vector<int> operands;
  /// Per kind: axis (-1: all) of a reduction; perm; broadcast dims; the
  /// predicate of cmp; classes of one_hot; kernel, stride, padding (3
  /// entries per spatial dimension) and channels_last of unfold / fold;
  /// seed and stream of random; the row-count node of scatter_add.
  std::vector<int64_t> ints;
  double value = 0; // const
  ValueSpec result;
};

struct Program {
  std::vector<int64_t> syms;
  std::vector<DimNode> dims;
  std::vector<InputSpec> inputs;
  std::vector<Step> steps;

  int numValues() const { return int(inputs.size() + steps.size()); }
  const ValueSpec &spec(int v) const {
    return v < int(inputs.size()) ? static_cast<const ValueSpec &>(inputs[v])
                                  : steps[v - inputs.size()].result;
  }
  /// The size of a dimension node under the current symbols (<= 0 when a
  /// convolution's window does not fit).
  int64_t size(int dim) const;
  llvm::SmallVector<int64_t> shape(int v) const;
  int64_t elements(int v) const;
  /// A node, reusing an equal one.
  int intern(DimNode node);
  /// Whether two shapes have equal sizes for every choice of the symbols
  /// (the same multiset of symbol, literal and convolution factors in each
  /// dimension).
  bool sameShape(const std::vector<int> &a, const std::vector<int> &b) const;
  /// How many steps read each value.
  std::vector<int> useCounts() const;
  /// `3 inputs, 9 ops: matmul, exp, reduce_sum, ...`.
  std::string summary() const;
};

/// Limits a built program must keep: the reference interpreter runs in
/// double and the host JIT compiles every kernel, so programs stay small.
struct SizeLimits {
  int64_t maxElements = 1 << 16;
  int64_t maxMatmulFlops = int64_t(1) << 22;
  int maxRank = 6;
};

/// One program built into a module: its graph, argument bounds (from the
/// inputs' ranges) and the bound of every returned value.
struct BuiltGraph {
  l1::TensorGraphOp graph;
  /// The bound of every value (by number) and of every result.
  std::vector<Bound> values;
  std::vector<Bound> results;
};

/// Adds `program` to `module` (which must hold the system `buildSystem`
/// made) as `l1.tensor_graph @<name> on @<node>` (`cpu_0` or `gpu_0`) and a
/// stage `@<name>_sink` on the same node that drops its results, records its input ranges in the module's
/// `difffuzz.inputs` attribute, verifies it and computes its bounds. On
/// failure the module is left without it and `why` says what was wrong.
bool buildGraph(mlir::ModuleOp module, const Program &program, llvm::StringRef name,
                const SizeLimits &limits, BuiltGraph &out, std::string &why,
                llvm::StringRef node = "cpu_0");

/// Adds `l1.system @fuzz` with one x86_64 CPU of `cores` cores (what the
/// split-reductions search divides the work by) and its memory (`cuda`: a
/// GPU node `@gpu_0` too; `storage`: a disk `@ssd_0` that data fields are
/// read from).
void buildSystem(mlir::ModuleOp module, bool cuda, int64_t cores = 1, bool storage = false);

/// The input ranges recorded for graph `name` in `module` (-1, 1 for a
/// float argument, and 0 .. 7 for an integer one, when none are recorded).
std::vector<std::pair<double, double>> inputRanges(mlir::ModuleOp module,
                                                   l1::TensorGraphOp graph);

/// Inputs for `graph` drawn from `ranges` with `seed`.
std::vector<ref::Tensor> drawInputs(l1::TensorGraphOp graph,
                                    llvm::ArrayRef<std::pair<double, double>> ranges,
                                    uint64_t seed);

/// The bounds of `graph`'s results from its input ranges; false with `why`
/// when the graph is not a valid differential test.
bool resultBounds(l1::TensorGraphOp graph,
                  llvm::ArrayRef<std::pair<double, double>> ranges,
                  std::vector<Bound> &out, std::string &why);

} // namespace synpl::difffuzz

#endif // SYNPL_TEST_FUZZ_DIFF_PROGRAM_H
