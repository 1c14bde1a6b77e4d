//===- L1Interpreter.cpp - Reference interpreter of l1 tensor code ---------===//
//
// Each op is computed from its description in L1Ops.td, in double precision,
// with plain loops. Every op checks what it indexes (ranks, extents, dims,
// permutations) itself instead of trusting the verifier, and every result is
// checked against its declared type, so a surprise is a located error, never
// an out-of-bounds access.
//
//===----------------------------------------------------------------------===//
#include "synpl/Reference/L1Interpreter.h"

#include "IndexedOps.h"
#include "ProductOps.h"
#include "WindowOps.h"
#include "synpl/Analysis/Shapes.h"

#include "synpl/Dialect/L1/L1Ops.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

using namespace mlir;
using namespace synpl;
using namespace synpl::ref;
using llvm::ArrayRef;
using llvm::SmallVector;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// ElementType, Tensor, StateEnv
//===----------------------------------------------------------------------===//

std::optional<ElementType> ElementType::get(Type type) {
  if (auto f = dyn_cast<FloatType>(type))
    return ElementType{Kind::Float, f.getWidth()};
  if (auto i = dyn_cast<IntegerType>(type))
    return ElementType{i.isUnsigned() ? Kind::Unsigned : Kind::Signed, i.getWidth()};
  return std::nullopt;
}

double ElementType::minValue() const {
  if (isFloat())
    return -std::numeric_limits<double>::infinity();
  if (isBool() || kind == Kind::Unsigned)
    return 0.0;
  return -std::ldexp(1.0, width - 1);
}

double ElementType::maxValue() const {
  if (isFloat())
    return std::numeric_limits<double>::infinity();
  if (isBool())
    return 1.0;
  if (kind == Kind::Unsigned)
    return std::ldexp(1.0, width) - 1.0;
  return std::ldexp(1.0, width - 1) - 1.0;
}

std::string ElementType::str() const {
  if (isBool())
    return "i1";
  std::string prefix = kind == Kind::Float ? "f" : kind == Kind::Signed ? "i" : "ui";
  return prefix + std::to_string(width);
}

static int64_t product(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

Tensor::Tensor(ElementType type, ArrayRef<int64_t> shape, double fill)
    : type(type), shape(shape.begin(), shape.end()),
      values(static_cast<size_t>(product(shape)), fill) {}

Tensor::Tensor(ElementType type, ArrayRef<int64_t> shape, std::vector<double> data)
    : type(type), shape(shape.begin(), shape.end()), values(std::move(data)) {
  // A size mismatch is a caller bug; keep the tensor consistent regardless.
  values.resize(static_cast<size_t>(product(shape)), 0.0);
}

SmallVector<int64_t, 4> Tensor::strides() const {
  SmallVector<int64_t, 4> s(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

int64_t Tensor::offset(ArrayRef<int64_t> index) const {
  int64_t off = 0;
  for (size_t i = 0; i < shape.size(); ++i)
    off = off * shape[i] + (i < index.size() ? index[i] : 0);
  return off;
}

double Tensor::at(ArrayRef<int64_t> index) const { return values[offset(index)]; }
double &Tensor::at(ArrayRef<int64_t> index) { return values[offset(index)]; }

bool Tensor::hasType(Type t) const {
  auto rt = dyn_cast<RankedTensorType>(t);
  if (!rt || rt.getShape() != ArrayRef<int64_t>(shape))
    return false;
  std::optional<ElementType> et = ElementType::get(rt.getElementType());
  return et && *et == type;
}

std::string Tensor::typeString() const {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + type.str() + ">";
}

Comparison synpl::ref::compare(const Tensor &actual, const Tensor &expected, double rtol,
                               double atol) {
  Comparison c;
  if (actual.getShape() != expected.getShape()) {
    c.message = "shape " + synpl::shapes::formatShape(actual.getShape()) + " differs from the expected " +
                synpl::shapes::formatShape(expected.getShape());
    c.worstRatio = std::numeric_limits<double>::infinity();
    return c;
  }
  int64_t worst = -1;
  for (int64_t i = 0; i < actual.size(); ++i) {
    double a = actual[i], e = expected[i], ratio;
    if (std::isnan(a) || std::isnan(e) || std::isinf(a) || std::isinf(e))
      ratio = (std::isnan(a) && std::isnan(e)) || a == e
                  ? 0.0
                  : std::numeric_limits<double>::infinity();
    else
      ratio = std::fabs(a - e) / (atol + rtol * std::fabs(e));
    // (0 / 0 when both tolerances are 0 and the values agree.)
    if (std::isnan(ratio))
      ratio = 0.0;
    if (worst < 0 || ratio > c.worstRatio) {
      worst = i;
      c.worstRatio = ratio;
    }
  }
  c.ok = c.worstRatio <= 1.0;
  if (!c.ok) {
    char buf[160];
    std::snprintf(buf, sizeof(buf),
                  "element %lld: %.9g vs expected %.9g (error %.3g times the allowed)",
                  static_cast<long long>(worst), actual[worst], expected[worst],
                  c.worstRatio);
    c.message = buf;
  }
  return c;
}

std::string StateEnv::key(StringRef actor, StringRef field) {
  return (actor + "::" + field).str();
}

void StateEnv::set(StringRef actor, StringRef field, Tensor value) {
  fields[key(actor, field)] = std::move(value);
}

const Tensor *StateEnv::lookup(StringRef actor, StringRef field) const {
  auto it = fields.find(key(actor, field));
  return it == fields.end() ? nullptr : &it->second;
}

Tensor *StateEnv::lookup(StringRef actor, StringRef field) {
  auto it = fields.find(key(actor, field));
  return it == fields.end() ? nullptr : &it->second;
}

//===----------------------------------------------------------------------===//
// Element helpers
//===----------------------------------------------------------------------===//

namespace {

/// The largest tensor the interpreter allocates (8 GiB of doubles).
constexpr int64_t kMaxElements = int64_t(1) << 30;

/// A double for a message: `256`, `2.5`, `nan`.
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

/// Integer arithmetic wraps modulo 2^width (two's complement for signed
/// types); i1 arithmetic is modulo 2. Fractions (div, reduce_mean) truncate
/// toward zero. NaN or infinity has no integer meaning: failure.
LogicalResult wrapIntegers(Operation *op, Tensor &t) {
  ElementType et = t.getElementType();
  if (et.isFloat())
    return success();
  double lo = et.minValue(), mod = std::ldexp(1.0, et.width);
  for (double &v : t.data()) {
    if (!std::isfinite(v))
      return op->emitOpError("produces ")
             << num(v) << " in an integer tensor (" << et.str() << "); division by zero?";
    v = std::trunc(v) + 0.0; // (-0 becomes 0)
    if (v < lo || v > et.maxValue()) {
      v = std::fmod(v - lo, mod);
      if (v < 0)
        v += mod;
      v += lo;
    }
  }
  return success();
}

/// Walks the multi-indices of `shape` in row-major order, tracking the
/// offset into a source with per-dimension strides `srcStrides`.
template <typename Fn>
void forEachStrided(ArrayRef<int64_t> shape, ArrayRef<int64_t> srcStrides, Fn fn) {
  int64_t n = product(shape);
  if (n == 0)
    return;
  size_t rank = shape.size();
  SmallVector<int64_t, 4> idx(rank, 0);
  int64_t src = 0;
  for (int64_t i = 0; i < n; ++i) {
    fn(i, src);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < shape[d]) {
        src += srcStrides[d];
        break;
      }
      src -= srcStrides[d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
}

/// The tensor type of `v`, or null.
RankedTensorType tensorType(Value v) { return dyn_cast<RankedTensorType>(v.getType()); }

//===----------------------------------------------------------------------===//
// The evaluator
//===----------------------------------------------------------------------===//

class Evaluator {
public:
  /// Graph mode: `l1.window_read` reads here.
  const StateEnv *windowState = nullptr;
  /// Handler mode: the actor whose state `l1.state_read/write` name, the
  /// committed state, and this handler's writes so far.
  StringRef actor;
  const StateEnv *handlerState = nullptr;
  std::map<std::string, Tensor> writes;
  /// Sees every op after it runs (may be null).
  const OpObserver *observer = nullptr;

  /// Binds block arguments to `inputs`, checking count and types.
  LogicalResult bindArguments(Operation *owner, Block &block, ArrayRef<Tensor> inputs);
  /// Counts the remaining uses of every value by `ops` (and `extraUses`), so
  /// that dead tensors are freed as soon as possible.
  void countUses(ArrayRef<Operation *> ops, ValueRange extraUses);
  /// Runs one op.
  LogicalResult run(Operation *op);
  /// The value of `v` (after run() of its producer).
  const Tensor *get(Value v) const {
    auto it = env.find(v);
    return it == env.end() ? nullptr : &it->second;
  }

  /// The result `op` computes from `in` (no state, no type checks of the
  /// operands).
  FailureOr<Tensor> compute(Operation *op, ArrayRef<const Tensor *> in);

private:
  LogicalResult checkType(Operation *op, const Tensor &t, Type expected,
                          const llvm::Twine &what);

  // Op semantics.
  FailureOr<Tensor> binary(Operation *op, const Tensor &a, const Tensor &b);
  FailureOr<Tensor> unary(Operation *op, const Tensor &a);
  FailureOr<Tensor> matmul(Operation *op, const Tensor &a, const Tensor &b);
  FailureOr<Tensor> broadcast(l1::BroadcastOp op, const Tensor &a);
  FailureOr<Tensor> transpose(l1::TransposeOp op, const Tensor &a);
  FailureOr<Tensor> reduce(Operation *op, std::optional<uint64_t> axis, const Tensor &a);
  FailureOr<Tensor> cast(l1::CastOp op, const Tensor &a);

  ElementType resultElement(Operation *op) {
    auto rt = tensorType(op->getResult(0));
    std::optional<ElementType> et = rt ? ElementType::get(rt.getElementType()) : std::nullopt;
    return et ? *et : ElementType::f64();
  }

  llvm::DenseMap<Value, Tensor> env;
  llvm::DenseMap<Value, unsigned> remaining;
};

} // namespace

LogicalResult Evaluator::checkType(Operation *op, const Tensor &t, Type expected,
                                   const llvm::Twine &what) {
  if (t.hasType(expected))
    return success();
  return op->emitOpError() << what << " is " << t.typeString() << ", expected "
                           << expected;
}

LogicalResult Evaluator::bindArguments(Operation *owner, Block &block,
                                       ArrayRef<Tensor> inputs) {
  if (inputs.size() != block.getNumArguments())
    return owner->emitOpError("takes ")
           << block.getNumArguments() << " arguments, the interpreter got "
           << inputs.size();
  for (auto [i, arg] : llvm::enumerate(block.getArguments())) {
    if (failed(checkType(owner, inputs[i], arg.getType(), "argument #" + llvm::Twine(i))))
      return failure();
    env[arg] = inputs[i];
  }
  return success();
}

void Evaluator::countUses(ArrayRef<Operation *> ops, ValueRange extraUses) {
  for (Operation *op : ops)
    for (Value v : op->getOperands())
      ++remaining[v];
  for (Value v : extraUses)
    ++remaining[v];
}

LogicalResult Evaluator::run(Operation *op) {
  SmallVector<const Tensor *, 3> in;
  for (auto [i, v] : llvm::enumerate(op->getOperands())) {
    const Tensor *t = get(v);
    if (!t)
      return op->emitOpError("operand #") << i << " has no value (defined outside the "
                                             "evaluated body, or not computed)";
    if (failed(checkType(op, *t, v.getType(), "operand #" + llvm::Twine(i))))
      return failure();
    in.push_back(t);
  }

  if (auto write = dyn_cast<l1::StateWriteOp>(op)) {
    if (!handlerState)
      return op->emitOpError("is only interpreted in a handler");
    std::string field = write.getField().str();
    auto it = writes.find(field);
    const Tensor *old = it != writes.end() ? &it->second : handlerState->lookup(actor, field);
    if (old && (old->getShape() != in[0]->getShape() ||
                old->getElementType() != in[0]->getElementType()))
      return op->emitOpError("writes ")
             << in[0]->typeString() << " to @" << field << ", which holds "
             << old->typeString();
    writes[field] = *in[0];
  } else if (isa<l1::ReturnOp>(op)) {
    // The caller collects the operands.
  } else {
    if (op->getNumResults() != 1 || op->getNumRegions() != 0)
      return op->emitOpError("is not an op the reference interpreter knows");
    // Results are allocated from their declared shape: it must be static and
    // of a size a test can hold.
    auto rt = tensorType(op->getResult(0));
    if (!rt || !rt.hasStaticShape())
      return op->emitOpError("result type ")
             << op->getResult(0).getType() << " is not a static-shaped tensor";
    int64_t elements = 1;
    for (int64_t d : rt.getShape())
      elements = d > 0 && elements > kMaxElements / d ? kMaxElements + 1 : elements * d;
    if (elements > kMaxElements)
      return op->emitOpError("result type ")
             << rt << " is too large for the reference interpreter";
    FailureOr<Tensor> r = compute(op, in);
    if (failed(r))
      return failure();
    if (failed(checkType(op, *r, op->getResult(0).getType(), "the computed result")))
      return failure();
    env[op->getResult(0)] = std::move(*r);
  }
  if (observer && *observer) {
    // Inserting the result may have moved the operands' tensors.
    for (auto [i, v] : llvm::enumerate(op->getOperands()))
      in[i] = get(v);
    (*observer)(op, in, op->getNumResults() == 1 ? get(op->getResult(0)) : nullptr);
  }

  // Free what no later op needs.
  for (Value v : op->getOperands()) {
    auto it = remaining.find(v);
    if (it != remaining.end() && --it->second == 0)
      env.erase(v);
  }
  return success();
}

FailureOr<Tensor> Evaluator::compute(Operation *op, ArrayRef<const Tensor *> in) {
  // Operand counts are checked here, not trusted from the op's accessors
  // (a generic-form op parsed unverified can have any number).
  size_t want = isa<l1::AddOp, l1::SubOp, l1::MulOp, l1::DivOp, l1::MaxOp, l1::MinOp,
                    l1::MatmulOp, l1::ScaleOp, l1::CmpOp, l1::GatherOp, l1::ScatterAddOp,
                    l1::BlockSliceOp>(op)
                    ? 2
                : isa<l1::SelectOp>(op)                                  ? 3
                : isa<l1::ConstOp, l1::WindowReadOp, l1::StateReadOp>(op) ? 0
                                                                          : 1;
  // (Ops this interpreter does not know are reported by the default case.)
  bool known =
      isa<l1::AddOp, l1::SubOp, l1::MulOp, l1::DivOp, l1::MaxOp, l1::MinOp, l1::ExpOp,
          l1::LogOp, l1::SqrtOp, l1::ReciprocalOp, l1::TanhOp, l1::CosOp, l1::AbsOp,
          l1::SignOp, l1::NegOp, l1::MatmulOp, l1::ScaleOp, l1::BroadcastOp,
          l1::TransposeOp, l1::ReshapeOp, l1::ReduceSumOp, l1::ReduceMeanOp,
          l1::ReduceMaxOp, l1::CmpOp, l1::SelectOp, l1::CastOp, l1::OneHotOp, l1::ConstOp,
          l1::WindowReadOp, l1::StateReadOp, l1::UnfoldOp, l1::FoldOp, l1::RandomOp,
          l1::GatherOp, l1::ScatterAddOp, l1::BlockSliceOp>(op);
  if (known && in.size() != want)
    return op->emitOpError("has ") << in.size() << " operands, expected " << want;
  return llvm::TypeSwitch<Operation *, FailureOr<Tensor>>(op)
      .Case<l1::AddOp, l1::SubOp, l1::MulOp, l1::DivOp, l1::MaxOp, l1::MinOp>(
          [&](Operation *) -> FailureOr<Tensor> {
            return binary(op, *in[0], *in[1]);
          })
      .Case<l1::ExpOp, l1::LogOp, l1::SqrtOp, l1::ReciprocalOp, l1::TanhOp, l1::CosOp,
            l1::AbsOp, l1::SignOp, l1::NegOp>([&](Operation *) -> FailureOr<Tensor> {
        return unary(op, *in[0]);
      })
      .Case<l1::MatmulOp>([&](auto) -> FailureOr<Tensor> {
        return matmul(op, *in[0], *in[1]);
      })
      .Case<l1::ScaleOp>([&](auto) -> FailureOr<Tensor> {
        const Tensor &a = *in[0], &s = *in[1];
        if (s.getRank() != 0)
          return op->emitOpError("scalar operand has shape ")
                 << synpl::shapes::formatShape(s.getShape()) << ", expected a rank-0 tensor";
        if (a.getElementType() != s.getElementType())
          return op->emitOpError("element types ")
                 << a.getElementType().str() << " and " << s.getElementType().str()
                 << " differ";
        Tensor r = a;
        double k = s[0];
        for (double &v : r.data())
          v *= k;
        if (failed(wrapIntegers(op, r)))
          return failure();
        return r;
      })
      .Case<l1::UnfoldOp, l1::FoldOp>([&](auto w) -> FailureOr<Tensor> {
        // The attributes and shapes are checked here too (an unverified op
        // may disagree with them).
        constexpr bool isUnfold = std::is_same_v<decltype(w), l1::UnfoldOp>;
        auto rt = tensorType(op->getResult(0));
        ArrayRef<int64_t> input = isUnfold ? in[0]->getShape() : rt.getShape();
        ArrayRef<int64_t> windows = isUnfold ? rt.getShape() : in[0]->getShape();
        synpl::shapes::ShapeResult s =
            synpl::shapes::unfoldShape(input, w.getKernel(), w.getStride(), w.getPadding(),
                                       w.getChannelsLast());
        if (!s || s.shape() != windows)
          return op->emitOpError("windows ") << synpl::shapes::formatShape(windows) << " do not match "
                                             << synpl::shapes::formatShape(input);
        if constexpr (isUnfold)
          return synpl::ref::detail::unfold(*in[0], w.getKernel(), w.getStride(), w.getPadding(),
                                            windows, w.getChannelsLast());
        else
          return synpl::ref::detail::fold(*in[0], w.getKernel(), w.getStride(), w.getPadding(),
                                          input, w.getChannelsLast());
      })
      .Case<l1::BroadcastOp>([&](l1::BroadcastOp b) { return broadcast(b, *in[0]); })
      .Case<l1::TransposeOp>([&](l1::TransposeOp t) { return transpose(t, *in[0]); })
      .Case<l1::ReshapeOp>([&](l1::ReshapeOp) -> FailureOr<Tensor> {
        auto rt = tensorType(op->getResult(0));
        if (!rt)
          return op->emitOpError("result is not a ranked tensor");
        if (product(rt.getShape()) != in[0]->size())
          return op->emitOpError("cannot reshape ")
                 << synpl::shapes::formatShape(in[0]->getShape()) << " to "
                 << synpl::shapes::formatShape(rt.getShape()) << ": element counts differ";
        // Row-major order is kept: the data is reinterpreted as is.
        return Tensor(in[0]->getElementType(), rt.getShape(), in[0]->data());
      })
      .Case<l1::ReduceSumOp, l1::ReduceMeanOp, l1::ReduceMaxOp>(
          [&](auto r) -> FailureOr<Tensor> {
            std::optional<uint64_t> axis;
            if (auto a = r.getAxis())
              axis = *a;
            return reduce(op, axis, *in[0]);
          })
      .Case<l1::CmpOp>([&](l1::CmpOp c) -> FailureOr<Tensor> {
        const Tensor &a = *in[0], &b = *in[1];
        if (a.getShape() != b.getShape())
          return op->emitOpError("operand shapes ")
                 << synpl::shapes::formatShape(a.getShape()) << " and " << synpl::shapes::formatShape(b.getShape())
                 << " differ";
        Tensor r(ElementType::i1(), a.getShape());
        l1::CmpPredicate p = c.getPredicate();
        for (int64_t i = 0; i < a.size(); ++i) {
          double x = a[i], y = b[i];
          bool v = false;
          switch (p) {
          case l1::CmpPredicate::eq: v = x == y; break;
          case l1::CmpPredicate::ne: v = x != y; break;
          case l1::CmpPredicate::lt: v = x < y; break;
          case l1::CmpPredicate::le: v = x <= y; break;
          case l1::CmpPredicate::gt: v = x > y; break;
          case l1::CmpPredicate::ge: v = x >= y; break;
          }
          r[i] = v ? 1.0 : 0.0;
        }
        return r;
      })
      .Case<l1::SelectOp>([&](auto) -> FailureOr<Tensor> {
        const Tensor &c = *in[0], &a = *in[1], &b = *in[2];
        if (c.getShape() != a.getShape() || a.getShape() != b.getShape())
          return op->emitOpError("condition and operand shapes ")
                 << synpl::shapes::formatShape(c.getShape()) << ", " << synpl::shapes::formatShape(a.getShape())
                 << ", " << synpl::shapes::formatShape(b.getShape()) << " differ";
        if (a.getElementType() != b.getElementType())
          return op->emitOpError("operand element types differ");
        Tensor r = a;
        for (int64_t i = 0; i < r.size(); ++i)
          r[i] = c[i] != 0.0 ? a[i] : b[i];
        return r;
      })
      .Case<l1::CastOp>([&](l1::CastOp c) { return cast(c, *in[0]); })
      .Case<l1::OneHotOp>([&](l1::OneHotOp o) {
        return synpl::ref::detail::oneHot(op, resultElement(op), *in[0],
                                          static_cast<int64_t>(o.getClasses()));
      })
      .Case<l1::GatherOp>(
          [&](auto) { return synpl::ref::detail::gather(op, *in[0], *in[1]); })
      .Case<l1::ScatterAddOp>([&](auto) -> FailureOr<Tensor> {
        auto rt = tensorType(op->getResult(0));
        if (!rt || rt.getRank() != 2)
          return op->emitOpError("result is not a rank-2 tensor");
        return synpl::ref::detail::scatterAdd(op, *in[0], *in[1], rt.getShape()[0]);
      })
      .Case<l1::RandomOp>([&](l1::RandomOp r) -> FailureOr<Tensor> {
        auto rt = tensorType(op->getResult(0));
        if (!rt)
          return op->emitOpError("result is not a ranked tensor");
        double t = (*in[0])[0];
        if (in[0]->size() != 1 || !(t >= 0) || t != std::trunc(t) || t >= 0x1p32)
          return op->emitOpError("counter ") << num(t) << " is not an integer in [0, 2^32)";
        return synpl::ref::detail::uniformDraws(resultElement(op), rt.getShape(), uint64_t(t),
                                                uint64_t(r.getSeed()), uint64_t(r.getStream()));
      })
      .Case<l1::ConstOp>([&](l1::ConstOp c) -> FailureOr<Tensor> {
        auto rt = tensorType(op->getResult(0));
        if (!rt)
          return op->emitOpError("result is not a ranked tensor");
        ElementType et = resultElement(op);
        double v = c.getValue().convertToDouble();
        if (et.isInteger() && (v != std::trunc(v) || v < et.minValue() || v > et.maxValue()))
          return op->emitOpError("value ") << num(v) << " is not a " << et.str();
        return Tensor(et, rt.getShape(), v);
      })
      .Case<l1::WindowReadOp>([&](l1::WindowReadOp w) -> FailureOr<Tensor> {
        if (!windowState)
          return op->emitOpError("is only interpreted in a tensor graph");
        StringRef actorName = w.getWindow().getRootReference().getValue();
        const Tensor *t = windowState->lookup(actorName, w.getField());
        if (!t)
          return op->emitOpError("reads @")
                 << actorName << "::@" << w.getField() << ", which the state has no value for";
        return *t;
      })
      .Case<l1::StateReadOp>([&](l1::StateReadOp s) -> FailureOr<Tensor> {
        if (!handlerState)
          return op->emitOpError("is only interpreted in a handler");
        auto it = writes.find(s.getField().str());
        if (it != writes.end())
          return it->second;
        const Tensor *t = handlerState->lookup(actor, s.getField());
        if (!t)
          return op->emitOpError("reads @")
                 << actor << "::@" << s.getField() << ", which the state has no value for";
        return *t;
      })
      .Case<l1::KernelCallOp>([&](l1::KernelCallOp call) -> FailureOr<Tensor> {
        return call.emitOpError("calls the user kernel ")
               << call.getSymbol() << " of " << call.getFile()
               << ", which the reference interpreter cannot run: it evaluates each op "
                  "by its definition, and a user kernel has none but its file";
      })
      .Case<l1::BlockSliceOp>([&](l1::BlockSliceOp b) -> FailureOr<Tensor> {
        auto rt = tensorType(op->getResult(0));
        if (!rt)
          return op->emitOpError("result is not a ranked tensor");
        return synpl::ref::detail::blockSlice(op, *in[0], (*in[1])[0], (int64_t)b.getAxis(),
                                              rt.getShape());
      })
      .Case<l1::AllGatherOp, l1::AllSumOp>([&](Operation *) -> FailureOr<Tensor> {
        return op->emitOpError("combines the tensors of several ranks; the reference "
                               "interpreter runs one");
      })
      .Default([&](Operation *) -> FailureOr<Tensor> {
        return op->emitOpError("is not an op the reference interpreter knows");
      });
}

FailureOr<Tensor> Evaluator::binary(Operation *op, const Tensor &a, const Tensor &b) {
  if (a.getShape() != b.getShape())
    return op->emitOpError("operand shapes ")
           << synpl::shapes::formatShape(a.getShape()) << " and " << synpl::shapes::formatShape(b.getShape())
           << " differ (broadcasting is explicit)";
  if (a.getElementType() != b.getElementType())
    return op->emitOpError("operand element types ")
           << a.getElementType().str() << " and " << b.getElementType().str() << " differ";
  Tensor r = a;
  std::vector<double> &o = r.data();
  const std::vector<double> &y = b.data();
  size_t n = o.size();
  // max/min propagate NaN (as numpy's maximum/minimum do).
  auto nanOr = [](double x, double y, double v) {
    return std::isnan(x) || std::isnan(y) ? std::numeric_limits<double>::quiet_NaN() : v;
  };
  if (isa<l1::AddOp>(op))
    for (size_t i = 0; i < n; ++i)
      o[i] += y[i];
  else if (isa<l1::SubOp>(op))
    for (size_t i = 0; i < n; ++i)
      o[i] -= y[i];
  else if (isa<l1::MulOp>(op))
    for (size_t i = 0; i < n; ++i)
      o[i] *= y[i];
  else if (isa<l1::DivOp>(op))
    for (size_t i = 0; i < n; ++i)
      o[i] /= y[i];
  else if (isa<l1::MaxOp>(op))
    for (size_t i = 0; i < n; ++i)
      o[i] = nanOr(o[i], y[i], o[i] >= y[i] ? o[i] : y[i]);
  else
    for (size_t i = 0; i < n; ++i)
      o[i] = nanOr(o[i], y[i], o[i] <= y[i] ? o[i] : y[i]);
  if (failed(wrapIntegers(op, r)))
    return failure();
  return r;
}

FailureOr<Tensor> Evaluator::unary(Operation *op, const Tensor &a) {
  bool transcendental =
      isa<l1::ExpOp, l1::LogOp, l1::SqrtOp, l1::ReciprocalOp, l1::TanhOp, l1::CosOp>(op);
  if (transcendental && !a.getElementType().isFloat())
    return op->emitOpError("takes floats, got ") << a.typeString();
  Tensor r = a;
  double (*f)(double) = nullptr;
  if (isa<l1::ExpOp>(op))
    f = [](double x) { return std::exp(x); };
  else if (isa<l1::LogOp>(op))
    f = [](double x) { return std::log(x); };
  else if (isa<l1::SqrtOp>(op))
    f = [](double x) { return std::sqrt(x); };
  else if (isa<l1::ReciprocalOp>(op))
    f = [](double x) { return 1.0 / x; };
  else if (isa<l1::TanhOp>(op))
    f = [](double x) { return std::tanh(x); };
  else if (isa<l1::CosOp>(op))
    f = [](double x) { return std::cos(x); };
  else if (isa<l1::AbsOp>(op))
    f = [](double x) { return std::fabs(x); };
  else if (isa<l1::SignOp>(op))
    f = [](double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x == 0 ? 0.0 : x; };
  else
    f = [](double x) { return -x; };
  for (double &v : r.data())
    v = f(v);
  if (failed(wrapIntegers(op, r)))
    return failure();
  return r;
}

FailureOr<Tensor> Evaluator::matmul(Operation *op, const Tensor &a, const Tensor &b) {
  synpl::shapes::ShapeResult shape = synpl::shapes::matmulShape(a.getShape(), b.getShape());
  if (!shape)
    return op->emitOpError("cannot multiply ")
           << synpl::shapes::formatShape(a.getShape()) << " by " << synpl::shapes::formatShape(b.getShape())
           << " (expected [m, k] x [k, n], or batched [b..., m, k] x [b..., k, n])";
  if (!a.getElementType().isFloat() || a.getElementType() != b.getElementType())
    return op->emitOpError("takes floats of one type, got ")
           << a.typeString() << " and " << b.typeString();
  return synpl::ref::detail::matmul(a, b, shape.shape());
}

FailureOr<Tensor> Evaluator::broadcast(l1::BroadcastOp op, const Tensor &a) {
  auto rt = tensorType(op.getResult());
  if (!rt)
    return op->emitOpError("result is not a ranked tensor");
  ArrayRef<int64_t> in = a.getShape(), out = rt.getShape();
  SmallVector<int64_t, 4> dims;
  if (auto d = op.getDims())
    dims.assign(d->begin(), d->end());
  else
    // Trailing alignment: input dimension i is output dimension i + (R - r).
    for (int64_t i = 0; i < a.getRank(); ++i)
      dims.push_back(static_cast<int64_t>(out.size()) - a.getRank() + i);
  if (dims.size() != in.size())
    return op->emitOpError("dims ") << synpl::shapes::formatShape(dims) << " do not name one output "
                                    << "dimension per input dimension of "
                                    << synpl::shapes::formatShape(in);
  SmallVector<int64_t, 4> inStrides = a.strides(), srcStrides(out.size(), 0);
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = dims[i];
    if (d < 0 || d >= static_cast<int64_t>(out.size()) || (i > 0 && d <= dims[i - 1]))
      return op->emitOpError("dims ") << synpl::shapes::formatShape(dims) << " are not strictly "
                                      << "increasing output dimensions of "
                                      << synpl::shapes::formatShape(out);
    if (in[i] != 1 && in[i] != out[d])
      return op->emitOpError("cannot broadcast ")
             << synpl::shapes::formatShape(in) << " to " << synpl::shapes::formatShape(out) << " along dims "
             << synpl::shapes::formatShape(dims);
    // A dimension of extent 1 repeats: stride 0.
    if (in[i] != 1)
      srcStrides[d] = inStrides[i];
  }
  Tensor r(a.getElementType(), out, 0.0);
  const std::vector<double> &src = a.data();
  std::vector<double> &dst = r.data();
  forEachStrided(out, srcStrides, [&](int64_t i, int64_t s) { dst[i] = src[s]; });
  return r;
}

FailureOr<Tensor> Evaluator::transpose(l1::TransposeOp op, const Tensor &a) {
  ArrayRef<int64_t> in = a.getShape();
  SmallVector<int64_t, 4> perm;
  if (auto p = op.getPerm())
    perm.assign(p->begin(), p->end());
  else
    for (int64_t i = a.getRank() - 1; i >= 0; --i)
      perm.push_back(i);
  if (perm.size() != in.size())
    return op->emitOpError("perm ") << synpl::shapes::formatShape(perm) << " does not match rank "
                                    << in.size();
  SmallVector<bool, 4> seen(in.size(), false);
  SmallVector<int64_t, 4> out, inStrides = a.strides(), srcStrides;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(in.size()) || seen[p])
      return op->emitOpError("perm ") << synpl::shapes::formatShape(perm) << " is not a permutation";
    seen[p] = true;
    // Output dimension i is input dimension perm[i].
    out.push_back(in[p]);
    srcStrides.push_back(inStrides[p]);
  }
  Tensor r(a.getElementType(), out, 0.0);
  const std::vector<double> &src = a.data();
  std::vector<double> &dst = r.data();
  forEachStrided(out, srcStrides, [&](int64_t i, int64_t s) { dst[i] = src[s]; });
  return r;
}

FailureOr<Tensor> Evaluator::reduce(Operation *op, std::optional<uint64_t> axisAttr,
                                    const Tensor &a) {
  enum { Sum, Mean, Max } kind = isa<l1::ReduceSumOp>(op)    ? Sum
                                 : isa<l1::ReduceMeanOp>(op) ? Mean
                                                             : Max;
  ArrayRef<int64_t> in = a.getShape();
  // Without an axis everything reduces: one outer row of all elements.
  int64_t outer = 1, n = a.size(), inner = 1;
  SmallVector<int64_t, 4> out;
  if (axisAttr) {
    int64_t axis = static_cast<int64_t>(*axisAttr);
    if (axis < 0 || axis >= a.getRank())
      return op->emitOpError("axis ") << axis << " is out of range for shape "
                                      << synpl::shapes::formatShape(in);
    outer = product(in.take_front(axis));
    n = in[axis];
    inner = product(in.drop_front(axis + 1));
    for (int64_t d = 0; d < a.getRank(); ++d)
      if (d != axis)
        out.push_back(in[d]);
  }
  Tensor r(a.getElementType(), out, 0.0);
  const std::vector<double> &x = a.data();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      double acc = kind == Max ? -std::numeric_limits<double>::infinity() : 0.0;
      for (int64_t k = 0; k < n; ++k) {
        double v = x[(o * n + k) * inner + j];
        if (kind != Max)
          acc += v;
        else if (std::isnan(v) || std::isnan(acc))
          acc = std::numeric_limits<double>::quiet_NaN();
        else if (v > acc)
          acc = v;
      }
      if (kind == Mean)
        acc /= static_cast<double>(n);
      r[o * inner + j] = acc;
    }
  if (failed(wrapIntegers(op, r)))
    return failure();
  return r;
}

FailureOr<Tensor> Evaluator::cast(l1::CastOp op, const Tensor &a) {
  ElementType to = resultElement(op);
  Tensor r = a;
  r.setElementType(to);
  if (to.isFloat())
    return r; // Integers (and i1 as 0 / 1) convert to their value.
  // Float to integer truncates toward zero. A value the target cannot hold
  // (or NaN) has no documented meaning: the reference refuses it.
  for (int64_t i = 0; i < r.size(); ++i) {
    double v = std::trunc(a[i]);
    if (!std::isfinite(a[i]) || v < to.minValue() || v > to.maxValue())
      return op->emitOpError("casts ")
             << num(a[i]) << " (element " << i << ") to " << to.str()
             << ", which cannot hold it";
    r[i] = v + 0.0; // (-0 becomes 0)
  }
  return r;
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<Tensor>>
synpl::ref::interpretTensorGraph(l1::TensorGraphOp graph, ArrayRef<Tensor> inputs,
                                 const StateEnv &state, const InterpretOptions &options) {
  Block &body = graph.getEntry();
  auto ret = body.empty() ? l1::ReturnOp() : dyn_cast<l1::ReturnOp>(body.back());
  if (!ret)
    return graph.emitOpError("body does not end in l1.return");

  // The results to compute.
  SmallVector<unsigned> wanted;
  if (options.onlyResults) {
    for (unsigned i : *options.onlyResults) {
      if (i >= ret.getNumOperands())
        return graph.emitOpError("has ")
               << ret.getNumOperands() << " results; result " << i << " was asked for";
      wanted.push_back(i);
    }
  } else {
    for (unsigned i = 0; i < ret.getNumOperands(); ++i)
      wanted.push_back(i);
  }
  SmallVector<Value> wantedValues;
  for (unsigned i : wanted)
    wantedValues.push_back(ret.getOperand(i));

  // The ops the wanted results depend on (all of them when all results are
  // wanted: L1.8 leaves no dead op).
  llvm::DenseSet<Operation *> needed;
  SmallVector<Operation *> stack;
  auto need = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (def && def->getBlock() == &body && needed.insert(def).second)
      stack.push_back(def);
  };
  if (options.onlyResults) {
    for (Value v : wantedValues)
      need(v);
    while (!stack.empty()) {
      Operation *op = stack.pop_back_val();
      for (Value v : op->getOperands())
        need(v);
    }
  } else {
    for (Operation &op : body.without_terminator())
      needed.insert(&op);
  }

  // Def-use (Kahn) order: the body is a graph region, textual order means
  // nothing.
  llvm::DenseMap<Operation *, unsigned> pending;
  llvm::DenseMap<Operation *, SmallVector<Operation *, 2>> users;
  SmallVector<Operation *> ready, order;
  for (Operation &op : body.without_terminator()) {
    if (!needed.contains(&op))
      continue;
    unsigned n = 0;
    for (Value v : op.getOperands()) {
      Operation *def = v.getDefiningOp();
      if (def && def->getBlock() == &body) {
        ++n;
        users[def].push_back(&op);
      }
    }
    pending[&op] = n;
    if (n == 0)
      ready.push_back(&op);
  }
  while (!ready.empty()) {
    Operation *op = ready.pop_back_val();
    order.push_back(op);
    for (Operation *user : users[op])
      if (--pending[user] == 0)
        ready.push_back(user);
  }
  if (order.size() != needed.size()) {
    for (Operation &op : body.without_terminator())
      if (needed.contains(&op) && pending[&op] != 0)
        return op.emitOpError("lies on a def-use cycle; the graph cannot be evaluated");
    return graph.emitOpError("has a def-use cycle");
  }

  Evaluator ev;
  ev.windowState = &state;
  ev.observer = &options.observer;
  if (failed(ev.bindArguments(graph, body, inputs)))
    return failure();
  ev.countUses(order, wantedValues);
  for (Operation *op : order)
    if (failed(ev.run(op)))
      return failure();

  SmallVector<Tensor> results(ret.getNumOperands(), Tensor());
  for (auto [i, v] : llvm::zip(wanted, wantedValues)) {
    const Tensor *t = ev.get(v);
    if (!t)
      return ret.emitOpError("result #") << i << " has no value";
    if (!t->hasType(v.getType()))
      return ret.emitOpError("result #")
             << i << " is " << t->typeString() << ", expected " << v.getType();
    results[i] = *t;
  }
  return results;
}

LogicalResult synpl::ref::interpretHandler(l1::HandlerOp handler, ArrayRef<Tensor> args,
                                           StateEnv &state, const InterpretOptions &options) {
  auto actorOp = handler->getParentOfType<l1::ActorOp>();
  if (!actorOp)
    return handler.emitOpError("is not inside an l1.actor");
  if (handler.getBody().empty())
    return handler.emitOpError("has no body");
  Block &body = handler.getEntry();

  Evaluator ev;
  ev.actor = actorOp.getSymName();
  ev.handlerState = &state;
  ev.observer = &options.observer;
  if (failed(ev.bindArguments(handler, body, args)))
    return failure();
  // A handler is straight-line code in program order: a read after a write
  // of the same field sees the new value.
  SmallVector<Operation *> order;
  for (Operation &op : body)
    order.push_back(&op);
  ev.countUses(order, {});
  for (Operation *op : order)
    if (failed(ev.run(op)))
      return failure();
  // Commit only a completed handler.
  for (auto &[field, value] : ev.writes)
    state.set(ev.actor, field, std::move(value));
  return success();
}

FailureOr<Tensor> synpl::ref::evaluateOp(Operation *op, ArrayRef<Tensor> operands) {
  Evaluator ev;
  SmallVector<const Tensor *, 3> in;
  for (const Tensor &t : operands)
    in.push_back(&t);
  return ev.compute(op, in);
}

LogicalResult synpl::ref::initializeActorState(l1::ActorOp actor, uint64_t seed,
                                               StateEnv &state, double plannedSteps) {
  std::mt19937_64 rng(seed);
  for (auto field : actor.getBody().getOps<l1::StateOp>()) {
    auto type = dyn_cast<RankedTensorType>(field.getType());
    std::optional<ElementType> et =
        type ? ElementType::get(type.getElementType()) : std::nullopt;
    if (!type || !type.hasStaticShape() || !et)
      return field.emitOpError("type ")
             << field.getType() << " is not a static-shaped tensor of ints or floats";
    ArrayRef<int64_t> shape = type.getShape();
    double fanIn = shape.empty() ? 1.0 : static_cast<double>(shape[0]);
    double fanOut = shape.size() < 2 ? 1.0 : static_cast<double>(product(shape.drop_front()));
    Tensor t(*et, shape, 0.0);
    switch (field.getInit()) {
    case l1::InitKind::zeros:
      break;
    case l1::InitKind::ones:
      for (double &v : t.data())
        v = 1.0;
      break;
    case l1::InitKind::kaiming: {
      std::normal_distribution<double> d(0.0, std::sqrt(2.0 / fanIn));
      for (double &v : t.data())
        v = d(rng);
      break;
    }
    case l1::InitKind::xavier: {
      double limit = std::sqrt(6.0 / (fanIn + fanOut));
      std::uniform_real_distribution<double> d(-limit, limit);
      for (double &v : t.data())
        v = d(rng);
      break;
    }
    case l1::InitKind::planned_steps:
      for (double &v : t.data())
        v = plannedSteps;
      break;
    case l1::InitKind::training_mode: // the interpreter runs training steps
      for (double &v : t.data())
        v = 1.0;
      break;
    case l1::InitKind::rank: // the interpreter is one process: rank 0
      break;
    }
    if (et->isInteger()) {
      // Random draws have no integer meaning; zeros and ones do.
      if (field.getInit() == l1::InitKind::kaiming || field.getInit() == l1::InitKind::xavier)
        return field.emitOpError("integer state cannot be initialized with ")
               << l1::stringifyInitKind(field.getInit());
    }
    state.set(actor.getSymName(), field.getSymName(), std::move(t));
  }
  return success();
}
