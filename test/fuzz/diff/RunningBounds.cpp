//===- RunningBounds.cpp - Per-element f32 error bounds along one run -----===//
//
// One rule per op family. Notation in the comments: a, b the operands'
// exact values and e_a, e_b their bounds (per element); r the exact result;
// u = 2^-24; n the number of terms a result element sums. Bound tensors are
// f64 tensors shaped like their values.
//
//===----------------------------------------------------------------------===//
#include "RunningBounds.h"

#include "synpl/Dialect/L1/L1Ops.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace synpl;
using namespace synpl::difffuzz;
using ref::ElementType;
using ref::Tensor;

namespace {

constexpr double kU = 1.0 / (1 << 24);
constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor zerosLike(const Tensor &t) { return Tensor(ElementType::f64(), t.getShape(), 0.0); }

/// |x| elementwise plus `e` (the largest magnitude an operand may have).
Tensor magnitude(const Tensor &x, const Tensor &e) {
  Tensor m = zerosLike(x);
  for (int64_t i = 0; i < x.size(); ++i)
    m[i] = std::abs(x[i]) + e[i];
  return m;
}

/// The largest move of a monotone `f` over [a - e, a + e] (infinite where
/// f is not finite there).
template <typename F>
double monotoneMove(F f, double a, double e) {
  double fa = f(a), up = f(a + e), down = f(a - e);
  double move = std::max(std::abs(up - fa), std::abs(down - fa));
  return std::isfinite(move) ? move : kInf;
}

/// trunc toward zero, as a float-to-integer cast does.
double truncate(double x) { return std::trunc(x); }

} // namespace

ref::OpObserver RunningBounds::observer() {
  return [this](Operation *op, ArrayRef<const Tensor *> values, const Tensor *result) {
    observe(op, values, result);
  };
}

const Tensor *RunningBounds::lookup(Value v) const {
  auto it = errs.find(v);
  return it == errs.end() ? nullptr : &it->second;
}

const Tensor *RunningBounds::field(StringRef name) const {
  auto it = fields.find(name.str());
  return it == fields.end() ? nullptr : &it->second;
}

void RunningBounds::noteUnbounded(Operation *op, const std::string &why) {
  if (!firstUnbounded.empty())
    return;
  std::string loc;
  llvm::raw_string_ostream os(loc);
  os << op->getLoc();
  firstUnbounded = op->getName().getStringRef().str() + " at " + loc + ": " + why;
}

Tensor RunningBounds::apply(Operation *op, ArrayRef<Tensor> operands, const Tensor &like) {
  FailureOr<Tensor> r = ref::evaluateOp(op, operands);
  if (succeeded(r))
    return Tensor(ElementType::f64(), r->getShape(), r->data());
  noteUnbounded(op, "the reference could not carry the bounds through the op");
  return Tensor(ElementType::f64(), like.getShape(), kInf);
}

/// A value compared with the maximum of its own rows: max pooling's and
/// argmax's mask, `cmp(x, broadcast(reduce_max(... reduce_max(x))))`. The
/// operands are not independent: whatever the rounding, the computed
/// maximum is one of the computed elements. An element's outcome can flip
/// only if another element of its row could be the maximum instead: it is
/// unstable iff it is a candidate (x_k + e_k >= max_j (x_j - e_j) over its
/// row), the row has two or more candidates, and one of them carries error
/// (exact ties stay ties). The rows are found by carrying each maximum's
/// index through the broadcast back to x's shape. Fills `out` and returns
/// true when `c` has that form.
bool RunningBounds::compareWithOwnMax(l1::CmpOp c, ArrayRef<const Tensor *> values,
                                      ArrayRef<Tensor> in, Tensor &out) {
  for (unsigned side : {0u, 1u}) {
    Value x = c->getOperand(1 - side), m = c->getOperand(side);
    SmallVector<Operation *> spread; // from the maxima up to the compare
    while (Operation *def = m.getDefiningOp()) {
      if (!isa<l1::BroadcastOp, l1::ReshapeOp>(def))
        break;
      spread.insert(spread.begin(), def);
      m = def->getOperand(0);
    }
    Value maxima = m;
    bool reduced = false;
    while (Operation *def = m.getDefiningOp()) {
      if (!isa<l1::ReduceMaxOp, l1::ReshapeOp>(def) || m == x)
        break;
      reduced |= isa<l1::ReduceMaxOp>(def);
      m = def->getOperand(0);
    }
    if (!reduced || m != x)
      continue;
    const Tensor &xv = *values[1 - side], &mv = *values[side];
    const Tensor &xe = in[1 - side];
    // Each element's row: the index of the maximum the broadcast gives it.
    auto maximaType = cast<RankedTensorType>(maxima.getType());
    Tensor rows(ElementType::f64(), maximaType.getShape());
    for (int64_t r = 0; r < rows.size(); ++r)
      rows[r] = double(r);
    for (Operation *op : spread) {
      FailureOr<Tensor> next = ref::evaluateOp(op, {rows});
      if (failed(next))
        return false;
      rows = std::move(*next);
    }
    if (rows.size() != xv.size())
      return false;
    std::map<int64_t, double> top, lowEnd;
    for (int64_t k = 0; k < xv.size(); ++k) {
      int64_t r = int64_t(rows[k]);
      auto [t, fresh] = top.try_emplace(r, xv[k]);
      t->second = fresh ? xv[k] : std::max(t->second, xv[k]);
      auto [l, freshLow] = lowEnd.try_emplace(r, xv[k] - xe[k]);
      l->second = freshLow ? xv[k] - xe[k] : std::max(l->second, xv[k] - xe[k]);
    }
    // The other operand must be each row's maximum itself.
    for (int64_t k = 0; k < xv.size(); ++k)
      if (mv[k] != top[int64_t(rows[k])])
        return false;
    std::map<int64_t, int> candidates;
    std::map<int64_t, bool> inexact;
    auto candidate = [&](int64_t k) { return xv[k] + xe[k] >= lowEnd[int64_t(rows[k])]; };
    for (int64_t k = 0; k < xv.size(); ++k)
      if (candidate(k)) {
        ++candidates[int64_t(rows[k])];
        inexact[int64_t(rows[k])] = inexact[int64_t(rows[k])] || xe[k] > 0;
      }
    for (int64_t k = 0; k < xv.size(); ++k) {
      int64_t r = int64_t(rows[k]);
      out[k] = candidate(k) && candidates[r] > 1 && inexact[r] ? 1.0 : 0.0;
    }
    return true;
  }
  return false;
}

void RunningBounds::observe(Operation *op, ArrayRef<const Tensor *> values,
                            const Tensor *result) {
  // Operand bounds: what was recorded, else exact.
  SmallVector<Tensor, 3> in;
  for (auto [v, value] : llvm::zip(op->getOperands(), values)) {
    const Tensor *e = lookup(v);
    in.push_back(e ? *e : zerosLike(*value));
  }
  if (auto write = dyn_cast<l1::StateWriteOp>(op)) {
    fields[write.getField().str()] = in[0];
    return;
  }
  if (!result)
    return; // the terminator
  Tensor r = bound(op, values, in, *result);
  // An inexact value within a factor 2 of f32's largest may overflow
  // (masks hold -1e30 on purpose: an exact value is what it is).
  const double overflow = std::numeric_limits<float>::max() / 2;
  for (int64_t i = 0; i < r.size(); ++i)
    if (r[i] != 0 && !(std::abs((*result)[i]) + r[i] < overflow)) {
      if (std::isfinite(r[i]))
        noteUnbounded(op, "values reach f32 overflow");
      r[i] = kInf;
    }
  errs[op->getResult(0)] = std::move(r);
}

Tensor RunningBounds::bound(Operation *op, ArrayRef<const Tensor *> values, ArrayRef<Tensor> in,
                            const Tensor &result) {
  const ErrorModel &m = model;
  Tensor out = zerosLike(result);
  bool fp = isa<FloatType>(cast<RankedTensorType>(op->getResult(0).getType()).getElementType());
  // Rounding of a result element of magnitude `mag` carrying `prop`: k ulps
  // of what is actually rounded (integers are exact).
  auto round = [&](double k, double mag, double prop) {
    return fp ? k * kU * (mag + prop) + m.subnormal : 0.0;
  };
  // One correctly rounded op on exact operands whose exact result is an
  // f32 number returns it exactly (positions built as 4 * one_hot stay
  // integers, so comparing them is stable), up to a flushed subnormal.
  auto roundOnce = [&](int64_t i, double prop) {
    if (prop == 0 && double(float(result[i])) == result[i])
      return fp && std::abs(result[i]) < 0x1p-126 ? m.subnormal : 0.0;
    return round(1, std::abs(result[i]), prop);
  };
  // A sum of exact integers whose magnitudes add up to less than 2^24 is
  // exact in any order (every partial sum is an f32 integer).
  auto exactIntegers = [](const Tensor &x, const Tensor &e) {
    double total = 0;
    for (int64_t i = 0; i < x.size(); ++i) {
      if (e[i] != 0 || x[i] != std::trunc(x[i]))
        return false;
      total += std::abs(x[i]);
    }
    return total < double(1 << 24);
  };
  // Elementwise rule over the operands' values and bounds.
  auto each = [&](auto rule) {
    for (int64_t i = 0; i < out.size(); ++i)
      out[i] = rule(i);
  };
  static const Tensor none;
  const Tensor &a = values.empty() ? none : *values[0];
  auto unbounded = [&](const std::string &why, double value, double err) {
    char detail[96];
    std::snprintf(detail, sizeof detail, " (%.3g, error bound %.3g)", value, err);
    noteUnbounded(op, why + detail);
    return kInf;
  };
  // A sum of n terms of `terms` (values and bounds, summed by the op itself
  // applied to bound tensors): their bounds plus gamma(n) of their
  // magnitudes.
  auto sum = [&](double n, Tensor propagated, const Tensor &magnitudes) {
    for (int64_t i = 0; i < propagated.size(); ++i)
      propagated[i] += gamma(n) * magnitudes[i] + m.subnormal * n;
    return propagated;
  };

  llvm::TypeSwitch<Operation *>(op)
      .Case<l1::AddOp, l1::SubOp>([&](Operation *) {
        each([&](int64_t i) {
          double prop = in[0][i] + in[1][i];
          return prop + roundOnce(i, prop);
        });
      })
      .Case<l1::MulOp>([&](Operation *) {
        const Tensor &b = *values[1];
        each([&](int64_t i) {
          double prop = std::abs(a[i]) * in[1][i] + std::abs(b[i]) * in[0][i] + in[0][i] * in[1][i];
          return prop + roundOnce(i, prop);
        });
      })
      .Case<l1::DivOp>([&](Operation *) {
        // |a/b - a'/b'| <= (|b| e_a + |a| e_b) / (|b| (|b| - e_b)).
        const Tensor &b = *values[1];
        each([&](int64_t i) {
          double mb = std::abs(b[i]);
          if (mb <= in[1][i] || mb == 0)
            return unbounded("a divisor within its error of zero", b[i], in[1][i]);
          double prop = (mb * in[0][i] + std::abs(a[i]) * in[1][i]) / (mb * (mb - in[1][i]));
          return prop + round(m.arith, std::abs(result[i]), prop);
        });
      })
      .Case<l1::MaxOp, l1::MinOp>([&](Operation *o) {
        // max and min are monotone in both operands: the result lies
        // between the op of the lower ends and the op of the upper ends.
        const Tensor &b = *values[1];
        bool isMax = isa<l1::MaxOp>(o);
        auto f = [&](double x, double y) { return isMax ? std::max(x, y) : std::min(x, y); };
        each([&](int64_t i) {
          double lo = f(a[i] - in[0][i], b[i] - in[1][i]), hi = f(a[i] + in[0][i], b[i] + in[1][i]);
          return std::max(hi - result[i], result[i] - lo);
        });
      })
      .Case<l1::NegOp, l1::AbsOp>([&](Operation *) { out = in[0]; })
      .Case<l1::SignOp>([&](Operation *) {
        auto sign = [](double x) { return double((x > 0) - (x < 0)); };
        each([&](int64_t i) { return monotoneMove(sign, a[i], in[0][i]); });
      })
      .Case<l1::ExpOp>([&](Operation *) {
        // exp(x) = exp2(x log2 e) also rounds its argument: |x| more ulps.
        each([&](int64_t i) {
          if (a[i] + in[0][i] > 88)
            return unbounded("exp near f32 overflow", a[i], in[0][i]);
          double prop = monotoneMove([](double x) { return std::exp(x); }, a[i], in[0][i]);
          return prop + round(m.transcendental + 2 * std::abs(a[i]),
                              std::exp(a[i] + in[0][i]), 0);
        });
      })
      .Case<l1::LogOp>([&](Operation *) {
        // Within its ulps of log2, whose magnitude is |log| / ln 2 + 1 at most.
        each([&](int64_t i) {
          if (a[i] - in[0][i] <= 0)
            return unbounded("a log of a value within its error of zero", a[i], in[0][i]);
          double prop = monotoneMove([](double x) { return std::log(x); }, a[i], in[0][i]);
          return prop + round(m.transcendental, std::abs(result[i]) + 1, prop);
        });
      })
      .Case<l1::SqrtOp>([&](Operation *) {
        each([&](int64_t i) {
          double e = in[0][i];
          double lo = std::sqrt(std::max(0.0, a[i] - e)), hi = std::sqrt(a[i] + e);
          double prop = std::max(hi - result[i], result[i] - lo);
          return prop + round(m.transcendental, hi, 0);
        });
      })
      .Case<l1::ReciprocalOp>([&](Operation *) {
        each([&](int64_t i) {
          double ma = std::abs(a[i]);
          if (ma <= in[0][i])
            return unbounded("a reciprocal of a value within its error of zero", a[i],
                             in[0][i]);
          double prop = in[0][i] / (ma * (ma - in[0][i]));
          return prop + round(m.transcendental, 1 / (ma - in[0][i]), 0);
        });
      })
      .Case<l1::TanhOp>([&](Operation *) {
        // Computed as 2 / (1 + exp2(-2x log2 e)) - 1: an absolute error.
        each([&](int64_t i) {
          double prop = monotoneMove([](double x) { return std::tanh(x); }, a[i], in[0][i]);
          return prop + round(m.transcendental + 4 * std::abs(a[i]), 1, 0);
        });
      })
      .Case<l1::CosOp>([&](Operation *) {
        // 1-Lipschitz; sin(x + pi/2) rounds the argument at its magnitude.
        each([&](int64_t i) {
          return std::min(in[0][i], 2.0) +
                 round(m.transcendental + 2 * (std::abs(a[i]) + 2), 1, 0);
        });
      })
      .Case<l1::MatmulOp>([&](l1::MatmulOp mm) {
        // Each element sums k products: propagated |A| E_B + E_A |B| +
        // E_A E_B, rounded within gamma(k + 1) of (|A| + E_A)(|B| + E_B).
        const Tensor &b = *values[1];
        double k = double(cast<RankedTensorType>(mm.getLhs().getType()).getShape().back());
        auto largest = [](const Tensor &x) {
          double most = 0;
          for (double v : x.data())
            most = std::max(most, std::abs(v));
          return most;
        };
        // Every product and partial sum an f32 integer: exact.
        if (exactIntegers(a, in[0]) && exactIntegers(b, in[1]) &&
            k * largest(a) * largest(b) < double(1 << 24))
          return;
        Tensor absA = magnitude(a, zerosLike(a)), absB = magnitude(b, zerosLike(b));
        Tensor p1 = apply(op, {absA, in[1]}, result), p2 = apply(op, {in[0], absB}, result),
               p3 = apply(op, {in[0], in[1]}, result);
        Tensor mag = apply(op, {magnitude(a, in[0]), magnitude(b, in[1])}, result);
        each([&](int64_t i) {
          double prop = p1[i] + p2[i] + p3[i];
          return prop + gamma(k + 1) * mag[i] + m.subnormal * k;
        });
      })
      .Case<l1::ScaleOp>([&](Operation *) {
        double s = (*values[1])[0], es = in[1][0];
        each([&](int64_t i) {
          double prop = std::abs(a[i]) * es + std::abs(s) * in[0][i] + in[0][i] * es;
          return prop + roundOnce(i, prop);
        });
      })
      .Case<l1::BroadcastOp, l1::TransposeOp, l1::ReshapeOp, l1::UnfoldOp>(
          [&](Operation *) { out = apply(op, {in[0]}, result); })
      .Case<l1::BlockSliceOp>(
          [&](Operation *) { out = apply(op, {in[0], *values[1]}, result); })
      .Case<l1::FoldOp>([&](l1::FoldOp f) {
        // A position sums at most prod(ceil(K / stride)) window elements.
        double n = 1;
        for (auto [k, s] : llvm::zip(f.getKernel(), f.getStride()))
          n *= double((k + s - 1) / s);
        out = sum(n, apply(op, {in[0]}, result), apply(op, {magnitude(a, in[0])}, result));
      })
      .Case<l1::ReduceSumOp, l1::ReduceMeanOp>([&](Operation *o) {
        std::optional<uint64_t> axis;
        if (auto attr = o->getAttrOfType<IntegerAttr>("axis"))
          axis = attr.getInt();
        auto type = cast<RankedTensorType>(o->getOperand(0).getType());
        double n = double(axis ? type.getDimSize(*axis) : type.getNumElements());
        if (isa<l1::ReduceSumOp>(o) && exactIntegers(a, in[0]))
          return;
        // The op applied to the bounds: their sum (or mean, the sum over n).
        out = sum(n, apply(op, {in[0]}, result), apply(op, {magnitude(a, in[0])}, result));
        if (isa<l1::ReduceMeanOp>(o))
          each([&](int64_t i) {
            return out[i] + round(m.arith, std::abs(result[i]), out[i]);
          });
      })
      .Case<l1::ReduceMaxOp>([&](Operation *) {
        // The maximum is monotone in every element: it lies between the
        // maximum of the lower ends and that of the upper ends (an element
        // far below the others, a mask's, cannot lend it its error).
        Tensor lower = zerosLike(a), upper = zerosLike(a);
        for (int64_t i = 0; i < a.size(); ++i)
          lower[i] = a[i] - in[0][i], upper[i] = a[i] + in[0][i];
        Tensor lo = apply(op, {lower}, result), hi = apply(op, {upper}, result);
        each([&](int64_t i) { return std::max(hi[i] - result[i], result[i] - lo[i]); });
      })
      .Case<l1::CmpOp>([&](l1::CmpOp c) {
        if (compareWithOwnMax(c, values, in, out))
          return;
        // Exact where |a - b| exceeds both bounds (and a tie stays a tie
        // only if both are exact); otherwise either outcome.
        const Tensor &b = *values[1];
        each([&](int64_t i) {
          double slack = in[0][i] + in[1][i];
          return std::abs(a[i] - b[i]) > slack || slack == 0 ? 0.0 : 1.0;
        });
      })
      .Case<l1::SelectOp>([&](Operation *) {
        // An unstable condition may pick the other branch.
        const Tensor &c = *values[0], &x = *values[1], &y = *values[2];
        each([&](int64_t i) {
          bool takeX = c[i] != 0;
          double chosen = takeX ? in[1][i] : in[2][i];
          if (in[0][i] == 0)
            return chosen;
          double other = takeX ? in[2][i] : in[1][i];
          return std::max(chosen, std::abs(x[i] - y[i]) + other);
        });
      })
      .Case<l1::CastOp>([&](l1::CastOp c) {
        Type to = cast<RankedTensorType>(c.getResult().getType()).getElementType();
        if (isa<FloatType>(to)) {
          // Integers (below 2^24) and f32 values convert exactly.
          out = in[0];
          return;
        }
        bool boolean = to.isInteger(1);
        each([&](int64_t i) {
          if (boolean) // nonzero -> 1
            return std::abs(a[i]) > in[0][i] || in[0][i] == 0 ? 0.0 : 1.0;
          return monotoneMove(truncate, a[i], in[0][i]);
        });
      })
      .Case<l1::OneHotOp>([&](l1::OneHotOp o) {
        // A label with any error may light another class of its row.
        int64_t classes = int64_t(o.getClasses());
        each([&](int64_t i) { return in[0][i / classes] == 0 ? 0.0 : 1.0; });
      })
      .Case<l1::GatherOp>([&](Operation *) {
        for (int64_t i = 0; i < in[1].size(); ++i)
          if (in[1][i] != 0) {
            out = Tensor(ElementType::f64(), result.getShape(), kInf);
            noteUnbounded(op, "gather at indices with error");
            return;
          }
        out = apply(op, {in[0], *values[1]}, result);
      })
      .Case<l1::ScatterAddOp>([&](l1::ScatterAddOp s) {
        for (int64_t i = 0; i < in[1].size(); ++i)
          if (in[1][i] != 0) {
            out = Tensor(ElementType::f64(), result.getShape(), kInf);
            noteUnbounded(op, "scatter_add at indices with error");
            return;
          }
        // A row sums at most every index's row.
        double n = double(cast<RankedTensorType>(s.getIds().getType()).getNumElements());
        out = sum(n, apply(op, {in[0], *values[1]}, result),
                  apply(op, {magnitude(a, in[0]), *values[1]}, result));
      })
      .Case<l1::RandomOp>([&](Operation *) {
        // The counter draws are integers * 2^-24: exact for an exact counter.
        if (in[0][0] != 0) {
          out = Tensor(ElementType::f64(), result.getShape(), kInf);
          noteUnbounded(op, "random with a counter with error");
        }
      })
      .Case<l1::ConstOp>([&](l1::ConstOp c) {
        double v = c.getValue().convertToDouble();
        double stored = fp ? double(float(v)) : v;
        each([&](int64_t) { return std::abs(stored - v); });
      })
      .Case<l1::WindowReadOp>([&](Operation *) {
        // The state both paths start from is the same f32 numbers.
      })
      .Case<l1::StateReadOp>([&](l1::StateReadOp s) {
        if (const Tensor *e = field(s.getField()))
          out = *e;
      })
      .Default([&](Operation *) {
        out = Tensor(ElementType::f64(), result.getShape(), kInf);
        noteUnbounded(op, "the differential fuzzer has no error rule for this op");
      });
  return out;
}
