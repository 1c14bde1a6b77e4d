//===- Generator.cpp - Random well-formed L1 tensor graphs ----------------===//
#include "Generator.h"

#include "synpl/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

using namespace mlir;
using namespace synpl;
using namespace synpl::difffuzz;

namespace {

/// Sizes at the lowerings' edges: 1, primes, the host tile's 6 rows and 16
/// lanes, a warp, the 256-long k block, and one either side.
constexpr int64_t kSizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 11, 13, 15, 16, 17,
                              31, 32, 33, 5, 6, 7, 15, 16, 17, 255, 256, 257};

class Generator {
public:
  Generator(MLIRContext *ctx, uint64_t seed, const GenOptions &opt)
      : ctx(ctx), rng(seed), opt(opt) {}

  Program run();

private:
  // --- Randomness.
  int64_t below(int64_t n) { return std::uniform_int_distribution<int64_t>(0, n - 1)(rng); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
  template <typename T> const T &pick(const std::vector<T> &v) { return v[below(v.size())]; }

  // --- Building blocks on the candidate `c`.
  int newSym() {
    // Small sizes mostly; the large ones only fit where little else is big
    // (a contraction past split-K's 4096, a k loop past the tile's blocks).
    static const int64_t kLong[] = {326, 400, 513, 1024, 4095, 4096, 4097, 8191};
    int64_t size = chance(0.8)    ? kSizes[below(16)]
                   : chance(0.85) ? kSizes[below(std::size(kSizes))]
                                  : kLong[below(std::size(kLong))];
    c.syms.push_back(size);
    return c.intern({DimNode::Sym, int(c.syms.size() - 1)});
  }
  int pickDim() {
    std::vector<int> symNodes;
    for (size_t i = 0; i < c.dims.size(); ++i)
      if (c.dims[i].kind == DimNode::Sym)
        symNodes.push_back(int(i));
    if (symNodes.empty() || (c.syms.size() < 6 && chance(0.35)))
      return newSym();
    return pick(symNodes);
  }
  int symOf(int64_t size) {
    c.syms.push_back(size);
    return c.intern({DimNode::Sym, int(c.syms.size() - 1)});
  }
  int lit(int64_t n) { return c.intern({DimNode::Lit, -1, -1, n}); }
  std::vector<int> randomShape(int rank) {
    std::vector<int> s;
    for (int i = 0; i < rank; ++i)
      s.push_back(chance(0.1) ? c.intern({DimNode::Prod, pickDim(), lit(2)}) : pickDim());
    return s;
  }
  /// A new input (numbered before every step: later values shift by one).
  int addInput(std::vector<int> shape, Elem elem, double lo, double hi) {
    int at = int(c.inputs.size());
    for (Step &s : c.steps)
      for (int &o : s.operands)
        if (o >= at)
          ++o;
    for (int &v : scratch)
      if (v >= at)
        ++v;
    bounds.insert(bounds.begin() + at, Bound{lo, hi, 0});
    InputSpec in;
    in.shape = std::move(shape);
    in.elem = elem;
    in.lo = lo;
    in.hi = hi;
    c.inputs.push_back(in);
    return at;
  }
  int add(OpKind kind, std::vector<int> operands, std::vector<int> shape, Elem elem = Elem::F32,
          std::vector<int64_t> ints = {}, double value = 0) {
    Step s;
    s.kind = kind;
    s.operands = std::move(operands);
    s.ints = std::move(ints);
    s.value = value;
    s.result.shape = std::move(shape);
    s.result.elem = elem;
    c.steps.push_back(s);
    // Not known until the program is built: inexact, unbounded.
    bounds.push_back(Bound{-HUGE_VAL, HUGE_VAL, HUGE_VAL});
    return c.numValues() - 1;
  }
  const std::vector<int> &shapeOf(int v) { return c.spec(v).shape; }
  int constLike(int v, double value) { return add(OpKind::Const, {}, shapeOf(v), Elem::F32, {}, value); }

  /// A value of the candidate satisfying `ok`, preferring values nothing
  /// reads yet; -1 if none.
  int pickValue(const std::function<bool(int)> &ok) {
    std::vector<int> unused, any;
    std::vector<int> uses = c.useCounts();
    for (int v = 0; v < c.numValues(); ++v)
      if (ok(v))
        (uses[v] == 0 ? unused : any).push_back(v);
    if (!unused.empty() && (any.empty() || chance(0.75)))
      return pick(unused);
    return any.empty() ? -1 : pick(any);
  }
  bool isF32(int v) { return c.spec(v).elem == Elem::F32; }
  int f32Value(int minRank = 0) {
    return pickValue([&](int v) { return isF32(v) && int(shapeOf(v).size()) >= minRank; });
  }
  /// A value of `shape` for elementwise use: an existing one or a new input.
  int partner(int v, bool exact = false) {
    int other = pickValue([&](int w) {
      return w != v && isF32(w) && c.sameShape(shapeOf(w), shapeOf(v)) &&
             (!exact || bounds[w].exact());
    });
    if (other < 0 || chance(0.3))
      return addInput(shapeOf(v), Elem::F32, -1, 1);
    return other;
  }

  // --- Idioms (on `c`, a copy of `p`); false when not applicable.
  bool unary();
  bool binary();
  bool division();
  bool logSqrt();
  bool matmul();
  bool reduce();
  bool broadcast();
  bool transpose();
  bool reshape();
  bool conv();
  bool softmax();
  bool layerNorm();
  bool pool();
  bool compareSelect();
  bool castOneHot();
  bool gatherScatter();
  bool dropout();
  bool viewRoundTrip();
  bool longContraction();

  /// Builds `c`; on success it becomes `p`.
  bool accept();

  MLIRContext *ctx;
  std::mt19937_64 rng;
  GenOptions opt;
  Program p, c;
  std::vector<Bound> accepted; // of p's values
  std::vector<Bound> bounds;   // of c's values (a new step's unknown)
  std::vector<int> scratch;  // value numbers an idiom holds across addInput
};

bool Generator::accept() {
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(ctx));
  buildSystem(*module, /*cuda=*/false);
  BuiltGraph built;
  std::string why;
  if (!buildGraph(*module, c, "g", opt.limits, built, why))
    return false;
  p = c;
  accepted = built.values;
  return true;
}

bool Generator::unary() {
  int x = f32Value();
  if (x < 0)
    return false;
  std::vector<OpKind> kinds = {OpKind::Neg, OpKind::Abs, OpKind::Tanh, OpKind::Cos, OpKind::Exp};
  if (bounds[x].exact())
    kinds.push_back(OpKind::Sign);
  add(pick(kinds), {x}, shapeOf(x));
  return true;
}

bool Generator::binary() {
  int x = f32Value();
  if (x < 0)
    return false;
  static const std::vector<OpKind> kinds = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Max,
                                            OpKind::Min};
  int y;
  if (shapeOf(x).size() >= 2 && chance(0.3)) {
    // A lower-rank operand broadcast to x's shape (a bias).
    std::vector<int> tail(shapeOf(x).begin() + 1, shapeOf(x).end());
    scratch = {x};
    int b = addInput(tail, Elem::F32, -1, 1);
    x = scratch[0];
    y = add(OpKind::Broadcast, {b}, shapeOf(x));
  } else {
    scratch = {x};
    y = partner(x);
    x = scratch[0];
  }
  add(pick(kinds), chance(0.5) ? std::vector<int>{x, y} : std::vector<int>{y, x}, shapeOf(x));
  return true;
}

bool Generator::division() {
  int x = f32Value();
  if (x < 0)
    return false;
  scratch = {x};
  int y = partner(x);
  x = scratch[0];
  int a = add(OpKind::Abs, {y}, shapeOf(x));
  int k = constLike(x, pick(std::vector<double>{0.5, 1.0, 2.0}));
  int d = add(OpKind::Add, {a, k}, shapeOf(x));
  if (chance(0.5))
    add(OpKind::Div, {x, d}, shapeOf(x));
  else
    add(OpKind::Mul, {x, add(OpKind::Reciprocal, {d}, shapeOf(x))}, shapeOf(x));
  return true;
}

bool Generator::logSqrt() {
  int x = f32Value();
  if (x < 0)
    return false;
  if (chance(0.5)) {
    int a = add(OpKind::Abs, {x}, shapeOf(x));
    int one = constLike(x, 1.0);
    add(OpKind::Log, {add(OpKind::Add, {a, one}, shapeOf(x))}, shapeOf(x));
  } else {
    int sq = add(OpKind::Mul, {x, x}, shapeOf(x));
    int q = constLike(x, 0.25);
    add(OpKind::Sqrt, {add(OpKind::Add, {sq, q}, shapeOf(x))}, shapeOf(x));
  }
  return true;
}

bool Generator::matmul() {
  int x = f32Value(2);
  if (x < 0)
    return false;
  std::vector<int> ls = shapeOf(x);
  int k = ls.back();
  int n = pickDim();
  std::vector<int> rs(ls.begin(), ls.end() - 2);
  if (ls.size() > 3 && chance(0.5)) {
    // Not batched over all leading dims: flatten x to [rows, k] first.
    int rows = ls[0];
    for (size_t i = 1; i + 1 < ls.size(); ++i)
      rows = c.intern({DimNode::Prod, rows, ls[i]});
    x = add(OpKind::Reshape, {x}, {rows, k});
    ls = shapeOf(x);
    rs.clear();
  }
  rs.push_back(k);
  rs.push_back(n);
  scratch = {x};
  int w = pickValue([&](int v) { return isF32(v) && c.sameShape(shapeOf(v), rs); });
  if (w < 0 || chance(0.5))
    w = addInput(rs, Elem::F32, -1, 1);
  x = scratch[0];
  std::vector<int> out(ls.begin(), ls.end() - 1);
  out.push_back(n);
  int y = add(OpKind::Matmul, {x, w}, out);
  // Keep magnitudes near 1: scale by a power of two near 1 / k.
  int64_t kk = c.size(k);
  if (kk > 2 && chance(0.7)) {
    double s = std::ldexp(1.0, -int(std::ceil(std::log2(double(kk)))));
    int scalar = add(OpKind::Const, {}, {}, Elem::F32, {}, s);
    add(OpKind::Scale, {y, scalar}, out);
  }
  return true;
}

bool Generator::reduce() {
  int x = f32Value(1);
  if (x < 0)
    return false;
  OpKind kind = pick(std::vector<OpKind>{OpKind::ReduceSum, OpKind::ReduceMean, OpKind::ReduceMax});
  std::vector<int> s = shapeOf(x);
  int64_t axis = chance(0.15) ? -1 : below(s.size());
  std::vector<int> out;
  if (axis >= 0) {
    out = s;
    out.erase(out.begin() + axis);
  }
  int r = add(kind, {x}, out, Elem::F32, {axis});
  if (kind == OpKind::ReduceSum && chance(0.6)) {
    int64_t n = axis >= 0 ? c.size(s[axis]) : c.elements(x);
    double k = std::ldexp(1.0, -int(std::ceil(std::log2(double(std::max<int64_t>(n, 1))))));
    add(OpKind::Scale, {r, add(OpKind::Const, {}, {}, Elem::F32, {}, k)}, out);
  }
  return true;
}

bool Generator::broadcast() {
  int x = f32Value();
  if (x < 0 || shapeOf(x).size() >= 6)
    return false;
  std::vector<int> s = shapeOf(x);
  int at = int(below(s.size() + 1));
  std::vector<int> out = s;
  out.insert(out.begin() + at, pickDim());
  std::vector<int64_t> dims;
  if (at != 0 || chance(0.5))
    for (int i = 0; i < int(s.size()); ++i)
      dims.push_back(i < at ? i : i + 1);
  add(OpKind::Broadcast, {x}, out, Elem::F32, dims);
  return true;
}

bool Generator::transpose() {
  int x = f32Value(2);
  if (x < 0)
    return false;
  std::vector<int> s = shapeOf(x);
  std::vector<int64_t> perm(s.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<int> out;
  for (int64_t d : perm)
    out.push_back(s[d]);
  add(OpKind::Transpose, {x}, out, Elem::F32, perm);
  return true;
}

bool Generator::reshape() {
  int x = f32Value(1);
  if (x < 0)
    return false;
  std::vector<int> s = shapeOf(x);
  std::vector<int> splittable;
  for (size_t i = 0; i < s.size(); ++i)
    if (c.dims[s[i]].kind == DimNode::Prod)
      splittable.push_back(int(i));
  std::vector<int> out = s;
  if (!splittable.empty() && chance(0.5)) {
    int i = pick(splittable);
    const DimNode n = c.dims[s[i]];
    out[i] = n.a;
    out.insert(out.begin() + i + 1, n.b);
  } else if (s.size() >= 2 && chance(0.8)) {
    int i = int(below(s.size() - 1));
    out[i] = c.intern({DimNode::Prod, s[i], s[i + 1]});
    out.erase(out.begin() + i + 1);
  } else {
    out.insert(out.begin() + below(s.size() + 1), lit(1));
  }
  if (out.size() > 6)
    return false;
  add(OpKind::Reshape, {x}, out);
  return true;
}

bool Generator::conv() {
  // [N, C, S...] (or channels last [N, S..., C]) with 1 to 3 spatial dims:
  // an existing value of that rank or a new input.
  int spatial = 1 + int(below(3));
  int rank = spatial + 2;
  bool last = chance(0.3);
  int x = pickValue([&](int v) { return isF32(v) && int(shapeOf(v).size()) == rank; });
  if (x < 0 || chance(0.4))
    x = addInput(randomShape(rank), Elem::F32, -1, 1);
  std::vector<int> s = shapeOf(x);
  int n = s[0], ch = last ? s.back() : s[1];
  std::vector<int64_t> ks, ss, ps;
  std::vector<int> outs, kdims;
  for (int d = 0; d < spatial; ++d) {
    int64_t k = pick(std::vector<int64_t>{1, 2, 3, 3, 5});
    int64_t st = chance(0.25) ? 2 : 1;
    int64_t pad = below(k / 2 + 1);
    ks.push_back(k), ss.push_back(st), ps.push_back(pad);
    int in = s[last ? 1 + d : 2 + d];
    outs.push_back(c.intern({DimNode::Conv, in, -1, 0, k, st, pad}));
    kdims.push_back(lit(k));
  }
  std::vector<int64_t> ints = ks;
  ints.insert(ints.end(), ss.begin(), ss.end());
  ints.insert(ints.end(), ps.begin(), ps.end());
  ints.push_back(last ? 1 : 0);
  std::vector<int> u = {n};
  u.insert(u.end(), outs.begin(), outs.end());
  if (last) {
    u.insert(u.end(), kdims.begin(), kdims.end());
    u.push_back(ch);
  } else {
    u.push_back(ch);
    u.insert(u.end(), kdims.begin(), kdims.end());
  }
  if (u.size() > 6)
    return false;
  int unfolded = add(OpKind::Unfold, {x}, u, Elem::F32, ints);
  if (chance(0.3)) {
    // The input gradient's shape: fold the windows back.
    std::vector<int> back = {n};
    if (!last)
      back.push_back(ch);
    for (int d = 0; d < spatial; ++d)
      back.push_back(s[last ? 1 + d : 2 + d]);
    if (last)
      back.push_back(ch);
    int t = add(OpKind::Tanh, {unfolded}, u);
    add(OpKind::Fold, {t}, back, Elem::F32, ints);
    return true;
  }
  // The convolution: rows [N O...], columns [window], times [window, C_out].
  int rows = n;
  for (int o : outs)
    rows = c.intern({DimNode::Prod, rows, o});
  std::vector<int> window(u.begin() + 1 + spatial, u.end());
  int cols = window[0];
  for (size_t i = 1; i < window.size(); ++i)
    cols = c.intern({DimNode::Prod, cols, window[i]});
  int flat = add(OpKind::Reshape, {unfolded}, {rows, cols});
  scratch = {flat};
  int cout = pickDim();
  int w = addInput({cols, cout}, Elem::F32, -1, 1);
  flat = scratch[0];
  int y = add(OpKind::Matmul, {flat, w}, {rows, cout});
  int64_t kk = c.size(cols);
  double sc = std::ldexp(1.0, -int(std::ceil(std::log2(double(std::max<int64_t>(kk, 1))))));
  add(OpKind::Scale, {y, add(OpKind::Const, {}, {}, Elem::F32, {}, sc)}, {rows, cout});
  return true;
}

/// A value's shape split at its last axis, for ops over that axis: the
/// leading dimensions and the broadcast back from them.
struct LastAxis {
  std::vector<int> shape, lead;
  std::vector<int64_t> dims; // broadcast lead -> shape
  int64_t axis = 0;
};
static LastAxis lastAxisOf(const std::vector<int> &shape) {
  LastAxis a;
  a.shape = shape;
  a.lead.assign(shape.begin(), shape.end() - 1);
  a.dims.resize(a.lead.size());
  std::iota(a.dims.begin(), a.dims.end(), 0);
  a.axis = int64_t(shape.size()) - 1;
  return a;
}

bool Generator::softmax() {
  int x = f32Value(1);
  if (x < 0)
    return false;
  LastAxis a = lastAxisOf(shapeOf(x));
  int m = add(OpKind::ReduceMax, {x}, a.lead, Elem::F32, {a.axis});
  int mb = add(OpKind::Broadcast, {m}, a.shape, Elem::F32, a.dims);
  int e = add(OpKind::Exp, {add(OpKind::Sub, {x, mb}, a.shape)}, a.shape);
  int sum = add(OpKind::ReduceSum, {e}, a.lead, Elem::F32, {a.axis});
  add(OpKind::Div, {e, add(OpKind::Broadcast, {sum}, a.shape, Elem::F32, a.dims)}, a.shape);
  return true;
}

bool Generator::layerNorm() {
  int x = f32Value(1);
  if (x < 0)
    return false;
  LastAxis a = lastAxisOf(shapeOf(x));
  int mu = add(OpKind::Broadcast, {add(OpKind::ReduceMean, {x}, a.lead, Elem::F32, {a.axis})},
               a.shape, Elem::F32, a.dims);
  int d = add(OpKind::Sub, {x, mu}, a.shape);
  int var = add(OpKind::ReduceMean, {add(OpKind::Mul, {d, d}, a.shape)}, a.lead, Elem::F32,
                {a.axis});
  int eps = add(OpKind::Const, {}, a.lead, Elem::F32, {}, 0.25);
  int sd = add(OpKind::Sqrt, {add(OpKind::Add, {var, eps}, a.lead)}, a.lead);
  add(OpKind::Div, {d, add(OpKind::Broadcast, {sd}, a.shape, Elem::F32, a.dims)}, a.shape);
  return true;
}

bool Generator::pool() {
  // A max over the factors of a product dimension (a 2-wide pool window).
  int x = pickValue([&](int v) {
    if (!isF32(v))
      return false;
    for (int d : shapeOf(v))
      if (c.dims[d].kind == DimNode::Prod)
        return true;
    return false;
  });
  if (x < 0)
    return false;
  std::vector<int> s = shapeOf(x), at;
  for (size_t i = 0; i < s.size(); ++i)
    if (c.dims[s[i]].kind == DimNode::Prod)
      at.push_back(int(i));
  int i = pick(at);
  std::vector<int> split = s;
  DimNode n = c.dims[s[i]];
  split[i] = n.a;
  split.insert(split.begin() + i + 1, n.b);
  if (split.size() > 6)
    return false;
  int r = add(OpKind::Reshape, {x}, split);
  std::vector<int> pooled = split;
  pooled.erase(pooled.begin() + i + 1);
  add(OpKind::ReduceMax, {r}, pooled, Elem::F32, {i + 1});
  return true;
}

bool Generator::compareSelect() {
  int a = pickValue([&](int v) { return isF32(v) && bounds[v].exact(); });
  if (a < 0)
    return false;
  scratch = {a};
  int b = chance(0.5) ? constLike(a, pick(std::vector<double>{0.0, 0.25, -0.5}))
                      : partner(a, /*exact=*/true);
  a = scratch[0];
  int64_t pred = below(6);
  int cnd = add(OpKind::Cmp, {a, b}, shapeOf(a), Elem::I1, {pred});
  if (chance(0.3)) {
    add(OpKind::Cast, {cnd}, shapeOf(a), Elem::F32);
    return true;
  }
  scratch = {cnd, a};
  int t = partner(a);
  cnd = scratch[0], a = scratch[1];
  add(OpKind::Select, {cnd, t, a}, shapeOf(a));
  return true;
}

bool Generator::castOneHot() {
  if (chance(0.5)) {
    int64_t classes = pick(std::vector<int64_t>{1, 3, 7, 10, 16, 17});
    int labels = addInput(randomShape(1 + int(below(2))), Elem::UI8, 0, double(classes));
    std::vector<int> out = shapeOf(labels);
    out.push_back(lit(classes));
    add(OpKind::OneHot, {labels}, out, Elem::F32, {classes});
    return true;
  }
  // Integers to floats, or exact floats truncated to ui8 and back.
  if (chance(0.5)) {
    int in = addInput(randomShape(1 + int(below(3))), Elem::UI8, 0, 255);
    add(OpKind::Cast, {in}, shapeOf(in), Elem::F32);
  } else {
    int in = addInput(randomShape(1 + int(below(3))), Elem::F32, -0.75, 200);
    int u8 = add(OpKind::Cast, {in}, shapeOf(in), Elem::UI8);
    add(OpKind::Cast, {u8}, shapeOf(in), Elem::F32);
  }
  return true;
}

bool Generator::gatherScatter() {
  if (chance(0.5)) {
    int table = pickValue([&](int v) { return isF32(v) && shapeOf(v).size() == 2; });
    if (table < 0 || chance(0.3))
      table = addInput({pickDim(), pickDim()}, Elem::F32, -1, 1);
    scratch = {table};
    int64_t rows = std::min<int64_t>(c.size(shapeOf(table)[0]), 255);
    int ids = addInput(randomShape(1 + int(below(3))), Elem::UI8, 0, double(rows));
    table = scratch[0];
    std::vector<int> out = shapeOf(ids);
    out.push_back(shapeOf(table)[1]);
    add(OpKind::Gather, {table, ids}, out);
    return true;
  }
  int src = f32Value(2);
  if (src < 0)
    return false;
  std::vector<int> s = shapeOf(src);
  std::vector<int> idShape(s.begin(), s.end() - 1);
  int rows = pickDim();
  scratch = {src};
  int ids = addInput(idShape, Elem::UI8, 0, double(std::min<int64_t>(c.size(rows), 255)));
  src = scratch[0];
  add(OpKind::ScatterAdd, {src, ids}, {rows, s.back()});
  return true;
}

bool Generator::dropout() {
  int x = f32Value();
  if (x < 0)
    return false;
  int counter = add(OpKind::Const, {}, {}, Elem::F32, {},
                    pick(std::vector<double>{0, 1, 7, 123456}));
  int u = add(OpKind::Random, {counter}, shapeOf(x), Elem::F32,
              {int64_t(below(1000)), int64_t(below(4))});
  int keep = add(OpKind::Cmp, {u, constLike(x, 0.25)}, shapeOf(x), Elem::I1, {/*ge*/ 5});
  int scaled = add(OpKind::Mul, {x, constLike(x, 1.25)}, shapeOf(x));
  add(OpKind::Select, {keep, scaled, constLike(x, 0.0)}, shapeOf(x));
  return true;
}

bool Generator::viewRoundTrip() {
  // a = f(x); b = a (op) view(a), the view mapping an element to another
  // of a's own shape: a transpose of two equal dimensions, or a reshape
  // that splits and merges back. A fused kernel must not read through the
  // view what it has not computed yet.
  int x = f32Value(1);
  if (x < 0 || chance(0.4)) {
    int d = pickDim();
    std::vector<int> shape = {d, d};
    if (chance(0.4))
      shape.insert(shape.begin() + below(3), pickDim());
    x = addInput(shape, Elem::F32, -1, 1);
  }
  std::vector<int> s = shapeOf(x);
  int a = add(pick(std::vector<OpKind>{OpKind::Tanh, OpKind::Neg, OpKind::Abs, OpKind::Cos}),
              {x}, s);
  std::vector<std::pair<int, int>> equal;
  for (size_t i = 0; i < s.size(); ++i)
    for (size_t j = i + 1; j < s.size(); ++j)
      if (c.sameShape({s[i]}, {s[j]}))
        equal.push_back({int(i), int(j)});
  int w;
  if (!equal.empty() && chance(0.8)) {
    auto [i, j] = pick(equal);
    std::vector<int64_t> perm(s.size());
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[i], perm[j]);
    w = add(OpKind::Transpose, {a}, s, Elem::F32, perm);
  } else if (s.size() >= 2) {
    std::vector<int> merged = s;
    merged[0] = c.intern({DimNode::Prod, s[0], s[1]});
    merged.erase(merged.begin() + 1);
    w = add(OpKind::Reshape, {add(OpKind::Reshape, {a}, merged)}, s);
  } else {
    return false;
  }
  static const std::vector<OpKind> kinds = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Max};
  add(pick(kinds), chance(0.5) ? std::vector<int>{a, w} : std::vector<int>{w, a}, s);
  return true;
}

bool Generator::longContraction() {
  // What split-K and split column reductions rewrite: a weight gradient
  // X^T dY over a long batch, or a bias gradient (a sum over the rows).
  int len = symOf(pick(std::vector<int64_t>{4095, 4096, 4097, 5000, 8192}));
  int m = symOf(pick(std::vector<int64_t>{1, 2, 3, 5, 6, 7, 8}));
  int n = symOf(pick(std::vector<int64_t>{1, 2, 4, 5, 7}));
  int dy = addInput({len, n}, Elem::F32, -1, 1);
  double scale = std::ldexp(1.0, -int(std::ceil(std::log2(double(c.size(len))))));
  if (chance(0.6)) {
    scratch = {dy};
    int x = addInput({len, m}, Elem::F32, -1, 1);
    dy = scratch[0];
    int xt = add(OpKind::Transpose, {x}, {m, len}, Elem::F32, {1, 0});
    int g = add(OpKind::Matmul, {xt, chance(0.5) ? dy : add(OpKind::Tanh, {dy}, {len, n})}, {m, n});
    add(OpKind::Scale, {g, add(OpKind::Const, {}, {}, Elem::F32, {}, scale)}, {m, n});
  } else {
    OpKind kind = pick(std::vector<OpKind>{OpKind::ReduceSum, OpKind::ReduceMean, OpKind::ReduceMax});
    int r = add(kind, {dy}, {n}, Elem::F32, {0});
    if (kind == OpKind::ReduceSum)
      add(OpKind::Scale, {r, add(OpKind::Const, {}, {}, Elem::F32, {}, scale)}, {n});
  }
  return true;
}

Program Generator::run() {
  // Inputs: one or two float tensors of rank 1 to 4.
  int inputs = 1 + int(below(2));
  for (int i = 0; i < inputs; ++i) {
    c = p;
    bounds = accepted;
    addInput(randomShape(1 + int(below(4))), Elem::F32, -1, 1);
    if (!accept())
      p.syms = c.syms, p.dims = c.dims; // keep the symbols; retry smaller below
  }
  if (p.inputs.empty()) {
    c = Program();
    bounds.clear();
    addInput({newSym()}, Elem::F32, -1, 1);
    c.syms.back() = 7;
    accept();
  }
  using Idiom = bool (Generator::*)();
  struct Weighted {
    Idiom idiom;
    int weight;
  };
  static const Weighted idioms[] = {
      {&Generator::unary, 4},         {&Generator::binary, 5},     {&Generator::division, 2},
      {&Generator::logSqrt, 2},       {&Generator::matmul, 5},     {&Generator::reduce, 4},
      {&Generator::broadcast, 2},     {&Generator::transpose, 2},  {&Generator::reshape, 3},
      {&Generator::conv, 2},          {&Generator::softmax, 2},    {&Generator::layerNorm, 1},
      {&Generator::pool, 2},          {&Generator::compareSelect, 2},
      {&Generator::castOneHot, 1},    {&Generator::gatherScatter, 2},
      {&Generator::dropout, 1},       {&Generator::viewRoundTrip, 2},
      {&Generator::longContraction, 1}};
  int total = 0;
  for (const Weighted &w : idioms)
    total += w.weight;
  int target = opt.minOps + int(below(opt.maxOps - opt.minOps + 1));
  for (int tries = 0; int(p.steps.size()) < target && tries < 8 * target; ++tries) {
    int r = int(below(total));
    const Weighted *w = idioms;
    while (r >= w->weight)
      r -= w->weight, ++w;
    c = p;
    bounds = accepted;
    scratch.clear();
    if ((this->*(w->idiom))())
      accept();
  }
  return p;
}

} // namespace

Program synpl::difffuzz::generate(MLIRContext *ctx, uint64_t seed, const GenOptions &options) {
  return Generator(ctx, seed, options).run();
}
