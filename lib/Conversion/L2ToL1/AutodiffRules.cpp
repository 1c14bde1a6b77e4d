//===- AutodiffRules.cpp - Forward and VJP rules of the l2 layers --------===//
//
// One forward rule and one vector-Jacobian product per l2 layer, written as
// l1 tensor ops. Row-wise operations (norms, softmax) and linears work on
// 2-D [rows, features] views of their operands (l1.reshape is metadata
// only), so every rule covers any leading (batch, time, ...) dimensions.
// docs/autodiff.md states each rule's mathematics.
//
//===----------------------------------------------------------------------===//
#include "AutodiffRules.h"
#include "synpl/Analysis/Shapes.h"

#include "synpl/Dialect/L2/L2Ops.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace synpl;
using namespace synpl::l2tol1::detail;

//===----------------------------------------------------------------------===//
// Emitter
//===----------------------------------------------------------------------===//

Emitter::Emitter(OpBuilder &builder)
    : b(builder), loc(builder.getUnknownLoc()), f32Type(builder.getF32Type()) {}

RankedTensorType Emitter::type(ArrayRef<int64_t> shape) const {
  return RankedTensorType::get(shape, f32Type);
}
RankedTensorType Emitter::type(ArrayRef<int64_t> shape, Type element) const {
  return RankedTensorType::get(shape, element);
}
ArrayRef<int64_t> Emitter::shape(Value v) {
  return llvm::cast<RankedTensorType>(v.getType()).getShape();
}
int64_t Emitter::numel(Value v) {
  return llvm::cast<RankedTensorType>(v.getType()).getNumElements();
}

Value Emitter::cst(double value, ArrayRef<int64_t> shape) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  std::string key;
  for (int64_t d : shape)
    key += std::to_string(d) + "x";
  Value &slot = constants[{bits, key}];
  if (!slot)
    slot = create<l1::ConstOp>(type(shape), b.getF64FloatAttr(value));
  return slot;
}

Value Emitter::add(Value x, Value y) { return create<l1::AddOp>(x.getType(), x, y); }
Value Emitter::sub(Value x, Value y) { return create<l1::SubOp>(x.getType(), x, y); }
Value Emitter::mul(Value x, Value y) { return create<l1::MulOp>(x.getType(), x, y); }
Value Emitter::div(Value x, Value y) { return create<l1::DivOp>(x.getType(), x, y); }
Value Emitter::max(Value x, Value y) { return create<l1::MaxOp>(x.getType(), x, y); }
Value Emitter::exp(Value x) { return create<l1::ExpOp>(x.getType(), x); }
Value Emitter::log(Value x) { return create<l1::LogOp>(x.getType(), x); }
Value Emitter::sqrt(Value x) { return create<l1::SqrtOp>(x.getType(), x); }
Value Emitter::reciprocal(Value x) { return create<l1::ReciprocalOp>(x.getType(), x); }
Value Emitter::tanh(Value x) { return create<l1::TanhOp>(x.getType(), x); }
Value Emitter::abs(Value x) { return create<l1::AbsOp>(x.getType(), x); }
Value Emitter::sign(Value x) { return create<l1::SignOp>(x.getType(), x); }

Value Emitter::scale(Value x, double c) {
  if (c == 1.0)
    return x;
  return scale(x, cst(c));
}
Value Emitter::scale(Value x, Value s) { return create<l1::ScaleOp>(x.getType(), x, s); }

Value Emitter::matmul(Value x, Value y) {
  // [b..., m, k] x [b..., k, n] -> [b..., m, n] (rank 2: no batch).
  SmallVector<int64_t, 4> s(shape(x).drop_back());
  s.push_back(shape(y).back());
  return create<l1::MatmulOp>(type(s), x, y);
}

Value Emitter::transpose(Value x) {
  SmallVector<int64_t, 4> s(llvm::reverse(shape(x)));
  return create<l1::TransposeOp>(type(s, getElementTypeOrSelf(x.getType())), x,
                                 DenseI64ArrayAttr());
}

Value Emitter::permute(Value x, ArrayRef<int64_t> perm) {
  SmallVector<int64_t, 4> s;
  for (int64_t p : perm)
    s.push_back(shape(x)[p]);
  return create<l1::TransposeOp>(type(s, getElementTypeOrSelf(x.getType())), x,
                                 b.getDenseI64ArrayAttr(perm));
}

Value Emitter::broadcast(Value x, ArrayRef<int64_t> to, std::optional<ArrayRef<int64_t>> dims) {
  if (!dims && shape(x) == to)
    return x;
  DenseI64ArrayAttr dimsAttr = dims ? b.getDenseI64ArrayAttr(*dims) : DenseI64ArrayAttr();
  return create<l1::BroadcastOp>(type(to, getElementTypeOrSelf(x.getType())), x, dimsAttr);
}

Value Emitter::reshape(Value x, ArrayRef<int64_t> to) {
  if (shape(x) == to)
    return x;
  return create<l1::ReshapeOp>(type(to, getElementTypeOrSelf(x.getType())), x);
}

Value Emitter::sum(Value x, std::optional<int64_t> axis) {
  SmallVector<int64_t, 4> s;
  if (axis) {
    s.assign(shape(x).begin(), shape(x).end());
    s.erase(s.begin() + *axis);
  }
  return create<l1::ReduceSumOp>(type(s), x, axis ? b.getI64IntegerAttr(*axis) : IntegerAttr());
}

Value Emitter::rowMax(Value x, int64_t axis) {
  SmallVector<int64_t, 4> s(shape(x));
  s.erase(s.begin() + axis);
  return create<l1::ReduceMaxOp>(type(s), x, b.getI64IntegerAttr(axis));
}

Value Emitter::cmp(l1::CmpPredicate predicate, Value x, Value y) {
  return create<l1::CmpOp>(type(shape(x), b.getI1Type()), predicate, x, y);
}

Value Emitter::select(Value cond, Value x, Value y) {
  return create<l1::SelectOp>(x.getType(), cond, x, y);
}

Value Emitter::cast(Value x, Type element) {
  return create<l1::CastOp>(type(shape(x), element), x);
}

Value Emitter::oneHot(Value labels, int64_t classes) {
  SmallVector<int64_t, 4> s(shape(labels));
  s.push_back(classes);
  return create<l1::OneHotOp>(type(s), labels, static_cast<uint64_t>(classes));
}

Value Emitter::gather(Value table, Value ids) {
  SmallVector<int64_t, 4> s(shape(ids));
  s.push_back(shape(table).back());
  return create<l1::GatherOp>(type(s), table, ids);
}

Value Emitter::allGather(Value x, int64_t axis, int64_t ranks) {
  SmallVector<int64_t, 4> s(shape(x));
  s[axis] *= ranks;
  return create<l1::AllGatherOp>(type(s), x, static_cast<uint64_t>(axis));
}

Value Emitter::allSum(Value x) { return create<l1::AllSumOp>(x.getType(), x); }

Value Emitter::blockSlice(Value x, Value index, int64_t axis, int64_t ranks) {
  SmallVector<int64_t, 4> s(shape(x));
  s[axis] /= ranks;
  return create<l1::BlockSliceOp>(type(s), x, index, static_cast<uint64_t>(axis));
}

Value Emitter::scatterAdd(Value src, Value ids, int64_t rows) {
  return create<l1::ScatterAddOp>(type({rows, shape(src).back()}), src, ids);
}

Value Emitter::random(Value counter, int64_t seed, int64_t stream, ArrayRef<int64_t> s) {
  return create<l1::RandomOp>(type(s), counter, seed, stream);
}

Value Emitter::unfold(Value x, ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride,
                      ArrayRef<int64_t> padding, bool channelsLast) {
  // Called for a verified l2.conv, whose type inference checked that its
  // kernel fits the input: the windows exist.
  shapes::ShapeResult s = shapes::unfoldShape(shape(x), kernel, stride, padding, channelsLast);
  return create<l1::UnfoldOp>(type(s.shape(), getElementTypeOrSelf(x.getType())), x,
                              b.getDenseI64ArrayAttr(kernel), b.getDenseI64ArrayAttr(stride),
                              b.getDenseI64ArrayAttr(padding), channelsLast);
}

Value Emitter::fold(Value windows, ArrayRef<int64_t> to, ArrayRef<int64_t> kernel,
                    ArrayRef<int64_t> stride, ArrayRef<int64_t> padding, bool channelsLast) {
  return create<l1::FoldOp>(type(to, getElementTypeOrSelf(windows.getType())), windows,
                            b.getDenseI64ArrayAttr(kernel), b.getDenseI64ArrayAttr(stride),
                            b.getDenseI64ArrayAttr(padding), channelsLast);
}

Value Emitter::unitRow(int64_t index, int64_t n) {
  Value &slot = unitRows[{index, n}];
  if (!slot) {
    Value id = create<l1::ConstOp>(type({1}, b.getI32Type()),
                                   b.getF64FloatAttr(static_cast<double>(index)));
    slot = oneHot(id, n);
  }
  return slot;
}

Value Emitter::iota(int64_t n) {
  if (auto it = iotas.find(n); it != iotas.end())
    return it->second;
  Value result;
  int64_t p = 2;
  while (p * p <= n && n % p != 0)
    ++p;
  if (n == 1) {
    result = cst(0.0, {1});
  } else if (p * p > n) { // n is prime: sum_t t * e_t
    Value acc;
    for (int64_t t = 1; t < n; ++t) {
      Value term = scale(unitRow(t, n), static_cast<double>(t));
      acc = acc ? add(acc, term) : term;
    }
    result = reshape(acc, {n});
  } else { // n = p * q: index = i * q + j on a [p, q] grid
    int64_t q = n / p;
    Value hi = scale(broadcast(iota(p), {p, q}, ArrayRef<int64_t>{0}), static_cast<double>(q));
    Value lo = broadcast(iota(q), {p, q}, ArrayRef<int64_t>{1});
    result = reshape(add(hi, lo), {n});
  }
  iotas[n] = result;
  return result;
}

Value Emitter::windowRead(SymbolRefAttr window, StringRef field, ArrayRef<int64_t> s) {
  return create<l1::WindowReadOp>(type(s), window, field);
}

//===----------------------------------------------------------------------===//
// Shared pieces
//===----------------------------------------------------------------------===//

namespace {

/// [d0, ..., dk, n] -> [d0 * ... * dk, n].
SmallVector<int64_t, 2> rows2d(ArrayRef<int64_t> shape) {
  int64_t rows = 1;
  for (int64_t d : shape.drop_back())
    rows *= d;
  return {rows, shape.empty() ? 1 : shape.back()};
}

// GELU, tanh form: 0.5 x (1 + tanh(k (x + c x^3))).
const double kGeluK = std::sqrt(2.0 / M_PI);
constexpr double kGeluC = 0.044715;

/// The rows of `u` [R, m] normalized: (u - mean) / sqrt(var + eps) when
/// `center`, u / sqrt(mean(u^2) + eps) otherwise (rms). Saves xhat and the
/// broadcast reciprocal standard deviation.
std::pair<Value, Value> normalizeRows(Emitter &e, Value u, bool center) {
  ArrayRef<int64_t> s = Emitter::shape(u);
  Value invM = e.cst(1.0 / static_cast<double>(s[1]));
  Value d = u;
  if (center) {
    Value mu = e.scale(e.sum(u, 1), invM);
    d = e.sub(u, e.rowsBroadcast(mu, s));
  }
  Value var = e.scale(e.sum(e.mul(d, d), 1), invM);
  Value ve = e.add(var, e.cst(kNormEps, {s[0]}));
  Value rstd = e.reciprocal(e.sqrt(ve));
  Value rstdB = e.rowsBroadcast(rstd, s);
  return {e.mul(d, rstdB), rstdB};
}

/// d loss / d u of normalizeRows, from d loss / d xhat.
Value normalizeRowsGrad(Emitter &e, Value dxhat, Value xhat, Value rstdB, bool center) {
  ArrayRef<int64_t> s = Emitter::shape(dxhat);
  Value invM = e.cst(1.0 / static_cast<double>(s[1]));
  Value m1B;
  if (center)
    m1B = e.rowsBroadcast(e.scale(e.sum(dxhat, 1), invM), s);
  Value m2 = e.scale(e.sum(e.mul(dxhat, xhat), 1), invM);
  Value proj = e.mul(xhat, e.rowsBroadcast(m2, s));
  Value c = center ? e.sub(dxhat, m1B) : dxhat;
  return e.mul(e.sub(c, proj), rstdB);
}

/// Sums `x` over every dimension but the norm's channel dimension.
Value sumToChannels(Emitter &e, Value x, bool channelIsDim1) {
  int64_t rank = static_cast<int64_t>(Emitter::shape(x).size());
  if (channelIsDim1) {
    for (int64_t axis = rank - 1; axis >= 2; --axis)
      x = e.sum(x, axis);
    return rank >= 2 ? e.sum(x, 0) : x;
  }
  for (int64_t i = 0; i + 1 < rank; ++i)
    x = e.sum(x, 0);
  return x;
}

/// The 2-D view a norm normalizes: [rows, C] (layer, rms) or
/// [N * groups, C / groups * spatial] (group).
SmallVector<int64_t, 2> normView(l2::NormOp op, ArrayRef<int64_t> shape) {
  if (op.getKind() != l2::NormKind::group)
    return rows2d(shape);
  int64_t groups = static_cast<int64_t>(op.getGroups().value_or(1));
  int64_t n = shape[0], rest = 1;
  for (int64_t d : shape.drop_front())
    rest *= d;
  return {n * groups, rest / groups};
}

/// The windows of a non-overlapping pool as their own dimensions:
/// [N, C, L] -> [N, C, L/k, k] and [N, C, H, W] -> [N, C, H/k, k, W/k, k]
/// (row-major, so a reshape), the window axes (reduced last-first) and the
/// broadcast dims that map the pooled [N, C, ...] back onto the view.
struct PoolView {
  SmallVector<int64_t, 6> shape;
  SmallVector<int64_t, 2> windowAxes;
  SmallVector<int64_t, 4> outDims;
};
PoolView poolView(ArrayRef<int64_t> in, int64_t k, bool channelsLast) {
  PoolView v;
  v.shape = {in[0]};
  v.outDims = {0};
  if (!channelsLast) {
    v.shape.push_back(in[1]);
    v.outDims.push_back(1);
  }
  for (int64_t d : channelsLast ? in.drop_front().drop_back() : in.drop_front(2)) {
    v.outDims.push_back(static_cast<int64_t>(v.shape.size()));
    v.shape.push_back(d / k);
    v.windowAxes.insert(v.windowAxes.begin(), static_cast<int64_t>(v.shape.size()));
    v.shape.push_back(k);
  }
  if (channelsLast) {
    v.outDims.push_back(static_cast<int64_t>(v.shape.size()));
    v.shape.push_back(in.back());
  }
  return v;
}

/// The permutation that moves the channels of a rank-`rank` tensor from
/// last to second ([N, I..., C] -> [N, C, I...]), and back.
SmallVector<int64_t, 5> toChannelsFirst(int64_t rank) {
  SmallVector<int64_t, 5> perm{0, rank - 1};
  for (int64_t d = 1; d < rank - 1; ++d)
    perm.push_back(d);
  return perm;
}
SmallVector<int64_t, 5> toChannelsLast(int64_t rank) {
  SmallVector<int64_t, 5> perm{0};
  for (int64_t d = 2; d < rank; ++d)
    perm.push_back(d);
  perm.push_back(1);
  return perm;
}

/// The shape the layer's type gives its operand `i` (channels first).
ArrayRef<int64_t> declaredShape(Operation *op, unsigned i) {
  return cast<RankedTensorType>(op->getOperand(i).getType()).getShape();
}

/// Multi-head self-attention as batched matmuls: Q, K, V of shape
/// [N, T, h, e] are seen per example and head as [N, h, T, e] (a
/// transpose), the scores are [N, h, T(i), T(j)], softmax runs over the keys
/// j (the last axis), and the values come back as [N, T, h, e].
struct AttnDims {
  int64_t n, t, d, h, e;
  SmallVector<int64_t, 4> scores() const { return {n, h, t, t}; }
  SmallVector<int64_t, 4> heads() const { return {n, t, h, e}; }
  SmallVector<int64_t, 2> rows() const { return {n * t, d}; }
};
AttnDims attnDims(l2::AttnOp a, ArrayRef<int64_t> in) {
  int64_t h = static_cast<int64_t>(a.getHeads());
  return {in[0], in[1], in[2], h, in[2] / h};
}
// [N, T, h, e] -> [N, h, T, e] (and back: the same permutation),
// [N, T, h, e] -> [N, h, e, T], and the last two axes swapped.
constexpr int64_t kPerHead[] = {0, 2, 1, 3};
constexpr int64_t kPerHeadT[] = {0, 2, 3, 1};
constexpr int64_t kSwapLast[] = {0, 1, 3, 2};
constexpr int64_t kRowDims[] = {0, 1, 2}; // [N, h, i] onto [N, h, i, j]

/// Column `index` of a [rows, n] matrix, as [rows].
Value column(Emitter &e, Value m, int64_t index) {
  ArrayRef<int64_t> s = Emitter::shape(m);
  Value picked = e.matmul(m, e.transpose(e.unitRow(index, s[1])));
  return e.reshape(picked, {s[0]});
}

/// A convolution as a matmul over its input's windows (an im2col): the
/// windows [N, O..., C, K...] reshape to rows [N * O..., C * K...] that
/// multiply the weights [C_out, C, K...] seen as [C_out, C * K...].
struct ConvGeom {
  SmallVector<int64_t, 2> kernel, stride, padding; // per spatial dimension
  int64_t n, cin, cout, positions, patch;           // positions = prod O, patch = C * prod K
  SmallVector<int64_t, 4> outSpatial;               // O...
};
ConvGeom convGeom(l2::ConvOp c, ArrayRef<int64_t> in, ArrayRef<int64_t> out) {
  ConvGeom g;
  size_t s = in.size() - 2;
  g.kernel.assign(s, static_cast<int64_t>(c.getKernel()));
  g.stride.assign(s, static_cast<int64_t>(c.getStride()));
  g.padding.assign(s, static_cast<int64_t>(c.getPadding()));
  g.n = in[0];
  g.cin = in[1];
  g.cout = static_cast<int64_t>(c.getOutCh());
  g.positions = 1;
  g.patch = g.cin;
  for (size_t d = 0; d < s; ++d) {
    g.outSpatial.push_back(out[2 + d]);
    g.positions *= out[2 + d];
    g.patch *= g.kernel[d];
  }
  return g;
}

} // namespace

LogSoftmax synpl::l2tol1::detail::logSoftmax(Emitter &e, Value x) {
  ArrayRef<int64_t> s = Emitter::shape(x);
  Value rowMaxB = e.rowsBroadcast(e.rowMax(x, 1), s);
  Value shifted = e.sub(x, rowMaxB);
  Value lse = e.log(e.sum(e.exp(shifted), 1));
  return {rowMaxB, e.sub(shifted, e.rowsBroadcast(lse, s))};
}

//===----------------------------------------------------------------------===//
// Which ops have rules
//===----------------------------------------------------------------------===//

bool synpl::l2tol1::detail::hasRule(Operation *op, std::string &why) {
  return llvm::TypeSwitch<Operation *, bool>(op)
      .Case<l2::FlattenOp, l2::ReshapeOp, l2::LinearOp, l2::NormOp, l2::ActOp, l2::SoftmaxOp,
            l2::AddOp>(
          [](Operation *) { return true; })
      .Case([&](l2::DropoutOp) { return true; })
      .Case([&](l2::EmbedOp em) {
        Type element = getElementTypeOrSelf(em.getInput().getType());
        if (isa<IntegerType>(element))
          return true;
        why = "embed looks up integer token ids (l1.gather); this input is not an integer "
              "tensor";
        return false;
      })
      .Case([&](l2::ConvOp) { return true; })
      .Case([&](l2::AttnOp a) {
        if (cast<RankedTensorType>(a.getInput().getType()).getRank() == 3)
          return true;
        why = "attention is lowered over [batch, positions, dim] inputs only";
        return false;
      })
      .Case([&](l2::PoolOp pool) {
        // Windows of kernel x kernel tile the input exactly only when every
        // spatial size divides; a floor pool's leftover rows need a slice.
        auto type = cast<RankedTensorType>(pool.getInput().getType());
        int64_t k = static_cast<int64_t>(pool.getKernel());
        bool tiles = type.getRank() == 3 || type.getRank() == 4;
        for (int64_t d : type.getShape().drop_front(2))
          tiles &= d % k == 0;
        if (tiles)
          return true;
        why = "its windows do not tile the input (a spatial size is not a multiple of the "
              "kernel), and dropping the rest needs a slice L1 does not have";
        return false;
      })
      .Case([&](l2::QuantizeOp) {
        why = "rounding has a zero derivative almost everywhere, so reverse-mode autodiff "
              "passes no gradient through it (use straight_through), and L1 has no "
              "rounding primitive";
        return false;
      })
      .Default([&](Operation *) {
        why = "backward expansion has no rule for this op";
        return false;
      });
}

//===----------------------------------------------------------------------===//
// Forward rules
//===----------------------------------------------------------------------===//

void synpl::l2tol1::detail::lowerForward(Emitter &e, Instance &inst) {
  Operation *op = inst.op;
  e.setLoc(op->getLoc());
  ArrayRef<int64_t> outShape = llvm::cast<RankedTensorType>(op->getResult(0).getType()).getShape();
  Value x = inst.inputs.front();
  inst.saved.clear();

  llvm::TypeSwitch<Operation *>(op)
      .Case<l2::FlattenOp, l2::ReshapeOp>([&](Operation *) { inst.output = e.reshape(x, outShape); })
      .Case([&](l2::DropoutOp d) {
        double p = d.getP().convertToDouble();
        if (p == 0.0) {
          inst.output = x;
          return;
        }
        // Inverted dropout: keep an element when its draw u >= p and scale
        // it by 1 / (1 - p). Evaluation (training flag 0) makes p 0: every
        // element kept, unscaled.
        ArrayRef<int64_t> xs = Emitter::shape(x);
        Value pNow = e.scale(inst.training, p);
        Value keepScale = e.reciprocal(e.sub(e.cst(1.0), pNow));
        Value u = e.random(inst.counter, kRandomSeed, inst.stream, xs);
        Value keep = e.cmp(l1::CmpPredicate::ge, u, e.broadcast(pNow, xs));
        inst.output = e.select(keep, e.scale(x, keepScale), e.cst(0.0, xs));
        inst.saved = {keep, keepScale};
      })
      .Case([&](l2::LinearOp) {
        // z = x W + b over the last dimension. Split by columns, each rank
        // computes its block of z and the ranks gather the blocks (unless
        // the block goes on as a row split's input). Split by rows, each
        // multiplies its block of x's columns (sliced, unless it arrives as
        // a block) by its rows of W, and the ranks sum the products.
        Value x2 = e.reshape(x, rows2d(Emitter::shape(x)));
        if (inst.rank && inst.byRows && !inst.blockIn)
          x2 = e.blockSlice(x2, inst.rank, 1, inst.ranks);
        Value mm = e.matmul(x2, inst.params[0]);
        if (inst.rank && inst.byRows)
          mm = e.allSum(mm);
        Value z = e.add(mm, e.broadcast(inst.params[1], Emitter::shape(mm)));
        if (inst.rank && !inst.byRows && !inst.blockOut)
          z = e.allGather(z, 1, inst.ranks);
        SmallVector<int64_t, 4> zShape(outShape);
        zShape.back() = Emitter::shape(z).back();
        inst.output = e.reshape(z, zShape);
        inst.saved = {x2};
      })
      .Case([&](l2::EmbedOp em) {
        // The table's rows at the ids; ids outside [0, vocab) read zeros.
        inst.output = e.reshape(e.gather(inst.params[0], x), outShape);
        // Learned positions: positions[t] added to every sequence's step t.
        if (em.getPositions())
          inst.output = e.add(inst.output,
                              e.broadcast(inst.params[1], outShape, ArrayRef<int64_t>{1, 2}));
        inst.saved = {x};
      })
      .Case([&](l2::NormOp n) {
        bool group = n.getKind() == l2::NormKind::group;
        bool center = n.getKind() != l2::NormKind::rms;
        ArrayRef<int64_t> xs = Emitter::shape(x);
        Value u = e.reshape(x, normView(n, xs));
        auto [xhat2, rstdB] = normalizeRows(e, u, center);
        Value xhat = e.reshape(xhat2, xs);
        auto channels = [&](Value p) {
          return group ? e.broadcast(p, xs, ArrayRef<int64_t>{1}) : e.broadcast(p, xs);
        };
        Value gainB = channels(inst.params[0]);
        Value y = e.mul(xhat, gainB);
        if (center)
          y = e.add(y, channels(inst.params[1]));
        inst.output = y;
        inst.saved = {xhat2, rstdB, gainB, xhat};
      })
      .Case([&](l2::ActOp a) {
        ArrayRef<int64_t> s = Emitter::shape(x);
        switch (a.getFn()) {
        case l2::ActFn::relu:
          inst.output = e.max(x, e.cst(0.0, s));
          inst.saved = {x};
          break;
        case l2::ActFn::gelu: {
          Value ones = e.cst(1.0, s);
          Value x2 = e.mul(x, x);
          Value inner = e.add(x, e.scale(e.mul(x2, x), kGeluC));
          Value th = e.tanh(e.scale(inner, kGeluK));
          Value onePlus = e.add(ones, th);
          inst.output = e.mul(e.scale(x, 0.5), onePlus);
          inst.saved = {x, x2, th, onePlus};
          break;
        }
        case l2::ActFn::silu:
        case l2::ActFn::swish: {
          // x sigmoid(x), sigmoid(x) = (1 + tanh(x / 2)) / 2 (no exp overflow).
          Value ones = e.cst(1.0, s);
          Value sig = e.scale(e.add(ones, e.tanh(e.scale(x, 0.5))), 0.5);
          inst.output = e.mul(x, sig);
          inst.saved = {x, sig};
          break;
        }
        }
      })
      .Case([&](l2::ConvOp c) {
        // rows = windows(x) as [N * O..., C * K...]; z = rows W^T + b;
        // y = z as [N, O..., C_out] moved to [N, C_out, O...]. Channels
        // last, the windows are [N, O..., K..., C], paired with the weights
        // seen as [C_out, K..., C], and y stays [N, O..., C_out].
        ConvGeom g = convGeom(c, declaredShape(op, 0), outShape);
        Value rows = e.reshape(e.unfold(x, g.kernel, g.stride, g.padding, inst.inLast),
                               {g.n * g.positions, g.patch});
        Value w = inst.params[0];
        if (inst.inLast)
          w = e.permute(w, toChannelsLast(static_cast<int64_t>(Emitter::shape(w).size())));
        Value w2 = e.reshape(w, {g.cout, g.patch});
        Value z = e.matmul(rows, e.transpose(w2));
        z = e.add(z, e.broadcast(inst.params[1], Emitter::shape(z)));
        SmallVector<int64_t, 5> nhwc{g.n};
        nhwc.append(g.outSpatial.begin(), g.outSpatial.end());
        nhwc.push_back(g.cout);
        Value y = e.reshape(z, nhwc);
        inst.output =
            inst.outLast ? y : e.permute(y, toChannelsFirst(static_cast<int64_t>(nhwc.size())));
        inst.saved = {rows, w2};
      })
      .Case([&](l2::AttnOp a) {
        // params: wq, wk, wv, wo, bq, bk, bv, bo
        AttnDims dm = attnDims(a, Emitter::shape(x));
        ArrayRef<Value> p = inst.params;
        Value x2 = e.reshape(x, dm.rows());
        auto project = [&](Value in, Value w, Value b) {
          Value mm = e.matmul(in, w);
          return e.add(mm, e.broadcast(b, Emitter::shape(mm)));
        };
        auto headsOf = [&](Value w, Value b) { return e.reshape(project(x2, w, b), dm.heads()); };
        Value q = headsOf(p[0], p[4]), k = headsOf(p[1], p[5]), v = headsOf(p[2], p[6]);
        Value qh = e.permute(q, kPerHead), kt = e.permute(k, kPerHeadT);
        Value vh = e.permute(v, kPerHead);
        Value scores = e.scale(e.matmul(qh, kt), 1.0 / std::sqrt(double(dm.e)));
        if (a.getCausal()) {
          // Query i sees keys j <= i: the others score -1e30, whose exp is 0,
          // so their probabilities (and the VJP through them) are exactly 0.
          Value pos = e.iota(dm.t);
          Value keys = e.broadcast(pos, {dm.t, dm.t}, ArrayRef<int64_t>{1});
          Value queries = e.broadcast(pos, {dm.t, dm.t}, ArrayRef<int64_t>{0});
          Value visible = e.broadcast(e.cmp(l1::CmpPredicate::le, keys, queries), dm.scores(),
                                      ArrayRef<int64_t>{2, 3});
          scores = e.select(visible, scores, e.cst(-1e30, dm.scores()));
        }
        // softmax over the keys j (axis 3), shifted by the row max
        Value maxB = e.broadcast(e.rowMax(scores, 3), dm.scores(), ArrayRef<int64_t>(kRowDims));
        Value ex = e.exp(e.sub(scores, maxB));
        Value z = e.broadcast(e.sum(ex, 3), dm.scores(), ArrayRef<int64_t>(kRowDims));
        Value probs = e.div(ex, z);
        Value o = e.permute(e.matmul(probs, vh), kPerHead); // [N, T, h, e]
        Value o2 = e.reshape(o, dm.rows());
        inst.output = e.reshape(project(o2, p[3], p[7]), Emitter::shape(x));
        inst.saved = {x2, q, k, v, probs, o2};
      })
      .Case([&](l2::PoolOp pool) {
        PoolView v =
            poolView(Emitter::shape(x), static_cast<int64_t>(pool.getKernel()), inst.inLast);
        Value windows = e.reshape(x, v.shape);
        Value r = windows;
        bool isMax = pool.getKind() == l2::PoolKind::max;
        for (int64_t axis : v.windowAxes)
          r = isMax ? e.rowMax(r, axis) : e.sum(r, axis);
        if (!isMax) {
          double size = static_cast<double>(Emitter::numel(windows) / Emitter::numel(r));
          r = e.scale(r, 1.0 / size);
        }
        inst.output = r;
        inst.saved = {windows, r};
      })
      .Case([&](l2::SoftmaxOp) {
        Value x2 = e.reshape(x, rows2d(Emitter::shape(x)));
        LogSoftmax ls = logSoftmax(e, x2);
        Value p2 = e.exp(ls.logp);
        inst.output = e.reshape(p2, outShape);
        // The divergence fused into cross-entropy reads logp and the row max
        // of its logits (inputs[0]) from here.
        inst.saved = {ls.rowMaxB, ls.logp, p2, x2};
      })
      .Case([&](l2::AddOp) { inst.output = e.add(x, inst.inputs[1]); })
      .Case([&](l2::MixtureOp) {
        // inputs: the gate's scores [N, E], then each expert's output.
        // out = sum_e softmax(scores)[:, e] * expert_e
        Value weights = e.exp(logSoftmax(e, x).logp);
        int64_t experts = Emitter::shape(x)[1];
        Value out;
        for (int64_t i = 0; i < experts; ++i) {
          Value y = inst.inputs[i + 1];
          Value term =
              e.mul(e.broadcast(column(e, weights, i), Emitter::shape(y), ArrayRef<int64_t>{0}), y);
          out = out ? e.add(out, term) : term;
        }
        inst.output = out;
        inst.saved = {weights};
      });
  // An activation or pooling computes in its input's layout; a
  // channels-last one whose output is wanted channels first moves it.
  if (inst.inLast && !inst.outLast && !isa<l2::ConvOp>(op))
    inst.output = e.permute(inst.output, toChannelsFirst(static_cast<int64_t>(outShape.size())));
}

bool synpl::l2tol1::detail::channelsLastLayer(Operation *op) {
  if (!isa<l2::ConvOp, l2::ActOp, l2::PoolOp>(op) || op->getNumOperands() != 1 ||
      hasUserKernelHint(op))
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  return type && type.getRank() >= 3;
}

//===----------------------------------------------------------------------===//
// VJPs
//===----------------------------------------------------------------------===//

void synpl::l2tol1::detail::lowerBackward(Emitter &e, const Instance &inst, Value dy,
                                          ArrayRef<bool> needInput, SmallVectorImpl<Value> &dIn,
                                          SmallVectorImpl<Value> &dParams) {
  Operation *op = inst.op;
  e.setLoc(op->getLoc());
  dIn.assign(inst.inputs.size(), Value());
  dParams.assign(inst.params.size(), Value());
  Value x = inst.inputs.front();
  ArrayRef<int64_t> xs = Emitter::shape(x);
  bool needX = needInput.front();
  // The gradient of an output moved to channels first, moved back into the
  // layout the activation or pooling computed in.
  if (inst.inLast && !inst.outLast && !isa<l2::ConvOp>(op))
    dy = e.permute(dy, toChannelsLast(static_cast<int64_t>(Emitter::shape(dy).size())));

  llvm::TypeSwitch<Operation *>(op)
      .Case<l2::FlattenOp, l2::ReshapeOp>([&](Operation *) {
        if (needX)
          dIn[0] = e.reshape(dy, xs);
      })
      .Case([&](l2::DropoutOp) {
        // p = 0 is the identity and never recorded; otherwise the same mask.
        if (needX)
          dIn[0] = e.select(inst.saved[0], e.scale(dy, inst.saved[1]), e.cst(0.0, xs));
      })
      .Case([&](l2::LinearOp) {
        Value x2 = inst.saved[0];
        Value dz = e.reshape(dy, {Emitter::shape(x2)[0], Emitter::shape(dy).back()});
        // Split by columns: the rank's block of dz (sliced, unless it
        // arrives as a block) gives its blocks of the parameters' gradients
        // and its partial sum of dx. Split by rows: dz is whole; the rank's
        // input block gives its rows of dW and its block of dx, gathered
        // (unless it goes back as a block).
        bool split = static_cast<bool>(inst.rank);
        if (split && !inst.byRows && !inst.blockOut)
          dz = e.blockSlice(dz, inst.rank, 1, inst.ranks);
        dParams[0] = e.matmul(e.transpose(x2), dz);
        dParams[1] = e.sum(dz, 0);
        if (needX) {
          Value dx = e.matmul(dz, e.transpose(inst.params[0]));
          if (split && !inst.byRows)
            dx = e.allSum(dx);
          else if (split && !inst.blockIn)
            dx = e.allGather(dx, 1, inst.ranks);
          dIn[0] = e.reshape(dx, xs);
        }
      })
      .Case([&](l2::EmbedOp em) {
        // Each row of the output's gradient adds into the row it read.
        Value ids = inst.saved[0];
        SmallVector<int64_t, 4> rows(Emitter::shape(ids));
        rows.push_back(Emitter::shape(dy).back());
        dParams[0] =
            e.scatterAdd(e.reshape(dy, rows), ids, static_cast<int64_t>(em.getVocab()));
        if (em.getPositions())
          dParams[1] = e.sum(dy, 0);
      })
      .Case([&](l2::NormOp n) {
        bool group = n.getKind() == l2::NormKind::group;
        bool center = n.getKind() != l2::NormKind::rms;
        Value xhat2 = inst.saved[0], rstdB = inst.saved[1], gainB = inst.saved[2],
              xhat = inst.saved[3];
        dParams[0] = sumToChannels(e, e.mul(dy, xhat), group);
        if (center)
          dParams[1] = sumToChannels(e, dy, group);
        if (needX) {
          Value dxhat = e.reshape(e.mul(dy, gainB), Emitter::shape(xhat2));
          dIn[0] = e.reshape(normalizeRowsGrad(e, dxhat, xhat2, rstdB, center), xs);
        }
      })
      .Case([&](l2::ActOp a) {
        if (!needX)
          return;
        switch (a.getFn()) {
        case l2::ActFn::relu: {
          Value zero = e.cst(0.0, xs);
          dIn[0] = e.select(e.cmp(l1::CmpPredicate::gt, x, zero), dy, zero);
          break;
        }
        case l2::ActFn::gelu: {
          // d/dx = 0.5 (1 + th) + 0.5 x (1 - th^2) k (1 + 3c x^2)
          Value x2 = inst.saved[1], th = inst.saved[2], onePlus = inst.saved[3];
          Value ones = e.cst(1.0, xs);
          Value first = e.scale(onePlus, 0.5);
          Value sech2 = e.sub(ones, e.mul(th, th));
          Value du = e.scale(e.add(ones, e.scale(x2, 3.0 * kGeluC)), kGeluK);
          Value second = e.mul(e.mul(e.scale(x, 0.5), sech2), du);
          dIn[0] = e.mul(dy, e.add(first, second));
          break;
        }
        case l2::ActFn::silu:
        case l2::ActFn::swish: {
          // d/dx = s + x s (1 - s)
          Value sig = inst.saved[1];
          Value ones = e.cst(1.0, xs);
          Value d = e.add(sig, e.mul(e.mul(x, sig), e.sub(ones, sig)));
          dIn[0] = e.mul(dy, d);
          break;
        }
        }
      })
      .Case([&](l2::ConvOp c) {
        // dz = dy as rows [N * O..., C_out]; db = sum dz; dW = dz^T rows;
        // dx = fold(dz W) (the windows' gradients summed onto the input).
        ConvGeom g = convGeom(c, declaredShape(op, 0),
                              cast<RankedTensorType>(op->getResult(0).getType()).getShape());
        Value rows = inst.saved[0], w2 = inst.saved[1];
        int64_t s = static_cast<int64_t>(g.outSpatial.size());
        Value dz = inst.outLast ? dy : e.permute(dy, toChannelsLast(s + 2));
        dz = e.reshape(dz, {g.n * g.positions, g.cout});
        dParams[1] = e.sum(dz, 0);
        Value dW = e.matmul(e.transpose(dz), rows);
        ArrayRef<int64_t> ws = Emitter::shape(inst.params[0]);
        if (inst.inLast) {
          // [C_out, K..., C] back to the weights' [C_out, C, K...].
          SmallVector<int64_t, 5> last{g.cout};
          last.append(g.kernel.begin(), g.kernel.end());
          last.push_back(g.cin);
          dW = e.permute(e.reshape(dW, last), toChannelsFirst(s + 2));
        }
        dParams[0] = e.reshape(dW, ws);
        if (!needX)
          return;
        shapes::ShapeResult windows =
            shapes::unfoldShape(xs, g.kernel, g.stride, g.padding, inst.inLast);
        Value dRows = e.reshape(e.matmul(dz, w2), windows.shape());
        dIn[0] = e.fold(dRows, xs, g.kernel, g.stride, g.padding, inst.inLast);
      })
      .Case([&](l2::AttnOp a) {
        AttnDims dm = attnDims(a, xs);
        ArrayRef<Value> p = inst.params;
        Value x2 = inst.saved[0], q = inst.saved[1], k = inst.saved[2], v = inst.saved[3],
              probs = inst.saved[4], o2 = inst.saved[5];
        Value dy2 = e.reshape(dy, dm.rows());
        dParams[3] = e.matmul(e.transpose(o2), dy2);
        dParams[7] = e.sum(dy2, 0);
        Value dO = e.reshape(e.matmul(dy2, e.transpose(p[3])), dm.heads());
        Value dOh = e.permute(dO, kPerHead);                                // [N, h, i, e]
        Value dProbs = e.matmul(dOh, e.permute(v, kPerHeadT));              // [N, h, i, j]
        Value dV = e.permute(e.matmul(e.permute(probs, kSwapLast), dOh), kPerHead);
        Value inner =
            e.broadcast(e.sum(e.mul(dProbs, probs), 3), dm.scores(), ArrayRef<int64_t>(kRowDims));
        Value dScores = e.scale(e.mul(probs, e.sub(dProbs, inner)), 1.0 / std::sqrt(double(dm.e)));
        Value dQ = e.permute(e.matmul(dScores, e.permute(k, kPerHead)), kPerHead);
        Value dK = e.permute(e.matmul(e.permute(dScores, kSwapLast), e.permute(q, kPerHead)),
                             kPerHead); // [N, j, h, e]
        Value dX;
        Value x2T = e.transpose(x2);
        Value dProjected[] = {dQ, dK, dV};
        for (auto [slot, dHeads] : llvm::enumerate(dProjected)) {
          Value dz = e.reshape(dHeads, dm.rows());
          dParams[slot] = e.matmul(x2T, dz);
          dParams[slot + 4] = e.sum(dz, 0);
          if (needX) {
            Value part = e.matmul(dz, e.transpose(p[slot]));
            dX = dX ? e.add(dX, part) : part;
          }
        }
        if (needX)
          dIn[0] = e.reshape(dX, xs);
      })
      .Case([&](l2::PoolOp pool) {
        if (!needX)
          return;
        PoolView v = poolView(xs, static_cast<int64_t>(pool.getKernel()), inst.inLast);
        Value windows = inst.saved[0], pooled = inst.saved[1];
        auto spread = [&](Value pooled) {
          return e.broadcast(pooled, v.shape, ArrayRef<int64_t>(v.outDims));
        };
        if (pool.getKind() == l2::PoolKind::avg) {
          double size = static_cast<double>(Emitter::numel(windows) / Emitter::numel(dy));
          dIn[0] = e.reshape(e.scale(spread(dy), 1.0 / size), xs);
          return;
        }
        // max: the gradient goes to the window's maximum, shared equally
        // among tied maxima (a subgradient).
        Value hit = e.cast(e.cmp(l1::CmpPredicate::eq, windows, spread(pooled)), e.f32());
        Value count = hit;
        for (int64_t axis : v.windowAxes)
          count = e.sum(count, axis);
        dIn[0] = e.reshape(e.mul(hit, spread(e.div(dy, count))), xs);
      })
      .Case([&](l2::SoftmaxOp) {
        if (!needX)
          return;
        // dx = p (dy - sum(dy p))
        Value p2 = inst.saved[2];
        ArrayRef<int64_t> s = Emitter::shape(p2);
        Value dy2 = e.reshape(dy, s);
        Value inner = e.rowsBroadcast(e.sum(e.mul(dy2, p2), 1), s);
        dIn[0] = e.reshape(e.mul(p2, e.sub(dy2, inner)), xs);
      })
      .Case([&](l2::AddOp) {
        for (unsigned i = 0; i < 2; ++i)
          if (needInput[i])
            dIn[i] = dy;
      })
      .Case([&](l2::MixtureOp) {
        Value weights = inst.saved[0];
        ArrayRef<int64_t> ws = Emitter::shape(weights);
        ArrayRef<int64_t> ys = Emitter::shape(dy);
        Value dWeights;
        for (int64_t i = 0; i < ws[1]; ++i) {
          Value y = inst.inputs[i + 1];
          if (needInput[i + 1])
            dIn[i + 1] = e.mul(e.broadcast(column(e, weights, i), ys, ArrayRef<int64_t>{0}), dy);
          if (!needInput[0])
            continue;
          // d weight_e = sum over an example's elements of dy * expert_e,
          // placed in column e.
          Value dCol = e.mul(dy, y);
          for (int64_t axis = static_cast<int64_t>(ys.size()) - 1; axis >= 1; --axis)
            dCol = e.sum(dCol, axis);
          Value placed = e.matmul(e.reshape(dCol, {ws[0], 1}), e.unitRow(i, ws[1]));
          dWeights = dWeights ? e.add(dWeights, placed) : placed;
        }
        if (needInput[0]) {
          // through the softmax over the experts
          Value inner = e.rowsBroadcast(e.sum(e.mul(dWeights, weights), 1), ws);
          dIn[0] = e.mul(weights, e.sub(dWeights, inner));
        }
      });
}
