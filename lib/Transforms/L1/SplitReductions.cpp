//===- SplitReductions.cpp - Long reductions as partials plus their sum ---===//
//
// --synpl-l1-split-reductions: a matmul whose contraction is long and whose
// result is small (a weight gradient), or a column reduction (a bias
// gradient), becomes S partial reductions over slices of the reduced axis,
// with S as a leading parallel dimension, then the reduction of the S
// partials (Passes.td has the contract). S comes from one search per op.
//
//===----------------------------------------------------------------------===//
#include "synpl/Transforms/Passes.h"

#include "synpl/Dialect/L1/L1Dialect.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Dialect/L1/L1Program.h"
#include "synpl/Search/Search.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/TypeSwitch.h"

namespace synpl {
#define GEN_PASS_DEF_L1SPLITREDUCTIONS
#include "synpl/Transforms/Passes.h.inc"
} // namespace synpl

using namespace mlir;
using namespace synpl;

namespace {

/// What one core of an x86_64 node does, for pricing a split (orders of
/// magnitude, not a simulation: the search compares candidates of the same
/// op): an AVX-512 core's FMA throughput as the tiled matmul reaches it, a
/// core's share of streamed DRAM bandwidth, and one more kernel of a step
/// (the executor's dispatch and waking the workers).
constexpr double kCoreFlops = 80.0e9;
constexpr double kCoreStreamBytes = 12.0e9;
constexpr double kKernelSeconds = 5.0e-6;

/// One reduction to split: the op, the extent of its reduced axis, and the
/// shape facts the cost model reads.
struct Reduction {
  Operation *op = nullptr;
  int64_t length = 0;      // the reduced extent K
  int64_t elementBytes = 4;
  // A matmul [M, K] x [K, N].
  bool matmul = false;
  int64_t m = 0, n = 0;
  // A column reduction: the elements of the result, and its last dimension
  // (the lanes of the kernel that computes it).
  int64_t outElements = 0, outLast = 1;
  int64_t axis = 0;
};

/// One candidate: the number of slices.
struct Split {
  int64_t slices = 1;
};

int64_t elementBytesOf(Type t) {
  return (int64_t(getElementTypeOrSelf(t).getIntOrFloatBitWidth()) + 7) / 8;
}

/// The reduction `op` performs, when it is one this pass splits: an
/// unbatched matmul, or a reduce over an axis that is not the last.
std::optional<Reduction> reductionOf(Operation *op) {
  Reduction r;
  r.op = op;
  if (auto mm = dyn_cast<l1::MatmulOp>(op)) {
    auto lhs = cast<RankedTensorType>(mm.getLhs().getType());
    auto rhs = cast<RankedTensorType>(mm.getRhs().getType());
    if (lhs.getRank() != 2 || rhs.getRank() != 2)
      return std::nullopt;
    // Slicing a transposed right operand's rows would gather the lanes of
    // the partial products: L1 -> L0 copies such an operand first.
    if (mm.getRhs().getDefiningOp<l1::TransposeOp>())
      return std::nullopt;
    r.matmul = true;
    r.m = lhs.getDimSize(0);
    r.length = lhs.getDimSize(1);
    r.n = rhs.getDimSize(1);
    r.elementBytes = elementBytesOf(lhs);
    return r;
  }
  std::optional<uint64_t> axis =
      llvm::TypeSwitch<Operation *, std::optional<uint64_t>>(op)
          .Case<l1::ReduceSumOp, l1::ReduceMeanOp, l1::ReduceMaxOp>(
              [](auto reduce) { return reduce.getAxis(); })
          .Default([](Operation *) { return std::nullopt; });
  if (!axis)
    return std::nullopt;
  auto in = cast<RankedTensorType>(op->getOperand(0).getType());
  // The last axis is a row reduction: each lane already owns its rows.
  if (int64_t(*axis) + 1 >= in.getRank())
    return std::nullopt;
  r.axis = int64_t(*axis);
  r.length = in.getDimSize(r.axis);
  r.outElements = in.getNumElements() / std::max<int64_t>(1, r.length);
  r.outLast = in.getShape().back();
  r.elementBytes = elementBytesOf(in);
  return r;
}

/// The cost terms of splitting `r` into `s` slices on `units` cores.
SmallVector<search::CostTerm> price(const Reduction &r, int64_t s,
                                    int64_t units) {
  double e = double(r.elementBytes);
  double streamBytes = 0, flops = 0, partialBytes = 0;
  if (r.matmul) {
    // The kernel's rows are the S x M rows of the partial products, split
    // among the cores. A core reads its rows of the row operand and the
    // lane operand of every slice its rows cover: the whole of it when the
    // slices are fewer than the cores that share them.
    double rows = double(s * r.m);
    double u = std::min<double>(double(units), rows);
    double laneBytes = double(r.length) * double(r.n) * e;
    double rowBytes = double(r.m) * double(r.length) * e;
    double outBytes = double(s) * double(r.m) * double(r.n) * e;
    streamBytes = laneBytes / std::min<double>(double(s), u) +
                  (rowBytes + outBytes) / u;
    flops = 2.0 * double(r.m) * double(r.n) * double(r.length) / u;
    // The partials' sum: S rows read per result, spread over its M rows.
    if (s > 1)
      partialBytes = (outBytes + double(r.m) * double(r.n) * e) /
                     std::min<double>(double(units), double(r.m));
  } else {
    // The kernel's independent blocks are the result's leading elements
    // (its last dimension is a block's lanes), times S.
    double blocks = double(r.outElements / std::max<int64_t>(1, r.outLast));
    double u = std::min<double>(double(units), blocks * double(s));
    double inBytes = double(r.length) * double(r.outElements) * e;
    double outBytes = double(s) * double(r.outElements) * e;
    streamBytes = (inBytes + outBytes) / u;
    flops = double(r.length) * double(r.outElements) / u;
    if (s > 1)
      partialBytes = (outBytes + double(r.outElements) * e) /
                     std::min<double>(double(units), blocks);
  }
  SmallVector<search::CostTerm> terms;
  terms.push_back({"stream_us", streamBytes / kCoreStreamBytes * 1e6, 1});
  terms.push_back({"compute_us", flops / kCoreFlops * 1e6, 1});
  terms.push_back({"partials_us", partialBytes / kCoreStreamBytes * 1e6, 1});
  terms.push_back({"kernel_us", s > 1 ? kKernelSeconds * 1e6 : 0.0, 1});
  return terms;
}

struct L1SplitReductionsPass
    : public synpl::impl::L1SplitReductionsBase<L1SplitReductionsPass> {
  using L1SplitReductionsBase::L1SplitReductionsBase;

  /// The slice count the search picks for `r` (1: leave it), or failure.
  FailureOr<int64_t> choose(const Reduction &r, StringRef graph,
                            int64_t cores) {
    search::SearchSpec<Split> spec;
    spec.name = ("L1 split @" + graph + " " + l1::valueName(r.op->getResult(0)) +
                 " = " + r.op->getName().getStringRef())
                    .str();
    spec.enumerate = [&](llvm::function_ref<bool(Split)> yield) {
      for (int64_t s = 1; s <= maxSplit; s *= 2)
        if (!yield(Split{s}))
          return;
    };
    spec.filters.push_back(
        {"divides", [&](const Split &c) -> std::optional<std::string> {
           if (r.length % c.slices == 0)
             return std::nullopt;
           return ("the reduced extent " + Twine(r.length) +
                   " is not a multiple of " + Twine(c.slices))
               .str();
         }});
    spec.filters.push_back(
        {"min-slice", [&](const Split &c) -> std::optional<std::string> {
           if (c.slices == 1 || r.length / c.slices >= minSlice)
             return std::nullopt;
           return ("slices of " + Twine(r.length / c.slices) +
                   " are shorter than min-slice " + Twine(minSlice))
               .str();
         }});
    spec.score = [&](const Split &c) { return price(r, c.slices, cores); };
    spec.describe = [](const Split &c) {
      return ("S=" + Twine(c.slices)).str();
    };
    // Equal costs: fewer slices (the order of the sum as written).
    spec.tieBreakKey = [](const Split &c) {
      std::string key = std::to_string(c.slices);
      return std::string(8 - std::min<size_t>(8, key.size()), '0') + key;
    };
    FailureOr<Split> best =
        search::searchAndReport(r.op->getLoc(), spec, search::SearchOptions());
    if (failed(best))
      return failure();
    return best->slices;
  }

  /// Rewrites the matmul of `r` as `s` partial products and their sum.
  void splitMatmul(l1::MatmulOp mm, const Reduction &r, int64_t s) {
    OpBuilder b(mm);
    Location loc = mm.getLoc();
    Type elem = getElementTypeOrSelf(mm.getType());
    int64_t ks = r.length / s;
    auto ty = [&](ArrayRef<int64_t> shape) {
      return RankedTensorType::get(shape, elem);
    };
    // The left operand as [S, M, K/S]: one transpose over reshapes of what
    // it reads, which L1 -> L0 reads in place (a weight gradient's left
    // operand is itself the transpose of [K, M] activations: slice those).
    Value a;
    auto t = mm.getLhs().getDefiningOp<l1::TransposeOp>();
    if (t && (!t.getPerm() || llvm::equal(*t.getPerm(), ArrayRef<int64_t>{1, 0}))) {
      a = l1::ReshapeOp::create(b, loc, ty({s, ks, r.m}), t.getOperand());
      a = l1::TransposeOp::create(b, loc, ty({s, r.m, ks}), a,
                                  b.getDenseI64ArrayAttr({0, 2, 1}));
    } else {
      a = l1::ReshapeOp::create(b, loc, ty({r.m, s, ks}), mm.getLhs());
      a = l1::TransposeOp::create(b, loc, ty({s, r.m, ks}), a,
                                  b.getDenseI64ArrayAttr({1, 0, 2}));
    }
    Value c = l1::ReshapeOp::create(b, loc, ty({s, ks, r.n}), mm.getRhs());
    Value partial = l1::MatmulOp::create(b, loc, ty({s, r.m, r.n}), a, c);
    Value sum = l1::ReduceSumOp::create(b, loc, mm.getType(), partial,
                                        b.getI64IntegerAttr(0));
    mm.getResult().replaceAllUsesWith(sum);
    mm.erase();
    // A tensor graph has no dead values (L1.8): the transpose it read
    // through may have had no other reader.
    if (t && t->use_empty())
      t->erase();
  }

  /// Rewrites the column reduction of `r` as `s` partial reductions (over
  /// slices of the axis) and the same reduction of the partials.
  void splitReduce(Operation *op, const Reduction &r, int64_t s) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    auto in = cast<RankedTensorType>(op->getOperand(0).getType());
    SmallVector<int64_t> sliced(in.getShape());
    sliced[r.axis] = r.length / s;
    sliced.insert(sliced.begin() + r.axis, s);
    SmallVector<int64_t> partialShape(sliced);
    partialShape.erase(partialShape.begin() + r.axis + 1);
    Type elem = in.getElementType();
    Value x = l1::ReshapeOp::create(b, loc, RankedTensorType::get(sliced, elem),
                                    op->getOperand(0));
    auto reduce = [&](Value v, Type type, int64_t axis) -> Value {
      IntegerAttr attr = b.getI64IntegerAttr(axis);
      return llvm::TypeSwitch<Operation *, Value>(op)
          .Case([&](l1::ReduceSumOp) {
            return l1::ReduceSumOp::create(b, loc, type, v, attr);
          })
          .Case([&](l1::ReduceMeanOp) {
            return l1::ReduceMeanOp::create(b, loc, type, v, attr);
          })
          .Case([&](l1::ReduceMaxOp) {
            return l1::ReduceMaxOp::create(b, loc, type, v, attr);
          });
    };
    Value partial =
        reduce(x, RankedTensorType::get(partialShape, elem), r.axis + 1);
    Value result = reduce(partial, op->getResult(0).getType(), r.axis);
    op->getResult(0).replaceAllUsesWith(result);
    op->erase();
  }

  void runOnOperation() override {
    bool failedAny = false;
    getOperation().walk([&](l1::TensorGraphOp graph) {
      l1::NodeOp node = l1::lookupNode(graph, graph.getNodeAttr());
      if (!node || node.getKind() != l1::NodeKind::compute ||
          node.getIsa() != StringRef("x86_64"))
        return;
      int64_t cores = units > 0 ? int64_t(units)
                                : node.getCores().value_or(int64_t(1));
      SmallVector<Reduction> todo;
      for (Operation &op : graph.getEntry())
        if (std::optional<Reduction> r = reductionOf(&op))
          if (r->length >= minLength)
            todo.push_back(*r);
      for (const Reduction &r : todo) {
        FailureOr<int64_t> s = choose(r, graph.getSymName(), cores);
        if (failed(s)) {
          failedAny = true;
          continue;
        }
        if (*s == 1)
          continue;
        if (summary)
          r.op->emitRemark() << "split into " << *s << " slices of "
                             << r.length / *s << " on " << cores << " cores";
        if (auto mm = dyn_cast<l1::MatmulOp>(r.op))
          splitMatmul(mm, r, *s);
        else
          splitReduce(r.op, r, *s);
      }
    });
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
