//===- HostSide.h - What a training program leaves to its host -*- C++ -*-===//
//
// A plan with ingests, inits or reports is a training program: the runtime's
// executor drives it step by step (synpl_rt_main_device), gathering each
// batch, filling the inits, reading the reports and switching between
// training and evaluation. On the IPU the step runs whole on the chip, so
// an evaluation step must skip, on the chip, what the host executor skips:
// every kernel that writes actor state, and every kernel the reports
// evaluation reads do not need. Those run under an `ipu21.if` on the
// plan's training-mode slot (l0uop.init training_mode, which the executor
// sets to 1 while it trains and 0 while it evaluates), made when the plan
// has none.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_CONVERSION_L0TOIPU21_HOSTSIDE_H
#define SYNPL_CONVERSION_L0TOIPU21_HOSTSIDE_H

#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Support/NotLowered.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace synpl::l0toipu21 {

/// Where the data of each host slot lives on the chip. A plan placed on
/// the device moves each batch from its ingest's (host) slot to a device
/// slot, and each report's value from a device slot to its (host) slot;
/// the program streams the batch into the device slot's tensor and the
/// report out of it directly. A plan placed on the host reads and reports
/// its slots themselves.
class HostStreams {
public:
  /// Each transfer of `transfers`: an h2d from an ingest's slot, or a d2h
  /// to a report's slot, each host slot moved at most once, whole, between
  /// slots of one type; any other a failure.
  static HostStreams of(l0uop::PlanOp plan, llvm::ArrayRef<l0uop::IngestOp> ingests,
                        llvm::ArrayRef<l0uop::ReportOp> reports,
                        llvm::ArrayRef<l0uop::TransferOp> transfers,
                        llvm::SmallVectorImpl<NotLowered> &failures);
  /// The slot whose tensor holds host slot `slot`'s data: the other end of
  /// its transfer, else `slot` itself.
  llvm::StringRef deviceOf(llvm::StringRef slot) const {
    auto it = device.find(slot);
    return it == device.end() ? slot : llvm::StringRef(it->second);
  }
  /// Whether `slot` is a host end of a transfer (it has no tensor).
  bool onHost(llvm::StringRef slot) const { return device.count(slot) != 0; }

private:
  llvm::StringMap<std::string> device;
};

class HostMode {
public:
  /// The training-mode slot of `plan` (made, with its pool and init, when
  /// the plan has none) and the kernels an evaluation step runs: walking
  /// the kernels backwards from the slots evaluation reads (the `correct`
  /// report's; the `loss` report's too when an ingest reads text; on the
  /// chip, io.deviceOf them), a
  /// kernel is needed when it writes a needed slot and no actor state.
  /// Fails, with a diagnostic on the plan, when the names it would make
  /// are taken.
  static mlir::FailureOr<HostMode> find(l0uop::PlanOp plan,
                                        llvm::ArrayRef<l0uop::IngestOp> ingests,
                                        llvm::ArrayRef<l0uop::InitOp> inits,
                                        llvm::ArrayRef<l0uop::ReportOp> reports,
                                        const HostStreams &io);
  /// The slot (and tensor) an If tests.
  llvm::StringRef slot() const { return slotName; }
  /// Whether `kernel` runs only in training steps.
  bool trainingOnly(l0uop::KernelOp kernel) const { return !needed.contains(kernel); }
  /// Erases what find made (the lowering failed).
  void undo();

private:
  std::string slotName;
  llvm::SmallVector<mlir::Operation *> made;
  llvm::DenseSet<mlir::Operation *> needed;
};

} // namespace synpl::l0toipu21

#endif // SYNPL_CONVERSION_L0TOIPU21_HOSTSIDE_H
