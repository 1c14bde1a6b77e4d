//===- SearchCache.h - Method searches kept between compiles -----*- C++ -*-===//
//
// The L3 -> L2 method search is the longest step of a compile whose objects
// all come from the cache. Its choice depends only on the L3 program, the
// search's passes and options and the compiler: kept under their hash, the
// L2 program it chose is read back instead of searching again.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_DRIVER_SEARCHCACHE_H
#define SYNPL_LIB_DRIVER_SEARCHCACHE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <string>

namespace synpl::host {
struct ObjectCache;
} // namespace synpl::host

namespace synpl::driver {

/// The key of running `pm` (the L3 -> L2 passes) on `module`: the SHA-256
/// of the module (generic form, with its locations: they are the L2
/// program's), the pass pipeline with every option, and this build of the
/// search. Empty when the build cannot be identified: nothing is kept.
std::string methodSearchKey(mlir::ModuleOp module, mlir::PassManager &pm);

/// The L2 program kept under `key` in `dir` (<key>.l2.mlir), marked as
/// used; null when there is none, or it does not parse and verify (then it
/// is compiled again and replaced).
mlir::OwningOpRef<mlir::ModuleOp> lookupMethodSearch(llvm::StringRef dir, llvm::StringRef key,
                                                     mlir::MLIRContext *context);

/// Keeps `module` (the search's L2 program) under `key` in `dir`, whole or
/// not at all; best effort (a cache that cannot be written only costs the
/// next compile a search).
void keepMethodSearch(llvm::StringRef dir, llvm::StringRef key, mlir::ModuleOp module);

/// How the name of a kept search's file in the object cache ends.
inline constexpr llvm::StringLiteral kMethodSearchSuffix = ".l2.mlir";

/// Trims `cache` to its size limit (host::ObjectCache::trim), the driver's
/// kept searches counted with the objects, and says through `progress`
/// what was removed.
void trimObjectCache(const host::ObjectCache &cache,
                     const std::function<void(llvm::StringRef)> &progress);

/// Makes `module` the `chosen` program: its operations and attributes.
void replaceModule(mlir::ModuleOp module, mlir::ModuleOp chosen);

} // namespace synpl::driver

#endif // SYNPL_LIB_DRIVER_SEARCHCACHE_H
