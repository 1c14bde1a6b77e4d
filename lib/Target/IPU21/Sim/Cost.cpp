//===- Cost.cpp - Cycle costs of the ipu21 simulator ----------------------===//
//
// The per-unit formulas are synpl/Target/IPU21/CostModel.h's (the planner
// uses the same ones); this file applies them to a program's vertices,
// exchanges and streams. A divisor fact that is not positive is taken as 1,
// so that a Facts built by hand cannot divide by zero.
//
//===----------------------------------------------------------------------===//
#include "Cost.h"

#include "synpl/Target/IPU21/CostModel.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace synpl::ipu21::sim {
namespace {


bool isF32(ElemType t) { return t == ElemType::F32; }

} // namespace

int64_t uopIssueSlots(const UInst &u) {
  switch (u.op) {
  case UOpcode::Const:
  case UOpcode::EndIf:
    return 0;
  case UOpcode::Index:
    return satMul(2, int64_t(u.indices.size()));
  case UOpcode::Exp2:
  case UOpcode::Log2:
  case UOpcode::Sin:
  case UOpcode::Sqrt:
  case UOpcode::Reciprocal:
    return cost::kTranscendentalIssueSlots; // an estimate: CostModel.h
  default:
    return 1;
  }
}

int64_t vertexCycles(const Codelet &c, const Vertex &v, const Facts &f) {
  const auto &q = v.params;
  switch (c.kind) {
  case CodeletKind::AmpMatmul:
    return cost::ampCycles(f, isF32(c.inType), q[0], q[1], q[2]);
  case CodeletKind::ReduceAdd:
    return cost::vectorCycles(f, satMul(q[0], q[1]), elemBytes(c.outType));
  case CodeletKind::Copy:
    return cost::memcpyCycles(
        f, satMul(q[0], std::max(elemBytes(c.inType), elemBytes(c.outType))));
  case CodeletKind::Fill:
    return cost::memcpyCycles(f, satMul(q[0], elemBytes(c.outType)));
  case CodeletKind::UOp:
    return 0; // charged from its run: computeSetCost's `issued`
  }
  return 0;
}

TileSet computeSetTiles(const ComputeSet &cs) {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (const Vertex &v : cs.vertices)
    ranges.insert(ranges.end(), v.tiles.ranges.begin(), v.tiles.ranges.end());
  return unionOf(std::move(ranges));
}

StepCost computeSetCost(const Program &p, const ComputeSet &cs, const Facts &facts,
                        const std::vector<std::vector<std::vector<int64_t>>> *issued,
                        const TileSet *usedTiles) {
  // Only the tiles some vertex runs on are counted (the others are idle): a
  // program may hold thousands of compute sets for a target of a million
  // tiles, and costing one must take time in its vertices, not in the tiles.
  TileSet own;
  if (!usedTiles)
    own = computeSetTiles(cs);
  const TileSet &used = usedTiles ? *usedTiles : own;
  const TileSetRank rank(used);
  std::vector<int64_t> busy(size_t(used.count()), 0);
  // Per tile, the most and total issue slots of its UOp vertices' worker
  // parts, all vertices together.
  std::vector<int64_t> longest, total;
  if (issued) {
    longest.assign(busy.size(), 0);
    total.assign(busy.size(), 0);
  }
  for (size_t i = 0; i < cs.vertices.size(); ++i) {
    const Vertex &v = cs.vertices[i];
    int64_t c = vertexCycles(p.codelets[v.codelet], v, facts);
    const std::vector<std::vector<int64_t>> *slots =
        issued && i < issued->size() && !(*issued)[i].empty() ? &(*issued)[i] : nullptr;
    size_t k = 0; // the vertex's tile, in forEachTile order
    // Each range of the vertex lies inside one range of `used`, so its tiles
    // have consecutive ranks.
    for (const auto &r : v.tiles.ranges)
      for (int64_t t = r.first, at = rank.rank(used, r.first); t < r.second; ++t, ++at, ++k) {
        busy[at] = satAdd(busy[at], c);
        if (slots && k < slots->size())
          for (int64_t part : (*slots)[k]) {
            longest[at] = std::max(longest[at], part);
            total[at] = satAdd(total[at], part);
          }
      }
  }
  for (size_t at = 0; issued && at < busy.size(); ++at)
    busy[at] = satAdd(busy[at], cost::workerCycles(facts, longest[at], total[at]));
  StepCost cost;
  for (int64_t b : busy) {
    cost.cycles = std::max(cost.cycles, b);
    cost.busy += double(b);
  }
  return cost;
}

bool advances(const Exchange &x) {
  for (const Send &s : x.sends)
    if (s.advance)
      return true;
  return false;
}

ExchangeCost exchangeCost(const Program &p, const std::vector<TensorLayout> &layouts,
                          const Exchange &x, const Facts &facts, int64_t run) {
  // A non-advancing exchange has one round list, whatever the run.
  const std::vector<int32_t> &rounds =
      x.schedule[advances(x) ? size_t(run) : 0];
  std::vector<Transfer> transfers =
      exchangeTransfers(p, layouts, x, run, facts.tilesPerExchangeBus);
  return {scheduleCycles(transfers, rounds, facts), lowerBoundCycles(transfers, facts)};
}

int64_t streamCycles(int64_t bytes, const Program &p, const Facts &facts) {
  return cost::streamCycles(facts, bytes, double(p.target.clockHz));
}

} // namespace synpl::ipu21::sim
