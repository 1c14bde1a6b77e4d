//===- Logic.cpp - Emission of comparisons, selection and conversions ------===//
//
// cmp (eq ne lt le gt ge over CMPLT, CMPNE and WHERE), select (WHERE), cast
// (CAST; i1 through WHERE and CMPNE), and one_hot (the class index compared
// with the label read at the leading indices).
//
//===----------------------------------------------------------------------===//
#include "../EmitPatterns.h"

#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Dialect/L1/L1Ops.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l1tol0;

namespace {

struct CmpPattern : OpEmitPattern<l1::CmpOp> {
  explicit CmpPattern(MLIRContext *ctx) : OpEmitPattern(ctx, OpKind::Elementwise) {}
  Value build(KernelBuilder &k, l1::CmpOp c, ArrayRef<Value> idx) const override {
    Type i1 = k.b.getI1Type();
    Value l = k.operand(c, 0, idx), r = k.operand(c, 1, idx);
    Value f = k.constant(i1, 0), tr = k.constant(i1, 1);
    switch (c.getPredicate()) {
    case l1::CmpPredicate::lt:
      return k.op<l0uop::CmpLtOp>(i1, {l, r});
    case l1::CmpPredicate::gt:
      return k.op<l0uop::CmpLtOp>(i1, {r, l});
    case l1::CmpPredicate::ne:
      return k.op<l0uop::CmpNeOp>(i1, {l, r});
    case l1::CmpPredicate::eq:
      return k.op<l0uop::WhereOp>(i1, {k.op<l0uop::CmpNeOp>(i1, {l, r}), f, tr});
    case l1::CmpPredicate::le:
      return k.op<l0uop::WhereOp>(i1, {k.op<l0uop::CmpLtOp>(i1, {r, l}), f, tr});
    case l1::CmpPredicate::ge:
      return k.op<l0uop::WhereOp>(i1, {k.op<l0uop::CmpLtOp>(i1, {l, r}), f, tr});
    }
    llvm_unreachable("every predicate is handled");
  }
};

struct SelectPattern : OpEmitPattern<l1::SelectOp> {
  explicit SelectPattern(MLIRContext *ctx) : OpEmitPattern(ctx, OpKind::Elementwise) {}
  Value build(KernelBuilder &k, l1::SelectOp op, ArrayRef<Value> idx) const override {
    return k.op<l0uop::WhereOp>(op.getResult().getType().getElementType(),
                                {k.operand(op, 0, idx), k.operand(op, 1, idx),
                                 k.operand(op, 2, idx)});
  }
};

struct CastPattern : OpEmitPattern<l1::CastOp> {
  explicit CastPattern(MLIRContext *ctx) : OpEmitPattern(ctx, OpKind::Elementwise) {}
  Value build(KernelBuilder &k, l1::CastOp op, ArrayRef<Value> idx) const override {
    Type t = op.getResult().getType().getElementType();
    Value x = k.operand(op, 0, idx);
    Type from = x.getType();
    if (from == t)
      return x;
    if (from.isInteger(1))
      return k.op<l0uop::WhereOp>(t, {x, k.constant(t, 1), k.constant(t, 0)});
    if (t.isInteger(1))
      return k.op<l0uop::CmpNeOp>(t, {x, k.constant(from, 0)});
    return l0uop::CastOp::create(k.b, k.loc, t, x);
  }
};

struct OneHotPattern : OpEmitPattern<l1::OneHotOp> {
  explicit OneHotPattern(MLIRContext *ctx) : OpEmitPattern(ctx, OpKind::Elementwise) {}
  // The labels have the leading dimensions of the result; the verifier
  // checks them.
  std::string check(l1::OneHotOp) const override { return ""; }
  Value build(KernelBuilder &k, l1::OneHotOp oh, ArrayRef<Value> idx) const override {
    // result[..., c] = (labels[...] == c)
    Type t = oh.getResult().getType().getElementType();
    Value lab = k.eval(oh.getLabels(), idx.drop_back());
    Value labT = lab.getType() == t ? lab : (Value)l0uop::CastOp::create(k.b, k.loc, t, lab);
    Value cT = l0uop::CastOp::create(k.b, k.loc, t, idx.back());
    Value ne = k.op<l0uop::CmpNeOp>(k.b.getI1Type(), {labT, cT});
    return k.op<l0uop::WhereOp>(t, {ne, k.constant(t, 0), k.constant(t, 1)});
  }
};

} // namespace

void synpl::l1tol0::populateLogicEmitPatterns(EmitPatternSet &patterns) {
  patterns.add<CmpPattern, SelectPattern, CastPattern, OneHotPattern>();
}
