//===- HostObject.h - LLVM dialect module -> x86-64 object file -*- C++ -*-===//
//
// The in-process host backend: translates an LLVM dialect module to LLVM
// IR, optimizes it for the target CPU and writes a relocatable ELF object
// with LLVM's own code generator (no llc, no assembler).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TARGET_HOSTOBJECT_H
#define SYNPL_TARGET_HOSTOBJECT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "mlir/Support/LogicalResult.h"
#include "synpl/Support/OptLevel.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class Function;
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm

namespace synpl::host {

struct ObjectOptions {
  /// Target triple; empty: the host's (x86_64-pc-linux-gnu here).
  std::string triple;
  /// CPU name; "native" takes the host's CPU and features.
  std::string cpu = "native";
  /// Extra target features ("+avx2,+fma").
  std::string features;
  /// 0-3.
  unsigned optLevel = 3;
  /// Let the vectorizer call glibc's vector math (libmvec, AVX2 variants)
  /// for exp2/log2/sin/...; the program must then link -lmvec.
  bool useLibmvec = true;
  /// Allow float add/sub/mul to be reassociated and contracted (kernel
  /// reductions have no fixed order).
  bool reassociate = true;
};

/// The level `f` is optimized at: its synpl::kOptLevelAttr (Support/OptLevel.h)
/// capped by `cap`, else
/// `cap`. An error when the attribute is not "0" to "3".
llvm::Expected<unsigned> functionOptLevel(const llvm::Function &f, unsigned cap);

/// One level's share of a program (splitByOptLevel).
struct LevelModule {
  unsigned level;
  std::unique_ptr<llvm::Module> module;
};

/// `module` as one module per optimization level its functions ask for
/// (functionOptLevel), ordered by level: each function and global variable
/// is defined in one of them (a global variable with the functions that
/// use it when they share a level, else at `cap`) and declared in the
/// others; a local symbol used across them becomes hidden, external and
/// uniquely named. A module whose functions share one level comes back
/// whole. The attribute is removed.
llvm::Expected<std::vector<LevelModule>>
splitByOptLevel(std::unique_ptr<llvm::Module> module, unsigned cap);

/// The target machine emitObject uses: the options' triple (default: the
/// host's) and CPU ("native": the host CPU and its features). Reports the
/// CPU name and feature string it chose when asked.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createHostTargetMachine(const ObjectOptions &options = {},
                        std::string *cpu = nullptr,
                        std::string *features = nullptr);

/// The optimization emitObject applies to the translated module: float
/// add/sub/mul reassociable and contractible (kernel reductions have no
/// fixed order), then the O-level pipeline for `machine` with glibc's libmvec
/// known to the vectorizer. Functions that ask for their own level
/// (kOptLevelAttr) are optimized at it: the module is split by level
/// (splitByOptLevel), each part optimized, and the parts linked back into
/// `module`. Exposed so that JIT users (tests) run exactly the code the
/// object holds.
llvm::Error optimizeForHost(llvm::Module &module, llvm::TargetMachine &machine,
                            const ObjectOptions &options = {});

/// `module` (LLVM dialect only) as LLVM IR, with the LLVM IR and bitcode
/// files of its user kernels (the module's `synpl.link_ir`) linked in. Null
/// after an error at the module.
std::unique_ptr<llvm::Module> translateToLLVMIR(mlir::ModuleOp module,
                                                llvm::LLVMContext &context);

/// The object files of `module`'s user kernels (its `synpl.link_objects`),
/// which the program must be linked with.
llvm::SmallVector<std::string> linkedObjects(mlir::ModuleOp module);

/// optimizeForHost, then the target's code generator: `llvmModule` (already
/// given the target, translateForHost) as an object file on `os`.
llvm::Error compileForHost(llvm::Module &llvmModule, llvm::TargetMachine &tm,
                           const ObjectOptions &options, llvm::raw_pwrite_stream &os);

/// `module` ready for compileForHost: the target machine
/// (createHostTargetMachine, with the CPU name and features it chose) and
/// the module as LLVM IR (translateToLLVMIR) given that target -- its
/// triple and data layout, and on every function the CPU and features, so
/// that the optimizer's cost model and the vectorizer see the real target.
struct HostModule {
  std::unique_ptr<llvm::TargetMachine> machine;
  std::unique_ptr<llvm::Module> module;
  std::string cpu, features;
};
/// Failure after an error emitted at `module`.
mlir::FailureOr<HostModule> translateForHost(mlir::ModuleOp module, const ObjectOptions &options,
                                             llvm::LLVMContext &context);

/// Writes `module` (LLVM dialect only) as an object file. Errors are
/// emitted as diagnostics at the module.
mlir::LogicalResult emitObject(mlir::ModuleOp module, llvm::raw_pwrite_stream &os,
                               const ObjectOptions &options = {});

/// Where compiled objects are kept between compiles, keyed by the content
/// of what they were compiled from (ObjectParts.cpp).
struct ObjectCache {
  /// The folder; empty: no cache (every part is compiled).
  std::string dir;
  /// The most its files may take (not its data folder): its objects and
  /// manifests, and those its users keep beside them (trim()'s suffixes);
  /// 0: no limit.
  uint64_t maxBytes = 0;
  /// $SYNPL_CACHE_DIR, else $XDG_CACHE_HOME/synpl, else ~/.cache/synpl.
  static std::string defaultDir();
  /// $SYNPL_CACHE_MAX_SIZE (bytes, or with a K, M or G suffix; 0: no
  /// limit), else 2 GiB; an error names a malformed value.
  static llvm::Expected<uint64_t> defaultMaxBytes();
  /// The cache in `dir` (empty: defaultDir()) with defaultMaxBytes() as its
  /// limit; the error names a malformed $SYNPL_CACHE_MAX_SIZE.
  static llvm::Expected<ObjectCache> at(llvm::StringRef dir);
  /// Makes the folder (and its parents); the error says so and how to
  /// compile without it.
  llvm::Error create() const;
  /// Marks a file of the cache as used now (what trim() keeps longest).
  static void touch(llvm::StringRef path);
  /// Removes the least recently used of its files -- objects (.o),
  /// manifests (.kernels) and the files of its users whose names end in one
  /// of `userSuffixes` -- until what is left takes at most maxBytes, sparing
  /// those used in the last ten minutes (a concurrent compile may be about
  /// to link them). Returns the files removed and the bytes they took.
  std::pair<unsigned, uint64_t> trim(llvm::ArrayRef<llvm::StringRef> userSuffixes = {}) const;
};

/// How many objects a program is compiled into by default: four per
/// hardware thread, at least 8.
unsigned defaultObjectCount();

/// The objects emitObjectParts wrote or found, to be linked together.
struct ObjectParts {
  llvm::SmallVector<std::string> paths;
  unsigned reused = 0, compiled = 0;
  /// The keys of the function objects it compiled and left in the cache.
  llvm::SmallVector<std::string> keyed;
};

/// Functions of a module that make an object of their own, kept in the
/// cache under a key the caller chose: a name for what the functions were
/// made from (the driver's is the hash of their L0 kernels, so that a
/// later compile finds the object before lowering them), which
/// emitObjectParts does not check against their IR.
struct FunctionObject {
  /// The object's file name in the cache, without ".o".
  std::string key;
  /// The level its functions are optimized at.
  unsigned level = 3;
  /// The functions it defines; each is a definition in the module, unless
  /// `cached` is set.
  llvm::SmallVector<std::string> functions;
  /// The object's path when the cache holds it already: its functions are
  /// declarations in the module, and the object is linked as it is.
  std::string cached;
};

/// What every object's key holds besides its IR: the LLVM version, the
/// target triple, CPU and features (those of this host for "native") and
/// the options that change the code; a key appends the level its code is
/// optimized at.
llvm::Expected<std::string> objectKeySalt(const ObjectOptions &options);

/// `module` (LLVM dialect only) as several objects. First the
/// `functionObjects`: each not yet cached is cut out of the module with the
/// local definitions its functions use (a mutable local global is an
/// error: two objects would each have their own) and compiled at its level
/// into `<key>.o`. The rest of the module's LLVM IR is split by the
/// optimization level its functions ask for (splitByOptLevel), then into
/// `parts` modules in all, less one per function object (0: four per
/// hardware thread, at least 8; shared among the levels by their size;
/// functions that share internal globals stay together), each optimized
/// and compiled at its level, or taken from `cache` when an identical part
/// (the same IR, target, CPU, features and options) was compiled before.
/// All compile in parallel, each on its own thread. New objects go to the
/// cache, or to `scratchDir` without one. Errors are emitted as diagnostics
/// at the module.
mlir::FailureOr<ObjectParts>
emitObjectParts(mlir::ModuleOp module, llvm::StringRef scratchDir, const ObjectOptions &options,
                const ObjectCache &cache, unsigned parts = 0,
                llvm::ArrayRef<FunctionObject> functionObjects = {});

/// Registers `--synpl-to-object` with mlir-translate's registry.
void registerToObjectTranslation();

} // namespace synpl::host

#endif // SYNPL_TARGET_HOSTOBJECT_H
