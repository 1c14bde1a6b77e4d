//===- CudaKernelBuilder.cpp - One l0uop device kernel as NVVM -----------===//
//
// The GPU's side of the shared kernel lowering: parallel RANGEs as the
// launch's thread and block indices (masked where the launch overshoots),
// barrier phases, BARRIER and shared-memory STOREs, the PTX forms of the
// math UOps (fast approximations or precise ones), and the kernel's
// function with its shared memory.
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

namespace synpl::l0tonvvm {

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

} // namespace synpl::l0tonvvm
