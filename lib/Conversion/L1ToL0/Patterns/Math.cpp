//===- Math.cpp - Emission of L1's elementwise transcendental ops ----------===//
//
// exp log sqrt reciprocal tanh cos over the spec's transcendental UOps
// (EXP2, LOG2, SQRT, SIN, RECIPROCAL): e^x = 2^(x log2 e), ln x =
// log2(x) ln 2, tanh x = 2 / (1 + 2^(-2x log2 e)) - 1 (saturating to +-1),
// cos x = sin(x + pi/2). Float elements only.
//
//===----------------------------------------------------------------------===//
#include "../EmitPatterns.h"

#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Dialect/L1/L1Ops.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l1tol0;

namespace {

constexpr double kLog2E = 1.4426950408889634;
constexpr double kLn2 = 0.6931471805599453;
constexpr double kHalfPi = 1.5707963267948966;

/// A float-only unary op: `fn(k, element type, x)` builds its value.
template <typename OpT> struct UnaryFloatPattern : OpEmitPattern<OpT> {
  using Fn = Value (*)(KernelBuilder &, Type, Value);
  UnaryFloatPattern(MLIRContext *ctx, Fn fn) : OpEmitPattern<OpT>(ctx, OpKind::Elementwise), fn(fn) {}
  std::string check(OpT op) const override {
    if (!hasFloatElements(op.getResult()))
      return "needs a float element type";
    return OpEmitPattern<OpT>::check(op);
  }
  Value build(KernelBuilder &k, OpT op, ArrayRef<Value> idx) const override {
    return fn(k, op.getResult().getType().getElementType(), k.operand(op, 0, idx));
  }
  Fn fn;
};

struct ExpPattern : UnaryFloatPattern<l1::ExpOp> {
  explicit ExpPattern(MLIRContext *ctx)
      : UnaryFloatPattern(ctx, [](KernelBuilder &k, Type t, Value x) {
          Value s = k.op<l0uop::MulOp>(t, {x, k.constant(t, kLog2E)});
          return k.op<l0uop::Exp2Op>(t, {s});
        }) {}
};

struct LogPattern : UnaryFloatPattern<l1::LogOp> {
  explicit LogPattern(MLIRContext *ctx)
      : UnaryFloatPattern(ctx, [](KernelBuilder &k, Type t, Value x) {
          Value l = k.op<l0uop::Log2Op>(t, {x});
          return k.op<l0uop::MulOp>(t, {l, k.constant(t, kLn2)});
        }) {}
};

struct SqrtPattern : UnaryFloatPattern<l1::SqrtOp> {
  explicit SqrtPattern(MLIRContext *ctx)
      : UnaryFloatPattern(ctx, [](KernelBuilder &k, Type t, Value x) {
          return k.op<l0uop::SqrtOp>(t, {x});
        }) {}
};

struct ReciprocalPattern : UnaryFloatPattern<l1::ReciprocalOp> {
  explicit ReciprocalPattern(MLIRContext *ctx)
      : UnaryFloatPattern(ctx, [](KernelBuilder &k, Type t, Value x) {
          return k.op<l0uop::ReciprocalOp>(t, {x});
        }) {}
};

struct TanhPattern : UnaryFloatPattern<l1::TanhOp> {
  explicit TanhPattern(MLIRContext *ctx)
      : UnaryFloatPattern(ctx, [](KernelBuilder &k, Type t, Value x) {
          Value s = k.op<l0uop::MulOp>(t, {x, k.constant(t, -2 * kLog2E)});
          Value e = k.op<l0uop::Exp2Op>(t, {s});
          Value d = k.op<l0uop::AddOp>(t, {e, k.constant(t, 1)});
          Value r = k.op<l0uop::ReciprocalOp>(t, {d});
          return k.op<l0uop::MulAccOp>(t, {r, k.constant(t, 2), k.constant(t, -1)});
        }) {}
};

struct CosPattern : UnaryFloatPattern<l1::CosOp> {
  explicit CosPattern(MLIRContext *ctx)
      : UnaryFloatPattern(ctx, [](KernelBuilder &k, Type t, Value x) {
          Value s = k.op<l0uop::AddOp>(t, {x, k.constant(t, kHalfPi)});
          return k.op<l0uop::SinOp>(t, {s});
        }) {}
};

} // namespace

void synpl::l1tol0::populateMathEmitPatterns(EmitPatternSet &patterns) {
  patterns.add<ExpPattern, LogPattern, SqrtPattern, ReciprocalPattern, TanhPattern,
               CosPattern>();
}
