//===- Syn.h - The .syn surface-syntax front end ------------------*- C++ -*-===//
//
// Reads the spec's surface syntax (`data`, `model`, `loss`, `goal`, escape
// hatches `#[l2::...]`) into the l3 dialect, `methods for <model> {...}`
// into the l2 dialect, and the L1 placement forms (`system`, data bindings
// `@ node, path: "..."`, `actor`, `stage`, `tensor_graph`, `pipeline`,
// `schedule`) into the l1 dialect. Syntax errors are reported at the exact
// token (file:line:col); the module is then verified, so semantic errors
// come from the l3, l2 and l1 verifiers (row-tagged), located in the .syn
// text. A file with only a `system` gives a module with just the l1.system
// (what `synplc --system` reads).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_FRONTEND_SYN_H
#define SYNPL_FRONTEND_SYN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace synpl {

/// Parses the main buffer of `sourceMgr` as a .syn program and returns the
/// verified module, or null after emitting located diagnostics. Never asserts
/// on malformed input.
mlir::OwningOpRef<mlir::ModuleOp> parseSyn(llvm::SourceMgr &sourceMgr,
                                           mlir::MLIRContext *context);

/// Registers `--import-syn` with mlir-translate style drivers.
void registerImportSynTranslation();

} // namespace synpl

#endif // SYNPL_FRONTEND_SYN_H
