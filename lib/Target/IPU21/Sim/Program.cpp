//===- Program.cpp - Helpers of the plain-data ipu21 program --------------===//
#include "synpl/Target/IPU21/Program.h"

#include "Layout.h"

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

namespace {
void collectRuns(const Step &s, int64_t runs, int depth, int maxDepth,
                 std::vector<int64_t> &out) {
  if (depth > maxDepth)
    return;
  if (s.kind == StepKind::Copy && s.ref >= 0 && size_t(s.ref) < out.size())
    out[size_t(s.ref)] = std::max(out[size_t(s.ref)], runs);
  int64_t inner = s.kind == StepKind::Repeat ? std::max<int64_t>(1, s.count) : runs;
  for (const Step &b : s.body)
    collectRuns(b, inner, depth + 1, maxDepth, out);
  for (const Step &b : s.elseBody)
    collectRuns(b, inner, depth + 1, maxDepth, out);
}
} // namespace

std::vector<int64_t> copyRuns(const Program &program, int maxDepth) {
  std::vector<int64_t> runs(program.exchanges.size(), 1);
  collectRuns(program.main, 1, 1, maxDepth, runs);
  return runs;
}

int64_t sourceExtent(const Send &s, int64_t runs) {
  int64_t rows = std::max<int64_t>(1, s.rows), rowLength = s.count / rows;
  return satAdd(satAdd(satMul(rows - 1, s.rowStride), rowLength),
                satMul(s.advance, std::max<int64_t>(0, runs - 1)));
}

} // namespace synpl::ipu21::sim
