//===- Matmul.cpp - Emission of l1.matmul ----------------------------------===//
//
// A rank-2 float matmul is a reduction: result[i, j] is a sequential RANGE
// over k of lhs[i, k] * rhs[k, j], folded by REDUCE add. The host and CUDA
// lowerings recognize this form and tile it (register-blocked on the host,
// mma.sync on the GPU).
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
    if (m.getLhs().getType().getRank() != 2 || m.getRhs().getType().getRank() != 2)
      return "only rank-2 matmuls lower (a RANGE nest over i, j, k)";
    if (!hasFloatElements(m.getResult()))
      return "integer matmul has no lowering";
    return "";
  }
  Value build(KernelBuilder &k, l1::MatmulOp m, ArrayRef<Value> idx) const override {
    Type t = m.getResult().getType().getElementType();
    Value zero = k.constant(t, 0);
    Value kv = k.beginLoop(m.getLhs().getType().getShape()[1]);
    Value a = k.eval(m.getLhs(), {idx[0], kv});
    Value w = k.eval(m.getRhs(), {kv, idx[1]});
    Value p = k.op<l0uop::MulOp>(t, {a, w});
    k.endLoop(kv);
    return l0uop::ReduceOp::create(k.b, k.loc, t, l0uop::ReduceKind::add, p, kv, zero);
  }
};

} // namespace

void synpl::l1tol0::populateMatmulEmitPatterns(EmitPatternSet &patterns) {
  patterns.add<MatmulPattern>();
}
