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

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace synpl::l0toipu21 {

class HostMode {
public:
  /// The training-mode slot of `plan` (made, with its pool and init, when
  /// the plan has none) and the kernels an evaluation step runs: walking
  /// the kernels backwards from the slots evaluation reads (the `correct`
  /// report's; the `loss` report's too when an ingest reads text), a
  /// kernel is needed when it writes a needed slot and no actor state.
  /// Fails, with a diagnostic on the plan, when the names it would make
  /// are taken.
  static mlir::FailureOr<HostMode> find(l0uop::PlanOp plan,
                                        llvm::ArrayRef<l0uop::IngestOp> ingests,
                                        llvm::ArrayRef<l0uop::InitOp> inits,
                                        llvm::ArrayRef<l0uop::ReportOp> reports);
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
