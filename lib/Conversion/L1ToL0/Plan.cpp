//===- Plan.cpp - The l0uop.plan of the L1 -> L0 lowering -----------------===//
//
// Phase 3 of the L1 -> L0 emitter (Emitter.h): the plan op. Kernels are
// emitted first, in launch order; their reads and writes give every slot its
// lifetime (a tick per launch), then bump offsets in its pool and the
// pools' capacities, checked against each node's memory (row L0.5, before
// any slot is placed). The pools and slots go in front of the kernels, then
// transfers, ingests, reports, streams (one per step in flight, chained by
// events), the actor state's inits and the control program.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"

#include "synpl/Dialect/L0Ctl/L0CtlDialect.h"
#include "synpl/Dialect/L0Ctl/L0CtlOps.h"
#include "synpl/Support/Property.h"
#include "synpl/Support/Units.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l1tol0;

LogicalResult Emitter::emitPlan(l1::SystemOp system,
                                llvm::DenseMap<Operation *, SmallVector<unsigned>> &ordered) {
  // Launches of one step.
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  // Plan items are located at the L1 declarations they come from (the
  // system; a pool at its node), so remarks and errors on them point there.
  Location planLoc = system.getLoc();
  // The training loop's defaults (epochs, evaluate, checkpoint_every)
  // travel from the schedule to the plan header unchanged.
  l1::ScheduleOp sched;
  if (!module.getOps<l1::ScheduleOp>().empty())
    sched = *module.getOps<l1::ScheduleOp>().begin();
  // Data parallelism: one rank per replica; each reads its slice of the
  // global batch. Tensor parallelism: one rank per shard; each reads the
  // whole batch.
  bool dataParallel = sched && sched.getReplicas();
  int64_t ranks = dataParallel                       ? (int64_t)sched.getReplicas()->size()
                  : sched && sched.getShards() ? (int64_t)sched.getShards()->size()
                                               : 1;
  auto plan = l0uop::PlanOp::create(
      b, planLoc, system.getSymName(),
      sched ? (int64_t)sched.getPipelineDepth() : int64_t{1},
      sched ? sched.getEpochsAttr() : IntegerAttr(),
      sched ? sched.getEvaluateAttr() : StringAttr(),
      sched ? sched.getCheckpointEveryAttr() : IntegerAttr(),
      sched ? sched.getStepsAttr() : IntegerAttr(),
      ranks > 1 ? b.getI64IntegerAttr(ranks) : IntegerAttr());
  int64_t depth = plan.getPipelineDepth();
  plan.getBody().push_back(new Block());
  OpBuilder pb = OpBuilder::atBlockEnd(&plan.getBody().front());

  // Kernels first; the pools and slots go in front of them once their
  // lifetimes are known.
  Block *planBlock = &plan.getBody().front();
  OpBuilder kb = OpBuilder::atBlockEnd(planBlock);
  std::vector<Launch> launches;
  llvm::DenseSet<Operation *> emitted;
  for (StepItem &item : stepItems) {
    if (item.transfer >= 0) {
      TransferItem &t = transfers[item.transfer];
      Launch l;
      l.name = t.name;
      l.reads.push_back(t.src);
      l.writes.push_back(t.dst);
      launches.push_back(l);
      continue;
    }
    if (!emitted.insert(item.region).second)
      continue;
    const std::string &owner = ownerOf[item.region];
    unsigned n = 0;
    for (unsigned id : ordered[item.region]) {
      Group &g = groups[id];
      g.name = uniqueName(
          owner + ".k" + std::to_string(n++) + "_" +
          (g.ops.empty() ? std::string("copy")
                         : g.ops.front()->getName().stripDialect().str()));
      Launch l;
      l.name = g.name;
      if (g.collective) {
        emitCollective(g, l);
        launches.push_back(l);
        continue;
      }
      if (failed(emitKernel(kb, g, l))) {
        plan.erase();
        return failure();
      }
      l.region = item.region;
      launches.push_back(l);
    }
  }

  placeCollectives(launches);
  if (failed(placeSlots(launches, depth))) {
    plan.erase();
    return failure();
  }

  // The plan: memory, kernels, transfers, streams and syncs, inits.
  if (!planBlock->empty())
    pb.setInsertionPoint(&planBlock->front());
  for (auto &p : pools)
    l0uop::PoolOp::create(pb, p->node ? p->node.getLoc() : planLoc, p->name,
                          p->kind, p->space,
                             p->capacity, kAlign);
  for (auto &s : slots)
    l0uop::SlotOp::create(pb, 
        s->pool->node ? s->pool->node.getLoc() : planLoc, s->name, s->pool->name,
        s->offset >= 0 ? pb.getI64IntegerAttr(s->offset) : IntegerAttr(),
        s->bytes(), s->firstUse, s->lastUse, s->bufType(ctx),
        s->shardRows ? pb.getI64IntegerAttr(s->shardRows) : IntegerAttr());
  pb.setInsertionPointToEnd(planBlock);
  for (IngestItem &in : ingests) {
    SmallVector<Attribute> slotRefs;
    for (Slot *s : in.slots)
      slotRefs.push_back(FlatSymbolRefAttr::get(ctx, s->name));
    SmallVector<StringRef> paths(in.paths.begin(), in.paths.end());
    l1::ReadBatchOp rb = in.op;
    SmallVector<int64_t> classes;
    bool anyClasses = false;
    for (Value res : rb.getResults()) {
      llvm::DenseSet<Value> seen;
      classes.push_back(labelClasses(res, seen));
      anyClasses |= classes.back() > 0;
    }
    // A flat slot (read through a reshape) no longer shows its file's rank.
    SmallVector<int64_t> ranks;
    bool anyFlat = false;
    for (Slot *s : in.slots) {
      ranks.push_back(
          l0uop::IngestOp::fileRank(ArrayRef<int64_t>(s->shape).drop_front()));
      anyFlat |= s->flat;
    }
    // A text ingest reads no IDX file (no ranks) and its bytes are every
    // value a u8 can hold (no class bound to check).
    bool text = in.format == "text";
    bool anyShift = llvm::any_of(in.shifts, [](int64_t s) { return s != 0; });
    l0uop::IngestOp::create(
        pb, rb.getLoc(), in.name, pb.getArrayAttr(slotRefs),
        pb.getStrArrayAttr(paths), in.format, rb.getBatch(),
        rb.getOrder() == l1::BatchOrder::shuffle, rb.getDropLast(),
        (int64_t)rb.getSeed().value_or(0),
        anyClasses && !text ? pb.getDenseI64ArrayAttr(classes) : DenseI64ArrayAttr(),
        anyFlat && !text ? pb.getDenseI64ArrayAttr(ranks) : DenseI64ArrayAttr(),
        anyShift ? pb.getDenseI64ArrayAttr(in.shifts) : DenseI64ArrayAttr(),
        text && in.stride != 1 ? pb.getI64IntegerAttr(in.stride) : IntegerAttr(),
        /*sharded=*/dataParallel);
  }
  for (TransferItem &t : transfers)
    l0uop::TransferOp::create(pb, planLoc, t.name, t.src->name,
                                 t.dst->name, t.dir, t.src->bytes());
  for (ReportItem &r : reports)
    l0uop::ReportOp::create(pb, r.loc, r.metric, r.slot->name);
  if (!launches.empty()) {
    SmallVector<std::string> streams;
    for (int64_t i = 0; i < depth; ++i) {
      // A collective runs on one stream (every rank reaches it once per
      // step, in one order): each stream in flight has its own.
      llvm::StringMap<std::string> renamed;
      for (CollectiveItem &c : collectives) {
        std::string name = i == 0 ? c.name : uniqueName(c.name + ".s" + std::to_string(i));
        renamed[c.name] = name;
        SmallVector<Attribute> refs;
        for (Slot *s : c.slots)
          refs.push_back(FlatSymbolRefAttr::get(ctx, s->name));
        bool reduces = c.kind == l0uop::CollectiveKind::all_reduce ||
                       c.kind == l0uop::CollectiveKind::reduce_scatter;
        l0uop::CollectiveOp::create(
            pb, c.loc, pb.getStringAttr(name), l0uop::CollectiveKindAttr::get(ctx, c.kind),
            reduces ? l0uop::CollectiveReduceAttr::get(ctx, c.reduce)
                    : l0uop::CollectiveReduceAttr(),
            pb.getArrayAttr(refs), IntegerAttr(),
            c.completeBefore.empty() ? FlatSymbolRefAttr()
                                     : FlatSymbolRefAttr::get(ctx, c.completeBefore));
      }
      SmallVector<Attribute> entries;
      for (Launch &l : launches)
        entries.push_back(FlatSymbolRefAttr::get(
            ctx, renamed.count(l.name) ? StringRef(renamed[l.name]) : StringRef(l.name)));
      streams.push_back(uniqueName("stream_" + std::to_string(i)));
      l0uop::StreamOp::create(pb, planLoc, pb.getStringAttr(streams.back()),
                                 pb.getArrayAttr(entries));
    }
    // Step k's stream finishes (its handler rewrote the actor state) before
    // step k+1's stream starts: the actor is the fence between steps.
    for (int64_t i = 0; i + 1 < depth; ++i) {
      std::string ev = uniqueName("step_" + std::to_string(i) + "_done");
      l0uop::EventOp::create(pb, planLoc, pb.getStringAttr(ev));
      l0uop::RecordOp::create(pb, 
          planLoc, FlatSymbolRefAttr::get(ctx, ev),
          FlatSymbolRefAttr::get(ctx, launches.back().name),
          FlatSymbolRefAttr::get(ctx, streams[i]));
      l0uop::WaitOp::create(pb, 
          planLoc, FlatSymbolRefAttr::get(ctx, ev),
          FlatSymbolRefAttr::get(ctx, launches.front().name),
          FlatSymbolRefAttr::get(ctx, streams[i + 1]));
    }
  }
  // Inits of the actor state.
  int64_t seed = 0;
  for (auto actor : module.getOps<l1::ActorOp>())
    for (auto state : actor.getOps<l1::StateOp>()) {
      Slot *s = stateSlot.lookup(state);
      l0uop::InitKind kind;
      IntegerAttr fanIn, seedAttr;
      switch (state.getInit()) {
      case l1::InitKind::zeros:
        kind = l0uop::InitKind::zeros;
        break;
      case l1::InitKind::ones:
        kind = l0uop::InitKind::ones;
        break;
      case l1::InitKind::kaiming:
      case l1::InitKind::xavier:
        kind = state.getInit() == l1::InitKind::kaiming
                   ? l0uop::InitKind::kaiming
                   : l0uop::InitKind::xavier;
        // A shard's values are its block of the full tensor's: the fan-in
        // is the full tensor's leading dimension.
        fanIn = pb.getI64IntegerAttr(s->shape.empty() ? 1
                                     : state.getShard() == 0 ? s->shape.front() * ranks
                                                             : s->shape.front());
        seedAttr = pb.getI64IntegerAttr(++seed);
        break;
      case l1::InitKind::planned_steps:
        kind = l0uop::InitKind::planned_steps;
        break;
      case l1::InitKind::training_mode:
        kind = l0uop::InitKind::training_mode;
        break;
      case l1::InitKind::rank:
        kind = l0uop::InitKind::rank;
        break;
      }
      l0uop::InitOp::create(pb, state.getLoc(), kind, s->name, StringAttr(),
                               FloatAttr(), fanIn, seedAttr);
    }

  if (failed(emitControl(system, planBlock, depth))) {
    plan.erase();
    return failure();
  }
  return success();
}

namespace {

bool conflicts(const Launch &a, const Launch &b) {
  auto meets = [](ArrayRef<Slot *> x, ArrayRef<Slot *> y) {
    return llvm::any_of(x, [&](Slot *s) { return llvm::is_contained(y, s); });
  };
  return meets(a.writes, b.reads) || meets(a.writes, b.writes) || meets(a.reads, b.writes);
}

/// Within each run of consecutive kernels of one region, a kernel that
/// waits for a collective still in flight (it touches the collective's
/// buffers) goes after the kernels of the run that neither wait nor depend
/// on it, and of the waiting ones, the one whose collective started first
/// goes first: each collective overlaps as much of the run as it can (the
/// update of the last gradient bucket after the updates of every other).
/// Kernels of one region share data only through their slots, so an order
/// that keeps every pair of conflicting kernels is the same computation.
void deferWaitingKernels(std::vector<Launch> &launches,
                         const llvm::StringMap<SmallVector<Slot *>> &collectiveSlots) {
  // Each in-flight collective's slots, to where it started and its bucket.
  llvm::DenseMap<Slot *, std::pair<size_t, const SmallVector<Slot *> *>> inFlight;
  auto startedAt = [&](const Launch &l) {
    std::optional<size_t> latest;
    for (ArrayRef<Slot *> side : {ArrayRef<Slot *>(l.reads), ArrayRef<Slot *>(l.writes)})
      for (Slot *s : side)
        if (auto it = inFlight.find(s); it != inFlight.end())
          latest = std::max(latest.value_or(0), it->second.first);
    return latest;
  };
  for (size_t b = 0; b < launches.size();) {
    if (!launches[b].region) {
      if (auto it = collectiveSlots.find(launches[b].name); it != collectiveSlots.end())
        for (Slot *s : it->second)
          inFlight[s] = {b, &it->second};
      ++b;
      continue;
    }
    size_t e = b;
    while (e < launches.size() && launches[e].region == launches[b].region)
      ++e;
    // List scheduling of [b, e): of the ready kernels, the first that waits
    // for nothing in flight, else the one whose wait started first. A
    // collective waited for is done.
    SmallVector<Launch> run(launches.begin() + b, launches.begin() + e);
    SmallVector<bool> done(run.size(), false);
    for (size_t k = b; k < e; ++k) {
      int pick = -1;
      std::optional<size_t> pickWait;
      for (size_t i = 0; i < run.size(); ++i) {
        if (done[i])
          continue;
        bool ready = true;
        for (size_t j = 0; j < i && ready; ++j)
          ready = done[j] || !conflicts(run[j], run[i]);
        if (!ready)
          continue;
        std::optional<size_t> wait = startedAt(run[i]);
        if (pick < 0 || (pickWait && (!wait || *wait < *pickWait))) {
          pick = (int)i;
          pickWait = wait;
        }
        if (!wait)
          break;
      }
      done[pick] = true;
      for (ArrayRef<Slot *> side :
           {ArrayRef<Slot *>(run[pick].reads), ArrayRef<Slot *>(run[pick].writes)})
        for (Slot *s : side)
          if (auto it = inFlight.find(s); it != inFlight.end()) {
            const SmallVector<Slot *> *bucket = it->second.second;
            for (Slot *t : *bucket)
              inFlight.erase(t);
          }
      launches[k] = run[pick];
    }
    b = e;
  }
}

} // namespace

void Emitter::placeCollectives(std::vector<Launch> &launches) {
  auto touches = [](const CollectiveItem &c, const Launch &l, bool writesOnly) {
    for (Slot *s : c.slots)
      if (llvm::is_contained(l.writes, s) || (!writesOnly && llvm::is_contained(l.reads, s)))
        return true;
    return false;
  };
  // A stage's collective starts as soon as every buffer of its bucket is
  // written; a tensor graph's launches where its kernels put it.
  llvm::StringMap<SmallVector<Slot *>> pending;
  for (CollectiveItem &c : collectives) {
    if (c.inGraph) {
      // A gather is done when the stream passes it.
      if (c.kind == l0uop::CollectiveKind::all_reduce)
        pending[c.name] = c.slots;
      continue;
    }
    size_t at = 0;
    for (size_t i = 0; i < launches.size(); ++i)
      if (touches(c, launches[i], /*writesOnly=*/true))
        at = i + 1;
    Launch l;
    l.name = c.name;
    l.reads.assign(c.slots.begin(), c.slots.end());
    l.writes.assign(c.slots.begin(), c.slots.end());
    launches.insert(launches.begin() + at, l);
    pending[c.name] = c.slots;
  }
  deferWaitingKernels(launches, pending);
  // Each completes before the first later launch that touches its buffers.
  for (CollectiveItem &c : collectives) {
    if (!pending.count(c.name))
      continue;
    size_t at = llvm::find_if(launches, [&](const Launch &l) { return l.name == c.name; }) -
                launches.begin();
    for (size_t i = at + 1; i < launches.size(); ++i)
      if (touches(c, launches[i], /*writesOnly=*/false)) {
        c.completeBefore = launches[i].name;
        break;
      }
  }
}

LogicalResult Emitter::placeSlots(ArrayRef<Launch> launches, int64_t depth) {
  // Ticks and lifetimes.
  int64_t lastTick = std::max<int64_t>(0, (int64_t)launches.size() - 1);
  for (auto [t, l] : llvm::enumerate(launches)) {
    for (Slot *s : l.reads)
      s->touch(t);
    for (Slot *s : l.writes)
      s->touch(t);
  }
  // A collective in flight (started at its launch, completed before the
  // launch its complete_before names) keeps its buffers to its completion:
  // the kernels that run meanwhile must not reuse a reduce-scatter's source
  // or a bucket's bytes. One without complete_before is done at its own
  // launch, which touches its slots already.
  for (const CollectiveItem &c : collectives) {
    if (c.completeBefore.empty())
      continue;
    auto until = llvm::find_if(launches,
                               [&](const Launch &l) { return l.name == c.completeBefore; });
    if (until != launches.end())
      for (Slot *s : c.slots)
        s->touch(until - launches.begin());
  }
  for (auto &s : slots) {
    if (s->persistent) {
      s->firstUse = 0;
      s->lastUse = lastTick;
    } else if (s->firstUse < 0) {
      s->firstUse = s->lastUse = 0;
    }
  }
  // A buffer a stage reports is read on the host when the step's launches
  // are done, not by a launch: it lives to the end of the step. (A graph
  // output on a CPU's memory is reported where the graph wrote it; without
  // this, packing reused its bytes for a later output.)
  module.walk([&](l1::ReportOp report) {
    if (Slot *s = slotOf.lookup(report.getValue()); s && !s->persistent)
      s->lastUse = lastTick;
  });

  // Bump offsets and capacities.
  for (auto &s : slots) {
    Pool *p = s->pool;
    if (p->kind == l0uop::PoolKind::freelist) {
      p->used += llvm::alignTo(s->bytes(), kAlign);
      continue;
    }
    s->offset = llvm::alignTo(p->used, kAlign);
    p->used = s->offset + s->bytes();
  }
  // A compute node without memory of its own (no vram) keeps its pools in
  // the memory node it has an edge to (as L1.6 and L1.9 hold): that node's
  // capacity is what they must fit in.
  auto memoryOf = [](l1::NodeOp node) -> Operation * {
    if (node.getMemoryBytes())
      return node;
    auto system = node->getParentOfType<l1::SystemOp>();
    if (!system)
      return node;
    for (auto edge : system.getBody().front().getOps<l1::EdgeOp>()) {
      StringRef other;
      if (edge.getFrom() == node.getSymName())
        other = edge.getTo();
      else if (edge.getTo() == node.getSymName())
        other = edge.getFrom();
      else
        continue;
      l1::NodeOp mem = system.lookupNode(other);
      if (mem && mem.getKind() == l1::NodeKind::memory && mem.getMemoryBytes())
        return mem;
    }
    return node;
  };
  llvm::MapVector<Operation *, int64_t> perNode;
  for (auto &p : pools) {
    int64_t need = std::max<int64_t>(llvm::alignTo(p->used, kAlign), kAlign);
    p->capacity = p->kind == l0uop::PoolKind::freelist ? depth * need : need;
    if (p->node)
      perNode[memoryOf(p->node)] += p->capacity;
  }
  for (auto &[nodeOp, bytes] : perNode) {
    auto node = cast<l1::NodeOp>(nodeOp);
    std::optional<StringRef> cap = node.getCapacity() ? node.getCapacity()
                                                      : node.getVram();
    if (!cap)
      continue;
    std::optional<uint64_t> have = parseByteSize(*cap);
    if (have && (uint64_t)bytes > *have) {
      // A resource error of the plan (the L0.5 sweep's bound, known here
      // before any slot is placed), at the node whose memory is short.
      hasFailed = true;
      InFlightDiagnostic d =
          emitCheckError(node, Property::Resource, "L0.5")
          << "the plan needs " << formatBytes(bytes) << " of @"
          << node.getSymName() << " but it has "
          << (node.getCapacity() ? "capacity " : "vram ") << *cap;
      for (auto &p : pools)
        if (p->node && memoryOf(p->node) == nodeOp)
          d.attachNote(p->node.getLoc())
              << "pool " << p->name << " (" << l0uop::stringifyPoolKind(p->kind)
              << "): " << formatBytes(p->capacity);
      return failure();
    }
  }
  return success();
}

LogicalResult Emitter::emitControl(l1::SystemOp system, Block *planBlock, int64_t depth) {
  // Control (path A): the step dispatcher. Each step pops its batch
  // descriptor (when a stage reads batches), counts the step, and pushes a
  // launch descriptor for the runtime: bits 32 and up pick the step's
  // stream (steps rotate over the pipeline_depth streams), the low bits
  // carry the batch. The conventions are those of examples/mnist/mnist.l0.mlir:
  //
  //   %batch = l0ctl.queue_pop @batch_queue        (l0ctl.const 0 without)
  //   step_state[0] += 1
  //   l0ctl.queue_push @launch_queue, (step_state[8] << 32) | %batch
  //   step_state[8] = step_state[8] + 1 == depth ? 0 : step_state[8] + 1
  {
    bool readsBatches = false;
    module.walk([&](l1::ReadBatchOp) { readsBatches = true; });
    std::string batchQ = uniqueName("batch_queue");
    std::string launchQ = uniqueName("launch_queue");
    std::string stepState = uniqueName("step_state");
    std::string program = uniqueName("step_dispatch");
    Location loc = module.getLoc();
    OpBuilder b = OpBuilder::atBlockEnd(planBlock);
    Type i64 = b.getI64Type();
    auto region = [&](StringRef name, int64_t size, l0ctl::Access access,
                      std::optional<int64_t> queue) {
      l0ctl::RegionOp::create(b, loc, name, size, access, /*alignment=*/8,
                              queue ? b.getI64IntegerAttr(*queue) : IntegerAttr());
    };
    if (readsBatches)
      region(batchQ, 64, l0ctl::Access::ro, 8);
    region(launchQ, 64, l0ctl::Access::wo, 8);
    region(stepState, 16, l0ctl::Access::rw, std::nullopt);
    auto prog = l0ctl::ProgramOp::create(b, loc, program);
    Block *entry = &prog.getBody().emplaceBlock();
    Block *wrap = new Block(), *keep = new Block();
    prog.getBody().push_back(wrap);
    prog.getBody().push_back(keep);
    b.setInsertionPointToEnd(entry);
    auto cst = [&](int64_t v) {
      return l0ctl::ConstOp::create(b, loc, i64, b.getI64IntegerAttr(v)).getResult();
    };
    auto load = [&](int64_t disp) {
      return l0ctl::LoadOp::create(b, loc, i64, stepState, Value(), disp).getResult();
    };
    auto store = [&](int64_t disp, Value v) {
      l0ctl::StoreOp::create(b, loc, stepState, Value(), disp, v);
    };
    auto arith = [&](l0ctl::ArithKind kind, Value x, Value y) {
      return l0ctl::ArithOp::create(b, loc, kind, x, y).getResult();
    };
    Value batch = readsBatches
                      ? l0ctl::QueuePopOp::create(b, loc, i64, batchQ).getResult()
                      : cst(0);
    Value one = cst(1);
    store(0, arith(l0ctl::ArithKind::add, load(0), one));
    Value stream = load(8);
    Value launch = arith(l0ctl::ArithKind::or_,
                         arith(l0ctl::ArithKind::shl, stream, cst(32)), batch);
    l0ctl::QueuePushOp::create(b, loc, launchQ, launch);
    Value following = arith(l0ctl::ArithKind::add, stream, one);
    Value wraps = l0ctl::CmpOp::create(b, loc, l0ctl::CmpKind::eq, following, cst(depth));
    l0ctl::BranchOp::create(b, loc, wraps, ValueRange{}, ValueRange{}, wrap, keep);
    b.setInsertionPointToEnd(wrap);
    store(8, cst(0));
    l0ctl::TerminateOp::create(b, loc);
    b.setInsertionPointToEnd(keep);
    store(8, following);
    l0ctl::TerminateOp::create(b, loc);
  }
  return success();
}
