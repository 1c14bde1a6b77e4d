//===- Train.h - synpl-interp --train: a training run on the interpreter -===//
//
// An L1 program's training run on the reference interpreter, to compare a
// compiled program's losses with (test/Tools/synplc/Inputs/compare_losses.py):
// the same batches, steps and state, computed op by op in double precision.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_INTERP_TRAIN_H
#define SYNPL_INTERP_TRAIN_H

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <string>

namespace synpl::interp {

struct TrainOptions {
  std::string dataDir;      ///< --data: the fields' files by name in DIR
  int64_t epochs = 0;       ///< 0: the schedule's `epochs`, else 1
  int64_t steps = 0;        ///< per epoch; 0: the schedule's `steps`, else all
  bool evaluate = false;    ///< --eval: the test split after each epoch
  int64_t evalBatches = 0;  ///< 0: every test batch (text: 20)
  int64_t reportEvery = 0;  ///< text: a step= line every N steps; 0: a fifth
  std::string metricsPath;  ///< --metrics: a JSON line per step
  /// --stop-at-step: end after this many steps of the run (0: none); the run
  /// keeps its length otherwise (planned_steps, the report interval).
  int64_t stopAfter = 0;
};

/// Runs the training loop of the compiled programs' runtime (the epoch
/// loop of lib/Runtime/EpochLoop.cpp; a text program's StreamLoop.cpp) on
/// the interpreter and prints `epoch=E loss=L test_accuracy=A` per epoch
/// (`step=S loss=L val_loss=V` lines). 0 on success, 1 after an error on
/// stderr.
int train(mlir::ModuleOp module, const TrainOptions &options);

} // namespace synpl::interp

#endif // SYNPL_INTERP_TRAIN_H
