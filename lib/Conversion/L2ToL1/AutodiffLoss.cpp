//===- AutodiffLoss.cpp - The L3 loss terms of a training graph -----------===//
//
// The loss half of the backward expansion (GraphBuilder.h): each L3 term
// (cross-entropy against labels or a distribution, fused with the output
// softmax where it can be; norms of the parameters or of a value; a
// reconstruction) is emitted as L1 ops, and its seed d loss / d term starts
// the reverse pass through it.
//
//===----------------------------------------------------------------------===//
#include "GraphBuilder.h"

#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace synpl;
using namespace synpl::l2tol1;
using namespace synpl::l2tol1::detail;

//===----------------------------------------------------------------------===//
// Loss terms
//===----------------------------------------------------------------------===//

Value GraphBuilder::targetRows(Value target, int64_t rows, int64_t classes, bool &integer) {
  Type element = getElementTypeOrSelf(target.getType());
  integer = isa<IntegerType>(element);
  if (integer) {
    // Integer class labels, one per row ([B, 1] -> [B]), one-hot encoded.
    return e.oneHot(e.reshape(target, {rows}), classes);
  }
  Value t = e.reshape(target, {rows, classes});
  return element.isF32() ? t : e.cast(t, e.f32());
}

void GraphBuilder::emitTerm(Term &t) {
  e.setLoc(t.op->getLoc());
  switch (t.kind) {
  case TermKind::CrossEntropyLogits:
  case TermKind::CrossEntropyProbs: {
    // -(1/R) sum_rows sum_c target * log p
    Value logp = t.kind == TermKind::CrossEntropyLogits ? t.softmax->saved[1] : e.log(t.probs);
    Value total = e.sum(e.mul(t.target, logp));
    t.value = e.scale(total, -t.factor / t.rows);
    return;
  }
  case TermKind::NormParams:
  case TermKind::NormValue: {
    // sum |x|^p: the L1 norm for p = 1, the squared L2 norm for p = 2.
    auto powSum = [&](Value x) {
      Value powered;
      if (t.p == 1.0)
        powered = e.abs(x);
      else if (t.p == 2.0)
        powered = e.mul(x, x);
      else
        powered = e.exp(e.scale(e.log(e.abs(x)), t.p));
      return e.sum(powered);
    };
    Value acc;
    if (t.kind == TermKind::NormParams) {
      // A split parameter's rank holds one block: the blocks' sums are
      // added over the ranks, once for all of them.
      Value split;
      for (auto [p, info] : llvm::zip(paramValues, params)) {
        Value s = powSum(p);
        Value &into = info.shard ? split : acc;
        into = into ? e.add(into, s) : s;
      }
      if (split) {
        split = e.allSum(split);
        acc = acc ? e.add(acc, split) : split;
      }
      if (!acc)
        acc = e.cst(0.0);
    } else {
      acc = powSum(t.normed);
    }
    t.value = e.scale(acc, t.factor / t.divisor);
    return;
  }
  case TermKind::Reconstruction: {
    // mean over every element of (decoded - input)^2
    t.diff = e.sub(t.decoded, t.input);
    t.value = e.scale(e.sum(e.mul(t.diff, t.diff)), t.factor / t.divisor);
    return;
  }
  }
}

Value GraphBuilder::seeded(Value v, double c, Seed seed) {
  // Data parallelism: each replica's share of the global batch's gradient.
  v = e.scale(v, c / double(spec.replicas));
  return seed.ind ? e.scale(v, seed.ind) : v;
}

void GraphBuilder::backwardTerm(const Term &t, Seed seed) {
  e.setLoc(t.op->getLoc());
  switch (t.kind) {
  case TermKind::CrossEntropyLogits: {
    // d/dlogits = (p * sum_c target - target) / R: p - onehot for a label
    // in range, and 0 for a row whose label is not (its loss is 0 too).
    Value p2 = t.softmax->saved[2];
    ArrayRef<int64_t> s = Emitter::shape(p2);
    Value pScaled = e.mul(p2, e.rowsBroadcast(e.sum(t.target, 1), s));
    Value d2 = seeded(e.sub(pScaled, t.target), t.factor / t.rows, seed);
    Value logits = t.softmax->inputs[0];
    if (active.contains(logits))
      accumulate(logits, e.reshape(d2, Emitter::shape(logits)));
    return;
  }
  case TermKind::CrossEntropyProbs: {
    if (!active.contains(t.predicted))
      return;
    Value d2 = seeded(e.div(t.target, t.probs), -t.factor / t.rows, seed);
    accumulate(t.predicted, e.reshape(d2, Emitter::shape(t.predicted)));
    return;
  }
  case TermKind::NormParams:
  case TermKind::NormValue: {
    double c = t.factor / t.divisor;
    auto grad = [&](Value x) {
      if (t.p == 1.0) // a subgradient: 0 at x = 0
        return seeded(e.sign(x), c, seed);
      if (t.p == 2.0)
        return seeded(x, 2.0 * c, seed);
      Value mag = e.exp(e.scale(e.log(e.abs(x)), t.p - 1.0));
      return seeded(e.mul(e.sign(x), mag), t.p * c, seed);
    };
    if (t.kind == TermKind::NormParams) {
      for (auto [i, p] : llvm::enumerate(paramValues))
        accumulateParam(static_cast<unsigned>(i), grad(p));
    } else if (active.contains(t.normed)) {
      accumulate(t.normed, grad(t.normed));
    }
    return;
  }
  case TermKind::Reconstruction: {
    double c = 2.0 * t.factor / t.divisor;
    if (active.contains(t.decoded))
      accumulate(t.decoded, seeded(t.diff, c, seed));
    if (active.contains(t.input))
      accumulate(t.input, seeded(t.diff, -c, seed));
    return;
  }
  }
}

void GraphBuilder::accumulate(Value key, Value adjoint) {
  Value &slot = adjoints[key];
  slot = slot ? e.add(slot, adjoint) : adjoint;
}

void GraphBuilder::accumulateParam(unsigned index, Value grad) {
  Value &slot = paramGrads[index];
  slot = slot ? e.add(slot, grad) : grad;
}

