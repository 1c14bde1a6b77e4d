//===- Bounds.cpp - Value ranges and f32 error bounds of an L1 graph ------===//
//
// One transfer function per op family. Notation in the comments: a, b the
// operands with intervals [lo, hi], magnitudes M = max(|lo|, |hi|) and
// error bounds e; r the result; u = 2^-24; n the number of terms a result
// element sums.
//
//===----------------------------------------------------------------------===//
#include "Bounds.h"

#include "synpl/Dialect/L1/L1Ops.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace synpl;
using namespace synpl::difffuzz;

namespace {

constexpr double kU = 1.0 / (1 << 24);

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Elements of `v`'s type along `axis`, or all of them.
int64_t count(Value v, std::optional<uint64_t> axis) {
  auto t = typeOf(v);
  return axis ? t.getDimSize(*axis) : t.getNumElements();
}

/// The interval of x * y over both intervals.
std::pair<double, double> mulInterval(const Bound &x, const Bound &y) {
  double c[] = {x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

/// |x| >= this on the whole interval (0 if it contains 0).
double minAbs(const Bound &x) {
  if (x.lo > 0)
    return x.lo;
  if (x.hi < 0)
    return -x.hi;
  return 0;
}

} // namespace

double synpl::difffuzz::gamma(double n) { return n * kU / (1 - n * kU); }

bool GraphBounds::run(l1::TensorGraphOp graph, ArrayRef<Bound> args, std::string &why) {
  Block &body = graph.getEntry();
  if (args.size() != body.getNumArguments()) {
    why = "the graph takes " + std::to_string(body.getNumArguments()) + " arguments, " +
          std::to_string(args.size()) + " bounds given";
    return false;
  }
  for (auto [arg, b] : llvm::zip(body.getArguments(), args))
    bounds[arg] = b;
  // The body is a graph region; the generator and the reducer keep it in
  // def-use order, and an op whose operand has no bound yet is refused.
  for (Operation &op : body) {
    if (isa<l1::ReturnOp>(op))
      continue;
    Bound out;
    if (!transfer(&op, out, why))
      return false;
    bounds[op.getResult(0)] = out;
  }
  return true;
}

bool GraphBounds::transfer(Operation *op, Bound &r, std::string &why) {
  auto refuse = [&](const Twine &reason) {
    std::string loc;
    llvm::raw_string_ostream os(loc);
    os << op->getLoc();
    why = (op->getName().getStringRef() + " at " + loc + ": " + reason).str();
    return false;
  };
  SmallVector<Bound, 3> in;
  for (Value v : op->getOperands()) {
    const Bound *b = lookup(v);
    if (!b)
      return refuse("an operand has no bound (not in def-use order)");
    in.push_back(*b);
  }
  const ErrorModel &m = model;
  // Rounding of a result of magnitude at most `mag` carrying `prop`
  // propagated error: k ulps of what is actually rounded.
  auto round = [&](double k, double mag, double prop) {
    return k * kU * (mag + prop) + m.subnormal;
  };
  // A sum of n elements of `a` in any order or tree: their propagated
  // errors, and gamma(n) of the sum of their magnitudes.
  auto sumError = [&](double n, const Bound &a) {
    return n * a.err + gamma(n) * n * (a.mag() + a.err) + m.subnormal * n;
  };

  bool ok = llvm::TypeSwitch<Operation *, bool>(op)
      .Case<l1::AddOp, l1::SubOp>([&](Operation *o) {
        const Bound &a = in[0], &b = in[1];
        if (isa<l1::AddOp>(o))
          r.lo = a.lo + b.lo, r.hi = a.hi + b.hi;
        else
          r.lo = a.lo - b.hi, r.hi = a.hi - b.lo;
        double prop = a.err + b.err;
        // Integer arithmetic is exact (the ranges stay small).
        bool fp = isa<FloatType>(typeOf(o->getResult(0)).getElementType());
        r.err = prop + (fp ? round(1, r.mag(), prop) : 0);
        return true;
      })
      .Case<l1::MulOp>([&](Operation *o) {
        const Bound &a = in[0], &b = in[1];
        std::tie(r.lo, r.hi) = mulInterval(a, b);
        double prop = a.mag() * b.err + b.mag() * a.err + a.err * b.err;
        bool fp = isa<FloatType>(typeOf(o->getResult(0)).getElementType());
        r.err = prop + (fp ? round(1, r.mag(), prop) : 0);
        return true;
      })
      .Case<l1::DivOp>([&](Operation *) {
        // |a/b - a'/b'| <= (e_a + |a/b| e_b) / (min|b| - e_b).
        const Bound &a = in[0], &b = in[1];
        double mb = minAbs(b);
        if (mb <= 2 * b.err || mb < 1.0 / 64)
          return refuse("the divisor's interval [" + num(b.lo) + ", " + num(b.hi) +
                        "] comes within " + num(std::max(2 * b.err, 1.0 / 64)) +
                        " of zero");
        double q = a.mag() / mb;
        r.lo = -q, r.hi = q;
        if (a.lo >= 0 && b.lo > 0)
          r.lo = a.lo / b.hi, r.hi = a.hi / b.lo;
        double prop = (a.err + q * b.err) / (mb - b.err);
        r.err = prop + round(m.arith, q, prop);
        return true;
      })
      .Case<l1::MaxOp, l1::MinOp>([&](Operation *o) {
        // 1-Lipschitz in each operand, and exact.
        const Bound &a = in[0], &b = in[1];
        if (isa<l1::MaxOp>(o))
          r.lo = std::max(a.lo, b.lo), r.hi = std::max(a.hi, b.hi);
        else
          r.lo = std::min(a.lo, b.lo), r.hi = std::min(a.hi, b.hi);
        r.err = std::max(a.err, b.err);
        return true;
      })
      .Case<l1::NegOp>([&](Operation *) {
        r = {-in[0].hi, -in[0].lo, in[0].err};
        return true;
      })
      .Case<l1::AbsOp>([&](Operation *) {
        const Bound &a = in[0];
        r.lo = minAbs(a), r.hi = a.mag(), r.err = a.err;
        return true;
      })
      .Case<l1::SignOp>([&](Operation *) {
        if (!in[0].exact())
          return refuse("sign of an inexact value (a rounding difference could flip it)");
        r = {in[0].lo < 0 ? -1.0 : 0.0, in[0].hi > 0 ? 1.0 : 0.0, 0};
        return true;
      })
      .Case<l1::ExpOp>([&](Operation *) {
        // |exp(x + d) - exp(x)| <= exp(hi + e) e; exp(x) = exp2(x log2 e)
        // rounds the argument: |x| more ulps.
        const Bound &a = in[0];
        if (a.hi + a.err > 60)
          return refuse("exp of values up to " + num(a.hi) + " (too near f32 overflow)");
        r.lo = std::exp(a.lo), r.hi = std::exp(a.hi);
        double prop = std::exp(a.hi + a.err) * a.err;
        r.err = prop + round(m.transcendental + 2 * a.mag(), r.hi, prop);
        return true;
      })
      .Case<l1::LogOp>([&](Operation *) {
        // Lipschitz 1 / (lo - e); the approximation is within its ulps of
        // log2 (whose magnitude is at most |log| / ln 2 + 1).
        const Bound &a = in[0];
        if (a.lo - 2 * a.err < 1.0 / 64)
          return refuse("log of an interval reaching " + num(a.lo) +
                        " (too near zero for a stable comparison)");
        r.lo = std::log(a.lo), r.hi = std::log(a.hi);
        double prop = a.err / (a.lo - a.err);
        r.err = prop + round(m.transcendental, r.mag() + 1, prop);
        return true;
      })
      .Case<l1::SqrtOp>([&](Operation *) {
        const Bound &a = in[0];
        if (a.lo < 0)
          return refuse("sqrt of an interval reaching " + num(a.lo));
        r.lo = std::sqrt(a.lo), r.hi = std::sqrt(a.hi);
        // Lipschitz 1 / (2 sqrt(lo - e)) away from 0; sqrt(e) near it.
        double prop = a.lo - a.err > 0 ? a.err / (2 * std::sqrt(a.lo - a.err))
                                       : std::sqrt(a.err);
        r.err = prop + round(m.transcendental, r.hi, prop);
        return true;
      })
      .Case<l1::ReciprocalOp>([&](Operation *) {
        const Bound &a = in[0];
        double ma = minAbs(a);
        if (ma <= 2 * a.err || ma < 1.0 / 64)
          return refuse("reciprocal of an interval reaching within " +
                        num(std::max(2 * a.err, 1.0 / 64)) + " of zero");
        r.lo = a.lo > 0 ? 1 / a.hi : -1 / ma;
        r.hi = a.lo > 0 ? 1 / a.lo : -1 / a.hi;
        if (a.hi < 0)
          r.lo = 1 / a.lo, r.hi = 1 / a.hi;
        double prop = a.err / (ma * (ma - a.err));
        r.err = prop + round(m.transcendental, 1 / ma, prop);
        return true;
      })
      .Case<l1::TanhOp>([&](Operation *) {
        // 1-Lipschitz; computed as 2 / (1 + exp2(-2x log2 e)) - 1, whose
        // error is absolute (near 0 the subtraction cancels).
        const Bound &a = in[0];
        r.lo = std::tanh(a.lo), r.hi = std::tanh(a.hi);
        r.err = a.err + round(m.transcendental + 4 * a.mag(), 1, a.err);
        return true;
      })
      .Case<l1::CosOp>([&](Operation *) {
        // 1-Lipschitz; computed as sin(x + pi/2): the addition rounds at
        // the argument's magnitude.
        const Bound &a = in[0];
        if (a.mag() > 64)
          return refuse("cos of arguments up to " + num(a.mag()) +
                        " (the argument's rounding dominates)");
        r.lo = -1, r.hi = 1;
        r.err = a.err + round(m.transcendental + 2 * (a.mag() + 2), 1, a.err);
        return true;
      })
      .Case<l1::MatmulOp>([&](l1::MatmulOp mm) {
        // Each element sums k products: propagated k (M_a e_b + M_b e_a +
        // e_a e_b), rounded within gamma(k + 1) of k M_a M_b (the product's
        // rounding and the sum's, in any order or FMA).
        const Bound &a = in[0], &b = in[1];
        double k = double(typeOf(mm.getLhs()).getShape().back());
        auto [plo, phi] = mulInterval(a, b);
        r.lo = k * std::min(plo, 0.0), r.hi = k * std::max(phi, 0.0);
        double prop = k * (a.mag() * b.err + b.mag() * a.err + a.err * b.err);
        r.err = prop + gamma(k + 1) * (k * a.mag() * b.mag() + prop) + m.subnormal * k;
        return true;
      })
      .Case<l1::ScaleOp>([&](Operation *) {
        const Bound &a = in[0], &s = in[1];
        std::tie(r.lo, r.hi) = mulInterval(a, s);
        double prop = a.mag() * s.err + s.mag() * a.err + a.err * s.err;
        r.err = prop + round(1, r.mag(), prop);
        return true;
      })
      .Case<l1::BroadcastOp, l1::TransposeOp, l1::ReshapeOp>([&](Operation *) {
        r = in[0];
        return true;
      })
      .Case<l1::UnfoldOp>([&](l1::UnfoldOp u) {
        r = in[0];
        if (llvm::any_of(u.getPadding(), [](int64_t p) { return p > 0; }))
          r.lo = std::min(r.lo, 0.0), r.hi = std::max(r.hi, 0.0);
        return true;
      })
      .Case<l1::FoldOp>([&](l1::FoldOp f) {
        // A position sums at most prod(ceil(K / stride)) window elements.
        double n = 1;
        for (auto [k, s] : llvm::zip(f.getKernel(), f.getStride()))
          n *= double((k + s - 1) / s);
        const Bound &a = in[0];
        r.lo = n * std::min(a.lo, 0.0), r.hi = n * std::max(a.hi, 0.0);
        r.err = sumError(n, a);
        return true;
      })
      .Case<l1::ReduceSumOp, l1::ReduceMeanOp>([&](Operation *o) {
        std::optional<uint64_t> axis;
        if (auto attr = o->getAttrOfType<IntegerAttr>("axis"))
          axis = attr.getInt();
        double n = double(count(o->getOperand(0), axis));
        const Bound &a = in[0];
        double sumErr = sumError(n, a);
        if (isa<l1::ReduceSumOp>(o)) {
          r.lo = n * a.lo, r.hi = n * a.hi, r.err = sumErr;
        } else {
          // The mean: the sum's error over n, and one more rounding of the
          // quotient (or two, of a product with 1/n).
          r.lo = a.lo, r.hi = a.hi;
          r.err = sumErr / n + round(m.arith, a.mag(), sumErr / n);
        }
        return true;
      })
      .Case<l1::ReduceMaxOp>([&](Operation *) {
        r = in[0];
        return true;
      })
      .Case<l1::CmpOp>([&](Operation *) {
        if (!in[0].exact() || !in[1].exact())
          return refuse("a comparison of inexact values (a rounding difference could flip it)");
        r = {0, 1, 0};
        return true;
      })
      .Case<l1::SelectOp>([&](Operation *) {
        if (!in[0].exact())
          return refuse("a select on an inexact condition");
        r.lo = std::min(in[1].lo, in[2].lo), r.hi = std::max(in[1].hi, in[2].hi);
        r.err = std::max(in[1].err, in[2].err);
        return true;
      })
      .Case<l1::CastOp>([&](l1::CastOp c) {
        Type from = typeOf(c.getOperand()).getElementType();
        Type to = typeOf(c.getResult()).getElementType();
        const Bound &a = in[0];
        if (isa<FloatType>(to)) {
          // From an integer (or i1): exact below 2^24.
          if (isa<FloatType>(from))
            return refuse("a float-to-float cast (not generated)");
          if (a.mag() > double(1 << 24))
            return refuse("an integer cast to f32 beyond 2^24");
          r = a;
          return true;
        }
        auto it = cast<IntegerType>(to);
        if (!a.exact())
          return refuse("a cast to an integer of an inexact value (truncation could differ)");
        double lo = it.getWidth() == 1 ? 0 : it.isUnsigned() ? 0 : -std::ldexp(1, it.getWidth() - 1);
        double hi = it.getWidth() == 1 ? 1 : it.isUnsigned() ? std::ldexp(1, it.getWidth()) - 1
                                                             : std::ldexp(1, it.getWidth() - 1) - 1;
        if (std::trunc(a.lo) < lo || std::trunc(a.hi) > hi)
          return refuse("a cast of [" + num(a.lo) + ", " + num(a.hi) + "] to " +
                        std::to_string(it.getWidth()) + "-bit integers overflows");
        r = {std::trunc(a.lo), std::trunc(a.hi), 0};
        return true;
      })
      .Case<l1::OneHotOp>([&](Operation *) {
        if (!in[0].exact())
          return refuse("one_hot of inexact labels");
        r = {0, 1, 0};
        return true;
      })
      .Case<l1::GatherOp>([&](Operation *) {
        // An index outside the table reads zeros.
        if (!in[1].exact())
          return refuse("gather at inexact indices");
        r = in[0];
        r.lo = std::min(r.lo, 0.0), r.hi = std::max(r.hi, 0.0);
        return true;
      })
      .Case<l1::ScatterAddOp>([&](l1::ScatterAddOp s) {
        // A row sums at most every index's row (all indices equal).
        if (!in[1].exact())
          return refuse("scatter_add at inexact indices");
        double n = double(typeOf(s.getIds()).getNumElements());
        const Bound &a = in[0];
        r.lo = n * std::min(a.lo, 0.0), r.hi = n * std::max(a.hi, 0.0);
        r.err = sumError(n, a);
        return true;
      })
      .Case<l1::RandomOp>([&](Operation *) {
        // u = (integer < 2^24) * 2^-24: exact, for an exact counter.
        if (!in[0].exact() || in[0].lo < 0)
          return refuse("random with an inexact or negative counter");
        r = {0, 1, 0};
        return true;
      })
      .Case<l1::ConstOp>([&](l1::ConstOp c) {
        double v = c.getValue().convertToDouble();
        Type e = typeOf(c.getResult()).getElementType();
        double stored = e.isF32() ? double(float(v)) : v;
        r = {v, v, std::abs(stored - v)};
        return true;
      })
      .Default([&](Operation *) {
        return refuse("the differential fuzzer has no error bound for this op");
      });
  if (!ok)
    return false;
  if (!(r.mag() < m.maxMagnitude) || !(r.err < m.maxMagnitude))
    return refuse("values reach " + num(r.mag()) + " (too near f32 overflow)");
  return true;
}
