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
#include "llvm/Support/raw_ostream.h"

#include <string>

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

/// Writes `module` (LLVM dialect only) as an object file. Errors are
/// emitted as diagnostics at the module.
mlir::LogicalResult emitObject(mlir::ModuleOp module, llvm::raw_pwrite_stream &os,
                               const ObjectOptions &options = {});

/// Registers `--synpl-to-object` with mlir-translate's registry.
void registerToObjectTranslation();

} // namespace synpl::host

#endif // SYNPL_TARGET_HOSTOBJECT_H
