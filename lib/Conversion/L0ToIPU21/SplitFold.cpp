//===- SplitFold.cpp - A kernel's fold in two stages ----------------------===//
#include "SplitFold.h"
#include "Emit.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace synpl;
using namespace synpl::l0toipu21;

std::optional<Fold> synpl::l0toipu21::findFold(Block &body) {
  SmallVector<l0uop::RangeOp, 3> parallel;
  for (auto range : body.getOps<l0uop::RangeOp>())
    if (range.getKind() != l0uop::RangeKind::loop) {
      if (range.getLower() != 0 || range.getStep() != 1)
        return std::nullopt; // partials are indexed by the RANGEs' values
      parallel.push_back(range);
    }
  std::optional<Fold> best;
  // The prefix: parallel RANGEs and pure UOps only, every parallel RANGE
  // open before the fold starts.
  unsigned openParallel = 0;
  for (Operation &op : body) {
    auto range = dyn_cast<l0uop::RangeOp>(op);
    if (range && range.getKind() != l0uop::RangeKind::loop) {
      ++openParallel;
      continue;
    }
    if (!range) {
      if (isa<l0uop::StoreOp, l0uop::IfOp, l0uop::EndIfOp, l0uop::EndOp, l0uop::ReduceOp,
              l0uop::BarrierOp, l0uop::CustomOp>(op))
        break;
      continue;
    }
    // A loop RANGE directly inside all the parallel RANGEs.
    if (openParallel != parallel.size() || range.getTripCount() < 2)
      break;
    Fold fold;
    fold.range = range;
    fold.parallel = parallel;
    fold.trips = range.getTripCount();
    bool pure = true, closed = false;
    for (Operation *it = op.getNextNode(); it; it = it->getNextNode()) {
      if (auto end = dyn_cast<l0uop::EndOp>(it); end && end.getRange() == range.getResult()) {
        closed = true;
        continue;
      }
      if (!closed) {
        pure &= !isa<l0uop::StoreOp, l0uop::BarrierOp, l0uop::CustomOp>(it);
        continue;
      }
      if (auto reduce = dyn_cast<l0uop::ReduceOp>(it); reduce && reduce.getRange() == range)
        fold.reduces.push_back(reduce);
    }
    bool floats = llvm::all_of(fold.reduces, [](l0uop::ReduceOp r) {
      return r.getType().isF32() || r.getType().isF16();
    });
    if (pure && closed && !fold.reduces.empty() && floats &&
        (!best || best->trips < fold.trips))
      best = fold;
    break; // the body's first loop RANGE ends the prefix
  }
  return best;
}

namespace {
/// A launch axis no parallel RANGE of the fold uses (the groups' RANGE).
l0uop::RangeKind freeAxis(const Fold &fold) {
  for (auto kind : {l0uop::RangeKind::group_y, l0uop::RangeKind::group_z,
                    l0uop::RangeKind::local_y, l0uop::RangeKind::local_z,
                    l0uop::RangeKind::global_y, l0uop::RangeKind::global_z,
                    l0uop::RangeKind::group_x, l0uop::RangeKind::local_x,
                    l0uop::RangeKind::global_x})
    if (llvm::none_of(fold.parallel, [&](l0uop::RangeOp r) { return r.getKind() == kind; }))
      return kind;
  return l0uop::RangeKind::group_y; // nine parallel RANGEs: none is free
}

/// The identity of a REDUCE's op in its float type.
double identityOf(l0uop::ReduceKind kind) {
  switch (kind) {
  case l0uop::ReduceKind::add:
    return 0.0;
  case l0uop::ReduceKind::mul:
    return 1.0;
  case l0uop::ReduceKind::max:
    return -std::numeric_limits<double>::infinity();
  }
  return 0.0;
}

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return l0uop::ConstOp::create(b, loc, b.getIndexType(), b.getIndexAttr(v));
}

/// A uop codelet with an empty body block (finishUOpCodelet sets its code
/// size).
ipu21::CodeletOp newCodelet(OpBuilder &b, Location loc, StringRef name, ArrayRef<Attribute> names,
                            unsigned numInputs) {
  ipu21::CodeletOp codelet = newUOpCodelet(b, loc, name, names, numInputs);
  codelet.getBody().emplaceBlock();
  return codelet;
}

/// Erases the pure UOps nothing uses (the stages' copies of what only the
/// other stage needs), last first.
void eraseDead(Block &block) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block))) {
      if (op.getNumResults() == 0 || !op.use_empty() || isa<l0uop::RangeOp>(op))
        continue;
      op.erase();
      changed = true;
    }
  }
}
} // namespace

TwoStages synpl::l0toipu21::buildTwoStages(OpBuilder &b, Block &body, unsigned numInputs,
                                           ArrayRef<Attribute> fieldNames, const Fold &foldIn,
                                           int64_t groups, StringRef name) {
  Fold fold = foldIn; // op handles: their accessors are not const
  MLIRContext *ctx = b.getContext();
  Location loc = fold.range.getLoc();
  unsigned numArgs = body.getNumArguments();
  int64_t chunk = fold.trips / groups;
  TwoStages out;
  SmallVector<Type> partialBufs;
  for (l0uop::ReduceOp r : fold.reduces) {
    SmallVector<int64_t> shape{groups};
    for (l0uop::RangeOp p : fold.parallel)
      shape.push_back(p.getTripCount());
    out.partials.push_back(RankedTensorType::get(shape, r.getType()));
    partialBufs.push_back(l0uop::BufType::get(ctx, shape, r.getType()));
  }
  SmallVector<Attribute> partialNames;
  for (size_t r = 0; r < fold.reduces.size(); ++r)
    partialNames.push_back(b.getStringAttr("partials" + std::to_string(r)));
  auto partialIndex = [&](OpBuilder &at, Value buf, Value group, const IRMapping &map) {
    SmallVector<Value> idx{group};
    for (l0uop::RangeOp p : fold.parallel)
      idx.push_back(map.lookup(p.getResult()));
    auto elem = cast<l0uop::BufType>(buf.getType()).getElementType();
    return l0uop::IndexOp::create(at, loc, l0uop::PtrType::get(ctx, elem), buf, idx);
  };

  // The first stage: every buffer read, the partials written.
  {
    SmallVector<Attribute> names(fieldNames.begin(), fieldNames.end());
    names.append(partialNames);
    out.first = newCodelet(b, loc, (name + ".fold" + Twine(groups) + ".first.codelet").str(),
                           names, numArgs);
    Block *block = out.first.getUOpBody();
    IRMapping map;
    for (BlockArgument arg : body.getArguments())
      map.map(arg, block->addArgument(arg.getType(), arg.getLoc()));
    SmallVector<Value> partials;
    for (Type t : partialBufs)
      partials.push_back(block->addArgument(t, loc));
    OpBuilder ob = OpBuilder::atBlockEnd(block);
    for (Operation &op : body) {
      if (&op == fold.range.getOperation())
        break;
      ob.clone(op, map);
    }
    Value group = l0uop::RangeOp::create(ob, loc, ob.getIndexType(), int64_t{0}, groups, 1,
                                         freeAxis(fold));
    SmallVector<Value> identities;
    for (l0uop::ReduceOp r : fold.reduces)
      identities.push_back(l0uop::ConstOp::create(
          ob, loc, r.getType(), ob.getFloatAttr(r.getType(), identityOf(r.getKind()))));
    Value base = l0uop::MulOp::create(ob, loc, ob.getIndexType(),
                                      ValueRange{group, indexConst(ob, loc, chunk)});
    Value inner =
        l0uop::RangeOp::create(ob, loc, ob.getIndexType(), int64_t{0}, chunk, 1,
                               l0uop::RangeKind::loop);
    Value k = l0uop::AddOp::create(ob, loc, ob.getIndexType(), ValueRange{base, inner});
    map.map(fold.range.getResult(), k);
    for (Operation *it = fold.range->getNextNode(); it; it = it->getNextNode()) {
      auto end = dyn_cast<l0uop::EndOp>(it);
      if (end && end.getRange() == fold.range.getResult())
        break;
      ob.clone(*it, map);
    }
    l0uop::EndOp::create(ob, loc, inner);
    for (auto [r, reduce] : llvm::enumerate(fold.reduces)) {
      Value sum = l0uop::ReduceOp::create(ob, loc, reduce.getType(), reduce.getKind(),
                                          map.lookup(reduce.getValue()), inner, identities[r]);
      Value ptr = partialIndex(ob, partials[r], group, map);
      l0uop::StoreOp::create(ob, loc, ValueRange{ptr, sum});
    }
    l0uop::EndOp::create(ob, loc, group);
    for (l0uop::RangeOp p : llvm::reverse(fold.parallel))
      l0uop::EndOp::create(ob, loc, map.lookup(p.getResult()));
    eraseDead(*block);
    finishUOpCodelet(out.first);
  }

  // The second stage: the kernel's inputs and the partials read, its
  // outputs written.
  {
    SmallVector<Attribute> names(fieldNames.begin(), fieldNames.begin() + numInputs);
    names.append(partialNames);
    names.append(fieldNames.begin() + numInputs, fieldNames.end());
    out.second = newCodelet(b, loc, (name + ".fold" + Twine(groups) + ".second.codelet").str(),
                            names, numInputs + static_cast<unsigned>(fold.reduces.size()));
    Block *block = out.second.getUOpBody();
    IRMapping map;
    for (BlockArgument arg : body.getArguments().take_front(numInputs))
      map.map(arg, block->addArgument(arg.getType(), arg.getLoc()));
    SmallVector<Value> partials;
    for (Type t : partialBufs)
      partials.push_back(block->addArgument(t, loc));
    for (BlockArgument arg : body.getArguments().drop_front(numInputs))
      map.map(arg, block->addArgument(arg.getType(), arg.getLoc()));
    OpBuilder ob = OpBuilder::atBlockEnd(block);
    for (Operation &op : body) {
      if (&op == fold.range.getOperation())
        break;
      ob.clone(op, map);
    }
    Value group =
        l0uop::RangeOp::create(ob, loc, ob.getIndexType(), int64_t{0}, groups, 1,
                               l0uop::RangeKind::loop);
    SmallVector<Value> values;
    for (auto [r, reduce] : llvm::enumerate(fold.reduces))
      values.push_back(l0uop::LoadOp::create(ob, loc, reduce.getType(),
                                             ValueRange{partialIndex(ob, partials[r], group, map)}));
    l0uop::EndOp::create(ob, loc, group);
    for (auto [r, reduce] : llvm::enumerate(fold.reduces))
      map.map(reduce.getResult(),
              l0uop::ReduceOp::create(ob, loc, reduce.getType(), reduce.getKind(), values[r],
                                      group, map.lookup(reduce.getInit())));
    bool after = false;
    for (Operation &op : body) {
      if (auto end = dyn_cast<l0uop::EndOp>(op); end && end.getRange() == fold.range.getResult()) {
        after = true;
        continue;
      }
      if (!after || llvm::is_contained(fold.reduces, dyn_cast<l0uop::ReduceOp>(op)))
        continue;
      ob.clone(op, map);
    }
    eraseDead(*block);
    finishUOpCodelet(out.second);
  }
  return out;
}
