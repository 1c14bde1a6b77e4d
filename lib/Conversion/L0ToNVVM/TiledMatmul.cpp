//===- TiledMatmul.cpp - Tiled (tensor-core) matmul kernels for CUDA -------===//
//
// matchMatmul() recognises the matmul shape structurally (see
// TiledMatmul.h; TiledMatmulMatch.cpp); rankTiles() searches the tile
// shapes with the cost model of docs/cuda-matmul.md (TiledMatmulSearch.cpp);
// KernelEmitter, here, builds the llvm.func:
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
#include "TiledMatmulPlan.h"
#include "MmaLayout.h"

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
using namespace tiled;
namespace {

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
  std::optional<MatmulMatch> match = matchMatmul(kernel);
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
