//===- KernelPlan.cpp - Tile plans of a generic kernel on the IPU ---------===//
#include "KernelPlan.h"

#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Target/IPU21/CostModel.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace mlir;
using namespace synpl;
using namespace synpl::l0toipu21;
namespace cost = synpl::ipu21::cost;

int64_t KernelPlan::tiles() const {
  int64_t n = 1;
  for (int64_t p : pieces)
    n = cost::satMul(n, p);
  return n;
}

int64_t KernelPlan::totalCycles() const {
  return cost::satAdd(cost::satAdd(computeCycles, exchangeInCycles),
                      cost::satAdd(exchangeOutCycles, syncCycles));
}

std::string KernelPlan::describe() const {
  if (pieces.empty())
    return "1 tile: no parallel RANGE";
  std::string count, each;
  for (size_t i = 0; i < pieces.size(); ++i) {
    count += llvm::formatv("{0}{1}", i ? "x" : "", pieces[i]).str();
    each += llvm::formatv("{0}{1}", i ? "x" : "", size[i]).str();
  }
  return llvm::formatv("{0} tiles: {1} pieces of {2} iterations", tiles(), count, each).str();
}

Slice synpl::l0toipu21::sliceOf(const KernelModel &model, const KernelPlan &plan, int64_t tile) {
  Slice s;
  SmallVector<int64_t, 3> at(plan.pieces.size());
  for (size_t i = plan.pieces.size(); i-- > 0;) {
    at[i] = tile % plan.pieces[i];
    tile /= plan.pieces[i];
  }
  for (size_t i = 0; i < plan.pieces.size(); ++i) {
    s.first.push_back(std::min(model.trips[i], at[i] * plan.size[i]));
    s.last.push_back(std::min(model.trips[i], (at[i] + 1) * plan.size[i]));
  }
  return s;
}

SmallVector<Slice, 6> synpl::l0toipu21::workerSlices(const Slice &slice, int64_t workers) {
  size_t widest = 0;
  for (size_t i = 1; i < slice.first.size(); ++i)
    if (slice.last[i] - slice.first[i] > slice.last[widest] - slice.first[widest])
      widest = i;
  SmallVector<Slice, 6> out;
  if (slice.first.empty()) {
    out.push_back(slice);
    return out;
  }
  int64_t n = slice.last[widest] - slice.first[widest];
  int64_t parts = std::max<int64_t>(1, std::min(workers, n));
  int64_t each = cost::ceilDiv(n, parts);
  for (int64_t b = slice.first[widest]; b < slice.last[widest]; b += each) {
    Slice w = slice;
    w.first[widest] = b;
    w.last[widest] = std::min(slice.last[widest], b + each);
    out.push_back(std::move(w));
  }
  return out;
}

namespace {
/// The distinct piece sizes ceil(n / p) for p = 1 .. min(n, most).
SmallVector<int64_t> pieceSizes(int64_t n, int64_t most) {
  SmallVector<int64_t> sizes;
  for (int64_t p = 1; p <= std::min(n, most); ++p) {
    int64_t s = cost::ceilDiv(n, p);
    if (sizes.empty() || sizes.back() != s)
      sizes.push_back(s);
  }
  if (sizes.empty())
    sizes.push_back(std::max<int64_t>(n, 1));
  return sizes;
}

/// Fills `p`'s estimate from tile 0's slice (the largest piece of each
/// RANGE).
void estimate(const KernelModel &m, const ipu21::Facts &f, KernelPlan &p) {
  Slice s = sliceOf(m, p, 0);
  int64_t longest = 0, total = 0;
  for (const Slice &w : workerSlices(s, f.workers)) {
    int64_t n = m.instructions(w);
    longest = std::max(longest, n);
    total = cost::satAdd(total, n);
  }
  p.computeCycles = cost::workerCycles(f, longest, total);
  int64_t in = 0, out = 0, bytes = 0;
  unsigned numInputs = m.numInputs;
  for (unsigned arg = 0, e = m.numArgs(); arg < e; ++arg) {
    int64_t b = cost::satMul(m.window(arg, s).elements(), m.elemBytesOf(arg));
    bytes = cost::satAdd(bytes, b);
    bool output = arg >= numInputs;
    // Inputs come in; outputs go out, and come in first unless the stores
    // write all of the window.
    if (!output || m.reads(arg) || !m.storesCoverWindow(arg))
      in = cost::satAdd(in, b);
    if (output)
      out = cost::satAdd(out, b);
  }
  p.exchangeInCycles = in ? cost::exchangeCycles(f, in) : 0;
  p.exchangeOutCycles = out ? cost::exchangeCycles(f, out) : 0;
  p.syncCycles = cost::satMul(f.syncCycles, 1 + (in > 0) + (out > 0));
  p.bytesPerTile = bytes;
}
} // namespace

search::SearchResult<KernelPlan>
synpl::l0toipu21::planKernel(const KernelModel &model, const ipu21::Facts &facts,
                             const TileBudget &budget, StringRef name) {
  search::SearchSpec<KernelPlan> spec;
  spec.name = ("IPU21 tiles @" + name).str();
  SmallVector<SmallVector<int64_t>> sizes;
  for (int64_t t : model.trips)
    sizes.push_back(pieceSizes(t, budget.tiles));
  unsigned numInputs = model.numInputs;
  unsigned numArgs = model.numArgs();
  spec.enumerate = [&](llvm::function_ref<bool(KernelPlan)> yield) {
    // Odometer over each RANGE's piece sizes, keeping the pieces' product
    // within the chip.
    SmallVector<size_t, 3> at(sizes.size(), 0);
    while (true) {
      KernelPlan p;
      int64_t tiles = 1;
      for (size_t i = 0; i < sizes.size(); ++i) {
        p.size.push_back(sizes[i][at[i]]);
        p.pieces.push_back(cost::ceilDiv(std::max<int64_t>(model.trips[i], 1), p.size.back()));
        tiles = cost::satMul(tiles, p.pieces.back());
      }
      if (tiles <= budget.tiles) {
        estimate(model, facts, p);
        if (!yield(p))
          return;
      }
      size_t i = 0;
      for (; i < at.size(); ++i) {
        if (++at[i] < sizes[i].size())
          break;
        at[i] = 0;
      }
      if (i == at.size())
        return;
    }
  };
  int64_t room = budget.execBytes + budget.interleavedBytes - budget.reserved - budget.homes;
  spec.filters.push_back({"tile-memory", [&, room](const KernelPlan &p) -> std::optional<std::string> {
                            if (p.bytesPerTile <= room)
                              return std::nullopt;
                            return llvm::formatv("its windows take {0} bytes of a tile, {1} "
                                                 "are free",
                                                 p.bytesPerTile, room)
                                .str();
                          }});
  // Indices built with div or mod wrap: a piece cut across a wrap has a
  // window spanning the whole wrapped dimension, so every neighbouring pair
  // is checked; otherwise windows grow with the pieces, and the first two
  // pieces of each RANGE stand for all.
  bool wraps = false;
  model.body->walk([&](mlir::Operation *op) {
    wraps = wraps || mlir::isa<l0uop::DivOp, l0uop::ModOp>(op);
  });
  spec.filters.push_back({"outputs-apart", [&, wraps](const KernelPlan &p) -> std::optional<std::string> {
                            // Neighbouring pieces of each cut RANGE write
                            // apart (the other RANGEs at their first piece).
                            int64_t stride = p.tiles();
                            for (size_t i = 0; i < p.pieces.size(); ++i) {
                              stride /= p.pieces[i];
                              if (p.pieces[i] < 2)
                                continue;
                              Slice prev = sliceOf(model, p, 0);
                              for (int64_t j = 1; j < (wraps ? p.pieces[i] : 2); ++j) {
                                Slice next = sliceOf(model, p, j * stride);
                                for (unsigned arg = numInputs; arg < numArgs; ++arg)
                                  if (model.window(arg, prev).intersects(model.window(arg, next)))
                                    return llvm::formatv("pieces {0} and {1} of parallel RANGE "
                                                         "{2} write overlapping windows of "
                                                         "output #{3}",
                                                         j - 1, j, i, arg - numInputs)
                                        .str();
                                prev = std::move(next);
                              }
                            }
                            return std::nullopt;
                          }});
  spec.score = [](const KernelPlan &p) {
    SmallVector<search::CostTerm> terms;
    terms.push_back({"compute_cycles", double(p.computeCycles), 1});
    terms.push_back({"exchange_in_cycles", double(p.exchangeInCycles), 1});
    terms.push_back({"exchange_out_cycles", double(p.exchangeOutCycles), 1});
    terms.push_back({"sync_cycles", double(p.syncCycles), 1});
    terms.push_back({"tiles", double(p.tiles()), 0}); // reported, not weighed
    return terms;
  };
  spec.describe = [](const KernelPlan &p) { return p.describe(); };
  spec.tieBreakKey = [](const KernelPlan &p) { return llvm::formatv("{0,8}", p.tiles()).str(); };
  search::SearchOptions options;
  options.candidateCap = 200000;
  return search::search(spec, options);
}
