/*===- Driver.h - C API of the synplexum compile driver -----------*- C -*-===*\
|*                                                                            *|
|* Parse a .syn spec or an MLIR program, run the compiler's phases on it,     *|
|* read the search reports, write PTX, an object or a training executable:    *|
|* what synplc does, for the Python package and other languages. Errors are   *|
|* reported through the context's diagnostic handlers                         *|
|* (mlirContextAttachDiagnosticHandler). Library synpl::SynplCAPI.            *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef SYNPL_C_DRIVER_H
#define SYNPL_C_DRIVER_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The compiler's phases, in order (synpl/Pipelines/Phases.h).
typedef enum SynplPhase {
  SynplPhaseL3 = 0,
  SynplPhaseL2 = 1,
  SynplPhaseL1 = 2,
  SynplPhaseL0 = 3,
  SynplPhaseDevice = 4,
  SynplPhaseLLVM = 5,
} SynplPhase;

/// `l3`, `l2`, `l1`, `l0`, `device`, `llvm`.
MLIR_CAPI_EXPORTED MlirStringRef synplPhaseGetName(SynplPhase phase);
/// The phase named `name`; false when there is none.
MLIR_CAPI_EXPORTED bool synplPhaseParse(MlirStringRef name, SynplPhase *phase);
/// The phase `module` is at, from what it holds.
MLIR_CAPI_EXPORTED SynplPhase synplModuleGetPhase(MlirModule module);

/// Parses and verifies the file at `path`: a .syn spec (by its extension)
/// or an MLIR program. A null module after reporting the errors.
MLIR_CAPI_EXPORTED MlirModule synplParseFile(MlirContext context, MlirStringRef path);
/// The same for text in memory; `filename` names it in diagnostics and its
/// extension picks the syntax.
MLIR_CAPI_EXPORTED MlirModule synplParseString(MlirContext context, MlirStringRef text,
                                               MlirStringRef filename);

/// What to compile and how (the options of synplc, by the same names).
typedef struct SynplCompileOptions {
  void *ptr;
} SynplCompileOptions;

/// Defaults: from the module's own phase to llvm, target auto.
MLIR_CAPI_EXPORTED SynplCompileOptions synplCompileOptionsCreate(void);
MLIR_CAPI_EXPORTED void synplCompileOptionsDestroy(SynplCompileOptions options);
MLIR_CAPI_EXPORTED void synplCompileOptionsSetFrom(SynplCompileOptions options,
                                                   SynplPhase phase);
MLIR_CAPI_EXPORTED void synplCompileOptionsSetTo(SynplCompileOptions options,
                                                 SynplPhase phase);
/// `auto`, `host` or `cuda`; false for another word.
MLIR_CAPI_EXPORTED bool synplCompileOptionsSetTarget(SynplCompileOptions options,
                                                     MlirStringRef target);
/// The GPU architecture (`sm_90`); empty: the GPU node's.
MLIR_CAPI_EXPORTED void synplCompileOptionsSetCudaArch(SynplCompileOptions options,
                                                       MlirStringRef arch);
/// A ptxas to embed a cubin with; empty: the toolkit's when present;
/// `none`: the PTX only.
MLIR_CAPI_EXPORTED void synplCompileOptionsSetPtxas(SynplCompileOptions options,
                                                    MlirStringRef ptxas);
/// A .syn or .mlir file whose system the program is placed on.
MLIR_CAPI_EXPORTED void synplCompileOptionsSetSystemFile(SynplCompileOptions options,
                                                         MlirStringRef path);
/// Extra passes on the L0 plan (a pass pipeline string).
MLIR_CAPI_EXPORTED void synplCompileOptionsSetL0Passes(SynplCompileOptions options,
                                                       MlirStringRef pipeline);
/// For an executable on the host: kernels compiled before with the same L0
/// code are taken from the object cache `dir` (empty: $SYNPL_CACHE_DIR,
/// else ~/.cache/synpl) without being lowered, the others are compiled on
/// their own and added to it. The module can then only be written with
/// synplWriteExecutable, for the same `cpu` (`native`: this host's) and
/// `optLevel`.
MLIR_CAPI_EXPORTED void synplCompileOptionsSetKernelCache(SynplCompileOptions options,
                                                          MlirStringRef dir, MlirStringRef cpu,
                                                          int optLevel);
/// An L3 program's method search is read from the cache folder `dir`
/// (empty: $SYNPL_CACHE_DIR, else ~/.cache/synpl) where the same program
/// was searched before with the same options and build of the compiler,
/// and kept there otherwise. A choice read back records no search report
/// (synplSearchReportsPrintJSON); a search that emitted a diagnostic is
/// not kept.
MLIR_CAPI_EXPORTED void synplCompileOptionsSetSearchCache(SynplCompileOptions options,
                                                          MlirStringRef dir);
/// Receives one line per step of the compile (the phases, the target).
MLIR_CAPI_EXPORTED void synplCompileOptionsSetProgress(SynplCompileOptions options,
                                                       MlirStringCallback callback,
                                                       void *userData);

/// Runs the phases on `module` in place. Failure after reporting why.
MLIR_CAPI_EXPORTED MlirLogicalResult synplCompile(MlirModule module,
                                                  SynplCompileOptions options);

/// The PTX of the module's device kernels (after the device phase).
MLIR_CAPI_EXPORTED void synplModulePrintPtx(MlirModule module, MlirStringCallback callback,
                                            void *userData);
/// The module (at the llvm phase) as an x86-64 object at `path`, for
/// `cpu` (`native`: this host's) at -O`optLevel`.
MLIR_CAPI_EXPORTED MlirLogicalResult synplWriteObject(MlirModule module, MlirStringRef path,
                                                      MlirStringRef cpu, int optLevel);
/// The module (at the llvm phase) linked with the host runtime into the
/// training executable `path`.
MLIR_CAPI_EXPORTED MlirLogicalResult synplWriteExecutable(MlirModule module,
                                                          MlirStringRef path,
                                                          MlirStringRef cpu, int optLevel);

/// Whether the module ends in an ipu21 graph: the placement put the model
/// on an IPU node, or the target was ipu21 (after the device phase).
MLIR_CAPI_EXPORTED bool synplModuleIsIPU21Program(MlirModule module);
/// The module's ipu21 graph (and a training program's host side) as the
/// program file `path` that synpl-ipu21-sim runs.
MLIR_CAPI_EXPORTED MlirLogicalResult synplWriteIPU21Program(MlirModule module,
                                                            MlirStringRef path);

/// The reports of every search run since the last clear, as one JSON
/// array of objects (boundary, candidates, rejections, the best few, the
/// winner and why, time).
MLIR_CAPI_EXPORTED void synplSearchReportsPrintJSON(MlirStringCallback callback,
                                                    void *userData);
MLIR_CAPI_EXPORTED void synplSearchReportsClear(void);

#ifdef __cplusplus
}
#endif

#endif /* SYNPL_C_DRIVER_H */
