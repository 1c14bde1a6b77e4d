//===- KernelObjects.h - Host kernels kept compiled (driver internal) -----===//
#ifndef SYNPL_DRIVER_KERNELOBJECTS_H
#define SYNPL_DRIVER_KERNELOBJECTS_H

#include "synpl/Driver/Driver.h"

namespace synpl::driver {

/// Before the host lowering of `module` (its kernels' optimization levels
/// set): groups its kernels into `objects.objects`, keyed by their L0 code,
/// and for each object the cache holds, stubs its kernels (their entry
/// points, no UOps) and declares its functions. Fails, with `error`, only
/// when the cache's folder cannot be made or the target is unknown.
mlir::LogicalResult reuseKernelObjects(mlir::ModuleOp module, KernelObjects &objects,
                                       std::string &error);

/// After the kernels' host lowering, before the plan is replaced by its
/// tables: the manifest of each object to compile that has none yet, when
/// the lowering built its functions as expected.
void describeKernelObjects(mlir::ModuleOp module, KernelObjects &objects);

/// Drops the objects to compile that have no manifest: their functions are
/// compiled with the rest of the program.
void dropUndescribed(KernelObjects &objects);

/// Writes the manifests of the objects whose keys are in `compiled` next
/// to them in the cache.
mlir::LogicalResult keepManifests(const KernelObjects &objects,
                                  llvm::ArrayRef<std::string> compiled, std::string &error);

} // namespace synpl::driver

#endif // SYNPL_DRIVER_KERNELOBJECTS_H
