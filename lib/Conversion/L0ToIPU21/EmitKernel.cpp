//===- EmitKernel.cpp - A planned generic kernel as ipu21 ops -------------===//
//
// Tile t of the plan runs slice t of the kernel's parallel RANGEs: one
// vertex of the kernel's codelet, which the tile's workers run together,
// each over its part of the slice (a MultiVertex: the parts write apart, as
// the kernel's parallel iterations do). A window reaches its tile as one send per run of the
// home's row-major order (a block of rows when a dimension before the run's
// repeats): tiles that need the same window get it from one send.
//
//===----------------------------------------------------------------------===//
#include "Emit.h"

#include "synpl/Target/IPU21/CostModel.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

#include <map>

using namespace mlir;
using namespace synpl;
using namespace synpl::ipu21;
using namespace synpl::l0toipu21;

namespace {
FlatSymbolRefAttr ref(OpBuilder &b, Operation *op) {
  return FlatSymbolRefAttr::get(b.getContext(), cast<SymbolOpInterface>(op).getName());
}

/// Where each tile's elements of a tensor sit: its intervals in tile-local
/// order.
struct HomeIndex {
  explicit HomeIndex(TensorOp tensor) {
    for (const MappedInterval &iv : tensor.getMapping())
      byTile[iv.tile].push_back(iv);
    for (auto &entry : byTile)
      llvm::sort(entry.second,
                 [](const MappedInterval &a, const MappedInterval &b) { return a.begin < b.begin; });
  }
  /// The tile-local offset of `runs` (flat [begin, end) ranges in order) on
  /// `tile` when they sit there one after another: each inside one of the
  /// tile's intervals, each starting where the one before ended.
  std::optional<int64_t> offsetOn(int64_t tile, ArrayRef<std::pair<int64_t, int64_t>> runs) const {
    auto it = byTile.find(tile);
    if (it == byTile.end() || runs.empty())
      return std::nullopt;
    std::optional<int64_t> first, next;
    for (auto [begin, end] : runs) {
      int64_t local = 0;
      std::optional<int64_t> at;
      for (const MappedInterval &iv : it->second) {
        if (iv.begin <= begin && end <= iv.end) {
          at = local + (begin - iv.begin);
          break;
        }
        local += iv.end - iv.begin;
      }
      if (!at || (next && *at != *next))
        return std::nullopt;
      if (!first)
        first = at;
      next = *at + (end - begin);
    }
    return first;
  }
  std::map<int64_t, SmallVector<MappedInterval>> byTile;
};

/// A window's runs in a row-major buffer of `shape`: blocks of `rows` runs
/// of `length` elements, `stride` apart, the first at `begin`.
struct RunBlock {
  int64_t begin, rows, length, stride;
};

SmallVector<RunBlock> runBlocks(const Window &w, ArrayRef<int64_t> shape) {
  size_t rank = shape.size();
  SmallVector<int64_t, 4> strides(rank, 1);
  for (size_t d = rank; d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  // q: the last dimension the window does not span whole.
  int q = -1;
  for (size_t d = 0; d < rank; ++d)
    if (w.ext[d] != shape[d])
      q = static_cast<int>(d);
  SmallVector<RunBlock> out;
  if (q < 0) {
    out.push_back({0, 1, w.elements(), w.elements()});
    return out;
  }
  int64_t length = w.ext[q] * strides[q];
  int rowDim = q - 1; // its indices are the block's rows
  int64_t rows = rowDim >= 0 ? w.ext[rowDim] : 1;
  int64_t stride = rowDim >= 0 ? strides[rowDim] : length;
  // Odometer over the dimensions before rowDim.
  SmallVector<int64_t, 4> at(std::max(rowDim, 0), 0);
  while (true) {
    int64_t begin = 0;
    for (size_t d = 0; d < rank; ++d) {
      int64_t i = w.lo[d] + (static_cast<int>(d) < rowDim ? at[d] : 0);
      begin += i * strides[d];
    }
    out.push_back({begin, rows, length, stride});
    int d = rowDim - 1;
    for (; d >= 0; --d) {
      if (++at[d] < w.ext[d])
        break;
      at[d] = 0;
    }
    if (d < 0)
      return out;
  }
}

/// A window's runs in row-major order, as flat [begin, end) ranges.
SmallVector<std::pair<int64_t, int64_t>> runsOf(const Window &w, ArrayRef<int64_t> shape) {
  SmallVector<std::pair<int64_t, int64_t>> runs;
  for (const RunBlock &r : runBlocks(w, shape))
    for (int64_t row = 0; row < r.rows; ++row)
      runs.push_back({r.begin + row * r.stride, r.begin + row * r.stride + r.length});
  return runs;
}

std::string fieldNameOf(StringRef slot, llvm::StringSet<> &taken) {
  StringRef last = slot.rsplit('.').second.empty() ? slot : slot.rsplit('.').second;
  std::string name;
  for (char c : last)
    name += llvm::isAlnum(c) ? c : '_';
  if (name.empty() || llvm::isDigit(name.front()))
    name = "f_" + name;
  std::string unique = name;
  for (int i = 1; !taken.insert(unique).second; ++i)
    unique = name + "_" + std::to_string(i);
  return unique;
}
} // namespace

CodeletOp synpl::l0toipu21::newUOpCodelet(OpBuilder &b, Location loc, StringRef name,
                                          ArrayRef<Attribute> fieldNames, unsigned numInputs) {
  MLIRContext *ctx = b.getContext();
  return CodeletOp::create(b, loc, b.getStringAttr(name),
                           CodeletKindAttr::get(ctx, CodeletKind::uop),
                           TypeAttr::get(b.getNoneType()), TypeAttr::get(b.getNoneType()),
                           b.getArrayAttr(fieldNames), b.getI64IntegerAttr(numInputs),
                           b.getI64IntegerAttr(64), b.getI64IntegerAttr(0));
}

void synpl::l0toipu21::finishUOpCodelet(CodeletOp codelet) {
  // A reservation, not an encoding (the simulator runs the UOps): 8 bytes
  // per UOp and an entry.
  int64_t ops = static_cast<int64_t>(codelet.getUOpBody()->getOperations().size());
  codelet.setCodeBytes((64 + 8 * ops + 15) / 16 * 16);
}

CodeletOp synpl::l0toipu21::emitUOpCodelet(OpBuilder &b, l0uop::KernelOp kernel, StringRef name) {
  llvm::StringSet<> taken;
  SmallVector<Attribute> names;
  for (BlockArgument arg : kernel.getBody().front().getArguments())
    names.push_back(b.getStringAttr(fieldNameOf(kernel.getSlotOf(arg).getValue(), taken)));
  CodeletOp codelet = newUOpCodelet(b, kernel.getLoc(), (name + ".codelet").str(), names,
                                    kernel.getNumInputs());
  IRMapping map;
  kernel.getBody().cloneInto(&codelet.getBody(), map);
  finishUOpCodelet(codelet);
  return codelet;
}

std::optional<SmallVector<int64_t>>
synpl::l0toipu21::homeFromWindows(const KernelModel &model, const KernelPlan &plan, unsigned arg,
                                  int64_t firstTile) {
  ArrayRef<int64_t> shape = model.shapeOf(arg);
  int64_t total = 1;
  for (int64_t e : shape)
    total *= e;
  // (begin, end, tile) of every run of every tile's window: they must not
  // overlap.
  SmallVector<std::tuple<int64_t, int64_t, int64_t>> runs;
  for (int64_t t = 0, n = plan.tiles(); t < n; ++t) {
    Window w = model.window(arg, sliceOf(model, plan, t));
    if (w.empty())
      continue;
    for (auto [begin, end] : runsOf(w, shape))
      runs.push_back({begin, end, firstTile + t});
  }
  llvm::sort(runs);
  SmallVector<int64_t> flat; // tile, begin, end triples
  int64_t covered = 0, spare = 0;
  auto gap = [&](int64_t begin, int64_t end) {
    // Elements no window holds: on the plan's tiles in turn.
    if (begin < end) {
      flat.append({firstTile + spare % std::max<int64_t>(plan.tiles(), 1), begin, end});
      ++spare;
    }
  };
  for (auto [begin, end, tile] : runs) {
    if (begin < covered)
      return std::nullopt; // two windows overlap
    gap(covered, begin);
    // A run that continues the tile's previous one extends it.
    if (!flat.empty() && flat[flat.size() - 3] == tile && flat.back() == begin)
      flat.back() = end;
    else
      flat.append({tile, begin, end});
    covered = end;
  }
  gap(covered, total);
  return flat;
}

LogicalResult synpl::l0toipu21::emitKernel(OpBuilder &b, Location loc, const KernelEmission &k,
                                           OpBuilder &steps) {
  const KernelModel &m = *k.model;
  CodeletOp codelet = k.codelet;
  SmallVector<TensorOp> homes(k.homes.begin(), k.homes.end());
  unsigned numArgs = m.numArgs(), numInputs = m.numInputs;
  int64_t tiles = k.plan.tiles();
  ArrayAttr fieldNames = *codelet.getFieldNames();

  // Each tile's slice and windows.
  SmallVector<Slice> slices;
  SmallVector<SmallVector<Window>> windows(tiles);
  for (int64_t t = 0; t < tiles; ++t) {
    slices.push_back(sliceOf(m, k.plan, t));
    for (unsigned a = 0; a < numArgs; ++a)
      windows[t].push_back(m.window(a, slices[t]));
  }
  // Outputs: tiles write apart (every pair: the planner's filter checks
  // neighbouring pieces only).
  for (unsigned a = numInputs; a < numArgs; ++a)
    for (int64_t t = 1; t < tiles; ++t)
      for (int64_t u = 0; u < t; ++u)
        if (windows[u][a].intersects(windows[t][a]))
          return mlir::emitError(loc)
                 << "tiles " << k.firstTile + u << " and " << k.firstTile + t
                 << " would write overlapping windows of @"
                 << homes[a].getSymName() << "; the ipu21 sink writes each element from one "
                 << "tile";

  // Bindings: in place, or a buffer of the kernel's.
  struct Binding {
    Operation *object = nullptr;
    int64_t offset = 0, count = 0;
    bool buffered = false;
  };
  SmallVector<SmallVector<Binding>> bind(tiles, SmallVector<Binding>(numArgs));
  // Buffers the body never indexes: a field binds them, nothing moves.
  SmallVector<bool> unused(numArgs, true);
  for (int64_t t = 0; t < tiles; ++t)
    for (unsigned a = 0; a < numArgs; ++a)
      if (!windows[t][a].empty())
        unused[a] = false;
  SmallVector<BufferOp> buffers(numArgs);
  for (unsigned a = 0; a < numArgs; ++a) {
    auto shape = m.shapeOf(a);
    Type elem = homes[a].getElementType();
    HomeIndex home(homes[a]);
    SmallVector<int64_t> bufferedTiles;
    int64_t most = 1;
    for (int64_t t = 0; t < tiles; ++t) {
      Window &w = windows[t][a];
      if (w.empty()) {
        // Never indexed: a one-element window of a buffer keeps the field.
        w.lo.assign(shape.size(), 0);
        w.ext.assign(shape.size(), 1);
      }
      Binding &bd = bind[t][a];
      bd.count = w.elements();
      if (auto off = home.offsetOn(k.firstTile + t, runsOf(w, shape))) {
        bd.object = homes[a];
        bd.offset = *off;
        continue;
      }
      bd.buffered = true;
      bufferedTiles.push_back(k.firstTile + t);
      most = std::max(most, bd.count);
    }
    if (bufferedTiles.empty())
      continue;
    std::string name = (k.name + "." + cast<StringAttr>(fieldNames[a]).getValue()).str();
    buffers[a] = BufferOp::create(b, loc, b.getStringAttr(name), b.getI64IntegerAttr(most),
                                  TypeAttr::get(elem),
                                  b.getDenseI64ArrayAttr(tileRanges(bufferedTiles)),
                                  b.getI64IntegerAttr(0));
    for (int64_t t : bufferedTiles) // the chip's tiles: the plan's are t - firstTile
      bind[t - k.firstTile][a].object = buffers[a];
  }

  // Windows in: inputs, and outputs the kernel reads or may not write
  // whole. Tiles with the same window of an argument share its sends.
  auto exchangeOf = [&](StringRef suffix) {
    auto x = ExchangeOp::create(b, loc, b.getStringAttr(k.name + suffix.str()),
                                b.getI64IntegerAttr(0));
    return x;
  };
  ExchangeOp in, out;
  for (unsigned a = 0; a < numArgs; ++a) {
    if (!buffers[a] || unused[a])
      continue;
    bool output = a >= numInputs;
    if (output && !m.reads(a) && m.storesCoverWindow(a))
      continue;
    auto shape = m.shapeOf(a);
    std::map<std::pair<SmallVector<int64_t, 4>, SmallVector<int64_t, 4>>, SmallVector<int64_t>>
        byWindow;
    for (int64_t t = 0; t < tiles; ++t)
      if (bind[t][a].buffered)
        byWindow[{windows[t][a].lo, windows[t][a].ext}].push_back(k.firstTile + t);
    for (auto &[key, on] : byWindow) {
      Window w{key.first, key.second};
      if (!in) {
        OpBuilder::InsertionGuard g(b);
        in = exchangeOf(".in");
        b.setInsertionPointToStart(&in.getBody().emplaceBlock());
      }
      OpBuilder at = OpBuilder::atBlockEnd(&in.getBody().front());
      int64_t dst = 0;
      for (const RunBlock &r : runBlocks(w, shape)) {
        SendOp::create(at, loc, ref(at, homes[a]), at.getI64IntegerAttr(r.begin),
                       at.getI64IntegerAttr(r.begin + r.length), IntegerAttr(),
                       r.rows > 1 ? at.getI64IntegerAttr(r.rows) : IntegerAttr(),
                       r.rows > 1 ? at.getI64IntegerAttr(r.stride) : IntegerAttr(), IntegerAttr(),
                       ref(at, buffers[a]), at.getI64IntegerAttr(dst),
                       at.getI64IntegerAttr(dst + r.rows * r.length),
                       at.getDenseI64ArrayAttr(tileRanges(on)));
        dst += r.rows * r.length;
      }
    }
  }
  // Windows out: each tile's buffered output window, run by run.
  for (unsigned a = numInputs; a < numArgs; ++a) {
    if (!buffers[a] || unused[a])
      continue;
    auto shape = m.shapeOf(a);
    for (int64_t t = 0; t < tiles; ++t) {
      if (!bind[t][a].buffered || m.window(a, slices[t]).empty())
        continue;
      if (!out) {
        out = exchangeOf(".out");
        out.getBody().emplaceBlock();
      }
      OpBuilder at = OpBuilder::atBlockEnd(&out.getBody().front());
      int64_t src = 0;
      for (const RunBlock &r : runBlocks(windows[t][a], shape))
        for (int64_t row = 0; row < r.rows; ++row, src += r.length) {
          int64_t begin = r.begin + row * r.stride;
          SendOp::create(at, loc, ref(at, buffers[a]), at.getI64IntegerAttr(src),
                         at.getI64IntegerAttr(src + r.length),
                         at.getI64IntegerAttr(k.firstTile + t),
                         IntegerAttr(), IntegerAttr(), IntegerAttr(), ref(at, homes[a]),
                         at.getI64IntegerAttr(begin), at.getI64IntegerAttr(begin + r.length),
                         DenseI64ArrayAttr());
        }
    }
  }

  // The vertices: per tile, one per worker's part of its slice.
  auto set = ComputeSetOp::create(b, loc, b.getStringAttr(k.name));
  OpBuilder vb = OpBuilder::atBlockBegin(&set.getBody().emplaceBlock());
  SmallVector<int64_t> ranges;
  for (int64_t t = 0; t < tiles; ++t) {
    if (slices[t].iterations() == 0)
      continue;
    SmallVector<Attribute> objects;
    SmallVector<int64_t> fieldRanges;
    SmallVector<NamedAttribute> windowParams;
    for (unsigned a = 0; a < numArgs; ++a) {
      const Binding &bd = bind[t][a];
      objects.push_back(ref(vb, bd.object));
      fieldRanges.append({bd.offset, bd.offset + bd.count});
      StringRef field = cast<StringAttr>(fieldNames[a]).getValue();
      for (size_t d = 0; d < windows[t][a].lo.size(); ++d) {
        windowParams.push_back(vb.getNamedAttr((field + "_lo" + Twine(d)).str(),
                                               vb.getI64IntegerAttr(windows[t][a].lo[d])));
        windowParams.push_back(vb.getNamedAttr((field + "_ext" + Twine(d)).str(),
                                               vb.getI64IntegerAttr(windows[t][a].ext[d])));
      }
    }
    // One vertex per tile: its workers cut its slice among themselves
    // (workerSlices' rule, which the simulator applies too).
    const Slice &w = slices[t];
    SmallVector<NamedAttribute> params(windowParams);
    for (size_t i = 0; i < m.parallel.size(); ++i) {
      l0uop::RangeOp r = m.parallel[i];
      int64_t lo = r.getLower() + r.getStep() * w.first[i];
      int64_t hi = std::min(r.getUpper(), r.getLower() + r.getStep() * w.last[i]);
      params.push_back(vb.getNamedAttr("p" + std::to_string(i) + "_lo", vb.getI64IntegerAttr(lo)));
      params.push_back(vb.getNamedAttr("p" + std::to_string(i) + "_hi", vb.getI64IntegerAttr(hi)));
    }
    int64_t tile = k.firstTile + t;
    VertexOp::create(vb, loc, ref(vb, codelet), vb.getDenseI64ArrayAttr({tile, tile + 1}), fieldNames,
                     vb.getArrayAttr(objects), vb.getDenseI64ArrayAttr(fieldRanges),
                     vb.getDictionaryAttr(params), vb.getI64IntegerAttr(0));
  }

  if (in) {
    CopyOp::create(steps, loc, ref(steps, in));
    SyncOp::create(steps, loc);
  }
  ExecuteOp::create(steps, loc, ref(steps, set));
  SyncOp::create(steps, loc);
  if (out) {
    CopyOp::create(steps, loc, ref(steps, out));
    SyncOp::create(steps, loc);
  }
  return success();
}

CodeletOp synpl::l0toipu21::emitTransposeCodelet(OpBuilder &b, Location loc, StringRef name,
                                                 l0uop::BufType src, int64_t rows, int64_t cols) {
  MLIRContext *ctx = b.getContext();
  Type elem = src.getElementType();
  auto dstType = l0uop::BufType::get(ctx, {cols, rows}, elem);
  CodeletOp codelet =
      newUOpCodelet(b, loc, name, {b.getStringAttr("src"), b.getStringAttr("dst")}, 1);
  Block &body = codelet.getBody().emplaceBlock();
  Value in = body.addArgument(src, loc), out = body.addArgument(dstType, loc);
  OpBuilder ob = OpBuilder::atBlockEnd(&body);
  Type index = ob.getIndexType();
  auto constant = [&](int64_t v) -> Value {
    return l0uop::ConstOp::create(ob, loc, index, ob.getIndexAttr(v));
  };
  Value r = l0uop::RangeOp::create(ob, loc, index, int64_t{0}, rows, 1, l0uop::RangeKind::group_x);
  Value c = l0uop::RangeOp::create(ob, loc, index, int64_t{0}, cols, 1, l0uop::RangeKind::local_x);
  // Source element (r, c) of the row-major matrix: its coordinates in the
  // buffer's own shape.
  SmallVector<Value> at;
  ArrayRef<int64_t> shape = src.getShape();
  if (shape.size() == 2 && shape[0] == rows && shape[1] == cols) {
    at = {r, c};
  } else {
    Value flat = l0uop::AddOp::create(
        ob, loc, index,
        ValueRange{l0uop::MulOp::create(ob, loc, index, ValueRange{r, constant(cols)}), c});
    int64_t stride = 1;
    at.assign(shape.size(), Value());
    for (size_t d = shape.size(); d-- > 0;) {
      Value q = stride == 1 ? flat
                            : l0uop::DivOp::create(ob, loc, index, ValueRange{flat, constant(stride)});
      at[d] = d == 0 ? q : l0uop::ModOp::create(ob, loc, index, ValueRange{q, constant(shape[d])});
      stride *= shape[d];
    }
  }
  Value p = l0uop::IndexOp::create(ob, loc, l0uop::PtrType::get(ctx, elem), in, at);
  Value v = l0uop::LoadOp::create(ob, loc, elem, ValueRange{p});
  Value q = l0uop::IndexOp::create(ob, loc, l0uop::PtrType::get(ctx, elem), out, ValueRange{c, r});
  l0uop::StoreOp::create(ob, loc, ValueRange{q, v});
  l0uop::EndOp::create(ob, loc, c);
  l0uop::EndOp::create(ob, loc, r);
  finishUOpCodelet(codelet);
  return codelet;
}
