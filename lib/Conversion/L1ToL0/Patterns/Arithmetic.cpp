//===- Arithmetic.cpp - Emission of L1's elementwise arithmetic ------------===//
//
// add sub mul scale div max min neg abs sign: one UOp expression per element
// of the result, over the operands read at the same index (a one-element
// operand at its only element). Subtraction, division, minimum and absolute
// value are built from the spec's UOps (NEG, RECIPROCAL, MAX).
//
//===----------------------------------------------------------------------===//
#include "../EmitPatterns.h"

#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Dialect/L1/L1Ops.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l1tol0;

namespace {

/// An elementwise op of one UOp over its operands in order.
template <typename OpT, typename UOpT> struct DirectPattern : OpEmitPattern<OpT> {
  explicit DirectPattern(MLIRContext *ctx) : OpEmitPattern<OpT>(ctx, OpKind::Elementwise) {}
  Value build(KernelBuilder &k, OpT op, ArrayRef<Value> idx) const override {
    SmallVector<Value> args;
    for (unsigned i = 0; i < op->getNumOperands(); ++i)
      args.push_back(k.operand(op, i, idx));
    return k.op<UOpT>(op.getResult().getType().getElementType(), args);
  }
};

struct SubPattern : OpEmitPattern<l1::SubOp> {
  explicit SubPattern(MLIRContext *ctx) : OpEmitPattern(ctx, OpKind::Elementwise) {}
  Value build(KernelBuilder &k, l1::SubOp op, ArrayRef<Value> idx) const override {
    Type t = op.getResult().getType().getElementType();
    Value n = k.op<l0uop::NegOp>(t, {k.operand(op, 1, idx)});
    return k.op<l0uop::AddOp>(t, {k.operand(op, 0, idx), n});
  }
};

struct DivPattern : OpEmitPattern<l1::DivOp> {
  explicit DivPattern(MLIRContext *ctx) : OpEmitPattern(ctx, OpKind::Elementwise) {}
  std::string check(l1::DivOp op) const override {
    if (!hasFloatElements(op.getResult()))
      return "needs a float element type";
    return OpEmitPattern::check(op);
  }
  Value build(KernelBuilder &k, l1::DivOp op, ArrayRef<Value> idx) const override {
    Type t = op.getResult().getType().getElementType();
    Value r = k.op<l0uop::ReciprocalOp>(t, {k.operand(op, 1, idx)});
    return k.op<l0uop::MulOp>(t, {k.operand(op, 0, idx), r});
  }
};

struct MinPattern : OpEmitPattern<l1::MinOp> {
  explicit MinPattern(MLIRContext *ctx) : OpEmitPattern(ctx, OpKind::Elementwise) {}
  Value build(KernelBuilder &k, l1::MinOp op, ArrayRef<Value> idx) const override {
    // min(a, b) = -max(-a, -b)
    Type t = op.getResult().getType().getElementType();
    Value a = k.op<l0uop::NegOp>(t, {k.operand(op, 0, idx)});
    Value c = k.op<l0uop::NegOp>(t, {k.operand(op, 1, idx)});
    Value m = k.op<l0uop::MaxOp>(t, {a, c});
    return k.op<l0uop::NegOp>(t, {m});
  }
};

struct AbsPattern : OpEmitPattern<l1::AbsOp> {
  explicit AbsPattern(MLIRContext *ctx) : OpEmitPattern(ctx, OpKind::Elementwise) {}
  Value build(KernelBuilder &k, l1::AbsOp op, ArrayRef<Value> idx) const override {
    Type t = op.getResult().getType().getElementType();
    Value x = k.operand(op, 0, idx);
    Value n = k.op<l0uop::NegOp>(t, {x});
    return k.op<l0uop::MaxOp>(t, {x, n});
  }
};

struct SignPattern : OpEmitPattern<l1::SignOp> {
  explicit SignPattern(MLIRContext *ctx) : OpEmitPattern(ctx, OpKind::Elementwise) {}
  Value build(KernelBuilder &k, l1::SignOp op, ArrayRef<Value> idx) const override {
    // (0 < x) - (x < 0): 0 at 0 (and for NaN).
    Type t = op.getResult().getType().getElementType();
    Value x = k.operand(op, 0, idx);
    Value zero = k.constant(t, 0), one = k.constant(t, 1), m1 = k.constant(t, -1);
    Type i1 = k.b.getI1Type();
    Value pos = k.op<l0uop::CmpLtOp>(i1, {zero, x});
    Value neg = k.op<l0uop::CmpLtOp>(i1, {x, zero});
    Value negOrZero = k.op<l0uop::WhereOp>(t, {neg, m1, zero});
    return k.op<l0uop::WhereOp>(t, {pos, one, negOrZero});
  }
};

} // namespace

void synpl::l1tol0::populateArithmeticEmitPatterns(EmitPatternSet &patterns) {
  patterns.add<DirectPattern<l1::AddOp, l0uop::AddOp>, DirectPattern<l1::MulOp, l0uop::MulOp>,
               DirectPattern<l1::ScaleOp, l0uop::MulOp>, DirectPattern<l1::MaxOp, l0uop::MaxOp>,
               DirectPattern<l1::NegOp, l0uop::NegOp>, SubPattern, DivPattern, MinPattern,
               AbsPattern, SignPattern>();
}
