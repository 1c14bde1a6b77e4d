//===- Translate.h - ipu21 graphs to program files -------------------*- C++ -*-===//
//
// The last step of the ipu21 sink: a verified `ipu21.graph` as the plain
// data of a program (Program.h), written as a program file (ProgramFile.h)
// that the BSP simulator runs. `synpl-translate --synpl-ipu21-to-program`
// registers it. A module that also holds the graph's host side (an
// l0uop.plan named `<graph>.host`) gives a training program: the file then
// carries the runtime's tables of it too.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TARGET_IPU21_TRANSLATE_H
#define SYNPL_TARGET_IPU21_TRANSLATE_H

#include "synpl/Dialect/IPU21/IPU21Ops.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
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

/// The name of the host side of ipu21.graph `graph`: `<graph>.host`, the
/// l0uop.plan --synpl-convert-l0uop-to-ipu21 leaves beside the graph with
/// the plan's pools, slots, inits, ingests and reports.
std::string hostPlanName(llvm::StringRef graph);

/// The host side `host` of `graph` as the runtime's plan tables in
/// `program` (Program::hostTable, hostStrings): its pools and slots, one
/// stream without entries, its inits, ingests and reports, the header
/// named after the graph. Fails, with a diagnostic, on any other item or a
/// slot without a tensor of its name.
mlir::LogicalResult addHostSide(l0uop::PlanOp host, GraphOp graph, sim::Program &program);

/// What the program file of `op`'s one ipu21.graph holds: the graph's
/// program (toProgram), its host side when `op` is a module holding one
/// (addHostSide), and the exchanges' schedule. Fails with a diagnostic.
mlir::FailureOr<sim::Program> toScheduledProgram(mlir::Operation *op);

/// The one ipu21.graph of `op` as the program file `path` (with its host
/// side when `op` is a module holding one). Fails with a
/// diagnostic on `op` (no graph, a file that cannot be written).
mlir::LogicalResult saveProgramFile(mlir::Operation *op, llvm::StringRef path);

/// Registers --synpl-ipu21-to-program: the one ipu21.graph of a module (or
/// the graph itself) as a program file.
void registerToProgramTranslation();

} // namespace synpl::ipu21

#endif // SYNPL_TARGET_IPU21_TRANSLATE_H
