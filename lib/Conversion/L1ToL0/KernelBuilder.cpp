//===- KernelBuilder.cpp - Phase 3 of L1 -> L0: one kernel's UOps ----------===//
//
// A kernel (a Group of Grouping.cpp) becomes an l0uop.kernel: its launch
// shape (the last dimension of its iteration space across a block's
// threads, leading dimensions across blocks, the rest as loops), its
// buffers (the slots it reads, then the slots it writes), and a body that
// evaluates each of its ops at the kernel's index through the op's emission
// pattern (EmitPatterns.h), stores what others read, and closes the ranges.
//
// Evaluation is by value: a value read at an index is a register when this
// kernel computed it at that index, a load from its slot when it is in
// memory, or the value of its defining movement or inlined op at the index
// that op maps it to. A buffer stored flat (read through a reshape) takes
// one linear index; anything else read at a linear index splits it into
// coordinates with DIV and MOD.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"

#include "synpl/Dialect/L0UOp/L0UOpOps.h"

#include <tuple>

using namespace mlir;
using namespace synpl;
using namespace synpl::l1tol0;

//===----------------------------------------------------------------------===//
// Pattern set
//===----------------------------------------------------------------------===//

void EmitPatternSet::insert(std::unique_ptr<EmitPattern> p) {
  OperationName name = p->getRootName();
  assert(!patterns.count(name) && "two emission patterns for one op");
  patterns[name] = std::move(p);
}

std::string synpl::l1tol0::elementwiseOperandsWhyNot(Operation *op) {
  auto rs = tensorOf(op->getResult(0)).getShape();
  for (Value o : op->getOperands()) {
    auto t = tensorOf(o);
    if (t.getShape() != rs && t.getNumElements() != 1)
      return "an operand's shape differs from the result's (implicit "
             "broadcast has no lowering; use l1.broadcast)";
  }
  return "";
}

bool synpl::l1tol0::hasFloatElements(Value v) {
  return isa<FloatType>(tensorOf(v).getElementType());
}

void synpl::l1tol0::populateL1ToL0EmitPatterns(EmitPatternSet &patterns) {
  populateArithmeticEmitPatterns(patterns);
  populateMathEmitPatterns(patterns);
  populateLogicEmitPatterns(patterns);
  populateIndexedEmitPatterns(patterns);
  populateMovementEmitPatterns(patterns);
  populateMatmulEmitPatterns(patterns);
  populateReduceEmitPatterns(patterns);
  populateWindowEmitPatterns(patterns);
  populateRandomEmitPatterns(patterns);
  populateCustomEmitPatterns(patterns);
}

//===----------------------------------------------------------------------===//
// KernelBuilder
//===----------------------------------------------------------------------===//

bool KernelBuilder::CacheKey::operator<(const CacheKey &o) const {
  return std::tie(value, idx, flat) < std::tie(o.value, o.idx, o.flat);
}

Value KernelBuilder::index(int64_t v) {
  return l0uop::ConstOp::create(b, loc, b.getIndexType(), b.getIndexAttr(v));
}

Value KernelBuilder::constant(Type t, double v) {
  if (isa<FloatType>(t))
    return l0uop::ConstOp::create(b, loc, t, b.getFloatAttr(t, v));
  return l0uop::ConstOp::create(b, loc, t, b.getIntegerAttr(t, (int64_t)v));
}

Value KernelBuilder::negInf(Type t) {
  auto ft = cast<FloatType>(t);
  return l0uop::ConstOp::create(
      b, loc, t, FloatAttr::get(t, APFloat::getInf(ft.getFloatSemantics(), true)));
}

Value KernelBuilder::linearize(ArrayRef<Value> idx, ArrayRef<int64_t> shape) {
  if (idx.empty())
    return index(0);
  Value flat = idx[0];
  for (size_t i = 1; i < idx.size(); ++i) {
    flat = op<l0uop::MulOp>(b.getIndexType(), {flat, index(shape[i])});
    flat = op<l0uop::AddOp>(b.getIndexType(), {flat, idx[i]});
  }
  return flat;
}

/// `(flat div stride) mod extent` per dimension, with the division or the
/// remainder left out where it cannot change the value.
SmallVector<Value> KernelBuilder::delinearize(Value flat, ArrayRef<int64_t> shape) {
  SmallVector<Value> sub(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 1) {
      sub[d] = index(0);
      continue;
    }
    Value q = stride == 1 ? flat : op<l0uop::DivOp>(b.getIndexType(), {flat, index(stride)});
    sub[d] = d == 0 ? q : op<l0uop::ModOp>(b.getIndexType(), {q, index(shape[d])});
    stride *= shape[d];
  }
  return sub;
}

/// Both shapes split into runs of dimensions with equal extents (a reshape
/// only merges and splits within a run); each run's indices are linearized
/// and delinearized on their own, so a dimension a reshape keeps costs no
/// arithmetic.
SmallVector<Value> KernelBuilder::reshapeIndex(ArrayRef<Value> idx, ArrayRef<int64_t> out,
                                               ArrayRef<int64_t> in) {
  SmallVector<Value> sub;
  size_t i = 0, j = 0;
  while (i < out.size() || j < in.size()) {
    size_t i0 = i, j0 = j;
    int64_t pa = 1, pb = 1;
    if (i < out.size())
      pa *= out[i++];
    if (j < in.size())
      pb *= in[j++];
    while (pa != pb && (i < out.size() || j < in.size())) {
      if ((pa < pb && i < out.size()) || j >= in.size())
        pa *= out[i++];
      else
        pb *= in[j++];
    }
    if (i - i0 == 1 && j - j0 == 1) {
      sub.push_back(idx[i0]);
      continue;
    }
    if (j == j0)
      continue; // unit dimensions of `out` only
    Value flat = linearize(idx.slice(i0, i - i0), out.slice(i0, i - i0));
    auto part = delinearize(flat, in.slice(j0, j - j0));
    sub.append(part.begin(), part.end());
  }
  return sub;
}

bool KernelBuilder::takesFlatIndex(Value v) const {
  // (A view a copy kernel stored before this kernel is read as a buffer.)
  Operation *def = readsStored(v) ? nullptr : v.getDefiningOp();
  if (def && isa<l1::ReshapeOp, l1::ConstOp>(def))
    return true;
  if (def && (patterns.is(def, OpKind::Movement) || inlined.contains(def)))
    return false;
  Slot *s = slotOf.lookup(v);
  return s && (s->flat || s->shape.size() <= 1);
}

Value KernelBuilder::pointer(Slot *s, ArrayRef<Value> idx, bool flatIdx) {
  Value buf = args.lookup(s);
  auto bt = cast<l0uop::BufType>(buf.getType());
  SmallVector<Value> ind;
  if (flatIdx)
    ind.push_back(idx[0]);
  else if (s->shape.empty() || s->flat)
    ind.push_back(linearize(idx, s->shape));
  else
    ind.assign(idx.begin(), idx.end());
  return l0uop::IndexOp::create(
      b, loc, l0uop::PtrType::get(b.getContext(), bt.getElementType()), buf, ind);
}

Value KernelBuilder::address(Value v, ArrayRef<Value> idx) {
  // (emitKernel checks that a scatter's result has a slot bound to the
  // kernel before its pattern runs.)
  return pointer(slotOf.lookup(v), idx, false);
}

Value KernelBuilder::eval(Value v, ArrayRef<Value> idx, bool flatIdx) {
  // Values computed outside any reduction loop are reused (CSE); inside a
  // loop they die at its END.
  if (loopDepth > 0)
    return evalUncached(v, idx, flatIdx);
  CacheKey key{v.getAsOpaquePointer(), {}, flatIdx};
  for (Value i : idx)
    key.idx.push_back(i.getAsOpaquePointer());
  auto it = cache.find(key);
  if (it != cache.end())
    return it->second;
  Value r = evalUncached(v, idx, flatIdx);
  cache[key] = r;
  return r;
}

Value KernelBuilder::evalUncached(Value v, ArrayRef<Value> idx, bool flatIdx) {
  Type et = tensorOf(v).getElementType();
  Operation *def = v.getDefiningOp();
  if (flatIdx && !takesFlatIndex(v))
    return eval(v, delinearize(idx[0], tensorOf(v).getShape()));
  if (!flatIdx && regs.count(v))
    return regs.lookup(v);
  if (def) {
    if (auto c = dyn_cast<l1::ConstOp>(def))
      return constant(et, c.getValue().convertToDouble());
    bool stored = readsStored(v);
    // A reshape passes a linear index on to what it reshapes.
    if (auto rs = dyn_cast<l1::ReshapeOp>(def); rs && flatIdx && !stored)
      return eval(rs.getOperand(), idx, /*flatIdx=*/true);
    if ((patterns.is(def, OpKind::Movement) && !stored) || inlined.contains(def))
      return emitOp(def, idx);
  }
  Slot *s = slotOf.lookup(v);
  if (!s) {
    broken = true;
    return constant(et, 0);
  }
  Value ptr = pointer(s, idx, flatIdx);
  return op<l0uop::LoadOp>(s->elementType, {ptr});
}

Value KernelBuilder::operand(Operation *o, unsigned i, ArrayRef<Value> idx) {
  Value v = o->getOperand(i);
  auto os = tensorOf(v).getShape(), rs = tensorOf(o->getResult(0)).getShape();
  if (os == rs)
    return eval(v, idx);
  // A one-element operand (the patterns allow no other).
  SmallVector<Value> zeros;
  for (size_t d = 0; d < os.size(); ++d)
    zeros.push_back(index(0));
  return eval(v, zeros);
}

Value KernelBuilder::emitOp(Operation *o, ArrayRef<Value> idx) {
  const EmitPattern *p = patterns.lookup(o);
  if (!p) { // checkLowerable refused it before anything was emitted
    broken = true;
    return constant(tensorOf(o->getResult(0)).getElementType(), 0);
  }
  return p->emit(*this, o, idx);
}

Value KernelBuilder::beginLoop(int64_t trip) {
  ++loopDepth;
  return l0uop::RangeOp::create(b, loc, b.getIndexType(), int64_t{0}, trip, 1,
                                l0uop::RangeKind::loop);
}

void KernelBuilder::endLoop(Value range) {
  --loopDepth;
  l0uop::EndOp::create(b, loc, range);
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

LogicalResult Emitter::emitKernel(OpBuilder &b, Group &g, Launch &launch) {
  if (g.custom)
    return emitCustomKernel(b, g, launch);
  // Slots it reads and writes.
  llvm::SetVector<Slot *> outs, ins;
  for (Operation *op : g.ops)
    if (materialized.contains(op->getResult(0)))
      outs.insert(slotOf.lookup(op->getResult(0)));
  for (auto &[v, dst] : g.copies)
    outs.insert(dst);
  // (A view stored by its own copy kernel is computed there from what it
  // views.)
  for (auto &[v, dst] : g.copies)
    collectLeaves(v, false, [&](Value b2, bool) {
      if (Slot *s = slotOf.lookup(b2))
        if (!outs.contains(s))
          ins.insert(s);
    }, g.id);
  for (Operation *op : g.ops)
    for (Value v : op->getOperands())
      collectLeaves(v, false, [&](Value b2, bool) {
        Operation *def = b2.getDefiningOp();
        if (def && groupOf.count(def) && groupOf.lookup(def) == g.id &&
            !materialized.contains(b2))
          return;
        if (Slot *s = slotOf.lookup(b2))
          if (!outs.contains(s))
            ins.insert(s);
      }, g.id);
  // Launch shape: the last dimension across a block's threads, leading
  // dimensions across blocks, the rest as loops. Flat rows: all leading
  // dimensions as one.
  SmallVector<int64_t> space = g.space;
  if (g.scatter) {
    // One lane per column; the pattern loops over rows and indices.
    space = {g.space.back()};
    if (!slotOf.lookup(g.ops.front()->getResult(0)))
      return fail(g.ops.front(), "its result has no buffer to scatter into");
  } else if (g.flatRows && space.size() != 2) {
    int64_t rows = 1;
    for (int64_t d : ArrayRef<int64_t>(g.space).drop_back())
      rows *= d;
    space = {rows, g.space.back()};
  }
  bool flattened = g.flatRows && space.size() != g.space.size();
  // A copy kernel (a view stored: a layout change) whose last dimension is
  // longer than a block splits it into blocks of `lanes` lanes, the largest
  // divisor up to a block: one lane per element of a block, not one thread
  // per block with the row as a loop of blocks.
  int64_t lanes = 0;
  if (!g.scatter && g.ops.empty() && !g.copies.empty() && !space.empty() &&
      space.back() > kMaxBlock) {
    for (int64_t l = kMaxBlock; l >= 32 && !lanes; --l)
      if (space.back() % l == 0)
        lanes = l;
    if (lanes) {
      space.back() /= lanes;
      space.push_back(lanes);
    }
  }
  SmallVector<l0uop::RangeKind> kinds(space.size(), l0uop::RangeKind::loop);
  int64_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  if (!space.empty()) {
    size_t last = space.size() - 1;
    if (space[last] <= kMaxBlock) {
      kinds[last] = l0uop::RangeKind::local_x;
      block[0] = space[last];
    }
    const l0uop::RangeKind groupKinds[3] = {l0uop::RangeKind::group_x,
                                            l0uop::RangeKind::group_y,
                                            l0uop::RangeKind::group_z};
    unsigned axis = 0;
    for (size_t d = 0; d < space.size() && axis < 3; ++d) {
      if (kinds[d] != l0uop::RangeKind::loop)
        continue;
      if (axis > 0 && space[d] > kMaxGridYZ)
        continue;
      kinds[d] = groupKinds[axis];
      grid[axis] = space[d];
      ++axis;
    }
  }

  if ((int64_t)(ins.size() + outs.size()) > kMaxKernelBuffers)
    return fail(g.ops.empty() ? g.region : g.ops.front(),
                "its kernel would bind " + Twine(ins.size() + outs.size()) +
                    " buffers, more than the " + Twine(kMaxKernelBuffers) +
                    " a kernel may bind");
  MLIRContext *c = ctx;
  SmallVector<Attribute> inRefs, outRefs;
  for (Slot *s : ins)
    inRefs.push_back(FlatSymbolRefAttr::get(c, s->name));
  for (Slot *s : outs)
    outRefs.push_back(FlatSymbolRefAttr::get(c, s->name));
  Location loc = g.loc ? *g.loc : g.ops.front()->getLoc();
  auto kernel = l0uop::KernelOp::create(b, 
      loc, g.name, b.getArrayAttr(inRefs), b.getArrayAttr(outRefs),
      ArrayRef<int64_t>(grid, 3), ArrayRef<int64_t>(block, 3), 0, IntegerAttr());
  Block *body = new Block();
  kernel.getBody().push_back(body);
  llvm::DenseMap<Slot *, Value> args;
  for (Slot *s : ins)
    args[s] = body->addArgument(s->bufType(c), loc);
  for (Slot *s : outs)
    args[s] = body->addArgument(s->bufType(c), loc);

  OpBuilder kb = OpBuilder::atBlockEnd(body);
  KernelBuilder k(kb, loc, patterns, slotOf, inlined, args);
  k.setStoredViews(&storedViews, g.id);
  SmallVector<Value> idx;
  for (auto [d, kind] : llvm::enumerate(kinds))
    idx.push_back(l0uop::RangeOp::create(kb, loc, kb.getIndexType(), int64_t{0}, space[d],
                                            1, kind));
  SmallVector<Value> ranges = idx;
  if (lanes) {
    // The last dimension's index: block * lanes + lane.
    Value lane = idx.pop_back_val(), blockIdx = idx.pop_back_val();
    idx.push_back(k.op<l0uop::MulAccOp>(kb.getIndexType(), {blockIdx, k.index(lanes), lane}));
  }
  if (flattened) {
    Value last = idx.back();
    idx = k.delinearize(ranges[0], ArrayRef<int64_t>(g.space).drop_back());
    idx.push_back(last);
  }
  for (Operation *op : g.ops) {
    k.loc = op->getLoc();
    k.regs[op->getResult(0)] = k.emitOp(op, idx);
  }
  // Stores last, so that every load of this kernel sees the values before
  // the kernel (a state field it reads and rewrites).
  SmallVector<std::pair<Slot *, Value>> stores;
  for (Operation *op : g.ops) {
    Value r = op->getResult(0);
    if (materialized.contains(r) && !g.scatter)
      stores.push_back({slotOf.lookup(r), k.regs.lookup(r)});
  }
  for (auto &[v, dst] : g.copies)
    stores.push_back({dst, k.eval(v, idx)});
  for (auto &[s, value] : stores) {
    Value ptr = k.pointer(s, idx, false);
    l0uop::StoreOp::create(kb, loc, ValueRange{ptr, value});
  }
  for (Value r : llvm::reverse(ranges))
    l0uop::EndOp::create(kb, loc, r);

  for (Slot *s : ins)
    launch.reads.push_back(s);
  for (Slot *s : outs)
    launch.writes.push_back(s);
  if (k.broken)
    return fail(g.ops.empty() ? g.region : g.ops.front(),
                "a value its kernel reads has no buffer");
  return success();
}

