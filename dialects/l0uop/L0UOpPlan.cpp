//===- L0UOpPlan.cpp - The L0 plan: references and phase-2 rows L0.2-L0.6 -===//
//
// The plan-wide checks of the phase-2 (concrete) verifier. All of them read
// the plan and change nothing:
//
//   L0.2 safety    buffer lifetime safety   slots overlap in bytes and time
//   L0.3 safety    stream hazard            shared mutable slot, no sync
//   L0.4 liveness  sync completeness        events unpaired, deadlocks,
//                                           cross-stream deps with no event
//   L0.5 resource  memory capacity          live bytes past a pool at t
//   L0.6 resource  pool exhaustion          freelist × pipeline_depth
//   L0.7 liveness  collective order         a collective on no stream or on
//                                           several; completion not after it
//
// A collective (L0UOpCollective.cpp) is in flight from its entry to the
// entry it completes before: L0.3 also rejects an entry of its stream in
// between that touches its slots, and across streams its accesses count at
// both ends (an entry on another stream must be ordered before the start
// or after the completion).
//
//===----------------------------------------------------------------------===//
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Analysis/Lifetimes.h"
#include "synpl/Support/Property.h"
#include "synpl/Support/Units.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include <tuple>
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l0uop;

//===----------------------------------------------------------------------===//
// Plan items on their own
//===----------------------------------------------------------------------===//

LogicalResult PoolOp::verify() {
  if (getCapacity() <= 0)
    return emitOpError("capacity must be positive, got ") << getCapacity();
  if (getAlignment() <= 0 || !llvm::isPowerOf2_64(getAlignment()))
    return emitOpError("alignment must be a power of two, got ")
           << getAlignment();
  return success();
}

LogicalResult SlotOp::verify() {
  if (getSize() <= 0)
    return emitOpError("size must be positive, got ") << getSize();
  if (getOffset() && *getOffset() < 0)
    return emitOpError("offset must not be negative, got ") << *getOffset();
  if (getFirstUse() < 0 || getLastUse() < getFirstUse())
    return emitOpError("lifetime (")
           << getFirstUse() << ", " << getLastUse()
           << ") is not an interval of ticks (0 <= first_use <= last_use)";
  uint64_t need = getBufType().getSizeInBytes();
  if (static_cast<uint64_t>(getSize()) < need)
    return emitOpError("size ") << getSize() << " is smaller than its "
                                << getType() << " (" << need << " bytes)";
  if (std::optional<int64_t> rows = getShardRows()) {
    int64_t elements = getBufType().getNumElements();
    if (*rows <= 0 || elements % *rows != 0)
      return emitOpError("shard_rows ")
             << *rows << " does not divide its " << elements << " elements into rows";
    auto plan = (*this)->getParentOfType<PlanOp>();
    if (plan && plan.getRanks().value_or(1) < 2)
      return emitOpError("holds one rank's shard, but the plan runs on one rank: give the "
                         "plan `ranks` (at least 2)");
  }
  return success();
}

LogicalResult SlotOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto pool = symbols.lookupNearestSymbolFrom<PoolOp>(*this, getPoolAttr());
  if (!pool)
    return emitOpError("names pool ")
           << getPoolAttr() << ", which is not an l0uop.pool";
  if (pool.getKind() == PoolKind::freelist) {
    if (getOffset())
      return emitOpError("is in freelist pool ")
             << getPoolAttr()
             << ", whose slots get their offsets at run time: drop `offset`";
  } else {
    if (!getOffset())
      return emitOpError("is in ")
             << stringifyPoolKind(pool.getKind()) << " pool "
             << getPoolAttr() << " and needs a static `offset`";
    if (*getOffset() % pool.getAlignment() != 0)
      return emitOpError("offset ")
             << *getOffset() << " is not a multiple of pool "
             << getPoolAttr() << "'s alignment " << pool.getAlignment();
  }
  return success();
}

LogicalResult StreamOp::verifySymbolUses(SymbolTableCollection &symbols) {
  llvm::SmallDenseSet<Attribute> seen;
  for (Attribute attr : getEntries()) {
    auto ref = llvm::cast<FlatSymbolRefAttr>(attr);
    Operation *def = symbols.lookupNearestSymbolFrom(*this, ref);
    if (!def || !llvm::isa<KernelOp, TransferOp, CollectiveOp>(def))
      return emitOpError("runs ")
             << ref << ", which is not an l0uop.kernel, l0uop.transfer or "
                "l0uop.collective";
    if (!seen.insert(ref).second)
      return emitOpError("runs ") << ref << " twice";
  }
  return success();
}

/// Resolves the (event, entry, stream) triple of a record or wait.
static LogicalResult verifySyncPoint(Operation *op, FlatSymbolRefAttr event,
                                     FlatSymbolRefAttr entry,
                                     FlatSymbolRefAttr stream,
                                     SymbolTableCollection &symbols) {
  if (!symbols.lookupNearestSymbolFrom<EventOp>(op, event))
    return op->emitOpError("names event ")
           << event << ", which is not an l0uop.event";
  auto s = symbols.lookupNearestSymbolFrom<StreamOp>(op, stream);
  if (!s)
    return op->emitOpError("names stream ")
           << stream << ", which is not an l0uop.stream";
  if (!llvm::is_contained(s.getEntries().getValue(), Attribute(entry)))
    return op->emitOpError("names ")
           << entry << ", which stream " << stream << " does not run";
  return success();
}

LogicalResult RecordOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifySyncPoint(*this, getEventAttr(), getEntryAttr(),
                         getStreamAttr(), symbols);
}

LogicalResult WaitOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifySyncPoint(*this, getEventAttr(), getEntryAttr(),
                         getStreamAttr(), symbols);
}

LogicalResult TransferOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto src = symbols.lookupNearestSymbolFrom<SlotOp>(*this, getSrcAttr());
  auto dst = symbols.lookupNearestSymbolFrom<SlotOp>(*this, getDstAttr());
  if (!src)
    return emitOpError("copies from ")
           << getSrcAttr() << ", which is not an l0uop.slot";
  if (!dst)
    return emitOpError("copies to ")
           << getDstAttr() << ", which is not an l0uop.slot";
  if (src == dst)
    return emitOpError("copies slot ") << getSrcAttr() << " onto itself";
  if (getBytes() <= 0 || getBytes() > src.getSize() ||
      getBytes() > dst.getSize())
    return emitOpError("moves ")
           << getBytes() << " bytes; the source has " << src.getSize()
           << " and the destination " << dst.getSize();
  auto srcPool = symbols.lookupNearestSymbolFrom<PoolOp>(*this,
                                                         src.getPoolAttr());
  auto dstPool = symbols.lookupNearestSymbolFrom<PoolOp>(*this,
                                                         dst.getPoolAttr());
  if (!srcPool || !dstPool)
    return success(); // the slot reports its pool
  MemSpace from = srcPool.getSpace(), to = dstPool.getSpace();
  MemSpace wantFrom, wantTo;
  switch (getDirection()) {
  case Direction::h2d:
    wantFrom = MemSpace::host, wantTo = MemSpace::device;
    break;
  case Direction::d2h:
    wantFrom = MemSpace::device, wantTo = MemSpace::host;
    break;
  case Direction::d2d:
    wantFrom = wantTo = MemSpace::device;
    break;
  case Direction::h2h:
    wantFrom = wantTo = MemSpace::host;
    break;
  }
  if (from != wantFrom || to != wantTo)
    return emitOpError("is ")
           << stringifyDirection(getDirection()) << " but copies from "
           << stringifyMemSpace(from) << " to " << stringifyMemSpace(to);
  return success();
}

LogicalResult InitOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto slot = symbols.lookupNearestSymbolFrom<SlotOp>(*this, getSlotAttr());
  if (!slot)
    return emitOpError("fills ")
           << getSlotAttr() << ", which is not an l0uop.slot";
  BufType buf = slot.getBufType();
  bool isFloat = llvm::isa<FloatType>(buf.getElementType());
  switch (getKind()) {
  case InitKind::zeros:
  case InitKind::ones:
    return success();
  case InitKind::constant:
    if (!getValue())
      return emitOpError("constant init needs a `value`");
    return success();
  case InitKind::kaiming:
  case InitKind::xavier:
    if (!getFanIn() && slot.getShardRows())
      return emitOpError() << stringifyInitKind(getKind()) << " init of the sharded slot "
                           << getSlotAttr() << " needs the full tensor's `fan_in`";
    if (!getFanIn() && buf.getRank() < 2)
      return emitOpError() << stringifyInitKind(getKind())
                           << " init of the rank-" << buf.getRank()
                           << " slot " << getSlotAttr()
                           << " needs `fan_in`";
    [[fallthrough]];
  case InitKind::uniform:
  case InitKind::normal:
    if (!isFloat)
      return emitOpError() << stringifyInitKind(getKind())
                           << " init fills float slots, not " << buf;
    return success();
  case InitKind::planned_steps:
  case InitKind::training_mode:
  case InitKind::rank:
    if (!buf.getElementType().isF32() || buf.getNumElements() != 1)
      return emitOpError() << stringifyInitKind(getKind()) << " init fills one f32, not "
                           << buf;
    return success();
  case InitKind::decode_idx: {
    if (!getPath())
      return emitOpError("decode_idx init needs the IDX file's `path`");
    auto pool =
        symbols.lookupNearestSymbolFrom<PoolOp>(*this, slot.getPoolAttr());
    if (pool && pool.getSpace() != MemSpace::host)
      return emitOpError("decode_idx runs on the host; slot ")
             << getSlotAttr() << " is in device pool " << slot.getPoolAttr();
    return success();
  }
  }
  return success();
}

LogicalResult PlanOp::verify() {
  if (getPipelineDepth() < 1)
    return emitOpError("pipeline_depth must be at least 1, got ")
           << getPipelineDepth();
  if (std::optional<int64_t> e = getEpochs(); e && *e < 1)
    return emitOpError("epochs must be at least 1, got ") << *e;
  if (std::optional<int64_t> c = getCheckpointEvery(); c && *c < 0)
    return emitOpError("checkpoint_every must be at least 0, got ") << *c;
  if (std::optional<int64_t> n = getSteps(); n && *n < 1)
    return emitOpError("steps must be positive, got ") << *n;
  return success();
}

//===----------------------------------------------------------------------===//
// L0.2, L0.5, L0.6: the memory plan
//===----------------------------------------------------------------------===//

namespace {
/// The plan's own symbols, looked up without trusting that they resolve:
/// a dangling reference is reported by its user and skipped here.
struct PlanSymbols {
  llvm::DenseMap<StringAttr, Operation *> byName;

  explicit PlanSymbols(Block &body) {
    for (Operation &op : body)
      if (auto name = op.getAttrOfType<StringAttr>(
              SymbolTable::getSymbolAttrName()))
        byName.try_emplace(name, &op);
  }
  template <typename T> T lookup(FlatSymbolRefAttr ref) const {
    return llvm::dyn_cast_or_null<T>(byName.lookup(ref.getAttr()));
  }
};
} // namespace

static bool checkPool(PlanOp plan, PoolOp pool, MutableArrayRef<SlotOp> slots) {
  uint64_t capacity = pool.getCapacity();
  bool ok = true;

  // L0.2: every slot inside its pool.
  for (SlotOp slot : slots) {
    uint64_t size = slot.getSize();
    if (std::optional<int64_t> offset = slot.getOffset()) {
      ByteRange r{static_cast<uint64_t>(*offset), size};
      if (!byteRangeFits(r, capacity)) {
        auto diag = emitCheckError(slot, Property::Safety, "L0.2");
        diag << "slot @" << slot.getSymName() << " occupies bytes ["
                << r.offset << ", " << r.end() << ") of pool @"
                << pool.getSymName() << ", past its capacity of " << capacity
                << " bytes";
        diag.attachNote(pool.getLoc()) << "the pool";
        ok = false;
      }
    } else if (size > capacity) {
      auto diag = emitCheckError(slot, Property::Safety, "L0.2");
      diag << "slot @" << slot.getSymName() << " (" << size
          << " bytes) is larger than its pool @" << pool.getSymName() << " ("
          << capacity << " bytes)";
      diag.attachNote(pool.getLoc()) << "the pool";
      ok = false;
    }
  }

  // L0.2: statically placed slots never share bytes while both are live.
  SmallVector<SlotOp> placed;
  std::vector<Placement> placements;
  for (SlotOp slot : slots)
    if (std::optional<int64_t> offset = slot.getOffset()) {
      placed.push_back(slot);
      placements.push_back(
          {{static_cast<uint64_t>(slot.getFirstUse()),
            static_cast<uint64_t>(slot.getLastUse())},
           {static_cast<uint64_t>(*offset),
            static_cast<uint64_t>(slot.getSize())}});
    }
  for (auto [i, j] : findConflicts(placements)) {
    const Placement &a = placements[i], &b = placements[j];
    uint64_t lo = std::max(a.range.offset, b.range.offset);
    uint64_t hi = std::min(a.range.end(), b.range.end());
    uint64_t t0 = std::max(a.life.first, b.life.first);
    uint64_t t1 = std::min(a.life.last, b.life.last);
    auto diag = emitCheckError(placed[j], Property::Safety, "L0.2")
                << "slots @" << placed[i].getSymName() << " and @"
                << placed[j].getSymName() << " share bytes [" << lo << ", "
                << hi << ") of pool @" << pool.getSymName()
                << " while both are live (ticks " << t0 << " to " << t1
                << ")";
    diag.attachNote(placed[i].getLoc()) << "the other slot";
    ok = false;
  }
  if (!ok)
    return false;

  // L0.5: the live bytes at every tick fit the pool. Run-time allocations
  // are rounded up to the pool's alignment.
  std::vector<LiveInterval> live;
  for (SlotOp slot : slots) {
    uint64_t bytes = slot.getSize();
    if (!slot.getOffset())
      bytes = alignUpSaturating(bytes, pool.getAlignment());
    live.push_back({{static_cast<uint64_t>(slot.getFirstUse()),
                     static_cast<uint64_t>(slot.getLastUse())},
                    bytes});
  }
  PeakUsage peak = peakLiveBytes(live);
  if (peak.bytes > capacity) {
    auto diag = emitCheckError(pool, Property::Resource, "L0.5")
                << "at t=" << peak.time << " the live slots of pool @"
                << pool.getSymName() << " sum to " << peak.bytes
                << " bytes, past its capacity of " << capacity << " bytes";
    for (size_t i : peak.live)
      diag.attachNote(slots[i].getLoc())
          << "live at t=" << peak.time << ": " << live[i].bytes << " bytes";
    return false;
  }

  // L0.6: a freelist pool holds pipeline_depth copies of its peak.
  uint64_t depth = plan.getPipelineDepth();
  if (pool.getKind() == PoolKind::freelist && depth > 1) {
    uint64_t need = saturatingMul(peak.bytes, depth);
    if (need > capacity) {
      auto diag = emitCheckError(pool, Property::Resource, "L0.6")
                  << "freelist pool @" << pool.getSymName()
                  << " has no headroom at pipeline_depth " << depth
                  << ": its peak of " << peak.bytes << " bytes (t="
                  << peak.time << ") is allocated once per step in flight, "
                  << depth << " x " << peak.bytes << " = " << need
                  << " bytes, past its capacity of " << capacity << " bytes";
      diag.attachNote(plan.getLoc()) << "pipeline_depth set here";
      return false;
    }
  }
  return true;
}

static bool checkMemoryPlan(PlanOp plan, const PlanSymbols &symbols) {
  llvm::MapVector<Operation *, SmallVector<SlotOp>> slotsByPool;
  for (Operation &op : plan.getBody().front())
    if (auto pool = llvm::dyn_cast<PoolOp>(op))
      slotsByPool[pool];
  for (Operation &op : plan.getBody().front())
    if (auto slot = llvm::dyn_cast<SlotOp>(op))
      if (auto pool = symbols.lookup<PoolOp>(slot.getPoolAttr()))
        slotsByPool[pool].push_back(slot);
  bool ok = true;
  for (auto &[pool, slots] : slotsByPool)
    ok &= checkPool(plan, llvm::cast<PoolOp>(pool), slots);
  return ok;
}

//===----------------------------------------------------------------------===//
// L0.3, L0.4: streams and syncs
//===----------------------------------------------------------------------===//

namespace {
/// One launch: an entry of a stream.
struct Launch {
  mutable StreamOp stream;
  unsigned streamIndex;
  Operation *op; // KernelOp, TransferOp or CollectiveOp
  SmallVector<StringAttr> reads, writes;

  StringRef name() const {
    return SymbolTable::getSymbolName(op).getValue();
  }
};
} // namespace

static void accessesOf(Operation *op, Launch &l) {
  auto names = [](ArrayAttr refs, SmallVectorImpl<StringAttr> &out) {
    for (Attribute a : refs)
      out.push_back(llvm::cast<FlatSymbolRefAttr>(a).getAttr());
  };
  if (auto kernel = llvm::dyn_cast<KernelOp>(op)) {
    names(kernel.getInputs(), l.reads);
    names(kernel.getOutputs(), l.writes);
  } else if (auto transfer = llvm::dyn_cast<TransferOp>(op)) {
    l.reads.push_back(transfer.getSrcAttr().getAttr());
    l.writes.push_back(transfer.getDstAttr().getAttr());
  } else if (auto collective = llvm::dyn_cast<CollectiveOp>(op)) {
    collective.getAccesses(l.reads, l.writes);
  }
}

/// L0.7 and the in-flight half of L0.3: each collective on exactly one
/// stream, its completion after it there, nothing in between touching its
/// slots. `launches` holds every stream's entries in order; the entry at
/// a collective's completion gets its accesses too, so that the
/// cross-stream sweep orders other streams against both ends.
static bool checkCollectives(PlanOp plan, std::vector<Launch> &launches) {
  bool ok = true;
  llvm::DenseMap<Operation *, SmallVector<unsigned>> onStreams;
  for (unsigned i = 0; i < launches.size(); ++i)
    if (llvm::isa<CollectiveOp>(launches[i].op))
      onStreams[launches[i].op].push_back(i);
  for (auto c : plan.getBody().front().getOps<CollectiveOp>()) {
    auto it = onStreams.find(c);
    if (it == onStreams.end()) {
      emitCheckError(c, Property::Liveness, "L0.7")
          << "collective @" << c.getSymName()
          << " is on no stream: no rank runs it, and a rank that waits for "
             "it would wait forever";
      ok = false;
      continue;
    }
    if (it->second.size() > 1) {
      const Launch &other = launches[it->second[1]];
      emitCheckError(c, Property::Liveness, "L0.7")
          << "collective @" << c.getSymName() << " runs on streams @"
          << launches[it->second[0]].stream.getSymName() << " and @"
          << other.stream.getSymName()
          << ": every rank must reach its collectives once per step, in one order";
      ok = false;
      continue;
    }
    unsigned start = it->second[0];
    unsigned end = start + 1; // the next entry of the stream, if any
    if (std::optional<StringRef> before = c.getCompleteBefore()) {
      end = launches.size();
      for (unsigned j = start + 1; j < launches.size(); ++j) {
        if (launches[j].streamIndex != launches[start].streamIndex)
          break;
        if (launches[j].name() == *before) {
          end = j;
          break;
        }
      }
      if (end == launches.size()) {
        emitCheckError(c, Property::Liveness, "L0.7")
            << "collective @" << c.getSymName() << " completes before @" << *before
            << ", which does not come after it on stream @"
            << launches[start].stream.getSymName();
        ok = false;
        continue;
      }
    }
    SmallVector<StringAttr> reads, writes;
    c.getAccesses(reads, writes);
    for (unsigned j = start + 1; j < end; ++j) {
      const Launch &l = launches[j];
      for (StringAttr s : writes) {
        bool touches = llvm::is_contained(l.reads, s) || llvm::is_contained(l.writes, s);
        if (!touches)
          continue;
        emitCheckError(launches[start].stream, Property::Safety, "L0.3")
            << "@" << l.name() << " "
            << (llvm::is_contained(l.writes, s) ? "writes" : "reads") << " slot @"
            << s.getValue() << " while collective @" << c.getSymName()
            << " is in flight (from its entry to @"
            << c.getCompleteBefore().value_or("the next entry") << ")";
        ok = false;
      }
      for (StringAttr s : reads)
        if (!llvm::is_contained(writes, s) && llvm::is_contained(l.writes, s)) {
          emitCheckError(launches[start].stream, Property::Safety, "L0.3")
              << "@" << l.name() << " writes slot @" << s.getValue()
              << ", which collective @" << c.getSymName() << " is still sending";
          ok = false;
        }
    }
    if (end < launches.size() && launches[end].streamIndex == launches[start].streamIndex) {
      llvm::append_range(launches[end].reads, reads);
      llvm::append_range(launches[end].writes, writes);
    }
  }
  return ok;
}

static bool checkStreams(PlanOp plan, const PlanSymbols &symbols) {
  Block &body = plan.getBody().front();
  bool ok = true;

  // L0.4: every event recorded once and waited; every wait recorded.
  llvm::MapVector<StringAttr, std::pair<SmallVector<RecordOp>,
                                        SmallVector<WaitOp>>> events;
  for (Operation &op : body) {
    if (auto e = llvm::dyn_cast<EventOp>(op))
      events[e.getSymNameAttr()];
    else if (auto r = llvm::dyn_cast<RecordOp>(op))
      events[r.getEventAttr().getAttr()].first.push_back(r);
    else if (auto w = llvm::dyn_cast<WaitOp>(op))
      events[w.getEventAttr().getAttr()].second.push_back(w);
  }
  for (auto &[name, uses] : events) {
    auto &[records, waits] = uses;
    auto event = symbols.lookup<EventOp>(FlatSymbolRefAttr::get(name));
    if (!event)
      continue; // the record/wait reports it
    if (records.empty() && waits.empty()) {
      emitCheckError(event, Property::Liveness, "L0.4")
          << "event @" << name.getValue() << " is never recorded nor waited";
      ok = false;
      continue;
    }
    if (records.size() > 1) {
      auto diag = emitCheckError(records[1], Property::Liveness, "L0.4");
      diag << "event @" << name.getValue()
           << " is recorded twice; a wait could pair with either";
      diag.attachNote(records[0].getLoc()) << "first recorded here";
      ok = false;
    }
    if (records.empty())
      for (WaitOp w : waits) {
        emitCheckError(w, Property::Liveness, "L0.4")
            << "stream " << w.getStreamAttr() << " waits for event @"
            << name.getValue() << " before " << w.getEntryAttr()
            << ", but no stream records it: the wait never returns";
        ok = false;
      }
    if (waits.empty())
      for (RecordOp r : records) {
        emitCheckError(r, Property::Liveness, "L0.4")
            << "event @" << name.getValue() << " is recorded after "
            << r.getEntryAttr() << " on " << r.getStreamAttr()
            << " but no stream waits for it";
        ok = false;
      }
  }

  // Launches, in stream order.
  std::vector<Launch> launches;
  llvm::DenseMap<std::pair<StringAttr, StringAttr>, unsigned> launchIndex;
  SmallVector<StreamOp> streams;
  for (Operation &op : body) {
    auto stream = llvm::dyn_cast<StreamOp>(op);
    if (!stream)
      continue;
    unsigned streamIndex = streams.size();
    streams.push_back(stream);
    for (Attribute attr : stream.getEntries()) {
      auto ref = llvm::cast<FlatSymbolRefAttr>(attr);
      Operation *def = symbols.byName.lookup(ref.getAttr());
      if (!def || !llvm::isa<KernelOp, TransferOp, CollectiveOp>(def))
        return ok; // the stream reports it; no ordering to reason about
      Launch l{stream, streamIndex, def, {}, {}};
      accessesOf(def, l);
      launchIndex[{stream.getSymNameAttr(), ref.getAttr()}] = launches.size();
      launches.push_back(std::move(l));
    }
  }
  ok &= checkCollectives(plan, launches);
  size_t n = launches.size();

  // Happens-before edges: stream order, then record -> wait.
  std::vector<SmallVector<unsigned>> succs(n);
  for (size_t i = 0; i + 1 < n; ++i)
    if (launches[i].streamIndex == launches[i + 1].streamIndex)
      succs[i].push_back(i + 1);
  struct WaitEdge {
    unsigned from, to;
    WaitOp wait;
  };
  SmallVector<WaitEdge> waitEdges;
  for (auto &[name, uses] : events) {
    auto &[records, waits] = uses;
    if (records.size() != 1)
      continue;
    auto from = launchIndex.find({records[0].getStreamAttr().getAttr(),
                                  records[0].getEntryAttr().getAttr()});
    if (from == launchIndex.end())
      continue;
    for (WaitOp w : waits) {
      auto to = launchIndex.find(
          {w.getStreamAttr().getAttr(), w.getEntryAttr().getAttr()});
      if (to == launchIndex.end())
        continue;
      succs[from->second].push_back(to->second);
      waitEdges.push_back({from->second, to->second, w});
    }
  }

  // Topological order; a cycle is a set of waits that can never return.
  std::vector<unsigned> indegree(n, 0), order;
  for (auto &s : succs)
    for (unsigned v : s)
      ++indegree[v];
  for (unsigned i = 0; i < n; ++i)
    if (indegree[i] == 0)
      order.push_back(i);
  for (size_t k = 0; k < order.size(); ++k)
    for (unsigned v : succs[order[k]])
      if (--indegree[v] == 0)
        order.push_back(v);
  if (order.size() != n) {
    // Launches left with predecessors lie on or after a cycle; blame a wait
    // whose both ends are left, i.e. one on the cycle when there is one.
    const WaitEdge *blame = nullptr;
    for (const WaitEdge &e : waitEdges)
      if (indegree[e.to] != 0 && (!blame || indegree[e.from] != 0)) {
        blame = &e;
        if (indegree[e.from] != 0)
          break;
      }
    if (blame) {
      WaitOp wait = blame->wait;
      emitCheckError(wait, Property::Liveness, "L0.4")
          << "the sync plan deadlocks: waiting for " << wait.getEventAttr()
          << " before " << wait.getEntryAttr() << " on "
          << wait.getStreamAttr()
          << " closes a cycle of waits, so the event is never recorded";
    } else { // unreachable: stream order alone is acyclic
      emitCheckError(plan, Property::Liveness, "L0.4")
          << "the sync plan deadlocks";
    }
    return false;
  }

  // reach[u][v]: u happens before v.
  std::vector<llvm::BitVector> reach(n, llvm::BitVector(n));
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    for (unsigned v : succs[*it]) {
      reach[*it].set(v);
      reach[*it] |= reach[v];
    }

  // Which streams write each slot.
  llvm::DenseSet<std::pair<unsigned, StringAttr>> writtenOn;
  for (const Launch &l : launches)
    for (StringAttr s : l.writes)
      writtenOn.insert({l.streamIndex, s});

  // One report per slot and pair of streams: the first unordered pair of
  // launches on them stands for the rest.
  llvm::DenseSet<std::tuple<unsigned, unsigned, StringAttr>> reported;
  for (unsigned u = 0; u < n; ++u) {
    for (unsigned v = u + 1; v < n; ++v) {
      const Launch &a = launches[u], &b = launches[v];
      if (a.streamIndex == b.streamIndex || reach[u].test(v) ||
          reach[v].test(u))
        continue;
      // Every slot the unordered pair conflicts on.
      SmallVector<StringAttr> slots;
      for (StringAttr s : a.writes)
        if (llvm::is_contained(b.reads, s) || llvm::is_contained(b.writes, s))
          slots.push_back(s);
      for (StringAttr s : a.reads)
        if (llvm::is_contained(b.writes, s) && !llvm::is_contained(slots, s))
          slots.push_back(s);
      for (StringAttr slot : slots) {
        ok = false;
        if (!reported
                 .insert({std::min(a.streamIndex, b.streamIndex),
                          std::max(a.streamIndex, b.streamIndex), slot})
                 .second)
          continue;
        bool aWrites = llvm::is_contained(a.writes, slot);
        bool bWrites = llvm::is_contained(b.writes, slot);

        // A pure consumer on a stream that never writes the slot: a
        // producer -> consumer dependency with no event (L0.4).
        const Launch *producer = nullptr, *consumer = nullptr;
        if (aWrites && !bWrites && !writtenOn.contains({b.streamIndex, slot}))
          producer = &a, consumer = &b;
        else if (bWrites && !aWrites &&
                 !writtenOn.contains({a.streamIndex, slot}))
          producer = &b, consumer = &a;
        if (producer) {
          auto diag = emitCheckError(consumer->stream, Property::Liveness,
                                     "L0.4")
                      << "@" << consumer->name() << " on stream @"
                      << consumer->stream.getSymName() << " reads slot @"
                      << slot.getValue() << ", which @" << producer->name()
                      << " on stream @" << producer->stream.getSymName()
                      << " produces, but no event recorded after @"
                      << producer->name() << " is waited before @"
                      << consumer->name();
          diag.attachNote(producer->stream.getLoc())
              << "the producer's stream";
          continue;
        }
        auto diag = emitCheckError(b.stream, Property::Safety, "L0.3")
                    << "slot @" << slot.getValue() << " is "
                    << (aWrites ? "written" : "read") << " by @" << a.name()
                    << " on stream @" << a.stream.getSymName() << " and "
                    << (bWrites ? "written" : "read") << " by @" << b.name()
                    << " on stream @" << b.stream.getSymName()
                    << ", and no sync orders them";
        diag.attachNote(a.stream.getLoc()) << "the other stream";
      }
    }
  }
  return ok;
}

LogicalResult PlanOp::verifyRegions() {
  PlanSymbols symbols(getBody().front());
  bool ok = checkMemoryPlan(*this, symbols);
  ok &= checkStreams(*this, symbols);
  return success(ok);
}

/// The host pool a slot lives in, or a failure naming why not.
static LogicalResult requireHostSlot(Operation *op, SymbolTableCollection &symbols,
                                     FlatSymbolRefAttr ref, SlotOp &slot) {
  slot = symbols.lookupNearestSymbolFrom<SlotOp>(op, ref);
  if (!slot)
    return op->emitOpError("names ") << ref << ", which is not an l0uop.slot";
  auto pool = symbols.lookupNearestSymbolFrom<PoolOp>(op, slot.getPoolAttr());
  if (pool && pool.getSpace() != MemSpace::host)
    return op->emitOpError("runs on the host; slot ")
           << ref << " is in device pool " << slot.getPoolAttr();
  return success();
}

int64_t IngestOp::fileRank(ArrayRef<int64_t> sampleShape) {
  return 1 + llvm::count_if(sampleShape, [](int64_t d) { return d != 1; });
}

LogicalResult IngestOp::verifySymbolUses(SymbolTableCollection &symbols) {
  if (getSlots().empty())
    return emitOpError("reads no field");
  if (getSlots().size() != getPaths().size())
    return emitOpError("has ") << getSlots().size() << " slots but "
                               << getPaths().size() << " paths";
  bool text = getFormat() == "text";
  if (getFormat() != "idx" && !text)
    return emitOpError("format '")
           << getFormat() << "' has no host decoder (known: idx, text)";
  if (!text && (getShifts() || getStride()))
    return emitOpError("shifts and stride belong to format \"text\"; this ingest "
                       "reads format \"")
           << getFormat() << "\"";
  if (std::optional<ArrayRef<int64_t>> shifts = getShifts()) {
    if (shifts->size() != getSlots().size())
      return emitOpError("has ") << shifts->size() << " shifts for "
                                 << getSlots().size() << " slots";
    for (int64_t s : *shifts)
      if (s < 0 || s > 1)
        return emitOpError("a text window of N + 1 bytes holds shifts 0 and 1, got ")
               << s;
  }
  if (std::optional<int64_t> stride = getStride(); stride && *stride < 1)
    return emitOpError("stride must be positive, got ") << *stride;
  if (text && getRanks())
    return emitOpError("a text ingest reads no IDX file; it takes no `ranks`");
  if (getBatch() <= 0)
    return emitOpError("batch must be positive, got ") << getBatch();
  if (getSeed() < 0)
    return emitOpError("seed must not be negative, got ") << getSeed();
  if (std::optional<ArrayRef<int64_t>> classes = getClasses()) {
    if (classes->size() != getSlots().size())
      return emitOpError("has ") << classes->size() << " class bounds for "
                                 << getSlots().size() << " slots";
    for (int64_t c : *classes)
      if (c < 0)
        return emitOpError("class bounds must not be negative, got ") << c;
  }
  if (std::optional<ArrayRef<int64_t>> ranks = getRanks()) {
    if (ranks->size() != getSlots().size())
      return emitOpError("has ") << ranks->size() << " file ranks for "
                                 << getSlots().size() << " slots";
    for (int64_t r : *ranks)
      if (r < 1)
        return emitOpError("file ranks must be positive, got ") << r;
  }
  for (Attribute a : getSlots()) {
    SlotOp slot;
    if (failed(requireHostSlot(*this, symbols, cast<FlatSymbolRefAttr>(a), slot)))
      return failure();
    BufType buf = slot.getBufType();
    // A flat slot (ranks given) holds batch x sample elements.
    bool flatBatch = (getRanks() || text) && buf.getRank() == 1 &&
                     buf.getShape()[0] % getBatch() == 0;
    if (buf.getRank() < 1 || (buf.getShape()[0] != getBatch() && !flatBatch))
      return emitOpError("gathers batches of ")
             << getBatch() << " into " << a << " of type " << buf
             << "; its leading dimension must be the batch (or, with "
                "`ranks`, its one dimension a multiple of it)";
    // A slot read through a reshape is stored flat, [batch * N].
    if (text && (buf.getRank() > 2 || !buf.getElementType().isUnsignedInteger(8) ||
                 buf.getShape()[0] % getBatch() != 0))
      return emitOpError("reads text windows into ")
             << a << " of type " << buf
             << "; a text slot is [batch, N] x ui8 (or, stored flat, [batch * N])";
  }
  return success();
}

LogicalResult ReportOp::verifySymbolUses(SymbolTableCollection &symbols) {
  if (getName().empty())
    return emitOpError("needs a name");
  auto slot = symbols.lookupNearestSymbolFrom<SlotOp>(*this, getSlotAttr());
  if (!slot)
    return emitOpError("names ") << getSlotAttr() << ", which is not an l0uop.slot";
  BufType buf = slot.getBufType();
  if (!buf.getElementType().isF32())
    return emitOpError("reports f32 values; slot ")
           << getSlotAttr() << " holds " << buf;
  return success();
}
