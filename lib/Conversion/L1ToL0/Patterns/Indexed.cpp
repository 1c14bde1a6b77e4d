//===- Indexed.cpp - Emission of gather, scatter_add and block_slice --------===//
//
// The embedding lookup and its gradient read and write a table's rows at
// indices loaded from memory.
//
//  - gather: element [p..., d] loads the index at p, then the table at
//    [index, d]. It opens a kernel (OpKind::Gather): the table is read from
//    memory at rows no iteration space of its own predicts.
//  - block_slice: element [..., j, ...] loads the block index (a rank-0
//    f32, a tensor-parallel graph's rank), then the operand at
//    [..., index * n + j, ...]. It opens a kernel like a gather.
//  - scatter_add: one kernel, parallel over the table's width d. Each lane
//    zeroes its column, then walks the indices in order and adds
//    src[p..., d] into row index of its column. Lanes own disjoint columns,
//    so the read-modify-writes never race, and the sums follow the indices'
//    row-major order on every target, as in the reference interpreter.
//
// An index outside [0, rows) is clamped to a row inside the table (so that
// every access stays in bounds) and its value masked: a zero row for a
// gather, nothing added for a scatter. Indices whose type cannot leave the
// table (ui8 into 256 rows) need neither.
//
//===----------------------------------------------------------------------===//
#include "../EmitPatterns.h"

#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Dialect/L1/L1Ops.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l1tol0;

namespace {

/// A loaded index as a row of a table of `rows` rows: the row, clamped
/// into the table, and whether the index named it (null when every value
/// of the index type does).
struct Row {
  Value row;
  Value valid;
};

Row rowOf(KernelBuilder &k, Value id, int64_t rows) {
  Type ix = k.b.getIndexType(), i1 = k.b.getI1Type();
  Value i = id.getType().isIndex() ? id : (Value)l0uop::CastOp::create(k.b, k.loc, ix, id);
  auto it = dyn_cast<IntegerType>(id.getType());
  if (it && it.isUnsigned() && it.getWidth() < 63 && (int64_t(1) << it.getWidth()) <= rows)
    return {i, Value()};
  Value below = k.op<l0uop::CmpLtOp>(i1, {i, k.index(0)});
  Value above = k.op<l0uop::CmpLtOp>(i1, {k.index(rows - 1), i});
  Value no = k.constant(i1, 0), yes = k.constant(i1, 1);
  Value valid = k.op<l0uop::WhereOp>(
      i1, {below, no, k.op<l0uop::WhereOp>(i1, {above, no, yes})});
  // min(max(i, 0), rows - 1) as -max(-max(i, 0), 1 - rows).
  Value lo = k.op<l0uop::MaxOp>(ix, {i, k.index(0)});
  Value negLo = k.op<l0uop::NegOp>(ix, {lo});
  Value clamped = k.op<l0uop::NegOp>(ix, {k.op<l0uop::MaxOp>(ix, {negLo, k.index(1 - rows)})});
  return {clamped, valid};
}

Value masked(KernelBuilder &k, const Row &r, Value v) {
  if (!r.valid)
    return v;
  return k.op<l0uop::WhereOp>(v.getType(), {r.valid, v, k.constant(v.getType(), 0)});
}

std::string floatTable(Value table) {
  return hasFloatElements(table) ? "" : "an integer table has no lowering";
}

struct GatherPattern : OpEmitPattern<l1::GatherOp> {
  explicit GatherPattern(MLIRContext *ctx) : OpEmitPattern(ctx, OpKind::Gather) {}
  std::string check(l1::GatherOp op) const override { return floatTable(op.getTable()); }
  Value build(KernelBuilder &k, l1::GatherOp op, ArrayRef<Value> idx) const override {
    int64_t rows = op.getTable().getType().getShape()[0];
    Row r = rowOf(k, k.eval(op.getIds(), idx.drop_back()), rows);
    return masked(k, r, k.eval(op.getTable(), {r.row, idx.back()}));
  }
};

struct BlockSlicePattern : OpEmitPattern<l1::BlockSliceOp> {
  explicit BlockSlicePattern(MLIRContext *ctx) : OpEmitPattern(ctx, OpKind::Gather) {}
  Value build(KernelBuilder &k, l1::BlockSliceOp op, ArrayRef<Value> idx) const override {
    int64_t axis = (int64_t)op.getAxis();
    int64_t n = op.getResult().getType().getDimSize(axis);
    int64_t blocks = op.getInput().getType().getDimSize(axis) / n;
    // The block: the index truncated toward zero; one outside [0, blocks)
    // reads block 0, as the op states.
    Type i64 = k.b.getI64Type(), i1 = k.b.getI1Type(), ix = k.b.getIndexType();
    Value i = k.op<l0uop::CastOp>(i64, {k.operand(op, 1, idx)});
    Value zero = k.constant(i64, 0);
    Value below = k.op<l0uop::CmpLtOp>(i1, {i, zero});
    Value above = k.op<l0uop::CmpLtOp>(i1, {k.constant(i64, blocks - 1), i});
    i = k.op<l0uop::WhereOp>(i64, {below, zero, k.op<l0uop::WhereOp>(i64, {above, zero, i})});
    SmallVector<Value> at(idx.begin(), idx.end());
    Value start = k.op<l0uop::MulOp>(ix, {k.op<l0uop::CastOp>(ix, {i}), k.index(n)});
    at[axis] = k.op<l0uop::AddOp>(ix, {start, idx[axis]});
    return k.eval(op.getInput(), at);
  }
};

struct ScatterAddPattern : OpEmitPattern<l1::ScatterAddOp> {
  explicit ScatterAddPattern(MLIRContext *ctx) : OpEmitPattern(ctx, OpKind::Scatter) {}
  std::string check(l1::ScatterAddOp op) const override { return floatTable(op.getResult()); }
  /// `idx` is the lane: one column of the result.
  Value build(KernelBuilder &k, l1::ScatterAddOp op, ArrayRef<Value> idx) const override {
    Value result = op.getResult(), src = op.getSrc(), ids = op.getIds();
    Type t = op.getResult().getType().getElementType();
    auto resultShape = op.getResult().getType().getShape();
    auto idsShape = op.getIds().getType().getShape();
    int64_t rows = resultShape[0], width = resultShape[1];
    int64_t positions = op.getIds().getType().getNumElements();
    Value d = idx[0], zero = k.constant(t, 0);
    auto store = [&](Value ptr, Value v) {
      l0uop::StoreOp::create(k.b, k.loc, ValueRange{ptr, v});
    };

    Value v = k.beginLoop(rows);
    store(k.address(result, {v, d}), zero);
    k.endLoop(v);

    Value p = k.beginLoop(positions);
    Row r = rowOf(k, k.eval(ids, {p}, /*flatIdx=*/true), rows);
    Value x;
    if (k.takesFlatIndex(src)) {
      Value flat = k.op<l0uop::MulOp>(k.b.getIndexType(), {p, k.index(width)});
      flat = k.op<l0uop::AddOp>(k.b.getIndexType(), {flat, d});
      x = k.eval(src, {flat}, /*flatIdx=*/true);
    } else {
      SmallVector<Value> at = k.delinearize(p, idsShape);
      at.push_back(d);
      x = k.eval(src, at);
    }
    Value ptr = k.address(result, {r.row, d});
    Value old = k.op<l0uop::LoadOp>(t, {ptr});
    store(ptr, k.op<l0uop::AddOp>(t, {old, masked(k, r, x)}));
    k.endLoop(p);
    return Value();
  }
};

} // namespace

void synpl::l1tol0::populateIndexedEmitPatterns(EmitPatternSet &patterns) {
  patterns.add<GatherPattern, BlockSlicePattern, ScatterAddPattern>();
}
