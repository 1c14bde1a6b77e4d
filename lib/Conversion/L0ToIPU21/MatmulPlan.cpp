//===- MatmulPlan.cpp - Tile plans of a matmul on the IPU -----------------===//
//
// MatmulPlan.h states the plan's shape. The enumerator walks the block
// sizes that change the grid (the distinct ceil(M / s) and ceil(N / s)),
// keeping grids of at most `tiles` blocks; the chunk kc and the tile order
// follow from the grid (the largest chunk that fits is never slower: the
// bytes exchanged do not depend on it and each step costs syncs and AMP
// launches; the pair-shared operand should be the larger one).
//
//===----------------------------------------------------------------------===//
#include "MatmulPlan.h"

#include "synpl/Target/IPU21/CostModel.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace synpl;
using namespace synpl::l0toipu21;
namespace cost = synpl::ipu21::cost;

int64_t MatmulPlan::totalCycles() const {
  int64_t loop = cost::satMul(steps, cost::satAdd(cost::satAdd(exchangeCycles, ampCycles),
                                                  syncCycles));
  return cost::satAdd(cost::satAdd(fillCycles, loop), reduceCycles);
}

std::string MatmulPlan::describe() const {
  std::string split = kSplit > 1 ? llvm::formatv(" x {0} k groups", kSplit).str() : "";
  std::string grid =
      llvm::formatv("{0}x{1} grid of {2}x{3} blocks{4}", mBlocks, nBlocks, mb, nb, split);
  if (!kc) // no chunk fits
    return grid;
  return llvm::formatv("{0}{1}, k chunks of {2} ({3} steps)", grid,
                       columnMajor ? " (column-major)" : "", kc, steps)
      .str();
}

int64_t synpl::l0toipu21::tileBytes(const MatmulShape &s, const MatmulPlan &p, int64_t tiles) {
  // A's and B's homes are spread evenly over the chip; the chunk buffers
  // and the C block live on the grid's tiles.
  int64_t homes = cost::satMul(cost::ceilDiv(cost::satMul(s.M, s.K), tiles) +
                                   cost::ceilDiv(cost::satMul(s.K, s.N), tiles),
                               s.inBytes);
  int64_t chunks = cost::satMul(cost::satMul(p.kc, p.mb + p.nb), s.inBytes);
  // A block's partial sums: one block on the other groups' tiles, the other
  // groups' on group 0's (one address for both on every tile).
  int64_t partials = cost::satMul(cost::satMul(p.mb * p.nb, s.outBytes), p.kSplit);
  return cost::satAdd(cost::satAdd(homes, chunks),
                      cost::satAdd(cost::satMul(p.mb * p.nb, s.outBytes), p.kSplit > 1 ? partials : 0));
}

namespace {
/// The distinct values of ceil(n / s) for s = 1 .. min(n, most).
llvm::SmallVector<int64_t> blockSizes(int64_t n, int64_t most) {
  llvm::SmallVector<int64_t> sizes;
  for (int64_t s = 1; s <= std::min(n, most); ++s) {
    int64_t b = cost::ceilDiv(n, s);
    if (sizes.empty() || sizes.back() != b)
      sizes.push_back(b);
  }
  return sizes;
}

/// Bytes rounded up to 16 (every object's alignment).
int64_t rounded(int64_t bytes) { return (bytes + 15) / 16 * 16; }

/// Completes `p` (kc, steps, order, estimate) for the grid it holds; false
/// when no chunk fits the tile.
bool complete(const MatmulShape &s, const ipu21::Facts &f, const TileBudget &b, MatmulPlan &p) {
  p.mBlocks = cost::ceilDiv(s.M, p.mb);
  p.nBlocks = cost::ceilDiv(s.N, p.nb);
  p.columnMajor = p.nb > p.mb;
  // The chunk: the group's K itself, or a divisor of it made of whole AMP
  // passes.
  int64_t pass = ipu21::cost::ampInChans(f, s.f32Inputs);
  int64_t groupK = p.groupK(s.K);
  llvm::SmallVector<int64_t> chunks{groupK};
  for (int64_t kc = pass; kc < groupK; kc *= 2)
    if (groupK % kc == 0)
      chunks.push_back(kc);
  std::sort(chunks.rbegin(), chunks.rend());
  int64_t homeA = rounded(cost::ceilDiv(s.M * s.K, b.tiles) * s.inBytes);
  int64_t homeB = rounded(cost::ceilDiv(s.K * s.N, b.tiles) * s.inBytes);
  for (int64_t kc : chunks) {
    // Executable region: code and state, then A's chunk (the AMP's input
    // must not share a memory element with its output, which is in the
    // interleaved region). Interleaved region: B's chunk and C's block.
    // With k groups: the other groups' partials (interleaved: the reduction
    // reads them two at a time) on the home tile, a partial block elsewhere.
    int64_t exec = b.reserved + rounded(p.mb * kc * s.inBytes);
    // Every object has one address on all tiles: the partial block of the
    // other groups and the home tiles' partials both take room.
    int64_t inter = rounded(kc * p.nb * s.inBytes) + rounded(p.mb * p.nb * s.outBytes) +
                    (p.kSplit > 1 ? rounded(p.mb * p.nb * s.outBytes) +
                                        rounded((p.kSplit - 1) * p.mb * p.nb * s.outBytes)
                                  : 0);
    if (exec > b.execBytes || inter > b.interleavedBytes)
      continue;
    // The homes go where placement puts them: the first region with room,
    // the executable one first (Placement.cpp).
    int64_t left[2] = {b.execBytes - exec, b.interleavedBytes - inter};
    bool placed = true;
    for (int64_t home : {homeA, homeB}) {
      int region = home <= left[0] ? 0 : 1;
      placed = placed && home <= left[region];
      left[region] -= home;
    }
    if (!placed)
      continue;
    p.kc = kc;
    p.steps = groupK / kc;
    p.bytesPerTile = exec + inter + homeA + homeB;
    break;
  }
  if (!p.kc)
    return false;
  // Per step, a tile receives its chunk of A (mb x kc) and of B (kc x nb);
  // the pair-shared one (A when row-major) at half the cost.
  int64_t aBytes = p.mb * p.kc * s.inBytes, bBytes = p.kc * p.nb * s.inBytes;
  // Only when every bus's tiles lie in one block row (column) of one group
  // does the busiest tile pay the shared block at the bus's share: rows of
  // the numbering and groups must start on a bus boundary.
  int64_t bus = std::max<int64_t>(1, f.tilesPerExchangeBus);
  int64_t line = p.columnMajor ? p.mBlocks : p.nBlocks;
  bool pairs = line % bus == 0 && (p.kSplit == 1 || p.blocks() % bus == 0);
  // The reduction: each home tile receives the other groups' partial blocks
  // and sums them into its own (two syncs).
  if (p.kSplit > 1) {
    int64_t partials = (p.kSplit - 1) * p.mb * p.nb;
    p.reduceCycles = cost::satAdd(
        cost::satAdd(cost::exchangeCycles(f, partials * s.outBytes),
                     cost::vectorCycles(f, partials, s.outBytes)),
        2 * f.syncCycles);
  }
  int64_t received = p.columnMajor ? aBytes + (pairs ? bBytes / bus : bBytes)
                                   : (pairs ? aBytes / bus : aBytes) + bBytes;
  p.exchangeCycles = cost::exchangeCycles(f, received);
  p.ampCycles = cost::ampCycles(f, s.f32Inputs, p.mb, p.nb, p.kc);
  p.syncCycles = 2 * f.syncCycles;
  p.fillCycles = cost::satAdd(cost::memcpyCycles(f, p.mb * p.nb * s.outBytes), f.syncCycles);
  return true;
}

/// The reduction's loop (ReduceAdd over a block of partials) fits `rpt`.
std::optional<std::string> reductionFits(const MatmulShape &s, const ipu21::Facts &f,
                                         const MatmulPlan &p) {
  if (p.kSplit == 1)
    return std::nullopt;
  int64_t lanes = std::max<int64_t>(1, f.vectorBytes / s.outBytes);
  int64_t trips = cost::ceilDiv(p.mb * p.nb, lanes);
  if (trips <= f.rptCountMax)
    return std::nullopt;
  return llvm::formatv("reducing a {0}x{1} block loops {2} times; rpt counts to {3}", p.mb,
                       p.nb, trips, f.rptCountMax)
      .str();
}
} // namespace

search::SearchResult<MatmulPlan>
synpl::l0toipu21::planMatmul(const MatmulShape &shape, const ipu21::Facts &facts,
                             const TileBudget &budget, llvm::StringRef name) {
  search::SearchSpec<MatmulPlan> spec;
  spec.name = ("IPU21 tiles @" + name).str();
  llvm::SmallVector<int64_t> rows = blockSizes(shape.M, budget.tiles);
  llvm::SmallVector<int64_t> cols = blockSizes(shape.N, budget.tiles);
  // K's parallel splits: the divisors of K that leave each group whole AMP
  // passes (and 1: no split).
  int64_t pass = ipu21::cost::ampInChans(facts, shape.f32Inputs);
  llvm::SmallVector<int64_t> splits{1};
  for (int64_t d = 2; d <= std::min(shape.K, budget.tiles); ++d)
    if (shape.K % d == 0 && (shape.K / d) % pass == 0)
      splits.push_back(d);
  spec.enumerate = [&](llvm::function_ref<bool(MatmulPlan)> yield) {
    for (int64_t mb : rows)
      for (int64_t nb : cols) {
        int64_t blocks = cost::ceilDiv(shape.M, mb) * cost::ceilDiv(shape.N, nb);
        for (int64_t kSplit : splits) {
          if (blocks * kSplit > budget.tiles)
            break; // more tiles than the chip has: not a plan of this chip
          // Completed once here (kc stays 0 when no chunk fits): the
          // checks, the score and the description read its fields.
          MatmulPlan p;
          p.mb = mb;
          p.nb = nb;
          p.kSplit = kSplit;
          (void)complete(shape, facts, budget, p);
          if (!yield(p))
            return;
        }
      }
  };
  spec.filters.push_back({"tile-memory", [&](const MatmulPlan &c) -> std::optional<std::string> {
                            if (c.kc)
                              return std::nullopt;
                            MatmulPlan smallest = c;
                            smallest.kc = ipu21::cost::ampInChans(facts, shape.f32Inputs);
                            return llvm::formatv("a {0}x{1} block needs {2} bytes per tile "
                                                 "even in chunks of {3}",
                                                 c.mb, c.nb,
                                                 tileBytes(shape, smallest, budget.tiles) +
                                                     budget.reserved,
                                                 smallest.kc)
                                .str();
                          }});
  spec.filters.push_back({"reduction-rpt", [&](const MatmulPlan &c) {
                            return reductionFits(shape, facts, c);
                          }});
  spec.score = [&](const MatmulPlan &p) {
    llvm::SmallVector<search::CostTerm> terms;
    terms.push_back({"amp_cycles", double(p.steps * p.ampCycles), 1});
    terms.push_back({"exchange_cycles", double(p.steps * p.exchangeCycles), 1});
    terms.push_back({"sync_cycles", double(p.steps * p.syncCycles), 1});
    terms.push_back({"fill_cycles", double(p.fillCycles), 1});
    terms.push_back({"reduce_cycles", double(p.reduceCycles), 1});
    terms.push_back({"tiles", double(p.tiles()), 0}); // reported, not weighed
    return terms;
  };
  spec.describe = [](const MatmulPlan &c) { return c.describe(); };
  // Among equal costs, fewer tiles leave more of the chip free.
  spec.tieBreakKey = [](const MatmulPlan &c) {
    return llvm::formatv("{0,8} {1,8} {2,8} {3,8}", c.tiles(), c.mb, c.nb, c.kSplit).str();
  };
  // Each candidate costs a few arithmetic operations: the space (distinct
  // grids x splits, some ten thousand for a 4096^3 product) is walked whole.
  search::SearchOptions options;
  options.candidateCap = 200000;
  return search::search(spec, options);
}
