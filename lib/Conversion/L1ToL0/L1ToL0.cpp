//===- L1ToL0.cpp - Emit the L0 plan of a verified L1 program --------------===//
//
// The spec's L1 -> L0 lowering (--synpl-l1-to-l0): not a search but
// emission, in three phases over one model of the program (Emitter.h):
// buffers (Buffers.cpp), kernel scheduling & fusion (Grouping.cpp), and the
// kernels' UOps (KernelBuilder.cpp, one emission pattern per op family in
// Patterns/) with the plan around them (Plan.cpp).
//
// Nothing is emitted unless every op lowers: before anything is built each
// op is asked of its pattern, and a failure is reported as
// `lowered N of M ops; not lowered: <op> at <loc>: <why>`.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"

#include "synpl/Conversion/Passes.h"
#include "synpl/Dialect/L0Ctl/L0CtlDialect.h"
#include "synpl/Dialect/L0UOp/L0UOpDialect.h"
#include "synpl/Dialect/L1/L1Dialect.h"
#include "synpl/Dialect/L1/L1Program.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"

namespace synpl {
#define GEN_PASS_DEF_L1TOL0
#include "synpl/Conversion/Passes.h.inc"
} // namespace synpl

using namespace mlir;
using namespace synpl;
using namespace synpl::l1tol0;

std::string synpl::l1tol0::sanitize(StringRef s) {
  std::string out;
  for (char c : s)
    out.push_back(llvm::isAlnum(c) || c == '_' || c == '.' ? c : '_');
  return out;
}

std::string Emitter::unsupportedReason(Operation *op) const {
  // The ops the emitter itself takes: constants, reads and writes of state
  // and windows, the graph's return.
  if (isa<l1::ConstOp, l1::WindowReadOp, l1::StateReadOp, l1::StateWriteOp, l1::ReturnOp>(op))
    return "";
  if (const EmitPattern *p = patterns.lookup(op))
    return p->whyNot(op);
  if (isCollective(op))
    return "";
  return "no L0 lowering for this op";
}

LogicalResult Emitter::fail(Operation *op, const Twine &why) {
  if (!hasFailed) {
    hasFailed = true;
    // The ops placed in kernels before the one at fault (every op passed
    // the check up front; this one fails while being placed).
    int64_t lowered = std::min(numLowered(), std::max<int64_t>(totalOps - 1, 0));
    reportNotLowered(lowered, totalOps, {NotLowered{op, why.str()}});
  }
  return failure();
}

LogicalResult Emitter::checkLowerable(l1::SystemOp system) {
  // Count the ops to lower and refuse up front what has no lowering.
  SmallVector<std::pair<Operation *, std::string>> bad;
  // Buffers hold integers or floats, and every dimension is positive.
  auto badType = [](Operation *op) -> std::string {
    auto check = [](Type t) -> std::string {
      RankedTensorType tt = dyn_cast<RankedTensorType>(t);
      if (auto b = dyn_cast<l1::BufType>(t))
        tt = b.getTensor();
      if (!tt)
        return "";
      if (!tt.getElementType().isIntOrFloat())
        return "a buffer of " + std::string(llvm::isa<IndexType>(tt.getElementType())
                                                ? "index"
                                                : "non-numeric") +
               " elements has no L0 form";
      if (llvm::is_contained(tt.getShape(), 0))
        return "an empty tensor has no L0 buffer";
      return "";
    };
    for (Type t : op->getResultTypes())
      if (std::string why = check(t); !why.empty())
        return why;
    for (Type t : op->getOperandTypes())
      if (std::string why = check(t); !why.empty())
        return why;
    return "";
  };
  auto consider = [&](Operation *op) {
    ++totalOps;
    std::string why = badType(op);
    if (why.empty())
      why = unsupportedReason(op);
    if (!why.empty())
      bad.push_back({op, why});
  };
  for (auto graph : module.getOps<l1::TensorGraphOp>()) {
    for (BlockArgument arg : graph.getBody().front().getArguments())
      if (RankedTensorType t = dyn_cast<RankedTensorType>(arg.getType());
          t && (!t.getElementType().isIntOrFloat() || llvm::is_contained(t.getShape(), 0)))
        bad.push_back({graph, "an input has no L0 buffer form (non-numeric "
                              "elements or an empty dimension)"});
    for (Operation &op : graph.getBody().front())
      consider(&op);
  }
  for (auto actor : module.getOps<l1::ActorOp>())
    for (auto state : actor.getOps<l1::StateOp>()) {
      auto t = cast<RankedTensorType>(state.getType());
      if (!t.getElementType().isIntOrFloat() || llvm::is_contained(t.getShape(), 0))
        bad.push_back({state, "the state field has no L0 buffer form "
                              "(non-numeric elements or an empty dimension)"});
    }
  // A handler no stage messages never runs: nothing of it is emitted.
  l1::Dataflow flow = l1::Dataflow::build(&module.getBody()->front());
  for (auto actor : module.getOps<l1::ActorOp>())
    for (auto handler : actor.getOps<l1::HandlerOp>())
      if (!flow.getSenders(handler).empty())
        for (Operation &op : handler.getBody().front())
          consider(&op);
  for (auto stage : module.getOps<l1::StageOp>()) {
    stage.walk([&](Operation *op) {
      if (isa<l1::ReadBatchOp, l1::TransferOp, l1::AllReduceOp, l1::ReduceScatterOp,
              l1::WindowCopyOp, l1::ForwardOp,
              l1::SendOp>(op)) {
        ++totalOps;
        if (std::string why = badType(op); !why.empty())
          bad.push_back({op, why});
      }
    });
    // A stage's control flow (`if batch_full(x) { ... } else { ... }`) has
    // no form in the step dispatcher yet: refused, never run as if every
    // branch were taken.
    if (!stage.getBody().empty() && !stage.getBody().hasOneBlock()) {
      ++totalOps;
      Operation *branch = stage.getBody().front().getTerminator();
      bad.push_back({branch ? branch : stage.getOperation(),
                     "a stage's branches are not emitted into the control "
                     "program; only a straight-line stage (one block) lowers"});
    }
  }
  if (!bad.empty()) {
    // Graph inputs and state fields are not ops of the count.
    int64_t badOps = llvm::count_if(bad, [](auto &b) {
      return !isa<l1::TensorGraphOp, l1::StateOp>(b.first);
    });
    SmallVector<NotLowered> failures;
    for (auto &[op, why] : bad)
      failures.push_back({op, why});
    reportNotLowered(totalOps - badOps, totalOps, failures);
    return failure();
  }

  return success();
}

void Emitter::splitFullReductions() {
  // A reduction of a whole rank>=2 tensor to a scalar would run in one
  // thread (a REDUCE cannot fold a parallel RANGE): reduce the last axis
  // first, in parallel over the rest, until one axis is left. Exact for sum
  // and max, and for mean (equal group sizes); the program stays valid L1.
  {
    SmallVector<Operation *> full;
    module.walk([&](Operation *op) {
      if (isa<l1::ReduceSumOp, l1::ReduceMeanOp, l1::ReduceMaxOp>(op) &&
          !op->getAttr("axis") && tensorOf(op->getOperand(0)).getRank() >= 2)
        full.push_back(op);
    });
    for (Operation *op : full) {
      OpBuilder b(op);
      Value v = op->getOperand(0);
      while (tensorOf(v).getRank() >= 2) {
        RankedTensorType t = tensorOf(v);
        OperationState st(op->getLoc(), op->getName());
        st.addOperands(v);
        st.addTypes(RankedTensorType::get(t.getShape().drop_back(),
                                          t.getElementType()));
        st.addAttribute("axis", b.getI64IntegerAttr(t.getRank() - 1));
        v = b.create(st)->getResult(0);
      }
      op->setOperand(0, v);
    }
  }
}

FailureOr<llvm::DenseMap<Operation *, SmallVector<unsigned>>> Emitter::orderKernels() {
  // Dependencies first, then creation order.
  llvm::DenseMap<Operation *, SmallVector<unsigned>> ordered;
  for (StepItem &item : stepItems) {
    if (!item.region || ordered.count(item.region))
      continue;
    SmallVector<unsigned> &ids = regionKernels[item.region];
    SmallVector<unsigned> out;
    llvm::DenseSet<unsigned> done;
    while (out.size() < ids.size()) {
      bool progress = false;
      for (unsigned id : ids) {
        if (done.contains(id))
          continue;
        if (llvm::all_of(groups[id].deps,
                         [&](unsigned d) { return done.contains(d); })) {
          out.push_back(id);
          done.insert(id);
          progress = true;
          break;
        }
      }
      if (!progress)
        return fail(item.region, "its kernels depend on each other in a cycle");
    }
    ordered[item.region] = out;
  }
  return ordered;
}

LogicalResult Emitter::run() {
  l1::SystemOp system;
  for (auto sys : module.getOps<l1::SystemOp>())
    system = sys;
  if (!system)
    return success(); // nothing of L1 here (e.g. the pass's own output)
  if (failed(checkLowerable(system)))
    return failure();
  splitFullReductions();
  gatherAlongAxisZero();

  if (failed(planBuffers()))
    return failure();

  // Kernel scheduling & fusion per tensor graph and handler.
  for (StepItem &item : stepItems) {
    if (!item.region || regionKernels.count(item.region))
      continue;
    Block &body = item.region->getRegion(0).front();
    if (failed(groupRegion(item.region, body)))
      return failure();
  }
  // Handlers nobody messages, graphs nobody feeds: nothing launches them.

  // Slots of materialized values, in kernel order.
  for (StepItem &item : stepItems) {
    if (!item.region)
      continue;
    unsigned counter = 0;
    for (unsigned id : regionKernels[item.region])
      for (Operation *op : groups[id].ops) {
        Value r = op->getResult(0);
        // An all_sum sums in place: its result is its operand's slot (or
        // the copy's it sends).
        if (auto sum = dyn_cast<l1::AllSumOp>(op)) {
          Slot *src = collectiveSource.lookup(op);
          slotOf[r] = src ? src : slotOf.lookup(sum.getInput());
          continue;
        }
        if (!materialized.contains(r) || slotOf.count(r))
          continue;
        if (Slot *sink = sinkSlot.lookup(r)) {
          slotOf[r] = sink;
          continue;
        }
        Pool *arena = arenaOf.lookup(item.region);
        const std::string &owner = ownerOf[item.region];
        slotOf[r] = newSlot(owner + ".t" + std::to_string(counter++) + "_" +
                                op->getName().stripDialect().str(),
                            arena, tensorOf(r));
      }
  }
  for (Value v : flatValues)
    if (Slot *s = slotOf.lookup(v))
      s->flat = true;

  FailureOr<llvm::DenseMap<Operation *, SmallVector<unsigned>>> ordered = orderKernels();
  if (failed(ordered) || failed(emitPlan(system, *ordered)))
    return failure();

  // The L1 program is now the plan.
  SmallVector<Operation *> dead;
  for (Operation &op : module.getBody()->getOperations())
    if (isa<l1::L1Dialect>(op.getDialect()))
      dead.push_back(&op);
  for (Operation *op : llvm::reverse(dead)) {
    op->dropAllUses();
    op->dropAllReferences();
  }
  for (Operation *op : llvm::reverse(dead))
    op->erase();
  return success();
}

namespace {

struct L1ToL0Pass : public synpl::impl::L1ToL0Base<L1ToL0Pass> {
  using L1ToL0Base::L1ToL0Base;

  LogicalResult initialize(MLIRContext *ctx) override {
    auto set = std::make_shared<EmitPatternSet>(ctx);
    populateL1ToL0EmitPatterns(*set);
    patterns = std::move(set);
    return success();
  }

  void runOnOperation() override {
    Emitter emitter(getOperation(), *patterns);
    if (!testPlantMiscompile.empty()) {
      if (testPlantMiscompile != "join-through-view") {
        getOperation().emitError("--synpl-l1-to-l0: unknown test-plant-miscompile '")
            << testPlantMiscompile << "' (known: join-through-view)";
        return signalPassFailure();
      }
      emitter.plantJoinThroughView = true;
    }
    if (failed(emitter.run()))
      return signalPassFailure();
    if (!summary)
      return;
    for (auto plan : getOperation().getOps<l0uop::PlanOp>()) {
      int64_t kernels = 0, slots = 0;
      std::string pools;
      for (Operation &op : plan.getBody().front()) {
        if (isa<l0uop::KernelOp>(op))
          ++kernels;
        else if (isa<l0uop::SlotOp>(op))
          ++slots;
        else if (auto pool = dyn_cast<l0uop::PoolOp>(op))
          pools += (", @" + pool.getSymName() + " " +
                    l0uop::stringifyPoolKind(pool.getKind()) + " " +
                    std::to_string(pool.getCapacity()) + " bytes")
                       .str();
      }
      plan.emitRemark() << "plan @" << plan.getSymName() << ": " << kernels
                        << " kernels (" << emitter.numLowered()
                        << " tensor ops), " << slots << " slots" << pools;
    }
  }

  /// Built once per pass instance (initialize), shared by its copies.
  std::shared_ptr<const EmitPatternSet> patterns;
};

} // namespace
