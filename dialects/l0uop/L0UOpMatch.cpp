//===- L0UOpMatch.cpp - Structural matches of l0uop kernels ------------===//
//
// The matrix product match (L0UOpMatch.h): parallel RANGEs i and j, a loop
// RANGE k folded by REDUCE add of a product of two loads whose indices are
// affine in i, j and k (strides read off the INDEX arithmetic), and the ops
// outside the k loop.
//
//===----------------------------------------------------------------------===//
#include "synpl/Dialect/L0UOp/L0UOpMatch.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace synpl::l0uop {
namespace {

static bool isParallel(RangeOp r) { return r.getKind() != RangeKind::loop; }

class Matcher {
public:
  explicit Matcher(KernelOp kernel) : kernel(kernel) {}
  std::optional<MatmulStructure> match();

private:
  std::optional<MatmulAffine> affine(Value v, unsigned depth = 0);
  std::optional<MatmulAffine> offsetOf(IndexOp index);
  bool scalarOk(Operation *op);

  KernelOp kernel;
  MatmulStructure m;
};

std::optional<MatmulAffine> Matcher::affine(Value v, unsigned depth) {
  if (depth > 32)
    return std::nullopt;
  if (v == m.ri.getResult())
    return MatmulAffine{0, 1, 0, 0};
  if (v == m.rj.getResult())
    return MatmulAffine{0, 0, 1, 0};
  if (v == m.rk.getResult())
    return MatmulAffine{0, 0, 0, 1};
  Operation *def = v.getDefiningOp();
  if (!def || !v.getType().isIntOrIndex())
    return std::nullopt;
  if (auto c = dyn_cast<ConstOp>(def)) {
    if (auto attr = dyn_cast<IntegerAttr>(c.getValue()))
      return MatmulAffine{attr.getValue().getSExtValue(), 0, 0, 0};
    return std::nullopt;
  }
  auto operand = [&](unsigned n) { return affine(def->getOperand(n), depth + 1); };
  auto scaled = [](MatmulAffine x, int64_t s) {
    return MatmulAffine{x.c * s, x.i * s, x.j * s, x.k * s};
  };
  auto sum = [](MatmulAffine x, MatmulAffine y) {
    return MatmulAffine{x.c + y.c, x.i + y.i, x.j + y.j, x.k + y.k};
  };
  if (isa<AddOp>(def)) {
    auto x = operand(0), y = operand(1);
    if (!x || !y)
      return std::nullopt;
    return sum(*x, *y);
  }
  auto product = [&](std::optional<MatmulAffine> x,
                     std::optional<MatmulAffine> y) -> std::optional<MatmulAffine> {
    if (!x || !y || (!x->constant() && !y->constant()))
      return std::nullopt;
    return x->constant() ? scaled(*y, x->c) : scaled(*x, y->c);
  };
  if (isa<MulOp>(def))
    return product(operand(0), operand(1));
  if (isa<MulAccOp>(def)) {
    auto p = product(operand(0), operand(1));
    auto z = operand(2);
    if (!p || !z)
      return std::nullopt;
    return sum(*p, *z);
  }
  // Index-width casts keep the value: L0.1 bounds every index in its buffer.
  if (auto cast = dyn_cast<CastOp>(def)) {
    Type from = cast.getSrc().getType();
    if (!from.isIntOrIndex() || from.isInteger(1) ||
        (!from.isIndex() && from.getIntOrFloatBitWidth() < 32))
      return std::nullopt;
    return operand(0);
  }
  return std::nullopt;
}

std::optional<MatmulAffine> Matcher::offsetOf(IndexOp index) {
  auto buf = dyn_cast<BufType>(index.getBuffer().getType());
  if (!buf || index.getIndices().size() != buf.getShape().size())
    return std::nullopt;
  MatmulAffine total;
  int64_t stride = 1;
  for (int64_t d = buf.getRank() - 1; d >= 0; --d) {
    auto x = affine(index.getIndices()[d]);
    if (!x)
      return std::nullopt;
    total.c += x->c * stride;
    total.i += x->i * stride;
    total.j += x->j * stride;
    total.k += x->k * stride;
    stride *= buf.getShape()[d];
  }
  return total;
}

static bool scalarType(Type t) {
  if (t.isIndex() || isa<FloatType>(t))
    return isa<Float32Type, Float16Type, BFloat16Type, Float64Type>(t) ||
           t.isIndex();
  if (auto it = dyn_cast<IntegerType>(t))
    return it.getWidth() == 1 || it.getWidth() == 8 || it.getWidth() == 16 ||
           it.getWidth() == 32 || it.getWidth() == 64;
  return false;
}

/// The ops the epilogue emitter lowers (scalars only).
bool Matcher::scalarOk(Operation *op) {
  for (Type t : op->getResultTypes())
    if (!isa<PtrType>(t) && !scalarType(t))
      return false;
  for (Value v : op->getOperands())
    if (!isa<PtrType, BufType>(v.getType()) && !scalarType(v.getType()))
      return false;
  if (auto load = dyn_cast<LoadOp>(op)) {
    // i1 is stored as a byte; the epilogue does not read its own outputs
    // (other blocks may be writing them).
    if (load.getType().isInteger(1))
      return false;
    auto index = load->getOperand(0).getDefiningOp<IndexOp>();
    auto arg = index ? dyn_cast<BlockArgument>(index.getBuffer()) : nullptr;
    return arg && arg.getArgNumber() < kernel.getNumInputs();
  }
  if (isa<StoreOp>(op))
    return op->getNumOperands() == 2 && !op->getOperand(1).getType().isInteger(1);
  if (isa<ModOp, DivOp>(op))
    return dividesByNonZeroConstant(op); // masked-off elements run it too
  return isa<ConstOp, IndexOp, AddOp, MulOp, MulAccOp, NegOp, ReciprocalOp,
             MaxOp, CmpLtOp, CmpNeOp, WhereOp, Exp2Op, Log2Op, SqrtOp, CastOp,
             ReduceOp>(op);
}

std::optional<MatmulStructure> Matcher::match() {
  if (!kernel.getSharedArgs().empty())
    return std::nullopt;
  SmallVector<Operation *> ops;
  for (Operation &op : kernel.getBody().front())
    ops.push_back(&op);
  // [ops] RANGE i [ops] RANGE j <body> END j END i
  size_t n = 0;
  SmallVector<Operation *> scalar;
  RangeOp ranges[2];
  for (unsigned r = 0; r < 2; ++r) {
    for (; n < ops.size() && !isa<RangeOp>(ops[n]); ++n)
      scalar.push_back(ops[n]);
    if (n == ops.size())
      return std::nullopt;
    ranges[r] = cast<RangeOp>(ops[n++]);
  }
  m.ri = ranges[0];
  m.rj = ranges[1];
  if (ops.size() < n + 2)
    return std::nullopt;
  auto endJ = dyn_cast<EndOp>(ops[ops.size() - 2]);
  auto endI = dyn_cast<EndOp>(ops.back());
  if (!endJ || !endI || endJ.getRange() != m.rj.getResult() ||
      endI.getRange() != m.ri.getResult())
    return std::nullopt;
  for (RangeOp r : {m.ri, m.rj})
    if (!isParallel(r) || r.getLower() != 0 || r.getStep() != 1 ||
        r.getTripCount() < 1)
      return std::nullopt;
  m.M = m.ri.getTripCount();
  m.N = m.rj.getTripCount();
  // The body: one loop RANGE k, its REDUCE, straight-line ops.
  llvm::SetVector<Operation *> kOps;
  for (size_t e = ops.size() - 2; n < e; ++n) {
    Operation *op = ops[n];
    if (auto r = dyn_cast<RangeOp>(op)) {
      if (m.rk || isParallel(r) || r.getLower() != 0 || r.getStep() != 1 ||
          r.getTripCount() < 1)
        return std::nullopt;
      m.rk = r;
      for (++n; n < e && !isa<EndOp>(ops[n]); ++n)
        kOps.insert(ops[n]);
      if (n == e || cast<EndOp>(ops[n]).getRange() != r.getResult())
        return std::nullopt;
      continue;
    }
    scalar.push_back(op);
  }
  if (!m.rk)
    return std::nullopt;
  m.K = m.rk.getTripCount();
  for (Operation *op : scalar) {
    if (!scalarOk(op))
      return std::nullopt;
    if (auto red = dyn_cast<ReduceOp>(op)) {
      if (red.getRange() != m.rk.getResult() || m.reduce ||
          red.getKind() != ReduceKind::add || !red.getType().isF32())
        return std::nullopt;
      m.reduce = red;
    }
    // Nothing outside the loop uses a value of its body but the REDUCE.
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp();
          def && kOps.contains(def) && !isa<ReduceOp>(op))
        return std::nullopt;
  }
  if (!m.reduce)
    return std::nullopt;
  // The loop body: the product of two (cast) loads and its addressing.
  auto product = m.reduce.getValue().getDefiningOp<MulOp>();
  if (!product || !kOps.contains(product) || !product.getType().isF32())
    return std::nullopt;
  llvm::DenseSet<Operation *> slice{product};
  SmallVector<Operation *> work{product};
  LoadOp loads[2];
  bool casted[2] = {false, false};
  for (unsigned s = 0; s < 2; ++s) {
    Value v = product->getOperand(s);
    if (auto cast = v.getDefiningOp<CastOp>(); cast && kOps.contains(cast)) {
      casted[s] = true;
      slice.insert(cast);
      v = cast.getSrc();
    }
    loads[s] = v.getDefiningOp<LoadOp>();
    if (!loads[s] || !kOps.contains(loads[s]))
      return std::nullopt;
    slice.insert(loads[s]);
  }
  Type e0 = loads[0].getType(), e1 = loads[1].getType();
  if (e0 != e1 || casted[0] != casted[1] || (!casted[0] && !e0.isF32()))
    return std::nullopt;
  m.elem = e0;
  m.castToF32 = casted[0];
  MatmulOperand *roles[2] = {nullptr, nullptr};
  for (unsigned s = 0; s < 2; ++s) {
    auto index = loads[s]->getOperand(0).getDefiningOp<IndexOp>();
    if (!index || !kOps.contains(index))
      return std::nullopt;
    auto arg = dyn_cast<BlockArgument>(index.getBuffer());
    // An operand the kernel also writes would race with other blocks.
    if (!arg || arg.getArgNumber() >= kernel.getNumInputs())
      return std::nullopt;
    std::optional<MatmulAffine> off = offsetOf(index);
    if (!off || off->k == 0 || off->c < 0 || off->k < 0)
      return std::nullopt;
    MatmulOperand plan;
    plan.arg = arg.getArgNumber();
    plan.elem = e0;
    plan.base = off->c;
    plan.strideK = off->k;
    if (off->i && !off->j && off->i > 0 && !roles[0]) {
      plan.strideR = off->i;
      m.a = plan;
      roles[0] = &m.a;
    } else if (off->j && !off->i && off->j > 0 && !roles[1]) {
      plan.strideR = off->j;
      m.b = plan;
      roles[1] = &m.b;
    } else {
      return std::nullopt;
    }
    // Its address computation: index arithmetic of the loop only.
    SmallVector<Operation *> addr{index};
    slice.insert(index);
    while (!addr.empty()) {
      Operation *op = addr.pop_back_val();
      for (Value v : op->getOperands()) {
        Operation *def = v.getDefiningOp();
        if (!def || !kOps.contains(def) || !slice.insert(def).second)
          continue;
        if (!isa<ConstOp, AddOp, MulOp, MulAccOp, CastOp>(def))
          return std::nullopt;
        addr.push_back(def);
      }
    }
  }
  // Nothing else runs in the loop (constants are harmless).
  for (Operation *op : kOps)
    if (!slice.contains(op) && !isa<ConstOp>(op))
      return std::nullopt;
  // Loop values are used only inside the loop or by the REDUCE.
  for (Operation *op : kOps)
    for (Operation *user : op->getUsers())
      if (!kOps.contains(user) && user != m.reduce.getOperation())
        return std::nullopt;
  m.scalarOps = std::move(scalar);
  return m;
}

} // namespace

std::optional<MatmulStructure> matchMatmulStructure(KernelOp kernel) {
  return Matcher(kernel).match();
}

} // namespace synpl::l0uop
