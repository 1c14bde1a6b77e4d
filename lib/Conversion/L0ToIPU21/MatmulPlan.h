//===- MatmulPlan.h - Tile plans of a matmul on the IPU -------------*- C++ -*-===//
//
// The search that places one matrix product C[M, N] = A[M, K] . B[K, N] on
// the IPU's tiles, as poplibs' convolution planner does: C is cut into a
// grid of mb x nb blocks; K is split into kSplit parallel groups, each on
// its own copy of the grid (a block's partial sums are then reduced onto
// its home tile, in group 0), and each group's share of K is walked in
// chunks of kc, one superstep each (the chunk of A's rows and B's columns
// the tile needs is exchanged in, then the AMP accumulates it). Enumerate
// the grids and splits that fit the chip; for each, the largest chunk that
// fits a tile's memory; filter by memory and the reduction's loop count;
// score the estimated cycles from the IPU's facts and cost model
// (synpl/Target/IPU21/CostModel.h, the simulator's own formulas); select
// the fastest (docs/ipu21.md).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_CONVERSION_L0TOIPU21_MATMULPLAN_H
#define SYNPL_LIB_CONVERSION_L0TOIPU21_MATMULPLAN_H

#include "synpl/Search/Search.h"
#include "synpl/Target/IPU21/Facts.h"

#include <cstdint>
#include <string>

namespace synpl::l0toipu21 {

struct MatmulShape {
  int64_t M = 0, N = 0, K = 0;
  int64_t inBytes = 4;  ///< bytes of an A or B element
  int64_t outBytes = 4; ///< bytes of a C element (the AMP's partials)
  bool f32Inputs = true;
};

/// What a tile has for the product: the two regions' bytes and what the
/// graph's other objects (code, vertex state, descriptors) reserve in the
/// executable one.
struct TileBudget {
  int64_t tiles = 0;
  int64_t execBytes = 0, interleavedBytes = 0;
  int64_t reserved = 0;
  /// What the tensors' homes take on each tile (a generic kernel's windows
  /// share the tile with them).
  int64_t homes = 0;
};

struct MatmulPlan {
  int64_t mb = 0, nb = 0, kc = 0;
  int64_t mBlocks = 0, nBlocks = 0;
  /// Parallel groups over K, each on mBlocks x nBlocks tiles: group g's tile
  /// of block t is g x blocks() + t.
  int64_t kSplit = 1;
  /// Tiles are numbered along C's columns (row-major, the default: tile
  /// pairs share A's rows) or along its rows (column_major: pairs share B's
  /// columns), whichever block each tile receives more of.
  bool columnMajor = false;
  int64_t steps = 0;
  /// Estimated cycles (CostModel.h): zeroing C, then per step the exchange,
  /// the AMP and two syncs, then (kSplit > 1) the reduction's exchange, sum
  /// and syncs.
  int64_t fillCycles = 0, exchangeCycles = 0, ampCycles = 0, syncCycles = 0;
  int64_t reduceCycles = 0;
  int64_t bytesPerTile = 0;

  int64_t blocks() const { return mBlocks * nBlocks; }
  int64_t tiles() const { return blocks() * kSplit; }
  /// K's share of one group.
  int64_t groupK(int64_t K) const { return K / kSplit; }
  int64_t totalCycles() const;
  /// The grid, and the chunks when one fits (kc is 0 when none does).
  std::string describe() const;
};

/// The bytes one tile of `plan` holds for the product (its blocks of A's and
/// B's homes, the chunk buffers, its C block; not TileBudget::reserved).
int64_t tileBytes(const MatmulShape &shape, const MatmulPlan &plan, int64_t tiles);

/// The search; its report goes to --synpl-search-report under `name`.
search::SearchResult<MatmulPlan> planMatmul(const MatmulShape &shape, const ipu21::Facts &facts,
                                            const TileBudget &budget, llvm::StringRef name);

} // namespace synpl::l0toipu21

#endif // SYNPL_LIB_CONVERSION_L0TOIPU21_MATMULPLAN_H
