//===- KernelObjects.h - Host kernels kept compiled (driver internal) -----===//
#ifndef SYNPL_DRIVER_KERNELOBJECTS_H
#define SYNPL_DRIVER_KERNELOBJECTS_H

#include "synpl/Driver/Driver.h"
#include "synpl/Target/HostObject.h"

#include <optional>

namespace synpl::driver {

/// The kernel objects of one compile (KernelCache): each from the cache, or
/// its functions to compile, with the manifest of each to compile (its
/// functions' entries, splits and types: what a later compile reads instead
/// of lowering them).
struct KernelObjects {
  KernelCache cache;
  std::vector<host::FunctionObject> objects;
  std::vector<std::string> manifests;
  /// The kernels grouped, and of those the ones taken from the cache.
  unsigned kernels = 0, reusedKernels = 0;
};

/// The module attribute that carries a compile's kernel objects to the
/// link.
constexpr llvm::StringLiteral kKernelObjectsAttr = "synpl.kernel_objects";

/// Before the host lowering of `module` (its kernels' optimization levels
/// set): groups its kernels into `objects.objects`, keyed by their L0 code,
/// and for each object the cache holds, gives its kernels their entry
/// points (dropping their UOps) and declares its functions. Fails, with
/// `error`, only when the cache's folder cannot be made or the target is
/// unknown.
mlir::LogicalResult reuseKernelObjects(mlir::ModuleOp module, KernelObjects &objects,
                                       std::string &error);

/// After the kernels' host lowering, before the plan is replaced by its
/// tables: the manifest of each object to compile that has none yet, when
/// the lowering built its functions as expected.
void describeKernelObjects(mlir::ModuleOp module, KernelObjects &objects);

/// Drops the objects to compile that have no manifest (their functions are
/// compiled with the rest of the program), then records what is left on
/// the module (kKernelObjectsAttr).
void attachKernelObjects(mlir::ModuleOp module, KernelObjects &objects);

/// The kernel objects recorded on `module`: none when it has no record; an
/// error when the record is malformed.
mlir::FailureOr<std::optional<KernelObjects>> readKernelObjects(mlir::ModuleOp module,
                                                                std::string &error);

/// Writes the manifests of the objects whose keys are in `compiled` next
/// to them in the cache.
mlir::LogicalResult keepManifests(const KernelObjects &objects,
                                  llvm::ArrayRef<std::string> compiled, std::string &error);

} // namespace synpl::driver

#endif // SYNPL_DRIVER_KERNELOBJECTS_H
