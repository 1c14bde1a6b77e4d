//===- Buffers.cpp - Phase 1 of L1 -> L0: a slot for every buffer ----------===//
//
// Every buffer value of the step (read_batch results, transfer results,
// tensor graph inputs and outputs, handler arguments, actor state) gets a
// Slot in a pool of its node, following forward / then / send edges, so the
// producer and the consumer of a buffer name the same slot. Stages are
// walked in dataflow order; their transfers and window copies become plan
// transfers into staging slots, their batch reads become ingests.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"

#include "synpl/Dialect/L1/L1Program.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l1tol0;

/// The file a field with no path (bound when the program runs) is read
/// from, relative to the executable's `--data DIR`: the IDX naming of MNIST,
/// `train-<field>-idx<N>-ubyte` (N = 1 + the sample's non-unit dimensions;
/// the runtime also takes it with `.gz`, and `t10k-` for the test split).
static std::string runTimeBoundPath(l1::FieldOp field) {
  auto type = cast<RankedTensorType>(field.getType());
  return ("train-" + field.getSymName() + "-idx" +
          Twine(l0uop::IngestOp::fileRank(type.getShape())) + "-ubyte")
      .str();
}


/// The smallest `classes` of the one_hot ops, or row count of the gathers
/// and scatters, that read `v` as indices (through forwards into stages and
/// tensor graphs, transfers and views), or 0 when none does: a label or
/// token field the runtime must check to be in [0, classes).
int64_t Emitter::labelClasses(Value v, llvm::DenseSet<Value> &seen) const {
  if (!seen.insert(v).second)
    return 0;
  int64_t best = 0;
  auto merge = [&](int64_t c) {
    if (c > 0 && (best == 0 || c < best))
      best = c;
  };
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (auto oneHot = dyn_cast<l1::OneHotOp>(user)) {
      merge(oneHot.getClasses());
    } else if (auto gather = dyn_cast<l1::GatherOp>(user);
               gather && use.getOperandNumber() == 1) {
      merge(gather.getTable().getType().getShape()[0]);
    } else if (auto scatter = dyn_cast<l1::ScatterAddOp>(user);
               scatter && use.getOperandNumber() == 1) {
      merge(scatter.getResult().getType().getShape()[0]);
    } else if (isa<l1::TransferOp>(user) || isView(user)) {
      merge(labelClasses(user->getResult(0), seen));
    } else if (auto fwd = dyn_cast<l1::ForwardOp>(user)) {
      Operation *target =
          SymbolTable::lookupNearestSymbolFrom(fwd, fwd.getTargetAttr());
      if (!target || target->getNumRegions() == 0 ||
          target->getRegion(0).empty())
        continue;
      Block &entry = target->getRegion(0).front();
      unsigned index = use.getOperandNumber();
      if (index < entry.getNumArguments())
        merge(labelClasses(entry.getArgument(index), seen));
    }
  }
  return best;
}

std::string Emitter::uniqueName(StringRef base) {
  std::string name = sanitize(base);
  if (names.insert(name).second)
    return name;
  for (unsigned i = 1;; ++i) {
    std::string n = name + "_" + std::to_string(i);
    if (names.insert(n).second)
      return n;
  }
}

l0uop::MemSpace Emitter::spaceOf(l1::NodeOp node) const {
  if (node && node.getKind() == l1::NodeKind::compute && node.getVram())
    return l0uop::MemSpace::device;
  return l0uop::MemSpace::host;
}

Pool *Emitter::poolFor(l1::NodeOp node, l0uop::PoolKind kind, StringRef owner) {
  Pool *&known = poolByKey[{node.getOperation(), (int)kind, owner.str()}];
  if (known)
    return known;
  auto p = std::make_unique<Pool>();
  p->name = uniqueName((owner + "." + l0uop::stringifyPoolKind(kind)).str());
  known = p.get();
  p->kind = kind;
  p->space = spaceOf(node);
  p->node = node;
  pools.push_back(std::move(p));
  return pools.back().get();
}

Slot *Emitter::newSlot(StringRef name, Pool *pool, RankedTensorType type) {
  auto s = std::make_unique<Slot>();
  s->name = uniqueName(name);
  s->pool = pool;
  s->shape.assign(type.getShape().begin(), type.getShape().end());
  s->elementType = type.getElementType();
  slots.push_back(std::move(s));
  return slots.back().get();
}

//===----------------------------------------------------------------------===//
// Phase 1: buffers
//===----------------------------------------------------------------------===//

static l0uop::CollectiveReduce reduceOf(l1::ReduceKind kind) {
  switch (kind) {
  case l1::ReduceKind::sum:
    return l0uop::CollectiveReduce::sum;
  case l1::ReduceKind::mean:
    return l0uop::CollectiveReduce::mean;
  case l1::ReduceKind::max:
    return l0uop::CollectiveReduce::max;
  case l1::ReduceKind::min:
    return l0uop::CollectiveReduce::min;
  }
  llvm_unreachable("an l1 reduce kind");
}

LogicalResult Emitter::planBuffers() {
  SymbolTableCollection tables;
  // Actor state: one persistent slot per field on the actor's node.
  for (auto actor : module.getOps<l1::ActorOp>()) {
    l1::NodeOp node = l1::lookupNode(actor, actor.getNodeAttr());
    Pool *pool = poolFor(node, l0uop::PoolKind::persistent,
                         node ? node.getSymName() : actor.getSymName());
    for (auto state : actor.getOps<l1::StateOp>()) {
      auto type = cast<RankedTensorType>(state.getType());
      Slot *s = newSlot((actor.getSymName() + "." + state.getSymName()).str(),
                        pool, type);
      s->persistent = true;
      // A shard along axis A: each rank holds a block of columns of the
      // rows the axes before A make.
      if (std::optional<uint64_t> axis = state.getShard()) {
        s->shardRows = 1;
        for (int64_t d : type.getShape().take_front(*axis))
          s->shardRows *= d;
      }
      stateSlot[state] = s;
      stateByName[{actor, state.getSymNameAttr()}] = s;
    }
  }

  // Stages, graphs and handlers in dataflow order.
  l1::Dataflow flow = l1::Dataflow::build(tables, &module.getBody()->front());
  SmallVector<Operation *> order;
  {
    llvm::DenseMap<Operation *, unsigned> indeg;
    for (Operation *n : flow.getNodes())
      indeg[n];
    for (Operation *n : flow.getNodes())
      for (Operation *s : flow.getSuccessors(n))
        ++indeg[s];
    SmallVector<Operation *> ready;
    for (Operation *n : flow.getNodes())
      if (!indeg[n])
        ready.push_back(n);
    while (!ready.empty()) {
      Operation *n = ready.front();
      ready.erase(ready.begin());
      order.push_back(n);
      for (Operation *s : flow.getSuccessors(n))
        if (--indeg[s] == 0)
          ready.push_back(s);
    }
    if (order.size() != flow.getNodes().size())
      return fail(module, "the dataflow among stages and tensor graphs has a "
                          "cycle (the L1 verifier rejects this)");
  }

  auto nodeOf = [&](Operation *from, FlatSymbolRefAttr ref) {
    return l1::lookupNode(from, ref);
  };
  // Buffers that stages move: device buffers live in the node's io arena,
  // host buffers in its freelist staging pool.
  auto stagingPool = [&](l1::NodeOp node) -> Pool * {
    return spaceOf(node) == l0uop::MemSpace::device
               ? ioArena(node)
               : poolFor(node, l0uop::PoolKind::freelist,
                         node ? node.getSymName() : "host");
  };

  for (Operation *n : order) {
    if (auto stage = dyn_cast<l1::StageOp>(n)) {
      std::string owner = stage.getSymName().str();
      unsigned txIndex = 0;
      // A transfer or window copy: a fresh staging slot for `result`, filled
      // from `src` by a plan transfer at this point of the step.
      auto copyIntoStaging = [&](Operation *op, Slot *src, Value result,
                                 StringRef suffix) {
        auto bt = cast<l1::BufType>(result.getType());
        l1::NodeOp node = nodeOf(op, bt.getNode());
        l0uop::MemSpace space = spaceOf(node);
        Slot *dst = newSlot(owner + suffix.str() + std::to_string(txIndex),
                            stagingPool(node), bt.getTensor());
        slotOf[result] = dst;
        bool fromHost = src->pool->space == l0uop::MemSpace::host;
        bool toHost = space == l0uop::MemSpace::host;
        l0uop::Direction dir =
            fromHost ? (toHost ? l0uop::Direction::h2h : l0uop::Direction::h2d)
                     : (toHost ? l0uop::Direction::d2h : l0uop::Direction::d2d);
        transfers.push_back(
            {uniqueName(owner + ".copy" + std::to_string(txIndex)), src, dst, dir});
        stepItems.push_back({(int)transfers.size() - 1, nullptr});
        ++txIndex;
      };
      // Buffers a root stage receives come from outside the step (the
      // runtime): they get slots of their own, where their type places them.
      if (!stage.getBody().empty())
        for (BlockArgument arg : stage.getBody().front().getArguments()) {
          auto bt = dyn_cast<l1::BufType>(arg.getType());
          if (!bt || slotOf.count(arg))
            continue;
          slotOf[arg] = newSlot(owner + ".in" + std::to_string(arg.getArgNumber()),
                                stagingPool(nodeOf(stage, bt.getNode())),
                                bt.getTensor());
        }
      // The slot of a buffer a collective or transfer reads; null after a
      // located failure when nothing upstream gave it one.
      auto producedSlot = [&](Operation *op, Value v, StringRef what) -> Slot * {
        Slot *s = slotOf.lookup(v);
        if (!s)
          (void)fail(op, what + " has no slot (it does not come from a read_batch, "
                                "transfer or tensor graph)");
        return s;
      };
      WalkResult r = stage.walk([&](Operation *op) -> WalkResult {
        if (auto rb = dyn_cast<l1::ReadBatchOp>(op)) {
          IngestItem ingest;
          ingest.name = uniqueName(owner + ".read" + std::to_string(ingests.size()));
          ingest.op = rb;
          auto data = SymbolTable::lookupNearestSymbolFrom<l1::DataOp>(
              rb, rb.getSourceAttr());
          for (auto [i, res] : llvm::enumerate(rb.getResults())) {
            auto bt = cast<l1::BufType>(res.getType());
            l1::NodeOp node = nodeOf(op, bt.getNode());
            Pool *pool = poolFor(node, l0uop::PoolKind::freelist,
                                 node ? node.getSymName() : "host");
            auto field = cast<FlatSymbolRefAttr>(rb.getFields()[i]);
            slotOf[res] = newSlot(owner + "." + field.getValue().str(), pool,
                                  bt.getTensor());
            auto fieldOp =
                data ? dyn_cast_or_null<l1::FieldOp>(
                           SymbolTable::lookupSymbolIn(data, field.getAttr()))
                     : nullptr;
            if (!fieldOp) {
              (void)fail(op, "field " + field.getValue() +
                                 " is not a field of the data source");
              return WalkResult::interrupt();
            }
            if (fieldOp.getFormat() == l1::DataFormat::raw) {
              (void)fail(op, "field " + field.getValue() + " has format " +
                                 l1::stringifyDataFormat(fieldOp.getFormat()) +
                                 ", which has no host decoder (known: idx, text)");
              return WalkResult::interrupt();
            }
            // The L1 verifier keeps one batch's fields all text or all not.
            if (fieldOp.getFormat() == l1::DataFormat::text) {
              ingest.format = "text";
              ingest.shifts.push_back(fieldOp.getShift().value_or(0));
              ingest.stride = fieldOp.getStride().value_or(1);
            }
            ingest.slots.push_back(slotOf[res]);
            ingest.paths.push_back(fieldOp.getPath().empty()
                                       ? runTimeBoundPath(fieldOp)
                                       : fieldOp.getPath().str());
          }
          ingests.push_back(std::move(ingest));
          return WalkResult::advance();
        }
        if (auto report = dyn_cast<l1::ReportOp>(op)) {
          Slot *s = slotOf.lookup(report.getValue());
          if (!s) {
            (void)fail(op, "the reported buffer has no slot");
            return WalkResult::interrupt();
          }
          reports.push_back({report.getMetric().str(), s, op->getLoc()});
          return WalkResult::advance();
        }
        if (auto tx = dyn_cast<l1::TransferOp>(op)) {
          Slot *src = producedSlot(op, tx.getSource(), "the transferred buffer");
          if (!src)
            return WalkResult::interrupt();
          copyIntoStaging(op, src, tx.getResult(), ".tx");
          return WalkResult::advance();
        }
        if (auto ar = dyn_cast<l1::AllReduceOp>(op)) {
          // In place: each result is its operand's slot, combined across
          // the replicas.
          CollectiveItem c{uniqueName(owner + ".all_reduce" + std::to_string(collectives.size())),
                           reduceOf(ar.getReduce()),
                           {}, op->getLoc(), ""};
          for (auto [in, out] : llvm::zip(ar.getBuffers(), ar.getResults())) {
            Slot *s = producedSlot(op, in, "an all-reduced buffer");
            if (!s)
              return WalkResult::interrupt();
            slotOf[out] = s;
            c.slots.push_back(s);
          }
          collectives.push_back(std::move(c));
          return WalkResult::advance();
        }
        if (auto rs = dyn_cast<l1::ReduceScatterOp>(op)) {
          // Update sharding: the replica's block of the combined buffer,
          // a fresh slot beside the operand's.
          Slot *src = producedSlot(op, rs.getBuffer(), "the reduce-scattered buffer");
          if (!src)
            return WalkResult::interrupt();
          std::string name = uniqueName(owner + ".reduce_scatter" +
                                        std::to_string(collectives.size()));
          Slot *dst = newSlot(name + ".block", src->pool, rs.getResult().getType().getTensor());
          slotOf[rs.getResult()] = dst;
          CollectiveItem c{name, reduceOf(rs.getReduce()), {src, dst}, op->getLoc(), ""};
          c.kind = l0uop::CollectiveKind::reduce_scatter;
          collectives.push_back(std::move(c));
          return WalkResult::advance();
        }
        if (auto br = dyn_cast<BranchOpInterface>(op)) {
          // Buffers passed to a successor block are the same buffers.
          for (unsigned i = 0; i < op->getNumSuccessors(); ++i) {
            SuccessorOperands ops = br.getSuccessorOperands(i);
            Block *dest = op->getSuccessor(i);
            for (unsigned a = 0; a < dest->getNumArguments() && a < ops.size(); ++a)
              if (Value v = ops[a])
                if (Slot *s = slotOf.lookup(v))
                  slotOf[dest->getArgument(a)] = s;
          }
          return WalkResult::advance();
        }
        if (auto fwd = dyn_cast<l1::ForwardOp>(op)) {
          Operation *target =
              l1::lookupInProgram(tables, op, fwd.getTargetAttr());
          if (!target || target->getNumRegions() == 0 ||
              target->getRegion(0).empty())
            return WalkResult::advance();
          Block &entry = target->getRegion(0).front();
          for (auto [arg, v] : llvm::zip(entry.getArguments(), fwd.getArgs()))
            if (Slot *s = slotOf.lookup(v))
              slotOf[arg] = s;
          return WalkResult::advance();
        }
        if (auto send = dyn_cast<l1::SendOp>(op)) {
          auto handler = dyn_cast_or_null<l1::HandlerOp>(
              l1::lookupInProgram(tables, op, send.getTarget()));
          if (!handler)
            return WalkResult::advance();
          Block &entry = handler.getBody().front();
          for (auto [arg, v] : llvm::zip(entry.getArguments(), send.getArgs()))
            if (Slot *s = slotOf.lookup(v))
              slotOf[arg] = s;
          // The handler runs when its message arrives: its kernels launch
          // here in the step.
          stepItems.push_back({-1, handler});
          return WalkResult::advance();
        }
        if (auto wc = dyn_cast<l1::WindowCopyOp>(op)) {
          // A snapshot of actor state: a copy from the state's slot.
          Operation *actorOp = l1::lookupInProgram(
              tables, op, SymbolRefAttr::get(wc.getWindow().getRootReference()));
          Slot *src = stateByName.lookup({actorOp, wc.getFieldAttr().getAttr()});
          if (!src) {
            (void)fail(op, "the window's actor state does not resolve");
            return WalkResult::interrupt();
          }
          copyIntoStaging(op, src, wc.getResult(), ".snap");
          return WalkResult::advance();
        }
        return WalkResult::advance();
      });
      if (r.wasInterrupted())
        return failure();
      continue;
    }
    auto graph = dyn_cast<l1::TensorGraphOp>(n);
    if (!graph)
      continue;
    stepItems.push_back({-1, graph});
    // Results: io slots on the graph's node, passed to the `then` stage.
    l1::NodeOp node = nodeOf(graph, graph.getNodeAttr());
    if (!node)
      return fail(graph, "its node does not resolve");
    Block &body = graph.getBody().front();
    // Inputs no stage forwards are filled from outside the step (by the
    // runtime): they get io slots of their own.
    for (BlockArgument arg : body.getArguments())
      if (!slotOf.count(arg))
        slotOf[arg] = newSlot(graph.getSymName().str() + ".in" +
                                  std::to_string(arg.getArgNumber()),
                              ioArena(node),
                              tensorOf(arg));
    auto ret = dyn_cast<l1::ReturnOp>(body.getTerminator());
    Operation *then = graph.getThenAttr()
                          ? l1::lookupInProgram(tables, graph, graph.getThenAttr())
                          : nullptr;
    if (ret) {
      Pool *io = ioArena(node);
      for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
        Slot *s = newSlot(graph.getSymName().str() + ".out" + std::to_string(i),
                          io, tensorOf(v));
        graphOut[{graph, (unsigned)i}] = s;
        if (then && then->getNumRegions() && !then->getRegion(0).empty() &&
            i < then->getRegion(0).front().getNumArguments())
          slotOf[then->getRegion(0).front().getArgument(i)] = s;
      }
    }
  }
  return success();
}

