//===- L1Interpreter.h - Reference interpreter of l1 tensor code -*- C++ -*-===//
//
// An independent reference for correctness: evaluates l1 tensor graphs and
// actor handlers op by op, in double precision, straight from the op
// descriptions. Compiled kernels are checked against it, so it shares no code
// with any kernel emitter and favours plainness over speed (a matmul is an
// i-k-j loop).
//
// Values are dense row-major tensors of doubles; the element type is kept so
// that casts, comparisons and one_hot give exact integers (i1 as 0 / 1, ui8 as
// 0..255). Nothing is rounded to f32: an f32 tensor holds doubles.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_REFERENCE_L1INTERPRETER_H
#define SYNPL_REFERENCE_L1INTERPRETER_H

#include "mlir/IR/Types.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace synpl::l1 {
class ActorOp;
class TensorGraphOp;
class HandlerOp;
} // namespace synpl::l1

namespace synpl::ref {

/// The element type of a tensor, independent of an MLIRContext.
struct ElementType {
  enum class Kind { Float, Signed, Unsigned };
  Kind kind = Kind::Float;
  /// Bit width (32 for f32, 8 for ui8, 1 for i1). Floats are held as doubles
  /// whatever the width.
  unsigned width = 64;

  static ElementType f32() { return {Kind::Float, 32}; }
  static ElementType f64() { return {Kind::Float, 64}; }
  static ElementType i1() { return {Kind::Signed, 1}; }
  static ElementType ui8() { return {Kind::Unsigned, 8}; }
  static ElementType si(unsigned w) { return {Kind::Signed, w}; }
  static ElementType ui(unsigned w) { return {Kind::Unsigned, w}; }
  /// From a builtin float or integer type (signless integers count as
  /// signed, i1 as a bool); std::nullopt for anything else.
  static std::optional<ElementType> get(mlir::Type type);

  bool isFloat() const { return kind == Kind::Float; }
  bool isInteger() const { return !isFloat(); }
  bool isBool() const { return isInteger() && width == 1; }
  /// Range of an integer type, as doubles (exact up to 53 bits).
  double minValue() const;
  double maxValue() const;
  /// `f32`, `ui8`, `i1`.
  std::string str() const;
  bool operator==(const ElementType &o) const {
    return kind == o.kind && width == o.width;
  }
  bool operator!=(const ElementType &o) const { return !(*this == o); }
};

/// A dense row-major tensor of doubles.
class Tensor {
public:
  Tensor() = default;
  /// A tensor of `shape` filled with `fill`.
  Tensor(ElementType type, llvm::ArrayRef<int64_t> shape, double fill = 0.0);
  /// A tensor of `shape` holding `data` (row-major; sizes must agree).
  Tensor(ElementType type, llvm::ArrayRef<int64_t> shape, std::vector<double> data);
  /// A rank-0 tensor.
  static Tensor scalar(double value, ElementType type = ElementType::f32()) {
    return Tensor(type, {}, value);
  }

  ElementType getElementType() const { return type; }
  void setElementType(ElementType t) { type = t; }
  llvm::ArrayRef<int64_t> getShape() const { return shape; }
  int64_t getRank() const { return static_cast<int64_t>(shape.size()); }
  int64_t size() const { return static_cast<int64_t>(values.size()); }

  std::vector<double> &data() { return values; }
  const std::vector<double> &data() const { return values; }
  double &operator[](int64_t i) { return values[i]; }
  double operator[](int64_t i) const { return values[i]; }
  /// Element at a multi-index (one index per dimension).
  double at(llvm::ArrayRef<int64_t> index) const;
  double &at(llvm::ArrayRef<int64_t> index);
  /// Row-major strides.
  llvm::SmallVector<int64_t, 4> strides() const;

  /// A tensor holding `count` elements of a kernel's buffer (`float`,
  /// `uint8_t`, ...), converted to double.
  template <typename T>
  static Tensor fromBuffer(ElementType type, llvm::ArrayRef<int64_t> shape, const T *data) {
    Tensor t(type, shape);
    for (int64_t i = 0; i < t.size(); ++i)
      t.values[i] = static_cast<double>(data[i]);
    return t;
  }
  /// The elements converted to T (e.g. float, to feed a kernel).
  template <typename T>
  std::vector<T> toBuffer() const {
    return std::vector<T>(values.begin(), values.end());
  }

  /// Whether shape and element type are those of `type` (a ranked tensor).
  bool hasType(mlir::Type type) const;
  /// `tensor<2x3xf32>`.
  std::string typeString() const;

private:
  int64_t offset(llvm::ArrayRef<int64_t> index) const;

  ElementType type;
  llvm::SmallVector<int64_t, 4> shape;
  std::vector<double> values{0.0};
};

/// How a computed tensor (a kernel's output) compares with the reference:
/// numpy's allclose rule, |actual - expected| <= atol + rtol * |expected|
/// elementwise; NaN matches only NaN, infinities match only themselves.
struct Comparison {
  bool ok = false;
  /// Why not: a shape difference, or the worst element (index, both values,
  /// and its error over its allowance).
  std::string message;
  /// The largest |actual - expected| / (atol + rtol * |expected|) (0 if none).
  double worstRatio = 0;
};
Comparison compare(const Tensor &actual, const Tensor &expected, double rtol, double atol);

/// Actor state: one tensor per (actor, field), e.g. ("model_state", "w1").
/// `l1.window_read @model_state::@weights[@w1]` and, in a handler of
/// `@model_state`, `l1.state_read @w1` both read ("model_state", "w1").
class StateEnv {
public:
  void set(llvm::StringRef actor, llvm::StringRef field, Tensor value);
  /// The field's tensor, or null.
  const Tensor *lookup(llvm::StringRef actor, llvm::StringRef field) const;
  Tensor *lookup(llvm::StringRef actor, llvm::StringRef field);
  bool contains(llvm::StringRef actor, llvm::StringRef field) const {
    return lookup(actor, field) != nullptr;
  }
  size_t size() const { return fields.size(); }

private:
  static std::string key(llvm::StringRef actor, llvm::StringRef field);
  std::map<std::string, Tensor> fields;
};

/// Called after each op the interpreter runs, in the order they run (state
/// writes and the terminator included), with the values of its operands and
/// its result (null for an op without one). An analysis that needs every
/// intermediate value rides along instead of evaluating the graph again:
/// the differential fuzzer bounds each value's f32 error this way.
using OpObserver = std::function<void(mlir::Operation *op,
                                      llvm::ArrayRef<const Tensor *> operands,
                                      const Tensor *result)>;

struct InterpretOptions {
  /// If set, only the graph results at these positions are computed (the
  /// others come back default-constructed: a rank-0 f64 zero) and only the
  /// ops they depend on run: a loss-only evaluation of a forward/backward
  /// graph skips the backward.
  std::optional<llvm::SmallVector<unsigned>> onlyResults;
  /// Sees every op as it runs (none: not called).
  OpObserver observer;
};

/// Evaluates `graph` on `inputs` (one per `compute(...)` argument, matching
/// its type). `l1.window_read` reads `state`. Ops run in def-use order (the
/// body is a graph region). Returns the `l1.return` operands, or failure
/// after a diagnostic located at the offending op (an op this interpreter
/// does not know, a value of unexpected shape or type, an undefined cast,
/// missing state, a cycle).
mlir::FailureOr<llvm::SmallVector<Tensor>>
interpretTensorGraph(l1::TensorGraphOp graph, llvm::ArrayRef<Tensor> inputs,
                     const StateEnv &state, const InterpretOptions &options = {});

/// Runs `handler` on the message `args` in program order: `l1.state_read`
/// reads the handler's actor's state as last written, `l1.state_write`
/// replaces it. The writes reach `state` only if the whole handler succeeds.
/// `options.observer` sees each op (onlyResults does not apply).
mlir::LogicalResult interpretHandler(l1::HandlerOp handler, llvm::ArrayRef<Tensor> args,
                                     StateEnv &state, const InterpretOptions &options = {});

/// Evaluates one op of a tensor graph's or a handler's body on `operands`
/// (one per operand, of its type) as the interpreters above would, without
/// state: an op that reads actor state (`l1.window_read`, `l1.state_read`)
/// fails. Located diagnostics as above.
mlir::FailureOr<Tensor> evaluateOp(mlir::Operation *op, llvm::ArrayRef<Tensor> operands);

/// Sets every `l1.state` field of `actor` to a fresh value as its `init`
/// says: zeros, ones, kaiming (normal, std sqrt(2 / fan_in)) or xavier
/// (uniform in +-sqrt(6 / (fan_in + fan_out))), with fan_in = dimension 0
/// (1 for a scalar) and fan_out = the product of the other dimensions (1 if
/// none). The draws come from std::mt19937_64 seeded with `seed`, field by
/// field in declaration order. Fails (located) on a field type that is not a
/// static-shaped tensor of ints or floats.
/// A `planned_steps` field gets `plannedSteps` (the run length the compiled
/// program's runtime would write; the interpreter has no run of its own).
mlir::LogicalResult initializeActorState(l1::ActorOp actor, uint64_t seed, StateEnv &state,
                                         double plannedSteps = 0.0);

} // namespace synpl::ref

#endif // SYNPL_REFERENCE_L1INTERPRETER_H
