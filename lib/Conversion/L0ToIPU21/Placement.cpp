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

  // Each tile's first free address in each region.
  std::vector<int64_t> next[2] = {
      std::vector<int64_t>(target.getTiles(), target.getSramBase()),
      std::vector<int64_t>(target.getTiles(), target.getInterleavedBegin())};
  int64_t end[2] = {target.getExecEnd(), target.getSramEnd()};
  // Above the objects that live throughout, each tile's transient buffers
  // placed so far: (end, last step). One that ended before a buffer's
  // first step leaves its memory to it; an object that lives throughout
  // goes above them all.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> live[2] = {
      std::vector<std::vector<std::pair<int64_t, int64_t>>>(target.getTiles()),
      std::vector<std::vector<std::pair<int64_t, int64_t>>>(target.getTiles())};
  auto lowest = [&](const Object &o, int region) {
    int64_t at = region ? target.getInterleavedBegin() : target.getSramBase();
    for (int64_t t : o.tiles) {
      at = std::max(at, next[region][t]);
      for (auto [liveEnd, liveLast] : live[region][t])
        if (liveLast >= o.first)
          at = std::max(at, liveEnd);
    }
    return align16(at);
  };
  // What each tile holds in each region (for the message when something
  // does not fit): the objects' indices into `objects`.
  std::vector<std::vector<size_t>> holds[2] = {
      std::vector<std::vector<size_t>>(target.getTiles()),
      std::vector<std::vector<size_t>>(target.getTiles())};
  Builder b(graph.getContext());
  auto place = [&](const Object &o, int region) {
    int64_t at = lowest(o, region);
    for (int64_t t : o.tiles) {
      holds[region][t].push_back(size_t(&o - objects.data()));
      if (!o.transient()) {
        next[region][t] = at + o.bytes;
        continue;
      }
      // (Kept after it ends: an object placed later that lives throughout
      // must still go above it.)
      live[region][t].push_back({at + o.bytes, o.last});
    }
    IntegerAttr attr = b.getI64IntegerAttr(at);
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
  auto fits = [&](const Object &o, int region) {
    return lowest(o, region) + o.bytes <= end[region];
  };
  auto name = [](Operation *op) -> std::string {
    if (auto sym = dyn_cast<SymbolOpInterface>(op))
      return "@" + sym.getName().str();
    auto vertex = cast<VertexOp>(op);
    return "the state of a @" + vertex.getCodelet().str() + " vertex";
  };
  // Area by area (the executable region's demands first); in each, what
  // lives throughout, then the transient buffers by their first step. (An
  // object that lives throughout goes above every transient buffer already
  // on its tiles: `lowest` counts them all for it.)
  llvm::stable_sort(objects, [](const Object &a, const Object &b) {
    return std::make_pair(a.transient(), a.first) < std::make_pair(b.transient(), b.first);
  });
  for (Area want : {Area::Exec, Area::Interleaved, Area::Any})
    for (const Object &o : objects) {
      if (o.region != want)
        continue;
      int region = want == Area::Interleaved ? 1 : 0;
      if (want == Area::Any && !fits(o, 0))
        region = 1;
      if (!fits(o, region)) {
        // The fullest of its tiles, and the largest objects there that
        // live while it would.
        int64_t worst = o.tiles.empty() ? 0 : o.tiles.front(), worstAt = -1;
        for (int64_t t : o.tiles) {
          Object one = o;
          one.tiles = {t};
          if (int64_t at = lowest(one, region); at > worstAt)
            std::tie(worst, worstAt) = std::make_pair(t, at);
        }
        std::vector<size_t> there;
        for (size_t k : holds[region][size_t(worst)])
          if (objects[k].last >= o.first && objects[k].first <= o.last)
            there.push_back(k);
        llvm::sort(there, [&](size_t a, size_t c) {
          return std::make_pair(-objects[a].bytes, a) < std::make_pair(-objects[c].bytes, c);
        });
        auto lifetime = [](const Object &x) {
          return x.transient() ? " (steps " + std::to_string(x.first) + " to " +
                                     std::to_string(x.last) + ")"
                               : std::string(" (throughout)");
        };
        InFlightDiagnostic diag = mlir::emitError(graph.getLoc())
               << "[resource] IPU.1: placement: " << name(o.op) << " (" << o.bytes
               << " bytes) does not fit in the "
               << (region ? "interleaved" : "executable") << " region of its tiles, "
               << std::max<int64_t>(0, end[region] - lowest(o, region)) << " bytes left";
        int64_t held = 0;
        for (size_t k : there)
          held += objects[k].bytes;
        diag.attachNote() << "tile " << worst << " holds " << there.size() << " objects ("
                          << held << " bytes) there while it would live" << lifetime(o)
                          << "; the largest:";
        // Is it this object's tiles or the whole chip that is full?
        std::vector<int64_t> left;
        for (int64_t t = 0; t < target.getTiles(); ++t) {
          Object one = o;
          one.tiles = {t};
          left.push_back(std::max<int64_t>(0, end[region] - lowest(one, region)));
        }
        llvm::sort(left);
        diag.attachNote() << "across the chip's " << left.size() << " tiles that region has "
                          << left[left.size() / 2] << " bytes free on the median tile, "
                          << left.back() << " on the emptiest";
        for (size_t k = 0; k < there.size() && k < 6; ++k)
          diag.attachNote() << name(objects[there[k]].op) << ": " << objects[there[k]].bytes
                            << " bytes" << lifetime(objects[there[k]]);
        return diag;
      }
      place(o, region);
    }
  return success();
}
