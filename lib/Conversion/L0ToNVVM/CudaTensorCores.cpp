//===- CudaTensorCores.cpp - Tile UOps on the tensor cores ---------------===//
//
// WMMA and the tile CUSTOMs of a device kernel as warp-collective
// `nvvm.wmma` fragments when every use of the tiles allows it (planTiles
// decides, and records a located refusal for a use that does not); the
// per-thread form otherwise.
//
//===----------------------------------------------------------------------===//
#include "CudaKernelBuilder.h"
#include "TiledMatmul.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <numeric>

namespace synpl::l0tonvvm {

//===----------------------------------------------------------------------===//
// Tensor cores
//===----------------------------------------------------------------------===//

/// A number `v` is known to be a multiple of (1 when nothing is known): a
/// RANGE's lower bound and step, constants, and sums and products of those.
static int64_t knownDivisor(Value v, int depth = 0) {
  Operation *def = v.getDefiningOp();
  if (!def || depth > 8)
    return 1;
  if (auto r = dyn_cast<RangeOp>(def))
    return std::gcd(r.getLower(), r.getStep());
  if (auto c = dyn_cast<ConstOp>(def)) {
    if (auto i = dyn_cast<IntegerAttr>(c.getValue())) {
      int64_t n = std::abs(i.getInt());
      return n == 0 ? int64_t(1) << 20 : n;
    }
    return 1;
  }
  if (isa<AddOp>(def) && def->getNumOperands() == 2)
    return std::gcd(knownDivisor(def->getOperand(0), depth + 1),
                    knownDivisor(def->getOperand(1), depth + 1));
  if (isa<MulOp>(def) && def->getNumOperands() == 2)
    return std::min<int64_t>(int64_t(1) << 20,
                             knownDivisor(def->getOperand(0), depth + 1) *
                                 knownDivisor(def->getOperand(1), depth + 1));
  return 1;
}

/// Whether a tile load or store meets WMMA's alignment: a row stride that
/// is a multiple of 16 bytes and an address that is provably a multiple of
/// 32 bytes (the buffer's pool alignment, the row index times the stride,
/// the column index).
static bool tileAligned(CustomOp c, KernelOp kernel, SymbolTable &planSymbols) {
  ValueRange src = c.getSrc();
  auto buf = src.size() >= 3 ? dyn_cast<BufType>(src[0].getType()) : BufType();
  auto arg = src.empty() ? BlockArgument() : dyn_cast<BlockArgument>(src[0]);
  if (!buf || buf.getRank() != 2 || !arg)
    return false;
  int64_t bytes = std::max<int64_t>(1, buf.getElementType().getIntOrFloatBitWidth() / 8);
  int64_t rowBytes = buf.getShape()[1] * bytes;
  if (rowBytes % 16)
    return false;
  int64_t base = 0;
  if (FlatSymbolRefAttr ref = kernel.getSlotOf(arg))
    if (auto slot = planSymbols.lookup<SlotOp>(ref.getValue()))
      if (auto pool = planSymbols.lookup<PoolOp>(slot.getPool()))
        base = pool.getAlignment();
  if (base % 32)
    return false;
  return (knownDivisor(src[1]) * rowBytes) % 32 == 0 &&
         (knownDivisor(src[2]) * bytes) % 32 == 0;
}

void CudaKernelBuilder::planTiles() {
  Block &body = kernel.getBody().front();
  SmallVector<WmmaOp> wmmas;
  for (Operation &op : body)
    if (auto w = dyn_cast<WmmaOp>(op))
      wmmas.push_back(w);
  if (wmmas.empty() || !options.tensorCores)
    return; // tiles (if any) take the per-thread form
  // Every WMMA must be a shape the tensor cores take; else the whole kernel
  // keeps the per-thread form (a fragment cannot meet a per-thread tile).
  for (WmmaOp w : wmmas) {
    auto at = cast<VectorType>(w.getA().getType());
    auto ct = cast<VectorType>(w.getC().getType());
    Type ae = at.getElementType(), ce = ct.getElementType();
    int64_t m = at.getDimSize(0), k = at.getDimSize(1), n = ct.getDimSize(1);
    bool half = (ae.isF16() || ae.isBF16()) && m == 16 && n == 16 && k == 16;
    bool tf32 = ae.isF32() && m == 16 && n == 16 && k == 8;
    if (!ce.isF32() || (!half && !tf32))
      return;
  }
  // WMMA loads and stores need a 16-byte row stride and a 32-byte aligned
  // address; a tile not provably so keeps the whole kernel per-thread.
  for (Operation &op : body)
    if (auto c = dyn_cast<CustomOp>(op);
        c && (c.getCallee() == kTileLoad || c.getCallee() == kTileStore) &&
        !tileAligned(c, kernel, planSymbols))
      return;
  tensorTiles = true;
  // Values that vary within a warp: anything depending on a RANGE mapped
  // onto threads (global_*, local_*).
  llvm::DenseSet<Value> varying;
  SmallVector<Operation *> open; // enclosing RANGE/IF ops
  llvm::DenseMap<Operation *, bool> underThreads;
  for (Operation &op : body) {
    bool threaded = llvm::any_of(open, [&](Operation *o) {
      if (auto r = dyn_cast<RangeOp>(o))
        return isParallel(r.getKind()) && !isGroup(r.getKind());
      return varying.contains(cast<IfOp>(o).getCondition());
    });
    underThreads[&op] = threaded;
    if (auto r = dyn_cast<RangeOp>(op)) {
      if (isParallel(r.getKind()) && !isGroup(r.getKind()))
        varying.insert(r.getResult());
      open.push_back(&op);
      continue;
    }
    if (isa<IfOp>(op)) {
      open.push_back(&op);
      continue;
    }
    if (isa<EndOp, EndIfOp>(op)) {
      if (!open.empty())
        open.pop_back();
      continue;
    }
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return varying.contains(v); }))
      for (Value r : op.getResults())
        varying.insert(r);
  }
  auto isTile = [](Value v) {
    auto vt = dyn_cast<VectorType>(v.getType());
    return vt && vt.getRank() == 2;
  };
  auto refuse = [&](Operation *op, std::string why) {
    tileRefusals.try_emplace(op, std::move(why));
  };
  auto setRole = [&](Value v, Frag f, Operation *user) {
    auto [it, inserted] = frags.try_emplace(v, f);
    if (!inserted && it->second != f)
      refuse(user, "a tile value is used in two WMMA roles (A, B, C): load "
                   "it once per role");
  };
  for (Operation &op : body) {
    bool tileOp = isa<WmmaOp>(op);
    if (auto c = dyn_cast<CustomOp>(op))
      tileOp = c.getCallee() == kTileLoad || c.getCallee() == kTileStore;
    if (tileOp) {
      if (underThreads[&op]) {
        refuse(&op, "a tensor-core tile op is warp-collective: it cannot sit "
                    "inside a RANGE mapped onto threads or under an IF that "
                    "varies within a warp");
        continue;
      }
      for (Value v : op.getOperands())
        if (!isTile(v) && varying.contains(v)) {
          refuse(&op, "an operand of a tensor-core tile op varies within a "
                      "warp (it depends on a RANGE mapped onto threads)");
          break;
        }
    }
    if (auto w = dyn_cast<WmmaOp>(op)) {
      setRole(w.getA(), Frag::A, &op);
      setRole(w.getB(), Frag::B, &op);
      setRole(w.getC(), Frag::C, &op);
      setRole(w.getResult(), Frag::C, &op);
      int64_t k = cast<VectorType>(w.getA().getType()).getDimSize(1);
      for (Value acc : {w.getC(), w.getResult()}) {
        auto [it, inserted] = accK.try_emplace(acc, k);
        if (!inserted && it->second != k)
          refuse(&op, "an accumulator tile meets WMMAs of two shapes (m16n16k8 "
                      "tf32 and m16n16k16): load and store it once per shape");
      }
      continue;
    }
    if (auto c = dyn_cast<CustomOp>(op); c && c.getCallee() == kTileStore) {
      if (c.getSrc().size() == 4)
        setRole(c.getSrc()[3], Frag::C, &op);
      continue;
    }
    if (auto c = dyn_cast<CustomOp>(op); c && c.getCallee() == kTileLoad)
      continue;
    // Any other use of a tile value is element-wise.
    for (Value v : op.getOperands())
      if (isTile(v)) {
        refuse(&op, "element-wise use of a tensor-core tile value (its "
                    "elements are spread over the lanes of a warp): only "
                    "WMMA and host.tile_store take tiles");
        break;
      }
  }
  // Tile values come from tile loads and WMMA (CONST is scalar, L0.1).
  for (auto &[v, f] : frags) {
    Operation *def = v.getDefiningOp();
    if (def && isa<ReduceOp>(def))
      refuse(def, "REDUCE of a tensor-core tile: accumulate through WMMA's "
                  "C operand and host.tile_store instead");
  }
}

Type CudaKernelBuilder::fragType(NVVM::MMATypes t, Frag f, int rows,
                                 int cols) {
  // bf16 A/B fragments (not in the NVVM dialect's wmma table): 4 x i32,
  // each a pair of bf16.
  if (t == NVVM::MMATypes::bf16 && f != Frag::C)
    return LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(4, b.getI32Type()));
  NVVM::MMAFrag frag = f == Frag::A   ? NVVM::MMAFrag::a
                       : f == Frag::B ? NVVM::MMAFrag::b
                                      : NVVM::MMAFrag::c;
  auto [elem, count] =
      NVVM::inferMMAType(t, frag, rows, cols, b.getContext());
  return LLVM::LLVMStructType::getLiteral(b.getContext(),
                                          SmallVector<Type>(count, elem));
}

SmallVector<Value> CudaKernelBuilder::fragElements(Location loc, Value frag) {
  auto st = cast<LLVM::LLVMStructType>(frag.getType());
  SmallVector<Value> out;
  for (unsigned i = 0; i < st.getBody().size(); ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, frag, i));
  return out;
}

LogicalResult CudaKernelBuilder::lowerTileOp(Operation *op, std::string &why) {
  Location loc = op->getLoc();
  auto stride = [&](BufType buf) -> Value {
    return arith::ConstantOp::create(
        b, loc, b.getI32IntegerAttr(int32_t(buf.getShape()[1])));
  };
  if (auto w = dyn_cast<WmmaOp>(op)) {
    Value a = lookup(w.getA()), bv = lookup(w.getB()), c = lookup(w.getC());
    if (!a || !bv || !c) {
      why = "an operand was not lowered";
      dependent = true;
      return failure();
    }
    auto at = cast<VectorType>(w.getA().getType());
    NVVM::MMATypes t = *mmaType(at.getElementType(), true);
    int k = at.getDimSize(1);
    SmallVector<Value> operands = fragElements(loc, a);
    llvm::append_range(operands, fragElements(loc, bv));
    llvm::append_range(operands, fragElements(loc, c));
    Type st = fragType(NVVM::MMATypes::f32, Frag::C, 16, 16);
    if (t == NVVM::MMATypes::bf16) {
      // The NVVM dialect's wmma table has no bf16: the LLVM intrinsic.
      Value d = LLVM::CallIntrinsicOp::create(
                    b, loc, st,
                    b.getStringAttr("llvm.nvvm.wmma.m16n16k16.mma.row.row.bf16"),
                    operands)
                    .getResult(0);
      mapping.map(w.getResult(), d);
      return success();
    }
    Value d = NVVM::WMMAMmaOp::create(b, loc, st, 16, 16, k,
                                      NVVM::MMALayout::row,
                                      NVVM::MMALayout::row, t,
                                      NVVM::MMATypes::f32, operands);
    mapping.map(w.getResult(), d);
    return success();
  }
  auto c = cast<CustomOp>(op);
  bool load = c.getCallee() == kTileLoad;
  ValueRange src = c.getSrc();
  auto buf = src.empty() ? BufType() : dyn_cast<BufType>(src[0].getType());
  unsigned want = load ? 3 : 4;
  if (src.size() != want || !buf || buf.getRank() != 2 ||
      c->getNumResults() != (load ? 1u : 0u)) {
    why = (c.getCallee() + (load ? " takes (buffer, index, index) -> tile"
                                 : " takes (buffer, index, index, tile) -> ()") +
           " on a 2-D buffer")
              .str();
    return failure();
  }
  Value i = lookup(src[1]), j = lookup(src[2]);
  if (!i || !j) {
    why = "an operand was not lowered";
    dependent = true;
    return failure();
  }
  FailureOr<Value> p = address(loc, src[0], ValueRange{i, j}, why);
  if (failed(p))
    return failure();
  Value tile = load ? c->getResult(0) : src[3];
  if (!frags.count(tile))
    return success(); // a tile loaded and never used
  auto vt = dyn_cast<VectorType>(tile.getType());
  if (!vt || vt.getRank() != 2 || vt.getElementType() != buf.getElementType()) {
    why = (c.getCallee() + " moves a 2-D vector of the buffer's element type")
              .str();
    return failure();
  }
  Frag f = frags.lookup(tile);
  int rows = vt.getDimSize(0), cols = vt.getDimSize(1);
  // m, n, k of the instruction this fragment belongs to.
  int m = 16, n = 16, k = f == Frag::A ? cols : f == Frag::B ? rows : 16;
  if (f == Frag::C) {
    // The accumulator's shape is its WMMAs': m16n16k8 for tf32, k16 else.
    auto it = accK.find(tile);
    k = it != accK.end() ? it->second : 16;
  }
  std::optional<NVVM::MMATypes> t = mmaType(vt.getElementType(), f != Frag::C);
  if (!t || (f == Frag::C && !vt.getElementType().isF32())) {
    why = "tensor-core tiles are f16/bf16 (A, B) or f32 (tf32 A, B; C)";
    return failure();
  }
  if (f == Frag::C && (rows != 16 || cols != 16)) {
    why = "tensor-core accumulator tiles are 16x16";
    return failure();
  }
  NVVM::MMAFrag frag = f == Frag::A   ? NVVM::MMAFrag::a
                       : f == Frag::B ? NVVM::MMAFrag::b
                                      : NVVM::MMAFrag::c;
  if (*t == NVVM::MMATypes::tf32)
    k = 8;
  if (load) {
    Type st = fragType(*t, f, rows, cols);
    if (*t == NVVM::MMATypes::bf16) {
      std::string intr = std::string("llvm.nvvm.wmma.m16n16k16.load.") +
                         (f == Frag::A ? "a" : "b") + ".row.stride.bf16";
      Value v = LLVM::CallIntrinsicOp::create(b, loc, st, b.getStringAttr(intr),
                                              ValueRange{*p, stride(buf)})
                    .getResult(0);
      mapping.map(c->getResult(0), v);
      return success();
    }
    Value v = NVVM::WMMALoadOp::create(b, loc, st, *p, stride(buf), m, n, k,
                                       NVVM::MMALayout::row, *t, frag);
    mapping.map(c->getResult(0), v);
    return success();
  }
  Value value = lookup(tile);
  if (!value) {
    why = "an operand was not lowered";
    dependent = true;
    return failure();
  }
  NVVM::WMMAStoreOp::create(b, loc, *p, m, n, k, NVVM::MMALayout::row, *t,
                            fragElements(loc, value), stride(buf));
  return success();
}

} // namespace synpl::l0tonvvm
