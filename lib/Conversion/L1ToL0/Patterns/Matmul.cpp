//===- Matmul.cpp - Emission of l1.matmul ----------------------------------===//
//
// A float matmul is a reduction: result[b..., i, j] is a sequential RANGE
// over k of lhs[b..., i, k] * rhs[b..., k, j], folded by REDUCE add. The
// host and CUDA lowerings recognize this form and tile it (register-blocked
// on the host, mma.sync on the GPU). A batched matmul's kernel runs its
// rows (b..., i) as one range (Group::flatRows), so the batch indices are
// per-row values to those tilings.
//
//===----------------------------------------------------------------------===//
#include "../EmitPatterns.h"

#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Dialect/L1/L1Ops.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l1tol0;

namespace {

struct MatmulPattern : OpEmitPattern<l1::MatmulOp> {
  explicit MatmulPattern(MLIRContext *ctx) : OpEmitPattern(ctx, OpKind::Reduction) {}
  std::string check(l1::MatmulOp m) const override {
    if (!hasFloatElements(m.getResult()))
      return "integer matmul has no lowering";
    return "";
  }
  Value build(KernelBuilder &k, l1::MatmulOp m, ArrayRef<Value> idx) const override {
    Type t = m.getResult().getType().getElementType();
    Value zero = k.constant(t, 0);
    size_t r = idx.size();
    Value kv = k.beginLoop(m.getLhs().getType().getShape()[r - 1]);
    SmallVector<Value> ai(idx.drop_back(2)), wi(idx.drop_back(2));
    ai.append({idx[r - 2], kv});
    wi.append({kv, idx[r - 1]});
    Value a = k.eval(m.getLhs(), ai);
    Value w = k.eval(m.getRhs(), wi);
    Value p = k.op<l0uop::MulOp>(t, {a, w});
    k.endLoop(kv);
    return l0uop::ReduceOp::create(k.b, k.loc, t, l0uop::ReduceKind::add, p, kv, zero);
  }
};

} // namespace

void synpl::l1tol0::populateMatmulEmitPatterns(EmitPatternSet &patterns) {
  patterns.add<MatmulPattern>();
}
