//===- Grouping.cpp - Phase 2 of L1 -> L0: kernel scheduling & fusion ------===//
//
// The ops of each tensor graph and handler are grouped into kernels: an op
// joins the kernel of a direct operand of its own iteration space (or the
// kernel of that space that already reads the most of its buffers, the
// latest of those) unless that would make the kernel depend on itself or
// bind more buffers than a kernel may (SYNPL_PLAN_MAX_KERNEL_ARGS);
// matmuls, reductions and gathers open a kernel and read their operands from
// memory, and their elementwise consumers fuse after them; a scatter has a
// kernel to itself, and its consumers read its result from memory. An
// elementwise op over memory with one consumer is computed inside the
// consumer (prologue fusion); so is a reduction over a short axis read only
// by another reduction (a loop nested in the reader's). Values used outside
// their kernel, or through a movement op, are materialized into arena slots;
// a buffer read through a chain of reshapes is stored flat.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"

#include "synpl/Dialect/L1/L1Program.h"

#include <functional>

using namespace mlir;
using namespace synpl;
using namespace synpl::l1tol0;

Value Emitter::baseOf(Value v, bool &throughView) const {
  while (Operation *def = v.getDefiningOp()) {
    if (!isView(def))
      break;
    throughView = true;
    v = def->getOperand(0);
  }
  return v;
}

void Emitter::collectLeaves(Value v, bool view,
                            llvm::function_ref<void(Value, bool)> fn, unsigned forGroup) {
  Operation *def = v.getDefiningOp();
  if (def && isView(def)) {
    // A view stored by a copy kernel of its own is read from its slot by
    // the kernels formed after that copy (earlier ones read through it).
    auto stored = storedViews.find(v);
    if (stored != storedViews.end() && stored->second < forGroup)
      return fn(v, view);
    return collectLeaves(def->getOperand(0), true, fn, forGroup);
  }
  if (def && inlined.contains(def)) {
    // Read at the inlined op's consumer's index, not the leaf's own: a
    // kernel computing the leaf cannot hand it over in registers.
    for (Value o : def->getOperands())
      collectLeaves(o, true, fn, forGroup);
    return;
  }
  if (def && isa<l1::ConstOp>(def))
    return;
  fn(v, view);
}

/// The axis of a reduction over one axis; nothing for any other op (a
/// reduction over every axis included).
static std::optional<uint64_t> reductionAxis(Operation *op) {
  if (auto r = dyn_cast<l1::ReduceSumOp>(op))
    return r.getAxis();
  if (auto r = dyn_cast<l1::ReduceMeanOp>(op))
    return r.getAxis();
  if (auto r = dyn_cast<l1::ReduceMaxOp>(op))
    return r.getAxis();
  return std::nullopt;
}

/// A reduction to a vector over an axis that is not the operand's last (a
/// bias gradient: the column sums of [rows, C]): its lanes read consecutive
/// elements, so its kernel takes a row range of one trip (Group::flatRows)
/// and the host tiling, which sums a block of columns row after row.
static bool isColumnReduction(Operation *op) {
  std::optional<uint64_t> axis = reductionAxis(op);
  return axis && tensorOf(op->getResult(0)).getRank() == 1 &&
         *axis + 1 != uint64_t(tensorOf(op->getOperand(0)).getRank());
}

bool Emitter::isPlainMatrix(Value v) const {
  // At most one transpose on top, then reshapes down to a buffer (read at
  // one linear index): every load stays affine in the matmul's indices.
  // (A stored copy under the transpose is a buffer too.)
  if (auto t = v.getDefiningOp<l1::TransposeOp>())
    v = t.getOperand();
  if (storedViews.count(v))
    return true;
  while (auto rs = v.getDefiningOp<l1::ReshapeOp>())
    v = rs.getOperand();
  Operation *base = v.getDefiningOp();
  return !base || !isView(base) || storedViews.count(v);
}

bool Emitter::reaches(unsigned from, unsigned to) const {
  // from depends (transitively) on to?
  SmallVector<unsigned> stack{from};
  llvm::DenseSet<unsigned> seen;
  while (!stack.empty()) {
    unsigned g = stack.pop_back_val();
    if (g == to)
      return true;
    if (!seen.insert(g).second)
      continue;
    for (unsigned d : groups[g].deps)
      stack.push_back(d);
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Phase 2: kernel scheduling & fusion
//===----------------------------------------------------------------------===//

LogicalResult Emitter::groupRegion(Operation *region, Block &body) {
  SymbolTableCollection tables;
  std::string owner;
  l1::ActorOp actor;
  if (auto g = dyn_cast<l1::TensorGraphOp>(region)) {
    owner = g.getSymName().str();
  } else {
    auto h = cast<l1::HandlerOp>(region);
    actor = h->getParentOfType<l1::ActorOp>();
    owner = (actor.getSymName() + "." + h.getSymName()).str();
  }
  l1::NodeOp node = isa<l1::TensorGraphOp>(region)
                        ? l1::lookupNode(region, cast<l1::TensorGraphOp>(region).getNodeAttr())
                        : l1::lookupNode(actor, actor.getNodeAttr());
  if (!node)
    return fail(region, "its node does not resolve");
  arenaOf[region] = poolFor(node, l0uop::PoolKind::arena, owner);
  ownerOf[region] = owner;
  // Arguments of a handler whose sender's buffers have no slot.
  for (BlockArgument arg : body.getArguments())
    if (!slotOf.count(arg))
      if (auto t = dyn_cast<RankedTensorType>(arg.getType()))
        slotOf[arg] = newSlot(owner + ".arg" + std::to_string(arg.getArgNumber()),
                              ioArena(node),
                              t);
  SmallVector<unsigned> &mine = regionKernels[region];

  // Values a kernel must compute and store: stored to state or returned,
  // or read through a reshape (a matmul reading a reshaped activation
  // loads it, rather than recomputing it for every output column).
  llvm::DenseSet<Value> mustStore, storedOut;
  // Per value read through reshapes: whether elementwise ops and reductions
  // alone read those reshapes (one element each).
  llvm::DenseMap<Value, bool> reshapedForElements;
  for (Operation &op : body) {
    if (auto sw = dyn_cast<l1::StateWriteOp>(&op))
      storedOut.insert(sw.getValue());
    else if (isa<l1::ReturnOp>(&op))
      storedOut.insert(op.getOperands().begin(), op.getOperands().end());
    else if (auto rs = dyn_cast<l1::ReshapeOp>(&op))
      reshapedForElements.try_emplace(rs.getOperand(), true).first->second &=
          llvm::all_of(rs->getUsers(), [&](Operation *user) {
            return isElementwise(user) ||
                   isa<l1::ReduceSumOp, l1::ReduceMeanOp, l1::ReduceMaxOp>(user);
          });
  }
  mustStore = storedOut;
  for (auto &entry : reshapedForElements)
    mustStore.insert(entry.first);
  // Stored only because elementwise ops and reductions read it through
  // reshapes: a value the recompute rule below may still inline.
  auto storedForElements = [&](Value v) {
    auto it = reshapedForElements.find(v);
    return it != reshapedForElements.end() && it->second && !storedOut.contains(v);
  };
  // An elementwise op over memory and constants only, with one consumer, is
  // computed inside its consumer at the consumer's index (prologue fusion,
  // e.g. |w| inside the loop of sum |w|): it never opens a kernel of its
  // own. With several consumers it is computed once by a kernel instead.
  // An inlined tree reads at most kMaxInlinedLeaves buffers, so that one
  // op never needs more buffers than a kernel may bind.
  // Whether `v` (through views) is an input, state or constant, or an op
  // already inlined; with `orComputed`, also a value another kernel
  // computes.
  std::function<bool(Value, bool)> available = [&](Value v, bool orComputed) {
    Operation *def = v.getDefiningOp();
    if (!def || isa<l1::ConstOp, l1::WindowReadOp, l1::StateReadOp>(def))
      return true;
    if (isView(def))
      return available(def->getOperand(0), orComputed);
    return inlined.contains(def) || (orComputed && isCompute(def));
  };
  auto fromMemory = [&](Value v) { return available(v, false); };
  llvm::DenseMap<Operation *, int64_t> leavesOf;
  auto leafCount = [&](Value v) -> int64_t {
    Operation *def = stripViews(v).getDefiningOp();
    if (def && isa<l1::ConstOp>(def))
      return 0;
    return def && inlined.contains(def) ? leavesOf.lookup(def) : 1;
  };
  // An elementwise op whose one consumer is a reduction is computed inside
  // that reduction's loop even over values other kernels compute (a
  // reduction reads its operands from memory anyway): attention's products
  // over [N, T, T, h, e] are summed as they are formed, never stored.
  auto feedsReduction = [](Operation &op) {
    Operation *user = *op.getResult(0).getUsers().begin();
    return isa<l1::ReduceSumOp, l1::ReduceMeanOp, l1::ReduceMaxOp>(user);
  };
  for (Operation &op : body) {
    if (!isElementwise(&op) || mustStore.contains(op.getResult(0)) ||
        !op.getResult(0).hasOneUse())
      continue;
    if (!llvm::all_of(op.getOperands(), fromMemory) &&
        !(feedsReduction(op) &&
          llvm::all_of(op.getOperands(), [&](Value v) { return available(v, true); })))
      continue;
    int64_t leaves = 0;
    for (Value v : op.getOperands())
      leaves += leafCount(v);
    if (leaves > kMaxInlinedLeaves)
      continue;
    inlined.insert(&op);
    leavesOf[&op] = leaves;
  }

  // A reduction over a short axis (at most kMaxNestedExtent) whose one
  // reader, directly or through single-use views, is another reduction is
  // computed inside that reduction's loop, as a nested loop: a 2 x 2 max
  // pool's two reductions (over the column pair, then the row pair) read
  // the input once and store only the pooled result. Each of its elements
  // is read once, so nothing is computed twice; a longer inner reduction
  // stays a kernel of its own (on a GPU, one thread would loop over both).
  constexpr int64_t kMaxNestedExtent = 8;
  for (Operation &op : body) {
    std::optional<uint64_t> axis = reductionAxis(&op);
    if (!axis || isColumnReduction(&op) || storedOut.contains(op.getResult(0)) ||
        (mustStore.contains(op.getResult(0)) && !storedForElements(op.getResult(0))) ||
        tensorOf(op.getOperand(0)).getShape()[*axis] > kMaxNestedExtent ||
        !available(op.getOperand(0), true))
      continue;
    Value v = op.getResult(0);
    while (v.hasOneUse() && isView(*v.getUsers().begin()))
      v = v.getUsers().begin()->getResult(0);
    if (!v.hasOneUse())
      continue;
    Operation *reader = *v.getUsers().begin();
    if (!reductionAxis(reader) || isColumnReduction(reader))
      continue;
    int64_t leaves = leafCount(op.getOperand(0));
    if (leaves > kMaxInlinedLeaves)
      continue;
    inlined.insert(&op);
    leavesOf[&op] = leaves;
  }

  // Recomputed where that moves fewer bytes: a cheap elementwise op (a
  // compare, a cast, a select, +, -, *, max, min) with several consumers,
  // each an elementwise op of its shape or a reduction of it, is computed
  // inside each of them, together with the single-use cheap ops of its
  // shape that feed it alone, when the tree reads nothing of its shape
  // that a kernel computes (it would join that kernel) and reading its
  // leaves once per consumer costs no more bytes than storing its value
  // and reading it back in each. A max pool's mask (a compare and a cast to one float per
  // input element), read by the window's count and by the gradient, is
  // formed in both from the activation and the pooled maximum instead of
  // written and read twice. Its leaves may be values other kernels compute
  // (they are stored then; collectLeaves reports a leaf under an inlined
  // op as read through a view, so its consumer never joins their kernel).
  auto cheap = [&](Operation *op) {
    return isElementwise(op) &&
           isa<l1::CmpOp, l1::CastOp, l1::SelectOp, l1::AddOp, l1::SubOp, l1::MulOp,
               l1::MaxOp, l1::MinOp, l1::NegOp, l1::AbsOp>(op);
  };
  auto elementBytes = [](Value v) {
    return int64_t(std::max(1u, (tensorOf(v).getElementTypeBitWidth() + 7) / 8));
  };
  // The bytes per element an inlined op's leaves read.
  std::function<int64_t(Operation *)> leafBytesOf = [&](Operation *op) {
    int64_t bytes = 0;
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (def && isa<l1::ConstOp>(def))
        continue;
      bytes += def && inlined.contains(def) ? leafBytesOf(def)
                                            : elementBytes(stripViews(v));
    }
    return bytes;
  };
  for (Operation &op : body) {
    Value result = op.getNumResults() == 1 ? op.getResult(0) : Value();
    if (!result || !cheap(&op) || inlined.contains(&op) ||
        (mustStore.contains(result) && !storedForElements(result)) ||
        result.hasOneUse() || result.use_empty())
      continue;
    ArrayRef<int64_t> shape = tensorOf(result).getShape();
    // (A consumer may read it through a reshape: one element each still.)
    int64_t uses = 0;
    bool consumersOk = true;
    std::function<void(Value)> countUsers = [&](Value v) {
      for (Operation *user : v.getUsers()) {
        if (isa<l1::ReshapeOp>(user) && (!mustStore.contains(user->getResult(0)) ||
                                         storedForElements(user->getResult(0)))) {
          countUsers(user->getResult(0));
          continue;
        }
        ++uses;
        bool reduces = isa<l1::ReduceSumOp, l1::ReduceMeanOp, l1::ReduceMaxOp>(user);
        consumersOk &= reduces || (isElementwise(user) &&
                                   tensorOf(user->getResult(0)).getNumElements() ==
                                       tensorOf(v).getNumElements());
      }
    };
    countUsers(result);
    if (!consumersOk)
      continue;
    // The tree: `op` and the single-use cheap ops of its shape below it.
    SmallVector<Operation *> tree{&op};
    int64_t leaves = 0, leafBytes = 0;
    bool ok = true;
    for (size_t n = 0; n < tree.size() && ok; ++n)
      for (Value v : tree[n]->getOperands()) {
        Operation *def = v.getDefiningOp();
        if (def && isa<l1::ConstOp>(def))
          continue;
        if (def && cheap(def) && !inlined.contains(def) && v.hasOneUse() &&
            !mustStore.contains(v) && llvm::equal(tensorOf(v).getShape(), shape)) {
          tree.push_back(def);
          continue;
        }
        if (def && inlined.contains(def)) {
          leaves += leavesOf.lookup(def);
          leafBytes += leafBytesOf(def);
          continue;
        }
        // A value of its shape computed by a kernel, read directly: the
        // tree joins that kernel and takes it in registers instead (a
        // matmul's bias and activation epilogue).
        if (!available(v, true) ||
            (def && !isView(def) && isCompute(def) &&
             llvm::equal(tensorOf(v).getShape(), shape))) {
          ok = false;
          break;
        }
        leaves += 1;
        leafBytes += elementBytes(stripViews(v));
      }
    int64_t bytes = elementBytes(result);
    if (!ok || leaves > kMaxInlinedLeaves ||
        uses * leafBytes > (uses + 1) * bytes + leafBytes)
      continue;
    for (Operation *t : tree) {
      inlined.insert(t);
      leavesOf[t] = leaves;
    }
  }

  // The group of a computed value, if any.
  auto groupOfValue = [&](Value b) -> std::optional<unsigned> {
    Operation *def = b.getDefiningOp();
    if (def && isCompute(def)) {
      auto it = groupOf.find(def);
      if (it != groupOf.end())
        return it->second;
    }
    return std::nullopt;
  };

  // A kernel that stores `v` (computed through views and inlined ops) into
  // `dst`, after everything before it in the graph or handler: the
  // values it reads are materialized, the state it reads is recorded so
  // that a later write waits for it.
  auto addCopyKernel = [&](Value v, Slot *dst, Location loc) {
    Group g;
    g.id = groups.size();
    g.space.assign(tensorOf(v).getShape().begin(), tensorOf(v).getShape().end());
    g.region = region;
    g.copies.push_back({v, dst});
    g.loc = loc;
    for (unsigned k : mine)
      g.deps.insert(k);
    groups.push_back(std::move(g));
    mine.push_back(groups.back().id);
    unsigned c = groups.back().id;
    collectLeaves(v, false, [&](Value leaf, bool) {
      if (groupOfValue(leaf))
        materialized.insert(leaf);
      if (Slot *s = slotOf.lookup(leaf); s && s->persistent)
        readersOf[s].push_back(c);
    });
    return c;
  };

  // Whether `op` may join group `g` without a cycle: every value it reads
  // through a view or from another kernel must not depend on `g`, and state
  // it reads must not be rewritten by a kernel that `g` depends on.
  auto acyclicJoin = [&](Operation *op, unsigned g) {
    bool ok = true;
    for (Value v : op->getOperands())
      collectLeaves(v, false, [&](Value b, bool view) {
        if (std::optional<unsigned> h = groupOfValue(b)) {
          if (*h == g ? view && !plantJoinThroughView : reaches(*h, g))
            ok = false;
        }
        if (Slot *s = slotOf.lookup(b); s && s->persistent) {
          auto w = writerOf.find(s);
          if (w != writerOf.end() && groups[w->second].region == region &&
              (w->second == g ? view : reaches(g, w->second)))
            ok = false;
        }
      }, g);
    return ok;
  };

  for (Operation &opRef : body) {
    Operation *op = &opRef;
    if (isa<l1::ConstOp>(op) || isView(op) || inlined.contains(op))
      continue;
    if (auto wr = dyn_cast<l1::WindowReadOp>(op)) {
      auto *actorOp = l1::lookupInProgram(
          tables, op, SymbolRefAttr::get(wr.getWindow().getRootReference()));
      Slot *s = stateByName.lookup({actorOp, wr.getFieldAttr().getAttr()});
      if (!s)
        return fail(op, "the window's actor state does not resolve");
      slotOf[wr.getResult()] = s;
      continue;
    }
    if (auto rd = dyn_cast<l1::StateReadOp>(op)) {
      Slot *s = stateByName.lookup({actor, rd.getFieldAttr().getAttr()});
      if (!s)
        return fail(op, "the state field does not resolve");
      if (writerOf.count(s))
        return fail(op, "reads a state field after this handler wrote it; "
                        "read the written value instead");
      slotOf[rd.getResult()] = s;
      continue;
    }
    if (isa<l1::StateWriteOp, l1::ReturnOp>(op)) {
      auto sinkOf = [&](Value v, Slot *dst) -> LogicalResult {
        bool view = false;
        Value b = baseOf(v, view);
        std::optional<unsigned> h = groupOfValue(b);
        if (!dst)
          return fail(op, "has no slot to store into");
        // An all_gather writes its result where it is stored (update
        // sharding's gathered parameter, straight into its state); an
        // all_sum works in place on its operand.
        bool gathers = h && b.getDefiningOp() && isa<l1::AllGatherOp>(b.getDefiningOp());
        if (view || !h || sinkSlot.count(b) || !b.getDefiningOp() ||
            (groups[*h].collective && !gathers)) {
          // No kernel computes it into `dst` (an input, state, constant or
          // view, or a value stored elsewhere already): a copy kernel that
          // runs after everything before it in the graph or handler.
          unsigned c = addCopyKernel(v, dst, op->getLoc());
          if (dst->persistent)
            writerOf[dst] = c;
          return success();
        }
        sinkSlot[b] = dst;
        materialized.insert(b);
        if (dst->persistent) {
          // Write after read: every kernel that read the old state runs
          // first.
          for (unsigned k : readersOf.lookup(dst)) {
            // Readers in earlier graphs or handlers run earlier in the step.
            if (k == *h || groups[k].region != region)
              continue;
            if (reaches(k, *h))
              return fail(op, "the new value of the state depends on a "
                              "kernel that reads its old value");
            groups[*h].deps.insert(k);
          }
          writerOf[dst] = *h;
        }
        return success();
      };
      if (auto sw = dyn_cast<l1::StateWriteOp>(op)) {
        Slot *dst = stateByName.lookup({actor, sw.getFieldAttr().getAttr()});
        if (!dst)
          return fail(op, "the state field does not resolve");
        if (writerOf.count(dst))
          return fail(op, "writes a state field twice in one handler");
        if (failed(sinkOf(sw.getValue(), dst)))
          return failure();
      } else {
        for (auto [i, v] : llvm::enumerate(op->getOperands()))
          if (failed(sinkOf(v, graphOut.lookup({region, (unsigned)i}))))
            return failure();
      }
      continue;
    }
    if (!isCompute(op))
      return fail(op, unsupportedReason(op));

    // A collective is a stream entry of its own between the kernels: it
    // reads its operand from a buffer, and its result is in memory when it
    // completes. An all_sum works in place: on its operand's slot when
    // nothing else reads the operand, else on a copy.
    if (isCollective(op)) {
      Value in = op->getOperand(0);
      bool view = false;
      Value base = baseOf(in, view);
      Operation *def = base.getDefiningOp();
      bool own = !view && !(def && (inlined.contains(def) || isa<l1::ConstOp>(def)));
      if (isa<l1::AllSumOp>(op))
        own = own && def && isCompute(def) && !sinkSlot.count(base) && in.hasOneUse() &&
              !mustStore.contains(in);
      Group g;
      g.space.assign(tensorOf(op->getResult(0)).getShape().begin(),
                     tensorOf(op->getResult(0)).getShape().end());
      g.collective = true;
      g.region = region;
      g.loc = op->getLoc();
      if (!own) {
        Slot *dst = newSlot(owner + ".sent" + std::to_string(collectiveSource.size()),
                            arenaOf.lookup(region), tensorOf(in));
        collectiveSource[op] = dst;
        g.deps.insert(addCopyKernel(in, dst, op->getLoc()));
      } else if (std::optional<unsigned> h = groupOfValue(base)) {
        materialized.insert(base);
        g.deps.insert(*h);
      }
      // It runs after every kernel before it in the graph: each rank
      // reaches the collectives in one order.
      for (unsigned k : mine)
        g.deps.insert(k);
      g.ops.push_back(op);
      g.id = groups.size(); // after the copy kernel's
      groups.push_back(std::move(g));
      mine.push_back(groups.back().id);
      groupOf[op] = groups.back().id;
      materialized.insert(op->getResult(0));
      continue;
    }

    // A matmul reads its operands as plain rows, which its tiled lowerings
    // need: an operand seen through views that split indices (a reshape of
    // a transpose, e.g. a convolution's gradient as rows) is stored first
    // by a copy kernel.
    //
    // The right operand of a batched matmul is stored transposed when its
    // columns (the kernel's lanes) are not the last axis of what it views:
    // its loads depend on the row (the batch index), so the tilings cannot
    // pack it once per kernel, and every row would gather its lanes.
    // A user kernel reads each operand as one dense buffer: one seen
    // through a view, or computed inline into its readers, is stored first.
    if (isCustom(op))
      for (Value operand : op->getOperands()) {
        bool view = false;
        Value base = baseOf(operand, view);
        Operation *def = base.getDefiningOp();
        if (!view && !(def && (inlined.contains(def) || isa<l1::ConstOp>(def))))
          continue;
        if (storedViews.count(operand))
          continue;
        Slot *dst = newSlot(owner + ".arg" + std::to_string(storedViews.size()),
                            arenaOf.lookup(region), tensorOf(operand));
        storedViews[operand] = addCopyKernel(operand, dst, op->getLoc());
        slotOf[operand] = dst;
      }
    if (isa<l1::MatmulOp>(op))
      for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
        auto t = operand.getDefiningOp<l1::TransposeOp>();
        int64_t rank = tensorOf(operand).getRank();
        bool gathersLanes = i == 1 && rank > 2 && t && !storedViews.count(operand) &&
                            (!t.getPerm() || t.getPerm()->back() != rank - 1);
        // The matmul reads a transpose itself: what is stored is below it.
        if (!gathersLanes && isPlainMatrix(operand))
          continue;
        Value v = operand;
        if (t && !gathersLanes)
          v = t.getOperand();
        Slot *dst = newSlot(owner + ".view" + std::to_string(storedViews.size()),
                            arenaOf.lookup(region), tensorOf(v));
        storedViews[v] = addCopyKernel(v, dst, op->getLoc());
        slotOf[v] = dst;
      }

    // Choose the kernel: the kernel of a direct operand of the same
    // iteration space, else a kernel of that space (sibling fusion), when
    // joining keeps the kernel graph acyclic; a matmul or reduction always
    // opens its own.
    auto shape = tensorOf(op->getResult(0)).getShape();
    // The buffers it may bind; a kernel it would take past the runtime's
    // argument table does not take it (deep models: one update kernel per
    // parameter group instead of one over every parameter).
    llvm::SmallSetVector<Value, 8> opBuffers;
    opBuffers.insert(op->getResult(0));
    for (Value v : op->getOperands())
      collectLeaves(v, false, [&](Value leaf, bool) { opBuffers.insert(leaf); });
    auto fits = [&](unsigned g) {
      int64_t n = groups[g].buffers.size();
      for (Value v : opBuffers)
        n += !groups[g].buffers.contains(v);
      return n <= kMaxKernelBuffers;
    };
    auto canJoin = [&](Operation *o, unsigned g) { return fits(g) && acyclicJoin(o, g); };
    std::optional<unsigned> chosen;
    if (!opensKernel(op)) {
      for (Value v : op->getOperands()) {
        std::optional<unsigned> g = groupOfValue(v);
        if (g && !groups[*g].sealed() && llvm::equal(groups[*g].space, shape) &&
            canJoin(op, *g)) {
          chosen = g;
          break;
        }
      }
      // Siblings: the kernel of this space that already reads the most of
      // the op's buffers (they are then read once), the latest of those.
      // (0.5 x of a GELU's derivative joins the kernel that reads x for
      // the GELU, where the rest of the derivative is, rather than the
      // latest kernel of the shape, which would read x again and make the
      // GELU's kernel store the derivative's halves for it.)
      int64_t bestShared = -1;
      for (unsigned k = mine.size(); k-- > 0;) {
        unsigned cand = mine[k];
        if (groups[cand].sealed() || !llvm::equal(groups[cand].space, shape) ||
            !canJoin(op, cand))
          continue;
        int64_t shared = 0;
        for (Value v : opBuffers)
          shared += v != op->getResult(0) && groups[cand].buffers.contains(v);
        if (shared > bestShared) {
          bestShared = shared;
          chosen = cand;
        }
      }
    }
    if (!chosen) {
      Group g;
      g.id = groups.size();
      g.space.assign(shape.begin(), shape.end());
      g.flatRows = (isa<l1::MatmulOp>(op) && shape.size() > 2) || isColumnReduction(op);
      g.scatter = isScatter(op);
      g.custom = isCustom(op);
      g.region = region;
      groups.push_back(std::move(g));
      mine.push_back(groups.back().id);
      chosen = groups.back().id;
    }
    unsigned g = *chosen;
    groups[g].ops.push_back(op);
    groups[g].buffers.insert(opBuffers.begin(), opBuffers.end());
    groupOf[op] = g;
    // A scatter's (or a user kernel's) result is complete only when its
    // kernel ends.
    if (groups[g].sealed())
      materialized.insert(op->getResult(0));

    // What it reads: registers when computed in this kernel at the same
    // index, memory otherwise.
    bool failedHere = false;
    for (Value v : op->getOperands()) {
      bool direct = v.getDefiningOp() && !isView(v.getDefiningOp()) &&
                    !inlined.contains(v.getDefiningOp());
      collectLeaves(v, false, [&](Value b, bool view) {
        if (auto stored = storedViews.find(b); stored != storedViews.end())
          groups[g].deps.insert(stored->second);
        if (std::optional<unsigned> h = groupOfValue(b)) {
          if (*h == g && direct && !view && !opensKernel(op))
            return;
          materialized.insert(b);
          if (*h != g)
            groups[g].deps.insert(*h);
        }
        if (Slot *s = slotOf.lookup(b); s && s->persistent) {
          readersOf[s].push_back(g);
          auto w = writerOf.find(s);
          if (w != writerOf.end() && w->second != g &&
              groups[w->second].region == region) {
            if (reaches(g, w->second))
              failedHere = true;
            else
              groups[w->second].deps.insert(g);
          }
        }
      }, g);
    }
    if (failedHere)
      return fail(op, "reads the old value of a state field that a kernel "
                      "it depends on rewrites");
  }

  // A chain of reshapes over a buffer reads it at one linear index: the
  // buffer is stored flat. A reshape of a broadcast, a transpose or an
  // inlined elementwise op splits its index with DIV and MOD instead.
  for (Operation &op : body) {
    auto rs = dyn_cast<l1::ReshapeOp>(&op);
    if (!rs)
      continue;
    Value src = rs.getOperand();
    while (auto inner = src.getDefiningOp<l1::ReshapeOp>())
      src = inner.getOperand();
    Operation *def = src.getDefiningOp();
    if (def && (isView(def) || isa<l1::ConstOp>(def) || inlined.contains(def)))
      continue;
    flatValues.insert(src);
    if (def && isCompute(def))
      materialized.insert(src);
  }
  return success();
}
