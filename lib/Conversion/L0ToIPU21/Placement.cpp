//===- Placement.cpp - Every object of an ipu21 graph in tile memory -------===//
//
// One pass over all the objects a tile holds: codelet code, vertex state,
// exchange descriptors, tensors' home pieces and buffers, each at one
// address on every tile that holds it (the dialect's memory model). Regions:
//
//   executable  [sram_base, exec_end): code (only here), then the inputs an
//               AMP vertex must keep out of its output's memory element
//   interleaved [interleaved_begin, sram_end): the fields that need it (AMP
//               weights and outputs, reduction partials)
//
// then state, descriptors and the remaining objects wherever room is left,
// executable region first. Each region is filled upward, tile by tile, at
// 16-byte alignment: an object goes at the lowest address free on every
// tile it is on, so objects on disjoint tiles share addresses (a vertex's
// state on tile 7 and another's on tile 8). Buffers and scratch tensors
// hold data only over their lifetimes (GraphIndex::lifetimeOf): one placed
// after another whose lifetime ended takes its memory. The graph's verifier
// checks the result (IPU.1-IPU.3).
//
//===----------------------------------------------------------------------===//
#include "Emit.h"

#include "synpl/Dialect/IPU21/IPU21Codelets.h"
#include "synpl/Dialect/IPU21/IPU21Graph.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::ipu21;
using namespace synpl::l0toipu21;

namespace {
enum class Area { Exec, Interleaved, Any };

struct Object {
  Operation *op;
  int64_t bytes;
  Area region;
  std::vector<int64_t> tiles; ///< the tiles that hold it
  /// When it holds data (GraphIndex::lifetimeOf); the whole program but
  /// for buffers.
  int64_t first = 0, last = INT64_MAX;
  int64_t address = 0; ///< once placed
  bool transient() const { return first != 0 || last != INT64_MAX; }
};

std::vector<int64_t> tilesOf(ArrayRef<int64_t> ranges) {
  std::vector<int64_t> tiles;
  for (size_t i = 0; i + 1 < ranges.size(); i += 2)
    for (int64_t t = ranges[i]; t < ranges[i + 1]; ++t)
      tiles.push_back(t);
  return tiles;
}
std::vector<int64_t> tilesWhere(const std::vector<int64_t> &count) {
  std::vector<int64_t> tiles;
  for (size_t t = 0; t < count.size(); ++t)
    if (count[t] > 0)
      tiles.push_back(static_cast<int64_t>(t));
  return tiles;
}

int64_t align16(int64_t v) { return (v + 15) / 16 * 16; }
} // namespace

LogicalResult synpl::l0toipu21::placeGraph(GraphOp graph) {
  TargetAttr target = graph.getTarget();
  GraphIndex index(graph);
  Block &body = graph.getBody().front();

  // What the fields ask of the objects they bind.
  llvm::DenseSet<Operation *> interleaved, apart;
  for (Operation &op : body)
    if (auto set = dyn_cast<ComputeSetOp>(op))
      for (Operation &v : set.getBody().front()) {
        auto vertex = cast<VertexOp>(v);
        auto codelet = index.lookup<CodeletOp>(vertex.getCodelet());
        if (!codelet)
          return vertex.emitOpError("names no codelet");
        const CodeletSpec &spec = codeletSpec(codelet.getKind());
        for (auto [i, field] : llvm::enumerate(spec.fields)) {
          Operation *object = index.lookup(vertex.getFieldObject(i).getValue());
          if (field.interleaved)
            interleaved.insert(object);
        }
        // The first field of each elem(a) != elem(b) pair (the AMP's input)
        // goes to the executable region, its output to the interleaved one.
        for (const std::pair<unsigned, unsigned> &pair : spec.distinctElements)
          apart.insert(
              index.lookup(vertex.getFieldObject(pair.first).getValue()));
      }

  // The tiles each codelet's code is on: those of its vertices.
  for (Operation &op : body)
    if (auto set = dyn_cast<ComputeSetOp>(op))
      for (Operation &v : set.getBody().front()) {
        auto vertex = cast<VertexOp>(v);
        if (auto codelet = index.lookup<CodeletOp>(vertex.getCodelet()))
          index.noteVertex(codelet, vertex);
      }
  std::vector<Object> objects;
  for (Operation &op : body) {
    if (auto codelet = dyn_cast<CodeletOp>(op)) {
      std::vector<int64_t> on;
      if (const std::vector<bool> *code = index.codeTilesOf(codelet))
        for (size_t t = 0; t < code->size(); ++t)
          if ((*code)[t])
            on.push_back(static_cast<int64_t>(t));
      objects.push_back({codelet, codelet.getCodeBytes(), Area::Exec, std::move(on)});
    } else if (auto tensor = dyn_cast<TensorOp>(op)) {
      int64_t most = 0;
      for (int64_t n : index.elementsOf(tensor).count)
        most = std::max(most, n);
      Area r = interleaved.contains(tensor) ? Area::Interleaved
                 : apart.contains(tensor)     ? Area::Exec
                                              : Area::Any;
      auto [first, last] = index.lifetimeOf(tensor);
      objects.push_back({tensor, most * *elementBytes(tensor.getElementType()), r,
                         tilesWhere(index.elementsOf(tensor).count), first, last});
    } else if (auto buffer = dyn_cast<BufferOp>(op)) {
      Area r = interleaved.contains(buffer) ? Area::Interleaved
                 : apart.contains(buffer)     ? Area::Exec
                                              : Area::Any;
      auto [first, last] = index.lifetimeOf(buffer);
      objects.push_back({buffer, buffer.getElements() * *elementBytes(buffer.getElemType()), r,
                         tilesOf(buffer.getTiles()), first, last});
    } else if (auto set = dyn_cast<ComputeSetOp>(op)) {
      for (Operation &v : set.getBody().front())
        objects.push_back({&v, cast<VertexOp>(v).getStateBytes(), Area::Any,
                           tilesOf(cast<VertexOp>(v).getTiles())});
    } else if (auto exchange = dyn_cast<ExchangeOp>(op)) {
      int64_t most = 0;
      std::vector<int64_t> sends = sendsPerTile(graph, exchange, index);
      for (int64_t n : sends)
        most = std::max(most, n);
      objects.push_back({exchange, exchange.getDescriptorBytes(most), Area::Any,
                         tilesWhere(sends)});
    }
  }

  // What each tile holds in each region: the objects placed there, as
  // indices into `objects`. Tiles that were given the same objects hold the
  // same intervals; `history` (a hash of the objects, in order) finds them,
  // so a search over an object's tiles reads each distinct tile once.
  int64_t base[2] = {target.getSramBase(), target.getInterleavedBegin()};
  int64_t end[2] = {target.getExecEnd(), target.getSramEnd()};
  std::vector<std::vector<size_t>> holds[2] = {
      std::vector<std::vector<size_t>>(target.getTiles()),
      std::vector<std::vector<size_t>>(target.getTiles())};
  std::vector<uint64_t> history[2] = {std::vector<uint64_t>(target.getTiles(), 0),
                                      std::vector<uint64_t>(target.getTiles(), 0)};
  auto meets = [](const Object &x, const Object &y) {
    return x.first <= y.last && y.first <= x.last;
  };
  // The lowest 16-aligned address where `o` fits on every one of `tiles`
  // beside what lives while it does (first fit), and the largest such gap
  // below the region's end; the address is past the end when none fits.
  struct Fit {
    int64_t at, largestGap;
  };
  // (Each object counted once however many of the tiles hold it: `stamp`
  // marks those counted by the current search.)
  std::vector<uint64_t> stamp(objects.size(), 0);
  uint64_t search = 0;
  auto firstFit = [&](const Object &o, ArrayRef<int64_t> tiles, int region) {
    llvm::DenseSet<uint64_t> seen;
    std::vector<std::pair<int64_t, int64_t>> busy; // [begin, end)
    ++search;
    for (int64_t t : tiles) {
      if (!seen.insert(history[region][size_t(t)]).second)
        continue;
      for (size_t k : holds[region][size_t(t)])
        if (stamp[k] != search && meets(objects[k], o)) {
          stamp[k] = search;
          busy.push_back({objects[k].address, objects[k].address + objects[k].bytes});
        }
    }
    llvm::sort(busy);
    Fit fit{-1, 0};
    int64_t at = align16(base[region]);
    auto gap = [&](int64_t until) {
      if (until - at > fit.largestGap)
        fit.largestGap = until - at;
      if (fit.at < 0 && at + o.bytes <= until)
        fit.at = at;
    };
    for (auto [from, to] : busy) {
      if (from > at)
        gap(std::min(from, end[region]));
      at = std::max(at, align16(to));
    }
    gap(end[region]);
    if (fit.at < 0)
      fit.at = end[region] + 1;
    return fit;
  };
  Builder b(graph.getContext());
  auto place = [&](Object &o, int region, int64_t at) {
    o.address = at;
    size_t id = size_t(&o - objects.data());
    for (int64_t t : o.tiles) {
      holds[region][size_t(t)].push_back(id);
      uint64_t &h = history[region][size_t(t)];
      h = llvm::hash_combine(h, id);
    }
    IntegerAttr attr = b.getI64IntegerAttr(o.address);
    if (auto tensor = dyn_cast<TensorOp>(o.op))
      tensor.setAddressAttr(attr);
    else if (auto buffer = dyn_cast<BufferOp>(o.op))
      buffer.setAddressAttr(attr);
    else if (auto codelet = dyn_cast<CodeletOp>(o.op))
      codelet.setAddressAttr(attr);
    else if (auto vertex = dyn_cast<VertexOp>(o.op))
      vertex.setStateAddressAttr(attr);
    else
      cast<ExchangeOp>(o.op).setDescriptorAddressAttr(attr);
  };
  auto name = [](Operation *op) -> std::string {
    if (auto sym = dyn_cast<SymbolOpInterface>(op))
      return "@" + sym.getName().str();
    auto vertex = cast<VertexOp>(op);
    return "the state of a @" + vertex.getCodelet().str() + " vertex";
  };
  auto lifetime = [](const Object &x) {
    return x.transient() ? "steps " + std::to_string(x.first) + " to " + std::to_string(x.last)
                         : std::string("throughout");
  };
  // Why `o` does not fit: the largest gap on all its tiles, the fullest of
  // them and what it holds there while `o` would live, and how full the
  // region is across the chip (its tiles, or all of them?).
  auto noRoom = [&](const Object &o, int region) -> LogicalResult {
    int64_t worst = o.tiles.empty() ? 0 : o.tiles.front(), worstGap = INT64_MAX;
    llvm::DenseMap<uint64_t, int64_t> gapOf; // per distinct tile history
    auto gapOn = [&](int64_t t) {
      auto [it, fresh] = gapOf.try_emplace(history[region][size_t(t)], 0);
      if (fresh)
        it->second = firstFit(o, ArrayRef<int64_t>(t), region).largestGap;
      return it->second;
    };
    for (int64_t t : o.tiles)
      if (int64_t g = gapOn(t); g < worstGap)
        std::tie(worst, worstGap) = std::make_pair(t, g);
    std::vector<size_t> there;
    int64_t held = 0;
    for (size_t k : holds[region][size_t(worst)])
      if (meets(objects[k], o)) {
        there.push_back(k);
        held += objects[k].bytes;
      }
    llvm::sort(there, [&](size_t a, size_t c) {
      return std::make_pair(-objects[a].bytes, a) < std::make_pair(-objects[c].bytes, c);
    });
    InFlightDiagnostic diag =
        mlir::emitError(graph.getLoc())
        << "[resource] IPU.1: placement: " << name(o.op) << " (" << o.bytes
        << " bytes) does not fit in the " << (region ? "interleaved" : "executable")
        << " region of its " << o.tiles.size() << " tiles: the largest gap free on all of them "
        << "while it lives (" << lifetime(o) << ") is " << firstFit(o, o.tiles, region).largestGap
        << " bytes";
    diag.attachNote() << "tile " << worst << " holds " << there.size() << " objects (" << held
                      << " bytes) there while it would live, the largest gap " << worstGap
                      << " bytes; the largest objects:";
    for (size_t k = 0; k < there.size() && k < 6; ++k)
      diag.attachNote() << name(objects[there[k]].op) << ": " << objects[there[k]].bytes
                        << " bytes (" << lifetime(objects[there[k]]) << ")";
    std::vector<int64_t> gaps;
    for (int64_t t = 0; t < target.getTiles(); ++t)
      gaps.push_back(gapOn(t));
    llvm::sort(gaps);
    diag.attachNote() << "across the chip's " << gaps.size() << " tiles the largest gap there "
                      << "while it would live is " << gaps[gaps.size() / 2]
                      << " bytes on the median tile, " << gaps.back() << " on the emptiest";
    return diag;
  };
  // Area by area (the executable region's demands first); in each, what
  // lives throughout, then the transient objects by their first step, each
  // at the lowest address free on all its tiles while it lives.
  llvm::stable_sort(objects, [](const Object &a, const Object &b) {
    return std::make_pair(a.transient(), a.first) < std::make_pair(b.transient(), b.first);
  });
  for (Area want : {Area::Exec, Area::Interleaved, Area::Any})
    for (Object &o : objects) {
      if (o.region != want)
        continue;
      int region = want == Area::Interleaved ? 1 : 0;
      int64_t at = firstFit(o, o.tiles, region).at;
      if (want == Area::Any && at + o.bytes > end[0]) {
        region = 1;
        at = firstFit(o, o.tiles, region).at;
      }
      if (at + o.bytes > end[region])
        return noRoom(o, region);
      place(o, region, at);
    }
  return success();
}
