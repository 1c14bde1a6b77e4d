//===- Layout.h - Where a tensor's and a buffer's elements live -*- C++ -*-===//
//
// Index structures over a checked program (checkProgram): which tiles hold a
// tensor, how a tile-local index maps to the tensor's logical index, which
// tiles are home to a logical range, and a tile's row in a buffer.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_TARGET_IPU21_SIM_LAYOUT_H
#define SYNPL_LIB_TARGET_IPU21_SIM_LAYOUT_H

#include "synpl/Target/IPU21/CostModel.h"
#include "synpl/Target/IPU21/Program.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace synpl::ipu21::sim {

/// The product of a shape's dimensions, or -1 when a dimension is negative
/// or the product exceeds `limit`.
int64_t shapeElements(const std::vector<int64_t> &shape, int64_t limit);

/// A tensor's mapping, indexed. Built from a mapping sorted by tile, then
/// begin, whose intervals are disjoint.
struct TensorLayout {
  /// The distinct tiles holding elements, ascending, and for each the range
  /// [first[i], first[i+1]) of its intervals in Tensor::mapping and its
  /// element count.
  std::vector<int64_t> tiles, first, count;
  /// Per mapping interval: the tile-local index of its first element.
  std::vector<int64_t> localStart;
  /// The non-empty mapping intervals, as indices, sorted by begin.
  std::vector<int32_t> byBegin;

  explicit TensorLayout(const Tensor &t);
  TensorLayout() = default;

  /// Position of `tile` in `tiles`, or -1.
  int64_t tileIndex(int64_t tile) const {
    auto it = std::lower_bound(tiles.begin(), tiles.end(), tile);
    return it != tiles.end() && *it == tile ? it - tiles.begin() : -1;
  }
  int64_t elementsOn(int64_t tile) const {
    int64_t i = tileIndex(tile);
    return i < 0 ? 0 : count[i];
  }

  /// Calls fn(logicalBegin, length, localPos) for the runs of tile-local
  /// elements [offset, offset + n) on `tile`, in tile-local order; localPos
  /// counts from 0 at `offset`. The range must lie on the tile.
  template <typename Fn>
  void forEachLocalRun(const Tensor &t, int64_t tile, int64_t offset, int64_t n, Fn fn) const {
    int64_t ti = tileIndex(tile);
    if (ti < 0 || n <= 0)
      return;
    // The interval holding local index `offset`: the last whose start <= it.
    auto b = localStart.begin() + first[ti], e = localStart.begin() + first[ti + 1];
    auto it = std::upper_bound(b, e, offset);
    int64_t k = (it - localStart.begin()) - 1, pos = 0;
    for (; pos < n && k < first[ti + 1]; ++k) {
      const Interval &iv = t.mapping[k];
      int64_t skip = offset + pos - localStart[k];
      int64_t len = std::min(iv.end - iv.begin - skip, n - pos);
      if (len > 0) {
        fn(iv.begin + skip, len, pos);
        pos += len;
      }
    }
  }

  /// Calls fn(tile, logicalBegin, length) for the home tiles of the logical
  /// elements [begin, begin + n), in logical order.
  template <typename Fn>
  void forEachHome(const Tensor &t, int64_t begin, int64_t n, Fn fn) const {
    if (n <= 0)
      return;
    int64_t end = begin + n;
    // The last interval that begins at or before `begin`.
    auto it = std::upper_bound(byBegin.begin(), byBegin.end(), begin,
                               [&](int64_t x, int32_t k) { return x < t.mapping[k].begin; });
    if (it != byBegin.begin())
      --it;
    for (; it != byBegin.end(); ++it) {
      const Interval &iv = t.mapping[*it];
      if (iv.begin >= end)
        break;
      int64_t lo = std::max(iv.begin, begin), hi = std::min(iv.end, end);
      if (lo < hi)
        fn(iv.tile, lo, hi - lo);
    }
  }
};

/// A tile's position among the tiles of a TileSet (its row in a buffer).
struct TileSetRank {
  std::vector<int64_t> prefix; ///< tiles in the ranges before range i
  explicit TileSetRank(const TileSet &s);
  TileSetRank() = default;
  /// The rank of `tile`, or -1 when the set does not hold it.
  int64_t rank(const TileSet &s, int64_t tile) const;
};

/// True when every tile of `inner` is in `outer` (both valid TileSets).
bool tileSetIncludes(const TileSet &outer, const TileSet &inner);

/// Calls fn(tile) for every tile of `s`, ascending.
template <typename Fn> void forEachTile(const TileSet &s, Fn fn) {
  for (const auto &r : s.ranges)
    for (int64_t t = r.first; t < r.second; ++t)
      fn(t);
}

/// The union of `ranges` (any order, may overlap) as a valid TileSet.
TileSet unionOf(std::vector<std::pair<int64_t, int64_t>> ranges);

/// Saturating arithmetic for cycle counts (never past INT64_MAX): the cost
/// model's.
using cost::ceilDiv;
using cost::satAdd;
using cost::satMul;

} // namespace synpl::ipu21::sim

#endif // SYNPL_LIB_TARGET_IPU21_SIM_LAYOUT_H
