//===- Footprint.cpp - What a kernel touches on one tile ------------------===//
#include "Footprint.h"

#include "synpl/Dialect/IPU21/IPU21Codelets.h"
#include "synpl/Target/IPU21/CostModel.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <algorithm>

using namespace mlir;
using namespace synpl;
using namespace synpl::l0toipu21;
namespace cost = synpl::ipu21::cost;

int64_t Window::elements() const {
  if (ext.empty())
    return 0;
  int64_t n = 1;
  for (int64_t e : ext)
    n = cost::satMul(n, e);
  return n;
}

bool Window::intersects(const Window &o) const {
  if (empty() || o.empty() || lo.size() != o.lo.size())
    return false;
  for (size_t d = 0; d < lo.size(); ++d)
    if (lo[d] + ext[d] <= o.lo[d] || o.lo[d] + o.ext[d] <= lo[d])
      return false;
  return true;
}

bool Window::contiguous(ArrayRef<int64_t> shape) const {
  bool partial = false; // a dimension with more than one index was seen
  for (size_t d = 0; d < ext.size(); ++d) {
    if (partial && ext[d] != shape[d])
      return false;
    partial |= ext[d] > 1;
  }
  return true;
}

int64_t Window::flatBegin(ArrayRef<int64_t> shape) const {
  int64_t flat = 0;
  for (size_t d = 0; d < lo.size(); ++d)
    flat = flat * shape[d] + lo[d];
  return flat;
}

int64_t Slice::iterations() const {
  int64_t n = 1;
  for (size_t i = 0; i < first.size(); ++i)
    n = cost::satMul(n, std::max<int64_t>(0, last[i] - first[i]));
  return n;
}

namespace {
/// A closed interval of integers, or unknown.
struct Iv {
  int64_t lo = 0, hi = 0;
  bool known = false;
};

Iv make(int64_t lo, int64_t hi) { return {lo, hi, true}; }

std::optional<int64_t> positiveConstant(Value v) {
  auto c = v.getDefiningOp<l0uop::ConstOp>();
  auto attr = c ? dyn_cast<IntegerAttr>(c.getValue()) : IntegerAttr();
  if (!attr || attr.getValue().getSExtValue() <= 0)
    return std::nullopt;
  return attr.getValue().getSExtValue();
}

/// Interval arithmetic over a kernel's index expressions for one slice.
class Evaluator {
public:
  Evaluator(const KernelModel &model, const Slice &slice) : model(model), slice(slice) {}

  Iv eval(Value v) {
    auto it = memo.find(v);
    if (it != memo.end())
      return it->second;
    Iv iv = compute(v);
    memo[v] = iv;
    return iv;
  }

private:
  Iv compute(Value v) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return {};
    if (auto range = dyn_cast<l0uop::RangeOp>(def)) {
      const auto *at = llvm::find(model.parallel, range);
      if (at != model.parallel.end()) {
        size_t i = at - model.parallel.begin();
        if (slice.last[i] <= slice.first[i])
          return {};
        return make(range.getLower() + range.getStep() * slice.first[i],
                    range.getLower() + range.getStep() * (slice.last[i] - 1));
      }
      if (range.getTripCount() <= 0)
        return {};
      return make(range.getLower(), range.getLastValue());
    }
    if (auto c = dyn_cast<l0uop::ConstOp>(def)) {
      if (auto attr = dyn_cast<IntegerAttr>(c.getValue()))
        return make(attr.getValue().getSExtValue(), attr.getValue().getSExtValue());
      return {};
    }
    if (isa<l0uop::CastOp>(def) && def->getOperand(0).getType().isIntOrIndex() &&
        v.getType().isIntOrIndex())
      return eval(def->getOperand(0));
    if (isa<l0uop::NegOp>(def)) {
      Iv a = eval(def->getOperand(0));
      if (!a.known || a.lo == INT64_MIN)
        return {};
      return make(-a.hi, -a.lo);
    }
    if (def->getNumOperands() != 2)
      return {};
    Iv a = eval(def->getOperand(0)), b = eval(def->getOperand(1));
    if (!a.known || !b.known)
      return {};
    int64_t x, y;
    if (isa<l0uop::AddOp>(def)) {
      if (__builtin_add_overflow(a.lo, b.lo, &x) || __builtin_add_overflow(a.hi, b.hi, &y))
        return {};
      return make(x, y);
    }
    if (isa<l0uop::MulOp>(def)) {
      int64_t p[4];
      int64_t as[2] = {a.lo, a.hi}, bs[2] = {b.lo, b.hi};
      for (int i = 0; i < 4; ++i)
        if (__builtin_mul_overflow(as[i / 2], bs[i % 2], &p[i]))
          return {};
      return make(*std::min_element(p, p + 4), *std::max_element(p, p + 4));
    }
    if (isa<l0uop::MaxOp>(def))
      return make(std::max(a.lo, b.lo), std::max(a.hi, b.hi));
    std::optional<int64_t> c = positiveConstant(def->getOperand(1));
    if (!c || a.lo < 0)
      return {};
    if (isa<l0uop::DivOp>(def))
      return make(a.lo / *c, a.hi / *c);
    if (isa<l0uop::ModOp>(def)) {
      if (a.lo / *c == a.hi / *c)
        return make(a.lo % *c, a.hi % *c);
      return make(0, *c - 1);
    }
    return {};
  }

  const KernelModel &model;
  const Slice &slice;
  llvm::DenseMap<Value, Iv> memo;
};

int64_t issueSlots(Operation &op) {
  if (isa<l0uop::ConstOp, l0uop::EndIfOp>(op))
    return 0;
  if (auto index = dyn_cast<l0uop::IndexOp>(op))
    return 2 * static_cast<int64_t>(index.getIndices().size());
  if (isa<l0uop::Exp2Op, l0uop::Log2Op, l0uop::SinOp, l0uop::SqrtOp, l0uop::ReciprocalOp>(op))
    return cost::kTranscendentalIssueSlots;
  return 1;
}

} // namespace

ArrayRef<int64_t> KernelModel::shapeOf(unsigned arg) const {
  return cast<l0uop::BufType>(body->getArgument(arg).getType()).getShape();
}

int64_t KernelModel::elemBytesOf(unsigned arg) const {
  auto buf = cast<l0uop::BufType>(body->getArgument(arg).getType());
  return std::max<int64_t>(1, static_cast<int64_t>(buf.getElementBytes()));
}

std::optional<KernelModel> KernelModel::build(Block &body, unsigned numInputs, std::string &why) {
  KernelModel m;
  m.body = &body;
  m.numInputs = numInputs;
  for (BlockArgument arg : body.getArguments()) {
    Type elem = cast<l0uop::BufType>(arg.getType()).getElementType();
    if (!ipu21::isTileBufferElement(elem)) {
      llvm::raw_string_ostream os(why);
      os << "buffer #" << arg.getArgNumber() << " holds " << elem
         << ", which an IPU tile does not store (f32, f16, i32, 8-bit, i1)";
      return std::nullopt;
    }
  }
  // The open RANGEs around each op: parallel ones as -1-i, loops as their
  // index in loopTrips.
  SmallVector<int, 4> open;
  llvm::DenseMap<Operation *, int> rangeSlot;
  SmallVector<Operation *> ifs;
  DenseMap<unsigned, int> storesTo;
  for (Operation &op : body) {
    if (ipu21::isNonTileUOp(op)) {
      why = ("its '" + op.getName().getStringRef() +
             "' does not run on an IPU worker (scalar UOps, no block-level cooperation or "
             "escapes)")
                .str();
      return std::nullopt;
    }
    for (Type t : llvm::concat<Type>(op.getOperandTypes(), op.getResultTypes()))
      if (!isa<l0uop::BufType, l0uop::PtrType>(t) && !ipu21::isTileValueType(t)) {
        llvm::raw_string_ostream os(why);
        os << "its '" << op.getName() << "' computes in " << t
           << ", which an IPU worker does not (scalars: f32, f16, integers, index)";
        return std::nullopt;
      }
    if (auto reduce = dyn_cast<l0uop::ReduceOp>(op)) {
      // (A REDUCE folds a loop RANGE: row L0.1 refuses one over a parallel
      // RANGE, so cutting parallel RANGEs never cuts a fold.)
      Operation *init = reduce.getInit().getDefiningOp();
      if (!init || !init->isBeforeInBlock(reduce.getRange().getDefiningOp())) {
        why = "a REDUCE's init is defined after its RANGE starts";
        return std::nullopt;
      }
    }
    m.costs.push_back({issueSlots(op), open});
    if (auto range = dyn_cast<l0uop::RangeOp>(op)) {
      int slot;
      if (range.getKind() != l0uop::RangeKind::loop) {
        slot = -1 - static_cast<int>(m.parallel.size());
        m.parallel.push_back(range);
        m.trips.push_back(range.getTripCount());
      } else {
        slot = static_cast<int>(m.loopTrips.size());
        m.loopTrips.push_back(range.getTripCount());
      }
      rangeSlot[range] = slot;
      open.push_back(slot);
    } else if (isa<l0uop::EndOp>(op)) {
      // END (the loop's branch) was counted inside its RANGE, once per
      // iteration.
      open.pop_back();
    } else if (isa<l0uop::IfOp>(op)) {
      ifs.push_back(&op);
    } else if (isa<l0uop::EndIfOp>(op)) {
      ifs.pop_back();
    } else if (auto index = dyn_cast<l0uop::IndexOp>(op)) {
      auto arg = cast<BlockArgument>(index.getBuffer());
      m.accesses.push_back({arg.getArgNumber(), SmallVector<Value, 4>(index.getIndices())});
    } else if (isa<l0uop::LoadOp>(op)) {
      if (auto index = op.getOperand(0).getDefiningOp<l0uop::IndexOp>())
        m.readArgs.insert(cast<BlockArgument>(index.getBuffer()).getArgNumber());
    } else if (isa<l0uop::StoreOp>(op)) {
      auto index = op.getOperand(0).getDefiningOp<l0uop::IndexOp>();
      if (!index)
        continue;
      unsigned arg = cast<BlockArgument>(index.getBuffer()).getArgNumber();
      // Covering: not under an IF, each index a distinct unit-step RANGE
      // (plus a constant).
      bool covers = ifs.empty();
      llvm::SmallPtrSet<Operation *, 4> used;
      for (Value i : index.getIndices()) {
        Value base = i;
        if (auto add = i.getDefiningOp<l0uop::AddOp>())
          base = add.getOperand(1).getDefiningOp<l0uop::ConstOp>() ? add.getOperand(0)
                 : add.getOperand(0).getDefiningOp<l0uop::ConstOp>() ? add.getOperand(1)
                                                                      : i;
        auto range = base.getDefiningOp<l0uop::RangeOp>();
        covers &= range && range.getStep() == 1 && used.insert(range).second;
      }
      storesTo[arg] += covers ? 1 : 2; // two: not covering
    }
  }
  for (auto [arg, n] : storesTo)
    if (n == 1)
      m.coveringStores.insert(arg);
  return m;
}

Slice KernelModel::whole() const {
  Slice s;
  for (int64_t t : trips) {
    s.first.push_back(0);
    s.last.push_back(t);
  }
  return s;
}

Window KernelModel::window(unsigned arg, const Slice &slice) const {
  Window w;
  if (slice.iterations() == 0)
    return w;
  ArrayRef<int64_t> shape = shapeOf(arg);
  Evaluator eval(*this, slice);
  SmallVector<int64_t, 4> lo, hi;
  for (const Access &a : accesses) {
    if (a.arg != arg)
      continue;
    for (size_t d = 0; d < a.indices.size(); ++d) {
      Iv iv = eval.eval(a.indices[d]);
      int64_t l = iv.known ? std::max<int64_t>(0, iv.lo) : 0;
      int64_t h = iv.known ? std::min<int64_t>(shape[d] - 1, iv.hi) : shape[d] - 1;
      if (lo.size() <= d) {
        lo.push_back(l);
        hi.push_back(h);
      } else {
        lo[d] = std::min(lo[d], l);
        hi[d] = std::max(hi[d], h);
      }
    }
  }
  if (lo.size() != shape.size())
    return w; // never indexed
  for (size_t d = 0; d < lo.size(); ++d) {
    if (hi[d] < lo[d])
      return Window{};
    w.lo.push_back(lo[d]);
    w.ext.push_back(hi[d] - lo[d] + 1);
  }
  return w;
}

int64_t KernelModel::instructions(const Slice &slice) const {
  int64_t total = 0;
  for (const Cost &c : costs) {
    int64_t runs = c.perRun;
    for (int r : c.ranges)
      runs = cost::satMul(runs, r < 0 ? std::max<int64_t>(0, slice.last[-1 - r] -
                                                                 slice.first[-1 - r])
                                      : loopTrips[r]);
    total = cost::satAdd(total, runs);
  }
  return total;
}
