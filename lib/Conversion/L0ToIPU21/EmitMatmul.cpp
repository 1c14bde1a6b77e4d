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
// With K split into groups, each group runs on its own copy of the grid
// (group g's tile of block t is g x blocks + t) over its share of K into a
// <name>.partial buffer; group 0's tiles hold C. Then <name>.reduce (an
// exchange) brings the other groups' partials to group 0's tiles, into
// <name>.parts, and the compute set <name>.sum adds them into C.
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
/// The tile of block (bi, bj) in k group g.
int64_t tileOf(const MatmulPlan &p, int64_t bi, int64_t bj, int64_t g = 0) {
  return g * p.blocks() + (p.columnMajor ? bj * p.mBlocks + bi : bi * p.nBlocks + bj);
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
  auto tilesFrom = [](int64_t first, int64_t end) {
    std::vector<int64_t> tiles;
    for (int64_t t = first; t < end; ++t)
      tiles.push_back(t);
    return tileRanges(std::move(tiles));
  };
  int64_t groupK = p.groupK(s.K);
  bool split = p.kSplit > 1;
  SmallVector<int64_t> planTiles = tilesFrom(0, p.tiles());
  Type inType = TensorOp(m.a).getElementType(), f32 = b.getF32Type();
  BufferOp aIn = bb.buffer(".a_in", p.mb * p.kc, inType, planTiles);
  BufferOp bIn = bb.buffer(".b_in", p.kc * p.nb, inType, planTiles);
  BufferOp partial, parts;
  if (split) {
    partial = bb.buffer(".partial", p.mb * p.nb, f32, tilesFrom(p.blocks(), p.tiles()));
    parts = bb.buffer(".parts", (p.kSplit - 1) * p.mb * p.nb, f32, tilesFrom(0, p.blocks()));
  }

  // The block shapes and, per group (0: C's homes; the others), their tiles.
  std::map<std::pair<int64_t, int64_t>, std::pair<std::vector<int64_t>, std::vector<int64_t>>>
      shapes;
  for (int64_t bi = 0; bi < p.mBlocks; ++bi)
    for (int64_t bj = 0; bj < p.nBlocks; ++bj) {
      int64_t rows = std::min(p.mb, s.M - bi * p.mb), cols = std::min(p.nb, s.N - bj * p.nb);
      auto &entry = shapes[{rows, cols}];
      entry.first.push_back(tileOf(p, bi, bj));
      for (int64_t g = 1; g < p.kSplit; ++g)
        entry.second.push_back(tileOf(p, bi, bj, g));
    }

  auto computeSet = [&](StringRef suffix, auto body) {
    auto set = ComputeSetOp::create(b, loc, b.getStringAttr(m.name + suffix.str()));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&set.getBody().emplaceBlock());
    body();
    return set;
  };
  // Zero and accumulate: into C on group 0, into the partial block elsewhere.
  auto bothGroups = [&](auto fn) {
    for (auto &[shape, tiles] : shapes) {
      fn(shape, tiles.first, TensorOp(m.c).getOperation());
      if (!tiles.second.empty())
        fn(shape, tiles.second, partial.getOperation());
    }
  };
  ComputeSetOp zero = computeSet(".zero", [&] {
    bothGroups([&](std::pair<int64_t, int64_t> shape, const std::vector<int64_t> &tiles,
                   Operation *out) {
      int64_t n = shape.first * shape.second;
      bb.vertex(m.fill, tileRanges(tiles), {{"dst", out, n}},
                {b.getNamedAttr("count", bb.i64(n)),
                 b.getNamedAttr("value", b.getF64FloatAttr(0.0))});
    });
  });
  ComputeSetOp mm = computeSet(".mm", [&] {
    bothGroups([&](std::pair<int64_t, int64_t> shape, const std::vector<int64_t> &tiles,
                   Operation *out) {
      auto [rows, cols] = shape;
      bb.vertex(m.amp, tileRanges(tiles),
                {{"in", aIn, rows * p.kc}, {"weights", bIn, p.kc * cols}, {"out", out, rows * cols}},
                {b.getNamedAttr("m", bb.i64(rows)), b.getNamedAttr("n", bb.i64(cols)),
                 b.getNamedAttr("k", bb.i64(p.kc)), b.getNamedAttr("accumulate", bb.i64(1))});
    });
  });

  auto exchangeOf = [&](StringRef suffix, auto body) {
    auto exchange = ExchangeOp::create(b, loc, b.getStringAttr(m.name + suffix.str()), bb.i64(0));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&exchange.getBody().emplaceBlock());
    body();
    return exchange;
  };
  ExchangeOp chunk = exchangeOf(".chunk", [&] {
    auto send = [&](Operation *src, int64_t begin, int64_t length, int64_t rows, int64_t stride,
                    int64_t advance, Operation *dst, std::vector<int64_t> tiles) {
      SendOp::create(b, loc, bb.ref(src), bb.i64(begin), bb.i64(begin + length), IntegerAttr(),
                     rows > 1 ? bb.i64(rows) : IntegerAttr(),
                     rows > 1 ? bb.i64(stride) : IntegerAttr(),
                     p.steps > 1 ? bb.i64(advance) : IntegerAttr(), bb.ref(dst), bb.i64(0),
                     bb.i64(rows * length), b.getDenseI64ArrayAttr(tileRanges(std::move(tiles))));
    };
    for (int64_t g = 0; g < p.kSplit; ++g) {
      // A [M][K]: block row bi of group g needs rows [bi*mb, +rows) of the
      // chunk's columns, from the group's share of K.
      for (int64_t bi = 0; bi < p.mBlocks; ++bi) {
        int64_t rows = std::min(p.mb, s.M - bi * p.mb);
        std::vector<int64_t> tiles;
        for (int64_t bj = 0; bj < p.nBlocks; ++bj)
          tiles.push_back(tileOf(p, bi, bj, g));
        send(m.a, bi * p.mb * s.K + g * groupK, p.kc, rows, s.K, p.kc, aIn, std::move(tiles));
      }
      // B [K][N]: block column bj needs the chunk's rows of its columns.
      for (int64_t bj = 0; bj < p.nBlocks; ++bj) {
        int64_t cols = std::min(p.nb, s.N - bj * p.nb);
        std::vector<int64_t> tiles;
        for (int64_t bi = 0; bi < p.mBlocks; ++bi)
          tiles.push_back(tileOf(p, bi, bj, g));
        send(m.b, g * groupK * s.N + bj * p.nb, cols, p.kc, s.N, p.kc * s.N, bIn,
             std::move(tiles));
      }
    }
  });

  // The reduction: group g's partial of a block to slot g - 1 of the
  // block's parts, then C += their sum.
  ExchangeOp gather;
  ComputeSetOp sum;
  if (split) {
    gather = exchangeOf(".reduce", [&] {
      for (int64_t bi = 0; bi < p.mBlocks; ++bi)
        for (int64_t bj = 0; bj < p.nBlocks; ++bj) {
          int64_t n = std::min(p.mb, s.M - bi * p.mb) * std::min(p.nb, s.N - bj * p.nb);
          int64_t home = tileOf(p, bi, bj);
          for (int64_t g = 1; g < p.kSplit; ++g)
            SendOp::create(b, loc, bb.ref(partial), bb.i64(0), bb.i64(n),
                           bb.i64(tileOf(p, bi, bj, g)), IntegerAttr(), IntegerAttr(),
                           IntegerAttr(), bb.ref(parts), bb.i64((g - 1) * n), bb.i64(g * n),
                           b.getDenseI64ArrayAttr({home, home + 1}));
        }
    });
    sum = computeSet(".sum", [&] {
      for (auto &[shape, tiles] : shapes) {
        int64_t n = shape.first * shape.second;
        bb.vertex(m.reduce, tileRanges(tiles.first),
                  {{"partials", parts, (p.kSplit - 1) * n}, {"out", m.c, n}},
                  {b.getNamedAttr("p", bb.i64(p.kSplit - 1)), b.getNamedAttr("n", bb.i64(n)),
                   b.getNamedAttr("accumulate", bb.i64(1))});
      }
    });
  }

  ExecuteOp::create(steps, loc, bb.ref(zero));
  SyncOp::create(steps, loc);
  auto repeat = RepeatOp::create(steps, loc, bb.i64(p.steps));
  {
    OpBuilder::InsertionGuard guard(steps);
    steps.setInsertionPointToStart(&repeat.getBody().emplaceBlock());
    CopyOp::create(steps, loc, bb.ref(chunk));
    SyncOp::create(steps, loc);
    ExecuteOp::create(steps, loc, bb.ref(mm));
    SyncOp::create(steps, loc);
  }
  if (split) {
    CopyOp::create(steps, loc, bb.ref(gather));
    SyncOp::create(steps, loc);
    ExecuteOp::create(steps, loc, bb.ref(sum));
    SyncOp::create(steps, loc);
  }
}
