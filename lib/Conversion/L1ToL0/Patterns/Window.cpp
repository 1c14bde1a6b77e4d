//===- Window.cpp - Emission of l1.unfold and l1.fold ----------------------===//
//
// The window ops that make a convolution a matmul (im2col and col2im). Both
// are emitted as kernels of their own (kind Reduction: they read their
// operand at other indices than their result's, from memory): unfold's
// windows are stored, so that the matmul after it reads plain rows and the
// host and GPU lowerings tile it like any other matmul.
//
//  unfold: result[n, o..., c, k...] = x[n, c, o * stride + k - padding], the
//          index clamped into the input and the value replaced by 0 where it
//          fell in the padding (no check where the padding is 0: the window
//          then never leaves the input).
//  fold:   result[n, c, i...] = sum over kernel offsets k of
//          windows[n, (i + padding - k) / stride, c, k] where that division
//          is exact and the window position exists; the offsets are
//          unrolled (a convolution's kernel is small).
//
// Channels last, the same with the channel index last everywhere: windows
// [n, o..., k..., c] and input [n, i..., c].
//
//===----------------------------------------------------------------------===//
#include "../EmitPatterns.h"

#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Dialect/L1/L1Ops.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l1tol0;

namespace {

/// max(lo, min(v, hi)) on indices.
Value clamp(KernelBuilder &k, Value v, int64_t lo, int64_t hi) {
  Type ix = k.b.getIndexType();
  Value negMin = k.op<l0uop::MaxOp>(ix, {k.op<l0uop::NegOp>(ix, {v}), k.index(-hi)});
  return k.op<l0uop::MaxOp>(ix, {k.op<l0uop::NegOp>(ix, {negMin}), k.index(lo)});
}

/// `value` where `ok`, else 0.
Value keepIf(KernelBuilder &k, Value ok, Value value) {
  Type t = value.getType();
  return k.op<l0uop::WhereOp>(t, {ok, value, k.constant(t, 0)});
}

/// a && b on i1.
Value both(KernelBuilder &k, Value a, Value b) {
  if (!a)
    return b;
  return k.op<l0uop::WhereOp>(k.b.getI1Type(), {a, b, k.constant(k.b.getI1Type(), 0)});
}

/// lo <= v (constant lo) on indices.
Value atLeast(KernelBuilder &k, Value v, int64_t lo) {
  Type i1 = k.b.getI1Type();
  Value below = k.op<l0uop::CmpLtOp>(i1, {v, k.index(lo)});
  return k.op<l0uop::WhereOp>(i1, {below, k.constant(i1, 0), k.constant(i1, 1)});
}

/// v < hi (constant hi) on indices.
Value below(KernelBuilder &k, Value v, int64_t hi) {
  return k.op<l0uop::CmpLtOp>(k.b.getI1Type(), {v, k.index(hi)});
}

template <typename OpT> std::string checkFloat(OpT op) {
  if (!hasFloatElements(op.getResult()))
    return "window ops are emitted for float tensors only";
  return "";
}

struct UnfoldPattern : OpEmitPattern<l1::UnfoldOp> {
  explicit UnfoldPattern(MLIRContext *ctx) : OpEmitPattern(ctx, OpKind::Reduction) {}
  std::string check(l1::UnfoldOp op) const override { return checkFloat(op); }
  Value build(KernelBuilder &k, l1::UnfoldOp op, ArrayRef<Value> idx) const override {
    ArrayRef<int64_t> kernel = op.getKernel(), stride = op.getStride(), pad = op.getPadding();
    ArrayRef<int64_t> in = tensorOf(op.getOperand()).getShape();
    size_t s = kernel.size();
    bool last = op.getChannelsLast();
    // Where the windows' kernel offsets and channel are, and the input's
    // spatial dimensions.
    size_t kAt = last ? 1 + s : s + 2, cAt = last ? 1 + 2 * s : s + 1, iAt = last ? 1 : 2;
    Type ix = k.b.getIndexType();
    SmallVector<Value> at{idx[0]};
    if (!last)
      at.push_back(idx[cAt]);
    Value inside;
    for (size_t d = 0; d < s; ++d) {
      // i = o * stride + k - padding
      Value i = k.op<l0uop::MulAccOp>(ix, {idx[1 + d], k.index(stride[d]), idx[kAt + d]});
      if (pad[d] == 0) {
        at.push_back(i);
        continue;
      }
      i = k.op<l0uop::AddOp>(ix, {i, k.index(-pad[d])});
      inside = both(k, inside, both(k, atLeast(k, i, 0), below(k, i, in[iAt + d])));
      at.push_back(clamp(k, i, 0, in[iAt + d] - 1));
    }
    if (last)
      at.push_back(idx[cAt]);
    Value v = k.eval(op.getOperand(), at);
    return inside ? keepIf(k, inside, v) : v;
  }
};

struct FoldPattern : OpEmitPattern<l1::FoldOp> {
  explicit FoldPattern(MLIRContext *ctx) : OpEmitPattern(ctx, OpKind::Reduction) {}
  std::string check(l1::FoldOp op) const override { return checkFloat(op); }
  Value build(KernelBuilder &k, l1::FoldOp op, ArrayRef<Value> idx) const override {
    ArrayRef<int64_t> kernel = op.getKernel(), stride = op.getStride(), pad = op.getPadding();
    ArrayRef<int64_t> windows = tensorOf(op.getOperand()).getShape();
    size_t s = kernel.size();
    bool last = op.getChannelsLast();
    // Where the result's spatial dimensions and channel are.
    size_t iAt = last ? 1 : 2, cAt = last ? 1 + s : 1;
    Type ix = k.b.getIndexType();
    Type t = tensorOf(op.getResult()).getElementType();
    int64_t offsets = 1;
    for (int64_t kd : kernel)
      offsets *= kd;
    Value sum = k.constant(t, 0);
    for (int64_t flat = 0; flat < offsets; ++flat) {
      // The kernel offset of this term, then the window position that put
      // input position i at that offset.
      SmallVector<int64_t> off(s);
      for (size_t d = s, rest = flat; d-- > 0; rest /= kernel[d])
        off[d] = rest % kernel[d];
      SmallVector<Value> at{idx[0]};
      SmallVector<Value> kIdx;
      Value valid;
      for (size_t d = 0; d < s; ++d) {
        int64_t outs = windows[1 + d];
        Value tIdx = idx[iAt + d];
        if (pad[d] != off[d])
          tIdx = k.op<l0uop::AddOp>(ix, {tIdx, k.index(pad[d] - off[d])});
        // i + padding - k ranges over [pad - k, I - 1 + pad - k].
        Value o;
        if (stride[d] == 1) {
          valid = both(k, valid, both(k, atLeast(k, tIdx, 0), below(k, tIdx, outs)));
          o = clamp(k, tIdx, 0, outs - 1);
        } else {
          // i + padding - k <= I - 1 + padding (a 32-bit device index
          // holds it).
          int64_t inD = tensorOf(op.getResult()).getShape()[iAt + d];
          Value nonNeg = clamp(k, tIdx, 0, inD - 1 + pad[d]);
          Value rem = k.op<l0uop::ModOp>(ix, {nonNeg, k.index(stride[d])});
          Value exact = k.op<l0uop::CmpNeOp>(k.b.getI1Type(), {rem, k.index(0)});
          exact = k.op<l0uop::WhereOp>(k.b.getI1Type(),
                                       {exact, k.constant(k.b.getI1Type(), 0),
                                        k.constant(k.b.getI1Type(), 1)});
          Value q = k.op<l0uop::DivOp>(ix, {nonNeg, k.index(stride[d])});
          valid = both(k, valid, both(k, atLeast(k, tIdx, 0), both(k, exact, below(k, q, outs))));
          o = clamp(k, q, 0, outs - 1);
        }
        at.push_back(o);
        kIdx.push_back(k.index(off[d]));
      }
      if (!last)
        at.push_back(idx[cAt]);
      at.append(kIdx.begin(), kIdx.end());
      if (last)
        at.push_back(idx[cAt]);
      Value term = k.eval(op.getOperand(), at);
      sum = k.op<l0uop::AddOp>(t, {sum, valid ? keepIf(k, valid, term) : term});
    }
    return sum;
  }
};

} // namespace

void synpl::l1tol0::populateWindowEmitPatterns(EmitPatternSet &patterns) {
  patterns.add<UnfoldPattern, FoldPattern>();
}
