//===- L0UOpToNVVM.cpp - CUDA codegen of l0uop kernels -----------------------===//
//
// Each device kernel of a plan becomes an `nvvm.kernel` llvm.func in the
// plan's gpu.module (the contract: docs/cuda-codegen.md). The flat UOps are
// rebuilt by the host lowering's KernelBuilder walk, whose target hooks this
// file overrides: parallel RANGEs read the thread/block registers under a
// guard, BARRIER is bar.sync (splitting a guard that masks threads of a
// block), shared buffers live in the dynamic shared array, the math UOps
// take the fast PTX forms, and WMMA runs on the tensor cores. Kernels are
// built in a scratch module, so a failure leaves the input untouched.
//
//===----------------------------------------------------------------------===//
#include "synpl/Conversion/Passes.h"

#include "../L0ToLLVM/KernelBuilder.h"
#include "TiledMatmul.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Target/CudaTarget.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include "llvm/Support/MathExtras.h"

namespace synpl {
#define GEN_PASS_DEF_CONVERTL0UOPTONVVM
#include "synpl/Conversion/Passes.h.inc"
} // namespace synpl

using namespace mlir;
using namespace synpl;
using namespace synpl::l0uop;
using namespace synpl::l0tollvm;

namespace {

constexpr llvm::StringLiteral kTileLoad = "host.tile_load";
constexpr llvm::StringLiteral kTileStore = "host.tile_store";
/// The dynamic shared memory array of a gpu.module.
constexpr llvm::StringLiteral kSharedArray = "__synpl_dynamic_shared";
/// Alignment of each shared buffer in the dynamic array.
constexpr int64_t kSharedAlign = 16;

/// 0, 1, 2 for the x, y, z kinds.
static unsigned axisOf(RangeKind k) {
  switch (k) {
  case RangeKind::global_x:
  case RangeKind::group_x:
  case RangeKind::local_x:
    return 0;
  case RangeKind::global_y:
  case RangeKind::group_y:
  case RangeKind::local_y:
    return 1;
  default:
    return 2;
  }
}
static bool isGlobal(RangeKind k) {
  return k == RangeKind::global_x || k == RangeKind::global_y ||
         k == RangeKind::global_z;
}
static bool isGroup(RangeKind k) {
  return k == RangeKind::group_x || k == RangeKind::group_y ||
         k == RangeKind::group_z;
}
static bool isLocal(RangeKind k) {
  return k == RangeKind::local_x || k == RangeKind::local_y ||
         k == RangeKind::local_z;
}

/// The threads (global), blocks (group) or threads of a block (local) a
/// RANGE kind enumerates under the launch.
static int64_t launchedAlong(KernelOp kernel, RangeKind k) {
  unsigned a = axisOf(k);
  if (isGlobal(k))
    return kernel.getGrid()[a] * kernel.getBlock()[a];
  if (isGroup(k))
    return kernel.getGrid()[a];
  return kernel.getBlock()[a];
}

/// Whether a parallel RANGE's guard masks off some threads of a block (and
/// not others): a barrier under it would see only part of the block.
static bool masksWithinBlock(KernelOp kernel, RangeOp range) {
  RangeKind k = range.getKind();
  if (isGroup(k) || !isParallel(k))
    return false;
  return launchedAlong(kernel, k) > range.getTripCount() &&
         kernel.getBlock()[axisOf(k)] > 1;
}

/// The role of a tile value on the tensor cores.
enum class Frag { A, B, C };

/// The MMA element type of a tile element type (f32 operands: tf32).
static std::optional<NVVM::MMATypes> mmaType(Type t, bool operand) {
  if (t.isF16())
    return NVVM::MMATypes::f16;
  if (t.isBF16())
    return NVVM::MMATypes::bf16;
  if (t.isF32())
    return operand ? NVVM::MMATypes::tf32 : NVVM::MMATypes::f32;
  return std::nullopt;
}

struct CudaOptions {
  const cuda::CudaTarget *target;
  bool fastMath = true;
  bool tensorCores = true;
};

/// Builds one device kernel as an `nvvm.kernel` function.
class CudaKernelBuilder : public KernelBuilder {
public:
  CudaKernelBuilder(KernelOp kernel, StringRef name, SymbolTable &planSymbols,
                    SmallVectorImpl<NotLowered> &failures,
                    const CudaOptions &options)
      : KernelBuilder(kernel, name, planSymbols, failures), options(options) {}

  /// Builds the function at the end of `into` (a module body). Returns the
  /// dynamic shared bytes the kernel needs.
  int64_t buildKernel(ModuleOp into);

private:
  StringRef targetName() const override { return "CUDA"; }
  bool openParallelRange(RangeOp range) override;
  std::optional<LogicalResult> lowerTargetOp(Operation *op,
                                             ArrayRef<Value> args,
                                             Type resultType,
                                             std::string &why) override;
  void openPhase(Frame &frame, Location loc) override;
  void closePhase(Frame &frame, Location loc) override;

  /// The thread (or block) index a parallel RANGE kind enumerates, as i64.
  Value launchIndex(Location loc, RangeKind kind);
  /// `v` through `fn` on f32 (f16/bf16 widened, vectors lane by lane).
  Value onF32(Location loc, Value v, llvm::function_ref<Value(Value)> fn);
  Value intrinsic(Location loc, StringRef name, Value x) {
    return LLVM::CallIntrinsicOp::create(b, loc, x.getType(),
                                         b.getStringAttr(name), ValueRange{x})
        .getResult(0);
  }
  LogicalResult lowerMath(Operation *op, ArrayRef<Value> args, std::string &why);
  LogicalResult lowerBarrier(Operation *op, std::string &why);
  LogicalResult lowerStore(Operation *op, ArrayRef<Value> args);

  // Tensor cores.
  /// Decides whether the kernel's tiles go to the tensor cores; records
  /// refusals (located) for tile uses the warp-collective form cannot take.
  void planTiles();
  LogicalResult lowerTileOp(Operation *op, std::string &why);
  Type fragType(NVVM::MMATypes t, Frag f, int rows, int cols);
  SmallVector<Value> fragElements(Location loc, Value frag);

  const CudaOptions &options;
  /// Tile values on the tensor cores -> their role; empty: per-thread form.
  llvm::DenseMap<Value, Frag> frags;
  bool tensorTiles = false;
  /// Refusals found by planTiles, reported when the op is reached.
  llvm::DenseMap<Operation *, std::string> tileRefusals;
  /// The base (generic pointer) of the dynamic shared array.
  Value sharedBase;
};

Value CudaKernelBuilder::launchIndex(Location loc, RangeKind kind) {
  Type i32 = b.getI32Type();
  unsigned a = axisOf(kind);
  auto zext = [&](Value v) -> Value {
    return arith::ExtUIOp::create(b, loc, b.getI64Type(), v);
  };
  auto tid = [&]() -> Value {
    switch (a) {
    case 0:
      return NVVM::ThreadIdXOp::create(b, loc, i32);
    case 1:
      return NVVM::ThreadIdYOp::create(b, loc, i32);
    default:
      return NVVM::ThreadIdZOp::create(b, loc, i32);
    }
  };
  auto ctaid = [&]() -> Value {
    switch (a) {
    case 0:
      return NVVM::BlockIdXOp::create(b, loc, i32);
    case 1:
      return NVVM::BlockIdYOp::create(b, loc, i32);
    default:
      return NVVM::BlockIdZOp::create(b, loc, i32);
    }
  };
  if (isLocal(kind))
    return zext(tid());
  if (isGroup(kind))
    return zext(ctaid());
  // ctaid * ntid + tid, with the block size this kernel is launched with.
  Value block = i64Const(loc, kernel.getBlock()[a]);
  return arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, zext(ctaid()), block), zext(tid()));
}

bool CudaKernelBuilder::openParallelRange(RangeOp range) {
  Location loc = range.getLoc();
  RangeKind kind = range.getKind();
  Frame frame;
  frame.uop = range;
  frame.parallel = true;
  Value t = launchIndex(loc, kind);
  int64_t trip = range.getTripCount();
  if (launchedAlong(kernel, kind) > trip) {
    frame.guard = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, t,
                                        i64Const(loc, trip));
    frame.branch =
        scf::IfOp::create(b, loc, frame.guard, /*withElseRegion=*/false);
    b.setInsertionPoint(frame.branch.thenBlock()->getTerminator());
    frame.varyingMask = masksWithinBlock(kernel, range);
  }
  Value iv = t;
  if (range.getStep() != 1)
    iv = arith::MulIOp::create(b, loc, iv, i64Const(loc, range.getStep()));
  if (range.getLower() != 0)
    iv = arith::AddIOp::create(b, loc, iv, i64Const(loc, range.getLower()));
  mapping.map(range.getResult(), iv);
  auto it = fissions.find(range);
  if (it != fissions.end())
    frame.fission = &it->second;
  frames.push_back(std::move(frame));
  // A REDUCE over threads would need a cross-thread reduction.
  for (Operation *user : range.getResult().getUsers())
    if (auto reduce = dyn_cast<ReduceOp>(user);
        reduce && reduce.getRange() == range.getResult())
      fail(reduce, ("REDUCE over a RANGE mapped onto the launch (" +
                    stringifyRangeKind(kind) +
                    "): its iterations run on different threads")
                       .str());
  return true;
}

void CudaKernelBuilder::closePhase(Frame &frame, Location loc) {
  // The values later phases read are kept in one-element allocas (promoted
  // to registers), then every thread of the block -- masked or not -- meets
  // at the barrier.
  for (Value v : frame.fission->cross) {
    if (frame.fission->crossPhase.lookup(v) != frame.phase)
      continue;
    Value slot = crossArrays.lookup(v), value = lookup(v);
    if (slot && value)
      LLVM::StoreOp::create(b, loc, value, slot);
  }
  b.setInsertionPointAfter(frame.branch);
  NVVM::Barrier0Op::create(b, loc);
}

void CudaKernelBuilder::openPhase(Frame &frame, Location loc) {
  frame.branch = scf::IfOp::create(b, loc, frame.guard, false);
  b.setInsertionPoint(frame.branch.thenBlock()->getTerminator());
  auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
  for (Value v : frame.fission->cross) {
    if (frame.fission->crossPhase.lookup(v) >= frame.phase)
      continue;
    Value slot = crossArrays.lookup(v);
    if (!slot)
      continue;
    Type t = isa<PtrType>(v.getType()) ? Type(ptrTy) : convertType(v.getType());
    mapping.map(v, LLVM::LoadOp::create(b, loc, t, slot));
  }
}

Value CudaKernelBuilder::onF32(Location loc, Value v,
                               llvm::function_ref<Value(Value)> fn) {
  if (auto vt = dyn_cast<VectorType>(v.getType())) {
    Value result = v;
    for (int64_t lane = 0; lane < vt.getNumElements(); ++lane) {
      Value x = vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{lane});
      result = vector::InsertOp::create(b, loc, onF32(loc, x, fn), result,
                                        ArrayRef<int64_t>{lane});
    }
    return result;
  }
  Type t = v.getType();
  if (t.isF32())
    return fn(v);
  Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
  return arith::TruncFOp::create(b, loc, t, fn(wide));
}

LogicalResult CudaKernelBuilder::lowerMath(Operation *op, ArrayRef<Value> args,
                                           std::string &why) {
  Location loc = op->getLoc();
  Value x = args[0];
  Type e = elementOf(x.getType());
  bool fast = options.fastMath;
  if (isa<VectorType>(x.getType()) &&
      cast<VectorType>(x.getType()).getRank() != 1) {
    why = "multi-dimensional vector math has no CUDA lowering";
    return failure();
  }
  auto bindv = [&](Value v) {
    cur->map(op->getResult(0), v);
    return success();
  };
  if (e.isF64()) {
    // Only what PTX has an f64 instruction for; no libdevice.
    if (isa<SqrtOp, ReciprocalOp>(op)) {
      StringRef intr = isa<SqrtOp>(op) ? "llvm.nvvm.sqrt.rn.d"
                                       : "llvm.nvvm.rcp.rn.d";
      if (auto vt = dyn_cast<VectorType>(x.getType())) {
        Value result = x;
        for (int64_t lane = 0; lane < vt.getNumElements(); ++lane) {
          Value s =
              vector::ExtractOp::create(b, loc, x, ArrayRef<int64_t>{lane});
          result = vector::InsertOp::create(b, loc, intrinsic(loc, intr, s),
                                            result, ArrayRef<int64_t>{lane});
        }
        return bindv(result);
      }
      return bindv(intrinsic(loc, intr, x));
    }
    why = op->getName().stripDialect().upper() +
          " on f64: PTX has no f64 instruction for it and the CUDA lowering "
          "does not link libdevice";
    return failure();
  }
  if (!e.isF32() && !e.isF16() && !e.isBF16()) {
    why = "no CUDA math lowering for this dtype";
    return failure();
  }
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](Exp2Op) {
        return bindv(onF32(loc, x, [&](Value v) {
          return intrinsic(loc,
                           fast ? "llvm.nvvm.ex2.approx.ftz.f32"
                                : "llvm.nvvm.ex2.approx.f32",
                           v);
        }));
      })
      .Case([&](Log2Op) {
        return bindv(onF32(loc, x, [&](Value v) {
          return intrinsic(loc,
                           fast ? "llvm.nvvm.lg2.approx.ftz.f"
                                : "llvm.nvvm.lg2.approx.f",
                           v);
        }));
      })
      .Case([&](SqrtOp) {
        return bindv(onF32(loc, x, [&](Value v) {
          return intrinsic(
              loc, fast ? "llvm.nvvm.sqrt.approx.ftz.f" : "llvm.nvvm.sqrt.rn.f",
              v);
        }));
      })
      .Case([&](ReciprocalOp) {
        return bindv(onF32(loc, x, [&](Value v) {
          return intrinsic(
              loc, fast ? "llvm.nvvm.rcp.approx.ftz.f" : "llvm.nvvm.rcp.rn.f",
              v);
        }));
      })
      .Case([&](SinOp) {
        // sin.approx is accurate on [-pi, pi] only: reduce by 2 pi first
        // (Cody-Waite, two constants), then the approximate instruction.
        return bindv(onF32(loc, x, [&](Value v) {
          Type f32 = b.getF32Type();
          auto c = [&](double d) -> Value {
            return arith::ConstantOp::create(b, loc, b.getFloatAttr(f32, d));
          };
          Value q = math::RoundEvenOp::create(
              b, loc,
              arith::MulFOp::create(b, loc, v, c(0.5 / llvm::numbers::pi)));
          constexpr double hi = 6.28125; // exact in 8 mantissa bits
          constexpr double lo = 2 * llvm::numbers::pi - hi;
          Value r = math::FmaOp::create(
              b, loc, arith::NegFOp::create(b, loc, q), c(hi), v);
          r = math::FmaOp::create(b, loc, arith::NegFOp::create(b, loc, q),
                                  c(lo), r);
          return intrinsic(loc,
                           fast ? "llvm.nvvm.sin.approx.ftz.f"
                                : "llvm.nvvm.sin.approx.f",
                           r);
        }));
      })
      .Default([&](Operation *) { return failure(); });
}

LogicalResult CudaKernelBuilder::lowerBarrier(Operation *op,
                                              std::string &why) {
  bool splitting = directBarriers.contains(op) && !frames.empty() &&
                   frames.back().fission;
  for (size_t i = frames.size(); i-- > 0;) {
    const Frame &f = frames[i];
    if (!f.parallel || !f.varyingMask)
      continue;
    if (splitting && i + 1 == frames.size())
      continue;
    auto range = cast<RangeOp>(f.uop);
    why = ("BARRIER under the guard of RANGE " +
           stringifyRangeKind(range.getKind()) + " 0 to " +
           std::to_string(range.getUpper()) +
           ", whose launch masks off some threads of a block: the guard is "
           "split only at barriers directly in that RANGE's body (not nested "
           "in a loop or under another such guard)")
              .str();
    return failure();
  }
  // A split RANGE's closePhase() emits the barrier between its phases.
  if (!splitting)
    NVVM::Barrier0Op::create(b, op->getLoc());
  return success();
}

LogicalResult CudaKernelBuilder::lowerStore(Operation *op,
                                            ArrayRef<Value> args) {
  Location loc = op->getLoc();
  // The launch axes no enclosing parallel RANGE distributes work over:
  // their threads (blocks) would all repeat the store; only index 0 does it.
  bool claimedBlock[3] = {}, claimedGrid[3] = {};
  for (const Frame &f : frames) {
    if (!f.parallel)
      continue;
    RangeKind k = cast<RangeOp>(f.uop).getKind();
    unsigned a = axisOf(k);
    if (isGlobal(k) || isGroup(k))
      claimedGrid[a] = true;
    if (isGlobal(k) || isLocal(k))
      claimedBlock[a] = true;
  }
  Value leader;
  Type i32 = b.getI32Type();
  auto zero = [&](Value v) {
    Value c = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, v,
        arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0)));
    leader = leader ? Value(arith::AndIOp::create(b, loc, leader, c)) : c;
  };
  for (unsigned a = 0; a < 3; ++a) {
    if (!claimedBlock[a] && kernel.getBlock()[a] > 1)
      zero(a == 0   ? Value(NVVM::ThreadIdXOp::create(b, loc, i32))
           : a == 1 ? Value(NVVM::ThreadIdYOp::create(b, loc, i32))
                    : Value(NVVM::ThreadIdZOp::create(b, loc, i32)));
    if (!claimedGrid[a] && kernel.getGrid()[a] > 1)
      zero(a == 0   ? Value(NVVM::BlockIdXOp::create(b, loc, i32))
           : a == 1 ? Value(NVVM::BlockIdYOp::create(b, loc, i32))
                    : Value(NVVM::BlockIdZOp::create(b, loc, i32)));
  }
  OpBuilder::InsertionGuard g(b);
  if (leader) {
    auto branch = scf::IfOp::create(b, loc, leader, false);
    b.setInsertionPoint(branch.thenBlock()->getTerminator());
  }
  LLVM::StoreOp::create(b, loc, args[1], args[0],
                        elementAlign(args[1].getType()));
  return success();
}

std::optional<LogicalResult>
CudaKernelBuilder::lowerTargetOp(Operation *op, ArrayRef<Value> args,
                                 Type resultType, std::string &why) {
  if (auto it = tileRefusals.find(op); it != tileRefusals.end()) {
    why = it->second;
    return failure();
  }
  if (isa<Exp2Op, Log2Op, SqrtOp, ReciprocalOp, SinOp>(op))
    return lowerMath(op, args, why);
  if (isa<BarrierOp>(op))
    return lowerBarrier(op, why);
  if (isa<StoreOp>(op))
    return lowerStore(op, args);
  if (tensorTiles) {
    auto custom = dyn_cast<CustomOp>(op);
    if (isa<WmmaOp>(op) ||
        (custom && (custom.getCallee() == kTileLoad ||
                    custom.getCallee() == kTileStore)))
      return lowerTileOp(op, why);
  }
  if (auto custom = dyn_cast<CustomOp>(op);
      custom && custom.getCallee() != kTileLoad &&
      custom.getCallee() != kTileStore) {
    why = ("CUSTOM \"" + custom.getCallee() +
           "\" has no CUDA lowering (intrinsics: " + kTileLoad + ", " +
           kTileStore + ")")
              .str();
    return failure();
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Tensor cores
//===----------------------------------------------------------------------===//

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
  if (f == Frag::C && vt.getElementType().isF32())
    k = 16; // f32 accumulators are the same for k = 8 (tf32) and 16
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

//===----------------------------------------------------------------------===//
// The function
//===----------------------------------------------------------------------===//

int64_t CudaKernelBuilder::buildKernel(ModuleOp into) {
  MLIRContext *ctx = kernel.getContext();
  Location loc = kernel.getLoc();
  Block &body = kernel.getBody().front();
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  unsigned numBuffers = kernel.getNumInputs() + kernel.getNumOutputs();
  auto fnTy = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                          SmallVector<Type>(numBuffers, ptrTy));
  b.setInsertionPointToEnd(into.getBody());
  auto fn = LLVM::LLVMFuncOp::create(b, loc, name, fnTy);
  fn->setAttr(NVVM::NVVMDialect::getKernelFuncAttrName(), b.getUnitAttr());
  ArrayRef<int64_t> block = kernel.getBlock();
  fn->setAttr(NVVM::NVVMDialect::getMaxntidAttrName(),
              b.getDenseI32ArrayAttr({int32_t(block[0]), int32_t(block[1]),
                                      int32_t(block[2])}));
  Block *entry = bindBufferParams(fn, numBuffers, /*defaultAlign=*/16,
                                  /*maxAlign=*/256);

  // Shared buffers: aligned offsets into the dynamic shared array.
  int64_t sharedBytes = 0;
  if (!kernel.getSharedArgs().empty()) {
    auto shared3 = LLVM::LLVMPointerType::get(ctx, 3);
    Value base = LLVM::AddressOfOp::create(b, loc, shared3, kSharedArray);
    for (BlockArgument arg : kernel.getSharedArgs()) {
      auto buf = cast<BufType>(arg.getType());
      sharedBytes = llvm::alignTo(sharedBytes, kSharedAlign);
      Value at = LLVM::GEPOp::create(b, loc, shared3, b.getI8Type(), base,
                                     ArrayRef<LLVM::GEPArg>{int32_t(sharedBytes)});
      mapping.map(arg, LLVM::AddrSpaceCastOp::create(b, loc, ptrTy, at));
      int64_t bytes =
          buf.getNumElements() *
          ((buf.getElementType().getIntOrFloatBitWidth() + 7) / 8);
      sharedBytes += bytes;
    }
    sharedBytes = llvm::alignTo(sharedBytes, kSharedAlign);
  }
  auto ret = LLVM::ReturnOp::create(b, loc, ValueRange{});
  b.setInsertionPoint(ret);

  // Guards that mask threads of a block are split at their barriers.
  fissions = analyzeBarriers(kernel, directBarriers, [&](RangeOp range) {
    return masksWithinBlock(kernel, range);
  });
  for (Operation &op : body) {
    auto range = dyn_cast<RangeOp>(op);
    if (!range || !fissions.count(range))
      continue;
    for (Value v : fissions[range].cross) {
      Type t = isa<PtrType>(v.getType()) ? Type(ptrTy) : convertType(v.getType());
      if (!t)
        continue;
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(entry);
      crossArrays[v] = LLVM::AllocaOp::create(b, loc, ptrTy, t,
                                              i64Const(loc, 1), 0);
    }
  }
  planTiles();
  // REDUCEs do not pass through lowerTargetOp: report theirs here.
  for (Operation &op : body)
    if (auto it = tileRefusals.find(&op);
        it != tileRefusals.end() && isa<ReduceOp>(op))
      fail(&op, it->second);
  lowerBody(RangeOp());
  // fast-math: let the backend contract a*b+c into fma (what nvcc's
  // default -fmad=true does); the host keeps separate roundings.
  if (options.fastMath)
    fn.walk([&](Operation *op) {
      // Only the products and sums: casts keep every rounding they state.
      if (isa<arith::AddFOp, arith::SubFOp, arith::MulFOp>(op))
        op->setAttr(cast<arith::ArithFastMathInterface>(op).getFastMathAttrName(),
                    arith::FastMathFlagsAttr::get(
                        ctx, arith::FastMathFlags::contract));
    });
  return sharedBytes;
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// `<plan>_<kernel>` with every char outside [A-Za-z0-9_] replaced by `_`.
static std::string entryName(StringRef plan, StringRef kernel) {
  std::string s = (plan + "_" + kernel).str();
  for (char &c : s)
    if (!llvm::isAlnum(c) && c != '_')
      c = '_';
  return s;
}

struct ConvertL0UOpToNVVMPass
    : public synpl::impl::ConvertL0UOpToNVVMBase<ConvertL0UOpToNVVMPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    OpPassManager pm(ModuleOp::getOperationName());
    buildKernelLLVMPipeline(pm);
    pm.getDependentDialects(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    std::optional<cuda::CudaTarget> target = cuda::makeTarget(chip);
    if (!target) {
      module.emitError() << "unknown CUDA chip '" << chip
                         << "'; known: " << cuda::knownArchList();
      return signalPassFailure();
    }
    CudaOptions cudaOptions{&*target, fastMath, tensorCores};

    struct Built {
      KernelOp kernel;
      std::string entry;
      std::optional<l0tonvvm::TiledLaunch> tiled;
      int64_t sharedBytes = 0;
    };
    SmallVector<NotLowered> failures;
    unsigned total = 0;
    // One scratch module per plan: the plan's gpu.module to be.
    SmallVector<std::pair<PlanOp, OwningOpRef<ModuleOp>>> scratches;
    SmallVector<SmallVector<Built>> builtPerPlan;
    SymbolTable moduleSymbols(module);
    for (PlanOp plan : module.getOps<PlanOp>()) {
      SymbolTable planSymbols(plan);
      SmallVector<KernelOp> kernels;
      for (KernelOp kernel : plan.getOps<KernelOp>())
        if (!kernel->hasAttr("device_entry") && !kernel->hasAttr("host_entry") &&
            !kernel.getBody().front().empty() &&
            kernel.isDeviceKernel(planSymbols))
          kernels.push_back(kernel);
      if (kernels.empty())
        continue;
      std::string moduleName = (plan.getSymName() + "_cuda").str();
      if (moduleSymbols.lookup(moduleName)) {
        failures.push_back(
            {plan, "symbol @" + moduleName + " already exists in the module"});
        continue;
      }
      OwningOpRef<ModuleOp> scratch = ModuleOp::create(module.getLoc());
      bool anyShared = false;
      llvm::StringSet<> names;
      SmallVector<Built> built;
      for (KernelOp kernel : kernels) {
        total += kernel.getBody().front().getOperations().size() + 1;
        std::string base = entryName(plan.getSymName(), kernel.getSymName());
        std::string name = base;
        for (unsigned n = 1; !names.insert(name).second; ++n)
          name = base + "_" + std::to_string(n);
        Built entry{kernel, name, std::nullopt, 0};
        l0tonvvm::TiledMatmulOptions tiledOptions;
        tiledOptions.tensorCores = tensorCores;
        tiledOptions.allowTf32 = tf32;
        FailureOr<std::optional<l0tonvvm::TiledLaunch>> tiled =
            l0tonvvm::buildTiledMatmul(kernel, name, *target,
                                       *scratch->getBody(), tiledOptions);
        if (failed(tiled)) {
          failures.push_back({kernel, "the tiled matmul lowering failed"});
          continue;
        }
        if (*tiled) {
          entry.tiled = *tiled;
          entry.sharedBytes = (*tiled)->sharedBytes;
        } else {
          CudaKernelBuilder builder(kernel, name, planSymbols, failures,
                                    cudaOptions);
          entry.sharedBytes = builder.buildKernel(*scratch);
          if (entry.sharedBytes > 0)
            anyShared = true;
        }
        // The launch must be one the chip can run.
        {
          ArrayRef<int64_t> grid = entry.tiled ? ArrayRef<int64_t>(entry.tiled->grid)
                                               : kernel.getGrid();
          ArrayRef<int64_t> block = entry.tiled
                                        ? ArrayRef<int64_t>(entry.tiled->block)
                                        : kernel.getBlock();
          const cuda::CudaArch &arch = *target->arch;
          int64_t threads = block[0] * block[1] * block[2];
          if (threads > int64_t(arch.maxThreadsPerBlock))
            failures.push_back(
                {kernel, "its block of " + std::to_string(threads) +
                             " threads exceeds the " +
                             std::to_string(arch.maxThreadsPerBlock) +
                             " threads per block of " + chip});
          else if (grid[0] > int64_t(arch.maxGridX) ||
                   grid[1] > int64_t(arch.maxGridYZ) ||
                   grid[2] > int64_t(arch.maxGridYZ))
            failures.push_back(
                {kernel, "its grid (" + std::to_string(grid[0]) + ", " +
                             std::to_string(grid[1]) + ", " +
                             std::to_string(grid[2]) + ") exceeds " + chip +
                             "'s grid limits (" +
                             std::to_string(arch.maxGridX) + ", " +
                             std::to_string(arch.maxGridYZ) + ", " +
                             std::to_string(arch.maxGridYZ) + ")"});
        }
        if (entry.sharedBytes > int64_t(target->arch->maxSharedPerBlock))
          failures.push_back(
              {kernel, "its shared buffers need " +
                           std::to_string(entry.sharedBytes) +
                           " bytes of shared memory; " + chip +
                           " allows at most " +
                           std::to_string(target->arch->maxSharedPerBlock) +
                           " per block"});
        built.push_back(std::move(entry));
      }
      // (The tiled lowering may have declared the array already.)
      if (anyShared && !SymbolTable::lookupSymbolIn(*scratch, kSharedArray)) {
        OpBuilder b(ctx);
        b.setInsertionPointToStart(scratch->getBody());
        LLVM::GlobalOp::create(
            b, module.getLoc(), LLVM::LLVMArrayType::get(b.getI8Type(), 0),
            /*isConstant=*/false, LLVM::Linkage::External, kSharedArray,
            Attribute(), /*alignment=*/kSharedAlign, /*addrSpace=*/3);
      }
      scratches.push_back({plan, std::move(scratch)});
      builtPerPlan.push_back(std::move(built));
    }
    if (!failures.empty()) {
      reportNotLowered(total, failures);
      return signalPassFailure();
    }

    // Finish with the upstream conversions, in the scratch modules.
    for (auto &entry : scratches) {
      PlanOp plan = entry.first;
      ModuleOp scratch = *entry.second;
      PassManager pm(ctx, ModuleOp::getOperationName());
      buildKernelLLVMPipeline(pm);
      bool pipelineFailed = failed(pm.run(scratch));
      scratch->walk([&](Operation *op) {
        if (op == scratch.getOperation() ||
            isa<LLVM::LLVMDialect, NVVM::NVVMDialect>(op->getDialect()))
          return;
        failures.push_back(
            {op, "the upstream LLVM conversions left it unconverted"});
      });
      if (pipelineFailed && failures.empty())
        failures.push_back({plan, "the upstream LLVM conversions failed"});
    }
    if (!failures.empty()) {
      reportNotLowered(std::max<unsigned>(total, failures.size()), failures);
      return signalPassFailure();
    }

    // Commit: one gpu.module per plan, then the kernels' launch attributes.
    OpBuilder b(ctx);
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    b.getUnitAttr());
    auto nvvmTarget = NVVM::NVVMTargetAttr::get(
        ctx, /*optLevel=*/2, "nvptx64-nvidia-cuda", target->arch->chip(),
        target->arch->ptxFeatures());
    for (auto [index, entry] : llvm::enumerate(scratches)) {
      auto &[plan, scratch] = entry;
      b.setInsertionPointToEnd(module.getBody());
      auto gpuModule = gpu::GPUModuleOp::create(
          b, plan.getLoc(), (plan.getSymName() + "_cuda").str(),
          b.getArrayAttr({nvvmTarget}));
      Block &dest = gpuModule.getBodyRegion().front();
      for (Operation &op : llvm::make_early_inc_range(*scratch->getBody()))
        op.moveBefore(&dest, dest.end());
      for (Built &k : builtPerPlan[index]) {
        KernelOp kernel = k.kernel;
        kernel->setAttr("device_entry", b.getStringAttr(k.entry));
        if (k.tiled) {
          kernel.setGrid(k.tiled->grid);
          kernel.setBlock(k.tiled->block);
        }
        kernel.setSharedMem(k.sharedBytes);
        if (keepUops) {
          // The kept UOps are the host fallback only. A tiled kernel's
          // launch need not cover their parallel RANGEs (L0.1): they become
          // loops, which the host runs alike.
          if (k.tiled)
            for (RangeOp range : kernel.getBody().front().getOps<RangeOp>())
              range.setKind(RangeKind::loop);
          continue;
        }
        Block &body = kernel.getBody().front();
        for (Operation &op : body)
          op.dropAllReferences();
        while (!body.empty())
          body.back().erase();
      }
    }
  }
};

} // namespace
