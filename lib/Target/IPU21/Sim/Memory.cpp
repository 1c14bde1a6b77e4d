//===- Memory.cpp - What each tile's memory holds -------------------------===//
//
// A tile holds: the pieces of the tensors mapped to it, the buffers whose
// set includes it, the code of every codelet one of its vertices runs, the
// state of each of its vertices and the descriptors of every exchange it
// sends or receives in. Each sits at its own address (Program.h); objects
// whose lifetimes do not overlap may share addresses, so a tile's occupied
// bytes are the union of the objects' address ranges.
//
//===----------------------------------------------------------------------===//
#include "SimImpl.h"

#include "synpl/Target/IPU21/ProgramFile.h"

#include <algorithm>

namespace synpl::ipu21::sim {

const char *memoryKindName(MemoryKind k) {
  switch (k) {
  case MemoryKind::Tensor:
    return "tensor";
  case MemoryKind::Buffer:
    return "buffer";
  case MemoryKind::Code:
    return "code";
  case MemoryKind::VertexState:
    return "vertex";
  case MemoryKind::Descriptors:
    return "exchange";
  }
  return "?";
}

namespace {

/// The tiles that send or receive in exchange `x`.
/// The tiles taking part in exchange `x`, run `runs` times at most: a
/// tensor source's homes over everything its rows reach in any run (as the
/// dialect sizes the descriptors), a destination's homes or tiles.
TileSet exchangeTiles(const Program &p, const std::vector<sim::TensorLayout> &layouts,
                      const Exchange &x, int64_t runs) {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  auto add = [&](const Endpoint &e, int64_t count) {
    if (count == 0)
      return;
    if (!e.isTensor) {
      ranges.insert(ranges.end(), e.tiles.ranges.begin(), e.tiles.ranges.end());
      return;
    }
    layouts[e.object].forEachHome(p.tensors[e.object], e.begin, count,
                                  [&](int64_t tile, int64_t, int64_t) {
                                    ranges.push_back({tile, tile + 1});
                                  });
  };
  for (const Send &s : x.sends) {
    add(s.src, s.src.isTensor ? sim::sourceExtent(s, runs) : s.count);
    add(s.dst, s.count);
  }
  return sim::unionOf(std::move(ranges));
}

} // namespace

bool Simulator::Impl::indexTileObjects(int64_t budget) {
  const Program &p = program;
  std::vector<TileSet> codeTiles(p.codelets.size()), xchgTiles(p.exchanges.size());
  {
    std::vector<std::vector<std::pair<int64_t, int64_t>>> ranges(p.codelets.size());
    for (const ComputeSet &cs : p.computeSets)
      for (const Vertex &v : cs.vertices)
        ranges[v.codelet].insert(ranges[v.codelet].end(), v.tiles.ranges.begin(),
                                 v.tiles.ranges.end());
    for (size_t c = 0; c < ranges.size(); ++c)
      codeTiles[c] = sim::unionOf(std::move(ranges[c]));
  }
  std::vector<int64_t> runs = sim::copyRuns(p, kMaxStepDepth);
  for (size_t x = 0; x < p.exchanges.size(); ++x)
    xchgTiles[x] = exchangeTiles(p, layouts, p.exchanges[x], runs[x]);

  // Count first: a program whose objects cover many tiles many times over
  // is refused before anything is allocated for it.
  int64_t entries = 0;
  for (const auto &l : layouts)
    entries = sim::satAdd(entries, int64_t(l.tiles.size()));
  for (const Buffer &b : p.buffers)
    entries = sim::satAdd(entries, b.tiles.count());
  for (const TileSet &s : codeTiles)
    entries = sim::satAdd(entries, s.count());
  for (const ComputeSet &cs : p.computeSets)
    for (const Vertex &v : cs.vertices)
      entries = sim::satAdd(entries, v.tiles.count());
  for (const TileSet &s : xchgTiles)
    entries = sim::satAdd(entries, s.count());
  int64_t bytes = sim::satAdd(sim::satMul(entries, int64_t(sizeof(TileObject))),
                              sim::satMul(p.target.tiles, int64_t(sizeof(tileObjects[0]))));
  if (bytes > budget) {
    problem = "the index of the objects on each tile needs " + std::to_string(bytes) +
              " bytes; the simulator may hold " + std::to_string(budget) + " more";
    return false;
  }

  tileObjects.assign(size_t(p.target.tiles), {});
  for (size_t i = 0; i < layouts.size(); ++i)
    for (int64_t t : layouts[i].tiles)
      tileObjects[t].push_back({MemoryKind::Tensor, int32_t(i), 0});
  for (size_t i = 0; i < p.buffers.size(); ++i)
    sim::forEachTile(p.buffers[i].tiles, [&](int64_t t) {
      tileObjects[t].push_back({MemoryKind::Buffer, int32_t(i), 0});
    });
  for (size_t i = 0; i < codeTiles.size(); ++i)
    sim::forEachTile(codeTiles[i], [&](int64_t t) {
      tileObjects[t].push_back({MemoryKind::Code, int32_t(i), 0});
    });
  for (size_t c = 0; c < p.computeSets.size(); ++c)
    for (size_t v = 0; v < p.computeSets[c].vertices.size(); ++v)
      sim::forEachTile(p.computeSets[c].vertices[v].tiles, [&](int64_t t) {
        tileObjects[t].push_back({MemoryKind::VertexState, int32_t(c), int32_t(v)});
      });
  for (size_t i = 0; i < xchgTiles.size(); ++i)
    sim::forEachTile(xchgTiles[i], [&](int64_t t) {
      tileObjects[t].push_back({MemoryKind::Descriptors, int32_t(i), 0});
    });
  return true;
}

std::vector<MemoryObject> Simulator::Impl::memoryMap(int64_t tile) const {
  std::vector<MemoryObject> out;
  if (tile < 0 || size_t(tile) >= tileObjects.size())
    return out;
  const Program &p = program;
  for (const TileObject &o : tileObjects[tile]) {
    MemoryObject m;
    m.kind = o.kind;
    switch (o.kind) {
    case MemoryKind::Tensor: {
      const Tensor &t = p.tensors[o.a];
      m.name = t.name;
      m.address = t.address;
      m.bytes = layouts[o.a].elementsOn(tile) * elemBytes(t.type);
      break;
    }
    case MemoryKind::Buffer: {
      const Buffer &b = p.buffers[o.a];
      m.name = b.name;
      m.address = b.address;
      m.bytes = b.elements * elemBytes(b.type);
      break;
    }
    case MemoryKind::Code: {
      const Codelet &c = p.codelets[o.a];
      m.name = c.name;
      m.address = c.address;
      m.bytes = c.codeBytes;
      break;
    }
    case MemoryKind::VertexState: {
      const ComputeSet &cs = p.computeSets[o.a];
      const Vertex &v = cs.vertices[o.b];
      m.name = cs.name + "[" + std::to_string(o.b) + "] " + p.codelets[v.codelet].name;
      m.address = v.stateAddress;
      m.bytes = v.stateBytes;
      break;
    }
    case MemoryKind::Descriptors: {
      const Exchange &x = p.exchanges[o.a];
      m.name = x.name;
      m.address = x.descriptorAddress;
      m.bytes = x.descriptorBytes;
      break;
    }
    }
    if (m.bytes > 0)
      out.push_back(std::move(m));
  }
  std::sort(out.begin(), out.end(), [](const MemoryObject &a, const MemoryObject &b) {
    if (a.address != b.address)
      return a.address < b.address;
    if (a.kind != b.kind)
      return a.kind < b.kind;
    return a.name < b.name;
  });
  return out;
}

int64_t Simulator::Impl::occupiedBytes(int64_t tile) const {
  std::vector<MemoryObject> objects = memoryMap(tile);
  int64_t total = 0, end = INT64_MIN;
  for (const MemoryObject &m : objects) {
    int64_t b = std::max(m.address, end), e = m.address + m.bytes;
    if (e > b)
      total += e - b;
    end = std::max(end, e);
  }
  return total;
}

void Simulator::Impl::findBusiestTile() {
  report.maxTile = 0;
  report.maxTileBytes = 0;
  for (int64_t t = 0; t < int64_t(tileObjects.size()); ++t) {
    int64_t bytes = occupiedBytes(t);
    if (bytes > report.maxTileBytes) {
      report.maxTile = t;
      report.maxTileBytes = bytes;
    }
  }
}

} // namespace synpl::ipu21::sim
