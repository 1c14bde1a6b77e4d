//===- Translate.h - ipu21 graphs to program files -------------------*- C++ -*-===//
//
// The last step of the ipu21 sink: a verified `ipu21.graph` as the plain
// data of a program (Program.h), written as a program file (ProgramFile.h)
// that the BSP simulator runs. `synpl-translate --synpl-ipu21-to-program`
// registers it.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TARGET_IPU21_TRANSLATE_H
#define SYNPL_TARGET_IPU21_TRANSLATE_H

#include "synpl/Dialect/IPU21/IPU21Ops.h"
#include "synpl/Target/IPU21/Program.h"

#include "mlir/Support/LLVM.h"

namespace synpl::ipu21 {

/// `graph` (which must have verified) as a program; its program `@main` is
/// the program's main step. Fails, with a diagnostic on the graph, when it
/// has no `@main`.
mlir::FailureOr<sim::Program> toProgram(GraphOp graph);

/// The one ipu21.graph of `op` (a module holding it, or the graph itself);
/// fails with a diagnostic on `op` when there is none or several.
mlir::FailureOr<GraphOp> findGraph(mlir::Operation *op);

/// The one ipu21.graph of `op` as the program file `path`. Fails with a
/// diagnostic on `op` (no graph, a file that cannot be written).
mlir::LogicalResult saveProgramFile(mlir::Operation *op, llvm::StringRef path);

/// Registers --synpl-ipu21-to-program: the one ipu21.graph of a module (or
/// the graph itself) as a program file.
void registerToProgramTranslation();

} // namespace synpl::ipu21

#endif // SYNPL_TARGET_IPU21_TRANSLATE_H
