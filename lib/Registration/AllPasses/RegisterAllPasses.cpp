//===- RegisterAllPasses.cpp - synpl/InitAllPasses.h ----------------------===//
#include "synpl/InitAllPasses.h"

#include "synpl/Conversion/Passes.h"
#include "synpl/Pipelines/Phases.h"
#include "synpl/Pipelines/Pipelines.h"
#include "synpl/Search/Search.h"
#include "synpl/Target/Passes.h"
#include "synpl/Transforms/Passes.h"

#include "mlir/Dialect/GPU/Transforms/Passes.h"

void synpl::registerAllPasses() {
  // Verification needs no pass: every check of the spec is an op or region
  // verifier that runs on every parse and after every pass.
  registerSynplPasses();
  registerSynplConversionPasses();
  registerSynplTargetPasses();
  registerPipelines();
  registerPhasePipeline();         // synpl-pipeline{from=... to=...}
  search::registerSearchOptions(); // --synpl-search-report
  // The upstream step of the CUDA sink, for step-by-step use in synpl-opt.
  mlir::registerGpuModuleToBinaryPass();
}
