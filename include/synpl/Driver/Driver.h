//===- Driver.h - Compile a training program end to end ----------*- C++ -*-===//
//
// What synplc does, as a library (synpl::SynplDriver) that synplc, the C API
// and the Python package share: read a .syn spec or an MLIR program, run the
// phases (synpl/Pipelines/Phases.h) from where it is to where it is asked
// to stop, deciding on the way what the phases cannot (the system to place
// on, whether the kernels run on a GPU and for which chip), then write the
// PTX, LLVM IR, an object or a linked executable.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_DRIVER_DRIVER_H
#define SYNPL_DRIVER_DRIVER_H

#include "synpl/Pipelines/Phases.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

#include <functional>
#include <optional>
#include <string>

namespace mlir {
class DialectRegistry;
class MLIRContext;
class PassManager;
} // namespace mlir

namespace synpl::driver {

/// Where the kernels run: `Auto` is CUDA when the placed program puts an
/// actor or a tensor graph on an isa = "cuda" node. `IPU21`: the L0 plan
/// becomes an ipu21 graph in the device phase, where the compile ends
/// (writeIPU21Program writes its program file; docs/ipu21.md).
enum class TargetChoice { Auto, Host, Cuda, IPU21 };

/// Host kernels kept compiled between compiles, in the object cache under
/// the hash of their L0 code (KernelObjects.cpp). For an executable on the
/// host, compile() groups the kernels into objects before the host
/// lowering; an object the cache holds is linked as it is and its kernels
/// are not lowered at all (they keep only their entry points). The plan
/// travels on the module (its `synpl.kernel_objects` attribute) to
/// writeExecutable(), which compiles the other objects on their own and
/// leaves them in the cache. Such a module declares the cached kernels
/// without defining them: only writeExecutable() takes it.
struct KernelCache {
  /// Off by default: every kernel is lowered.
  bool enabled = false;
  /// The object cache's folder; empty: $SYNPL_CACHE_DIR, else
  /// $XDG_CACHE_HOME/synpl, else ~/.cache/synpl.
  std::string dir;
  /// The target CPU and optimization level the executable is written for
  /// (writeExecutable() refuses others).
  std::string cpu = "native";
  unsigned optLevel = 3;
};

/// The L3 -> L2 method search's choices kept between compiles: a program
/// compiled again with the same L3 program, search options and compiler
/// reads the L2 program chosen before instead of searching. A search that
/// emitted a diagnostic is not kept; none is used while a search report is
/// being collected (search::SearchReportSink has a format).
struct SearchCache {
  /// Off by default: every compile searches.
  bool enabled = false;
  /// The folder; empty: the object cache's (host::ObjectCache::defaultDir).
  std::string dir;
};

struct CompileOptions {
  /// The phase the input is at; none: detected (detectPhase).
  std::optional<Phase> from;
  /// The phase to stop after.
  Phase to = Phase::LLVM;
  TargetChoice target = TargetChoice::Auto;
  /// The GPU architecture; empty: the GPU node's arch, else the default.
  std::string cudaArch;
  /// With IPU21: the IPU (ipu21, ipu2).
  std::string ipuArch = "ipu21";
  /// ptxas for a cubin next to the PTX; empty: the CUDA toolkit's or PATH's
  /// when present; "none": the PTX only.
  std::string ptxas;
  /// A .syn or .mlir file whose system replaces the program's; empty: the
  /// program's own, else this machine's.
  std::string systemFile;
  /// Extra passes on the L0 plan after memory packing (a pipeline string).
  std::string l0Passes;
  /// With CUDA: also compile the device kernels for the host.
  bool hostKernels = false;
  /// Remark the plan summary.
  bool summary = false;
  /// The host kernels that take this share of a step's estimated time are
  /// optimized at the full level, the rest at lightOptLevel
  /// (--synpl-l0-kernel-effort); 1: every kernel at the full level.
  double hotKernelShare = 0.99;
  unsigned lightOptLevel = 1;
  /// Data-parallel replicas' update sharding (ZeRO stage 1): "auto" (the
  /// placement search decides), "on" (whenever a parameter qualifies) or
  /// "off".
  std::string updateSharding = "auto";
  /// For an executable on the host: its kernels from the object cache
  /// where they were compiled before (KernelCache); by default not used.
  KernelCache kernelCache;
  /// Method searches kept from earlier compiles (SearchCache); by default
  /// not used.
  SearchCache searchCache;
  /// Write the program at every layer it passes to <dumpDir>/<dumpStem>.<phase>.mlir.
  std::string dumpDir, dumpStem;
  /// Receives one line per step ("L3 -> L2 (method search)", the target, ...).
  std::function<void(llvm::StringRef)> progress;
  /// Receives an error that has no location in the program (a missing
  /// file, a target the placement does not allow); unset: reported as a
  /// diagnostic at the module.
  std::function<void(const llvm::Twine &)> error;
  /// Configures each phase's pass manager (the MLIR command-line flags,
  /// timing); may fail.
  std::function<mlir::LogicalResult(mlir::PassManager &, llvm::StringRef phase)>
      configure;
};

/// Inserts every dialect and translation a compile needs.
void registerDialects(mlir::DialectRegistry &registry);

/// Parses `sourceMgr`'s main buffer: a .syn spec when `filename` ends in
/// .syn, else MLIR; verified. Null after reporting the error.
mlir::OwningOpRef<mlir::ModuleOp> parseInput(llvm::SourceMgr &sourceMgr,
                                             mlir::MLIRContext *context,
                                             llvm::StringRef filename);

/// Runs the phases on `module` from `options.from` (or where it is) to
/// `options.to`. Errors are reported through the context's diagnostics.
mlir::LogicalResult compile(mlir::ModuleOp module, const CompileOptions &options);

/// The PTX of the module's gpu.binary ops (after the device phase).
void printPtx(mlir::ModuleOp module, llvm::raw_ostream &os);

/// The module's ipu21 graph (after the device phase of an IPU21 compile) as
/// the program file `path` that synpl-ipu21-sim runs; errors are
/// diagnostics at the module.
mlir::LogicalResult writeIPU21Program(mlir::ModuleOp module, llvm::StringRef path);

struct LinkOptions {
  std::string cpu = "native"; ///< target CPU and features
  unsigned optLevel = 3;
  /// The host runtime archive; empty: found (findRuntime).
  std::string runtimeLib;
  /// The C++ driver that links; empty: found (findLinker).
  std::string linkerDriver;
  /// An executable's objects come from the object cache (parts compiled
  /// before with the same IR and options), the rest are compiled in
  /// parallel and added to it. False: compile every part, keep nothing.
  bool cache = true;
  /// The cache's folder; empty: host::ObjectCache::defaultDir().
  std::string cacheDir;
  std::function<void(llvm::StringRef)> progress;
  /// As CompileOptions::error.
  std::function<void(const llvm::Twine &)> error;
};

/// The module (at the llvm phase) as an x86-64 ELF object at `path`.
mlir::LogicalResult writeObject(mlir::ModuleOp module, llvm::StringRef path,
                                const LinkOptions &options);

/// The module (at the llvm phase, executable) linked with the host runtime
/// into the executable `path`.
mlir::LogicalResult writeExecutable(mlir::ModuleOp module, llvm::StringRef path,
                                    const LinkOptions &options);

/// The host runtime archive: next to the running program (../lib), in the
/// install prefix, else in the build tree; empty when none exists.
std::string findRuntime();

/// A C++ compiler driver to link with: the one synplexum was built with,
/// else clang++ or g++ on PATH; empty when none exists.
std::string findLinker();

} // namespace synpl::driver

#endif // SYNPL_DRIVER_DRIVER_H
