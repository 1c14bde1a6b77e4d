//===- TilePlan.cpp - Which kernels the tiled lowering takes, and how -----===//
//
// matchTile() decides whether a kernel is matmul-shaped (RANGE i, the split
// range, around RANGE j, both over threads, around loop RANGEs folded by
// REDUCEs and straight-line code) and plans its tiled lowering: the lanes
// and rows of a block, the k blocks, the loads packed into lane panels and
// row arrays. TiledKernel.cpp emits what it plans.
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"

#include <numeric>

namespace synpl::l0tollvm {

static bool isParallel(RangeOp r) { return r.getKind() != RangeKind::loop; }

/// The longest k block (a 16-lane panel of it: 16 KiB of f32). A longer k
/// loop runs in blocks where L1 requires it, and a group-shared lane load
/// of one is packed per row group.
constexpr int64_t kMaxKBlock = 256;

/// How far apart, in elements, the addresses of `slice`'s load (its last
/// op) are for consecutive values of `var`, the other range variables held
/// at 0: the slice's index arithmetic (CONST, INDEX, ADD, MUL, NEG) run on
/// integers. None when an op is anything else.
static std::optional<int64_t> elementStep(ArrayRef<Operation *> slice, Value var) {
  auto offsetAt = [&](int64_t at) -> std::optional<int64_t> {
    llvm::DenseMap<Value, int64_t> known;
    auto valueOf = [&](Value v) -> int64_t {
      if (v == var)
        return at;
      auto it = known.find(v);
      return it == known.end() ? 0 : it->second; // another range variable
    };
    std::optional<int64_t> offset;
    for (Operation *op : slice) {
      if (auto c = dyn_cast<ConstOp>(op)) {
        std::optional<int64_t> i = integerConstant(c.getResult());
        if (!i)
          return std::nullopt;
        known[c.getResult()] = *i;
      } else if (isa<AddOp>(op)) {
        known[op->getResult(0)] = valueOf(op->getOperand(0)) + valueOf(op->getOperand(1));
      } else if (isa<MulOp>(op)) {
        known[op->getResult(0)] = valueOf(op->getOperand(0)) * valueOf(op->getOperand(1));
      } else if (isa<NegOp>(op)) {
        known[op->getResult(0)] = -valueOf(op->getOperand(0));
      } else if (auto index = dyn_cast<IndexOp>(op)) {
        auto buf = dyn_cast<BufType>(index.getBuffer().getType());
        if (!buf || buf.getShape().size() != index.getIndices().size())
          return std::nullopt;
        int64_t linear = 0, stride = 1;
        for (int64_t d = buf.getShape().size() - 1; d >= 0; --d) {
          linear += valueOf(index.getIndices()[d]) * stride;
          stride *= buf.getShape()[d];
        }
        known[index.getResult()] = linear;
        offset = linear;
      } else if (!isa<LoadOp>(op)) {
        return std::nullopt;
      }
    }
    return offset;
  };
  std::optional<int64_t> at0 = offsetAt(0), at1 = offsetAt(1);
  if (!at0 || !at1)
    return std::nullopt;
  return *at1 - *at0;
}

std::optional<TilePlan> matchTile(KernelOp kernel, SplitInfo split,
                                  unsigned lanes, unsigned maxRows) {
  if (!split.range || lanes < 2 || maxRows < 1 ||
      !kernel.getSharedArgs().empty())
    return std::nullopt;
  // [straight-line ops] RANGE i [straight-line ops] RANGE j ... END j
  // END i: the straight-line ops (no STORE) around the RANGEs are pure, so
  // they may run again in every block; they open the lane body.
  SmallVector<Operation *> ops, prefix;
  for (Operation &op : kernel.getBody().front())
    ops.push_back(&op);
  RangeOp outer = split.range, inner;
  size_t n = 0;
  auto straight = [](Operation *op) {
    return !isa<RangeOp, EndOp, ReduceOp, StoreOp, IfOp, EndIfOp, BarrierOp,
                CustomOp>(op);
  };
  for (; n < ops.size() && ops[n] != outer.getOperation(); ++n)
    if (straight(ops[n]))
      prefix.push_back(ops[n]);
    else
      return std::nullopt;
  for (++n; n < ops.size() && !isa<RangeOp>(ops[n]); ++n)
    if (straight(ops[n]))
      prefix.push_back(ops[n]);
    else
      return std::nullopt;
  if (n + 3 > ops.size())
    return std::nullopt;
  inner = dyn_cast<RangeOp>(ops[n]);
  auto endInner = dyn_cast<EndOp>(ops[ops.size() - 2]);
  auto endOuter = dyn_cast<EndOp>(ops.back());
  if (!isParallel(outer) || !inner || !isParallel(inner) || !endInner ||
      !endOuter || endInner.getRange() != inner.getResult() ||
      endOuter.getRange() != outer.getResult() || inner.getTripCount() < 1 ||
      outer.getTripCount() < 1)
    return std::nullopt;
  TilePlan plan;
  plan.rows = outer;
  plan.lanes = inner;
  plan.laneCount = lanes;
  plan.varying.insert(inner.getResult());
  plan.rowDependent.insert(outer.getResult());
  plan.body.assign(prefix.begin(), prefix.end());
  plan.body.append(ops.begin() + n + 1, ops.end() - 2);
  RangeOp open;
  unsigned maxReduces = 0;
  llvm::DenseMap<Operation *, Operation *> rangeOf; // op -> its k RANGE
  llvm::DenseMap<Operation *, unsigned> position;
  // Loads and stores move whole bytes per lane (a vector of i1 is packed).
  auto byteSized = [](Type t) {
    return t.isIntOrIndexOrFloat() && !t.isIndex() &&
           t.getIntOrFloatBitWidth() % 8 == 0;
  };
  for (Operation *op : plan.body) {
    for (Type t : op->getResultTypes())
      if (isa<VectorType>(t))
        return std::nullopt;
    bool vary = false, rowDep = false;
    for (Value v : op->getOperands()) {
      if (isa<VectorType>(v.getType()))
        return std::nullopt;
      vary |= plan.varying.contains(v);
      rowDep |= plan.rowDependent.contains(v);
    }
    position[op] = position.size();
    if (open)
      rangeOf[op] = open;
    if (auto r = dyn_cast<RangeOp>(op)) {
      if (open || isParallel(r))
        return std::nullopt;
      open = r;
    } else if (auto e = dyn_cast<EndOp>(op)) {
      if (!open || e.getRange() != open.getResult())
        return std::nullopt;
      open = RangeOp();
    } else if (auto reduce = dyn_cast<ReduceOp>(op)) {
      Operation *range = reduce.getRange().getDefiningOp();
      if (open || !range)
        return std::nullopt;
      auto &list = plan.reducesOf[range];
      list.push_back(reduce);
      maxReduces = std::max<unsigned>(maxReduces, list.size());
      if (Operation *init = reduce.getInit().getDefiningOp();
          init && init->getBlock() == range->getBlock() &&
          init->isBeforeInBlock(range))
        plan.initFirst.insert(reduce);
    } else if (isa<StoreOp>(op)) {
      // An i1 (a mask kept for the backward pass) is stored as a byte.
      if (open || op->getNumOperands() != 2 ||
          !(byteSized(op->getOperand(1).getType()) ||
            op->getOperand(1).getType().isInteger(1)))
        return std::nullopt;
    } else if (isa<LoadOp>(op)) {
      // An i1 (a mask) is loaded from its byte.
      if (!byteSized(op->getResult(0).getType()) &&
          !op->getResult(0).getType().isInteger(1))
        return std::nullopt;
    } else if (isa<ModOp, DivOp>(op)) {
      // Masked-off lanes could divide by zero.
      if (vary && !dividesByNonZeroConstant(op))
        return std::nullopt;
    } else if (!isa<ConstOp, IndexOp, AddOp, MulOp, MulAccOp, NegOp,
                    ReciprocalOp, MaxOp, CmpLtOp, CmpNeOp, WhereOp, Exp2Op,
                    Log2Op, SinOp, SqrtOp, CastOp>(op)) {
      return std::nullopt;
    }
    for (Value r : op->getResults()) {
      if (vary)
        plan.varying.insert(r);
      if (rowDep)
        plan.rowDependent.insert(r);
    }
  }
  if (open || maxReduces == 0)
    return std::nullopt;
  {
    RangeOp only;
    unsigned loops = 0;
    bool storeFirst = false;
    for (Operation *op : plan.body) {
      if (auto r = dyn_cast<RangeOp>(op)) {
        only = r;
        ++loops;
      }
      storeFirst |= isa<StoreOp>(op) && loops == 0;
    }
    if (loops == 1 && !storeFirst)
      plan.blockable = only;
  }
  // The ops that compute `load`'s address from `iv` (j or i), its k
  // RANGE's variable, CONSTs and the k body's index arithmetic, in body
  // order with the load last; nothing when it needs anything else.
  // With `row` (a group-shared load), also from i through the quotients
  // and index arithmetic that make it group-shared, wherever they are.
  auto addressSlice = [&](Operation *load, RangeOp range, Value iv,
                          Value row = Value())
      -> std::optional<SmallVector<Operation *>> {
    SmallVector<Operation *> slice{load};
    llvm::DenseSet<Operation *> seen{load};
    for (size_t n = 0; n < slice.size(); ++n)
      for (Value v : slice[n]->getOperands()) {
        if (isa<BufType>(v.getType()) || v == iv || v == range.getResult() ||
            (row && v == row))
          continue;
        Operation *def = v.getDefiningOp();
        bool viaGroup = row && plan.groupShared.contains(v) &&
                        isa<DivOp, AddOp, MulOp>(def);
        if (!def || !position.count(def) ||
            (!isa<ConstOp>(def) && !viaGroup &&
             (rangeOf.lookup(def) != range.getOperation() ||
              !isa<IndexOp, AddOp, MulOp, NegOp>(def))))
          return std::nullopt;
        if (seen.insert(def).second)
          slice.push_back(def);
      }
    llvm::sort(slice, [&](Operation *x, Operation *y) {
      return position[x] < position[y];
    });
    return slice;
  };
  // Accumulators fill at most 12 of the 16 ymm registers (8 f32 each); the
  // rest hold the shared lane vector and a broadcast.
  auto rowsFor = [&](unsigned laneCount) {
    unsigned regsPerRow = std::max(1u, laneCount / 8) * maxReduces;
    return std::clamp(12u / regsPerRow, 1u, maxRows);
  };
  plan.rowCount = rowsFor(lanes);
  // Fewer rows than a block holds (a column sum over the batch: one row):
  // the accumulators a block would give the missing rows go to more lanes
  // instead, so that as many independent fma chains hide the latency (each
  // element still folds its k in order). Powers of two, up to the lanes
  // there are.
  int64_t tripI = outer.getTripCount(), tripJ = inner.getTripCount();
  while (tripI * 2 <= int64_t(plan.rowCount) && int64_t(lanes) * 2 <= tripJ &&
         (lanes * 2 / 8) * maxReduces * tripI <= 12) {
    lanes *= 2;
    plan.rowCount = rowsFor(lanes);
  }
  plan.laneCount = lanes;
  // k blocks: a k loop longer than kMaxKBlock iterations runs in blocks of
  // at most that when a lane panel and a row block of its whole length (trip x
  // (lanes + rows) f32) would not stay in L1 together across row blocks:
  // more than 7/8 of a 32 KiB L1D. A 384-long loop of 16 lanes and 6 rows
  // (33 KiB) ran 10-15% slower whole; a 288-long one (25 KiB; the CNN's
  // second convolution) ran 6% faster whole than in two blocks, whose row
  // panels are copied first.
  if (plan.blockable && plan.blockable.getTripCount() > kMaxKBlock) {
    constexpr int64_t kL1Budget = 32 * 1024 * 7 / 8;
    int64_t trip = plan.blockable.getTripCount();
    if (trip * int64_t(plan.laneCount + plan.rowCount) * 4 > kL1Budget) {
      int64_t blocks = (trip + kMaxKBlock - 1) / kMaxKBlock;
      plan.kBlock = (trip + blocks - 1) / blocks;
    }
  }
  // Row groups: how each value that depends on i does so -- only through
  // quotients i / C (the gcd of those C), or through i itself (0).
  if (outer.getLower() == 0 && outer.getStep() == 1) {
    llvm::DenseMap<Value, int64_t> groupOf;
    for (Operation *op : plan.body) {
      if (op->getNumResults() != 1 || !plan.rowDependent.contains(op->getResult(0)))
        continue;
      int64_t g = -1; // no row-dependent operand seen yet
      if (isa<DivOp>(op) && op->getOperand(0) == outer.getResult())
        g = std::max<int64_t>(0, integerConstant(op->getOperand(1)).value_or(0));
      else
        for (Value v : op->getOperands()) {
          if (!plan.rowDependent.contains(v))
            continue;
          int64_t d = groupOf.lookup(v); // 0 for i itself
          g = d == 0 ? 0 : g < 0 ? d : std::gcd(g, d);
          if (g == 0)
            break;
        }
      groupOf[op->getResult(0)] = std::max<int64_t>(g, 0);
    }
    // The group: the gcd over the lane loads that depend on i only through
    // quotients; worth it when a group holds at least two row blocks.
    int64_t group = 0;
    for (Operation *op : plan.body)
      if (isa<LoadOp>(op) && plan.varying.contains(op->getResult(0)))
        if (int64_t g = groupOf.lookup(op->getResult(0)))
          group = std::gcd(group, g);
    if (group >= 2 * int64_t(plan.rowCount) && group < tripI) {
      plan.rowGroup = group;
      for (auto [v, g] : groupOf)
        if (g > 0 && g % group == 0)
          plan.groupShared.insert(v);
    }
  }
  // Loads to pack: varying, independent of i, addressed from j, k and
  // constants alone; at most 4 panels of at most 128 KiB. Not when one row
  // block takes all the rows: nothing would read a panel twice.
  for (Operation *op : plan.body) {
    if (tripI <= int64_t(plan.rowCount))
      break;
    auto range = dyn_cast_or_null<RangeOp>(rangeOf.lookup(op));
    // A group-shared load is packed per row group where its k loop is long
    // (its lanes of a whole k range read straight from rows a row of B
    // apart would not stay in L1 across the group's row blocks); a short
    // one (attention's k of a head's width) is read in place.
    bool perGroup = isa<LoadOp>(op) && range &&
                    plan.groupShared.contains(op->getResult(0)) &&
                    range.getTripCount() > kMaxKBlock;
    if (!isa<LoadOp>(op) || !range || !plan.varying.contains(op->getResult(0)) ||
        (plan.rowDependent.contains(op->getResult(0)) && !perGroup) ||
        plan.packs.size() >= 4 || !byteSized(op->getResult(0).getType()))
      continue;
    unsigned bytes = op->getResult(0).getType().getIntOrFloatBitWidth() / 8;
    int64_t rows = range.getTripCount();
    if (plan.kBlock)
      rows = std::min(rows, plan.kBlock);
    if (rows * lanes * bytes > 128 * 1024)
      continue;
    std::optional<SmallVector<Operation *>> slice = addressSlice(
        op, range, inner.getResult(), perGroup ? outer.getResult() : Value());
    if (!slice)
      continue;
    plan.groupPacks |= perGroup;
    plan.packOf[op] = plan.packs.size();
    plan.packs.push_back({op, range, std::move(*slice)});
  }
  // Row loads to pack (see TilePlan::rowPacks): of the blockable k loop,
  // the same in every lane, addressed from i, k and constants, from a
  // buffer no STORE of the kernel writes; at most 2.
  llvm::DenseSet<Value> stored;
  bool storesKnown = true; // every STORE's buffer is known
  for (Operation *op : plan.body)
    if (isa<StoreOp>(op)) {
      if (auto index = op->getOperand(0).getDefiningOp<IndexOp>())
        stored.insert(index.getBuffer());
      else
        storesKnown = false;
    }
  for (Operation *op : plan.body) {
    auto range = dyn_cast_or_null<RangeOp>(rangeOf.lookup(op));
    if (!plan.kBlock || !storesKnown || !isa<LoadOp>(op) ||
        range != plan.blockable ||
        plan.varying.contains(op->getResult(0)) ||
        !plan.rowDependent.contains(op->getResult(0)) ||
        plan.rowPacks.size() >= 2 || !byteSized(op->getResult(0).getType()))
      continue;
    auto index = op->getOperand(0).getDefiningOp<IndexOp>();
    if (!index || stored.contains(index.getBuffer()))
      continue;
    std::optional<SmallVector<Operation *>> slice =
        addressSlice(op, range, outer.getResult());
    if (!slice)
      continue;
    std::optional<int64_t> alongRows = elementStep(*slice, outer.getResult());
    std::optional<int64_t> alongK = elementStep(*slice, range.getResult());
    // Per iteration, not per value of the variables (a RANGE may step).
    bool kMajor = alongRows && alongK && *alongRows * outer.getStep() == 1 &&
                  *alongK * range.getStep() != 1;
    // Adjacent along the rows and at most a page apart along k (A^T of a
    // weight gradient, X of [k, rows]): each k iteration's rows already
    // lie in order, so the row blocks read them in place -- a copy would
    // only add a pass over them (10-18% of the character model's and the
    // CNN's weight gradients). Further apart, a k-major array keeps a k
    // block's slice in a few pages.
    int64_t bytes = op->getResult(0).getType().getIntOrFloatBitWidth() / 8;
    if (kMajor && std::abs(*alongK * range.getStep()) * bytes <= 4096)
      continue;
    plan.rowPackOf[op] = plan.rowPacks.size();
    plan.rowPacks.push_back({op, range, std::move(*slice)});
    plan.rowPacks.back().kMajor = kMajor;
  }
  return plan;
}

} // namespace synpl::l0tollvm
