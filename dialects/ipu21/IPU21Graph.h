//===- IPU21Graph.h - Indexes of an ipu21.graph for its checks --------*- C++ -*-===//
//
// What the graph's checks (IPU21Graph.cpp) compute once and share: each
// tensor's elements per tile and its intervals by position, and the tiles
// each codelet's code must be on.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_DIALECT_IPU21_GRAPH_H
#define SYNPL_DIALECT_IPU21_GRAPH_H

#include "synpl/Dialect/IPU21/IPU21Ops.h"

#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <vector>

namespace synpl::ipu21 {

/// A tensor's element count on each tile of the target.
struct TileElements {
  TileElements(TensorOp tensor, int64_t tiles);
  std::vector<int64_t> count;
};

/// Calls fn(tile, elements) for each home tile of the logical elements
/// [begin, end), given the tensor's intervals sorted by begin.
void forEachHomeTile(llvm::ArrayRef<MappedInterval> byBegin, int64_t begin, int64_t end,
                     llvm::function_ref<void(int64_t tile, int64_t elements)> fn);

class GraphIndex {
public:
  explicit GraphIndex(GraphOp graph);

  /// The graph's symbol `name` as an OpT, or null (a hashed lookup: a
  /// graph holds tens of thousands of symbols).
  template <typename OpT> OpT lookup(llvm::StringRef name) {
    return llvm::dyn_cast_or_null<OpT>(symbols.lookup(name));
  }
  mlir::Operation *lookup(llvm::StringRef name) { return symbols.lookup(name); }

  const TileElements &elementsOf(TensorOp tensor) {
    auto &slot = elements[tensor.getOperation()];
    if (!slot)
      slot = std::make_unique<TileElements>(tensor, tiles);
    return *slot;
  }
  llvm::ArrayRef<MappedInterval> byBegin(TensorOp tensor) {
    auto &slot = intervals[tensor.getOperation()];
    if (slot.empty()) {
      slot = tensor.getMapping();
      llvm::sort(slot, [](const MappedInterval &a, const MappedInterval &b) {
        return a.begin < b.begin;
      });
    }
    return slot;
  }
  /// Records that `vertex` runs `codelet`'s code on its tiles.
  void noteVertex(CodeletOp codelet, VertexOp vertex) {
    auto &on = codeTiles[codelet.getOperation()];
    if (on.empty())
      on.assign(tiles, false);
    llvm::ArrayRef<int64_t> ranges = vertex.getTiles();
    for (size_t i = 0; i + 1 < ranges.size(); i += 2)
      for (int64_t t = ranges[i]; t < ranges[i + 1]; ++t)
        on[t] = true;
  }
  /// How many runs an `advance` of `exchange`'s sends must stay in bounds
  /// for: the largest count of the innermost ipu21.repeat around an
  /// ipu21.copy of it (1 for a copy outside any repeat, or none).
  int64_t runsOf(ExchangeOp exchange) const {
    auto it = runs.find(exchange.getOperation());
    return it == runs.end() ? 1 : it->second;
  }
  /// When `buffer` holds data: the first and last top-level steps of
  /// @main (by position) whose compute sets or exchanges use it, or
  /// {0, INT64_MAX} (always) for a buffer @main does not use or another
  /// program does. Two buffers whose lifetimes do not meet may share
  /// memory.
  std::pair<int64_t, int64_t> lifetimeOf(BufferOp buffer) const {
    auto it = lifetimes.find(buffer.getOperation());
    return it == lifetimes.end() ? std::pair<int64_t, int64_t>{0, INT64_MAX} : it->second;
  }
  /// A scratch tensor's lifetime, as a buffer's (streams and an If's flag
  /// count as uses too); {0, INT64_MAX} for any other tensor.
  std::pair<int64_t, int64_t> lifetimeOf(TensorOp tensor) const {
    auto it = lifetimes.find(tensor.getOperation());
    return it == lifetimes.end() ? std::pair<int64_t, int64_t>{0, INT64_MAX} : it->second;
  }
  /// The tiles that hold `codelet`'s code (empty: no vertex runs it).
  const std::vector<bool> *codeTilesOf(CodeletOp codelet) {
    auto it = codeTiles.find(codelet.getOperation());
    return it == codeTiles.end() ? nullptr : &it->second;
  }

private:
  mlir::SymbolTable symbols;
  int64_t tiles;
  llvm::DenseMap<mlir::Operation *, std::unique_ptr<TileElements>> elements;
  llvm::DenseMap<mlir::Operation *, llvm::SmallVector<MappedInterval>> intervals;
  llvm::DenseMap<mlir::Operation *, std::vector<bool>> codeTiles;
  llvm::DenseMap<mlir::Operation *, int64_t> runs;
  llvm::DenseMap<mlir::Operation *, std::pair<int64_t, int64_t>> lifetimes;
};

/// How many sends of `exchange` each tile takes part in (as a source home,
/// a source tile, a destination home or a destination tile): what sizes its
/// descriptors. `exchange` must have verified.
std::vector<int64_t> sendsPerTile(GraphOp graph, ExchangeOp exchange, GraphIndex &index);

/// Row IPU.8, on every program of `graph` (IPU21Programs.cpp).
mlir::LogicalResult verifyPrograms(GraphOp graph, GraphIndex &index);

} // namespace synpl::ipu21

#endif // SYNPL_DIALECT_IPU21_GRAPH_H
