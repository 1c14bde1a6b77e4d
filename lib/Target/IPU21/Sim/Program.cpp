//===- Program.cpp - Helpers of the plain-data ipu21 program --------------===//
#include "synpl/Target/IPU21/Program.h"

#include <algorithm>

namespace synpl::ipu21::sim {

int64_t elemBytes(ElemType t) {
  switch (t) {
  case ElemType::F32:
  case ElemType::I32:
    return 4;
  case ElemType::F16:
    return 2;
  case ElemType::F8E4M3:
  case ElemType::F8E5M2:
  case ElemType::U8:
    return 1;
  }
  return 0;
}

const char *elemName(ElemType t) {
  switch (t) {
  case ElemType::F32:
    return "f32";
  case ElemType::F16:
    return "f16";
  case ElemType::F8E4M3:
    return "f8E4M3FN";
  case ElemType::F8E5M2:
    return "f8E5M2";
  case ElemType::I32:
    return "i32";
  case ElemType::U8:
    return "ui8";
  }
  return "?";
}

bool TileSet::contains(int64_t tile) const {
  // The first range that ends after `tile`; the ranges are sorted and disjoint.
  auto it = std::upper_bound(ranges.begin(), ranges.end(), tile,
                             [](int64_t t, const std::pair<int64_t, int64_t> &r) {
                               return t < r.second;
                             });
  return it != ranges.end() && it->first <= tile;
}

int64_t TileSet::count() const {
  int64_t n = 0;
  for (const auto &r : ranges)
    n += r.second - r.first;
  return n;
}

int64_t Tensor::elementsOn(int64_t tile) const {
  // The mapping is sorted by tile: the tile's intervals are one run.
  auto it = std::lower_bound(mapping.begin(), mapping.end(), tile,
                             [](const Interval &iv, int64_t t) { return iv.tile < t; });
  int64_t n = 0;
  for (; it != mapping.end() && it->tile == tile; ++it)
    n += it->end - it->begin;
  return n;
}

} // namespace synpl::ipu21::sim
