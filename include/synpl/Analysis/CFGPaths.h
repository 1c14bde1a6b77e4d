//===- CFGPaths.h - Walk every path of a region's CFG ----------*- C++ -*-===//
//
// Buffer conservation (L1.7) is a graph walk: follow every path from the
// entry block of a region to a block without successors, carrying the set of
// live values, and look at the set at the end of each path. This header holds
// the generic walk; the client says what a block and an edge do to the set.
//
// The walk is exact on acyclic CFGs. A back edge (a path that reaches a block
// it already visited) stops the walk and is reported, with the path that
// closes the cycle: the spec's stages have no loops, and an unbounded loop is a
// specification error, so a sound client rejects it rather than
// approximating. The number of paths is bounded too (`maxPaths`), since it can
// grow exponentially in the number of diamonds.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_ANALYSIS_CFGPATHS_H
#define SYNPL_ANALYSIS_CFGPATHS_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Region.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SetVector.h"

#include <cstddef>
#include <string>

namespace synpl {

/// The values live at a point of a path, in the order they became live (so
/// that diagnostics list them deterministically).
using LiveValues = llvm::SmallSetVector<mlir::Value, 8>;

/// What a client does along a path. Each callback sees the path so far
/// (entry block first, the current block last).
class CFGPathVisitor {
public:
  virtual ~CFGPathVisitor();

  /// Applies `block`'s operations (up to, and including, its terminator) to
  /// `live`. Return failure to stop the whole walk (the visitor has reported).
  virtual mlir::LogicalResult visitBlock(mlir::Block *block,
                                         llvm::ArrayRef<mlir::Block *> path,
                                         LiveValues &live) = 0;

  /// Applies the edge taken by `terminator` to its successor `succIndex`.
  /// By default, values passed to the successor leave the live set and the
  /// successor's block arguments join it (a branch hands its operands on).
  virtual void visitEdge(mlir::Operation *terminator, unsigned succIndex,
                         LiveValues &live);

  /// Called at the end of each complete path (its last block has no
  /// successors). Return failure to stop the walk.
  virtual mlir::LogicalResult visitPathEnd(llvm::ArrayRef<mlir::Block *> path,
                                           const LiveValues &live) = 0;
};

/// How a walk ended.
struct CFGWalkResult {
  enum class Status {
    Done,        ///< every path was visited
    Aborted,     ///< a callback returned failure
    BackEdge,    ///< a path reached a block twice; `path` closes the cycle
    TooManyPaths ///< more than `maxPaths` paths; `path` is the first past it
  };
  Status status = Status::Done;
  /// Complete paths visited.
  size_t numPaths = 0;
  /// For BackEdge: the path up to and including the repeated block.
  llvm::SmallVector<mlir::Block *, 8> path;

  bool succeeded() const { return status == Status::Done; }
};

/// How far a walk goes.
struct CFGWalkOptions {
  /// Stop after this many complete paths (TooManyPaths).
  size_t maxPaths = 4096;
  /// Skip a block reached again with the same live set: its continuations
  /// were already walked from the same state. Sound when the visitor's
  /// verdicts depend only on the block and the live set (the path is only
  /// used in messages), and it keeps a chain of N diamonds linear instead
  /// of 2^N. Skipped continuations do not count as paths.
  bool skipRepeatedStates = false;
};

/// Walks every path of `region`'s CFG from its entry block, depth first,
/// successors in order, starting with `initial` live values (copied per
/// branch). A cycle reachable from the entry is reported first (BackEdge)
/// and nothing is walked. An empty region has no paths.
CFGWalkResult walkCFGPaths(mlir::Region &region, CFGPathVisitor &visitor,
                           const LiveValues &initial, CFGWalkOptions options = {});

/// `^bb0 -> ^bb2 -> ^bb3`, numbering blocks by their position in the region
/// (the numbering the MLIR printer uses).
std::string formatCFGPath(llvm::ArrayRef<mlir::Block *> path);

/// `^bb<N>` for one block.
std::string formatBlock(mlir::Block *block);

} // namespace synpl

#endif // SYNPL_ANALYSIS_CFGPATHS_H
