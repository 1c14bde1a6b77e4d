//===- BlockReduce.cpp - Reductions of a row spread over a block's threads ===//
//
// L1 -> L0 emits a reduction as one thread per output row that folds the
// whole reduced axis in a loop (REDUCE over a loop RANGE): right for a CPU,
// where a thread is a core, but on a GPU it leaves a reduction of 128 rows
// of 256 elements to 128 threads of one block, each walking 256 loads one
// after another. This pass rewrites such a kernel so that each row is a
// block and the block's T threads share its loop (thread t takes iterations
// t, t + T, ...), then combine their partial results through shared memory
// in log2(T) barrier-separated halvings; thread 0 applies the REDUCE's init
// and runs what the kernel did with the result. Everything stays UOps: the
// rewritten kernel verifies (L0.1) and runs on every backend.
//
// The combination order changes (a tree instead of a left fold), so float
// results differ in their last bits; integer results do not.
//
//===----------------------------------------------------------------------===//
#include "synpl/Transforms/Passes.h"

#include "synpl/Dialect/L0UOp/L0UOpOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

namespace synpl {
#define GEN_PASS_DEF_L0BLOCKREDUCE
#include "synpl/Transforms/Passes.h.inc"
} // namespace synpl

using namespace mlir;
using namespace synpl;
using namespace synpl::l0uop;

namespace {

bool isParallel(RangeKind k) { return k != RangeKind::loop; }

/// The shape this pass takes: top-level pure ops, then one parallel RANGE
/// (the rows) whose body is pure ops, one loop RANGE (flat body, no
/// stores) folded by REDUCEs, and then anything but RANGEs and BARRIERs.
/// Without the parallel RANGE (a whole-buffer reduction, one thread) the
/// kernel is one row.
struct Match {
  RangeOp rows, loop;
  SmallVector<Operation *> outside, pre, body, post;
  SmallVector<ReduceOp> reduces;
};

/// Why `kernel` does not have the shape (empty: it has).
std::string match(KernelOp kernel, Match &m) {
  Block &block = kernel.getBody().front();
  if (!kernel.getSharedArgs().empty())
    return "it already has shared buffers";
  enum { Outside, Pre, Body, Post, After } where = Outside;
  for (Operation &op : block) {
    switch (where) {
    case Outside:
      if (auto r = dyn_cast<RangeOp>(op)) {
        if (!isParallel(r.getKind())) {
          // One row: the whole kernel is the loop and what follows it.
          m.loop = r;
          where = Body;
          break;
        }
        m.rows = r;
        where = Pre;
      } else if (!isPure(&op)) {
        return "it has a side effect outside its RANGEs";
      } else {
        m.outside.push_back(&op);
      }
      break;
    case Pre:
      if (auto r = dyn_cast<RangeOp>(op)) {
        if (isParallel(r.getKind()))
          return "it has more than one parallel RANGE";
        m.loop = r;
        where = Body;
      } else if (isa<EndOp>(op)) {
        return "its rows reduce nothing";
      } else if (!isPure(&op) || isa<IfOp, EndIfOp, ReduceOp>(op)) {
        return "the rows do more than pure arithmetic before the loop";
      } else {
        m.pre.push_back(&op);
      }
      break;
    case Body:
      if (auto e = dyn_cast<EndOp>(op)) {
        if (e.getRange() != m.loop.getResult())
          return "the loop is not closed first";
        where = Post;
      } else if (isa<RangeOp, IfOp, EndIfOp, BarrierOp, StoreOp, CustomOp,
                     ReduceOp>(op)) {
        return "the loop body is not flat, side-effect-free code";
      } else {
        m.body.push_back(&op);
      }
      break;
    case Post:
      if (auto e = dyn_cast<EndOp>(op)) {
        if (!m.rows || e.getRange() != m.rows.getResult())
          return "a RANGE is left open";
        where = After;
      } else if (isa<RangeOp, BarrierOp>(op)) {
        return "there is more than one loop in a row";
      } else {
        if (auto r = dyn_cast<ReduceOp>(op)) {
          if (r.getRange() != m.loop.getResult())
            return "a REDUCE folds another RANGE";
          if (!r.getType().isIntOrFloat())
            return "a REDUCE folds vectors or indices (a shared buffer holds "
                   "integers or floats)";
          m.reduces.push_back(r);
        }
        m.post.push_back(&op);
      }
      break;
    case After:
      return "ops follow the rows' RANGE";
    }
  }
  if (where != After && !(where == Post && !m.rows))
    return "it is not one parallel RANGE around one loop";
  if (m.reduces.empty())
    return "nothing is reduced over the loop";
  return "";
}

struct L0BlockReducePass
    : public synpl::impl::L0BlockReduceBase<L0BlockReducePass> {
  using Base::Base;

  /// The identity of `kind` on t (-inf for float max; the smallest value
  /// for integer max).
  Value identity(OpBuilder &b, Location loc, ReduceKind kind, Type t) {
    if (auto f = dyn_cast<FloatType>(t)) {
      double v = kind == ReduceKind::add ? 0.0
                 : kind == ReduceKind::mul
                     ? 1.0
                     : -std::numeric_limits<double>::infinity();
      return ConstOp::create(b, loc, t, b.getFloatAttr(f, v));
    }
    auto it = cast<IntegerType>(t);
    APInt v(it.getWidth(), kind == ReduceKind::mul ? 1 : 0);
    if (kind == ReduceKind::max && !it.isUnsigned())
      v = APInt::getSignedMinValue(it.getWidth());
    return ConstOp::create(b, loc, t, b.getIntegerAttr(t, v));
  }

  Value combine(OpBuilder &b, Location loc, ReduceKind kind, Value x, Value y) {
    Type t = x.getType();
    switch (kind) {
    case ReduceKind::add:
      return AddOp::create(b, loc, t, ValueRange{x, y});
    case ReduceKind::mul:
      return MulOp::create(b, loc, t, ValueRange{x, y});
    case ReduceKind::max:
      return MaxOp::create(b, loc, t, ValueRange{x, y});
    }
    return x;
  }

  Value index(OpBuilder &b, Location loc, int64_t v) {
    return ConstOp::create(b, loc, b.getIndexType(), b.getIndexAttr(v));
  }

  void rewrite(KernelOp kernel, Match &m, int64_t threads) {
    MLIRContext *ctx = kernel.getContext();
    Block &old = kernel.getBody().front();
    auto *fresh = new Block();
    IRMapping map;
    for (BlockArgument a : old.getArguments())
      map.map(a, fresh->addArgument(a.getType(), a.getLoc()));
    SmallVector<Value> shared;
    int64_t sharedBytes = 0;
    for (ReduceOp r : m.reduces) {
      Type t = r.getType();
      auto buf = BufType::get(ctx, {threads}, t);
      shared.push_back(fresh->addArgument(buf, r.getLoc()));
      int64_t eb = t.isIndex() ? 8 : std::max<int64_t>(1, t.getIntOrFloatBitWidth() / 8);
      sharedBytes += llvm::alignTo(threads * eb, 16);
    }
    OpBuilder b(ctx);
    b.setInsertionPointToEnd(fresh);
    for (Operation *op : m.outside)
      b.clone(*op, map);
    // One block per row, `threads` threads per block.
    Location loc = (m.rows ? m.rows : m.loop).getLoc();
    Value row;
    if (m.rows) {
      row = RangeOp::create(b, loc, b.getIndexType(), m.rows.getLower(),
                            m.rows.getUpper(), m.rows.getStep(),
                            RangeKind::group_x);
      map.map(m.rows.getResult(), row);
    }
    Value tid = RangeOp::create(b, loc, b.getIndexType(), int64_t{0}, threads,
                                int64_t{1}, RangeKind::local_x);
    for (Operation *op : m.pre)
      b.clone(*op, map);
    // Thread t's share of the loop: iterations t, t + T, ... (a clamped
    // index past the end, whose value the identity replaces).
    Location lloc = m.loop.getLoc();
    int64_t trip = m.loop.getTripCount();
    int64_t rounds = llvm::divideCeil(trip, threads);
    Value T = index(b, lloc, threads), last = index(b, lloc, trip - 1),
          count = index(b, lloc, trip);
    SmallVector<Value> ids;
    for (ReduceOp r : m.reduces)
      ids.push_back(identity(b, r.getLoc(), r.getKind(), r.getType()));
    Type idx = b.getIndexType();
    Value round = RangeOp::create(b, lloc, idx, int64_t{0}, rounds, int64_t{1},
                                  RangeKind::loop);
    Value it = AddOp::create(b, lloc, idx,
                             ValueRange{MulOp::create(b, lloc, idx, ValueRange{round, T}), tid});
    Value in = CmpLtOp::create(b, lloc, b.getI1Type(), ValueRange{it, count});
    Value clamped = WhereOp::create(b, lloc, idx, ValueRange{in, it, last});
    Value k = clamped;
    if (m.loop.getStep() != 1)
      k = MulOp::create(b, lloc, idx,
                        ValueRange{k, index(b, lloc, m.loop.getStep())});
    if (m.loop.getLower() != 0)
      k = AddOp::create(b, lloc, idx,
                        ValueRange{k, index(b, lloc, m.loop.getLower())});
    map.map(m.loop.getResult(), k);
    for (Operation *op : m.body)
      b.clone(*op, map);
    SmallVector<Value> masked;
    for (auto [r, id] : llvm::zip(m.reduces, ids))
      masked.push_back(WhereOp::create(b, r.getLoc(), r.getType(),
                                       ValueRange{in, map.lookup(r.getValue()), id}));
    EndOp::create(b, lloc, round);
    // Partial results into shared memory, then halvings.
    auto ptrOf = [&](Value buf, Value i) -> Value {
      Type e = cast<BufType>(buf.getType()).getElementType();
      return IndexOp::create(b, loc, PtrType::get(ctx, e), buf, ValueRange{i});
    };
    for (auto [r, v, id, s] : llvm::zip(m.reduces, masked, ids, shared)) {
      Value partial = ReduceOp::create(b, r.getLoc(), r.getType(), r.getKind(),
                                       v, round, id);
      StoreOp::create(b, r.getLoc(), ValueRange{ptrOf(s, tid), partial});
    }
    BarrierOp::create(b, loc);
    for (int64_t half = threads / 2; half >= 1; half /= 2) {
      Value h = index(b, loc, half);
      IfOp::create(b, loc, CmpLtOp::create(b, loc, b.getI1Type(), ValueRange{tid, h}));
      // t + half < T under the IF; the MOD (a no-op there) lets row L0.1's
      // range analysis, which does not follow IFs, see the bound.
      Value other = ModOp::create(
          b, loc, idx,
          ValueRange{AddOp::create(b, loc, idx, ValueRange{tid, h}), T});
      for (auto [r, s] : llvm::zip(m.reduces, shared)) {
        Value mine = LoadOp::create(b, loc, r.getType(), ValueRange{ptrOf(s, tid)});
        Value theirs = LoadOp::create(b, loc, r.getType(), ValueRange{ptrOf(s, other)});
        StoreOp::create(b, loc, ValueRange{ptrOf(s, tid),
                                           combine(b, loc, r.getKind(), mine, theirs)});
      }
      EndIfOp::create(b, loc);
      BarrierOp::create(b, loc);
    }
    // Thread 0: init op total, then the rest of the row.
    IfOp::create(b, loc, CmpLtOp::create(b, loc, b.getI1Type(),
                                          ValueRange{tid, index(b, loc, 1)}));
    Value zero = index(b, loc, 0);
    for (Operation *op : m.post) {
      auto r = dyn_cast<ReduceOp>(op);
      if (!r) {
        b.clone(*op, map);
        continue;
      }
      unsigned i = llvm::find(m.reduces, r) - m.reduces.begin();
      Value total = LoadOp::create(b, r.getLoc(), r.getType(),
                                   ValueRange{ptrOf(shared[i], zero)});
      map.map(r.getResult(), combine(b, r.getLoc(), r.getKind(),
                                     map.lookup(r.getInit()), total));
    }
    EndIfOp::create(b, loc);
    EndOp::create(b, loc, tid);
    if (row)
      EndOp::create(b, loc, row);

    // Swap the bodies; the launch follows the new RANGEs. (The match's ops
    // live in the old body: read what is needed of them first.)
    int64_t rows = m.rows ? m.rows.getTripCount() : int64_t{1};
    for (Operation &op : old)
      op.dropAllReferences();
    kernel.getBody().getBlocks().clear();
    kernel.getBody().push_back(fresh);
    Builder attrs(ctx);
    kernel.setGridAttr(attrs.getDenseI64ArrayAttr({rows, 1, 1}));
    kernel.setBlockAttr(attrs.getDenseI64ArrayAttr({threads, 1, 1}));
    kernel.setSharedMemAttr(attrs.getI64IntegerAttr(sharedBytes));
  }

  void runOnOperation() override {
    unsigned rewritten = 0;
    getOperation().walk([&](PlanOp plan) {
      SymbolTable planSymbols(plan);
      for (KernelOp kernel :
           llvm::make_early_inc_range(plan.getBody().front().getOps<KernelOp>())) {
        if (kernel.getBody().front().empty())
          continue; // already lowered
        if (deviceOnly && !kernel.isDeviceKernel(planSymbols))
          continue;
        Match m;
        std::string why = match(kernel, m);
        if (!why.empty())
          continue;
        int64_t trip = m.loop.getTripCount();
        if (trip < (int64_t)minLoop)
          continue;
        int64_t threads = std::min<int64_t>(
            llvm::PowerOf2Ceil(std::max<int64_t>(trip, 32)), maxThreads);
        rewrite(kernel, m, threads);
        ++rewritten;
      }
    });
    if (summary)
      getOperation().emitRemark() << "block-reduce: " << rewritten
                                  << " kernels spread over a block per row";
  }
};

} // namespace
