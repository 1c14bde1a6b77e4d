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

FailureOr<HostMode> HostMode::find(l0uop::PlanOp plan, ArrayRef<l0uop::IngestOp> ingests,
                                   ArrayRef<l0uop::InitOp> inits,
                                   ArrayRef<l0uop::ReportOp> reports) {
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
        b.getI64IntegerAttr(0), TypeAttr::get(f32)));
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
      want.insert(r.getSlot());
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
