//===- IPU21Graph.cpp - The checks of a whole ipu21.graph -------------------===//
//
// What needs the graph's symbols and every tile's memory: vertices against
// their codelets and objects (IPU.3, IPU.6, IPU.9), exchanges (IPU.5), and
// the memory map of each tile (IPU.1, IPU.2), exchange races (IPU.10). The programs' discipline
// (IPU.8) is in IPU21Programs.cpp. Each check reports its first failure.
//
//===----------------------------------------------------------------------===//
#include "synpl/Dialect/IPU21/IPU21Codelets.h"
#include "synpl/Dialect/IPU21/IPU21Graph.h"
#include "synpl/Dialect/IPU21/IPU21Ops.h"
#include "synpl/Support/Property.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::ipu21;

//===----------------------------------------------------------------------===//
// Objects and their tiles
//===----------------------------------------------------------------------===//

namespace {
/// A tensor or a buffer: what fields and sends address.
struct ObjectRef {
  TensorOp tensor;
  BufferOp buffer;
  explicit operator bool() const { return tensor || buffer; }
  Operation *op() { return tensor ? tensor.getOperation() : buffer.getOperation(); }
  Type elemType() { return tensor ? tensor.getElementType() : buffer.getElemType(); }
  int64_t address() { return tensor ? tensor.getAddress() : buffer.getAddress(); }
  StringRef name() { return tensor ? tensor.getSymName() : buffer.getSymName(); }
};

ObjectRef lookupObject(GraphIndex &index, FlatSymbolRefAttr ref) {
  Operation *op = index.lookup(ref.getValue());
  return ObjectRef{dyn_cast_or_null<TensorOp>(op), dyn_cast_or_null<BufferOp>(op)};
}

bool tilesContain(ArrayRef<int64_t> outer, ArrayRef<int64_t> inner) {
  for (size_t i = 0; i + 1 < inner.size(); i += 2) {
    int64_t lo = inner[i], hi = inner[i + 1];
    bool inside = false;
    for (size_t j = 0; j + 1 < outer.size() && !inside; j += 2)
      inside = outer[j] <= lo && hi <= outer[j + 1];
    if (!inside)
      return false;
  }
  return true;
}

bool tilesContain(ArrayRef<int64_t> outer, int64_t tile) {
  for (size_t j = 0; j + 1 < outer.size(); j += 2)
    if (outer[j] <= tile && tile < outer[j + 1])
      return true;
  return false;
}

template <typename Fn> void forEachTile(ArrayRef<int64_t> ranges, Fn fn) {
  for (size_t i = 0; i + 1 < ranges.size(); i += 2)
    for (int64_t t = ranges[i]; t < ranges[i + 1]; ++t)
      fn(t);
}
} // namespace

GraphIndex::GraphIndex(GraphOp graph) : symbols(graph), tiles(graph.getTarget().getTiles()) {
  graph.walk([&](CopyOp copy) {
    auto exchange = lookup<ExchangeOp>(copy.getExchange());
    if (!exchange)
      return;
    auto repeat = copy->getParentOfType<RepeatOp>();
    int64_t count = repeat ? std::max<int64_t>(1, repeat.getCount()) : 1;
    int64_t &most = runs[exchange.getOperation()];
    most = std::max(most, count);
  });

  // Buffers' and scratch tensors' lifetimes: the top-level steps of @main
  // that use them.
  llvm::DenseSet<Operation *> elsewhere; // used by another program
  auto buffersOf = [&](Operation *step, llvm::function_ref<void(Operation *)> fn) {
    step->walk([&](Operation *op) {
      auto visit = [&](StringRef name) {
        if (auto buffer = lookup<BufferOp>(name))
          fn(buffer);
        else if (auto tensor = lookup<TensorOp>(name); tensor && tensor.getScratch())
          fn(tensor);
      };
      if (auto in = dyn_cast<StreamInOp>(op))
        visit(in.getTensor());
      else if (auto out = dyn_cast<StreamOutOp>(op))
        visit(out.getTensor());
      else if (auto cond = dyn_cast<IfOp>(op))
        visit(cond.getCond());
      if (auto execute = dyn_cast<ExecuteOp>(op)) {
        if (auto set = lookup<ComputeSetOp>(execute.getComputeSet()))
          for (Operation &v : set.getBody().front())
            for (Attribute ref : cast<VertexOp>(v).getFieldObjects())
              visit(cast<FlatSymbolRefAttr>(ref).getValue());
      } else if (auto copy = dyn_cast<CopyOp>(op)) {
        if (auto exchange = lookup<ExchangeOp>(copy.getExchange()))
          for (Operation &s : exchange.getBody().front()) {
            visit(cast<SendOp>(s).getSrc());
            visit(cast<SendOp>(s).getDst());
          }
      }
    });
  };
  for (auto program : graph.getBody().front().getOps<ProgramOp>()) {
    bool isMain = program.getSymName() == "main";
    int64_t step = 0;
    for (Operation &op : program.getBody().front()) {
      buffersOf(&op, [&](Operation *buffer) {
        if (!isMain) {
          elsewhere.insert(buffer);
          return;
        }
        auto [it, fresh] = lifetimes.try_emplace(buffer, step, step);
        if (!fresh)
          it->second.second = step;
      });
      ++step;
    }
  }
  for (Operation *buffer : elsewhere)
    lifetimes.erase(buffer);
}

TileElements::TileElements(TensorOp tensor, int64_t tiles) : count(tiles, 0) {
  for (const MappedInterval &iv : tensor.getMapping())
    if (iv.tile >= 0 && iv.tile < tiles)
      count[iv.tile] += iv.end - iv.begin;
}

void synpl::ipu21::forEachHomeTile(ArrayRef<MappedInterval> byBegin, int64_t begin, int64_t end,
                                   function_ref<void(int64_t tile, int64_t elements)> fn) {
  auto it = llvm::partition_point(byBegin, [&](const MappedInterval &iv) {
    return iv.end <= begin;
  });
  for (; it != byBegin.end() && it->begin < end; ++it)
    fn(it->tile, std::min(end, it->end) - std::max(begin, it->begin));
}

//===----------------------------------------------------------------------===//
// Vertices: IPU.9 (shape), IPU.3 (fields), IPU.6 (rpt)
//===----------------------------------------------------------------------===//

namespace {
/// What a vertex's field must bind: its name, element count and type, and
/// where it may lie.
struct FieldReq {
  std::string name;
  int64_t count = 0;
  Type type;           ///< the object's element type (a uop field: its buffer's)
  bool uopField = false; ///< match the type with fieldStorageMatches
  int64_t align = 0;   ///< bytes; 0: the element's size
  bool interleaved = false;
};
} // namespace

/// IPU.9 for a vertex of a fixed-kind codelet: the spec's fields in order,
/// its parameters, the counts they imply.
static LogicalResult fixedKindFields(CodeletOp codelet, VertexOp vertex,
                                     SmallVectorImpl<FieldReq> &fields) {
  const CodeletSpec &spec = codeletSpec(codelet.getKind());
  StringRef kind = stringifyCodeletKind(codelet.getKind());
  auto fieldNames = vertex.getFieldNames();
  bool namesMatch = fieldNames.size() == spec.fields.size();
  for (unsigned i = 0; namesMatch && i < spec.fields.size(); ++i)
    namesMatch = cast<StringAttr>(fieldNames[i]).getValue() == spec.fields[i].name;
  if (!namesMatch) {
    std::string want;
    for (const FieldSpec &f : spec.fields)
      want += (want.empty() ? "" : ", ") + f.name.str();
    return emitCheckError(vertex, Property::Consistency, "IPU.9")
           << "a " << kind << " vertex binds the fields (" << want << "), in that order";
  }
  DictionaryAttr params = vertex.getParams();
  for (StringRef name : spec.params) {
    Attribute value = params.get(name);
    bool ok = value && (isa<IntegerAttr>(value) ||
                        (name == "value" && isa<FloatAttr>(value)));
    if (!ok)
      return emitCheckError(vertex, Property::Consistency, "IPU.9")
             << "a " << kind << " vertex needs the integer parameter '" << name << "'";
    if (auto i = dyn_cast<IntegerAttr>(value); i && name != "value" && i.getInt() < 0)
      return emitCheckError(vertex, Property::Consistency, "IPU.9")
             << "parameter '" << name << "' is negative";
  }
  if (params.size() != spec.params.size())
    for (NamedAttribute named : params)
      if (!llvm::is_contained(spec.params, named.getName().getValue()))
        return emitCheckError(vertex, Property::Consistency, "IPU.9")
               << "a " << kind << " vertex has no parameter '" << named.getName().getValue()
               << "'";
  auto param = [&](StringRef name) { return vertex.getParam(name); };
  if (codelet.getKind() == CodeletKind::amp_matmul || codelet.getKind() == CodeletKind::reduce_add)
    if (auto acc = param("accumulate"); acc != 0 && acc != 1)
      return emitCheckError(vertex, Property::Consistency, "IPU.9")
             << "'accumulate' is 0 or 1, not " << acc;
  for (auto [i, field] : llvm::enumerate(spec.fields))
    fields.push_back({field.name.str(), expectedFieldElements(codelet.getKind(), i, param),
                      field.ofOutType ? codelet.getOutType() : codelet.getInType(), false,
                      field.align, field.interleaved});
  return success();
}

/// IPU.9 for a vertex of a uop codelet: a field per body argument, named as
/// the codelet names them; the parameters uopParamNames lists, each
/// parallel slice inside its RANGE and each window inside its buffer; a
/// field's count is its window's elements.
static LogicalResult uopFields(CodeletOp codelet, VertexOp vertex,
                               SmallVectorImpl<FieldReq> &fields) {
  auto error = [&] { return emitCheckError(vertex, Property::Consistency, "IPU.9"); };
  ArrayAttr want = *codelet.getFieldNames();
  if (vertex.getFieldNames() != want) {
    std::string list;
    for (Attribute name : want)
      list += (list.empty() ? "" : ", ") + cast<StringAttr>(name).getValue().str();
    return error() << "a vertex of @" << codelet.getSymName() << " binds the fields (" << list
                   << "), in that order";
  }
  SmallVector<std::string> names = uopParamNames(codelet);
  DictionaryAttr params = vertex.getParams();
  for (const std::string &name : names)
    if (!isa_and_nonnull<IntegerAttr>(params.get(name)))
      return error() << "a vertex of @" << codelet.getSymName()
                     << " needs the integer parameter '" << name << "'";
  if (params.size() != names.size())
    for (NamedAttribute named : params)
      if (!llvm::is_contained(names, named.getName().getValue().str()))
        return error() << "a vertex of @" << codelet.getSymName() << " has no parameter '"
                       << named.getName().getValue() << "'";
  for (auto [i, range] : llvm::enumerate(parallelRanges(codelet))) {
    int64_t lo = vertex.getParam("p" + std::to_string(i) + "_lo");
    int64_t hi = vertex.getParam("p" + std::to_string(i) + "_hi");
    if (lo < range.getLower() || lo > hi || hi > range.getUpper())
      return error() << "parallel RANGE " << i << " takes [" << lo << ", " << hi
                     << ") on this vertex, outside its [" << range.getLower() << ", "
                     << range.getUpper() << ")";
  }
  for (auto [name, arg] : llvm::zip(want, codelet.getUOpBody()->getArguments())) {
    StringRef field = cast<StringAttr>(name).getValue();
    auto buf = cast<l0uop::BufType>(arg.getType());
    int64_t count = 1;
    for (int64_t d = 0; d < buf.getRank(); ++d) {
      int64_t lo = vertex.getParam((field + "_lo" + Twine(d)).str());
      int64_t ext = vertex.getParam((field + "_ext" + Twine(d)).str());
      if (lo < 0 || ext < 1 || ext > buf.getShape()[d] - lo)
        return error() << "field '" << field << "' windows [" << lo << ", " << lo + ext
                       << ") of dimension " << d << ", outside its " << buf.getShape()[d]
                       << " (or empty)";
      count *= ext;
    }
    fields.push_back({field.str(), count, buf.getElementType(), true, 0, false});
  }
  return success();
}

static LogicalResult verifyVertex(GraphOp graph, VertexOp vertex, GraphIndex &index) {
  TargetAttr target = graph.getTarget();
  auto codelet = index.lookup<CodeletOp>(vertex.getCodelet());
  if (!codelet)
    return vertex.emitOpError() << "'" << vertex.getCodelet() << "' is not an ipu21.codelet";
  const CodeletSpec &spec = codeletSpec(codelet.getKind());
  StringRef kind = stringifyCodeletKind(codelet.getKind());
  bool generic = codelet.getKind() == CodeletKind::uop;

  // IPU.9: the codelet's fields in order, its parameters, the counts.
  SmallVector<FieldReq> fields;
  if (failed(generic ? uopFields(codelet, vertex, fields)
                     : fixedKindFields(codelet, vertex, fields)))
    return failure();
  auto param = [&](StringRef name) { return vertex.getParam(name); };

  int64_t elemSize = target.getElementBytes();
  struct Placed { int64_t begin, end; };
  SmallVector<Placed> placed;
  for (auto [i, field] : llvm::enumerate(fields)) {
    auto [lo, hi] = vertex.getFieldRange(i);
    int64_t want = field.count;
    if (hi - lo != want)
      return emitCheckError(vertex, Property::Consistency, "IPU.9")
             << "field '" << field.name << "' binds " << hi - lo << " elements; the parameters "
             << "make it " << want;
    ObjectRef object = lookupObject(index, vertex.getFieldObject(i));
    if (!object)
      return vertex.emitOpError() << "field '" << field.name << "': '"
                                  << vertex.getFieldObject(i).getValue()
                                  << "' is not an ipu21.tensor or ipu21.buffer";
    if (field.uopField ? !fieldStorageMatches(field.type, object.elemType())
                       : object.elemType() != field.type) {
      auto diag = emitCheckError(vertex, Property::Consistency, "IPU.9")
                  << "field '" << field.name << "' is " << field.type << " in ";
      if (generic)
        diag << "@" << codelet.getSymName();
      else
        diag << "a " << kind << "(" << codelet.getInType() << " -> " << codelet.getOutType()
             << ") codelet";
      return diag << ", but @" << object.name() << " holds " << object.elemType();
    }

    // IPU.3: inside the object on every tile the vertex runs on.
    if (object.buffer) {
      if (!tilesContain(object.buffer.getTiles(), vertex.getTiles()))
        return emitCheckError(vertex, Property::Safety, "IPU.3")
               << "field '" << field.name << "': the vertex runs on tiles where buffer @"
               << object.name() << " does not exist";
      if (hi > object.buffer.getElements())
        return emitCheckError(vertex, Property::Safety, "IPU.3")
               << "field '" << field.name << "' binds [" << lo << ", " << hi << ") of buffer @"
               << object.name() << ", which has " << object.buffer.getElements()
               << " elements per tile";
    } else {
      const TileElements &onTile = index.elementsOf(object.tensor);
      int64_t badTile = -1, end = hi;
      forEachTile(vertex.getTiles(), [&](int64_t t) {
        if (badTile < 0 && onTile.count[t] < end)
          badTile = t;
      });
      if (badTile >= 0)
        return emitCheckError(vertex, Property::Safety, "IPU.3")
               << "field '" << field.name << "' binds [" << lo << ", " << hi << ") of tensor @"
               << object.name() << ", but tile " << badTile << " holds "
               << index.elementsOf(object.tensor).count[badTile] << " of its elements";
    }
    int64_t bytes = *elementBytes(object.elemType());
    int64_t begin = object.address() + lo * bytes, end = object.address() + hi * bytes;
    int64_t align = field.align ? field.align : bytes;
    if (begin % align)
      return emitCheckError(vertex, Property::Safety, "IPU.3")
             << "field '" << field.name << "' starts at 0x" << llvm::utohexstr(begin)
             << ", not " << align << "-byte aligned as a " << kind << " needs";
    if (field.interleaved &&
        (begin < target.getInterleavedBegin() || end > target.getSramEnd()))
      return emitCheckError(vertex, Property::Safety, "IPU.3")
             << "field '" << field.name << "' ([0x" << llvm::utohexstr(begin) << ", 0x"
             << llvm::utohexstr(end) << ")) must lie in interleaved memory [0x"
             << llvm::utohexstr(target.getInterleavedBegin()) << ", 0x"
             << llvm::utohexstr(target.getSramEnd()) << ")";
    placed.push_back({begin, end});
  }
  for (auto [a, b] : spec.distinctElements) {
    int64_t aFirst = placed[a].begin / elemSize, aLast = (placed[a].end - 1) / elemSize;
    int64_t bFirst = placed[b].begin / elemSize, bLast = (placed[b].end - 1) / elemSize;
    if (aFirst <= bLast && bFirst <= aLast)
      return emitCheckError(vertex, Property::Safety, "IPU.3")
             << "elem(" << spec.fields[a].name << ") != elem(" << spec.fields[b].name
             << ") fails: both use memory element " << std::max(aFirst, bFirst) << " ("
             << elemSize << " bytes each)";
  }

  // IPU.6: the zero-overhead loop's trip count fits $REPEAT_COUNT. (A
  // generic codelet's loops are its RANGEs; they are not rpt loops.)
  if (generic) {
    index.noteVertex(codelet, vertex);
    return success();
  }
  int64_t lanes = std::max<int64_t>(1, 8 / *elementBytes(codelet.getOutType()));
  int64_t trips = rptTripCount(codelet.getKind(), param, lanes);
  if (trips > target.getRptCountMax())
    return emitCheckError(vertex, Property::Safety, "IPU.6")
           << "the " << kind << " loop runs " << trips << " times; rpt counts at most "
           << target.getRptCountMax() << " (a 16-bit register): split the vertex";

  index.noteVertex(codelet, vertex);
  return success();
}

//===----------------------------------------------------------------------===//
// Exchanges: IPU.5
//===----------------------------------------------------------------------===//

namespace {
/// A destination a send writes: elements [lo, hi) of a tensor, or of a
/// buffer on the tiles `tiles`.
struct Write {
  Operation *object;
  ArrayRef<int64_t> tiles; // empty for a tensor
  int64_t lo, hi;
  SendOp send;
};

bool rangesIntersect(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  for (size_t i = 0; i + 1 < a.size(); i += 2)
    for (size_t j = 0; j + 1 < b.size(); j += 2)
      if (a[i] < b[j + 1] && b[j] < a[i + 1])
        return true;
  return false;
}
} // namespace

static LogicalResult verifyEndpoint(SendOp send, ObjectRef object, StringRef end,
                                    int64_t lo, int64_t hi, bool hasTile) {
  StringRef sym = end == "source" ? send.getSrc() : send.getDst();
  if (!object)
    return emitCheckError(send, Property::Consistency, "IPU.5")
           << "the " << end << " '" << sym << "' is not an ipu21.tensor or ipu21.buffer";
  if (object.tensor) {
    if (hasTile)
      return emitCheckError(send, Property::Consistency, "IPU.5")
             << "the " << end << " is tensor @" << sym << ", whose elements' tiles are their "
             << "homes: name no tiles";
    if (hi > object.tensor.getNumElements())
      return emitCheckError(send, Property::Consistency, "IPU.5")
             << (end == "source" && (send.getRows() || send.getAdvance())
                   ? "the source reaches element " + std::to_string(hi - 1) +
                         " (its last row in its last run)"
                   : "the " + end.str() + " [" + std::to_string(lo) + ", " +
                         std::to_string(hi) + ") lies")
             << " outside tensor @" << sym << "'s " << object.tensor.getNumElements()
             << " elements";
    return success();
  }
  if (!hasTile)
    return emitCheckError(send, Property::Consistency, "IPU.5")
           << "the " << end << " is buffer @" << sym << ": name its tile"
           << (end == "source" ? " (`from tile`)" : "s (`on tiles`)");
  if (hi > object.buffer.getElements())
    return emitCheckError(send, Property::Consistency, "IPU.5")
           << "the " << end << " [" << lo << ", " << hi << ") lies outside buffer @" << sym
           << "'s " << object.buffer.getElements() << " elements per tile";
  bool inside = end == "source"
                    ? tilesContain(object.buffer.getTiles(), *send.getSrcTile())
                    : tilesContain(object.buffer.getTiles(), *send.getDstTiles());
  if (!inside)
    return emitCheckError(send, Property::Consistency, "IPU.5")
           << "the " << end << " names tiles where buffer @" << sym << " does not exist";
  return success();
}

std::vector<int64_t> synpl::ipu21::sendsPerTile(GraphOp graph, ExchangeOp exchange,
                                                GraphIndex &index) {
  int64_t tiles = graph.getTarget().getTiles();
  std::vector<int64_t> sends(tiles, 0), lastSend(tiles, -1);
  int64_t id = 0;
  for (Operation &op : exchange.getBody().front()) {
    auto send = cast<SendOp>(op);
    auto touch = [&](int64_t t) {
      if (t >= 0 && t < tiles && lastSend[t] != id) {
        lastSend[t] = id;
        ++sends[t];
      }
    };
    // The tiles any run's rows come from: each row of each run, exactly,
    // unless that is more than kExactRows rows (then every tile between the
    // first row's start and the last run's last row's end, a superset).
    if (auto tensor = index.lookup<TensorOp>(send.getSrc())) {
      constexpr int64_t kExactRows = int64_t(1) << 16;
      int64_t runs = send.getAdvance() ? index.runsOf(exchange) : 1;
      int64_t rows = send.getNumRows(), stride = send.getRowStride().value_or(0);
      int64_t advance = send.getAdvance().value_or(0), length = send.getRowLength();
      if (runs > kExactRows / std::max<int64_t>(rows, 1))
        forEachHomeTile(index.byBegin(tensor), send.getSrcBegin(),
                        send.getSrcLast(index.runsOf(exchange) - 1),
                        [&](int64_t t, int64_t) { touch(t); });
      else
        for (int64_t run = 0; run < runs; ++run)
          for (int64_t r = 0; r < rows; ++r) {
            int64_t begin = send.getSrcBegin() + run * advance + r * stride;
            forEachHomeTile(index.byBegin(tensor), begin, begin + length,
                            [&](int64_t t, int64_t) { touch(t); });
          }
    } else if (send.getSrcTile())
      touch(*send.getSrcTile());
    if (auto tensor = index.lookup<TensorOp>(send.getDst()))
      forEachHomeTile(index.byBegin(tensor), send.getDstBegin(), send.getDstEnd(),
                      [&](int64_t t, int64_t) { touch(t); });
    else if (send.getDstTiles())
      forEachTile(*send.getDstTiles(), touch);
    ++id;
  }
  return sends;
}

static LogicalResult verifyExchange(GraphOp graph, ExchangeOp exchange, GraphIndex &index) {
  SmallVector<Write> writes;
  for (Operation &op : exchange.getBody().front()) {
    auto send = cast<SendOp>(op);
    ObjectRef src = lookupObject(index, send.getSrcAttr());
    ObjectRef dst = lookupObject(index, send.getDstAttr());
    if (failed(verifyEndpoint(send, src, "source", send.getSrcBegin(),
                              send.getSrcLast(index.runsOf(exchange) - 1),
                              send.getSrcTile().has_value())) ||
        failed(verifyEndpoint(send, dst, "destination", send.getDstBegin(), send.getDstEnd(),
                              send.getDstTiles().has_value())))
      return failure();
    if (src.elemType() != dst.elemType())
      return emitCheckError(send, Property::Consistency, "IPU.5")
             << "sends " << src.elemType() << " elements of @" << src.name() << " into @"
             << dst.name() << ", which holds " << dst.elemType();
    writes.push_back({dst.op(), dst.tensor ? ArrayRef<int64_t>() : *send.getDstTiles(),
                      send.getDstBegin(), send.getDstEnd(), send});
  }
  // No two sends write the same element of the same tile.
  llvm::sort(writes, [](const Write &a, const Write &b) {
    return a.object < b.object || (a.object == b.object && a.lo < b.lo);
  });
  for (size_t i = 0; i < writes.size(); ++i)
    for (size_t j = i + 1; j < writes.size() && writes[j].object == writes[i].object &&
                           writes[j].lo < writes[i].hi;
         ++j)
      if (writes[i].tiles.empty() || rangesIntersect(writes[i].tiles, writes[j].tiles)) {
        int64_t first = std::max(writes[i].lo, writes[j].lo);
        auto diag = emitCheckError(writes[j].send, Property::Safety, "IPU.10")
                    << "writes element " << first << " of @"
                    << cast<SymbolOpInterface>(writes[j].object).getName()
                    << " that another send of the exchange also writes";
        diag.attachNote(writes[i].send.getLoc()) << "the other send";
        return diag;
      }
  return success();
}

//===----------------------------------------------------------------------===//
// Memory: IPU.1, IPU.2
//===----------------------------------------------------------------------===//

namespace {
struct Placement {
  int64_t begin, end;
  Operation *op;
  const char *what; // "tensor", "buffer", "code of", "vertex state of", "descriptors of"
  /// When it holds data (GraphIndex::lifetimeOf): only buffers' and
  /// scratch tensors' are not the whole program.
  int64_t first = 0, last = INT64_MAX;
  bool liveWith(const Placement &o) const { return first <= o.last && o.first <= last; }
};

std::string describe(const Placement &p) {
  std::string name;
  if (auto vertex = dyn_cast<VertexOp>(p.op))
    name = "a @" + vertex.getCodelet().str() + " vertex in @" +
           vertex->getParentOfType<ComputeSetOp>().getSymName().str();
  else
    name = "@" + cast<SymbolOpInterface>(p.op).getName().str();
  return std::string(p.what) + " " + name;
}
} // namespace

static LogicalResult verifyMemory(GraphOp graph, GraphIndex &index,
                                  ArrayRef<std::pair<ExchangeOp, int64_t>> descriptorBytes,
                                  ArrayRef<std::vector<bool>> exchangeTiles) {
  TargetAttr target = graph.getTarget();
  int64_t tiles = target.getTiles();
  std::vector<SmallVector<Placement, 8>> perTile(tiles);
  Block &body = graph.getBody().front();
  for (Operation &op : body) {
    if (auto tensor = dyn_cast<TensorOp>(op)) {
      int64_t bytes = *elementBytes(tensor.getElementType());
      const TileElements &on = index.elementsOf(tensor);
      std::pair<int64_t, int64_t> life = index.lifetimeOf(tensor);
      for (int64_t t = 0; t < tiles; ++t)
        if (on.count[t])
          perTile[t].push_back({tensor.getAddress(), tensor.getAddress() + on.count[t] * bytes,
                                tensor, "tensor", life.first, life.second});
    } else if (auto buffer = dyn_cast<BufferOp>(op)) {
      int64_t end = buffer.getAddress() + buffer.getElements() * *elementBytes(buffer.getElemType());
      std::pair<int64_t, int64_t> life = index.lifetimeOf(buffer);
      forEachTile(buffer.getTiles(), [&](int64_t t) {
        perTile[t].push_back({buffer.getAddress(), end, buffer, "buffer", life.first, life.second});
      });
    } else if (auto codelet = dyn_cast<CodeletOp>(op)) {
      if (const std::vector<bool> *on = index.codeTilesOf(codelet))
        for (int64_t t = 0; t < tiles; ++t)
          if ((*on)[t])
            perTile[t].push_back({codelet.getAddress(),
                                  codelet.getAddress() + codelet.getCodeBytes(), codelet,
                                  "code of"});
    } else if (auto set = dyn_cast<ComputeSetOp>(op)) {
      for (Operation &v : set.getBody().front()) {
        auto vertex = cast<VertexOp>(v);
        int64_t at = vertex.getStateAddress(), end = at + vertex.getStateBytes();
        forEachTile(vertex.getTiles(), [&](int64_t t) {
          perTile[t].push_back({at, end, vertex, "the state of"});
        });
      }
    }
  }
  for (auto [i, entry] : llvm::enumerate(descriptorBytes)) {
    ExchangeOp exchange = entry.first;
    int64_t at = exchange.getDescriptorAddress(), end = at + entry.second;
    for (int64_t t = 0; t < tiles; ++t)
      if (exchangeTiles[i][t])
        perTile[t].push_back({at, end, exchange, "descriptors of"});
  }

  // IPU.1: what each tile holds fits its SRAM, and lies inside it (the
  // bytes its objects' address ranges cover: buffers that are never live
  // together may share them).
  for (int64_t t = 0; t < tiles; ++t) {
    SmallVector<std::pair<int64_t, int64_t>, 8> spans;
    for (const Placement &p : perTile[t])
      spans.push_back({p.begin, p.end});
    llvm::sort(spans);
    int64_t total = 0, reach = INT64_MIN;
    for (auto [b, e] : spans) {
      b = std::max(b, reach);
      if (e > b)
        total += e - b;
      reach = std::max(reach, e);
    }
    if (total > target.getBytesPerTile()) {
      SmallVector<Placement, 8> largest(perTile[t].begin(), perTile[t].end());
      llvm::stable_sort(largest, [](const Placement &a, const Placement &b) {
        return a.end - a.begin > b.end - b.begin;
      });
      auto diag = emitCheckError(graph, Property::Resource, "IPU.1")
                  << "tile " << t << " holds " << total << " bytes (code, vertex state, "
                  << "descriptors, tensors and buffers); a tile has " << target.getBytesPerTile();
      for (const Placement &p : ArrayRef(largest).take_front(3))
        diag.attachNote(p.op->getLoc()) << describe(p) << ": " << p.end - p.begin << " bytes";
      return diag;
    }
  }
  for (int64_t t = 0; t < tiles; ++t)
    for (const Placement &p : perTile[t])
      if (p.begin < target.getSramBase() || p.end > target.getSramEnd())
        return emitCheckError(p.op, Property::Resource, "IPU.1")
               << describe(p) << " on tile " << t << " spans [0x" << llvm::utohexstr(p.begin)
               << ", 0x" << llvm::utohexstr(p.end) << "), outside the tile's SRAM [0x"
               << llvm::utohexstr(target.getSramBase()) << ", 0x"
               << llvm::utohexstr(target.getSramEnd()) << ")";

  // IPU.2: code only in the executable region; nothing overlaps.
  for (int64_t t = 0; t < tiles; ++t) {
    for (const Placement &p : perTile[t])
      if (isa<CodeletOp>(p.op) && p.end > target.getExecEnd())
        return emitCheckError(p.op, Property::Safety, "IPU.2")
               << "code of @" << cast<CodeletOp>(p.op).getSymName() << " ends at 0x"
               << llvm::utohexstr(p.end) << ", past the executable region's end 0x"
               << llvm::utohexstr(target.getExecEnd());
    SmallVector<Placement, 8> sorted(perTile[t].begin(), perTile[t].end());
    llvm::stable_sort(sorted, [](const Placement &a, const Placement &b) {
      return a.begin < b.begin;
    });
    // Each object against the earlier ones that reach past its start (kept
    // in `active`) and are live with it: buffers of different steps may
    // share memory.
    SmallVector<const Placement *, 8> active;
    for (const Placement &p : sorted) {
      llvm::erase_if(active, [&](const Placement *a) { return a->end <= p.begin; });
      for (const Placement *a : active) {
        if (!a->liveWith(p))
          continue;
        auto diag = emitCheckError(p.op, Property::Safety, "IPU.2")
                    << describe(p) << " at 0x" << llvm::utohexstr(p.begin) << " overlaps "
                    << describe(*a) << " ([0x" << llvm::utohexstr(a->begin) << ", 0x"
                    << llvm::utohexstr(a->end) << ")) on tile " << t;
        diag.attachNote(a->op->getLoc()) << describe(*a);
        return diag;
      }
      active.push_back(&p);
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ipu21.graph
//===----------------------------------------------------------------------===//

/// Only ipu21 ops in the graph, its compute sets, exchanges and programs:
/// nothing else would be lowered.
static LogicalResult verifyContents(GraphOp graph) {
  for (Operation &op : graph.getBody().front()) {
    if (!isa<TensorOp, BufferOp, CodeletOp, ComputeSetOp, ExchangeOp, ProgramOp>(op))
      return op.emitOpError() << "cannot be in an ipu21.graph (tensors, buffers, codelets, "
                                 "compute sets, exchanges and programs only)";
    StringRef holds;
    Operation *bad = nullptr;
    if (auto set = dyn_cast<ComputeSetOp>(op)) {
      holds = "ipu21.vertex ops";
      for (Operation &inner : set.getBody().front())
        if (!bad && !isa<VertexOp>(inner))
          bad = &inner;
    } else if (auto exchange = dyn_cast<ExchangeOp>(op)) {
      holds = "ipu21.send ops";
      for (Operation &inner : exchange.getBody().front())
        if (!bad && !isa<SendOp>(inner))
          bad = &inner;
    } else if (auto program = dyn_cast<ProgramOp>(op)) {
      holds = "program steps";
      program.walk([&](Operation *inner) {
        if (!bad && inner != program &&
            !isa<SequenceOp, RepeatOp, ExecuteOp, CopyOp, SyncOp, IfOp, StreamInOp,
                 StreamOutOp>(inner))
          bad = inner;
      });
    }
    if (bad)
      return bad->emitOpError() << "cannot be in an '" << op.getName() << "' (it holds "
                                << holds << ")";
  }
  return success();
}

LogicalResult GraphOp::verifyRegions() {
  if (failed(verifyContents(*this)))
    return failure();
  GraphIndex index(*this);
  Block &body = getBody().front();
  for (Operation &op : body)
    if (auto set = dyn_cast<ComputeSetOp>(op))
      for (Operation &v : set.getBody().front())
        if (failed(verifyVertex(*this, cast<VertexOp>(v), index)))
          return failure();
  SmallVector<std::pair<ExchangeOp, int64_t>> descriptorBytes;
  SmallVector<std::vector<bool>> exchangeTiles;
  for (Operation &op : body)
    if (auto exchange = dyn_cast<ExchangeOp>(op)) {
      if (failed(verifyExchange(*this, exchange, index)))
        return failure();
      std::vector<int64_t> sends = sendsPerTile(*this, exchange, index);
      int64_t maxSends = sends.empty() ? 0 : *llvm::max_element(sends);
      descriptorBytes.push_back({exchange, exchange.getDescriptorBytes(maxSends)});
      std::vector<bool> onTile(sends.size());
      for (size_t t = 0; t < sends.size(); ++t)
        onTile[t] = sends[t] > 0;
      exchangeTiles.push_back(std::move(onTile));
    }
  if (failed(verifyPrograms(*this, index)))
    return failure();
  return verifyMemory(*this, index, descriptorBytes, exchangeTiles);
}
