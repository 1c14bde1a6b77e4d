//===- Reduce.cpp - Emission of reduce_sum, reduce_mean and reduce_max -----===//
//
// A reduction over one axis is a sequential RANGE over that axis inserted
// into the result's index, folded by REDUCE (add, or max from -inf); over
// all axes, one RANGE per axis (the pass first splits a whole rank >= 2
// reduction into one axis at a time, so this runs on rank 1). A mean scales
// the sum by 1 / count. Float elements only.
//
//===----------------------------------------------------------------------===//
#include "../EmitPatterns.h"

#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Dialect/L1/L1Ops.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l1tol0;

namespace {

template <typename OpT> struct ReducePattern : OpEmitPattern<OpT> {
  explicit ReducePattern(MLIRContext *ctx) : OpEmitPattern<OpT>(ctx, OpKind::Reduction) {}
  std::string check(OpT op) const override {
    if (!hasFloatElements(op.getResult()))
      return "integer reductions have no lowering";
    return "";
  }
  Value build(KernelBuilder &k, OpT r, ArrayRef<Value> idx) const override {
    Value in = r.getOperand();
    Type t = r.getResult().getType().getElementType();
    auto inShape = tensorOf(in).getShape();
    constexpr bool isMax = std::is_same_v<OpT, l1::ReduceMaxOp>;
    Value init = isMax ? k.negInf(t) : k.constant(t, 0);
    SmallVector<Value> ranges, sub;
    int64_t count = 1;
    if (std::optional<uint64_t> axis = r.getAxis()) {
      sub.assign(idx.begin(), idx.end());
      Value kv = k.beginLoop(inShape[*axis]);
      ranges.push_back(kv);
      sub.insert(sub.begin() + *axis, kv);
      count = inShape[*axis];
    } else {
      for (int64_t d : inShape) {
        Value kv = k.beginLoop(d);
        ranges.push_back(kv);
        sub.push_back(kv);
        count *= d;
      }
    }
    Value acc = k.eval(in, sub);
    for (Value kv : llvm::reverse(ranges)) {
      k.endLoop(kv);
      acc = l0uop::ReduceOp::create(k.b, k.loc, t,
                                    isMax ? l0uop::ReduceKind::max : l0uop::ReduceKind::add,
                                    acc, kv, init);
    }
    if (ranges.empty())
      acc = isMax ? acc : k.op<l0uop::AddOp>(t, {acc, init});
    if (std::is_same_v<OpT, l1::ReduceMeanOp>)
      acc = k.op<l0uop::MulOp>(t, {acc, k.constant(t, 1.0 / (double)count)});
    return acc;
  }
};

} // namespace

void synpl::l1tol0::populateReduceEmitPatterns(EmitPatternSet &patterns) {
  patterns.add<ReducePattern<l1::ReduceSumOp>, ReducePattern<l1::ReduceMeanOp>,
               ReducePattern<l1::ReduceMaxOp>>();
}
