//===- NvvmSim.cpp - A CPU SIMT interpreter of NVVM kernels ---------------===//
//
// See NvvmSim.h.
//
//===----------------------------------------------------------------------===//
#include "NvvmSim.h"

#include "../../lib/Conversion/L0ToNVVM/MmaLayout.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using synpl::l0tonvvm::mma::RowCol;
namespace mma = synpl::l0tonvvm::mma;

namespace synpl::test {

float bf16ToFloat(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
uint16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (std::isnan(f))
    return 0x7fc0;
  uint32_t round = 0x7fff + ((bits >> 16) & 1);
  return uint16_t((bits + round) >> 16);
}
float f16ToFloat(uint16_t h) {
  _Float16 x;
  std::memcpy(&x, &h, 2);
  return float(x);
}
uint16_t floatToF16(float f) {
  _Float16 x = _Float16(f);
  uint16_t h;
  std::memcpy(&h, &x, 2);
  return h;
}

unsigned bitsOf(Type t) {
  if (auto it = dyn_cast<IntegerType>(t))
    return it.getWidth();
  return 64;
}
int64_t wrap(int64_t v, unsigned w) {
  if (w >= 64)
    return v;
  uint64_t m = (uint64_t(1) << w) - 1;
  uint64_t u = uint64_t(v) & m;
  if (u >> (w - 1) & 1)
    u |= ~m;
  return int64_t(u);
}
uint64_t uns(int64_t v, unsigned w) {
  return w >= 64 ? uint64_t(v) : uint64_t(v) & ((uint64_t(1) << w) - 1);
}
double roundTo(Type t, double v) {
  if (t.isF32())
    return double(float(v));
  if (t.isBF16())
    return bf16ToFloat(floatToBf16(float(v)));
  if (t.isF16())
    return f16ToFloat(floatToF16(float(v)));
  return v;
}
size_t sizeOf(Type t) {
  if (auto v = dyn_cast<VectorType>(t))
    return v.getNumElements() * sizeOf(v.getElementType());
  if (auto a = dyn_cast<LLVM::LLVMArrayType>(t))
    return a.getNumElements() * sizeOf(a.getElementType());
  if (isa<LLVM::LLVMPointerType>(t))
    return 8;
  return (t.getIntOrFloatBitWidth() + 7) / 8;
}

Val loadScalar(Type t, const uint8_t *p) {
  Val v;
  if (t.isF32()) {
    float f;
    std::memcpy(&f, p, 4);
    v.f = f;
  } else if (t.isF64()) {
    std::memcpy(&v.f, p, 8);
  } else if (t.isBF16() || t.isF16()) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    v.f = t.isBF16() ? bf16ToFloat(h) : f16ToFloat(h);
  } else {
    unsigned w = bitsOf(t);
    int64_t x = 0;
    std::memcpy(&x, p, (w + 7) / 8);
    v.i = wrap(x, w);
  }
  return v;
}
void storeScalar(Type t, uint8_t *p, const Val &v) {
  if (t.isF32()) {
    float f = float(v.f);
    std::memcpy(p, &f, 4);
  } else if (t.isF64()) {
    std::memcpy(p, &v.f, 8);
  } else if (t.isBF16() || t.isF16()) {
    uint16_t h = t.isBF16() ? floatToBf16(float(v.f)) : floatToF16(float(v.f));
    std::memcpy(p, &h, 2);
  } else {
    std::memcpy(p, &v.i, (bitsOf(t) + 7) / 8);
  }
}

/// A scalar or a vector (element by element) from memory.
static Val loadValue(Type t, const uint8_t *p) {
  auto vt = dyn_cast<VectorType>(t);
  if (!vt)
    return loadScalar(t, p);
  Val r;
  size_t es = sizeOf(vt.getElementType());
  for (int64_t x = 0; x < vt.getNumElements(); ++x)
    r.e.push_back(loadScalar(vt.getElementType(), p + x * es));
  return r;
}
static void storeValue(Type t, uint8_t *p, const Val &v) {
  auto vt = dyn_cast<VectorType>(t);
  if (!vt)
    return storeScalar(t, p, v);
  size_t es = sizeOf(vt.getElementType());
  for (int64_t x = 0; x < vt.getNumElements(); ++x)
    storeScalar(vt.getElementType(), p + x * es, v.e.at(x));
}

/// A value of type `t` with every element zero (poison, undef, zero).
static Val zeroOf(Type t) {
  Val r;
  if (auto vt = dyn_cast<VectorType>(t))
    r.e.assign(vt.getNumElements(), Val());
  else if (auto at = dyn_cast<LLVM::LLVMArrayType>(t))
    for (unsigned n = 0; n < at.getNumElements(); ++n)
      r.e.push_back(zeroOf(at.getElementType()));
  else if (auto st = dyn_cast<LLVM::LLVMStructType>(t))
    for (Type e : st.getBody())
      r.e.push_back(zeroOf(e));
  return r;
}

static Type scalarOf(Type t) {
  if (auto vt = dyn_cast<VectorType>(t))
    return vt.getElementType();
  return t;
}

/// Subnormals to (signed) zero: the .ftz forms.
static double flush(double v) {
  if (v != 0 && std::fabs(v) < double(FLT_MIN))
    return std::signbit(v) ? -0.0 : 0.0;
  return v;
}

NvvmSim::NvvmSim(LLVM::LLVMFuncOp func,
                 std::vector<std::vector<uint8_t>> &buffers,
                 int64_t sharedBytes, bool eagerCopies)
    : func(func), sharedBytes(sharedBytes), eager(eagerCopies), pdom(func) {
  for (auto &b : buffers)
    args.push_back({b.data(), b.size()});
}

NvvmSim::NvvmSim(LLVM::LLVMFuncOp func,
                 std::vector<std::pair<uint8_t *, size_t>> buffers,
                 int64_t sharedBytes, bool eagerCopies)
    : func(func), args(std::move(buffers)), sharedBytes(sharedBytes),
      eager(eagerCopies), pdom(func) {}

bool NvvmSim::fail(Operation *op, const llvm::Twine &why) {
  if (error.empty()) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << why << " (block " << bid.x << "," << bid.y << "," << bid.z
       << ") at ";
    op->print(os, OpPrintingFlags().skipRegions());
    error = s;
  }
  return false;
}

bool NvvmSim::check(Operation *op, const uint8_t *p, size_t n, size_t align) {
  if (align > 1 && reinterpret_cast<uintptr_t>(p) % align)
    return fail(op, "misaligned access");
  auto it = allocs.upper_bound(p);
  if (it != allocs.begin()) {
    --it;
    if (p >= it->first && p + n <= it->first + it->second)
      return true;
  }
  return fail(op, "out-of-bounds access");
}

bool NvvmSim::runGrid(Dim3 g, Dim3 b) {
  for (int64_t z = 0; z < g.z; ++z)
    for (int64_t y = 0; y < g.y; ++y)
      for (int64_t x = 0; x < g.x; ++x)
        if (!runBlock({x, y, z}, g, b))
          return false;
  return true;
}

bool NvvmSim::runBlock(Dim3 blockIdx, Dim3 gridDim, Dim3 blockDim) {
  bid = blockIdx;
  grid = gridDim;
  block = blockDim;
  if (func.getNumArguments() != args.size())
    return fail(func, "the kernel has " + llvm::Twine(func.getNumArguments()) +
                          " parameters, given " + llvm::Twine(args.size()) +
                          " buffers");
  // Uninitialised shared memory reads as NaN (0xffff for 16-bit types).
  shared.assign(sharedBytes + 16, 0xff);
  stacks.clear();
  allocs.clear();
  for (auto &a : args)
    allocs[a.first] = a.second;
  allocs[shared.data()] = size_t(sharedBytes);
  int64_t threads = block.count();
  thr.assign(threads, Thread());
  std::vector<Warp> warps;
  for (int64_t w = 0; w * 32 < threads; ++w) {
    Warp warp;
    warp.first = w * 32;
    warp.count = std::min<int64_t>(32, threads - w * 32);
    warp.block = &func.getBody().front();
    warp.at = warp.block->begin();
    for (int l = 0; l < warp.count; ++l) {
      Thread &t = thr[warp.first + l];
      int64_t lin = warp.first + l;
      t.tid = {lin % block.x, lin / block.x % block.y, lin / (block.x * block.y)};
      for (unsigned a = 0; a < func.getNumArguments(); ++a) {
        Val p;
        p.i = int64_t(reinterpret_cast<uintptr_t>(args[a].first));
        t.vals[func.getArgument(a)] = p;
      }
    }
    warps.push_back(warp);
  }
  // Warps run one after another between barriers.
  while (true) {
    unsigned done = 0;
    for (Warp &w : warps) {
      if (w.done) {
        ++done;
        continue;
      }
      if (!runWarp(w))
        return false;
      done += w.done;
    }
    if (done == warps.size())
      break;
    for (Warp &w : warps)
      if (w.done)
        return fail(func, "a warp returned while others wait at a barrier");
  }
  return true;
}

void NvvmSim::land(Thread &t, size_t keep) {
  while (t.groups.size() > keep) {
    for (Copy &c : t.groups.front())
      std::memcpy(c.dst, c.bytes.data(), c.bytes.size());
    t.groups.erase(t.groups.begin());
  }
}

void NvvmSim::jump(Block *dest, ValueRange operands,
                   const std::vector<int> &mask) {
  for (int t : mask) {
    std::vector<Val> vs;
    for (Value a : operands)
      vs.push_back(thr[t].vals.lookup(a));
    for (unsigned n = 0; n < operands.size(); ++n)
      thr[t].vals[dest->getArgument(n)] = vs[n];
  }
}

bool NvvmSim::runWarp(Warp &w) {
  std::vector<int> all;
  for (int l = 0; l < w.count; ++l)
    all.push_back(w.first + l);
  while (true) {
    Operation *op = &*w.at;
    if (isa<NVVM::Barrier0Op>(op)) {
      ++w.at;
      return true;
    }
    if (isa<LLVM::ReturnOp>(op)) {
      w.done = true;
      return true;
    }
    if (auto br = dyn_cast<LLVM::BrOp>(op)) {
      jump(br.getDest(), br.getDestOperands(), all);
      w.block = br.getDest();
      w.at = w.block->begin();
      continue;
    }
    if (auto cbr = dyn_cast<LLVM::CondBrOp>(op)) {
      std::vector<int> yes, no;
      for (int t : all)
        (thr[t].vals.lookup(cbr.getCondition()).i & 1 ? yes : no).push_back(t);
      jump(cbr.getTrueDest(), cbr.getTrueDestOperands(), yes);
      jump(cbr.getFalseDest(), cbr.getFalseDestOperands(), no);
      if (no.empty() || yes.empty()) {
        w.block = yes.empty() ? cbr.getFalseDest() : cbr.getTrueDest();
        w.at = w.block->begin();
        continue;
      }
      // Divergence: both sides run to the immediate post-dominator.
      Block *join = pdom.getNode(w.block)->getIDom()->getBlock();
      if (!join)
        return fail(op, "divergent branch without a join point");
      if (!runDivergent(cbr.getTrueDest(), yes, join) ||
          !runDivergent(cbr.getFalseDest(), no, join))
        return false;
      w.block = join;
      w.at = w.block->begin();
      continue;
    }
    if (!exec(op, all))
      return false;
    ++w.at;
  }
}

bool NvvmSim::runDivergent(Block *blk, std::vector<int> mask, Block *stop) {
  while (blk != stop) {
    for (Operation &op : *blk) {
      if (isa<NVVM::Barrier0Op, NVVM::LdMatrixOp, NVVM::MmaOp>(op))
        return fail(&op, "warp-collective op under divergence");
      if (auto br = dyn_cast<LLVM::BrOp>(op)) {
        jump(br.getDest(), br.getDestOperands(), mask);
        blk = br.getDest();
        break;
      }
      if (auto cbr = dyn_cast<LLVM::CondBrOp>(op)) {
        std::vector<int> yes, no;
        for (int t : mask)
          (thr[t].vals.lookup(cbr.getCondition()).i & 1 ? yes : no).push_back(t);
        jump(cbr.getTrueDest(), cbr.getTrueDestOperands(), yes);
        jump(cbr.getFalseDest(), cbr.getFalseDestOperands(), no);
        Block *join = pdom.getNode(blk)->getIDom()->getBlock();
        if (!join)
          return fail(&op, "divergent branch without a join point");
        if (!yes.empty() && !runDivergent(cbr.getTrueDest(), yes, join))
          return false;
        if (!no.empty() && !runDivergent(cbr.getFalseDest(), no, join))
          return false;
        blk = join;
        break;
      }
      if (isa<LLVM::ReturnOp>(op))
        return fail(&op, "return under divergence");
      if (op.hasTrait<OpTrait::IsTerminator>())
        return fail(&op, "terminator not simulated");
      if (!exec(&op, mask))
        return false;
    }
  }
  return true;
}

bool NvvmSim::execWarpOp(Operation *op, const std::vector<int> &mask) {
  if (mask.size() != 32)
    return fail(op, "warp-collective op without 32 lanes");
  if (auto ld = dyn_cast<NVVM::LdMatrixOp>(op)) {
    if (ld.getNum() != 4)
      return fail(op, "only .x4 is simulated");
    bool trans = ld.getLayout() == NVVM::MMALayout::col;
    std::array<const uint8_t *, 32> rows;
    for (int l = 0; l < 32; ++l) {
      rows[l] = reinterpret_cast<const uint8_t *>(
          thr[mask[l]].vals.lookup(ld.getPtr()).i);
      if (!check(op, rows[l], 16, 16))
        return false;
    }
    for (int t = 0; t < 32; ++t) {
      Val res;
      for (int q = 0; q < 4; ++q) {
        auto at = [&](int r, int c) {
          uint16_t h;
          std::memcpy(&h, rows[8 * q + r] + 2 * c, 2);
          return h;
        };
        int r = t / 4, c = 2 * (t % 4);
        uint16_t lo = trans ? at(c, r) : at(r, c);
        uint16_t hi = trans ? at(c + 1, r) : at(r, c + 1);
        Val reg;
        reg.i = wrap(int64_t(lo | uint32_t(hi) << 16), 32);
        res.e.push_back(reg);
      }
      thr[mask[t]].vals[ld.getResult()] = res;
    }
    return true;
  }
  auto mmaOp = cast<NVVM::MmaOp>(op);
  std::optional<NVVM::MMATypes> ptxType = mmaOp.getMultiplicandAPtxType();
  bool bf16 = ptxType && *ptxType == NVVM::MMATypes::bf16;
  bool tf32 = ptxType && *ptxType == NVVM::MMATypes::tf32;
  int kDim = mmaOp.getShape().getK();
  if (kDim != (tf32 ? 8 : 16) || mmaOp.getShape().getM() != 16 ||
      mmaOp.getShape().getN() != 8)
    return fail(op, "mma shape not simulated");
  // A 16-bit half of a 32-bit register (i32: its bits; vector<2xf16>: the
  // element's value).
  auto half = [&](const Val &reg, int which) -> double {
    if (!reg.e.empty())
      return reg.e[which].f;
    uint16_t h = uint16_t(uns(reg.i, 32) >> (16 * which));
    return bf16 ? bf16ToFloat(h) : f16ToFloat(h);
  };
  // tf32: the upper 19 bits of the f32 register (the rest is ignored).
  auto tf32Of = [&](const Val &reg, Type t) -> double {
    uint32_t bits = uint32_t(uns(reg.i, 32));
    if (isa<FloatType>(t)) {
      float in = float(reg.f);
      std::memcpy(&bits, &in, 4);
    }
    bits &= 0xffffe000u;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  };
  double A[16][16] = {}, B[16][8] = {}, C[16][8];
  for (int l = 0; l < 32; ++l) {
    auto &vals = thr[mask[l]].vals;
    if (tf32) {
      for (int r = 0; r < 4; ++r) {
        RowCol rc = mma::aElementTf32(l, r);
        Value v = mmaOp.getOperandA()[r];
        A[rc.row][rc.col] = tf32Of(vals.lookup(v), v.getType());
      }
      for (int r = 0; r < 2; ++r) {
        RowCol rc = mma::bElementTf32(l, r);
        Value v = mmaOp.getOperandB()[r];
        B[rc.row][rc.col] = tf32Of(vals.lookup(v), v.getType());
      }
    } else {
      for (int r = 0; r < 8; ++r) {
        RowCol rc = mma::aElement(l, r);
        A[rc.row][rc.col] = half(vals.lookup(mmaOp.getOperandA()[r / 2]), r % 2);
      }
      for (int r = 0; r < 4; ++r) {
        RowCol rc = mma::bElement(l, r);
        B[rc.row][rc.col] = half(vals.lookup(mmaOp.getOperandB()[r / 2]), r % 2);
      }
    }
    for (int r = 0; r < 4; ++r) {
      RowCol rc = mma::cElement(l, r);
      C[rc.row][rc.col] = vals.lookup(mmaOp.getOperandC()[r]).f;
    }
  }
  for (int l = 0; l < 32; ++l) {
    Val res;
    for (int r = 0; r < 4; ++r) {
      RowCol rc = mma::cElement(l, r);
      double d = C[rc.row][rc.col];
      for (int k = 0; k < kDim; ++k)
        d += A[rc.row][k] * B[k][rc.col];
      Val x;
      x.f = double(float(d));
      res.e.push_back(x);
    }
    thr[mask[l]].vals[mmaOp.getResult()] = res;
  }
  return true;
}

bool NvvmSim::execIntrinsic(Operation *op, StringRef name,
                            ArrayRef<const Val *> in, Type rt, Val &r) {
  // The PTX math forms the CUDA lowering calls by name: the exact value,
  // rounded to the result type (.ftz: subnormal inputs and results are 0).
  StringRef base = name;
  if (!base.consume_front("llvm.nvvm."))
    return fail(op, "intrinsic not simulated: " + name);
  bool ftz = base.contains(".ftz");
  bool dbl = base.ends_with(".d");
  if (in.size() != 1 || (dbl ? !rt.isF64() : !rt.isF32()))
    return fail(op, "intrinsic form not simulated: " + name);
  double x = ftz ? flush(in[0]->f) : in[0]->f;
  double v;
  if (base.starts_with("ex2.approx"))
    v = std::exp2(x);
  else if (base.starts_with("lg2.approx"))
    v = std::log2(x);
  else if (base.starts_with("sqrt.rn") || base.starts_with("sqrt.approx"))
    v = std::sqrt(x);
  else if (base.starts_with("rcp.rn") || base.starts_with("rcp.approx"))
    v = 1.0 / x;
  else if (base.starts_with("sin.approx"))
    v = std::sin(x);
  else if (base.starts_with("cos.approx"))
    v = std::cos(x);
  else
    return fail(op, "intrinsic not simulated: " + name);
  // The exact result rounded once (double's rounding of sqrt and 1/x is
  // exact enough that this is the correctly rounded f32).
  r.f = roundTo(rt, v);
  if (ftz)
    r.f = flush(r.f);
  return true;
}

bool NvvmSim::execScalar(Operation *op, Type rt, Type it,
                         ArrayRef<const Val *> in, Val &r, bool &known) {
  known = true;
  unsigned w = rt ? bitsOf(rt) : 64;
  unsigned iw = it ? bitsOf(it) : 64;
  auto a = [&](unsigned n) -> const Val & { return *in[n]; };
  bool ok = true;
  auto divisor = [&](uint64_t d) {
    if (!d)
      ok = fail(op, "division by zero");
    return d != 0;
  };
  llvm::TypeSwitch<Operation *>(op)
      // Integers.
      .Case([&](LLVM::AddOp) { r.i = wrap(a(0).i + a(1).i, w); })
      .Case([&](LLVM::SubOp) { r.i = wrap(a(0).i - a(1).i, w); })
      .Case([&](LLVM::MulOp) {
        r.i = wrap(int64_t(uint64_t(a(0).i) * uint64_t(a(1).i)), w);
      })
      .Case([&](LLVM::AndOp) { r.i = wrap(a(0).i & a(1).i, w); })
      .Case([&](LLVM::OrOp) { r.i = wrap(a(0).i | a(1).i, w); })
      .Case([&](LLVM::XOrOp) { r.i = wrap(a(0).i ^ a(1).i, w); })
      .Case([&](LLVM::ShlOp) {
        uint64_t s = uns(a(1).i, w);
        if (s >= w) {
          ok = fail(op, "shift by the width or more (poison)");
          return;
        }
        r.i = wrap(int64_t(uint64_t(a(0).i) << s), w);
      })
      .Case([&](LLVM::LShrOp) {
        uint64_t s = uns(a(1).i, w);
        if (s >= w) {
          ok = fail(op, "shift by the width or more (poison)");
          return;
        }
        r.i = wrap(int64_t(uns(a(0).i, w) >> s), w);
      })
      .Case([&](LLVM::AShrOp) {
        uint64_t s = uns(a(1).i, w);
        if (s >= w) {
          ok = fail(op, "shift by the width or more (poison)");
          return;
        }
        r.i = wrap(a(0).i >> s, w);
      })
      .Case([&](LLVM::UDivOp) {
        if (divisor(uns(a(1).i, w)))
          r.i = wrap(int64_t(uns(a(0).i, w) / uns(a(1).i, w)), w);
      })
      .Case([&](LLVM::URemOp) {
        if (divisor(uns(a(1).i, w)))
          r.i = wrap(int64_t(uns(a(0).i, w) % uns(a(1).i, w)), w);
      })
      .Case([&](LLVM::SDivOp) {
        if (!divisor(uns(a(1).i, w)))
          return;
        if (a(1).i == -1 && a(0).i == wrap(int64_t(1) << (w - 1), w)) {
          ok = fail(op, "signed division overflow");
          return;
        }
        r.i = wrap(a(0).i / a(1).i, w);
      })
      .Case([&](LLVM::SRemOp) {
        if (!divisor(uns(a(1).i, w)))
          return;
        r.i = a(1).i == -1 ? 0 : wrap(a(0).i % a(1).i, w);
      })
      .Case([&](LLVM::SMaxOp) { r.i = std::max(a(0).i, a(1).i); })
      .Case([&](LLVM::SMinOp) { r.i = std::min(a(0).i, a(1).i); })
      .Case([&](LLVM::UMaxOp) {
        r.i = wrap(int64_t(std::max(uns(a(0).i, w), uns(a(1).i, w))), w);
      })
      .Case([&](LLVM::UMinOp) {
        r.i = wrap(int64_t(std::min(uns(a(0).i, w), uns(a(1).i, w))), w);
      })
      .Case([&](LLVM::AbsOp) {
        r.i = wrap(a(0).i < 0 ? int64_t(0 - uint64_t(a(0).i)) : a(0).i, w);
      })
      .Case([&](LLVM::SExtOp) { r.i = wrap(a(0).i, iw); })
      .Case([&](LLVM::ZExtOp) { r.i = int64_t(uns(a(0).i, iw)); })
      .Case([&](LLVM::TruncOp) { r.i = wrap(a(0).i, w); })
      .Case([&](LLVM::PtrToIntOp) { r.i = wrap(a(0).i, w); })
      .Case([&](LLVM::IntToPtrOp) { r.i = a(0).i; })
      .Case([&](LLVM::AddrSpaceCastOp) { r = a(0); })
      .Case([&](LLVM::FreezeOp) { r = a(0); })
      .Case([&](LLVM::ICmpOp c) {
        int64_t x = wrap(a(0).i, iw), y = wrap(a(1).i, iw);
        uint64_t ux = uns(x, iw), uy = uns(y, iw);
        bool v = false;
        switch (c.getPredicate()) {
        case LLVM::ICmpPredicate::eq: v = x == y; break;
        case LLVM::ICmpPredicate::ne: v = x != y; break;
        case LLVM::ICmpPredicate::slt: v = x < y; break;
        case LLVM::ICmpPredicate::sle: v = x <= y; break;
        case LLVM::ICmpPredicate::sgt: v = x > y; break;
        case LLVM::ICmpPredicate::sge: v = x >= y; break;
        case LLVM::ICmpPredicate::ult: v = ux < uy; break;
        case LLVM::ICmpPredicate::ule: v = ux <= uy; break;
        case LLVM::ICmpPredicate::ugt: v = ux > uy; break;
        case LLVM::ICmpPredicate::uge: v = ux >= uy; break;
        }
        r.i = wrap(v, 1);
      })
      .Case([&](LLVM::FCmpOp c) {
        double x = a(0).f, y = a(1).f;
        bool uno = std::isnan(x) || std::isnan(y);
        bool v = false;
        switch (c.getPredicate()) {
        case LLVM::FCmpPredicate::_false: v = false; break;
        case LLVM::FCmpPredicate::oeq: v = !uno && x == y; break;
        case LLVM::FCmpPredicate::ogt: v = !uno && x > y; break;
        case LLVM::FCmpPredicate::oge: v = !uno && x >= y; break;
        case LLVM::FCmpPredicate::olt: v = !uno && x < y; break;
        case LLVM::FCmpPredicate::ole: v = !uno && x <= y; break;
        case LLVM::FCmpPredicate::one: v = !uno && x != y; break;
        case LLVM::FCmpPredicate::ord: v = !uno; break;
        case LLVM::FCmpPredicate::ueq: v = uno || x == y; break;
        case LLVM::FCmpPredicate::ugt: v = uno || x > y; break;
        case LLVM::FCmpPredicate::uge: v = uno || x >= y; break;
        case LLVM::FCmpPredicate::ult: v = uno || x < y; break;
        case LLVM::FCmpPredicate::ule: v = uno || x <= y; break;
        case LLVM::FCmpPredicate::une: v = uno || x != y; break;
        case LLVM::FCmpPredicate::uno: v = uno; break;
        case LLVM::FCmpPredicate::_true: v = true; break;
        }
        r.i = wrap(v, 1);
      })
      .Case([&](LLVM::SelectOp) { r = a(0).i & 1 ? a(1) : a(2); })
      // Floats: computed in double, rounded to the result type.
      .Case([&](LLVM::FAddOp) { r.f = roundTo(rt, a(0).f + a(1).f); })
      .Case([&](LLVM::FSubOp) { r.f = roundTo(rt, a(0).f - a(1).f); })
      .Case([&](LLVM::FMulOp) { r.f = roundTo(rt, a(0).f * a(1).f); })
      .Case([&](LLVM::FDivOp) { r.f = roundTo(rt, a(0).f / a(1).f); })
      .Case([&](LLVM::FRemOp) { r.f = roundTo(rt, std::fmod(a(0).f, a(1).f)); })
      .Case([&](LLVM::FNegOp) { r.f = -a(0).f; })
      .Case([&](LLVM::FAbsOp) { r.f = std::fabs(a(0).f); })
      .Case([&](LLVM::CopySignOp) { r.f = std::copysign(a(0).f, a(1).f); })
      .Case<LLVM::FMAOp, LLVM::FMulAddOp>([&](Operation *) {
        if (rt.isF32())
          r.f = double(std::fmaf(float(a(0).f), float(a(1).f), float(a(2).f)));
        else if (rt.isF64())
          r.f = std::fma(a(0).f, a(1).f, a(2).f);
        else // f16/bf16: the product is exact in double
          r.f = roundTo(rt, a(0).f * a(1).f + a(2).f);
      })
      .Case([&](LLVM::MaximumOp) {
        double x = a(0).f, y = a(1).f;
        r.f = std::isnan(x) || std::isnan(y) ? NAN
              : x == y                       ? (std::signbit(x) ? y : x)
                                             : std::max(x, y);
      })
      .Case([&](LLVM::MinimumOp) {
        double x = a(0).f, y = a(1).f;
        r.f = std::isnan(x) || std::isnan(y) ? NAN
              : x == y                       ? (std::signbit(x) ? x : y)
                                             : std::min(x, y);
      })
      .Case([&](LLVM::MaxNumOp) { r.f = std::fmax(a(0).f, a(1).f); })
      .Case([&](LLVM::MinNumOp) { r.f = std::fmin(a(0).f, a(1).f); })
      .Case([&](LLVM::RoundEvenOp) { r.f = std::nearbyint(a(0).f); })
      .Case([&](LLVM::RoundOp) { r.f = std::round(a(0).f); })
      .Case([&](LLVM::FFloorOp) { r.f = std::floor(a(0).f); })
      .Case([&](LLVM::FCeilOp) { r.f = std::ceil(a(0).f); })
      .Case([&](LLVM::FTruncOp) { r.f = std::trunc(a(0).f); })
      .Case([&](LLVM::Exp2Op) { r.f = roundTo(rt, std::exp2(a(0).f)); })
      .Case([&](LLVM::Log2Op) { r.f = roundTo(rt, std::log2(a(0).f)); })
      .Case([&](LLVM::ExpOp) { r.f = roundTo(rt, std::exp(a(0).f)); })
      .Case([&](LLVM::LogOp) { r.f = roundTo(rt, std::log(a(0).f)); })
      .Case([&](LLVM::SqrtOp) { r.f = roundTo(rt, std::sqrt(a(0).f)); })
      .Case([&](LLVM::FPTruncOp) { r.f = roundTo(rt, a(0).f); })
      .Case([&](LLVM::FPExtOp) { r.f = a(0).f; })
      .Case([&](LLVM::SIToFPOp) { r.f = roundTo(rt, double(wrap(a(0).i, iw))); })
      .Case([&](LLVM::UIToFPOp) { r.f = roundTo(rt, double(uns(a(0).i, iw))); })
      .Case([&](LLVM::FPToSIOp) {
        double x = std::trunc(a(0).f);
        if (std::isnan(x) || x < std::ldexp(-1.0, w - 1) ||
            x >= std::ldexp(1.0, w - 1)) {
          ok = fail(op, "fptosi out of range (poison)");
          return;
        }
        r.i = wrap(int64_t(x), w);
      })
      .Case([&](LLVM::FPToUIOp) {
        double x = std::trunc(a(0).f);
        if (std::isnan(x) || x < 0 || x >= std::ldexp(1.0, w)) {
          ok = fail(op, "fptoui out of range (poison)");
          return;
        }
        r.i = wrap(int64_t(uint64_t(x)), w);
      })
      .Case([&](LLVM::CallIntrinsicOp call) {
        ok = execIntrinsic(op, call.getIntrin(), in, rt, r);
      })
      .Default([&](Operation *) { known = false; });
  return ok;
}

bool NvvmSim::exec(Operation *op, const std::vector<int> &mask) {
  if (isa<NVVM::LdMatrixOp, NVVM::MmaOp>(op))
    return execWarpOp(op, mask);
  if (op->getNumResults() > 1)
    return fail(op, "op with several results not simulated: " +
                        op->getName().getStringRef());
  Type rt = op->getNumResults() ? op->getResult(0).getType() : Type();
  Type it = op->getNumOperands() ? op->getOperand(0).getType() : Type();
  for (int t : mask) {
    Thread &th = thr[t];
    static const Val none;
    auto in = [&](unsigned n) -> const Val & {
      auto found = th.vals.find(op->getOperand(n));
      return found == th.vals.end() ? none : found->second;
    };
    unsigned w = rt ? bitsOf(rt) : 64;
    Val r;
    bool ok = true;
    bool special = true;
    llvm::TypeSwitch<Operation *>(op)
        .Case([&](LLVM::ConstantOp c) {
          if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
            r.i = wrap(i.getValue().getSExtValue(), w);
          else if (auto f = dyn_cast<FloatAttr>(c.getValue()))
            r.f = f.getValueAsDouble();
          else if (auto d = dyn_cast<DenseElementsAttr>(c.getValue()))
            for (Attribute e : d.getValues<Attribute>()) {
              Val x;
              if (auto i = dyn_cast<IntegerAttr>(e))
                x.i = wrap(i.getValue().getSExtValue(), bitsOf(i.getType()));
              else
                x.f = cast<FloatAttr>(e).getValueAsDouble();
              r.e.push_back(x);
            }
          else
            ok = fail(op, "constant not simulated");
        })
        .Case<LLVM::PoisonOp, LLVM::UndefOp, LLVM::ZeroOp>(
            [&](Operation *) { r = zeroOf(rt); })
        .Case([&](NVVM::ThreadIdXOp) { r.i = th.tid.x; })
        .Case([&](NVVM::ThreadIdYOp) { r.i = th.tid.y; })
        .Case([&](NVVM::ThreadIdZOp) { r.i = th.tid.z; })
        .Case([&](NVVM::BlockIdXOp) { r.i = bid.x; })
        .Case([&](NVVM::BlockIdYOp) { r.i = bid.y; })
        .Case([&](NVVM::BlockIdZOp) { r.i = bid.z; })
        .Case([&](NVVM::BlockDimXOp) { r.i = block.x; })
        .Case([&](NVVM::BlockDimYOp) { r.i = block.y; })
        .Case([&](NVVM::BlockDimZOp) { r.i = block.z; })
        .Case([&](NVVM::GridDimXOp) { r.i = grid.x; })
        .Case([&](NVVM::GridDimYOp) { r.i = grid.y; })
        .Case([&](NVVM::GridDimZOp) { r.i = grid.z; })
        .Case([&](NVVM::LaneIdOp) { r.i = t % 32; })
        .Case([&](NVVM::WarpSizeOp) { r.i = 32; })
        .Case([&](LLVM::AddressOfOp a) {
          // Every extern addrspace(3) array is the dynamic shared memory.
          auto [at, fresh] = sharedGlobal.try_emplace(op, false);
          if (fresh) {
            auto global = dyn_cast_or_null<LLVM::GlobalOp>(
                SymbolTable::lookupNearestSymbolFrom(op, a.getGlobalNameAttr()));
            at->second = global && global.getAddrSpace() == 3 &&
                         global.getLinkage() == LLVM::Linkage::External;
          }
          if (!at->second)
            ok = fail(op, "only extern addrspace(3) globals (dynamic shared "
                          "memory) are simulated");
          else
            r.i = int64_t(reinterpret_cast<uintptr_t>(shared.data()));
        })
        .Case([&](LLVM::AllocaOp a) {
          int64_t n = in(0).i;
          size_t bytes = size_t(std::max<int64_t>(n, 0)) * sizeOf(a.getElemType());
          size_t align = std::max<size_t>(a.getAlignment().value_or(1), 16);
          stacks.emplace_back(bytes + align, 0xee);
          uintptr_t p = reinterpret_cast<uintptr_t>(stacks.back().data());
          p = (p + align - 1) / align * align;
          allocs[reinterpret_cast<uint8_t *>(p)] = bytes;
          r.i = int64_t(p);
        })
        .Case([&](LLVM::GEPOp g) {
          Type cur = g.getElemType();
          int64_t off = 0;
          bool first = true;
          for (auto idx : g.getIndices()) {
            int64_t k = isa<IntegerAttr>(idx)
                            ? cast<IntegerAttr>(idx).getValue().getSExtValue()
                            : th.vals.lookup(cast<Value>(idx)).i;
            if (first) {
              off += k * int64_t(sizeOf(cur));
              first = false;
            } else if (auto at = dyn_cast<LLVM::LLVMArrayType>(cur)) {
              cur = at.getElementType();
              off += k * int64_t(sizeOf(cur));
            } else if (auto vt = dyn_cast<VectorType>(cur)) {
              cur = vt.getElementType();
              off += k * int64_t(sizeOf(cur));
            } else {
              ok = fail(op, "GEP form not simulated");
              return;
            }
          }
          r.i = in(0).i + off;
        })
        .Case([&](LLVM::LoadOp l) {
          auto *p = reinterpret_cast<const uint8_t *>(in(0).i);
          size_t n = sizeOf(rt);
          if ((ok = check(op, p, n,
                          l.getAlignment().value_or(std::min<size_t>(n, 4)))))
            r = loadValue(rt, p);
        })
        .Case([&](LLVM::StoreOp s) {
          auto *p = reinterpret_cast<uint8_t *>(in(1).i);
          Type vt = s.getValue().getType();
          if ((ok = check(op, p, sizeOf(vt), s.getAlignment().value_or(1))))
            storeValue(vt, p, in(0));
        })
        .Case([&](LLVM::ExtractValueOp x) {
          const Val *v = &in(0);
          for (int64_t pos : x.getPosition())
            v = &v->e.at(pos);
          r = *v;
        })
        .Case([&](LLVM::InsertValueOp x) {
          r = in(0);
          Val *v = &r;
          for (int64_t pos : x.getPosition())
            v = &v->e.at(pos);
          *v = in(1);
        })
        .Case([&](LLVM::ExtractElementOp) {
          const Val &v = in(0);
          uint64_t k = uns(in(1).i, bitsOf(op->getOperand(1).getType()));
          if (k >= v.e.size())
            ok = fail(op, "extractelement out of range");
          else
            r = v.e[k];
        })
        .Case([&](LLVM::InsertElementOp x) {
          r = th.vals.lookup(x.getVector());
          uint64_t k = uns(th.vals.lookup(x.getPosition()).i,
                           bitsOf(x.getPosition().getType()));
          if (k >= r.e.size())
            ok = fail(op, "insertelement out of range");
          else
            r.e[k] = th.vals.lookup(x.getValue());
        })
        .Case([&](LLVM::ShuffleVectorOp s) {
          const Val &v1 = th.vals.lookup(s.getV1());
          const Val &v2 = th.vals.lookup(s.getV2());
          Val a1 = v1, a2 = v2;
          for (int32_t m : s.getMask()) {
            if (m < 0)
              r.e.push_back(Val());
            else if (size_t(m) < a1.e.size())
              r.e.push_back(a1.e[m]);
            else
              r.e.push_back(a2.e.at(m - a1.e.size()));
          }
        })
        .Case([&](LLVM::BitcastOp) {
          // Through the bytes of the operand's type.
          std::vector<uint8_t> bytes(sizeOf(it), 0);
          storeValue(it, bytes.data(), in(0));
          if (sizeOf(rt) != bytes.size()) {
            ok = fail(op, "bitcast between sizes");
            return;
          }
          r = loadValue(rt, bytes.data());
        })
        .Case([&](NVVM::CpAsyncOp cp) {
          auto *dst = reinterpret_cast<uint8_t *>(in(0).i);
          auto *src = reinterpret_cast<const uint8_t *>(in(1).i);
          size_t size = cp.getSize();
          size_t n = cp.getCpSize() ? size_t(th.vals.lookup(cp.getCpSize()).i) : size;
          if (!(ok = check(op, dst, size, size)))
            return;
          if (n && !(ok = check(op, src, n, size)))
            return;
          Copy c{dst, std::vector<uint8_t>(size, 0)};
          std::memcpy(c.bytes.data(), src, n);
          if (eager)
            std::memcpy(dst, c.bytes.data(), size);
          else
            th.open.push_back(std::move(c));
        })
        .Case([&](NVVM::CpAsyncCommitGroupOp) {
          th.groups.push_back(std::move(th.open));
          th.open.clear();
        })
        .Case([&](NVVM::CpAsyncWaitGroupOp wg) { land(th, wg.getN()); })
        .Default([&](Operation *) { special = false; });
    if (!special) {
      // Element-wise ops: on scalars, or lane by lane on vectors.
      std::vector<const Val *> ins;
      for (unsigned n = 0; n < op->getNumOperands(); ++n)
        ins.push_back(&in(n));
      bool known = true;
      auto vt = rt ? dyn_cast<VectorType>(rt) : VectorType();
      if (!vt) {
        ok = execScalar(op, rt, it, ins, r, known);
      } else {
        Type rs = scalarOf(rt), is = it ? scalarOf(it) : Type();
        for (int64_t lane = 0; ok && known && lane < vt.getNumElements();
             ++lane) {
          std::vector<const Val *> laneIns;
          for (unsigned n = 0; n < ins.size(); ++n) {
            // A scalar operand (select's condition) applies to every lane.
            if (!isa<VectorType>(op->getOperand(n).getType()))
              laneIns.push_back(ins[n]);
            else if (size_t(lane) < ins[n]->e.size())
              laneIns.push_back(&ins[n]->e[lane]);
            else
              laneIns.push_back(&none);
          }
          Val x;
          ok = execScalar(op, rs, is, laneIns, x, known);
          r.e.push_back(std::move(x));
        }
      }
      if (!known)
        return fail(op, "op not simulated: " + op->getName().getStringRef());
    }
    if (!ok)
      return false;
    if (op->getNumResults())
      th.vals[op->getResult(0)] = std::move(r);
  }
  return true;
}

} // namespace synpl::test
