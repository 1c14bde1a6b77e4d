//===- InitAllPasses.h - Register the synplexum passes -----------*- C++ -*-===//
//
// Registers every synplexum pass and pass pipeline with the global
// registry, so that synpl-opt (or an embedder's opt tool) can name them.
// Declarations only, as MLIR's own InitAllPasses.h (LLVM 21 and later): the
// definition is in the library synpl::SynplRegisterAllPasses
// (lib/Registration/RegisterAllPasses.cpp). An embedder that wants one
// lowering registers only its pass instead, e.g. `synpl::registerL1ToL0()`
// (synpl/Conversion/Passes.h) with the synpl::SynplL1ToL0 library.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_INITALLPASSES_H
#define SYNPL_INITALLPASSES_H

namespace synpl {

/// Every pass of the transforms, conversions and targets, the named
/// pipelines, --synpl-pipeline, --synpl-search-report, and upstream's
/// --gpu-module-to-binary (the CUDA sink's step, for synpl-opt).
void registerAllPasses();

} // namespace synpl

#endif // SYNPL_INITALLPASSES_H
