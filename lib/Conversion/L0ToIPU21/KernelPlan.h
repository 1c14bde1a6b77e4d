//===- KernelPlan.h - Tile plans of a generic kernel on the IPU ----*- C++ -*-===//
//
// The search that spreads a generic kernel (any UOp body the generic
// codelet runs: elementwise maps, reductions, products with epilogues) over
// the IPU's tiles: each parallel RANGE is cut into pieces, and each tile
// runs one piece of each (a box of the iteration space), split among its
// workers. Enumerate the cuts (the distinct piece counts of each RANGE,
// at most the chip's tiles in all); filter those whose windows do not fit a
// tile (tile-memory) or whose tiles' output windows overlap (outputs-apart:
// each tile writes its own part back); score the estimated cycles (the
// simulator's formulas, CostModel.h): the workers' instructions, the
// exchange of the input windows in and the outputs out, the syncs; select
// the fastest, fewer tiles among equals (docs/ipu21.md).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_CONVERSION_L0TOIPU21_KERNELPLAN_H
#define SYNPL_LIB_CONVERSION_L0TOIPU21_KERNELPLAN_H

#include "Footprint.h"
#include "MatmulPlan.h"

#include "synpl/Search/Search.h"
#include "synpl/Target/IPU21/Facts.h"

namespace synpl::l0toipu21 {

struct KernelPlan {
  /// Iterations per piece of each parallel RANGE, and the pieces.
  llvm::SmallVector<int64_t, 3> size, pieces;
  /// Estimated cycles of the busiest tile (tile 0 holds the largest piece).
  int64_t computeCycles = 0, exchangeInCycles = 0, exchangeOutCycles = 0, syncCycles = 0;
  int64_t bytesPerTile = 0;

  int64_t tiles() const;
  int64_t totalCycles() const;
  std::string describe() const;
};

/// Tile `tile`'s slice (tiles are numbered row-major over the pieces).
Slice sliceOf(const KernelModel &model, const KernelPlan &plan, int64_t tile);

/// `slice` cut among a tile's `workers` workers, as the simulator runs a
/// generic vertex: along the parallel RANGE with the most iterations n in
/// it (the first on ties), in pieces of ceil(n / min(workers, n))
/// iterations.
llvm::SmallVector<Slice, 6> workerSlices(const Slice &slice, int64_t workers);

/// The search; its report goes to --synpl-search-report under `name`.
search::SearchResult<KernelPlan> planKernel(const KernelModel &model, const ipu21::Facts &facts,
                                            const TileBudget &budget, llvm::StringRef name);

} // namespace synpl::l0toipu21

#endif // SYNPL_LIB_CONVERSION_L0TOIPU21_KERNELPLAN_H
