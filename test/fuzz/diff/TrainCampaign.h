//===- TrainCampaign.h - synpl-diff-fuzz --kind=train -----------*- C++ -*-===//
//
// The campaign over training programs (Training.h): for each seed a recipe
// is generated, compiled for the CPU (checked on the host JIT and the IPU
// simulator) and, every --cuda-every seeds, for the GPU (the CUDA SIMT
// interpreter), and one step compared with the reference. A failure is
// shrunk over the recipe (fewer layers, smaller shapes and batch, a plainer
// optimizer) and written as a `.syn` reproducer whose RUN line re-checks it
// (`synpl-diff-fuzz --check FILE.syn`).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TEST_FUZZ_DIFF_TRAINCAMPAIGN_H
#define SYNPL_TEST_FUZZ_DIFF_TRAINCAMPAIGN_H

#include "Oracle.h"
#include "Training.h"

#include "mlir/IR/MLIRContext.h"

#include <functional>

namespace synpl::difffuzz {

struct TrainCampaignOptions {
  int64_t first = 0, end = 0;
  /// Check the CPU compile (on the targets `oracle` enables) and the GPU one.
  bool cpu = true, cuda = false;
  unsigned cudaEvery = 1;
  bool reduce = false, stopAtFirst = false;
  std::string out = ".";
  double seconds = 0;
  OracleOptions oracle;
  /// Narrows `oracle` to the configuration a finding names.
  std::function<OracleOptions(const Finding &)> narrowTo;
};

/// Runs seeds [first, end); returns the number of failing programs.
int64_t runTrainingCampaign(mlir::MLIRContext *ctx, const TrainCampaignOptions &options);

/// Checks the `.syn` training program at `path` (a reproducer) on the
/// targets of `options`; prints the findings. 0 when all agree, 1 when not,
/// 2 when the file cannot be read.
int checkTrainingFile(mlir::MLIRContext *ctx, llvm::StringRef path,
                      const TrainCampaignOptions &options);

/// Greedy reduction of a failing recipe: while `stillFails` holds, drop a
/// layer (or a layer of a residual block), the penalty, an optimizer
/// wrapper; make the base optimizer SGD; shrink the batch, classes, input
/// sizes and layer widths.
TrainRecipe reduceTraining(const TrainRecipe &recipe,
                           const std::function<bool(const TrainRecipe &)> &stillFails,
                           int maxCandidates, int &candidates);

} // namespace synpl::difffuzz

#endif // SYNPL_TEST_FUZZ_DIFF_TRAINCAMPAIGN_H
