//===- Movement.cpp - Emission of broadcast, transpose and reshape ---------===//
//
// Movement ops are metadata (the spec's "free" movement): the value of the
// result at an index is the operand's value at another index, so they emit
// index arithmetic only and never open a kernel. A broadcast reads a
// widened unit dimension at 0; a transpose permutes the indices; a reshape
// linearizes them when its operand is a buffer stored flat, and otherwise
// maps each run of merged or split dimensions with DIV and MOD, so any
// chain of them lowers.
//
//===----------------------------------------------------------------------===//
#include "../EmitPatterns.h"

#include "synpl/Dialect/L1/L1Ops.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l1tol0;

namespace {

struct BroadcastPattern : OpEmitPattern<l1::BroadcastOp> {
  explicit BroadcastPattern(MLIRContext *ctx) : OpEmitPattern(ctx, OpKind::Movement) {}
  Value build(KernelBuilder &k, l1::BroadcastOp bc, ArrayRef<Value> idx) const override {
    auto in = bc.getOperand().getType().getShape();
    auto out = bc.getResult().getType().getShape();
    SmallVector<Value> sub;
    for (size_t i = 0; i < in.size(); ++i) {
      int64_t d = bc.getDims() ? (*bc.getDims())[i] : (int64_t)(i + out.size() - in.size());
      sub.push_back(in[i] == 1 && out[d] != 1 ? k.index(0) : idx[d]);
    }
    return k.eval(bc.getOperand(), sub);
  }
};

struct TransposePattern : OpEmitPattern<l1::TransposeOp> {
  explicit TransposePattern(MLIRContext *ctx) : OpEmitPattern(ctx, OpKind::Movement) {}
  Value build(KernelBuilder &k, l1::TransposeOp tr, ArrayRef<Value> idx) const override {
    size_t r = idx.size();
    SmallVector<Value> sub(r);
    for (size_t i = 0; i < r; ++i) {
      int64_t p = tr.getPerm() ? (*tr.getPerm())[i] : (int64_t)(r - 1 - i);
      sub[p] = idx[i];
    }
    return k.eval(tr.getOperand(), sub);
  }
};

struct ReshapePattern : OpEmitPattern<l1::ReshapeOp> {
  explicit ReshapePattern(MLIRContext *ctx) : OpEmitPattern(ctx, OpKind::Movement) {}
  Value build(KernelBuilder &k, l1::ReshapeOp rs, ArrayRef<Value> idx) const override {
    Value src = rs.getOperand();
    auto out = rs.getResult().getType().getShape();
    if (k.takesFlatIndex(src))
      return k.eval(src, {k.linearize(idx, out)}, /*flatIdx=*/true);
    return k.eval(src, k.reshapeIndex(idx, out, tensorOf(src).getShape()));
  }
};

} // namespace

void synpl::l1tol0::populateMovementEmitPatterns(EmitPatternSet &patterns) {
  patterns.add<BroadcastPattern, TransposePattern, ReshapePattern>();
}
