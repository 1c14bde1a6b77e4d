//===- L1Program.h - Queries over a whole l1 program ---------*- C++ -*-===//
//
// An l1 program is the module that holds one l1.system and the data, actors,
// stages, tensor graphs, pipelines and schedule placed on it. The verifiers
// and the L1 -> L0 emission passes ask the same questions of it: which node
// a reference names, whether bytes can move between two nodes, and the
// dataflow graph among stages and tensor graphs (forward and `then` edges,
// plus the stages that message each handler).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_DIALECT_L1_PROGRAM_H
#define SYNPL_DIALECT_L1_PROGRAM_H

#include "synpl/Dialect/L1/L1Ops.h"

#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <string>

namespace synpl::l1 {

/// The symbol table that holds the l1 program `op` belongs to (the module).
mlir::Operation *getProgramScope(mlir::Operation *op);

/// The program's `l1.system`, or null.
SystemOp getSystem(mlir::Operation *op);

/// The node `ref` names in the program's system, or null.
NodeOp lookupNode(mlir::Operation *from, mlir::FlatSymbolRefAttr ref);

/// Looks up `ref` from the program scope (the module), not from the nearest
/// symbol table, so that refs inside actors reach top-level symbols.
mlir::Operation *lookupInProgram(mlir::SymbolTableCollection &tables,
                                 mlir::Operation *from, mlir::SymbolRefAttr ref);

/// `%arg0` / `%3`, as synpl-opt prints the value.
std::string valueName(mlir::Value value);

/// `@a::@b`.
std::string symbolString(mlir::SymbolRefAttr ref);

/// Bytes of a tensor of static shape (elements * ceil(bits / 8)), saturating.
uint64_t tensorBytes(mlir::RankedTensorType type);

/// The dataflow graph of a program: stage -> forward target, tensor graph ->
/// `then` target, and, for each handler, the stages that send to it.
/// Unresolved references are left out (the verifiers report them).
class Dataflow {
public:
  /// Builds the graph of the program that `anyOp` belongs to.
  static Dataflow build(mlir::Operation *anyOp);
  static Dataflow build(mlir::SymbolTableCollection &tables, mlir::Operation *anyOp);

  /// Stages and tensor graphs in program order.
  llvm::ArrayRef<mlir::Operation *> getNodes() const { return nodes; }
  /// Where a stage forwards (or a tensor graph sends its results).
  llvm::ArrayRef<mlir::Operation *> getSuccessors(mlir::Operation *op) const;
  /// The stages that message `handler`.
  llvm::ArrayRef<mlir::Operation *> getSenders(HandlerOp handler) const;

  /// Whether a path of dataflow edges leads from `from` to `to` (a node
  /// reaches itself).
  bool reaches(mlir::Operation *from, mlir::Operation *to) const;
  /// A path from `op` back to itself (`op` first and last), or empty.
  llvm::SmallVector<mlir::Operation *> cycleThrough(mlir::Operation *op) const;

private:
  llvm::SmallVector<mlir::Operation *> nodes;
  llvm::DenseMap<mlir::Operation *, llvm::SmallVector<mlir::Operation *>> succ;
  llvm::DenseMap<mlir::Operation *, llvm::SmallVector<mlir::Operation *>> senders;
};

} // namespace synpl::l1

#endif // SYNPL_DIALECT_L1_PROGRAM_H
