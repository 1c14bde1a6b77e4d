//===- TiledKernel.cpp - The tiled lowering of matmul-shaped kernels ------===//
//
// A kernel whose body is RANGE i (the split range) around RANGE j, both
// over threads, around loop RANGEs folded by REDUCEs and straight-line
// code, is vectorised over j and register-blocked over i (see the
// ConvertL0UOpToLLVM pass description): matchTile() (TilePlan.cpp) decides
// and plans, KernelBuilder::buildTiled() emits, each UOp in its lane form
// from lowerTiledOp() (TiledOps.cpp).
//
//===----------------------------------------------------------------------===//
#include "KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace synpl::l0tollvm {

LogicalResult KernelBuilder::emitBlock(const TilePlan &plan, Value firstRow,
                                       unsigned numRows, Value firstLane,
                                       Value mask) {
  Location loc = plan.lanes.getLoc();
  unsigned lanes = plan.laneCount;
  SmallVector<LaneMap> rows(numRows);
  Value lane0 = rangeValue(loc, plan.lanes, firstLane);
  rowPanelStarts.assign(plan.rowPacks.size(), {});
  for (unsigned r = 0; r < numRows; ++r) {
    Value it = r == 0 ? firstRow
                      : Value(arith::AddIOp::create(b, loc, firstRow,
                                                    i64Const(loc, r)));
    rows[r][plan.rows.getResult()] = {rangeValue(loc, plan.rows, it), 0};
    rows[r][plan.lanes.getResult()] = {lane0, plan.lanes.getStep()};
    if (kblock && !rowPanels.empty()) {
      Value offset = arith::SubIOp::create(b, loc, it, kblock->panelLo);
      for (auto [p, pack] : llvm::enumerate(plan.rowPacks))
        rowPanelStarts[p].push_back(
            pack.kMajor ? offset
                        : Value(arith::MulIOp::create(b, loc, offset,
                                                      i64Const(loc, kblock->rowStride))));
    }
  }
  // Accumulator type of a REDUCE: a lane vector when it varies.
  auto accType = [&](ReduceOp reduce) -> Type {
    Type t = convertType(reduce.getType());
    if (t && plan.varying.contains(reduce.getResult()))
      t = VectorType::get({lanes}, t);
    return t;
  };
  llvm::DenseMap<std::pair<Operation *, unsigned>, Value> folded;
  ArrayRef<Operation *> ops = plan.body;
  for (size_t n = 0; n < ops.size(); ++n) {
    Operation *op = ops[n];
    if (auto range = dyn_cast<RangeOp>(op)) {
      Location l = range.getLoc();
      SmallVector<ReduceOp> reduces = plan.reducesOf.lookup(range);
      SmallVector<Value> inits;
      auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
      // The slot of row r's accumulator of REDUCE #ri in a k block.
      auto accSlot = [&](unsigned ri, unsigned r, Type t) -> Value {
        Value row = arith::SubIOp::create(
            b, l, arith::AddIOp::create(b, l, firstRow, i64Const(l, r)),
            kblock->panelLo);
        Value offset = arith::MulIOp::create(b, l, row, i64Const(l, lanes));
        if (kblock->laneBase)
          offset = arith::AddIOp::create(b, l, offset, kblock->laneBase);
        return LLVM::GEPOp::create(b, l, ptrTy, elementOf(t),
                                   kblock->accs[ri], ValueRange{offset});
      };
      for (auto [ri, reduce] : llvm::enumerate(reduces)) {
        Type t = accType(reduce);
        if (!t)
          return failure();
        for (unsigned r = 0; r < numRows; ++r) {
          if (kblock && kblock->load) {
            inits.push_back(LLVM::LoadOp::create(b, l, t, accSlot(ri, r, t),
                                                 elementAlign(t)));
            continue;
          }
          if (!plan.initFirst.contains(reduce)) {
            inits.push_back(identity(l, reduce.getKind(), t));
            continue;
          }
          auto it = rows[r].find(reduce.getInit());
          if (it == rows[r].end())
            return failure();
          inits.push_back(laneForm(l, it->second, t));
        }
      }
      Value lb = i64Const(l, range.getLower());
      int64_t step = range.getStep(), count = range.getTripCount();
      if (kblock) {
        lb = arith::AddIOp::create(
            b, l, lb,
            arith::MulIOp::create(b, l, kblock->first, i64Const(l, step)));
        count = kblock->count;
      }
      size_t bodyBegin = n + 1, bodyEnd = bodyBegin;
      while (bodyEnd < ops.size() && !isa<EndOp>(ops[bodyEnd]))
        ++bodyEnd;
      n = bodyEnd;
      // The last (or only) k block: the epilogue's lines come in meanwhile.
      if ((!kblock || !kblock->store) && bodyEnd + 1 < ops.size())
        prefetchEpilogue(plan, ops.drop_front(bodyEnd + 1), rows, mask);
      // `copies` k iterations from k = iv on: the body, then one step of
      // every accumulator (a sum of products is an fma).
      auto steps = [&](Value iv, ValueRange accs,
                       unsigned copies) -> FailureOr<SmallVector<Value>> {
        SmallVector<Value> current(accs);
        for (unsigned u = 0; u < copies; ++u) {
          Value k = u == 0 ? iv
                           : Value(arith::AddIOp::create(
                                 b, l, iv, i64Const(l, int64_t(u) * step)));
          for (unsigned r = 0; r < numRows; ++r)
            rows[r][range.getResult()] = {k, 0};
          panelIteration = k;
          if (range.getLower() != 0)
            panelIteration = arith::SubIOp::create(b, l, panelIteration,
                                                   i64Const(l, range.getLower()));
          if (step != 1)
            panelIteration = arith::DivSIOp::create(b, l, panelIteration,
                                                    i64Const(l, step));
          if (kblock)
            panelIteration =
                arith::SubIOp::create(b, l, panelIteration, kblock->first);
          for (size_t o = bodyBegin; o < bodyEnd; ++o)
            for (unsigned r = 0; r < numRows; ++r)
              if (failed(lowerTiledOp(ops[o], plan, rows, r, mask))) {
                panelIteration = Value();
                return failure();
              }
          panelIteration = Value();
          SmallVector<Value> next;
          unsigned arg = 0;
          for (ReduceOp reduce : reduces) {
            Type t = accType(reduce);
            auto mul = reduce.getValue().getDefiningOp<MulOp>();
            bool fma = reduce.getKind() == ReduceKind::add && mul &&
                       isFloat(convertType(reduce.getType()));
            for (unsigned r = 0; r < numRows; ++r) {
              Value acc = current[arg++];
              if (fma) {
                auto x = rows[r].find(mul->getOperand(0)),
                     y = rows[r].find(mul->getOperand(1));
                if (x == rows[r].end() || y == rows[r].end())
                  return failure();
                next.push_back(math::FmaOp::create(
                    b, l, laneForm(l, x->second, t), laneForm(l, y->second, t),
                    acc));
                continue;
              }
              auto v = rows[r].find(reduce.getValue());
              if (v == rows[r].end())
                return failure();
              next.push_back(
                  combine(l, reduce.getKind(), acc, laneForm(l, v->second, t)));
            }
          }
          current = std::move(next);
        }
        return current;
      };
      // Two k iterations per trip (one loop-carried dependence per pair of
      // fmas fewer), then the odd one.
      constexpr unsigned kUnroll = 2;
      int64_t pairs = count / kUnroll;
      SmallVector<Value> results(inits);
      if (pairs > 0) {
        Value ub = arith::AddIOp::create(b, l, lb,
                                         i64Const(l, pairs * kUnroll * step));
        auto loop = scf::ForOp::create(b, l, lb, ub,
                                       i64Const(l, kUnroll * step), inits);
        OpBuilder::InsertionGuard g(b);
        Block *loopBody = loop.getBody();
        if (loopBody->mightHaveTerminator())
          b.setInsertionPoint(loopBody->getTerminator());
        else
          b.setInsertionPointToEnd(loopBody);
        FailureOr<SmallVector<Value>> next =
            steps(loop.getInductionVar(), loop.getRegionIterArgs(), kUnroll);
        if (failed(next))
          return failure();
        if (!next->empty())
          scf::YieldOp::create(b, l, *next);
        results.assign(loop.getResults().begin(), loop.getResults().end());
      }
      for (int64_t rest = pairs * kUnroll; rest < count; ++rest) {
        Value k = arith::AddIOp::create(b, l, lb, i64Const(l, rest * step));
        FailureOr<SmallVector<Value>> next = steps(k, results, 1);
        if (failed(next))
          return failure();
        results = std::move(*next);
      }
      unsigned arg = 0;
      for (ReduceOp reduce : reduces)
        for (unsigned r = 0; r < numRows; ++r)
          folded[{reduce.getOperation(), r}] = results[arg++];
      if (kblock && kblock->store) {
        // Not the last k block: park the accumulators; the rest of the
        // body runs after the last block.
        arg = 0;
        for (auto [ri, reduce] : llvm::enumerate(reduces))
          for (unsigned r = 0; r < numRows; ++r) {
            Value acc = results[arg++];
            LLVM::StoreOp::create(b, l, acc, accSlot(ri, r, acc.getType()),
                                  elementAlign(acc.getType()));
          }
        return success();
      }
      continue;
    }
    if (auto reduce = dyn_cast<ReduceOp>(op)) {
      for (unsigned r = 0; r < numRows; ++r) {
        Value v = folded.lookup({reduce.getOperation(), r});
        if (!v)
          return failure();
        if (!plan.initFirst.contains(reduce)) {
          auto it = rows[r].find(reduce.getInit());
          if (it == rows[r].end())
            return failure();
          v = combine(reduce.getLoc(), reduce.getKind(),
                      laneForm(reduce.getLoc(), it->second, v.getType()), v);
        }
        rows[r][reduce.getResult()] = {v, 0};
      }
      continue;
    }
    for (unsigned r = 0; r < numRows; ++r)
      if (failed(lowerTiledOp(op, plan, rows, r, mask)))
        return failure();
  }
  return success();
}

/// The most the accumulators parked between k blocks may take.
static constexpr int64_t kParkBytes = 1 << 20;

/// The bytes an element of type `t` (an L0 or an LLVM one) takes in memory:
/// an index or a pointer, 8.
static int64_t elementBytes(Type t) {
  return t.isIntOrFloat() ? std::max(1u, t.getIntOrFloatBitWidth() / 8) : 8;
}

/// The most a tiled kernel's working arrays take on the stack; larger ones
/// come from the runtime's kernel scratch.
static constexpr int64_t kStackArrayBytes = 32 << 10;
/// The most the packed lane panels kept for a chunk's later row panels may
/// take (per thread: each chunk keeps its own).
static constexpr int64_t kPanelCacheBytes = 16 << 20;

LogicalResult KernelBuilder::buildTiled(const TilePlan &plan) {
  Location loc = plan.rows.getLoc();
  unsigned lanes = plan.laneCount, blockRows = plan.rowCount;
  int64_t tripI = plan.rows.getTripCount(), tripJ = plan.lanes.getTripCount();
  auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
  // This chunk's rows, [rowLo, rowHi) (empty when begin >= end).
  Value rowLo = arith::MaxSIOp::create(b, loc, begin, i64Const(loc, 0));
  Value rowHi = arith::MinSIOp::create(b, loc, end, i64Const(loc, tripI));
  rowHi = arith::MaxSIOp::create(b, loc, rowHi, rowLo);
  int64_t kTrip = 1;
  for (Operation *op : plan.body)
    if (auto range = dyn_cast<RangeOp>(op))
      kTrip = std::max<int64_t>(kTrip, range.getTripCount());
  int64_t kBlocks = 1, kc = kTrip;
  if (plan.kBlock) {
    kc = plan.kBlock;
    kBlocks = (kTrip + kc - 1) / kc; // the last block is never empty
  }
  // Row panels: the rows one lane sweep reads (about `kc` elements each)
  // stay in a 256 KiB share of L2 while the lane blocks go by.
  int64_t panel =
      std::max<int64_t>(1, (256 * 1024 / 4 / kc) / blockRows) * blockRows;
  // With k blocks, the k blocks run outside the lane blocks where the
  // accumulators of a whole panel of rows fit a 1 MiB stack array: then the
  // panel's slice of a k block is read from L2 by every lane block, where
  // lane blocks outside k blocks read the panel's whole k range (more than
  // L2 holds for a long k) once per lane block. A panel of fewer than four
  // row blocks would pack the other operand too often; that keeps the lane
  // blocks outside.
  int64_t laneBlocks = (tripJ + lanes - 1) / lanes;
  SmallVector<ReduceOp> blockReduces;
  if (kBlocks > 1)
    blockReduces = plan.reducesOf.lookup(plan.blockable);
  bool kOuter = false;
  if (kBlocks > 1) {
    int64_t rowBytes = 0;
    for (ReduceOp reduce : blockReduces)
      rowBytes += laneBlocks * lanes * elementBytes(reduce.getType());
    int64_t fit = (kParkBytes / std::max<int64_t>(1, rowBytes)) / blockRows *
                  blockRows;
    if (fit >= 4 * blockRows) {
      kOuter = true;
      panel = std::min(panel, fit);
    }
  }
  // A chunk's panels are as even as the row blocks allow, and one may take
  // up to an eighth more than the budgets above where that spares a panel:
  // a chunk a little longer than a panel would otherwise end in a sliver of
  // rows that packs every lane panel again for itself (1024 rows in panels
  // of 252: four and a panel of 16; now four of 258).
  panel = (panel + panel / 8 + blockRows - 1) / blockRows * blockRows;
  int64_t panelRows = std::min(panel, tripI);
  // Where a chunk may span several row panels, every panel would pack the
  // same lane panels again: (rows / panel) times the other operand, a
  // tenth of a 2048^3 matmul. Instead the first row panel packs each lane
  // block's panel of each k block into a slot of its own and the later
  // panels read those slots, so the operand is packed once per chunk. The
  // slots are laid out in the order the panels are read (k blocks inside
  // lane blocks, or lane blocks inside k blocks where the k blocks run
  // outside), so that a later panel walks them front to back.
  SmallVector<int64_t> slotElems;
  bool cachePanels = false;
  if (!plan.packs.empty() && panel < tripI) {
    int64_t bytes = 0;
    for (const TilePlan::Pack &pack : plan.packs) {
      slotElems.push_back(std::min(kc, pack.range.getTripCount()) * lanes);
      bytes += slotElems.back() * laneBlocks * kBlocks *
               elementBytes(pack.load->getResult(0).getType());
    }
    cachePanels = bytes <= kPanelCacheBytes;
  }
  // The working arrays: each lane panel of the packs, the row arrays and
  // the parked accumulators. Up to kStackArrayBytes in all they live on
  // the stack; beyond, in the runtime's per-thread kernel scratch (one call
  // per chunk), since a thread of the embedding program may have less stack
  // than a panel of a wide layer needs (1 MiB and more).
  struct Array {
    Type type;
    int64_t count;
  };
  SmallVector<Array> arrays;
  for (const TilePlan::Pack &pack : plan.packs)
    arrays.push_back({convertType(pack.load->getResult(0).getType()),
                      std::min(kc, pack.range.getTripCount()) * lanes});
  if (kOuter)
    for (const TilePlan::Pack &pack : plan.rowPacks)
      arrays.push_back({convertType(pack.load->getResult(0).getType()), panelRows * kc});
  for (ReduceOp reduce : blockReduces)
    arrays.push_back({convertType(reduce.getType()),
                      panelRows * lanes * (kOuter ? laneBlocks : 1)});
  if (cachePanels)
    for (auto [pack, elems] : llvm::zip(plan.packs, slotElems))
      arrays.push_back({convertType(pack.load->getResult(0).getType()),
                        elems * laneBlocks * kBlocks});
  SmallVector<int64_t> offsets;
  int64_t scratchBytes = 0;
  for (const Array &array : arrays) {
    offsets.push_back(scratchBytes);
    scratchBytes += (array.count * elementBytes(array.type) + 63) / 64 * 64;
  }
  Value scratch;
  if (scratchBytes > kStackArrayBytes) {
    scratch = LLVM::CallOp::create(b, loc, TypeRange{ptrTy},
                                   kKernelScratchFn, ValueRange{i64Const(loc, scratchBytes)})
                  .getResult();
    usesScratch = true;
  }
  unsigned next = 0;
  auto array = [&]() -> Value {
    const Array &a = arrays[next];
    int64_t offset = offsets[next++];
    if (!scratch)
      return LLVM::AllocaOp::create(b, loc, ptrTy, a.type, i64Const(loc, a.count),
                                    /*alignment=*/64);
    return LLVM::GEPOp::create(b, loc, ptrTy, b.getI8Type(), scratch,
                               ValueRange{i64Const(loc, offset)});
  };
  panels.clear();
  for (size_t i = 0; i < plan.packs.size(); ++i)
    panels.push_back(array());
  rowPanels.clear();
  if (kOuter)
    for (size_t i = 0; i < plan.rowPacks.size(); ++i)
      rowPanels.push_back(array());
  KBlock block;
  block.rowStride = kc;
  block.iterationStride = panelRows;
  for (size_t i = 0; i < blockReduces.size(); ++i)
    block.accs.push_back(array());
  SmallVector<Value> cache;
  if (cachePanels)
    for (size_t i = 0; i < plan.packs.size(); ++i)
      cache.push_back(array());
  OpBuilder::InsertionGuard guard(b);
  // Group-shared packs (TilePlan::groupPacks): the chunk's rows group by
  // group, each group's rows a chunk of their own that packs its panels
  // with i at the group's first row.
  Value groupRow;
  if (plan.groupPacks) {
    Value group = i64Const(loc, plan.rowGroup);
    Value firstGroup = arith::MulIOp::create(
        b, loc, arith::DivSIOp::create(b, loc, rowLo, group), group);
    auto groups = scf::ForOp::create(b, loc, firstGroup, rowHi, group);
    b.setInsertionPoint(groups.getBody()->getTerminator());
    groupRow = groups.getInductionVar();
    Value groupEnd = arith::AddIOp::create(b, loc, groupRow, group);
    rowLo = arith::MaxSIOp::create(b, loc, groupRow, rowLo);
    rowHi = arith::MinSIOp::create(b, loc, groupEnd, rowHi);
  }
  // With cached panels: whether this chunk has more than one row panel
  // (else the small panels serve), and whether this row panel is its first
  // (which packs the slots the later ones read).
  Value manyPanels, firstPanel;
  if (panel < tripI) {
    // ceil(span / ceil(span / panel)), rounded up to whole row blocks: at
    // most `panel`, since that is a whole number of row blocks.
    Value span = arith::SubIOp::create(b, loc, rowHi, rowLo);
    auto ceilDiv = [&](Value x, Value y) {
      Value yLess1 = arith::SubIOp::create(b, loc, y, i64Const(loc, 1));
      return arith::DivSIOp::create(b, loc, arith::AddIOp::create(b, loc, x, yLess1), y);
    };
    Value count = arith::MaxSIOp::create(b, loc, ceilDiv(span, i64Const(loc, panel)),
                                         i64Const(loc, 1));
    Value rowsEach = arith::MulIOp::create(
        b, loc, ceilDiv(ceilDiv(span, count), i64Const(loc, blockRows)),
        i64Const(loc, blockRows));
    rowsEach = arith::MaxSIOp::create(b, loc, rowsEach, i64Const(loc, blockRows));
    if (cachePanels)
      manyPanels = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, span, rowsEach);
    Value chunkLo = rowLo;
    auto panels = scf::ForOp::create(b, loc, rowLo, rowHi, rowsEach);
    b.setInsertionPoint(panels.getBody()->getTerminator());
    rowLo = panels.getInductionVar();
    if (cachePanels)
      firstPanel = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rowLo, chunkLo);
    rowHi = arith::MinSIOp::create(b, loc, rowHi,
                                   arith::AddIOp::create(b, loc, rowLo, rowsEach));
  }
  block.panelLo = rowLo;
  // The lane blocks' loop around `body`; firstLane is its variable inside.
  Value firstLane;
  auto laneBlockLoop = [&](llvm::function_ref<void()> body) {
    auto laneLoop = scf::ForOp::create(
        b, loc, i64Const(loc, 0), i64Const(loc, tripJ), i64Const(loc, lanes));
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(laneLoop.getBody()->getTerminator());
    firstLane = laneLoop.getInductionVar();
    body();
    firstLane = Value();
  };
  LogicalResult result = success();
  auto laneMask = [&]() {
    auto vt = VectorType::get({lanes}, b.getI64Type());
    Value left = arith::SubIOp::create(b, loc, i64Const(loc, tripJ), firstLane);
    return Value(arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::slt, laneSteps(loc, lanes, 1),
        vector::BroadcastOp::create(b, loc, vt, left)));
  };
  // Pack the panels of this lane block (lanes past the end read as 0) for
  // k iterations [first, first + count) (null first: all of them).
  auto emitPacks = [&](Value first, int64_t count) -> LogicalResult {
    if (plan.packs.empty())
      return success();
    Value mask = tripJ % lanes != 0 ? laneMask() : Value();
    Value lane0 = rangeValue(loc, plan.lanes, firstLane);
    for (auto [pack, panel] : llvm::zip(plan.packs, panels)) {
      RangeOp range = pack.range;
      auto loop = scf::ForOp::create(
          b, loc, i64Const(loc, 0),
          i64Const(loc, first ? count : range.getTripCount()), i64Const(loc, 1));
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      Value it = loop.getInductionVar();
      Value k = rangeValue(
          loc, range, first ? Value(arith::AddIOp::create(b, loc, it, first)) : it);
      LaneMap row;
      row[plan.lanes.getResult()] = {lane0, plan.lanes.getStep()};
      row[range.getResult()] = {k, 0};
      if (groupRow)
        row[plan.rows.getResult()] = {groupRow, 0};
      MutableArrayRef<LaneMap> rows(row);
      for (Operation *op : pack.slice)
        if (failed(lowerTiledOp(op, plan, rows, 0, mask)))
          return failure();
      Type t = convertType(pack.load->getResult(0).getType());
      auto vt = VectorType::get({lanes}, t);
      Value v = laneForm(loc, row[pack.load->getResult(0)], vt);
      Value slot = LLVM::GEPOp::create(
          b, loc, ptrTy, t, panel,
          ValueRange{arith::MulIOp::create(b, loc, it, i64Const(loc, lanes))});
      LLVM::StoreOp::create(b, loc, v, slot, panelAlign(t, lanes));
    }
    return success();
  };
  // The pack that follows this one: lane block nextLane's k iterations
  // [nextFirst, nextFirst + nextCount) (no nextLane: none, or none known).
  Value nextLane, nextFirst;
  int64_t nextCount = 0;
  // Each full row block prefetches its share of the next pack's lines,
  // `perBlock` k iterations of every pack. A pack reads one lane run per k
  // iteration from rows of its operand a whole row apart (4 KiB at
  // N = 1024), a stride the hardware prefetchers do not follow: unhelped,
  // packing took a tenth of a 1024^3 matmul, waiting on L3 line by line.
  auto prefetchNextPacks = [&](Value blockRow) {
    if (!nextLane || plan.packs.empty())
      return;
    // (Where each row group packs, a group's rows are all the panel has.)
    int64_t rows = plan.groupPacks ? std::min(panelRows, plan.rowGroup) : panelRows;
    int64_t blocks = std::max<int64_t>(1, rows / blockRows);
    int64_t perBlock = (nextCount + blocks - 1) / blocks;
    Value blockIndex = arith::DivSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, blockRow, rowLo), i64Const(loc, blockRows));
    Value index = arith::MulIOp::create(b, loc, blockIndex, i64Const(loc, perBlock));
    OpBuilder::InsertionGuard g(b);
    if (firstPanel) {
      // A later row panel: the next slot (the next in memory) is what the
      // first panel packed; its lines, an even share per row block. The
      // first panel prefetches the next pack's operand, as without slots.
      auto branch = scf::IfOp::create(b, loc, firstPanel, /*withElseRegion=*/true);
      b.setInsertionPoint(branch.elseBlock()->getTerminator());
      for (auto [pack, panel, elems] : llvm::zip(plan.packs, panels, slotElems)) {
        int64_t slotBytes = elems * elementBytes(pack.load->getResult(0).getType());
        int64_t lines = (slotBytes + 63) / 64, each = (lines + blocks - 1) / blocks;
        Value first = arith::AddIOp::create(
            b, loc, i64Const(loc, slotBytes),
            arith::MulIOp::create(b, loc, blockIndex, i64Const(loc, each * 64)));
        for (int64_t line = 0; line < each; ++line)
          LLVM::Prefetch::create(
              b, loc,
              LLVM::GEPOp::create(
                  b, loc, LLVM::LLVMPointerType::get(b.getContext()), b.getI8Type(), panel,
                  ValueRange{arith::AddIOp::create(b, loc, first, i64Const(loc, line * 64))}),
              /*rw=*/0, /*hint=*/2, /*cache=*/1);
      }
      b.setInsertionPoint(branch.thenBlock()->getTerminator());
    }
    Value lane0 = rangeValue(loc, plan.lanes, nextLane);
    for (const TilePlan::Pack &pack : plan.packs) {
      Type t = convertType(pack.load->getResult(0).getType());
      if (!t.isIntOrFloat())
        continue;
      int64_t bytes = elementBytes(t);
      for (int64_t p = 0; p < perBlock; ++p) {
        Value it = arith::MinSIOp::create(
            b, loc, arith::AddIOp::create(b, loc, index, i64Const(loc, p)),
            i64Const(loc, nextCount - 1));
        LaneMap row;
        row[plan.lanes.getResult()] = {lane0, plan.lanes.getStep()};
        if (groupRow)
          row[plan.rows.getResult()] = {groupRow, 0};
        row[pack.range.getResult()] = {
            rangeValue(loc, pack.range,
                       nextFirst ? Value(arith::AddIOp::create(b, loc, it, nextFirst))
                                 : it),
            0};
        MutableArrayRef<LaneMap> rows(row);
        for (Operation *op : ArrayRef<Operation *>(pack.slice).drop_back())
          if (failed(lowerTiledOp(op, plan, rows, 0, Value())))
            return;
        auto ptr = row.find(pack.load->getOperand(0));
        if (ptr == row.end() ||
            !isa<LLVM::LLVMPointerType>(ptr->second.v.getType()))
          return;
        prefetchLanes(loc, ptr->second, bytes, lanes, /*write=*/0, /*locality=*/2);
      }
    }
  };
  // The row blocks of rows [lo, hi) of one lane block: full blocks, then
  // the rest in blocks of 4, 2, 1 rows (the binary digits of what is left).
  auto emitSpan = [&](Value lo, Value hi, Value mask) {
    if (blockRows == 1) {
      auto loop = scf::ForOp::create(b, loc, lo, hi, i64Const(loc, 1));
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      if (failed(emitBlock(plan, loop.getInductionVar(), 1, firstLane, mask)))
        result = failure();
      return;
    }
    Value span = arith::SubIOp::create(b, loc, hi, lo);
    Value blocks = arith::DivSIOp::create(b, loc, span, i64Const(loc, blockRows));
    Value pos = arith::AddIOp::create(
        b, loc, lo,
        arith::MulIOp::create(b, loc, blocks, i64Const(loc, blockRows)));
    {
      auto loop = scf::ForOp::create(b, loc, lo, pos, i64Const(loc, blockRows));
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      prefetchNextPacks(loop.getInductionVar());
      if (failed(emitBlock(plan, loop.getInductionVar(), blockRows, firstLane,
                           mask)))
        result = failure();
    }
    unsigned size = 1;
    while (size * 2 < blockRows)
      size *= 2;
    for (; size >= 1; size /= 2) {
      Value fits = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::sge,
          arith::SubIOp::create(b, loc, hi, pos), i64Const(loc, size));
      auto branch = scf::IfOp::create(b, loc, TypeRange{b.getI64Type()}, fits,
                                      /*withElseRegion=*/true);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(branch.thenBlock());
      if (failed(emitBlock(plan, pos, size, firstLane, mask)))
        result = failure();
      scf::YieldOp::create(
          b, loc,
          ValueRange{arith::AddIOp::create(b, loc, pos, i64Const(loc, size))});
      b.setInsertionPointToStart(branch.elseBlock());
      scf::YieldOp::create(b, loc, ValueRange{pos});
      pos = branch.getResult(0);
    }
  };
  // With row groups, the rows of each group in turn (TilePlan::rowGroup).
  auto emitRows = [&](bool masked) {
    Value mask = masked ? laneMask() : Value();
    if (!plan.rowGroup) {
      emitSpan(rowLo, rowHi, mask);
      return;
    }
    Value group = i64Const(loc, plan.rowGroup);
    Value firstGroup = arith::MulIOp::create(
        b, loc, arith::DivSIOp::create(b, loc, rowLo, group), group);
    auto loop = scf::ForOp::create(b, loc, firstGroup, rowHi, group);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    Value at = loop.getInductionVar();
    emitSpan(arith::MaxSIOp::create(b, loc, at, rowLo),
             arith::MinSIOp::create(b, loc, arith::AddIOp::create(b, loc, at, group), rowHi),
             mask);
  };
  // One k block (or the whole k loop): its panels, then its row blocks.
  auto emitPhase = [&](Value first, int64_t count, bool load, bool store) {
    KBlock phase = block;
    phase.first = first;
    phase.count = count;
    phase.load = load;
    phase.store = store;
    if (kOuter)
      phase.laneBase =
          arith::MulIOp::create(b, loc, firstLane, i64Const(loc, panelRows));
    kblock = first ? &phase : nullptr;
    SmallVector<Value> smallPanels(panels);
    if (cachePanels) {
      Value kIndex = first ? Value(arith::DivSIOp::create(b, loc, first, i64Const(loc, kc)))
                           : i64Const(loc, 0);
      Value laneIndex = arith::DivSIOp::create(b, loc, firstLane, i64Const(loc, lanes));
      Value slot =
          kOuter ? arith::AddIOp::create(
                       b, loc, arith::MulIOp::create(b, loc, kIndex, i64Const(loc, laneBlocks)),
                       laneIndex)
                 : arith::AddIOp::create(
                       b, loc, arith::MulIOp::create(b, loc, laneIndex, i64Const(loc, kBlocks)),
                       kIndex);
      for (auto [p, pack] : llvm::enumerate(plan.packs)) {
        Value at = LLVM::GEPOp::create(
            b, loc, ptrTy, convertType(pack.load->getResult(0).getType()), cache[p],
            ValueRange{arith::MulIOp::create(b, loc, slot, i64Const(loc, slotElems[p]))});
        panels[p] = arith::SelectOp::create(b, loc, manyPanels, at, panels[p]);
      }
      // Only the first row panel packs.
      auto branch = scf::IfOp::create(b, loc, firstPanel, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(branch.thenBlock()->getTerminator());
      if (failed(emitPacks(first, count)))
        result = failure();
    } else if (failed(emitPacks(first, count))) {
      result = failure();
    }
    // The next pack: the next lane block's, over the same k iterations,
    // where the lane blocks run inside the k blocks (or there is one k
    // block); else the next k block's of this lane block, or after the last
    // the next lane block's first.
    nextLane = arith::AddIOp::create(b, loc, firstLane, i64Const(loc, lanes));
    nextFirst = first;
    nextCount = count;
    if (!kOuter && kBlocks > 1) {
      if (store) {
        nextLane = firstLane;
        nextFirst = arith::AddIOp::create(b, loc, first, i64Const(loc, count));
        nextCount = kc;
      } else {
        nextFirst = i64Const(loc, 0);
        nextCount = kc;
      }
    }
    bool full = tripJ >= lanes, tail = tripJ % lanes != 0;
    if (full && tail) {
      Value isFull = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::sle,
          arith::AddIOp::create(b, loc, firstLane, i64Const(loc, lanes)),
          i64Const(loc, tripJ));
      auto branch = scf::IfOp::create(b, loc, isFull, /*withElseRegion=*/true);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(branch.thenBlock()->getTerminator());
      emitRows(false);
      b.setInsertionPoint(branch.elseBlock()->getTerminator());
      emitRows(true);
    } else {
      emitRows(tail);
    }
    kblock = nullptr;
    nextLane = Value();
    panels.assign(smallPanels.begin(), smallPanels.end());
  };
  // Copy the row panel's slice of k iterations [first, first + count) of
  // each row pack into its array (kOuter: once per k block, before the
  // lane blocks).
  // Row-major arrays copy row by row, k-major ones (Pack::kMajor)
  // iteration by iteration: either way the inner loop walks the operand
  // and the array in order.
  auto emitRowPacks = [&](Value first, int64_t count) {
    for (auto [pack, array] : llvm::zip(plan.rowPacks, rowPanels)) {
      RangeOp range = pack.range;
      OpBuilder::InsertionGuard g(b);
      auto rowLoop = [&] {
        auto loop = scf::ForOp::create(b, loc, rowLo, rowHi, i64Const(loc, 1));
        b.setInsertionPoint(loop.getBody()->getTerminator());
        return loop.getInductionVar();
      };
      auto iterationLoop = [&] {
        auto loop = scf::ForOp::create(b, loc, i64Const(loc, 0), i64Const(loc, count),
                                       i64Const(loc, 1));
        b.setInsertionPoint(loop.getBody()->getTerminator());
        return loop.getInductionVar();
      };
      Value row, it, slot;
      if (pack.kMajor) {
        it = iterationLoop();
        row = rowLoop();
        slot = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, it, i64Const(loc, panelRows)),
            arith::SubIOp::create(b, loc, row, rowLo));
      } else {
        row = rowLoop();
        it = iterationLoop();
        slot = arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(b, loc, arith::SubIOp::create(b, loc, row, rowLo),
                                  i64Const(loc, kc)),
            it);
      }
      LaneMap values;
      values[plan.rows.getResult()] = {rangeValue(loc, plan.rows, row), 0};
      values[range.getResult()] = {
          rangeValue(loc, range, arith::AddIOp::create(b, loc, it, first)), 0};
      MutableArrayRef<LaneMap> one(values);
      for (Operation *op : pack.slice)
        if (failed(lowerTiledOp(op, plan, one, 0, Value())))
          result = failure();
      if (failed(result))
        return;
      Value v = values[pack.load->getResult(0)].v;
      LLVM::StoreOp::create(b, loc, v,
                            LLVM::GEPOp::create(b, loc, ptrTy, v.getType(), array,
                                                ValueRange{slot}),
                            elementAlign(v.getType()));
    }
  };
  // The k phases: the first block from the inits, the middle blocks, the
  // last block and the rest of the body.
  auto kPhases = [&](llvm::function_ref<void(Value, int64_t, bool, bool)> phase) {
    if (kBlocks == 1) {
      phase(Value(), kTrip, false, false);
      return;
    }
    int64_t last = (kBlocks - 1) * kc;
    phase(i64Const(loc, 0), kc, false, true);
    if (kBlocks > 2) {
      auto loop = scf::ForOp::create(b, loc, i64Const(loc, kc),
                                     i64Const(loc, last), i64Const(loc, kc));
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      phase(loop.getInductionVar(), kc, true, true);
    }
    phase(i64Const(loc, last), kTrip - last, true, false);
  };
  if (kOuter)
    kPhases([&](Value first, int64_t count, bool load, bool store) {
      emitRowPacks(first, count);
      laneBlockLoop([&] { emitPhase(first, count, load, store); });
    });
  else
    laneBlockLoop([&] { kPhases(emitPhase); });
  return result;
}

} // namespace synpl::l0tollvm
