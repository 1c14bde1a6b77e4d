//===- TiledOps.cpp - One UOp of a tiled kernel on lane vectors -----------===//
//
// The tiled lowering (TiledKernel.cpp) runs a matmul-shaped kernel's lane
// body once per row of a block: lowerTiledOp() gives each UOp its form
// there -- a scalar where no operand depends on the lanes, an affine index
// (lane 0 and a step) where it stays affine, else a vector of the lanes --
// and takes a packed operand from its panel or row array.
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace synpl::l0tollvm {

Value KernelBuilder::rangeValue(Location loc, RangeOp range, Value it) {
  if (range.getStep() != 1)
    it = arith::MulIOp::create(b, loc, it, i64Const(loc, range.getStep()));
  if (range.getLower() != 0)
    it = arith::AddIOp::create(b, loc, it, i64Const(loc, range.getLower()));
  return it;
}

Value KernelBuilder::laneSteps(Location loc, unsigned lanes, int64_t step) {
  SmallVector<int64_t> steps;
  for (unsigned l = 0; l < lanes; ++l)
    steps.push_back(static_cast<int64_t>(l) * step);
  auto vt = VectorType::get({lanes}, b.getI64Type());
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(vt, ArrayRef<int64_t>(steps)));
}

Value KernelBuilder::laneForm(Location loc, const LaneValue &lv, Type t) {
  auto vt = dyn_cast<VectorType>(t);
  if (!vt || isa<VectorType>(lv.v.getType()))
    return lv.v;
  Value splat = vector::BroadcastOp::create(b, loc, vt, lv.v);
  if (lv.stride == 0)
    return splat;
  return arith::AddIOp::create(b, loc, splat,
                               laneSteps(loc, vt.getNumElements(), lv.stride));
}

Value KernelBuilder::lanePointers(Location loc, const LaneValue &ptr,
                                  Type elem, unsigned lanes) {
  if (isa<VectorType>(ptr.v.getType()))
    return ptr.v;
  auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
  return LLVM::GEPOp::create(b, loc, VectorType::get({lanes}, ptrTy), elem,
                             ptr.v, ValueRange{laneSteps(loc, lanes, ptr.stride)});
}

LogicalResult KernelBuilder::lowerTiledOp(Operation *op, const TilePlan &plan,
                                          MutableArrayRef<LaneMap> rows,
                                          unsigned r, Value mask) {
  LaneMap &vals = rows[r];
  Location loc = op->getLoc();
  unsigned lanes = plan.laneCount;
  // What does not depend on i is the same in every row of the block, and
  // so is what depends on it only through its row group.
  if (r > 0 && op->getNumResults() == 1 &&
      (!plan.rowDependent.contains(op->getResult(0)) ||
       plan.groupShared.contains(op->getResult(0)))) {
    auto it = rows[0].find(op->getResult(0));
    if (it == rows[0].end())
      return failure();
    vals[op->getResult(0)] = it->second;
    return success();
  }
  SmallVector<LaneValue> args;
  bool anyVarying = false, anyVector = false;
  for (Value v : op->getOperands()) {
    if (isa<BufType>(v.getType())) {
      args.push_back({});
      continue;
    }
    auto it = vals.find(v);
    if (it == vals.end() || !it->second.v)
      return failure();
    args.push_back(it->second);
    anyVarying |= it->second.varying();
    anyVector |= isa<VectorType>(it->second.v.getType());
  }
  auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
  Value allLanes;
  auto laneMask = [&]() -> Value {
    if (mask)
      return mask;
    if (!allLanes)
      allLanes = arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(
                      VectorType::get({lanes}, b.getI1Type()), true));
    return allLanes;
  };

  if (auto index = dyn_cast<IndexOp>(op)) {
    auto buf = dyn_cast<BufType>(index.getBuffer().getType());
    Value base = mapping.lookupOrNull(index.getBuffer());
    ValueRange indices = index.getIndices();
    if (!buf || !base || indices.size() != buf.getShape().size())
      return failure();
    Type elem = convertType(buf.getElementType());
    ArrayRef<int64_t> shape = buf.getShape();
    int64_t stride = 1;
    if (!anyVector) {
      // Row-major offset of lane 0 and its per-lane step.
      Value offset;
      int64_t laneStride = 0;
      for (int64_t d = shape.size() - 1; d >= 0; --d) {
        const LaneValue &idx = args[d + 1];
        Value term = stride == 1 ? idx.v
                                 : Value(arith::MulIOp::create(
                                       b, loc, idx.v, i64Const(loc, stride)));
        offset = offset ? Value(arith::AddIOp::create(b, loc, term, offset))
                        : term;
        laneStride += idx.stride * stride;
        stride *= shape[d];
      }
      if (!offset)
        offset = i64Const(loc, 0);
      vals[index.getResult()] = {
          LLVM::GEPOp::create(b, loc, ptrTy, elem, base, ValueRange{offset}),
          laneStride};
      return success();
    }
    auto offTy = VectorType::get({lanes}, b.getI64Type());
    Value offset;
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      Value idx = laneForm(loc, args[d + 1], offTy);
      Value term =
          stride == 1
              ? idx
              : Value(arith::MulIOp::create(
                    b, loc, idx,
                    vector::BroadcastOp::create(b, loc, offTy,
                                                i64Const(loc, stride))));
      offset = offset ? Value(arith::AddIOp::create(b, loc, term, offset)) : term;
      stride *= shape[d];
    }
    vals[index.getResult()] = {
        LLVM::GEPOp::create(b, loc, VectorType::get({lanes}, ptrTy), elem, base,
                            ValueRange{offset}),
        0};
    return success();
  }

  if (isa<LoadOp>(op)) {
    Type t = convertType(op->getResult(0).getType());
    if (!t)
      return failure();
    if (auto it = plan.packOf.find(op);
        it != plan.packOf.end() && panelIteration) {
      Value slot = LLVM::GEPOp::create(
          b, loc, ptrTy, t, panels[it->second],
          ValueRange{arith::MulIOp::create(b, loc, panelIteration,
                                           i64Const(loc, lanes))});
      vals[op->getResult(0)] = {
          LLVM::LoadOp::create(b, loc, VectorType::get({lanes}, t), slot,
                               panelAlign(t, lanes)),
          0};
      return success();
    }
    if (auto it = plan.rowPackOf.find(op); it != plan.rowPackOf.end() &&
                                           panelIteration && kblock &&
                                           !rowPanels.empty()) {
      Value step = panelIteration;
      if (plan.rowPacks[it->second].kMajor)
        step = arith::MulIOp::create(b, loc, panelIteration,
                                     i64Const(loc, kblock->iterationStride));
      Value slot = LLVM::GEPOp::create(
          b, loc, ptrTy, t, rowPanels[it->second],
          ValueRange{arith::AddIOp::create(b, loc, rowPanelStarts[it->second][r], step)});
      vals[op->getResult(0)] = {
          LLVM::LoadOp::create(b, loc, t, slot, elementAlign(t)), 0};
      return success();
    }
    // An i1 (a mask) is a byte in memory: loaded as an i8 and truncated.
    bool isBool = t.isInteger(1);
    Type memT = isBool ? Type(b.getI8Type()) : t;
    auto bind = [&](Value loaded) {
      if (isBool)
        loaded = arith::TruncIOp::create(
            b, loc, isa<VectorType>(loaded.getType()) ? VectorType::get({lanes}, t) : t,
            loaded);
      vals[op->getResult(0)] = {loaded, 0};
      return success();
    };
    const LaneValue &ptr = args[0];
    unsigned align = elementAlign(memT);
    if (!ptr.varying())
      return bind(LLVM::LoadOp::create(b, loc, memT, ptr.v, align));
    auto vt = VectorType::get({lanes}, memT);
    Value zero = constLike(loc, vt, 0.0, 0);
    Value v;
    if (!anyVector && ptr.stride == 1) {
      v = mask ? Value(LLVM::MaskedLoadOp::create(b, loc, vt, ptr.v, mask, zero,
                                                  align))
               : Value(LLVM::LoadOp::create(b, loc, vt, ptr.v, align));
    } else if (!mask && !isa<VectorType>(ptr.v.getType())) {
      // Every lane, a constant stride apart: one load per lane at a
      // constant offset from one pointer. A gather of a vector of pointers
      // is split into the same loads where the target has no fast gather
      // (AMD's), but only after extracting each pointer from the vector.
      auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
      v = zero;
      for (unsigned l = 0; l < lanes; ++l) {
        Value at = l == 0 ? ptr.v
                          : Value(LLVM::GEPOp::create(
                                b, loc, ptrTy, memT, ptr.v,
                                ValueRange{i64Const(loc, int64_t(l) * ptr.stride)}));
        v = LLVM::InsertElementOp::create(
            b, loc, v, LLVM::LoadOp::create(b, loc, memT, at, align),
            LLVM::ConstantOp::create(b, loc, b.getI32Type(), b.getI32IntegerAttr(l)));
      }
    } else {
      v = LLVM::masked_gather::create(b, loc, vt,
                                      lanePointers(loc, ptr, memT, lanes),
                                      laneMask(), ValueRange{zero}, align);
    }
    return bind(v);
  }

  if (isa<StoreOp>(op)) {
    Type t = convertType(op->getOperand(1).getType());
    if (!t)
      return failure();
    // i1 lanes are zero-extended to bytes (a vector of i1 would be packed
    // bits in memory; a scalar i1 already takes a byte).
    bool isBool = t.isInteger(1);
    Type memT = isBool ? Type(b.getI8Type()) : t;
    const LaneValue &ptr = args[0], &value = args[1];
    unsigned align = elementAlign(memT);
    if (!ptr.varying()) {
      if (value.varying()) // lanes racing for one address
        return failure();
      Value sv = isBool ? Value(arith::ExtUIOp::create(b, loc, memT, value.v)) : value.v;
      LLVM::StoreOp::create(b, loc, sv, ptr.v, align);
      return success();
    }
    auto vt = VectorType::get({lanes}, t);
    Value v = laneForm(loc, value, vt);
    if (isBool)
      v = arith::ExtUIOp::create(b, loc, VectorType::get({lanes}, memT), v);
    if (!isa<VectorType>(ptr.v.getType()) && ptr.stride == 1) {
      if (mask)
        LLVM::MaskedStoreOp::create(b, loc, v, ptr.v, mask, align);
      else
        LLVM::StoreOp::create(b, loc, v, ptr.v, align);
    } else {
      LLVM::masked_scatter::create(b, loc, v, lanePointers(loc, ptr, memT, lanes),
                                   laneMask(), align);
    }
    return success();
  }

  if (op->getNumResults() != 1)
    return failure();
  Value result = op->getResult(0);
  // Index arithmetic that stays affine in the lanes: lane 0 and a step.
  if (anyVarying && !anyVector && result.getType().isIndex()) {
    if (isa<AddOp>(op)) {
      vals[result] = {arith::AddIOp::create(b, loc, args[0].v, args[1].v),
                      args[0].stride + args[1].stride};
      return success();
    }
    if (isa<NegOp>(op)) {
      vals[result] = {arith::SubIOp::create(b, loc, i64Const(loc, 0), args[0].v),
                      -args[0].stride};
      return success();
    }
    if (isa<MulOp>(op)) {
      std::optional<int64_t> c0 = integerConstant(op->getOperand(0)),
                             c1 = integerConstant(op->getOperand(1));
      if (c0 || c1) {
        int64_t stride = c1 ? args[0].stride * *c1 : args[1].stride * *c0;
        vals[result] = {arith::MulIOp::create(b, loc, args[0].v, args[1].v),
                        stride};
        return success();
      }
    }
  }
  // Everything else through lowerOp: on scalars when no operand varies,
  // else on lane vectors (uniform operands splatted).
  IRMapping table;
  for (auto [operand, lv] : llvm::zip(op->getOperands(), args)) {
    Type t = convertType(operand.getType());
    if (!t)
      return failure();
    if (anyVarying)
      t = VectorType::get({lanes}, t);
    table.map(operand, laneForm(loc, lv, t));
  }
  std::string why;
  cur = &table;
  tiledLanes = anyVarying ? lanes : 0;
  LogicalResult lowered = lowerOp(op, why);
  cur = &mapping;
  tiledLanes = 0;
  if (failed(lowered) || !table.lookupOrNull(result))
    return failure();
  vals[result] = {table.lookup(result), 0};
  return success();
}

} // namespace synpl::l0tollvm
