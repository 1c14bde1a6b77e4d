/*===- Dialects.h - C API of the synplexum dialects ---------------*- C -*-===*\
|*                                                                            *|
|* The dialect handles (for mlirDialectHandleInsertDialect and friends) and   *|
|* registration of everything a synplexum compile needs, in the style of      *|
|* MLIR's own C API (mlir-c/). Library synpl::SynplCAPI.                      *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef SYNPL_C_DIALECTS_H
#define SYNPL_C_DIALECTS_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(L3, l3);
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(L2, l2);
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(L1, l1);
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(L0Ctl, l0ctl);
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(L0UOp, l0uop);

/// Inserts the five synplexum dialects, the upstream dialects their programs
/// use, and the translations the code generators need into `registry`.
MLIR_CAPI_EXPORTED void synplRegisterAllDialects(MlirDialectRegistry registry);

/// Registers every synplexum pass and pipeline (synpl-pipeline among them)
/// with the global registry, so that pass pipeline strings can name them.
MLIR_CAPI_EXPORTED void synplRegisterAllPasses(void);

#ifdef __cplusplus
}
#endif

#endif /* SYNPL_C_DIALECTS_H */
