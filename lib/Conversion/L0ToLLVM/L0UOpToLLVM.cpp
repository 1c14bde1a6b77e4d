//===- L0UOpToLLVM.cpp - Host codegen of l0uop kernels -----------------------===//
//
// Each l0uop.kernel becomes an llvm.func with the C ABI
//   void @<plan>_<kernel>(ptr noalias align A buf0, ..., i64 begin, i64 end)
// in two steps: the flat UOp sequence is rebuilt as structured upstream IR
// (arith/math/scf/vector, with loads and stores already on LLVM pointers),
// then the upstream conversions take it to the LLVM dialect. The kernels are
// built in a scratch module, so a failure leaves the input untouched. This
// file holds the kernel's structure (its split range, barrier phases,
// function and body walk) and the pass; one UOp at a time is
// KernelBuilder.cpp's, the register-blocked matmul form TiledKernel.cpp's.
//
//===----------------------------------------------------------------------===//
#include "synpl/Conversion/Passes.h"

#include "KernelBuilder.h"
#include "synpl/Dialect/L0Ctl/L0CtlOps.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Support/OptLevel.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <memory>

namespace synpl {
#define GEN_PASS_DEF_CONVERTL0UOPTOLLVM
#include "synpl/Conversion/Passes.h.inc"
} // namespace synpl

using namespace mlir;
using namespace synpl;
using namespace synpl::l0uop;
using namespace synpl::l0tollvm;

namespace {

/// Whether a RANGE makes the host run several threads of one block one
/// after another (so a BARRIER inside it must split it).
static bool serializesBlock(KernelOp kernel, RangeOp range) {
  RangeKind k = range.getKind();
  ArrayRef<int64_t> block = kernel.getBlock();
  switch (k) {
  case RangeKind::local_x:
  case RangeKind::local_y:
  case RangeKind::local_z:
    return range.getTripCount() > 1;
  case RangeKind::global_x:
  case RangeKind::global_y:
  case RangeKind::global_z:
    return block[static_cast<unsigned>(k) - 1] > 1;
  default:
    return false;
  }
}

} // namespace

llvm::DenseMap<Operation *, Fission> synpl::l0tollvm::analyzeBarriers(
    KernelOp kernel, llvm::DenseSet<Operation *> &directBarriers,
    llvm::function_ref<bool(RangeOp)> splits) {
  Block &body = kernel.getBody().front();
  llvm::DenseMap<Operation *, Fission> result;
  // Which serializing ranges hold a barrier directly.
  SmallVector<Operation *> stack;
  for (Operation &op : body) {
    if (isa<RangeOp, IfOp>(op)) {
      stack.push_back(&op);
    } else if (isa<EndOp, EndIfOp>(op)) {
      if (!stack.empty())
        stack.pop_back();
    } else if (isa<BarrierOp>(op) && !stack.empty()) {
      auto range = dyn_cast<RangeOp>(stack.back());
      if (range && splits(range)) {
        result[range];
        directBarriers.insert(&op);
      }
    }
  }
  // Phases, then the values that cross them.
  for (auto &[rangeOp, fission] : result) {
    llvm::DenseMap<Operation *, unsigned> phaseOf;
    unsigned phase = 0, depth = 0;
    for (Operation *op = rangeOp->getNextNode(); op; op = op->getNextNode()) {
      if (auto end = dyn_cast<EndOp>(op);
          end && depth == 0 && end.getRange().getDefiningOp() == rangeOp)
        break;
      if (isa<RangeOp, IfOp>(op))
        ++depth;
      else if (isa<EndOp, EndIfOp>(op))
        --depth;
      else if (depth == 0 && directBarriers.contains(op))
        ++phase;
      phaseOf[op] = phase;
    }
    for (auto &[op, pu] : phaseOf)
      if (auto reduce = dyn_cast<ReduceOp>(op))
        if (phaseOf.lookup(reduce.getRange().getDefiningOp()) != pu)
          fission.splitReduces.insert(op);
    for (auto &[op, pu] : phaseOf)
      for (Value v : op->getOperands()) {
        Operation *def = v.getDefiningOp();
        auto it = def ? phaseOf.find(def) : phaseOf.end();
        if (it != phaseOf.end() && it->second < pu)
          fission.crossPhase.try_emplace(v, it->second);
      }
    for (Operation *op = rangeOp->getNextNode(); op; op = op->getNextNode()) {
      if (!phaseOf.count(op))
        break;
      for (Value v : op->getResults())
        if (fission.crossPhase.count(v))
          fission.cross.push_back(v);
    }
  }
  return result;
}

namespace {

static SplitInfo findSplitRange(KernelOp kernel) {
  Block &body = kernel.getBody().front();
  llvm::DenseSet<Operation *> reduced;
  for (Operation &op : body)
    if (auto reduce = dyn_cast<ReduceOp>(op))
      reduced.insert(reduce.getRange().getDefiningOp());
  SmallVector<RangeOp> topLevel;
  int depth = 0;
  for (Operation &op : body) {
    if (auto range = dyn_cast<RangeOp>(op)) {
      if (depth == 0)
        topLevel.push_back(range);
      ++depth;
    } else if (isa<IfOp>(op)) {
      ++depth;
    } else if (isa<EndOp, EndIfOp>(op)) {
      --depth;
    }
  }
  RangeOp split;
  for (RangeOp r : topLevel)
    if (r.getKind() != RangeKind::loop) {
      split = r;
      break;
    }
  if (!split)
    for (RangeOp r : topLevel)
      if (!reduced.contains(r.getOperation())) {
        split = r;
        break;
      }
  if (!split)
    return {RangeOp(), 1};
  // A block split over host threads cannot meet at a barrier.
  if (serializesBlock(kernel, split)) {
    bool inside = false;
    for (Operation &op : body) {
      if (&op == split.getOperation())
        inside = true;
      else if (auto end = dyn_cast<EndOp>(op);
               end && end.getRange() == split.getResult())
        break;
      else if (inside && isa<BarrierOp>(op))
        return {RangeOp(), 1};
    }
  }
  // Every side effect must lie inside the split range, or each chunk would
  // repeat it.
  bool inside = false;
  for (Operation &op : body) {
    if (&op == split.getOperation())
      inside = true;
    else if (auto end = dyn_cast<EndOp>(op);
             end && end.getRange() == split.getResult())
      inside = false;
    else if (!inside && isa<StoreOp, CustomOp>(op))
      return {RangeOp(), 1};
  }
  return {split, split.getTripCount()};
}

} // namespace

namespace synpl::l0tollvm {

void KernelBuilder::openPhase(Frame &frame, Location loc) {
  auto range = cast<RangeOp>(frame.uop);
  frame.loop = scf::ForOp::create(b, loc, i64Const(loc, 0),
                                  i64Const(loc, range.getTripCount()),
                                  i64Const(loc, 1));
  b.setInsertionPoint(frame.loop.getBody()->getTerminator());
  frame.iteration = frame.loop.getInductionVar();
  Value iv = arith::AddIOp::create(
      b, loc, i64Const(loc, range.getLower()),
      arith::MulIOp::create(b, loc, frame.iteration,
                            i64Const(loc, range.getStep())));
  mapping.map(range.getResult(), iv);
  // Values of earlier phases come back from their per-thread arrays.
  auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
  for (Value v : frame.fission->cross) {
    if (frame.fission->crossPhase.lookup(v) >= frame.phase)
      continue;
    Value array = crossArrays.lookup(v);
    if (!array)
      continue;
    Type t = isa<PtrType>(v.getType()) ? Type(ptrTy) : convertType(v.getType());
    Value slot = LLVM::GEPOp::create(b, loc, ptrTy, t, array,
                                     ValueRange{frame.iteration});
    mapping.map(v, LLVM::LoadOp::create(b, loc, t, slot));
  }
}

void KernelBuilder::closePhase(Frame &frame, Location loc) {
  // The values of this phase that later phases read go to their arrays.
  auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
  for (Value v : frame.fission->cross) {
    if (frame.fission->crossPhase.lookup(v) != frame.phase)
      continue;
    Value array = crossArrays.lookup(v), value = lookup(v);
    if (!array || !value)
      continue;
    Value slot = LLVM::GEPOp::create(b, loc, ptrTy, value.getType(), array,
                                     ValueRange{frame.iteration});
    LLVM::StoreOp::create(b, loc, value, slot);
  }
  b.setInsertionPointAfter(frame.loop);
}

Block *KernelBuilder::bindBufferParams(LLVM::LLVMFuncOp fn,
                                       unsigned numBuffers,
                                       int64_t defaultAlign, int64_t maxAlign) {
  Block &body = kernel.getBody().front();
  for (unsigned a = 0; a < numBuffers; ++a) {
    fn.setArgAttr(a, LLVM::LLVMDialect::getNoAliasAttrName(), b.getUnitAttr());
    int64_t align = defaultAlign;
    if (auto slot = planSymbols.lookup<SlotOp>(
            kernel.getSlotOf(body.getArgument(a)).getValue()))
      if (auto pool = planSymbols.lookup<PoolOp>(slot.getPool()))
        align = std::min<int64_t>(maxAlign, pool.getAlignment());
    fn.setArgAttr(a, LLVM::LLVMDialect::getAlignAttrName(),
                  b.getI64IntegerAttr(align));
  }
  Block *entry = fn.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  for (unsigned a = 0; a < numBuffers; ++a)
    mapping.map(body.getArgument(a), entry->getArgument(a));
  return entry;
}

LLVM::LLVMFuncOp KernelBuilder::createFunction(ModuleOp target,
                                               const SplitInfo &split) {
  MLIRContext *ctx = kernel.getContext();
  Location loc = kernel.getLoc();
  // Signature: a pointer per bound buffer, then begin, end.
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  unsigned numBuffers = kernel.getNumInputs() + kernel.getNumOutputs();
  SmallVector<Type> params(numBuffers, ptrTy);
  params.push_back(b.getI64Type());
  params.push_back(b.getI64Type());
  auto fnTy = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), params);
  b.setInsertionPointToEnd(target.getBody());
  auto fn = LLVM::LLVMFuncOp::create(b, loc, name, fnTy);
  fn->setAttr("synpl.iterations", b.getI64IntegerAttr(split.iterations));
  if (split.grain > 1)
    fn->setAttr("synpl.grain", b.getI64IntegerAttr(split.grain));
  Block *entry = bindBufferParams(fn, numBuffers, /*defaultAlign=*/64,
                                  /*maxAlign=*/64);
  begin = entry->getArgument(numBuffers);
  end = entry->getArgument(numBuffers + 1);
  // Block-shared scratch: one copy per host thread, on its stack.
  for (BlockArgument arg : kernel.getSharedArgs()) {
    auto buf = cast<BufType>(arg.getType());
    Value count = i64Const(loc, buf.getNumElements());
    mapping.map(arg, LLVM::AllocaOp::create(b, loc, ptrTy,
                                            convertType(buf.getElementType()),
                                            count, /*alignment=*/64));
  }
  auto ret = LLVM::ReturnOp::create(b, loc, ValueRange{});
  b.setInsertionPoint(ret);
  return fn;
}

SplitInfo KernelBuilder::build(ModuleOp target) {
  Location loc = kernel.getLoc();
  Block &body = kernel.getBody().front();
  SplitInfo split = findSplitRange(kernel);

  if (std::optional<TilePlan> plan =
          matchTile(kernel, split, tileLanes, tileRows)) {
    // Every chunk packs the panels of the operand that does not depend on
    // the row: fewer, larger chunks pack it fewer times.
    if (!plan->packs.empty())
      split.grain = plan->rowCount;
    LLVM::LLVMFuncOp fn = createFunction(target, split);
    usesScratch = false;
    if (succeeded(buildTiled(*plan))) {
      if (usesScratch && !target.lookupSymbol(kKernelScratchFn)) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToEnd(target.getBody());
        auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
        LLVM::LLVMFuncOp::create(
            b, loc, kKernelScratchFn,
            LLVM::LLVMFunctionType::get(ptrTy, {b.getI64Type()}));
      }
      return split;
    }
    split.grain = 1;
    // Something the tiled form cannot express: start over, untiled.
    fn.erase();
    mapping.clear();
  }

  createFunction(target, split);
  auto ptrTy = LLVM::LLVMPointerType::get(kernel.getContext());
  // Per-thread arrays of the values that cross a barrier phase.
  fissions = analyzeBarriers(kernel, directBarriers, [&](RangeOp range) {
    return serializesBlock(kernel, range);
  });
  // A RANGE over global_a split at its barriers runs each phase over the
  // whole range, but its threads meet at a barrier block by block (and each
  // block has its own shared buffers): correct only when the range fits one
  // block.
  for (auto &entry : fissions) {
    auto range = cast<RangeOp>(entry.first);
    RangeKind k = range.getKind();
    if (k != RangeKind::global_x && k != RangeKind::global_y &&
        k != RangeKind::global_z)
      continue;
    int64_t blockExtent = kernel.getBlock()[static_cast<unsigned>(k) - 1];
    if (range.getTripCount() > blockExtent)
      fail(range, ("a RANGE over " + stringifyRangeKind(k) + " of " +
                   Twine(range.getTripCount()) +
                   " iterations holds BARRIERs but spans several blocks of " +
                   Twine(blockExtent) +
                   " threads: the host runs its barrier phases over the "
                   "whole range; map it over group_ and local_ instead")
                      .str());
  }
  for (Operation &op : body) { // in body order: deterministic output
    auto range = dyn_cast<RangeOp>(op);
    if (!range || !fissions.count(range))
      continue;
    const Fission &fission = fissions[range];
    Value count = i64Const(loc, std::max<int64_t>(1, range.getTripCount()));
    for (Value v : fission.cross) {
      Type t = isa<PtrType>(v.getType()) ? Type(ptrTy) : convertType(v.getType());
      if (t)
        crossArrays[v] = LLVM::AllocaOp::create(b, loc, ptrTy, t, count,
                                                /*alignment=*/64);
    }
  }
  if (!split.range) {
    // Not splittable: the whole kernel runs in the chunk that is not empty.
    Value run = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, begin,
                                      end);
    auto guard = scf::IfOp::create(b, loc, run, /*withElseRegion=*/false);
    b.setInsertionPoint(guard.thenBlock()->getTerminator());
  }
  lowerBody(split.range);
  return split;
}

void KernelBuilder::lowerBody(RangeOp splitRange) {
  Block &body = kernel.getBody().front();
  // The REDUCEs each RANGE carries.
  llvm::DenseMap<Operation *, SmallVector<ReduceOp>> reducesOf;
  for (Operation &op : body)
    if (auto reduce = dyn_cast<ReduceOp>(op))
      reducesOf[reduce.getRange().getDefiningOp()].push_back(reduce);

  for (Operation &op : body) {
    Location l = op.getLoc();
    if (auto range = dyn_cast<RangeOp>(op);
        range && isParallel(range.getKind()) && openParallelRange(range))
      continue;
    if (auto range = dyn_cast<RangeOp>(op);
        range && fissions.count(range) && range != splitRange) {
      Frame frame;
      frame.uop = range;
      frame.fission = &fissions[range];
      openPhase(frame, l);
      frames.push_back(std::move(frame));
      continue;
    }
    if (directBarriers.contains(&op) && !frames.empty() &&
        frames.back().fission) {
      std::string why;
      dependent = false;
      if (failed(lowerOp(&op, why))) { // the enclosing RANGEs allow it?
        fail(&op, why, dependent);
        continue;
      }
      // Close this phase, then open the next.
      Frame &frame = frames.back();
      closePhase(frame, l);
      ++frame.phase;
      openPhase(frame, l);
      continue;
    }
    if (auto range = dyn_cast<RangeOp>(op)) {
      Frame frame;
      frame.uop = range;
      SmallVector<Value> inits;
      for (ReduceOp reduce : reducesOf.lookup(range)) {
        Type t = convertType(reduce.getType());
        if (!t) {
          fail(reduce, ("no " + targetName() + " type for its dtype").str());
          continue;
        }
        // Fold straight into init when it is already computed.
        Operation *initDef = reduce.getInit().getDefiningOp();
        bool dominates = initDef && initDef->getBlock() == &body &&
                         initDef->isBeforeInBlock(range) &&
                         lookup(reduce.getInit());
        frame.reduces.push_back(reduce);
        frame.initDominates.push_back(dominates);
        inits.push_back(dominates ? lookup(reduce.getInit())
                                  : identity(l, reduce.getKind(), t));
      }
      Value lb, ub, step;
      bool isSplit = range == splitRange;
      if (isSplit) {
        lb = arith::MaxSIOp::create(b, l, begin, i64Const(l, 0));
        ub = arith::MinSIOp::create(b, l, end,
                                    i64Const(l, range.getTripCount()));
        step = i64Const(l, 1);
      } else {
        lb = i64Const(l, range.getLower());
        ub = i64Const(l, range.getUpper());
        step = i64Const(l, range.getStep());
      }
      frame.loop = scf::ForOp::create(b, l, lb, ub, step, inits);
      Block *loopBody = frame.loop.getBody();
      if (loopBody->mightHaveTerminator())
        b.setInsertionPoint(loopBody->getTerminator());
      else
        b.setInsertionPointToEnd(loopBody);
      Value iv = frame.loop.getInductionVar();
      if (isSplit && (range.getLower() != 0 || range.getStep() != 1))
        iv = arith::AddIOp::create(
            b, l, i64Const(l, range.getLower()),
            arith::MulIOp::create(b, l, iv, i64Const(l, range.getStep())));
      mapping.map(range.getResult(), iv);
      frames.push_back(std::move(frame));
      continue;
    }
    if (auto endOp = dyn_cast<EndOp>(op)) {
      if (frames.empty() || (!frames.back().loop && !frames.back().parallel)) {
        fail(&op, "END without an open RANGE");
        continue;
      }
      Frame frame = frames.pop_back_val();
      if (frame.parallel) {
        if (frame.branch)
          b.setInsertionPointAfter(frame.branch);
        continue;
      }
      if (!frame.reduces.empty()) {
        SmallVector<Value> next;
        for (auto [i, reduce] : llvm::enumerate(frame.reduces)) {
          Value acc = frame.loop.getRegionIterArg(i);
          Value v = lookup(reduce.getValue());
          next.push_back(v ? combine(l, reduce.getKind(), acc, v) : acc);
        }
        scf::YieldOp::create(b, l, next);
        for (auto [i, reduce] : llvm::enumerate(frame.reduces))
          reduceResults[reduce] = frame.loop.getResult(i);
      }
      b.setInsertionPointAfter(frame.loop);
      continue;
    }
    if (auto ifOp = dyn_cast<IfOp>(op)) {
      Value cond = lookup(ifOp.getCondition());
      if (!cond) {
        fail(&op, "its condition was not lowered", /*dependent=*/true);
        cond = arith::ConstantOp::create(b, l, b.getBoolAttr(false));
      }
      Frame frame;
      frame.uop = ifOp;
      frame.branch = scf::IfOp::create(b, l, cond, /*withElseRegion=*/false);
      b.setInsertionPoint(frame.branch.thenBlock()->getTerminator());
      frames.push_back(std::move(frame));
      continue;
    }
    if (isa<EndIfOp>(op)) {
      if (frames.empty() || !frames.back().branch) {
        fail(&op, "ENDIF without an open IF");
        continue;
      }
      Frame frame = frames.pop_back_val();
      b.setInsertionPointAfter(frame.branch);
      continue;
    }
    if (auto reduce = dyn_cast<ReduceOp>(op)) {
      if (llvm::any_of(frames, [&](const Frame &f) {
            return f.fission && f.fission->splitReduces.contains(reduce);
          })) {
        fail(&op, "a BARRIER separates this REDUCE from its RANGE");
        continue;
      }
      Value folded = reduceResults.lookup(reduce);
      if (!folded) {
        fail(&op, "its RANGE did not carry it");
        continue;
      }
      Operation *initDef = reduce.getInit().getDefiningOp();
      bool dominates = initDef && initDef->getBlock() == &body &&
                       initDef->isBeforeInBlock(reduce.getRange().getDefiningOp());
      if (!dominates) {
        Value init = lookup(reduce.getInit());
        if (!init) {
          fail(&op, "its init was not lowered", /*dependent=*/true);
          continue;
        }
        folded = combine(l, reduce.getKind(), init, folded);
      }
      mapping.map(reduce.getResult(), folded);
      continue;
    }
    std::string why;
    dependent = false;
    if (failed(lowerOp(&op, why)))
      fail(&op, why, dependent);
  }
}

} // namespace synpl::l0tollvm

/// The upstream conversions that finish the job.
void synpl::l0tollvm::buildKernelLLVMPipeline(OpPassManager &pm) {
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

namespace synpl::l0tollvm {
LogicalResult lowerCustomKernel(ModuleOp module, ModuleOp scratch, KernelOp kernel,
                                StringRef name, SmallVectorImpl<NotLowered> &failures,
                                llvm::StringMap<std::string> &imported);
} // namespace synpl::l0tollvm

namespace {

struct ConvertL0UOpToLLVMPass
    : public synpl::impl::ConvertL0UOpToLLVMBase<ConvertL0UOpToLLVMPass> {
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
    SmallVector<NotLowered> failures;
    unsigned total = 0;

    // Kernels already lowered (host_entry set, no UOps) are skipped: the
    // pass is idempotent on its own output.
    SmallVector<std::pair<PlanOp, KernelOp>> kernels, custom;
    module.walk([&](KernelOp kernel) {
      if (kernel->hasAttr("host_entry"))
        return;
      // A user kernel (no UOps): its own lowering (CustomKernel.cpp), unless
      // it is a device kernel already.
      if (kernel->hasAttr("custom_kernel")) {
        if (!kernel->hasAttr("device_entry"))
          if (auto plan = kernel->getParentOfType<PlanOp>())
            custom.push_back({plan, kernel});
        return;
      }
      // A CUDA kernel lowered without keep-uops has no UOps left.
      if (kernel.getBody().front().empty())
        return;
      if (auto plan = kernel->getParentOfType<PlanOp>())
        kernels.push_back({plan, kernel});
    });

    OwningOpRef<ModuleOp> scratch = ModuleOp::create(module.getLoc());
    SymbolTable moduleSymbols(module);
    llvm::StringSet<> names;
    // The kernels lowered so far, by the hash of their code; each built
    // kernel with the function it got (its own, or an earlier kernel's).
    struct Lowered {
      KernelOp kernel;
      std::string entry;
      SplitInfo split;
    };
    llvm::DenseMap<PlanOp, std::unique_ptr<SymbolTable>> planTables;
    KernelsByCode byCode;
    SmallVector<Lowered> built;
    for (auto [plan, kernel] : kernels) {
      total += kernel.getBody().front().getOperations().size() + 1;
      std::string name = (plan.getSymName() + "_" + kernel.getSymName()).str();
      if (moduleSymbols.lookup(name) || !names.insert(name).second) {
        failures.push_back(
            {kernel, "symbol @" + name + " already exists in the module"});
        for (Operation &op : kernel.getBody().front())
          failures.push_back({&op, "its kernel is not lowered", true});
        continue;
      }
      std::unique_ptr<SymbolTable> &planSymbols = planTables[plan];
      if (!planSymbols)
        planSymbols = std::make_unique<SymbolTable>(plan);
      if (std::optional<size_t> same =
              shareKernels ? byCode.findOrAdd(kernel, *planSymbols, built.size())
                           : std::nullopt) {
        Lowered earlier = built[*same];
        built.push_back({kernel, earlier.entry, earlier.split});
        ++numShared;
        continue;
      }
      KernelBuilder builder(kernel, name, *planSymbols, failures, tileLanes,
                            tileRows);
      builder.inlineExp2 = inlineExp2;
      SplitInfo split = builder.build(*scratch);
      built.push_back({kernel, name, split});
      ++numKernels;
    }
    llvm::StringMap<std::string> imported;
    bool customFailed = false;
    for (auto [plan, kernel] : custom) {
      ++total;
      std::string name = (plan.getSymName() + "_" + kernel.getSymName()).str();
      if (moduleSymbols.lookup(name) || !names.insert(name).second) {
        failures.push_back({kernel, "symbol @" + name + " already exists in the module"});
        continue;
      }
      if (kernel.getOptLevel()) {
        failures.push_back({kernel, "a user kernel is compiled as its file says: opt_level "
                                    "applies to kernels with UOps"});
        continue;
      }
      if (failed(l0tollvm::lowerCustomKernel(module, *scratch, kernel, name, failures,
                                             imported))) {
        customFailed = true;
        continue;
      }
      built.push_back({kernel, name, SplitInfo{RangeOp(), /*iterations=*/1, /*grain=*/1}});
      ++numKernels;
    }
    // A user kernel that broke its boundary is reported as row L0.1 already.
    if (customFailed && failures.empty())
      return signalPassFailure();
    // An l0ctl.program left in a plan that is about to be erased.
    if (!keepPlan)
      module.walk([&](l0ctl::ProgramOp program) {
        if (program->getParentOfType<PlanOp>()) {
          ++total;
          failures.push_back({program, "keep-plan=false erases its plan; run "
                                       "--synpl-convert-l0ctl-to-llvm first"});
        }
      });
    if (!failures.empty()) {
      l0tollvm::reportNotLowered(total, failures);
      return signalPassFailure();
    }

    // Finish with the upstream conversions, in the scratch module.
    PassManager pm(ctx, ModuleOp::getOperationName());
    buildKernelLLVMPipeline(pm);
    // Whatever is left outside the LLVM dialect (the upstream passes say
    // why, at the same location) is reported like any other refusal.
    bool pipelineFailed = failed(pm.run(*scratch));
    scratch->walk([&](Operation *op) {
      if (op == scratch->getOperation() ||
          isa<LLVM::LLVMDialect>(op->getDialect()))
        return;
      failures.push_back(
          {op, "the upstream LLVM conversions left it unconverted"});
    });
    if (pipelineFailed && failures.empty())
      failures.push_back({module, "the upstream LLVM conversions failed"});
    if (!failures.empty()) {
      l0tollvm::reportNotLowered(total, failures);
      return signalPassFailure();
    }

    // A kernel's optimization effort travels to its function as the
    // attribute the host backend splits the module by.
    Builder builder(ctx);
    for (Lowered &lowered : built)
      if (std::optional<uint32_t> level = lowered.kernel.getOptLevel())
        if (auto fn = scratch->lookupSymbol<LLVM::LLVMFuncOp>(lowered.entry)) {
          SmallVector<Attribute> passthrough;
          if (ArrayAttr old = fn.getPassthroughAttr())
            passthrough.assign(old.begin(), old.end());
          passthrough.push_back(builder.getStrArrayAttr(
              {kOptLevelAttr, std::to_string(*level)}));
          fn.setPassthroughAttr(builder.getArrayAttr(passthrough));
        }

    // Commit: move the functions over (a runtime function the module
    // declares already keeps its declaration), then reduce or drop the
    // plans.
    Block *dest = module.getBody();
    for (Operation &op : llvm::make_early_inc_range(*scratch->getBody())) {
      auto fn = dyn_cast<LLVM::LLVMFuncOp>(op);
      if (fn && fn.isExternal() && moduleSymbols.lookup(fn.getName())) {
        fn.erase();
        continue;
      }
      op.moveBefore(dest, dest->end());
    }
    for (auto &[kernel, name, split] : built) {
      Block &body = kernel.getBody().front();
      for (Operation &op : body)
        op.dropAllReferences();
      while (!body.empty())
        body.back().erase();
      kernel->setAttr("host_entry", FlatSymbolRefAttr::get(ctx, name));
      kernel->setAttr("host_iterations",
                      builder.getI64IntegerAttr(split.iterations));
      if (split.grain > 1)
        kernel->setAttr("host_grain", builder.getI64IntegerAttr(split.grain));
    }
    if (!keepPlan)
      for (PlanOp plan : llvm::make_early_inc_range(module.getOps<PlanOp>()))
        plan.erase();
  }
};

} // namespace
