//===- InitAllPasses.h - Register the synplexum passes -----------*- C++ -*-===//
//
// Header-only, like MLIR's own InitAllPasses.h: registers every synplexum
// pass and pass pipeline with the global registry, so that synpl-opt (or an
// embedder's opt tool) can name them. An embedder that wants one lowering
// registers only its pass instead, e.g. `synpl::registerL1ToL0()` with the
// synpl::SynplL1ToL0 library.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_INITALLPASSES_H
#define SYNPL_INITALLPASSES_H

#include "synpl/Conversion/Passes.h"
#include "synpl/Pipelines/Phases.h"
#include "synpl/Pipelines/Pipelines.h"
#include "synpl/Search/Search.h"
#include "synpl/Target/Passes.h"
#include "synpl/Transforms/Passes.h"

#include "mlir/Dialect/GPU/Transforms/Passes.h"

namespace synpl {

inline void registerAllPasses() {
  // Verification needs no pass: every check of the spec is an op or region
  // verifier that runs on every parse and after every pass.
  registerSynplPasses();
  registerSynplConversionPasses();
  registerSynplTargetPasses();
  registerPipelines();
  registerPhasePipeline(); // synpl-pipeline{from=... to=...}
  search::registerSearchOptions(); // --synpl-search-report
  // The upstream step of the CUDA sink, for step-by-step use in synpl-opt.
  mlir::registerGpuModuleToBinaryPass();
}

} // namespace synpl

#endif // SYNPL_INITALLPASSES_H
