//===- EmitMatmul.cpp - The ipu21 ops of one planned matmul ---------------===//
//
// A plan (MatmulPlan.h) becomes, with C's home the plan's grid of blocks:
//
//   buffers  <name>.a_in (mb x kc of A), <name>.b_in (kc x nb of B) on the
//            grid's tiles
//   sets     <name>.zero (fill C's blocks), <name>.mm (the AMP accumulates
//            a_in . b_in into C's block)
//   exchange <name>.chunk: per block row, A's rows of that chunk to the
//            tiles of the row; per block column, B's chunk rows to the
//            tiles of the column; both advance by one chunk per run
//   steps    execute zero, sync, repeat <steps> { copy chunk, sync,
//            execute mm, sync }
//
// Blocks at C's bottom and right edges are smaller: each distinct block
// shape is its own vertex (at most four), over the tiles that have it.
//
//===----------------------------------------------------------------------===//
#include "Emit.h"

#include "synpl/Dialect/IPU21/IPU21Ops.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <map>

using namespace mlir;
using namespace synpl;
using namespace synpl::ipu21;
using namespace synpl::l0toipu21;

llvm::SmallVector<int64_t, 4> synpl::l0toipu21::gridMapping(const MatmulPlan &p) {
  return {0, p.mb, p.nb, p.columnMajor ? 1 : 0};
}

namespace {
/// The tile of block (bi, bj).
int64_t tileOf(const MatmulPlan &p, int64_t bi, int64_t bj) {
  return p.columnMajor ? bj * p.mBlocks + bi : bi * p.nBlocks + bj;
}

/// Tiles as [first, end) pairs (sorted, merged).
SmallVector<int64_t> rangesOf(std::vector<int64_t> tiles) {
  std::sort(tiles.begin(), tiles.end());
  SmallVector<int64_t> flat;
  for (int64_t t : tiles) {
    if (!flat.empty() && flat.back() == t)
      ++flat.back();
    else
      flat.append({t, t + 1});
  }
  return flat;
}

struct OpFactory {
  OpBuilder &b;
  Location loc;
  const MatmulEmission &m;

  FlatSymbolRefAttr ref(StringRef name) { return FlatSymbolRefAttr::get(b.getContext(), name); }
  FlatSymbolRefAttr ref(Operation *op) { return ref(cast<SymbolOpInterface>(op).getName()); }
  IntegerAttr i64(int64_t v) { return b.getI64IntegerAttr(v); }

  BufferOp buffer(StringRef suffix, int64_t elements, Type type, ArrayRef<int64_t> tiles) {
    return BufferOp::create(b, loc, b.getStringAttr(m.name + suffix.str()), i64(elements),
                            TypeAttr::get(type), b.getDenseI64ArrayAttr(tiles), i64(0));
  }

  void vertex(CodeletOp codelet, ArrayRef<int64_t> tiles,
              ArrayRef<std::tuple<StringRef, Operation *, int64_t>> fields,
              ArrayRef<NamedAttribute> params) {
    SmallVector<Attribute> names, objects;
    SmallVector<int64_t> ranges;
    for (auto [name, object, count] : fields) {
      names.push_back(b.getStringAttr(name));
      objects.push_back(ref(object));
      ranges.append({0, count});
    }
    VertexOp::create(b, loc, ref(codelet), b.getDenseI64ArrayAttr(tiles), b.getArrayAttr(names),
                     b.getArrayAttr(objects), b.getDenseI64ArrayAttr(ranges),
                     b.getDictionaryAttr(params), i64(0));
  }
};
} // namespace

void synpl::l0toipu21::emitMatmul(OpBuilder &b, Location loc, const MatmulEmission &m,
                                  OpBuilder &steps) {
  const MatmulPlan &p = m.plan;
  const MatmulShape &s = m.shape;
  OpFactory bb{b, loc, m};
  std::vector<int64_t> all;
  for (int64_t t = 0; t < p.tiles(); ++t)
    all.push_back(t);
  SmallVector<int64_t> gridTiles = rangesOf(all);
  Type inType = TensorOp(m.a).getElementType();
  BufferOp aIn = bb.buffer(".a_in", p.mb * p.kc, inType, gridTiles);
  BufferOp bIn = bb.buffer(".b_in", p.kc * p.nb, inType, gridTiles);

  // The block shapes and the tiles of each.
  std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> shapes;
  for (int64_t bi = 0; bi < p.mBlocks; ++bi)
    for (int64_t bj = 0; bj < p.nBlocks; ++bj) {
      int64_t rows = std::min(p.mb, s.M - bi * p.mb), cols = std::min(p.nb, s.N - bj * p.nb);
      shapes[{rows, cols}].push_back(tileOf(p, bi, bj));
    }

  auto computeSet = [&](StringRef suffix, auto body) {
    auto set = ComputeSetOp::create(b, loc, b.getStringAttr(m.name + suffix.str()));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&set.getBody().emplaceBlock());
    body();
    return set;
  };
  ComputeSetOp zero = computeSet(".zero", [&] {
    for (auto &[shape, tiles] : shapes) {
      int64_t n = shape.first * shape.second;
      bb.vertex(m.fill, rangesOf(tiles), {{"dst", m.c, n}},
                {b.getNamedAttr("count", bb.i64(n)),
                 b.getNamedAttr("value", b.getF64FloatAttr(0.0))});
    }
  });
  ComputeSetOp mm = computeSet(".mm", [&] {
    for (auto &[shape, tiles] : shapes) {
      auto [rows, cols] = shape;
      bb.vertex(m.amp, rangesOf(tiles),
                {{"in", aIn, rows * p.kc}, {"weights", bIn, p.kc * cols}, {"out", m.c, rows * cols}},
                {b.getNamedAttr("m", bb.i64(rows)), b.getNamedAttr("n", bb.i64(cols)),
                 b.getNamedAttr("k", bb.i64(p.kc)), b.getNamedAttr("accumulate", bb.i64(1))});
    }
  });

  auto exchange = ExchangeOp::create(b, loc, b.getStringAttr(m.name + ".chunk"), bb.i64(0));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&exchange.getBody().emplaceBlock());
    auto send = [&](Operation *src, int64_t begin, int64_t length, int64_t rows, int64_t stride,
                    int64_t advance, Operation *dst, std::vector<int64_t> tiles) {
      SendOp::create(b, loc, bb.ref(src), bb.i64(begin), bb.i64(begin + length), IntegerAttr(),
                     rows > 1 ? bb.i64(rows) : IntegerAttr(),
                     rows > 1 ? bb.i64(stride) : IntegerAttr(),
                     p.steps > 1 ? bb.i64(advance) : IntegerAttr(), bb.ref(dst), bb.i64(0),
                     bb.i64(rows * length), b.getDenseI64ArrayAttr(rangesOf(std::move(tiles))));
    };
    // A [M][K]: block row bi needs rows [bi*mb, +rows) of the chunk's columns.
    for (int64_t bi = 0; bi < p.mBlocks; ++bi) {
      int64_t rows = std::min(p.mb, s.M - bi * p.mb);
      std::vector<int64_t> tiles;
      for (int64_t bj = 0; bj < p.nBlocks; ++bj)
        tiles.push_back(tileOf(p, bi, bj));
      send(m.a, bi * p.mb * s.K, p.kc, rows, s.K, p.kc, aIn, std::move(tiles));
    }
    // B [K][N]: block column bj needs the chunk's rows of columns [bj*nb, +cols).
    for (int64_t bj = 0; bj < p.nBlocks; ++bj) {
      int64_t cols = std::min(p.nb, s.N - bj * p.nb);
      std::vector<int64_t> tiles;
      for (int64_t bi = 0; bi < p.mBlocks; ++bi)
        tiles.push_back(tileOf(p, bi, bj));
      send(m.b, bj * p.nb, cols, p.kc, s.N, p.kc * s.N, bIn, std::move(tiles));
    }
  }

  ExecuteOp::create(steps, loc, bb.ref(zero));
  SyncOp::create(steps, loc);
  auto repeat = RepeatOp::create(steps, loc, bb.i64(p.steps));
  OpBuilder::InsertionGuard guard(steps);
  steps.setInsertionPointToStart(&repeat.getBody().emplaceBlock());
  CopyOp::create(steps, loc, bb.ref(exchange));
  SyncOp::create(steps, loc);
  ExecuteOp::create(steps, loc, bb.ref(mm));
  SyncOp::create(steps, loc);
}
