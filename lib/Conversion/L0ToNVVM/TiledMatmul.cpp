//===- TiledMatmul.cpp - Tiled (tensor-core) matmul kernels for CUDA -------===//
//
// Matcher recognises the matmul shape structurally (see TiledMatmul.h);
// rankTiles() searches the tile shapes with the cost model of
// docs/cuda-matmul.md; KernelEmitter builds the llvm.func:
//
//   bf16/f16 x bf16/f16 -> f32: block tile BMxBNxBK staged through a
//     `stages`-deep cp.async ring in dynamic shared memory (rows padded by
//     16 bytes: conflict-free ldmatrix), warps of WMxWN, ldmatrix(.trans)
//     feeding mma.sync.m16n8k16.row.col with f32 accumulators in registers;
//     the next k step's fragments are loaded before each step's mma.sync,
//     across the per-tile barrier too.
//   f32 x f32 -> f32 under allowTf32: the same on mma.sync.m16n8k8.tf32,
//     tiles stored [r][k].
//   f32 x f32 -> f32: the same ring (4- or 16-byte cp.async), 256 threads
//     of TMxTN register-blocked FFMA over [k][m] / [k][n] shared tiles.
//
// All re-emit the kernel's scalar UOps outside the k loop (the epilogue:
// bias, activation, stores) once per output element a thread owns, with
// the generic scalar semantics (emitElement), guarded where the tile
// overhangs M or N.
//
//===----------------------------------------------------------------------===//
#include "TiledMatmul.h"
#include "MmaLayout.h"
#include "synpl/Search/Search.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace synpl::l0uop;

namespace synpl::l0tonvvm {
namespace {

//===----------------------------------------------------------------------===//
// Matching
//===----------------------------------------------------------------------===//

/// c + i*I + j*J + k*Kc: an index expression of the kernel's ranges.
struct Affine {
  int64_t c = 0, i = 0, j = 0, k = 0;
  bool constant() const { return !i && !j && !k; }
};

/// One operand of the product: buffer argument `arg`, element (r, k) at
/// base + r*strideR + k*strideK (r = m for A, n for B).
struct OperandPlan {
  unsigned arg = 0;
  Type elem;
  int64_t base = 0, strideR = 0, strideK = 0;
  bool kContig() const { return strideK == 1; }
  bool rContig() const { return strideR == 1; }
};

/// Mma16: bf16/f16 mma.sync m16n8k16; MmaTf32: f32 operands on tf32
/// mma.sync m16n8k8 (only under TiledMatmulOptions::allowTf32); SimtF32:
/// FFMA.
enum class Variant { Mma16, MmaTf32, SimtF32 };
static bool isMma(Variant v) { return v != Variant::SimtF32; }

struct MatmulMatch {
  RangeOp ri, rj, rk;
  int64_t M = 0, N = 0, K = 0;
  OperandPlan a, b;
  ReduceOp reduce;
  Variant variant = Variant::SimtF32;
  Type mmaElem; ///< bf16 or f16
  /// The ops outside the k loop in program order (RANGE/END excluded):
  /// re-emitted per output element.
  SmallVector<Operation *> scalarOps;
};

static bool isParallel(RangeOp r) { return r.getKind() != RangeKind::loop; }

class Matcher {
public:
  explicit Matcher(KernelOp kernel) : kernel(kernel) {}
  std::optional<MatmulMatch> match();

private:
  std::optional<Affine> affine(Value v, unsigned depth = 0);
  std::optional<Affine> offsetOf(IndexOp index);
  bool scalarOk(Operation *op);

  KernelOp kernel;
  MatmulMatch m;
};

std::optional<Affine> Matcher::affine(Value v, unsigned depth) {
  if (depth > 32)
    return std::nullopt;
  if (v == m.ri.getResult())
    return Affine{0, 1, 0, 0};
  if (v == m.rj.getResult())
    return Affine{0, 0, 1, 0};
  if (v == m.rk.getResult())
    return Affine{0, 0, 0, 1};
  Operation *def = v.getDefiningOp();
  if (!def || !v.getType().isIntOrIndex())
    return std::nullopt;
  if (auto c = dyn_cast<ConstOp>(def)) {
    if (auto attr = dyn_cast<IntegerAttr>(c.getValue()))
      return Affine{attr.getValue().getSExtValue(), 0, 0, 0};
    return std::nullopt;
  }
  auto operand = [&](unsigned n) { return affine(def->getOperand(n), depth + 1); };
  auto scaled = [](Affine x, int64_t s) {
    return Affine{x.c * s, x.i * s, x.j * s, x.k * s};
  };
  auto sum = [](Affine x, Affine y) {
    return Affine{x.c + y.c, x.i + y.i, x.j + y.j, x.k + y.k};
  };
  if (isa<AddOp>(def)) {
    auto x = operand(0), y = operand(1);
    if (!x || !y)
      return std::nullopt;
    return sum(*x, *y);
  }
  auto product = [&](std::optional<Affine> x,
                     std::optional<Affine> y) -> std::optional<Affine> {
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

std::optional<Affine> Matcher::offsetOf(IndexOp index) {
  auto buf = dyn_cast<BufType>(index.getBuffer().getType());
  if (!buf || index.getIndices().size() != buf.getShape().size())
    return std::nullopt;
  Affine total;
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

std::optional<MatmulMatch> Matcher::match() {
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
  if (e0 != e1)
    return std::nullopt;
  if ((e0.isBF16() || e0.isF16()) && casted[0] && casted[1]) {
    m.variant = Variant::Mma16;
    m.mmaElem = e0;
  } else if (e0.isF32() && !casted[0] && !casted[1]) {
    m.variant = Variant::SimtF32;
  } else {
    return std::nullopt;
  }
  OperandPlan *roles[2] = {nullptr, nullptr};
  for (unsigned s = 0; s < 2; ++s) {
    auto index = loads[s]->getOperand(0).getDefiningOp<IndexOp>();
    if (!index || !kOps.contains(index))
      return std::nullopt;
    auto arg = dyn_cast<BlockArgument>(index.getBuffer());
    // An operand the kernel also writes would race with other blocks.
    if (!arg || arg.getArgNumber() >= kernel.getNumInputs())
      return std::nullopt;
    std::optional<Affine> off = offsetOf(index);
    if (!off || off->k == 0 || off->c < 0 || off->k < 0)
      return std::nullopt;
    OperandPlan plan;
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

//===----------------------------------------------------------------------===//
// Tile search
//===----------------------------------------------------------------------===//

struct TileConfig {
  int64_t bm = 0, bn = 0, bk = 0, stages = 0;
  int64_t wm = 0, wn = 0; ///< mma: warp tile; simt: thread tile (tm, tn)
  int64_t threads = 0;
  int64_t sharedBytes = 0;
  int64_t regs = 0;
  int64_t blocksPerSM = 0;
  double seconds = 0;
  // Shared layout per operand: true = [k][r] (r contiguous).
  bool aKMajor = false, bKMajor = false;
  int64_t aPitch = 0, bPitch = 0; ///< elements per stored row
  int64_t aTileBytes = 0, bTileBytes = 0;
  int64_t aVec = 1, bVec = 1; ///< elements per cp.async
};

/// Model constants that CudaTarget.h does not state (docs/cuda-matmul.md):
/// shared-memory bandwidth per SM per clock (sm_80 .. sm_90), L2 -> SM
/// bandwidth relative to DRAM, the latency of a global load under load.
constexpr double kSharedBytesPerClock = 128;
constexpr double kL2OverDram = 3;
constexpr double kGlobalLatency = 0.8e-6;
constexpr double kIterationClocks = 150;
constexpr double kBarrierClocks = 50;

/// The SM clock, derived from the FP32 peak: 2 flops per FFMA lane per
/// clock, 64 lanes per SM on sm_80 and 128 on sm_86 .. sm_90 (CUDA C
/// Programming Guide, "Arithmetic Instructions").
static double smClockHz(const cuda::CudaTarget &t) {
  double lanes = t.arch->major == 8 && t.arch->minor == 0 ? 64 : 128;
  return t.arch->fp32Tflops * 1e12 / (t.arch->smCount * 2 * lanes);
}

/// Completes `c` (layouts, bytes, occupancy, time); the reason when it
/// does not fit the target.
static std::optional<std::string>
scoreConfig(const MatmulMatch &m, const cuda::CudaTarget &t, TileConfig &c) {
  const cuda::CudaArch &arch = *t.arch;
  bool mma = isMma(m.variant);
  bool tf32 = m.variant == Variant::MmaTf32;
  int64_t eb = m.variant == Variant::Mma16 ? 2 : 4;
  // Layouts: mma keeps the global contiguous dim contiguous in shared
  // memory (16-byte cp.async, ldmatrix or ldmatrix.trans); simt stores
  // [k][r] (the FFMA loop reads rows of r).
  auto layout = [&](const OperandPlan &op, int64_t rows, bool &kMajor,
                    int64_t &pitch, int64_t &bytes,
                    int64_t &vec) -> std::optional<std::string> {
    int64_t vecElems = 16 / eb;
    if (tf32) {
      // [r][k] always (ldmatrix has no 32-bit .trans): 16-byte copies when
      // k is contiguous, element copies that transpose otherwise.
      kMajor = false;
      vec = (op.kContig() && m.K % vecElems == 0 &&
             op.strideR % vecElems == 0 && op.base % vecElems == 0)
                ? vecElems
                : 1;
      pitch = c.bk + 4; // +16 bytes: odd 16B-chunk pitch
      bytes = rows * pitch * eb;
    } else if (mma) {
      kMajor = !op.kContig();
      if (!op.kContig() && !op.rContig())
        return std::string("an operand is contiguous along neither k nor its rows");
      int64_t contigExtent = op.kContig() ? m.K : (&op == &m.a ? m.M : m.N);
      int64_t otherStride = op.kContig() ? op.strideR : op.strideK;
      if (contigExtent % vecElems || otherStride % vecElems ||
          op.base % vecElems)
        return std::string("an operand's rows are not 16-byte aligned");
      vec = vecElems;
      pitch = (kMajor ? rows : c.bk) + 8; // +16 bytes: odd 16B-chunk pitch
      bytes = (kMajor ? c.bk : rows) * pitch * eb;
    } else {
      kMajor = true;
      int64_t extent = &op == &m.a ? m.M : m.N;
      vec = (op.rContig() && extent % vecElems == 0 &&
             op.strideK % vecElems == 0 && op.base % vecElems == 0)
                ? vecElems
                : 1;
      pitch = rows + 4;
      bytes = c.bk * pitch * eb;
    }
    return std::nullopt;
  };
  if (auto why = layout(m.a, c.bm, c.aKMajor, c.aPitch, c.aTileBytes, c.aVec))
    return why;
  if (auto why = layout(m.b, c.bn, c.bKMajor, c.bPitch, c.bTileBytes, c.bVec))
    return why;
  c.sharedBytes = c.stages * (c.aTileBytes + c.bTileBytes);
  if (c.sharedBytes > arch.maxSharedPerBlock)
    return std::to_string(c.sharedBytes) + " B of shared memory > the " +
           std::to_string(arch.maxSharedPerBlock) + " a block may have";
  if (c.threads > arch.maxThreadsPerBlock)
    return std::to_string(c.threads) + " threads per block";
  // Every thread issues the same number of copies per stage.
  auto chunks = [&](int64_t rows, int64_t vec) { return rows * c.bk / vec; };
  if (chunks(c.bm, c.aVec) % c.threads || chunks(c.bn, c.bVec) % c.threads)
    return std::string("the tile's copies do not divide among the threads");
  // Registers: accumulators, operand registers (mma: two k steps of
  // fragments, the current and the prefetched), ~40 for addresses and loop
  // state.
  int64_t acc = mma ? c.wm * c.wn / 32 : c.wm * c.wn;
  int64_t frag = mma ? 2 * (c.wm / 16 * 4 + c.wn / 8 * 2) : c.wm + c.wn;
  // Each copy a thread issues per stage keeps an address live.
  int64_t copies = chunks(c.bm, c.aVec) / c.threads +
                   chunks(c.bn, c.bVec) / c.threads;
  c.regs = acc + frag + copies + 40;
  // A margin below the limit: ptxas spilled the tf32 64x64 warp tile with
  // element copies at an estimate of 250.
  if (c.regs > int64_t(arch.maxRegistersPerThread) - 8)
    return "~" + std::to_string(c.regs) + " registers per thread";
  int64_t regsPerBlock = ((c.regs + 7) / 8 * 8) * c.threads;
  c.blocksPerSM = std::min<int64_t>(
      {arch.maxBlocksPerSM, arch.maxThreadsPerSM / c.threads,
       arch.registersPerSM / regsPerBlock,
       arch.sharedPerSM / (c.sharedBytes + 1024)});
  if (c.blocksPerSM < 1)
    return std::string("not one block fits an SM");
  // Time (docs/cuda-matmul.md, "Cost model"): a block runs kTiles
  // iterations; one iteration is bound by the busiest SM resource (tensor
  // or FFMA pipe, shared-memory bandwidth, L2 -> SM bandwidth), shared by
  // the blocksPerSM co-resident blocks, or by the global-load latency the
  // (stages - 1) tiles in flight must cover. Blocks run in waves over the
  // SMs.
  double clock = smClockHz(t);
  int64_t tilesM = (m.M + c.bm - 1) / c.bm, tilesN = (m.N + c.bn - 1) / c.bn;
  int64_t kTiles = (m.K + c.bk - 1) / c.bk;
  double flopsK = 2.0 * c.bm * c.bn * c.bk;
  double smFlops =
      tf32  ? t.arch->tensorTf32Tflops * 1e12 / t.arch->smCount
      : mma ? t.tensorFlopsPerSecond() / t.smCount
            : t.fp32FlopsPerSecond() / t.smCount;
  double computeK = flopsK / smFlops;
  // FFMA issue slots are shared with the shared-memory loads of the
  // operands (TM/4 + TN/4 ld.shared.v4 per k) and ~2 address/loop ops.
  if (!mma)
    computeK *= (c.wm * c.wn + (c.wm + c.wn) / 4.0 + 2) / double(c.wm * c.wn);
  double warps = double(c.threads) / 32;
  // Shared bytes per k tile: mma warps read their A rows and B columns
  // (ldmatrix); a simt warp (16 x 2 threads) reads 2 TM-float A pieces and
  // 16 TN-float B pieces per k (lanes with the same piece share the read);
  // the copies write both tiles once.
  double readK = mma ? warps * (c.wm + c.wn) * eb * c.bk
                     : warps * (2 * c.wm + 16 * c.wn) * eb * c.bk;
  double writeK = double(c.bm + c.bn) * c.bk * eb;
  double smemK = (readK + writeK) / (kSharedBytesPerClock * clock);
  double l2K = writeK / (kL2OverDram * t.dramBytesPerSecond() / t.smCount);
  // Fewer than 8 warps per SM leave tensor/FFMA issue slots idle.
  double issue = std::min(1.0, 0.5 + warps * c.blocksPerSM / 16.0);
  double busyK = std::max({computeK, smemK, l2K}) * c.blocksPerSM / issue;
  double latencyK = kGlobalLatency / double(c.stages - 1);
  // Each iteration also pays its barrier; simt also the first shared loads
  // after it before the math restarts (mma prefetches them across it).
  double iteration = std::max(busyK, latencyK) +
                     (mma ? kBarrierClocks : kIterationClocks) / clock;
  int64_t outBytes = 4; // at most one f32 per element, typically
  double epilogue = double(c.bm * c.bn * outBytes) * c.blocksPerSM /
                    (t.dramBytesPerSecond() / t.smCount);
  double block = kTiles * iteration + kGlobalLatency + epilogue;
  int64_t concurrent = t.smCount * c.blocksPerSM;
  int64_t waves = (tilesM * tilesN + concurrent - 1) / concurrent;
  c.seconds = waves * block;
  return std::nullopt;
}

/// The tile search, through the project's search driver: every candidate
/// shape is enumerated, the target's limits filter it (scoreConfig's
/// reasons), the cost model scores it, and the driver keeps the best
/// `keep`, best first. Estimates within 0.1% count as equal (the score is
/// the time on a 0.1% grid); then the earlier -- smaller -- candidate wins.
/// With `report`, the report goes to --synpl-search-report.
static SmallVector<TileConfig> rankTiles(const MatmulMatch &m,
                                         const cuda::CudaTarget &t,
                                         llvm::StringRef kernelName,
                                         unsigned keep, bool report) {
  struct Candidate {
    TileConfig c;
    unsigned index = 0;
  };
  search::SearchSpec<Candidate> spec;
  spec.name = ("L0 tiles @" + kernelName).str();
  bool mmaVariant = isMma(m.variant);
  spec.enumerate = [&](llvm::function_ref<bool(Candidate)> yield) {
    unsigned index = 0;
    auto offer = [&](const TileConfig &c) { return yield({c, index++}); };
    if (mmaVariant) {
      bool tf32 = m.variant == Variant::MmaTf32;
      for (int64_t bm : {64, 128, 256})
        for (int64_t bn : {64, 128, 256})
          for (int64_t bk : tf32 ? std::initializer_list<int64_t>{16, 32}
                                 : std::initializer_list<int64_t>{32, 64})
            for (auto [wm, wn] : {std::pair<int64_t, int64_t>{32, 32}, {64, 32},
                                  {32, 64}, {64, 64}})
              for (int64_t stages : {2, 3, 4, 5}) {
                if (bm % wm || bn % wn)
                  continue;
                int64_t warps = (bm / wm) * (bn / wn);
                if (warps != 4 && warps != 8)
                  continue;
                TileConfig c;
                c.bm = bm, c.bn = bn, c.bk = bk, c.wm = wm, c.wn = wn;
                c.stages = stages;
                c.threads = warps * 32;
                if (!offer(c))
                  return;
              }
      return;
    }
    for (int64_t tm : {4, 8})
      for (int64_t tn : {4, 8})
        for (int64_t bk : {8, 16})
          for (int64_t stages : {2, 3, 4}) {
            TileConfig c;
            c.wm = tm, c.wn = tn, c.bm = 16 * tm, c.bn = 16 * tn;
            c.bk = bk, c.stages = stages, c.threads = 256;
            if (!offer(c))
              return;
          }
  };
  spec.filters.push_back(
      {"fits-" + t.arch->chip(), [&](const Candidate &k) {
         TileConfig c = k.c;
         return scoreConfig(m, t, c);
       }});
  spec.score = [&](const Candidate &k) {
    TileConfig c = k.c;
    (void)scoreConfig(m, t, c);
    double grid = std::log(1.001);
    SmallVector<search::CostTerm> terms;
    terms.push_back({"time_us",
                     std::exp(std::round(std::log(c.seconds * 1e6) / grid) * grid),
                     1});
    // Reported, not weighed.
    terms.push_back({"registers", double(c.regs), 0});
    terms.push_back({"blocks_per_sm", double(c.blocksPerSM), 0});
    terms.push_back({"shared_kib", double(c.sharedBytes) / 1024, 0});
    return terms;
  };
  spec.describe = [&](const Candidate &k) {
    const TileConfig &c = k.c;
    return llvm::formatv("{0}x{1}x{2}, {3} {4}x{5}, {6} stages", c.bm, c.bn,
                         c.bk, mmaVariant ? "warps of" : "threads of", c.wm,
                         c.wn, c.stages)
        .str();
  };
  spec.tieBreakKey = [](const Candidate &k) {
    return llvm::formatv("{0,8}", k.index).str();
  };
  search::SearchOptions options;
  options.reportTop = std::max(keep, 5u);
  search::SearchResult<Candidate> result = search::search(spec, options);
  SmallVector<TileConfig> ranked;
  for (const Candidate &k : result.top) {
    TileConfig c = k.c;
    (void)scoreConfig(m, t, c);
    ranked.push_back(c);
  }
  if (report)
    search::recordSearchReport(std::move(result.report));
  return ranked;
}

//===----------------------------------------------------------------------===//
// Emission
//===----------------------------------------------------------------------===//

class KernelEmitter {
public:
  KernelEmitter(KernelOp kernel, const MatmulMatch &m, const TileConfig &c,
                OpBuilder &b)
      : kernel(kernel), m(m), c(c), b(b),
        loc(kernel.getLoc()), ctx(b.getContext()) {
    i8 = b.getI8Type();
    i32 = b.getI32Type();
    i64 = b.getI64Type();
    f32 = b.getF32Type();
    ptr = LLVM::LLVMPointerType::get(ctx);
    ptrShared = LLVM::LLVMPointerType::get(ctx, 3);
    ptrGlobal = LLVM::LLVMPointerType::get(ctx, 1);
  }

  /// Builds the function at the builder's insertion point; failure: an
  /// epilogue op had no lowering (nothing is left behind by the caller).
  LogicalResult build(StringRef name);

private:
  // Arithmetic helpers.
  Value cst(Type t, int64_t v) {
    return LLVM::ConstantOp::create(b, loc, t, b.getIntegerAttr(t, v));
  }
  Value c32(int64_t v) { return cst(i32, v); }
  Value c64(int64_t v) { return cst(i64, v); }
  Value add(Value x, Value y) { return LLVM::AddOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return LLVM::MulOp::create(b, loc, x, y); }
  Value addC(Value x, int64_t v) {
    return v ? add(x, cst(x.getType(), v)) : x;
  }
  Value mulC(Value x, int64_t v) {
    return v == 1 ? x : mul(x, cst(x.getType(), v));
  }
  Value ext(Value x) { return LLVM::SExtOp::create(b, loc, i64, x); }
  Value lt(Value x, Value y) {
    return LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::slt, x, y);
  }
  Value gepBytes(Value base, Value off) {
    return LLVM::GEPOp::create(b, loc, base.getType(), i8, base,
                               ValueRange{off});
  }
  /// sum over the lane's bits of bit * (f(1 << bit) - f(0)) + f(0): the
  /// fragment maps of MmaLayout.h are bit-linear in the lane (checked by
  /// the unit test), so this is f(lane) for every lane.
  template <typename F> Value laneLinear(F f) {
    int64_t base = f(0);
    Value sum = c32(base);
    for (int bit = 0; bit < 5; ++bit) {
      int64_t w = f(1 << bit) - base;
      if (!w)
        continue;
      Value bitv = LLVM::AndOp::create(
          b, loc, LLVM::LShrOp::create(b, loc, lane, c32(bit)), c32(1));
      sum = add(sum, mulC(bitv, w));
    }
    return sum;
  }

  /// Bytes of an operand element in shared memory.
  int64_t elemBytes() const { return m.variant == Variant::Mma16 ? 2 : 4; }
  /// k per mma.sync: 16 (m16n8k16) for 16-bit operands, 8 for tf32.
  int64_t kStep() const { return m.variant == Variant::MmaTf32 ? 8 : 16; }
  void emitPrologue();
  /// Issues the cp.async copies of k tile `kt` (i32) into stage `stage`.
  void issueLoads(Value kt, Value stage);
  void issueOperand(const OperandPlan &op, bool isA, Value kt,
                    Value stageBase);
  /// mma: the warp's and lane's fragment offsets in a stage.
  void prepareMma();
  /// mma: the A then B fragments of 16-wide k step `kk` of stage `stage`.
  SmallVector<Value> loadFragments(Value stage, int64_t kk);
  /// mma: one k step over the warp tile; updates acc.
  void mmaStep(ArrayRef<Value> frags);
  /// simt: one k tile of FFMA on stage `stage`; updates acc.
  void computeSimt(Value stage);
  LogicalResult emitEpilogue();
  LogicalResult emitElement(Value i, Value j, Value acc);

  KernelOp kernel;
  MatmulMatch m;
  const TileConfig &c;
  OpBuilder &b;
  Location loc;
  MLIRContext *ctx;
  Type i8, i32, i64, f32, ptr, ptrShared, ptrGlobal;

  LLVM::LLVMFuncOp func;
  Value tid, lane, warp, smem;
  Value aFragBase, bFragBase; ///< mma: i32 byte offsets within a stage
  Value tileM, tileN; ///< i32 first row / column of the block's tile
  SmallVector<Value> acc;
  std::string global;
};

LogicalResult KernelEmitter::build(StringRef name) {
  unsigned nArgs = kernel.getNumInputs() + kernel.getNumOutputs();
  auto fnTy = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                          SmallVector<Type>(nArgs, ptr));
  global = (name + "_smem").str();
  LLVM::GlobalOp::create(b, loc, LLVM::LLVMArrayType::get(i8, 0),
                         /*isConstant=*/false, LLVM::Linkage::External, global,
                         Attribute(), /*alignment=*/16, /*addrSpace=*/3);
  func = LLVM::LLVMFuncOp::create(b, loc, name, fnTy);
  func->setAttr(NVVM::NVVMDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func->setAttr(NVVM::NVVMDialect::getMaxntidAttrName(),
                b.getDenseI32ArrayAttr({int32_t(c.threads), 1, 1}));
  // No nvvm.minctasm: holding ptxas to the modelled occupancy made it spill
  // (the epilogue's registers are not in the estimate).
  Block *entry = func.addEntryBlock(b);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entry);
  emitPrologue();

  // The k loop: ^loop(kt, acc...) runs kTiles times over a `stages` ring;
  // tile kt + stages - 1 is in flight while tile kt is multiplied.
  int64_t kTiles = (m.K + c.bk - 1) / c.bk;
  bool mmaPath = isMma(m.variant);
  for (int64_t s = 0; s + 1 < c.stages; ++s) {
    issueLoads(c32(s), c32(s));
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
  }
  // mma: the fragments of k step 0 of the current tile are loop-carried:
  // each iteration loads the next tile's first fragments (after its wait and
  // barrier) before its own last mma step, so the barrier and the ldmatrix
  // latency overlap the tensor-core work.
  SmallVector<Value> frags;
  if (mmaPath) {
    prepareMma();
    NVVM::CpAsyncWaitGroupOp::create(b, loc, c.stages - 2);
    NVVM::Barrier0Op::create(b, loc);
    frags = loadFragments(c32(0), 0);
  }
  SmallVector<Type> carried{i32};
  carried.append(acc.size(), f32);
  for (Value f : frags)
    carried.push_back(f.getType());
  SmallVector<Location> locs(carried.size(), loc);
  Region &body = func.getBody();
  Block *loop = b.createBlock(&body, body.end(), carried, locs);
  Block *step = b.createBlock(&body, body.end());
  Block *exit = b.createBlock(&body, body.end());
  b.setInsertionPointToEnd(entry);
  SmallVector<Value> init{c32(0)};
  init.append(acc.begin(), acc.end());
  init.append(frags.begin(), frags.end());
  LLVM::BrOp::create(b, loc, init, loop);

  b.setInsertionPointToStart(loop);
  Value kt = loop->getArgument(0);
  for (unsigned n = 0; n < acc.size(); ++n)
    acc[n] = loop->getArgument(n + 1);
  for (unsigned n = 0; n < frags.size(); ++n)
    frags[n] = loop->getArgument(acc.size() + 1 + n);
  LLVM::CondBrOp::create(b, loc, lt(kt, c32(kTiles)), step, ValueRange{}, exit,
                         ValueRange{});

  b.setInsertionPointToStart(step);
  Value next = addC(kt, c.stages - 1);
  Value stage = LLVM::URemOp::create(b, loc, kt, c32(c.stages));
  if (mmaPath) {
    // Tile kt + stages - 1 goes to the slot tile kt - 1 used: every warp
    // finished reading it before the barrier that ended iteration kt - 1.
    issueLoads(next, LLVM::URemOp::create(b, loc, next, c32(c.stages)));
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
    int64_t steps = c.bk / kStep();
    for (int64_t kk = 0; kk < steps; ++kk) {
      SmallVector<Value> nextFrags;
      if (kk + 1 < steps) {
        nextFrags = loadFragments(stage, (kk + 1) * kStep());
      } else {
        // Tile kt + 1 has landed for this thread, then for all.
        NVVM::CpAsyncWaitGroupOp::create(b, loc, c.stages - 2);
        NVVM::Barrier0Op::create(b, loc);
        Value following = addC(kt, 1);
        nextFrags = loadFragments(
            LLVM::URemOp::create(b, loc, following, c32(c.stages)), 0);
      }
      mmaStep(frags);
      frags = std::move(nextFrags);
    }
  } else {
    NVVM::CpAsyncWaitGroupOp::create(b, loc, c.stages - 2);
    NVVM::Barrier0Op::create(b, loc);
    // The stage written now was read in the previous iteration, before the
    // barrier every thread has just passed.
    issueLoads(next, LLVM::URemOp::create(b, loc, next, c32(c.stages)));
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
    computeSimt(stage);
  }
  SmallVector<Value> again{addC(kt, 1)};
  again.append(acc.begin(), acc.end());
  again.append(frags.begin(), frags.end());
  LLVM::BrOp::create(b, loc, again, loop);

  b.setInsertionPointToStart(exit);
  for (unsigned n = 0; n < acc.size(); ++n)
    acc[n] = loop->getArgument(n + 1);
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  if (failed(emitEpilogue()))
    return failure();
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  return success();
}

void KernelEmitter::emitPrologue() {
  tid = NVVM::ThreadIdXOp::create(b, loc, i32);
  lane = LLVM::AndOp::create(b, loc, tid, c32(31));
  warp = LLVM::LShrOp::create(b, loc, tid, c32(5));
  smem = LLVM::AddressOfOp::create(b, loc, ptrShared, global);
  // Grouped raster: 8 tile rows per group, so that the blocks running at
  // once share A and B panels in L2.
  int64_t tilesM = (m.M + c.bm - 1) / c.bm, tilesN = (m.N + c.bn - 1) / c.bn;
  int64_t group = std::min<int64_t>(8, tilesM);
  Value bid = NVVM::BlockIdXOp::create(b, loc, i32);
  Value perGroup = c32(group * tilesN);
  Value g = LLVM::UDivOp::create(b, loc, bid, perGroup);
  Value inGroup = LLVM::URemOp::create(b, loc, bid, perGroup);
  Value firstM = mulC(g, group);
  Value rest = LLVM::SubOp::create(b, loc, c32(tilesM), firstM);
  Value size = LLVM::UMinOp::create(b, loc, rest, c32(group));
  Value tm = add(firstM, LLVM::URemOp::create(b, loc, inGroup, size));
  Value tn = LLVM::UDivOp::create(b, loc, inGroup, size);
  tileM = mulC(tm, c.bm);
  tileN = mulC(tn, c.bn);
  int64_t accs = isMma(m.variant) ? c.wm * c.wn / 32 : c.wm * c.wn;
  Value zero = LLVM::ConstantOp::create(b, loc, f32, b.getF32FloatAttr(0));
  acc.assign(accs, zero);
}

void KernelEmitter::issueLoads(Value kt, Value stage) {
  Value stageBytes = c32(c.aTileBytes + c.bTileBytes);
  Value base = mul(stage, stageBytes);
  issueOperand(m.a, true, kt, base);
  issueOperand(m.b, false, kt, add(base, c32(c.aTileBytes)));
}

void KernelEmitter::issueOperand(const OperandPlan &op, bool isA, Value kt,
                                 Value stageBase) {
  int64_t rows = isA ? c.bm : c.bn;
  int64_t extentR = isA ? m.M : m.N;
  bool kMajor = isA ? c.aKMajor : c.bKMajor;
  int64_t pitch = isA ? c.aPitch : c.bPitch;
  int64_t vec = isA ? c.aVec : c.bVec;
  int64_t eb = elemBytes();
  Value tile = isA ? tileM : tileN;
  // Chunks walk the global contiguous dimension fastest (coalesced); a
  // chunk of `vec` elements lies along the shared contiguous dimension.
  bool globalK = op.kContig() && !(op.rContig() && kMajor);
  int64_t fastExtent = globalK ? c.bk : rows;
  int64_t fastChunks = fastExtent / (globalK ? (kMajor ? 1 : vec) : (kMajor ? vec : 1));
  int64_t total = rows * c.bk / vec;
  Value gptr = LLVM::AddrSpaceCastOp::create(
      b, loc, ptrGlobal, func.getArgument(op.arg));
  Value k0 = mulC(kt, c.bk);
  for (int64_t p = 0; p < total / c.threads; ++p) {
    Value chunk = addC(tid, p * c.threads);
    Value fast = LLVM::URemOp::create(b, loc, chunk, c32(fastChunks));
    Value slow = LLVM::UDivOp::create(b, loc, chunk, c32(fastChunks));
    int64_t fastStep = fastExtent / fastChunks;
    Value r, k; // within the tile
    if (globalK) {
      k = mulC(fast, fastStep);
      r = slow;
    } else {
      r = mulC(fast, fastStep);
      k = slow;
    }
    Value gr = add(tile, r), gk = add(k0, k);
    Value valid = LLVM::AndOp::create(b, loc, lt(gr, c32(extentR)),
                                      lt(gk, c32(m.K)));
    Value off = add(add(mulC(ext(gr), op.strideR), mulC(ext(gk), op.strideK)),
                    c64(op.base));
    off = LLVM::SelectOp::create(b, loc, valid, off, c64(0));
    Value src = LLVM::GEPOp::create(b, loc, ptrGlobal, op.elem, gptr,
                                    ValueRange{off});
    Value sOff = kMajor ? add(mulC(k, pitch), r) : add(mulC(r, pitch), k);
    Value dst = gepBytes(smem, add(stageBase, mulC(sOff, eb)));
    int64_t bytes = vec * eb;
    Value size = LLVM::SelectOp::create(b, loc, valid, c32(bytes), c32(0));
    NVVM::CpAsyncOp::create(b, loc, dst, src, bytes,
                            bytes == 16 ? NVVM::LoadCacheModifierKind::CG
                                        : NVVM::LoadCacheModifierKind::CA,
                            size);
  }
}

void KernelEmitter::prepareMma() {
  using namespace mma;
  int64_t warpsN = c.bn / c.wn;
  Value wmRow = mulC(LLVM::UDivOp::create(b, loc, warp, c32(warpsN)), c.wm);
  Value wnCol = mulC(LLVM::URemOp::create(b, loc, warp, c32(warpsN)), c.wn);
  // Per-lane byte offset of the ldmatrix row address for the fragment
  // piece at (r, k) = (0, 0) of the warp's tile; pieces add a constant.
  // ldmatrix works on 16-byte rows of b16: its k coordinates are in b16
  // units, 2 bytes each, whatever the element (a tf32 row holds 4 k).
  int64_t eb = elemBytes();
  auto laneOffset = [&](Operand opnd, bool kMajor, int64_t pitch) {
    return laneLinear([&](int l) {
      RowCol rc = ldmatrixRowAddress(opnd, l, 0, 0, kMajor);
      return kMajor ? int64_t(rc.col * pitch + rc.row) * eb
                    : int64_t(rc.row * pitch * eb + rc.col * 2);
    });
  };
  aFragBase = add(c.aKMajor ? mulC(wmRow, eb) : mulC(wmRow, c.aPitch * eb),
                  laneOffset(Operand::A, c.aKMajor, c.aPitch));
  bFragBase = add(add(c32(c.aTileBytes),
                      c.bKMajor ? mulC(wnCol, eb) : mulC(wnCol, c.bPitch * eb)),
                  laneOffset(Operand::B, c.bKMajor, c.bPitch));
}

SmallVector<Value> KernelEmitter::loadFragments(Value stage, int64_t kk) {
  auto i32x4 = LLVM::LLVMStructType::getLiteral(ctx, {i32, i32, i32, i32});
  // bf16 and tf32 operands are i32 registers, f16 ones vector<2xf16>.
  bool asI32 = m.variant == Variant::MmaTf32 || m.mmaElem.isBF16();
  Type half2 = VectorType::get({2}, b.getF16Type());
  int64_t eb = elemBytes();
  Value stageBase = mul(stage, c32(c.aTileBytes + c.bTileBytes));
  Value aBase = gepBytes(smem, add(stageBase, aFragBase));
  Value bBase = gepBytes(smem, add(stageBase, bFragBase));
  auto piece = [&](Value base, bool kMajor, int64_t pitch, int64_t r,
                   int64_t k) {
    int64_t off = (kMajor ? k * pitch + r : r * pitch + k) * eb;
    return off ? gepBytes(base, c32(off)) : base;
  };
  SmallVector<Value> frags;
  auto ldmatrix = [&](Value p, bool trans) {
    Value res = NVVM::LdMatrixOp::create(
        b, loc, i32x4, p, 4, trans ? NVVM::MMALayout::col : NVVM::MMALayout::row,
        NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8), NVVM::LdStMatrixEltType::B16);
    for (int64_t q = 0; q < 4; ++q) {
      Value v = LLVM::ExtractValueOp::create(b, loc, res, ArrayRef<int64_t>{q});
      frags.push_back(asI32 ? v : Value(LLVM::BitcastOp::create(b, loc, half2, v)));
    }
  };
  // A: WM/16 x4 loads (a0a1 .. a6a7 each); B: one x4 per two n8 blocks
  // (b0b1 b2b3 of block nj, then of block nj + 1).
  for (int64_t mi = 0; mi < c.wm / 16; ++mi)
    ldmatrix(piece(aBase, c.aKMajor, c.aPitch, mi * 16, kk), c.aKMajor);
  for (int64_t nj = 0; nj < c.wn / 8; nj += 2)
    ldmatrix(piece(bBase, c.bKMajor, c.bPitch, nj * 8, kk), c.bKMajor);
  return frags;
}

void KernelEmitter::mmaStep(ArrayRef<Value> frags) {
  auto f32x4 = LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
  NVVM::MMATypes ty = m.variant == Variant::MmaTf32 ? NVVM::MMATypes::tf32
                      : m.mmaElem.isBF16()            ? NVVM::MMATypes::bf16
                                                      : NVVM::MMATypes::f16;
  int64_t mTiles = c.wm / 16, nTiles = c.wn / 8;
  ArrayRef<Value> aFrags = frags.take_front(mTiles * 4);
  ArrayRef<Value> bFrags = frags.drop_front(mTiles * 4);
  for (int64_t mi = 0; mi < mTiles; ++mi)
    for (int64_t nj = 0; nj < nTiles; ++nj) {
      int64_t at = (mi * nTiles + nj) * 4;
      SmallVector<Value> cIn(acc.begin() + at, acc.begin() + at + 4);
      Value d = NVVM::MmaOp::create(
          b, loc, f32x4, aFrags.slice(mi * 4, 4), bFrags.slice(nj * 2, 2), cIn,
          ArrayRef<int64_t>{16, 8, kStep()}, std::nullopt, std::nullopt,
          std::array<NVVM::MMATypes, 2>{ty, ty},
          std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                         NVVM::MMALayout::col});
      for (int64_t q = 0; q < 4; ++q)
        acc[at + q] = LLVM::ExtractValueOp::create(b, loc, d, ArrayRef<int64_t>{q});
    }
}

void KernelEmitter::computeSimt(Value stage) {
  // Thread (tx, ty) of 16x16 owns rows g*(BM/(TM/4)) + 4ty + u and columns
  // h*(BN/(TN/4)) + 4tx + v: vector reads of 4 consecutive floats.
  Value tx = LLVM::URemOp::create(b, loc, tid, c32(16));
  Value ty = LLVM::UDivOp::create(b, loc, tid, c32(16));
  Value stageBase = mul(stage, c32(c.aTileBytes + c.bTileBytes));
  Value aBase = gepBytes(smem, add(stageBase, mulC(ty, 16)));
  Value bBase =
      gepBytes(smem, add(add(stageBase, c32(c.aTileBytes)), mulC(tx, 16)));
  Type v4 = VectorType::get({4}, f32);
  auto row = [&](Value base, int64_t pitch, int64_t k, int64_t groups,
                 int64_t extent) {
    SmallVector<Value> vals;
    for (int64_t g = 0; g < groups; ++g) {
      int64_t off = (k * pitch + g * (extent / groups)) * 4;
      Value p = off ? gepBytes(base, c32(off)) : base;
      Value v = LLVM::LoadOp::create(b, loc, v4, p, /*alignment=*/16);
      for (int64_t u = 0; u < 4; ++u)
        vals.push_back(LLVM::ExtractElementOp::create(b, loc, v, c32(u)));
    }
    return vals;
  };
  for (int64_t k = 0; k < c.bk; ++k) {
    SmallVector<Value> av = row(aBase, c.aPitch, k, c.wm / 4, c.bm);
    SmallVector<Value> bv = row(bBase, c.bPitch, k, c.wn / 4, c.bn);
    for (int64_t x = 0; x < c.wm; ++x)
      for (int64_t y = 0; y < c.wn; ++y) {
        Value &a = acc[x * c.wn + y];
        a = LLVM::FMAOp::create(b, loc, av[x], bv[y], a);
      }
  }
}

LogicalResult KernelEmitter::emitEpilogue() {
  bool guardM = m.M % c.bm != 0, guardN = m.N % c.bn != 0;
  // `cur`: the block the next element's code goes to.
  Block *cur = b.getInsertionBlock();
  auto guarded = [&](Value i, Value j, Value a) -> LogicalResult {
    if (!guardM && !guardN)
      return emitElement(ext(i), ext(j), a);
    Value ok = guardM ? lt(i, c32(m.M)) : Value();
    if (guardN) {
      Value okN = lt(j, c32(m.N));
      ok = ok ? Value(LLVM::AndOp::create(b, loc, ok, okN)) : okN;
    }
    Region &body = func.getBody();
    Block *then = b.createBlock(&body, body.end());
    Block *cont = b.createBlock(&body, body.end());
    b.setInsertionPointToEnd(cur);
    LLVM::CondBrOp::create(b, loc, ok, then, ValueRange{}, cont, ValueRange{});
    b.setInsertionPointToStart(then);
    if (failed(emitElement(ext(i), ext(j), a)))
      return failure();
    LLVM::BrOp::create(b, loc, ValueRange{}, cont);
    b.setInsertionPointToStart(cont);
    cur = cont;
    return success();
  };
  if (isMma(m.variant)) {
    using namespace mma;
    int64_t warpsN = c.bn / c.wn;
    Value rowBase = add(tileM, mulC(LLVM::UDivOp::create(b, loc, warp, c32(warpsN)), c.wm));
    Value colBase = add(tileN, mulC(LLVM::URemOp::create(b, loc, warp, c32(warpsN)), c.wn));
    rowBase = add(rowBase, laneLinear([](int l) { return cElement(l, 0).row; }));
    colBase = add(colBase, laneLinear([](int l) { return cElement(l, 0).col; }));
    int64_t nTiles = c.wn / 8;
    for (int64_t mi = 0; mi < c.wm / 16; ++mi)
      for (int64_t nj = 0; nj < nTiles; ++nj)
        for (int q = 0; q < 4; ++q) {
          // cElement(lane, q) = cElement(lane, 0) + cElement(0, q).
          RowCol d = cElement(0, q);
          Value i = addC(rowBase, mi * 16 + d.row);
          Value j = addC(colBase, nj * 8 + d.col);
          if (failed(guarded(i, j, acc[(mi * nTiles + nj) * 4 + q])))
            return failure();
        }
    cur = b.getInsertionBlock();
    return success();
  }
  cur = b.getInsertionBlock();
  Value tx = LLVM::URemOp::create(b, loc, tid, c32(16));
  Value ty = LLVM::UDivOp::create(b, loc, tid, c32(16));
  Value rowBase = add(tileM, mulC(ty, 4)), colBase = add(tileN, mulC(tx, 4));
  for (int64_t x = 0; x < c.wm; ++x)
    for (int64_t y = 0; y < c.wn; ++y) {
      Value i = addC(rowBase, (x / 4) * (c.bm / (c.wm / 4)) + x % 4);
      Value j = addC(colBase, (y / 4) * (c.bn / (c.wn / 4)) + y % 4);
      if (failed(guarded(i, j, acc[x * c.wn + y])))
        return failure();
    }
  return success();
}

//===----------------------------------------------------------------------===//
// The epilogue: the kernel's scalar UOps at one (i, j)
//===----------------------------------------------------------------------===//

static Type llvmScalar(Type t) {
  if (t.isIndex())
    return IntegerType::get(t.getContext(), 64);
  if (auto it = dyn_cast<IntegerType>(t))
    return IntegerType::get(t.getContext(), it.getWidth());
  return t;
}

LogicalResult KernelEmitter::emitElement(Value i, Value j, Value accValue) {
  llvm::DenseMap<Value, Value> map;
  map[m.ri.getResult()] = i;
  map[m.rj.getResult()] = j;
  auto isUnsigned = [](Type t) {
    return t.isUnsignedInteger() || t.isInteger(1);
  };
  for (Operation *op : m.scalarOps) {
    SmallVector<Value> args;
    for (Value v : op->getOperands()) {
      if (isa<BufType>(v.getType())) {
        args.push_back(Value());
        continue;
      }
      Value mapped = map.lookup(v);
      if (!mapped && !isa<ReduceOp>(op))
        return failure();
      args.push_back(mapped);
    }
    Type resTy = op->getNumResults() ? llvmScalar(op->getResult(0).getType())
                                     : Type();
    Type srcTy = op->getNumOperands() ? op->getOperand(0).getType() : Type();
    bool fp = resTy && isa<FloatType>(resTy);
    Value r = llvm::TypeSwitch<Operation *, Value>(op)
        .Case([&](ConstOp cst) -> Value {
          Attribute attr = cst.getValue();
          if (auto f = dyn_cast<FloatAttr>(attr))
            return LLVM::ConstantOp::create(b, loc, resTy,
                                            b.getFloatAttr(resTy, f.getValueAsDouble()));
          if (auto n = dyn_cast<IntegerAttr>(attr))
            return LLVM::ConstantOp::create(
                b, loc, resTy, b.getIntegerAttr(resTy, n.getValue().getSExtValue()));
          return Value();
        })
        .Case([&](IndexOp index) -> Value {
          auto buf = cast<BufType>(index.getBuffer().getType());
          auto arg = dyn_cast<BlockArgument>(index.getBuffer());
          if (!arg)
            return Value();
          Value off;
          int64_t stride = 1;
          for (int64_t d = buf.getRank() - 1; d >= 0; --d) {
            Value idx = args[d + 1];
            if (idx.getType() != i64)
              idx = idx.getType().getIntOrFloatBitWidth() < 64
                        ? Value(LLVM::SExtOp::create(b, loc, i64, idx))
                        : Value(LLVM::TruncOp::create(b, loc, i64, idx));
            Value term = mulC(idx, stride);
            off = off ? add(off, term) : term;
            stride *= buf.getShape()[d];
          }
          if (!off)
            off = c64(0);
          return LLVM::GEPOp::create(b, loc, ptr,
                                     llvmScalar(buf.getElementType()),
                                     func.getArgument(arg.getArgNumber()),
                                     ValueRange{off});
        })
        .Case([&](LoadOp) -> Value {
          return LLVM::LoadOp::create(b, loc, resTy, args[0]);
        })
        .Case([&](StoreOp) -> Value {
          LLVM::StoreOp::create(b, loc, args[1], args[0]);
          return Value();
        })
        .Case([&](ReduceOp red) -> Value {
          Value init = map.lookup(red.getInit());
          if (!init)
            return Value();
          // init + sum: skip an init that is the constant +0.
          if (auto cst = red.getInit().getDefiningOp<ConstOp>())
            if (auto f = dyn_cast<FloatAttr>(cst.getValue());
                f && f.getValue().isPosZero())
              return accValue;
          return LLVM::FAddOp::create(b, loc, init, accValue);
        })
        .Case([&](AddOp) -> Value {
          return fp ? Value(LLVM::FAddOp::create(b, loc, args[0], args[1]))
                    : add(args[0], args[1]);
        })
        .Case([&](MulOp) -> Value {
          return fp ? Value(LLVM::FMulOp::create(b, loc, args[0], args[1]))
                    : mul(args[0], args[1]);
        })
        .Case([&](MulAccOp) -> Value {
          if (fp)
            return LLVM::FAddOp::create(
                b, loc, LLVM::FMulOp::create(b, loc, args[0], args[1]), args[2]);
          return add(mul(args[0], args[1]), args[2]);
        })
        .Case([&](DivOp) -> Value {
          return isUnsigned(srcTy) ? Value(LLVM::UDivOp::create(b, loc, args[0], args[1]))
                                   : Value(LLVM::SDivOp::create(b, loc, args[0], args[1]));
        })
        .Case([&](ModOp) -> Value {
          return isUnsigned(srcTy) ? Value(LLVM::URemOp::create(b, loc, args[0], args[1]))
                                   : Value(LLVM::SRemOp::create(b, loc, args[0], args[1]));
        })
        .Case([&](NegOp) -> Value {
          if (fp)
            return LLVM::FNegOp::create(b, loc, args[0]);
          return LLVM::SubOp::create(b, loc, cst(resTy, 0), args[0]);
        })
        .Case([&](ReciprocalOp) -> Value {
          Value one = LLVM::ConstantOp::create(b, loc, resTy,
                                               b.getFloatAttr(resTy, 1.0));
          return LLVM::FDivOp::create(b, loc, one, args[0]);
        })
        .Case([&](MaxOp) -> Value {
          if (fp)
            return LLVM::MaximumOp::create(b, loc, args[0], args[1]);
          return isUnsigned(srcTy)
                     ? Value(LLVM::UMaxOp::create(b, loc, args[0], args[1]))
                     : Value(LLVM::SMaxOp::create(b, loc, args[0], args[1]));
        })
        .Case([&](CmpLtOp) -> Value {
          if (isa<FloatType>(srcTy))
            return LLVM::FCmpOp::create(b, loc, LLVM::FCmpPredicate::olt,
                                        args[0], args[1]);
          return LLVM::ICmpOp::create(b, loc,
                                      isUnsigned(srcTy) ? LLVM::ICmpPredicate::ult
                                                        : LLVM::ICmpPredicate::slt,
                                      args[0], args[1]);
        })
        .Case([&](CmpNeOp) -> Value {
          if (isa<FloatType>(srcTy))
            return LLVM::FCmpOp::create(b, loc, LLVM::FCmpPredicate::une,
                                        args[0], args[1]);
          return LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, args[0],
                                      args[1]);
        })
        .Case([&](WhereOp) -> Value {
          return LLVM::SelectOp::create(b, loc, args[0], args[1], args[2]);
        })
        .Case([&](Exp2Op) -> Value { return LLVM::Exp2Op::create(b, loc, args[0]); })
        .Case([&](Log2Op) -> Value { return LLVM::Log2Op::create(b, loc, args[0]); })
        .Case([&](SqrtOp) -> Value { return LLVM::SqrtOp::create(b, loc, args[0]); })
        .Case([&](CastOp cast) -> Value {
          Type from = cast.getSrc().getType(), to = cast.getType();
          Value v = args[0];
          Type fc = llvmScalar(from), tc = resTy;
          if (fc == tc)
            return v;
          bool uSrc = isUnsigned(from), uDst = to.isUnsignedInteger();
          if (fc.isInteger() && tc.isInteger()) {
            unsigned fw = fc.getIntOrFloatBitWidth(), tw = tc.getIntOrFloatBitWidth();
            if (fw < tw)
              return uSrc ? Value(LLVM::ZExtOp::create(b, loc, tc, v))
                          : Value(LLVM::SExtOp::create(b, loc, tc, v));
            return LLVM::TruncOp::create(b, loc, tc, v);
          }
          if (fc.isInteger() && isa<FloatType>(tc))
            return uSrc ? Value(LLVM::UIToFPOp::create(b, loc, tc, v))
                        : Value(LLVM::SIToFPOp::create(b, loc, tc, v));
          if (isa<FloatType>(fc) && tc.isInteger())
            return uDst ? Value(LLVM::FPToUIOp::create(b, loc, tc, v))
                        : Value(LLVM::FPToSIOp::create(b, loc, tc, v));
          unsigned fw = fc.getIntOrFloatBitWidth(), tw = tc.getIntOrFloatBitWidth();
          if (fw < tw)
            return LLVM::FPExtOp::create(b, loc, tc, v);
          if (fw > tw)
            return LLVM::FPTruncOp::create(b, loc, tc, v);
          Value wide = LLVM::FPExtOp::create(b, loc, f32, v); // f16 <-> bf16
          return LLVM::FPTruncOp::create(b, loc, tc, wide);
        })
        .Default([](Operation *) { return Value(); });
    if (op->getNumResults()) {
      if (!r)
        return failure();
      map[op->getResult(0)] = r;
    }
  }
  return success();
}

} // namespace

mlir::FailureOr<std::optional<TiledLaunch>>
buildTiledMatmul(l0uop::KernelOp kernel, llvm::StringRef name,
                 const cuda::CudaTarget &target, mlir::Block &into,
                 const TiledMatmulOptions &options) {
  const cuda::CudaArch &arch = *target.arch;
  // cp.async, ldmatrix and bf16 mma.sync need sm_80.
  if (arch.major < 8)
    return std::optional<TiledLaunch>();
  std::optional<MatmulMatch> match = Matcher(kernel).match();
  if (!match)
    return std::optional<TiledLaunch>();
  if (match->variant == Variant::Mma16 && !options.tensorCores)
    return std::optional<TiledLaunch>();
  // f32 on the tensor cores only where the numerics may change (tf32 keeps
  // 10 mantissa bits of each operand; the products accumulate in f32).
  if (match->variant == Variant::SimtF32 && options.allowTf32 &&
      options.tensorCores)
    match->variant = Variant::MmaTf32;
  // The tile indices are 32-bit.
  if (match->M > (1 << 30) || match->N > (1 << 30) || match->K > (1 << 30))
    return std::optional<TiledLaunch>();
  SmallVector<TileConfig> ranked =
      rankTiles(*match, target, kernel.getSymName(), options.candidateRank + 1,
                /*report=*/options.candidateRank == 0);
  if (options.candidateRank >= ranked.size())
    return std::optional<TiledLaunch>();
  std::optional<TileConfig> config = ranked[options.candidateRank];
  OpBuilder b(kernel.getContext());
  // Build into a scratch block first: a kernel whose epilogue has no
  // lowering leaves nothing behind.
  Block scratch;
  b.setInsertionPointToEnd(&scratch);
  KernelEmitter emitter(kernel, *match, *config, b);
  if (failed(emitter.build(name))) {
    while (!scratch.empty())
      scratch.back().erase();
    return std::optional<TiledLaunch>();
  }
  into.getOperations().splice(into.end(), scratch.getOperations());
  const TileConfig &c = *config;
  TiledLaunch launch;
  int64_t tiles = ((match->M + c.bm - 1) / c.bm) * ((match->N + c.bn - 1) / c.bn);
  launch.grid = {tiles, 1, 1};
  launch.block = {c.threads, 1, 1};
  launch.sharedBytes = c.sharedBytes;
  std::string elem = match->variant == Variant::MmaTf32 ? "tf32"
                     : match->variant == Variant::Mma16
                         ? (match->mmaElem.isBF16() ? "bf16" : "f16")
                         : "f32";
  launch.description =
      isMma(match->variant)
          ? llvm::formatv("mma.sync m16n8k{12} {0}, block {1}x{2}x{3}, {4} warps "
                          "of {5}x{6}, {7} stages, {8} B shared, ~{9} regs, "
                          "{10} blocks/SM, model {11:F1} us",
                          elem, c.bm, c.bn, c.bk, c.threads / 32, c.wm, c.wn,
                          c.stages, c.sharedBytes, c.regs, c.blocksPerSM,
                          c.seconds * 1e6,
                          match->variant == Variant::MmaTf32 ? 8 : 16)
                .str()
          : llvm::formatv("ffma f32, block {0}x{1}x{2}, 256 threads of "
                          "{3}x{4}, {5} stages, {6} B shared, ~{7} regs, "
                          "{8} blocks/SM, model {9:F1} us",
                          c.bm, c.bn, c.bk, c.wm, c.wn, c.stages,
                          c.sharedBytes, c.regs, c.blocksPerSM,
                          c.seconds * 1e6)
                .str();
  return std::optional<TiledLaunch>(launch);
}

} // namespace synpl::l0tonvvm
