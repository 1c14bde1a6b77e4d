//===- Random.cpp - Emission of l1.random -----------------------------------===//
//
// `l1.random` is elementwise: element i of the draw at counter t is
// Squares32(t * 2^32 + i, key) (synpl/Support/CounterRng.h), a function of
// the element's own index, so it fuses into its consumer (dropout's mask is
// never stored) and every lane computes its draw independently. The key is
// computed here, at compile time; the rounds are ui64 UOps:
//
//   x = ctr * key; y = x; z = y + key
//   x = swap(x * x + y); x = swap(x * x + z); x = swap(x * x + y)
//   bits = (x * x + z) div 2^32
//   u = f32(bits div 2^8) * 2^-24
//
// with swap(v) = MULACC(v mod 2^32, 2^32, v div 2^32): the halves exchanged
// with arithmetic alone (ui64 multiplication wraps, and the low half of
// (v mod 2^32) * 2^32 is zero, so the addition is the bitwise or). The
// targets turn the power-of-two DIV and MOD into shifts and masks.
//
//===----------------------------------------------------------------------===//
#include "../EmitPatterns.h"

#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Support/CounterRng.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l1tol0;

namespace {

struct RandomPattern : OpEmitPattern<l1::RandomOp> {
  explicit RandomPattern(MLIRContext *ctx) : OpEmitPattern(ctx, OpKind::Elementwise) {}

  std::string check(l1::RandomOp op) const override {
    if (!hasFloatElements(op.getResult()))
      return "draws f32 values";
    return OpEmitPattern::check(op);
  }

  Value build(KernelBuilder &k, l1::RandomOp op, ArrayRef<Value> idx) const override {
    OpBuilder &b = k.b;
    Type u64 = b.getIntegerType(64, /*isSigned=*/false);
    Type f32 = op.getResult().getType().getElementType();
    auto c = [&](uint64_t v) {
      return l0uop::ConstOp::create(b, k.loc, u64, IntegerAttr::get(u64, APInt(64, v)))
          .getResult();
    };
    auto mul = [&](Value x, Value y) { return k.op<l0uop::MulOp>(u64, {x, y}); };
    auto add = [&](Value x, Value y) { return k.op<l0uop::AddOp>(u64, {x, y}); };
    auto mulAcc = [&](Value x, Value y, Value z) {
      return k.op<l0uop::MulAccOp>(u64, {x, y, z});
    };
    Value half = c(uint64_t(1) << 32);
    auto swap = [&](Value v) {
      Value lo = k.op<l0uop::ModOp>(u64, {v, half});
      Value hi = k.op<l0uop::DivOp>(u64, {v, half});
      return mulAcc(lo, half, hi);
    };

    // The counter: the step (a non-negative integral f32) in the high half,
    // the element's row-major position in the low half.
    Value step = k.op<l0uop::CastOp>(u64, {k.operand(op, 0, idx)});
    Value flat = k.linearize(idx, op.getResult().getType().getShape());
    Value ctr = mulAcc(step, half, k.op<l0uop::CastOp>(u64, {flat}));

    uint64_t key = rng::squaresKey(uint64_t(op.getSeed()), uint64_t(op.getStream()));
    Value keyV = c(key);
    Value x = mul(ctr, keyV), y = x, z = add(y, keyV);
    x = swap(mulAcc(x, x, y));
    x = swap(mulAcc(x, x, z));
    x = swap(mulAcc(x, x, y));
    Value bits24 = k.op<l0uop::DivOp>(u64, {mulAcc(x, x, z), c(uint64_t(1) << 40)});
    Value u = k.op<l0uop::CastOp>(f32, {bits24});
    return k.op<l0uop::MulOp>(f32, {u, k.constant(f32, 0x1p-24)});
  }
};

} // namespace

void synpl::l1tol0::populateRandomEmitPatterns(EmitPatternSet &patterns) {
  patterns.add<RandomPattern>();
}
