//===- Layout.cpp - Where a tensor's and a buffer's elements live ---------===//
#include "Layout.h"

namespace synpl::ipu21::sim {

int64_t shapeElements(const std::vector<int64_t> &shape, int64_t limit) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n) || n > limit)
      return -1;
  }
  return n;
}

TensorLayout::TensorLayout(const Tensor &t) {
  const auto &m = t.mapping;
  localStart.resize(m.size());
  int64_t local = 0;
  for (size_t k = 0; k < m.size(); ++k) {
    if (k == 0 || m[k].tile != m[k - 1].tile) {
      if (!tiles.empty())
        count.push_back(local);
      tiles.push_back(m[k].tile);
      first.push_back(int64_t(k));
      local = 0;
    }
    localStart[k] = local;
    local += m[k].end - m[k].begin;
  }
  if (!tiles.empty())
    count.push_back(local);
  first.push_back(int64_t(m.size()));
  for (size_t k = 0; k < m.size(); ++k)
    if (m[k].end > m[k].begin)
      byBegin.push_back(int32_t(k));
  std::sort(byBegin.begin(), byBegin.end(),
            [&](int32_t a, int32_t b) { return m[a].begin < m[b].begin; });
}

TileSetRank::TileSetRank(const TileSet &s) {
  int64_t n = 0;
  for (const auto &r : s.ranges) {
    prefix.push_back(n);
    n += r.second - r.first;
  }
}

int64_t TileSetRank::rank(const TileSet &s, int64_t tile) const {
  auto it = std::upper_bound(s.ranges.begin(), s.ranges.end(), tile,
                             [](int64_t t, const std::pair<int64_t, int64_t> &r) {
                               return t < r.second;
                             });
  if (it == s.ranges.end() || it->first > tile)
    return -1;
  return prefix[it - s.ranges.begin()] + (tile - it->first);
}

bool tileSetIncludes(const TileSet &outer, const TileSet &inner) {
  size_t j = 0;
  for (const auto &r : inner.ranges) {
    // The outer range that holds r.first must also hold r.second - 1.
    while (j < outer.ranges.size() && outer.ranges[j].second <= r.first)
      ++j;
    if (j == outer.ranges.size() || outer.ranges[j].first > r.first ||
        outer.ranges[j].second < r.second)
      return false;
  }
  return true;
}

TileSet unionOf(std::vector<std::pair<int64_t, int64_t>> ranges) {
  std::sort(ranges.begin(), ranges.end());
  TileSet s;
  for (const auto &r : ranges) {
    if (r.first >= r.second)
      continue;
    if (!s.ranges.empty() && r.first <= s.ranges.back().second)
      s.ranges.back().second = std::max(s.ranges.back().second, r.second);
    else
      s.ranges.push_back(r);
  }
  return s;
}

} // namespace synpl::ipu21::sim
