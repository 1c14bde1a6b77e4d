//===- HostSide.cpp - What a training program leaves to its host ----------===//
#include "HostSide.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l0toipu21;

/// The pool and slot made for a plan without a training-mode slot.
static constexpr StringLiteral kModePool = "synpl.ipu21.host";
static constexpr StringLiteral kModeSlot = "synpl.ipu21.training_mode";

HostStreams HostStreams::of(l0uop::PlanOp plan, ArrayRef<l0uop::IngestOp> ingests,
                            ArrayRef<l0uop::ReportOp> reports,
                            ArrayRef<l0uop::TransferOp> transfers,
                            SmallVectorImpl<NotLowered> &failures) {
  HostStreams io;
  llvm::StringSet<> ingested, reported;
  for (l0uop::IngestOp g : ingests)
    for (Attribute slot : g.getSlots())
      ingested.insert(cast<FlatSymbolRefAttr>(slot).getValue());
  for (l0uop::ReportOp r : reports)
    reported.insert(r.getSlot());
  for (l0uop::TransferOp tx : transfers) {
    auto fail = [&](const Twine &why) {
      failures.push_back({tx, why.str(), false, "transfer @" + tx.getSymName().str()});
    };
    StringRef src = tx.getSrc(), dst = tx.getDst();
    bool in = tx.getDirection() == l0uop::Direction::h2d && ingested.contains(src);
    bool out = tx.getDirection() == l0uop::Direction::d2h && reported.contains(dst);
    if (!in && !out) {
      fail("it moves @" + src + " to @" + dst + " (" +
           l0uop::stringifyDirection(tx.getDirection()) +
           "); the ipu21 sink streams only batches in (h2d from an ingest's slot) and "
           "reports out (d2h to a report's slot)");
      continue;
    }
    StringRef host = in ? src : dst, chip = in ? dst : src;
    auto a = plan.lookup<l0uop::SlotOp>(host), b = plan.lookup<l0uop::SlotOp>(chip);
    // (The device's slot may be the host's flattened: a stream moves the
    // elements in order.)
    if (!a || !b || a.getBufType().getElementType() != b.getBufType().getElementType() ||
        a.getBufType().getNumElements() != b.getBufType().getNumElements() ||
        int64_t(tx.getBytes()) != int64_t(a.getBufType().getSizeInBytes())) {
      fail("it moves " + Twine(tx.getBytes()) + " bytes between slots of different element "
           "types or counts; a stream moves a whole slot into one of its elements");
      continue;
    }
    if (!io.device.try_emplace(host, chip.str()).second)
      fail("@" + host + " moves twice; a host slot streams to one tensor");
  }
  return io;
}

FailureOr<HostMode> HostMode::find(l0uop::PlanOp plan, ArrayRef<l0uop::IngestOp> ingests,
                                   ArrayRef<l0uop::InitOp> inits,
                                   ArrayRef<l0uop::ReportOp> reports, const HostStreams &io) {
  HostMode mode;
  for (l0uop::InitOp init : inits)
    if (init.getKind() == l0uop::InitKind::training_mode)
      mode.slotName = init.getSlot().str();
  if (mode.slotName.empty()) {
    for (StringRef name : {kModePool, kModeSlot})
      if (SymbolTable::lookupSymbolIn(plan, name))
        return plan.emitError() << "the ipu21 sink names its training-mode slot's pool and slot @"
                                << kModePool << " and @" << kModeSlot << "; the plan uses @"
                                << name;
    MLIRContext *ctx = plan.getContext();
    OpBuilder b = OpBuilder::atBlockBegin(&plan.getBody().front());
    Location loc = plan.getLoc();
    auto f32 = l0uop::BufType::get(ctx, {1}, Float32Type::get(ctx));
    mode.made.push_back(l0uop::PoolOp::create(
        b, loc, b.getStringAttr(kModePool),
        l0uop::PoolKindAttr::get(ctx, l0uop::PoolKind::persistent),
        l0uop::MemSpaceAttr::get(ctx, l0uop::MemSpace::host), b.getI64IntegerAttr(16),
        b.getI64IntegerAttr(16)));
    mode.made.push_back(l0uop::SlotOp::create(
        b, loc, b.getStringAttr(kModeSlot), FlatSymbolRefAttr::get(ctx, kModePool),
        b.getI64IntegerAttr(0), b.getI64IntegerAttr(4), b.getI64IntegerAttr(0),
        b.getI64IntegerAttr(0), TypeAttr::get(f32), IntegerAttr()));
    mode.made.push_back(l0uop::InitOp::create(
        b, loc, l0uop::InitKindAttr::get(ctx, l0uop::InitKind::training_mode),
        FlatSymbolRefAttr::get(ctx, kModeSlot), StringAttr(), FloatAttr(), IntegerAttr(),
        IntegerAttr()));
    mode.slotName = kModeSlot.str();
  }

  // What evaluation reads, as the executor decides it (Executor.cpp).
  llvm::StringSet<> want;
  bool text = llvm::any_of(ingests, [](l0uop::IngestOp g) { return g.getFormat() == "text"; });
  for (l0uop::ReportOp r : reports)
    if (r.getName() == "correct" || (text && r.getName() == "loss"))
      want.insert(io.deviceOf(r.getSlot()));
  auto persistent = [&](Attribute ref) {
    auto slot = plan.lookup<l0uop::SlotOp>(cast<FlatSymbolRefAttr>(ref).getValue());
    auto pool = slot ? plan.lookup<l0uop::PoolOp>(slot.getPool()) : l0uop::PoolOp();
    return pool && pool.getKind() == l0uop::PoolKind::persistent;
  };
  SmallVector<l0uop::KernelOp> kernels(plan.getBody().front().getOps<l0uop::KernelOp>());
  for (l0uop::KernelOp k : llvm::reverse(kernels)) {
    if (llvm::any_of(k.getOutputs(), persistent))
      continue;
    if (llvm::none_of(k.getOutputs(), [&](Attribute ref) {
          return want.contains(cast<FlatSymbolRefAttr>(ref).getValue());
        }))
      continue;
    mode.needed.insert(k);
    for (Attribute in : k.getInputs())
      want.insert(cast<FlatSymbolRefAttr>(in).getValue());
  }
  return mode;
}

void HostMode::undo() {
  for (Operation *op : llvm::reverse(made))
    op->erase();
  made.clear();
}
