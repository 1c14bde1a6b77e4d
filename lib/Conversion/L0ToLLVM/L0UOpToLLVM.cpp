//===- L0UOpToLLVM.cpp - Host codegen of l0uop kernels -----------------------===//
//
// Each l0uop.kernel becomes an llvm.func with the C ABI
//   void @<plan>_<kernel>(ptr noalias align A buf0, ..., i64 begin, i64 end)
// in two steps: the flat UOp sequence is rebuilt as structured upstream IR
// (arith/math/scf/vector, with loads and stores already on LLVM pointers),
// then the upstream conversions take it to the LLVM dialect. The kernels are
// built in a scratch module, so a failure leaves the input untouched.
//
//===----------------------------------------------------------------------===//
#include "synpl/Conversion/Passes.h"

#include "Lowering.h"
#include "synpl/Dialect/L0Ctl/L0CtlOps.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"

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

namespace synpl {
#define GEN_PASS_DEF_CONVERTL0UOPTOLLVM
#include "synpl/Conversion/Passes.h.inc"
} // namespace synpl

using namespace mlir;
using namespace synpl;
using namespace synpl::l0uop;
using synpl::l0tollvm::NotLowered;

namespace {

/// Host intrinsics CUSTOM may name.
constexpr llvm::StringLiteral kTileLoad = "host.tile_load";
constexpr llvm::StringLiteral kTileStore = "host.tile_store";

static bool isFloat(Type t) {
  if (auto v = dyn_cast<VectorType>(t))
    t = v.getElementType();
  return isa<FloatType>(t);
}
static Type elementOf(Type t) {
  if (auto v = dyn_cast<VectorType>(t))
    return v.getElementType();
  return t;
}

/// The split range of a kernel and whether chunking it is sound (see the
/// pass description).
struct SplitInfo {
  RangeOp range;      // null: not splittable
  int64_t iterations; // what the runtime splits: [0, iterations)
};

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

/// The barrier phases of a serializing RANGE whose body holds BARRIERs
/// directly: the RANGE is split at each barrier into one loop per phase,
/// and the values a later phase reads from an earlier one go through
/// per-thread arrays.
struct Fission {
  llvm::DenseMap<Value, unsigned> crossPhase; // value -> defining phase
  SmallVector<Value> cross;                   // in definition order
  /// REDUCEs separated from their RANGE by a barrier (not supported).
  llvm::DenseSet<Operation *> splitReduces;
};

static llvm::DenseMap<Operation *, Fission>
analyzeBarriers(KernelOp kernel, llvm::DenseSet<Operation *> &directBarriers) {
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
      if (range && serializesBlock(kernel, range)) {
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

/// How a value of a tiled kernel's lane body varies over the lanes (the
/// iterations of the vectorised RANGE).
struct LaneValue {
  /// A scalar (the same in every lane, or lane 0's when stride != 0) or a
  /// vector of lanes (a vector of pointers for a gathered address).
  Value v;
  /// Per-lane step of an index (in values) or of a pointer (in elements).
  int64_t stride = 0;
  bool varying() const { return stride != 0 || isa<VectorType>(v.getType()); }
};

/// A kernel the tiled lowering takes: RANGE i (the split range) around
/// RANGE j, both over threads, around straight-line code and loop RANGEs
/// folded by REDUCEs.
struct TilePlan {
  mutable RangeOp rows, lanes;   // i and j
  SmallVector<Operation *> body; // the ops strictly inside j
  llvm::DenseSet<Value> varying;      // values that depend on j
  llvm::DenseSet<Value> rowDependent; // values that depend on i
  llvm::DenseMap<Operation *, SmallVector<ReduceOp>> reducesOf;
  llvm::DenseSet<Operation *> initFirst; // REDUCEs whose init precedes the RANGE
  unsigned laneCount = 0, rowCount = 0;
  /// A load of a k loop whose lanes do not depend on i: packed once per
  /// lane block into a contiguous panel (k iterations x lanes) that every
  /// row block then reads with aligned vector loads. Its address is
  /// computed by `slice` (ops of the k body, and CONSTs) from j and k.
  struct Pack {
    Operation *load;
    mutable RangeOp range;
    SmallVector<Operation *> slice; // in body order, the load last
  };
  SmallVector<Pack> packs;
  llvm::DenseMap<Operation *, unsigned> packOf;
  /// The body's one k loop when its iterations may be split into blocks
  /// (no other loop, no STORE before it): null otherwise.
  mutable RangeOp blockable;
  /// Iterations per k block of `blockable` (0: not split).
  int64_t kBlock = 0;
};

static bool isParallel(RangeOp r) { return r.getKind() != RangeKind::loop; }

static std::optional<TilePlan> matchTile(KernelOp kernel, SplitInfo split,
                                         unsigned lanes, unsigned maxRows) {
  if (!split.range || lanes < 2 || maxRows < 1 ||
      !kernel.getSharedArgs().empty())
    return std::nullopt;
  SmallVector<Operation *> ops;
  for (Operation &op : kernel.getBody().front())
    ops.push_back(&op);
  if (ops.size() < 5 || ops.front() != split.range.getOperation())
    return std::nullopt;
  RangeOp outer = split.range;
  auto inner = dyn_cast<RangeOp>(ops[1]);
  auto endInner = dyn_cast<EndOp>(ops[ops.size() - 2]);
  auto endOuter = dyn_cast<EndOp>(ops.back());
  if (!isParallel(outer) || !inner || !isParallel(inner) || !endInner ||
      !endOuter || endInner.getRange() != inner.getResult() ||
      endOuter.getRange() != outer.getResult() || inner.getTripCount() < 1 ||
      outer.getTripCount() < 1)
    return std::nullopt;
  TilePlan plan;
  plan.rows = outer;
  plan.lanes = inner;
  plan.laneCount = lanes;
  plan.varying.insert(inner.getResult());
  plan.rowDependent.insert(outer.getResult());
  plan.body.assign(ops.begin() + 2, ops.end() - 2);
  RangeOp open;
  unsigned maxReduces = 0;
  llvm::DenseMap<Operation *, Operation *> rangeOf; // op -> its k RANGE
  llvm::DenseMap<Operation *, unsigned> position;
  // Loads and stores move whole bytes per lane (a vector of i1 is packed).
  auto byteSized = [](Type t) {
    return t.isIntOrIndexOrFloat() && !t.isIndex() &&
           t.getIntOrFloatBitWidth() % 8 == 0;
  };
  for (Operation *op : plan.body) {
    for (Type t : op->getResultTypes())
      if (isa<VectorType>(t))
        return std::nullopt;
    bool vary = false, rowDep = false;
    for (Value v : op->getOperands()) {
      if (isa<VectorType>(v.getType()))
        return std::nullopt;
      vary |= plan.varying.contains(v);
      rowDep |= plan.rowDependent.contains(v);
    }
    position[op] = position.size();
    if (open)
      rangeOf[op] = open;
    if (auto r = dyn_cast<RangeOp>(op)) {
      if (open || isParallel(r))
        return std::nullopt;
      open = r;
    } else if (auto e = dyn_cast<EndOp>(op)) {
      if (!open || e.getRange() != open.getResult())
        return std::nullopt;
      open = RangeOp();
    } else if (auto reduce = dyn_cast<ReduceOp>(op)) {
      Operation *range = reduce.getRange().getDefiningOp();
      if (open || !range)
        return std::nullopt;
      auto &list = plan.reducesOf[range];
      list.push_back(reduce);
      maxReduces = std::max<unsigned>(maxReduces, list.size());
      if (Operation *init = reduce.getInit().getDefiningOp();
          init && init->getBlock() == range->getBlock() &&
          init->isBeforeInBlock(range))
        plan.initFirst.insert(reduce);
    } else if (isa<StoreOp>(op)) {
      if (open || op->getNumOperands() != 2 ||
          !byteSized(op->getOperand(1).getType()))
        return std::nullopt;
    } else if (isa<LoadOp>(op)) {
      if (!byteSized(op->getResult(0).getType()))
        return std::nullopt;
    } else if (isa<ModOp>(op)) {
      if (vary) // masked-off lanes could divide by zero
        return std::nullopt;
    } else if (!isa<ConstOp, IndexOp, AddOp, MulOp, MulAccOp, NegOp,
                    ReciprocalOp, MaxOp, CmpLtOp, CmpNeOp, WhereOp, Exp2Op,
                    Log2Op, SinOp, SqrtOp, CastOp>(op)) {
      return std::nullopt;
    }
    for (Value r : op->getResults()) {
      if (vary)
        plan.varying.insert(r);
      if (rowDep)
        plan.rowDependent.insert(r);
    }
  }
  if (open || maxReduces == 0)
    return std::nullopt;
  {
    RangeOp only;
    unsigned loops = 0;
    bool storeFirst = false;
    for (Operation *op : plan.body) {
      if (auto r = dyn_cast<RangeOp>(op)) {
        only = r;
        ++loops;
      }
      storeFirst |= isa<StoreOp>(op) && loops == 0;
    }
    if (loops == 1 && !storeFirst)
      plan.blockable = only;
  }
  // k blocks: a long k loop runs in blocks of about 256 iterations, so that
  // a packed panel (256 x 16 f32 = 16 KiB) stays in L1 across row blocks.
  if (plan.blockable && plan.blockable.getTripCount() > 384) {
    int64_t trip = plan.blockable.getTripCount();
    int64_t blocks = (trip + 255) / 256;
    plan.kBlock = (trip + blocks - 1) / blocks;
  }
  // Loads to pack: varying, independent of i, addressed from j, k and
  // constants alone; at most 4 panels of at most 128 KiB.
  for (Operation *op : plan.body) {
    auto range = dyn_cast_or_null<RangeOp>(rangeOf.lookup(op));
    if (!isa<LoadOp>(op) || !range || !plan.varying.contains(op->getResult(0)) ||
        plan.rowDependent.contains(op->getResult(0)) || plan.packs.size() >= 4)
      continue;
    unsigned bytes = op->getResult(0).getType().getIntOrFloatBitWidth() / 8;
    int64_t rows = range.getTripCount();
    if (plan.kBlock)
      rows = std::min(rows, plan.kBlock);
    if (rows * lanes * bytes > 128 * 1024)
      continue;
    SmallVector<Operation *> slice{op};
    llvm::DenseSet<Operation *> seen{op};
    bool ok = true;
    for (size_t n = 0; n < slice.size() && ok; ++n)
      for (Value v : slice[n]->getOperands()) {
        if (isa<BufType>(v.getType()) || v == inner.getResult() ||
            v == range.getResult())
          continue;
        Operation *def = v.getDefiningOp();
        if (!def || !position.count(def)) {
          ok = false;
          break;
        }
        if (!isa<ConstOp>(def) &&
            (rangeOf.lookup(def) != range.getOperation() ||
             !isa<IndexOp, AddOp, MulOp, NegOp>(def))) {
          ok = false;
          break;
        }
        if (seen.insert(def).second)
          slice.push_back(def);
      }
    if (!ok)
      continue;
    llvm::sort(slice, [&](Operation *x, Operation *y) {
      return position[x] < position[y];
    });
    plan.packOf[op] = plan.packs.size();
    plan.packs.push_back({op, range, std::move(slice)});
  }
  // Accumulators fill at most 12 of the 16 ymm registers (8 f32 each); the
  // rest hold the shared lane vector and a broadcast.
  unsigned regsPerRow = std::max(1u, lanes / 8) * maxReduces;
  plan.rowCount = std::clamp(12u / regsPerRow, 1u, maxRows);
  return plan;
}

/// Rebuilds one kernel as an llvm.func of upstream ops.
class KernelBuilder {
public:
  KernelBuilder(KernelOp kernel, StringRef name, SymbolTable &planSymbols,
                SmallVectorImpl<NotLowered> &failures, unsigned tileLanes = 0,
                unsigned tileRows = 0)
      : kernel(kernel), name(name), planSymbols(planSymbols),
        failures(failures), b(kernel.getContext()), tileLanes(tileLanes),
        tileRows(tileRows) {}

  /// Builds the function at the end of `target`'s body; returns its split.
  SplitInfo build(ModuleOp target);

private:
  /// The function with its signature, entry block, buffer and scratch
  /// pointers; the insertion point is before its return.
  LLVM::LLVMFuncOp createFunction(ModuleOp target, const SplitInfo &split);

  // The tiled lowering (see the pass description).
  using LaneMap = llvm::DenseMap<Value, LaneValue>;
  LogicalResult buildTiled(const TilePlan &plan);
  LogicalResult emitBlock(const TilePlan &plan, Value firstRow, unsigned rows,
                          Value firstLane, Value mask);
  LogicalResult lowerTiledOp(Operation *op, const TilePlan &plan,
                             MutableArrayRef<LaneMap> rows, unsigned r,
                             Value mask);
  /// `lv` as a value of type `t`: itself, or splatted over the lanes (an
  /// affine one as lane0 + l * stride).
  Value laneForm(Location loc, const LaneValue &lv, Type t);
  /// The constant vector (0, step, 2 step, ...) of `lanes` i64.
  Value laneSteps(Location loc, unsigned lanes, int64_t step);
  /// The pointers of the lanes of an affine pointer.
  Value lanePointers(Location loc, const LaneValue &ptr, Type elem,
                     unsigned lanes);

  Type convertType(Type t);
  Value lookup(Value v) { return cur->lookupOrNull(v); }
  Value i64Const(Location loc, int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  }
  /// A constant of (converted) type t, splatted over vectors.
  Value constLike(Location loc, Type t, double f, int64_t i);
  Value combine(Location loc, ReduceKind kind, Value a, Value c);
  Value identity(Location loc, ReduceKind kind, Type t);
  FailureOr<Value> castValue(Location loc, Value v, Type from, Type to);
  /// The address of element `indices` of a kernel buffer.
  FailureOr<Value> address(Location loc, Value buffer, ValueRange indices,
                           std::string &why);

  /// Lowers one non-structural UOp; failure with a reason.
  LogicalResult lowerOp(Operation *op, std::string &why);
  LogicalResult lowerCustom(CustomOp op, std::string &why);
  LogicalResult lowerWmma(WmmaOp op, std::string &why);

  void fail(Operation *op, std::string why, bool dependent = false) {
    failures.push_back({op, std::move(why), dependent});
  }

  KernelOp kernel;
  std::string name;
  SymbolTable &planSymbols;
  SmallVectorImpl<NotLowered> &failures;
  OpBuilder b;
  IRMapping mapping;
  /// Where lookup() and lowerOp() read and bind values (the tiled lowering
  /// points it at a per-row table).
  IRMapping *cur = &mapping;
  /// Non-zero while lowerOp builds a lane-vector op of the tiled lowering:
  /// its result type is a vector of this many lanes.
  unsigned tiledLanes = 0;
  /// A RANGE being built: its loop and the REDUCEs it carries.
  struct Frame {
    Operation *uop;
    scf::ForOp loop;
    scf::IfOp branch;
    SmallVector<ReduceOp> reduces;
    SmallVector<bool> initDominates;
    // A RANGE split at its barriers: the current phase, its iteration
    // number, and the per-thread arrays of the values that cross phases.
    const Fission *fission = nullptr;
    unsigned phase = 0;
    Value iteration;
  };
  /// Opens one phase loop of a split RANGE (iterations [0, trip)).
  void openPhase(Frame &frame, Location loc);
  llvm::DenseMap<Operation *, Fission> fissions;
  llvm::DenseSet<Operation *> directBarriers;
  llvm::DenseMap<Value, Value> crossArrays;
  SmallVector<Frame> frames;
  llvm::DenseMap<Operation *, Value> reduceResults;
  Value begin, end;
  /// The op being lowered failed only because an operand did.
  bool dependent = false;
  unsigned tileLanes, tileRows;
  /// The tiled lowering's panels (one per TilePlan::Pack) and, inside a
  /// row block's k loop, that loop's iteration number.
  SmallVector<Value> panels;
  Value panelIteration;
  /// A block of the k iterations [first, first + count) of the blockable k
  /// loop: the accumulators come from (load) and go back to (store) the
  /// per-row arrays `accs` (row - panelLo, lanes) between blocks.
  struct KBlock {
    Value first;
    int64_t count;
    bool load, store;
    Value panelLo;
    SmallVector<Value> accs; // one per REDUCE of the loop
  };
  const KBlock *kblock = nullptr;
};

Type KernelBuilder::convertType(Type t) {
  if (auto v = dyn_cast<VectorType>(t)) {
    Type e = convertType(v.getElementType());
    return e ? VectorType::get(v.getShape(), e) : Type();
  }
  if (t.isIndex())
    return b.getI64Type();
  // LLVM integers are signless: ui8 data is i8 in memory; its signedness
  // only matters to CAST (zero-extension, uitofp, fptoui).
  if (auto it = dyn_cast<IntegerType>(t))
    return it.isSignless() ? t : IntegerType::get(t.getContext(), it.getWidth());
  if (t.isF16() || t.isBF16() || t.isF32() || t.isF64())
    return t;
  return Type();
}

Value KernelBuilder::constLike(Location loc, Type t, double f, int64_t i) {
  t = convertType(t);
  Type e = elementOf(t);
  TypedAttr scalar = isa<FloatType>(e)
                         ? TypedAttr(b.getFloatAttr(e, f))
                         : TypedAttr(b.getIntegerAttr(e, i));
  if (auto v = dyn_cast<VectorType>(t))
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(v, scalar));
  return arith::ConstantOp::create(b, loc, scalar);
}

Value KernelBuilder::combine(Location loc, ReduceKind kind, Value a, Value c) {
  bool fp = isFloat(a.getType());
  switch (kind) {
  case ReduceKind::add:
    return fp ? Value(arith::AddFOp::create(b, loc, a, c))
              : Value(arith::AddIOp::create(b, loc, a, c));
  case ReduceKind::mul:
    return fp ? Value(arith::MulFOp::create(b, loc, a, c))
              : Value(arith::MulIOp::create(b, loc, a, c));
  case ReduceKind::max:
    return fp ? Value(arith::MaximumFOp::create(b, loc, a, c))
              : Value(arith::MaxSIOp::create(b, loc, a, c));
  }
  return a;
}

Value KernelBuilder::identity(Location loc, ReduceKind kind, Type t) {
  switch (kind) {
  case ReduceKind::add:
    return constLike(loc, t, 0.0, 0);
  case ReduceKind::mul:
    return constLike(loc, t, 1.0, 1);
  case ReduceKind::max: {
    Type e = elementOf(t);
    if (isa<FloatType>(e))
      return constLike(loc, t, -std::numeric_limits<double>::infinity(), 0);
    unsigned w = e.getIntOrFloatBitWidth();
    TypedAttr scalar =
        b.getIntegerAttr(e, llvm::APInt::getSignedMinValue(w));
    if (auto v = dyn_cast<VectorType>(t))
      return arith::ConstantOp::create(b, loc,
                                       DenseElementsAttr::get(v, scalar));
    return arith::ConstantOp::create(b, loc, scalar);
  }
  }
  return {};
}

/// CAST semantics: integers are signed (i1 is a truth value, zero-extended),
/// floats convert with round-to-nearest, float -> int truncates.
FailureOr<Value> KernelBuilder::castValue(Location loc, Value v, Type from,
                                          Type to) {
  Type toC = convertType(to);
  if (!toC)
    return failure();
  // A lane vector of the tiled lowering converts lane by lane.
  if (auto vt = dyn_cast<VectorType>(v.getType()); vt && !isa<VectorType>(toC))
    toC = VectorType::get(vt.getShape(), toC);
  if (v.getType() == toC)
    return v;
  bool boolSrc = elementOf(from).isInteger(1);
  bool unsignedSrc = boolSrc || elementOf(from).isUnsignedInteger();
  bool unsignedDst = elementOf(to).isUnsignedInteger();
  Type fc = elementOf(v.getType()), tc = elementOf(toC);
  if (fc.isIntOrIndex() && tc.isIntOrIndex()) {
    unsigned fw = fc.getIntOrFloatBitWidth(), tw = tc.getIntOrFloatBitWidth();
    if (fw < tw)
      return unsignedSrc ? Value(arith::ExtUIOp::create(b, loc, toC, v))
                         : Value(arith::ExtSIOp::create(b, loc, toC, v));
    return Value(arith::TruncIOp::create(b, loc, toC, v));
  }
  if (fc.isIntOrIndex() && isa<FloatType>(tc))
    return unsignedSrc ? Value(arith::UIToFPOp::create(b, loc, toC, v))
                       : Value(arith::SIToFPOp::create(b, loc, toC, v));
  if (isa<FloatType>(fc) && tc.isIntOrIndex())
    return unsignedDst ? Value(arith::FPToUIOp::create(b, loc, toC, v))
                       : Value(arith::FPToSIOp::create(b, loc, toC, v));
  if (isa<FloatType>(fc) && isa<FloatType>(tc)) {
    unsigned fw = fc.getIntOrFloatBitWidth(), tw = tc.getIntOrFloatBitWidth();
    if (fw < tw)
      return Value(arith::ExtFOp::create(b, loc, toC, v));
    if (fw > tw)
      return Value(arith::TruncFOp::create(b, loc, toC, v));
    // f16 <-> bf16: through f32.
    Type f32 = b.getF32Type();
    if (auto vt = dyn_cast<VectorType>(toC))
      f32 = VectorType::get(vt.getShape(), f32);
    Value wide = arith::ExtFOp::create(b, loc, f32, v);
    return Value(arith::TruncFOp::create(b, loc, toC, wide));
  }
  return failure();
}

FailureOr<Value> KernelBuilder::address(Location loc, Value buffer,
                                        ValueRange indices, std::string &why) {
  auto buf = dyn_cast<BufType>(buffer.getType());
  Value base = lookup(buffer);
  if (!buf || !base) {
    why = "its buffer is not a kernel buffer";
    return failure();
  }
  ArrayRef<int64_t> shape = buf.getShape();
  if (indices.size() != shape.size()) {
    why = "index count does not match the buffer's rank";
    return failure();
  }
  // Row-major: offset = sum(idx_d * stride_d).
  Value offset;
  int64_t stride = 1;
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    Value idx = indices[d];
    if (!idx) {
      why = "index #" + std::to_string(d) + " was not lowered";
      dependent = true;
      return failure();
    }
    Value term = stride == 1 ? idx
                             : Value(arith::MulIOp::create(
                                   b, loc, idx, i64Const(loc, stride)));
    offset = offset ? Value(arith::AddIOp::create(b, loc, term, offset)) : term;
    stride *= shape[d];
  }
  if (!offset)
    offset = i64Const(loc, 0);
  auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
  return Value(LLVM::GEPOp::create(b, loc, ptrTy,
                                   convertType(buf.getElementType()), base,
                                   ValueRange{offset}));
}

static unsigned elementAlign(Type t) {
  return std::max<unsigned>(1, (elementOf(t).getIntOrFloatBitWidth() + 7) / 8);
}

/// The alignment of a row of `lanes` elements of a 64-byte aligned panel.
static unsigned panelAlign(Type element, unsigned lanes) {
  return llvm::MinAlign(64, uint64_t(elementAlign(element)) * lanes);
}

LogicalResult KernelBuilder::lowerOp(Operation *op, std::string &why) {
  Location loc = op->getLoc();
  SmallVector<Value> args;
  for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
    if (isa<BufType>(operand.getType())) {
      args.push_back(Value()); // buffers are read through their block arg
      continue;
    }
    Value v = lookup(operand);
    if (!v) {
      why = "operand #" + std::to_string(i) + " was not lowered";
      dependent = true;
      return failure();
    }
    args.push_back(v);
  }
  Type resultType;
  if (op->getNumResults() == 1 && !isa<PtrType>(op->getResult(0).getType())) {
    resultType = convertType(op->getResult(0).getType());
    if (resultType && tiledLanes && !isa<VectorType>(resultType))
      resultType = VectorType::get({tiledLanes}, resultType);
    if (!resultType) {
      std::string s;
      llvm::raw_string_ostream os(s);
      os << "no host type for " << op->getResult(0).getType();
      why = s;
      return failure();
    }
  }
  auto bind = [&](Value v) {
    cur->map(op->getResult(0), v);
    return success();
  };
  bool fp = resultType && isFloat(resultType);
  // LLVM integers are signless: unsigned data (ui8 pixels, labels) compares,
  // takes its maximum and its remainder unsigned.
  bool unsignedOperands =
      op->getNumOperands() > 0 &&
      elementOf(op->getOperand(0).getType()).isUnsignedInteger();

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](ConstOp c) {
        TypedAttr value;
        if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
          value = b.getIntegerAttr(resultType, i.getValue().sextOrTrunc(
                                                   resultType.getIntOrFloatBitWidth()));
        else if (auto f = dyn_cast<FloatAttr>(c.getValue()))
          value = f;
        if (!value) {
          why = "CONST is not an integer or float";
          return failure();
        }
        return bind(arith::ConstantOp::create(b, loc, value));
      })
      .Case([&](IndexOp index) {
        FailureOr<Value> p = address(
            loc, index.getBuffer(),
            ArrayRef<Value>(args).drop_front(1), why);
        if (failed(p))
          return failure();
        return bind(*p);
      })
      .Case([&](LoadOp) {
        return bind(LLVM::LoadOp::create(b, loc, resultType, args[0],
                                         elementAlign(resultType)));
      })
      .Case([&](StoreOp) {
        LLVM::StoreOp::create(b, loc, args[1], args[0],
                              elementAlign(args[1].getType()));
        return success();
      })
      .Case([&](AddOp) {
        return bind(fp ? Value(arith::AddFOp::create(b, loc, args[0], args[1]))
                       : Value(arith::AddIOp::create(b, loc, args[0], args[1])));
      })
      .Case([&](MulOp) {
        return bind(fp ? Value(arith::MulFOp::create(b, loc, args[0], args[1]))
                       : Value(arith::MulIOp::create(b, loc, args[0], args[1])));
      })
      .Case([&](MulAccOp) {
        if (fp)
          return bind(math::FmaOp::create(b, loc, args[0], args[1], args[2]));
        Value p = arith::MulIOp::create(b, loc, args[0], args[1]);
        return bind(arith::AddIOp::create(b, loc, p, args[2]));
      })
      .Case([&](NegOp) {
        if (fp)
          return bind(arith::NegFOp::create(b, loc, args[0]));
        return bind(arith::SubIOp::create(
            b, loc, constLike(loc, resultType, 0, 0), args[0]));
      })
      .Case([&](ReciprocalOp) {
        return bind(arith::DivFOp::create(
            b, loc, constLike(loc, resultType, 1.0, 1), args[0]));
      })
      .Case([&](MaxOp) {
        if (fp)
          return bind(arith::MaximumFOp::create(b, loc, args[0], args[1]));
        return bind(unsignedOperands
                        ? Value(arith::MaxUIOp::create(b, loc, args[0], args[1]))
                        : Value(arith::MaxSIOp::create(b, loc, args[0], args[1])));
      })
      .Case([&](ModOp) {
        return bind(unsignedOperands
                        ? Value(arith::RemUIOp::create(b, loc, args[0], args[1]))
                        : Value(arith::RemSIOp::create(b, loc, args[0], args[1])));
      })
      .Case([&](CmpLtOp) {
        if (isFloat(args[0].getType()))
          return bind(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                            args[0], args[1]));
        return bind(arith::CmpIOp::create(
            b, loc,
            unsignedOperands ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt,
            args[0], args[1]));
      })
      .Case([&](CmpNeOp) {
        if (isFloat(args[0].getType()))
          return bind(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE,
                                            args[0], args[1]));
        return bind(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                          args[0], args[1]));
      })
      .Case([&](WhereOp) {
        return bind(
            arith::SelectOp::create(b, loc, args[0], args[1], args[2]));
      })
      .Case([&](Exp2Op) { return bind(math::Exp2Op::create(b, loc, args[0])); })
      .Case([&](Log2Op) { return bind(math::Log2Op::create(b, loc, args[0])); })
      .Case([&](SinOp) { return bind(math::SinOp::create(b, loc, args[0])); })
      .Case([&](SqrtOp) { return bind(math::SqrtOp::create(b, loc, args[0])); })
      .Case([&](CastOp c) {
        FailureOr<Value> v =
            castValue(loc, args[0], c.getSrc().getType(), c.getType());
        if (failed(v)) {
          why = "no host conversion between these dtypes";
          return failure();
        }
        return bind(*v);
      })
      .Case([&](BitcastOp) {
        if (args[0].getType() == resultType)
          return bind(args[0]);
        auto fv = dyn_cast<VectorType>(args[0].getType());
        auto tv = dyn_cast<VectorType>(resultType);
        if ((!fv && !tv) || (fv && tv && fv.getShape() == tv.getShape()))
          return bind(arith::BitcastOp::create(b, loc, resultType, args[0]));
        if ((fv && fv.getRank() > 1) || (tv && tv.getRank() > 1)) {
          why = "BITCAST that reshapes a multi-dimensional vector";
          return failure();
        }
        return bind(LLVM::BitcastOp::create(b, loc, resultType, args[0]));
      })
      .Case([&](VectorizeOp) {
        return bind(vector::FromElementsOp::create(
            b, loc, cast<VectorType>(resultType), args));
      })
      .Case([&](GepOp g) {
        return bind(vector::ExtractOp::create(b, loc, args[0],
                                              ArrayRef<int64_t>{g.getLane()}));
      })
      .Case([&](BarrierOp) {
        // One host thread runs a whole chunk in program order, so the
        // barrier is a no-op -- exact unless the threads of one block are
        // serialized by an enclosing loop: then a thread would read, after
        // the barrier, what later threads have not written yet.
        ArrayRef<int64_t> block = kernel.getBlock();
        ArrayRef<Frame> outer = frames;
        if (directBarriers.contains(op) && !outer.empty())
          outer = outer.drop_back(); // build() splits the innermost RANGE
        for (const Frame &f : outer) {
          auto range = dyn_cast<RangeOp>(f.uop);
          if (!range)
            continue;
          RangeKind k = range.getKind();
          unsigned axis = 0;
          bool serialized = false;
          if (k == RangeKind::local_x || k == RangeKind::local_y ||
              k == RangeKind::local_z) {
            axis = static_cast<unsigned>(k) - 7;
            serialized = range.getTripCount() > 1;
          } else if (k == RangeKind::global_x || k == RangeKind::global_y ||
                     k == RangeKind::global_z) {
            axis = static_cast<unsigned>(k) - 1;
            serialized = block[axis] > 1;
          }
          if (serialized) {
            why = ("BARRIER nested in a loop inside a RANGE over " +
                   stringifyRangeKind(k) +
                   ": the host runs a block's threads one after another and "
                   "splits that RANGE only at barriers directly in its body")
                      .str();
            return failure();
          }
        }
        return success();
      })
      .Case([&](WmmaOp w) { return lowerWmma(w, why); })
      .Case([&](CustomOp c) { return lowerCustom(c, why); })
      .Default([&](Operation *) {
        why = "no host lowering for this op";
        return failure();
      });
}

LogicalResult KernelBuilder::lowerWmma(WmmaOp op, std::string &why) {
  Location loc = op.getLoc();
  Value a = lookup(op.getA()), bv = lookup(op.getB()), c = lookup(op.getC());
  if (!a || !bv || !c) {
    why = "an operand was not lowered";
    dependent = true;
    return failure();
  }
  auto at = cast<VectorType>(op.getA().getType());
  auto ct = cast<VectorType>(op.getC().getType());
  int64_t m = at.getDimSize(0), k = at.getDimSize(1), n = ct.getDimSize(1);
  Type ce = ct.getElementType();
  bool fp = isa<FloatType>(ce);
  // Unrolled: d[i][j] = c[i][j] + sum_k a[i][k] * b[k][j], one fma each.
  Value d = c;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      Value acc =
          vector::ExtractOp::create(b, loc, c, ArrayRef<int64_t>{i, j});
      for (int64_t kk = 0; kk < k; ++kk) {
        Value x =
            vector::ExtractOp::create(b, loc, a, ArrayRef<int64_t>{i, kk});
        Value y =
            vector::ExtractOp::create(b, loc, bv, ArrayRef<int64_t>{kk, j});
        FailureOr<Value> xc = castValue(loc, x, at.getElementType(), ce);
        FailureOr<Value> yc = castValue(loc, y, at.getElementType(), ce);
        if (failed(xc) || failed(yc)) {
          why = "no host conversion from the tile's element type to the "
                "accumulator's";
          return failure();
        }
        if (fp) {
          acc = math::FmaOp::create(b, loc, *xc, *yc, acc);
        } else {
          Value p = arith::MulIOp::create(b, loc, *xc, *yc);
          acc = arith::AddIOp::create(b, loc, p, acc);
        }
      }
      d = vector::InsertOp::create(b, loc, acc, d, ArrayRef<int64_t>{i, j});
    }
  mapping.map(op.getResult(), d);
  return success();
}

LogicalResult KernelBuilder::lowerCustom(CustomOp op, std::string &why) {
  Location loc = op.getLoc();
  StringRef callee = op.getCallee();
  bool load = callee == kTileLoad, store = callee == kTileStore;
  if (!load && !store) {
    why = ("CUSTOM \"" + callee + "\" has no host lowering (host intrinsics: " +
           kTileLoad + ", " + kTileStore + ")")
              .str();
    return failure();
  }
  // (buf, i, j) or (buf, i, j, tile): a 2-D tile at row i, column j.
  ValueRange src = op.getSrc();
  unsigned want = load ? 3 : 4;
  auto buf = src.empty() ? BufType() : dyn_cast<BufType>(src[0].getType());
  if (src.size() != want || !buf || buf.getRank() != 2 ||
      !src[1].getType().isIndex() || !src[2].getType().isIndex() ||
      op->getNumResults() != (load ? 1u : 0u)) {
    why = (callee + (load ? " takes (buffer, index, index) -> tile"
                          : " takes (buffer, index, index, tile) -> ()") +
           " on a 2-D buffer")
              .str();
    return failure();
  }
  auto tile = dyn_cast<VectorType>(load ? op->getResult(0).getType()
                                        : src[3].getType());
  if (!tile || tile.getRank() != 2 ||
      tile.getElementType() != buf.getElementType()) {
    why = (callee + " moves a 2-D vector of the buffer's element type").str();
    return failure();
  }
  Value i = lookup(src[1]), j = lookup(src[2]);
  Value value = store ? lookup(src[3]) : Value();
  if (!i || !j || (store && !value)) {
    why = "an operand was not lowered";
    dependent = true;
    return failure();
  }
  int64_t rows = tile.getDimSize(0);
  auto row = VectorType::get({tile.getDimSize(1)}, tile.getElementType());
  Value result = load ? constLike(loc, tile, 0.0, 0) : Value();
  unsigned align = elementAlign(tile);
  for (int64_t r = 0; r < rows; ++r) {
    Value ir = arith::AddIOp::create(b, loc, i, i64Const(loc, r));
    FailureOr<Value> p = address(loc, src[0], ValueRange{ir, j}, why);
    if (failed(p))
      return failure();
    if (load) {
      Value v = LLVM::LoadOp::create(b, loc, row, *p, align);
      result = vector::InsertOp::create(b, loc, v, result,
                                        ArrayRef<int64_t>{r});
    } else {
      Value v = vector::ExtractOp::create(b, loc, value, ArrayRef<int64_t>{r});
      LLVM::StoreOp::create(b, loc, v, *p, align);
    }
  }
  if (load)
    mapping.map(op->getResult(0), result);
  return success();
}

//===----------------------------------------------------------------------===//
// The tiled lowering
//===----------------------------------------------------------------------===//

Value KernelBuilder::laneSteps(Location loc, unsigned lanes, int64_t step) {
  SmallVector<int64_t> steps;
  for (unsigned l = 0; l < lanes; ++l)
    steps.push_back(static_cast<int64_t>(l) * step);
  auto vt = VectorType::get({lanes}, b.getI64Type());
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(vt, ArrayRef<int64_t>(steps)));
}

Value KernelBuilder::laneForm(Location loc, const LaneValue &lv, Type t) {
  auto vt = dyn_cast<VectorType>(t);
  if (!vt || isa<VectorType>(lv.v.getType()))
    return lv.v;
  Value splat = vector::BroadcastOp::create(b, loc, vt, lv.v);
  if (lv.stride == 0)
    return splat;
  return arith::AddIOp::create(b, loc, splat,
                               laneSteps(loc, vt.getNumElements(), lv.stride));
}

Value KernelBuilder::lanePointers(Location loc, const LaneValue &ptr,
                                  Type elem, unsigned lanes) {
  if (isa<VectorType>(ptr.v.getType()))
    return ptr.v;
  auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
  return LLVM::GEPOp::create(b, loc, VectorType::get({lanes}, ptrTy), elem,
                             ptr.v, ValueRange{laneSteps(loc, lanes, ptr.stride)});
}

LogicalResult KernelBuilder::lowerTiledOp(Operation *op, const TilePlan &plan,
                                          MutableArrayRef<LaneMap> rows,
                                          unsigned r, Value mask) {
  LaneMap &vals = rows[r];
  Location loc = op->getLoc();
  unsigned lanes = plan.laneCount;
  // What does not depend on i is the same in every row of the block.
  if (r > 0 && op->getNumResults() == 1 &&
      !plan.rowDependent.contains(op->getResult(0))) {
    auto it = rows[0].find(op->getResult(0));
    if (it == rows[0].end())
      return failure();
    vals[op->getResult(0)] = it->second;
    return success();
  }
  SmallVector<LaneValue> args;
  bool anyVarying = false, anyVector = false;
  for (Value v : op->getOperands()) {
    if (isa<BufType>(v.getType())) {
      args.push_back({});
      continue;
    }
    auto it = vals.find(v);
    if (it == vals.end() || !it->second.v)
      return failure();
    args.push_back(it->second);
    anyVarying |= it->second.varying();
    anyVector |= isa<VectorType>(it->second.v.getType());
  }
  auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
  Value allLanes;
  auto laneMask = [&]() -> Value {
    if (mask)
      return mask;
    if (!allLanes)
      allLanes = arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(
                      VectorType::get({lanes}, b.getI1Type()), true));
    return allLanes;
  };

  if (auto index = dyn_cast<IndexOp>(op)) {
    auto buf = dyn_cast<BufType>(index.getBuffer().getType());
    Value base = mapping.lookupOrNull(index.getBuffer());
    ValueRange indices = index.getIndices();
    if (!buf || !base || indices.size() != buf.getShape().size())
      return failure();
    Type elem = convertType(buf.getElementType());
    ArrayRef<int64_t> shape = buf.getShape();
    int64_t stride = 1;
    if (!anyVector) {
      // Row-major offset of lane 0 and its per-lane step.
      Value offset;
      int64_t laneStride = 0;
      for (int64_t d = shape.size() - 1; d >= 0; --d) {
        const LaneValue &idx = args[d + 1];
        Value term = stride == 1 ? idx.v
                                 : Value(arith::MulIOp::create(
                                       b, loc, idx.v, i64Const(loc, stride)));
        offset = offset ? Value(arith::AddIOp::create(b, loc, term, offset))
                        : term;
        laneStride += idx.stride * stride;
        stride *= shape[d];
      }
      if (!offset)
        offset = i64Const(loc, 0);
      vals[index.getResult()] = {
          LLVM::GEPOp::create(b, loc, ptrTy, elem, base, ValueRange{offset}),
          laneStride};
      return success();
    }
    auto offTy = VectorType::get({lanes}, b.getI64Type());
    Value offset;
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      Value idx = laneForm(loc, args[d + 1], offTy);
      Value term =
          stride == 1
              ? idx
              : Value(arith::MulIOp::create(
                    b, loc, idx,
                    vector::BroadcastOp::create(b, loc, offTy,
                                                i64Const(loc, stride))));
      offset = offset ? Value(arith::AddIOp::create(b, loc, term, offset)) : term;
      stride *= shape[d];
    }
    vals[index.getResult()] = {
        LLVM::GEPOp::create(b, loc, VectorType::get({lanes}, ptrTy), elem, base,
                            ValueRange{offset}),
        0};
    return success();
  }

  if (isa<LoadOp>(op)) {
    Type t = convertType(op->getResult(0).getType());
    if (!t)
      return failure();
    if (auto it = plan.packOf.find(op);
        it != plan.packOf.end() && panelIteration) {
      Value slot = LLVM::GEPOp::create(
          b, loc, ptrTy, t, panels[it->second],
          ValueRange{arith::MulIOp::create(b, loc, panelIteration,
                                           i64Const(loc, lanes))});
      vals[op->getResult(0)] = {
          LLVM::LoadOp::create(b, loc, VectorType::get({lanes}, t), slot,
                               panelAlign(t, lanes)),
          0};
      return success();
    }
    const LaneValue &ptr = args[0];
    unsigned align = elementAlign(t);
    if (!ptr.varying()) {
      vals[op->getResult(0)] = {LLVM::LoadOp::create(b, loc, t, ptr.v, align), 0};
      return success();
    }
    auto vt = VectorType::get({lanes}, t);
    Value zero = constLike(loc, vt, 0.0, 0);
    Value v;
    if (!anyVector && ptr.stride == 1)
      v = mask ? Value(LLVM::MaskedLoadOp::create(b, loc, vt, ptr.v, mask, zero,
                                                  align))
               : Value(LLVM::LoadOp::create(b, loc, vt, ptr.v, align));
    else
      v = LLVM::masked_gather::create(b, loc, vt,
                                      lanePointers(loc, ptr, t, lanes),
                                      laneMask(), ValueRange{zero}, align);
    vals[op->getResult(0)] = {v, 0};
    return success();
  }

  if (isa<StoreOp>(op)) {
    Type t = convertType(op->getOperand(1).getType());
    if (!t)
      return failure();
    const LaneValue &ptr = args[0], &value = args[1];
    unsigned align = elementAlign(t);
    if (!ptr.varying()) {
      if (value.varying()) // lanes racing for one address
        return failure();
      LLVM::StoreOp::create(b, loc, value.v, ptr.v, align);
      return success();
    }
    auto vt = VectorType::get({lanes}, t);
    Value v = laneForm(loc, value, vt);
    if (!isa<VectorType>(ptr.v.getType()) && ptr.stride == 1) {
      if (mask)
        LLVM::MaskedStoreOp::create(b, loc, v, ptr.v, mask, align);
      else
        LLVM::StoreOp::create(b, loc, v, ptr.v, align);
    } else {
      LLVM::masked_scatter::create(b, loc, v, lanePointers(loc, ptr, t, lanes),
                                   laneMask(), align);
    }
    return success();
  }

  if (op->getNumResults() != 1)
    return failure();
  Value result = op->getResult(0);
  // Index arithmetic that stays affine in the lanes: lane 0 and a step.
  if (anyVarying && !anyVector && result.getType().isIndex()) {
    auto constOf = [](Value v) -> std::optional<int64_t> {
      if (auto c = v.getDefiningOp<ConstOp>())
        if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
          return i.getValue().getSExtValue();
      return std::nullopt;
    };
    if (isa<AddOp>(op)) {
      vals[result] = {arith::AddIOp::create(b, loc, args[0].v, args[1].v),
                      args[0].stride + args[1].stride};
      return success();
    }
    if (isa<NegOp>(op)) {
      vals[result] = {arith::SubIOp::create(b, loc, i64Const(loc, 0), args[0].v),
                      -args[0].stride};
      return success();
    }
    if (isa<MulOp>(op)) {
      std::optional<int64_t> c0 = constOf(op->getOperand(0)),
                             c1 = constOf(op->getOperand(1));
      if (c0 || c1) {
        int64_t stride = c1 ? args[0].stride * *c1 : args[1].stride * *c0;
        vals[result] = {arith::MulIOp::create(b, loc, args[0].v, args[1].v),
                        stride};
        return success();
      }
    }
  }
  // Everything else through lowerOp: on scalars when no operand varies,
  // else on lane vectors (uniform operands splatted).
  IRMapping table;
  for (auto [operand, lv] : llvm::zip(op->getOperands(), args)) {
    Type t = convertType(operand.getType());
    if (!t)
      return failure();
    if (anyVarying)
      t = VectorType::get({lanes}, t);
    table.map(operand, laneForm(loc, lv, t));
  }
  std::string why;
  cur = &table;
  tiledLanes = anyVarying ? lanes : 0;
  LogicalResult lowered = lowerOp(op, why);
  cur = &mapping;
  tiledLanes = 0;
  if (failed(lowered) || !table.lookupOrNull(result))
    return failure();
  vals[result] = {table.lookup(result), 0};
  return success();
}

LogicalResult KernelBuilder::emitBlock(const TilePlan &plan, Value firstRow,
                                       unsigned numRows, Value firstLane,
                                       Value mask) {
  Location loc = plan.lanes.getLoc();
  unsigned lanes = plan.laneCount;
  SmallVector<LaneMap> rows(numRows);
  auto valueOf = [&](RangeOp range, Value it) -> Value {
    if (range.getStep() != 1)
      it = arith::MulIOp::create(b, loc, it, i64Const(loc, range.getStep()));
    if (range.getLower() != 0)
      it = arith::AddIOp::create(b, loc, it, i64Const(loc, range.getLower()));
    return it;
  };
  Value lane0 = valueOf(plan.lanes, firstLane);
  for (unsigned r = 0; r < numRows; ++r) {
    Value it = r == 0 ? firstRow
                      : Value(arith::AddIOp::create(b, loc, firstRow,
                                                    i64Const(loc, r)));
    rows[r][plan.rows.getResult()] = {valueOf(plan.rows, it), 0};
    rows[r][plan.lanes.getResult()] = {lane0, plan.lanes.getStep()};
  }
  // Accumulator type of a REDUCE: a lane vector when it varies.
  auto accType = [&](ReduceOp reduce) -> Type {
    Type t = convertType(reduce.getType());
    if (t && plan.varying.contains(reduce.getResult()))
      t = VectorType::get({lanes}, t);
    return t;
  };
  llvm::DenseMap<std::pair<Operation *, unsigned>, Value> folded;
  ArrayRef<Operation *> ops = plan.body;
  for (size_t n = 0; n < ops.size(); ++n) {
    Operation *op = ops[n];
    if (auto range = dyn_cast<RangeOp>(op)) {
      Location l = range.getLoc();
      SmallVector<ReduceOp> reduces = plan.reducesOf.lookup(range);
      SmallVector<Value> inits;
      auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
      // The slot of row r's accumulator of REDUCE #ri in a k block.
      auto accSlot = [&](unsigned ri, unsigned r, Type t) -> Value {
        Value row = arith::SubIOp::create(
            b, l, arith::AddIOp::create(b, l, firstRow, i64Const(l, r)),
            kblock->panelLo);
        return LLVM::GEPOp::create(
            b, l, ptrTy, elementOf(t), kblock->accs[ri],
            ValueRange{arith::MulIOp::create(b, l, row, i64Const(l, lanes))});
      };
      for (auto [ri, reduce] : llvm::enumerate(reduces)) {
        Type t = accType(reduce);
        if (!t)
          return failure();
        for (unsigned r = 0; r < numRows; ++r) {
          if (kblock && kblock->load) {
            inits.push_back(LLVM::LoadOp::create(b, l, t, accSlot(ri, r, t),
                                                 elementAlign(t)));
            continue;
          }
          if (!plan.initFirst.contains(reduce)) {
            inits.push_back(identity(l, reduce.getKind(), t));
            continue;
          }
          auto it = rows[r].find(reduce.getInit());
          if (it == rows[r].end())
            return failure();
          inits.push_back(laneForm(l, it->second, t));
        }
      }
      Value lb = i64Const(l, range.getLower());
      int64_t step = range.getStep(), count = range.getTripCount();
      if (kblock) {
        lb = arith::AddIOp::create(
            b, l, lb, arith::MulIOp::create(b, l, kblock->first, i64Const(l, step)));
        count = kblock->count;
      }
      size_t bodyBegin = n + 1, bodyEnd = bodyBegin;
      while (bodyEnd < ops.size() && !isa<EndOp>(ops[bodyEnd]))
        ++bodyEnd;
      n = bodyEnd;
      // `copies` k iterations from k = iv on: the body, then one step of
      // every accumulator (a sum of products is an fma).
      auto steps = [&](Value iv, ValueRange accs,
                       unsigned copies) -> FailureOr<SmallVector<Value>> {
        SmallVector<Value> current(accs);
        for (unsigned u = 0; u < copies; ++u) {
          Value k = u == 0 ? iv
                           : Value(arith::AddIOp::create(
                                 b, l, iv, i64Const(l, int64_t(u) * step)));
          for (unsigned r = 0; r < numRows; ++r)
            rows[r][range.getResult()] = {k, 0};
          panelIteration = k;
          if (range.getLower() != 0)
            panelIteration = arith::SubIOp::create(b, l, panelIteration,
                                                   i64Const(l, range.getLower()));
          if (step != 1)
            panelIteration = arith::DivSIOp::create(b, l, panelIteration,
                                                    i64Const(l, step));
          if (kblock)
            panelIteration =
                arith::SubIOp::create(b, l, panelIteration, kblock->first);
          for (size_t o = bodyBegin; o < bodyEnd; ++o)
            for (unsigned r = 0; r < numRows; ++r)
              if (failed(lowerTiledOp(ops[o], plan, rows, r, mask))) {
                panelIteration = Value();
                return failure();
              }
          panelIteration = Value();
          SmallVector<Value> next;
          unsigned arg = 0;
          for (ReduceOp reduce : reduces) {
            Type t = accType(reduce);
            auto mul = reduce.getValue().getDefiningOp<MulOp>();
            bool fma = reduce.getKind() == ReduceKind::add && mul &&
                       isFloat(convertType(reduce.getType()));
            for (unsigned r = 0; r < numRows; ++r) {
              Value acc = current[arg++];
              if (fma) {
                auto x = rows[r].find(mul->getOperand(0)),
                     y = rows[r].find(mul->getOperand(1));
                if (x == rows[r].end() || y == rows[r].end())
                  return failure();
                next.push_back(math::FmaOp::create(
                    b, l, laneForm(l, x->second, t), laneForm(l, y->second, t),
                    acc));
                continue;
              }
              auto v = rows[r].find(reduce.getValue());
              if (v == rows[r].end())
                return failure();
              next.push_back(
                  combine(l, reduce.getKind(), acc, laneForm(l, v->second, t)));
            }
          }
          current = std::move(next);
        }
        return current;
      };
      // Two k iterations per trip (one loop-carried dependence per pair of
      // fmas fewer), then the odd one.
      constexpr unsigned kUnroll = 2;
      int64_t pairs = count / kUnroll;
      SmallVector<Value> results(inits);
      if (pairs > 0) {
        Value ub = arith::AddIOp::create(b, l, lb,
                                         i64Const(l, pairs * kUnroll * step));
        auto loop = scf::ForOp::create(b, l, lb, ub,
                                       i64Const(l, kUnroll * step), inits);
        OpBuilder::InsertionGuard g(b);
        Block *loopBody = loop.getBody();
        if (loopBody->mightHaveTerminator())
          b.setInsertionPoint(loopBody->getTerminator());
        else
          b.setInsertionPointToEnd(loopBody);
        FailureOr<SmallVector<Value>> next =
            steps(loop.getInductionVar(), loop.getRegionIterArgs(), kUnroll);
        if (failed(next))
          return failure();
        if (!next->empty())
          scf::YieldOp::create(b, l, *next);
        results.assign(loop.getResults().begin(), loop.getResults().end());
      }
      for (int64_t rest = pairs * kUnroll; rest < count; ++rest) {
        Value k = arith::AddIOp::create(b, l, lb, i64Const(l, rest * step));
        FailureOr<SmallVector<Value>> next = steps(k, results, 1);
        if (failed(next))
          return failure();
        results = std::move(*next);
      }
      unsigned arg = 0;
      for (ReduceOp reduce : reduces)
        for (unsigned r = 0; r < numRows; ++r)
          folded[{reduce.getOperation(), r}] = results[arg++];
      if (kblock && kblock->store) {
        // Not the last k block: park the accumulators; the rest of the
        // body runs after the last block.
        arg = 0;
        for (auto [ri, reduce] : llvm::enumerate(reduces))
          for (unsigned r = 0; r < numRows; ++r) {
            Value acc = results[arg++];
            LLVM::StoreOp::create(b, l, acc, accSlot(ri, r, acc.getType()),
                                  elementAlign(acc.getType()));
          }
        return success();
      }
      continue;
    }
    if (auto reduce = dyn_cast<ReduceOp>(op)) {
      for (unsigned r = 0; r < numRows; ++r) {
        Value v = folded.lookup({reduce.getOperation(), r});
        if (!v)
          return failure();
        if (!plan.initFirst.contains(reduce)) {
          auto it = rows[r].find(reduce.getInit());
          if (it == rows[r].end())
            return failure();
          v = combine(reduce.getLoc(), reduce.getKind(),
                      laneForm(reduce.getLoc(), it->second, v.getType()), v);
        }
        rows[r][reduce.getResult()] = {v, 0};
      }
      continue;
    }
    for (unsigned r = 0; r < numRows; ++r)
      if (failed(lowerTiledOp(op, plan, rows, r, mask)))
        return failure();
  }
  return success();
}

LogicalResult KernelBuilder::buildTiled(const TilePlan &plan) {
  Location loc = plan.rows.getLoc();
  unsigned lanes = plan.laneCount, blockRows = plan.rowCount;
  int64_t tripI = plan.rows.getTripCount(), tripJ = plan.lanes.getTripCount();
  auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
  // This chunk's rows, [rowLo, rowHi) (empty when begin >= end).
  Value rowLo = arith::MaxSIOp::create(b, loc, begin, i64Const(loc, 0));
  Value rowHi = arith::MinSIOp::create(b, loc, end, i64Const(loc, tripI));
  rowHi = arith::MaxSIOp::create(b, loc, rowHi, rowLo);
  int64_t kTrip = 1;
  for (Operation *op : plan.body)
    if (auto range = dyn_cast<RangeOp>(op))
      kTrip = std::max<int64_t>(kTrip, range.getTripCount());
  int64_t kBlocks = 1, kc = kTrip;
  if (plan.kBlock) {
    kc = plan.kBlock;
    kBlocks = (kTrip + kc - 1) / kc; // the last block is never empty
  }
  // Row panels: the rows one lane sweep reads (about `kc` elements each)
  // stay in a 256 KiB share of L2 while the lane blocks go by.
  int64_t panel =
      std::max<int64_t>(1, (256 * 1024 / 4 / kc) / blockRows) * blockRows;
  panels.clear();
  for (const TilePlan::Pack &pack : plan.packs)
    panels.push_back(LLVM::AllocaOp::create(
        b, loc, ptrTy, convertType(pack.load->getResult(0).getType()),
        i64Const(loc, std::min(kc, pack.range.getTripCount()) * lanes),
        /*alignment=*/64));
  KBlock block;
  if (kBlocks > 1)
    for (ReduceOp reduce : plan.reducesOf.lookup(plan.blockable))
      block.accs.push_back(LLVM::AllocaOp::create(
          b, loc, ptrTy, convertType(reduce.getType()),
          i64Const(loc, std::min(panel, tripI) * lanes), /*alignment=*/64));
  OpBuilder::InsertionGuard guard(b);
  if (panel < tripI) {
    auto panels = scf::ForOp::create(b, loc, rowLo, rowHi, i64Const(loc, panel));
    b.setInsertionPoint(panels.getBody()->getTerminator());
    rowLo = panels.getInductionVar();
    rowHi = arith::MinSIOp::create(
        b, loc, rowHi, arith::AddIOp::create(b, loc, rowLo, i64Const(loc, panel)));
  }
  block.panelLo = rowLo;
  auto laneLoop = scf::ForOp::create(b, loc, i64Const(loc, 0),
                                     i64Const(loc, tripJ), i64Const(loc, lanes));
  b.setInsertionPoint(laneLoop.getBody()->getTerminator());
  Value firstLane = laneLoop.getInductionVar();
  LogicalResult result = success();
  auto laneMask = [&]() {
    auto vt = VectorType::get({lanes}, b.getI64Type());
    Value left = arith::SubIOp::create(b, loc, i64Const(loc, tripJ), firstLane);
    return Value(arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::slt, laneSteps(loc, lanes, 1),
        vector::BroadcastOp::create(b, loc, vt, left)));
  };
  // Pack the panels of this lane block (lanes past the end read as 0) for
  // k iterations [first, first + count) (null first: all of them).
  auto emitPacks = [&](Value first, int64_t count) -> LogicalResult {
    if (plan.packs.empty())
      return success();
    Value mask = tripJ % lanes != 0 ? laneMask() : Value();
    Value lane0 = firstLane;
    if (plan.lanes.getStep() != 1)
      lane0 = arith::MulIOp::create(b, loc, lane0,
                                    i64Const(loc, plan.lanes.getStep()));
    if (plan.lanes.getLower() != 0)
      lane0 = arith::AddIOp::create(b, loc, lane0,
                                    i64Const(loc, plan.lanes.getLower()));
    for (auto [pack, panel] : llvm::zip(plan.packs, panels)) {
      RangeOp range = pack.range;
      auto loop = scf::ForOp::create(
          b, loc, i64Const(loc, 0),
          i64Const(loc, first ? count : range.getTripCount()), i64Const(loc, 1));
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      Value it = loop.getInductionVar();
      Value k = first ? Value(arith::AddIOp::create(b, loc, it, first)) : it;
      if (range.getStep() != 1)
        k = arith::MulIOp::create(b, loc, k, i64Const(loc, range.getStep()));
      if (range.getLower() != 0)
        k = arith::AddIOp::create(b, loc, k, i64Const(loc, range.getLower()));
      LaneMap row;
      row[plan.lanes.getResult()] = {lane0, plan.lanes.getStep()};
      row[range.getResult()] = {k, 0};
      MutableArrayRef<LaneMap> rows(row);
      for (Operation *op : pack.slice)
        if (failed(lowerTiledOp(op, plan, rows, 0, mask)))
          return failure();
      Type t = convertType(pack.load->getResult(0).getType());
      auto vt = VectorType::get({lanes}, t);
      Value v = laneForm(loc, row[pack.load->getResult(0)], vt);
      Value slot = LLVM::GEPOp::create(
          b, loc, ptrTy, t, panel,
          ValueRange{arith::MulIOp::create(b, loc, it, i64Const(loc, lanes))});
      LLVM::StoreOp::create(b, loc, v, slot, panelAlign(t, lanes));
    }
    return success();
  };
  // The row blocks of one lane block: full blocks, then the rest in blocks
  // of 4, 2, 1 rows (the binary digits of what is left).
  auto emitRows = [&](bool masked) {
    Value mask = masked ? laneMask() : Value();
    if (blockRows == 1) {
      auto loop = scf::ForOp::create(b, loc, rowLo, rowHi, i64Const(loc, 1));
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      if (failed(emitBlock(plan, loop.getInductionVar(), 1, firstLane, mask)))
        result = failure();
      return;
    }
    Value span = arith::SubIOp::create(b, loc, rowHi, rowLo);
    Value blocks = arith::DivSIOp::create(b, loc, span, i64Const(loc, blockRows));
    Value pos = arith::AddIOp::create(
        b, loc, rowLo,
        arith::MulIOp::create(b, loc, blocks, i64Const(loc, blockRows)));
    {
      auto loop = scf::ForOp::create(b, loc, rowLo, pos, i64Const(loc, blockRows));
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      if (failed(emitBlock(plan, loop.getInductionVar(), blockRows, firstLane,
                           mask)))
        result = failure();
    }
    unsigned size = 1;
    while (size * 2 < blockRows)
      size *= 2;
    for (; size >= 1; size /= 2) {
      Value fits = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::sge,
          arith::SubIOp::create(b, loc, rowHi, pos), i64Const(loc, size));
      auto branch = scf::IfOp::create(b, loc, TypeRange{b.getI64Type()}, fits,
                                      /*withElseRegion=*/true);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(branch.thenBlock());
      if (failed(emitBlock(plan, pos, size, firstLane, mask)))
        result = failure();
      scf::YieldOp::create(
          b, loc, ValueRange{arith::AddIOp::create(b, loc, pos, i64Const(loc, size))});
      b.setInsertionPointToStart(branch.elseBlock());
      scf::YieldOp::create(b, loc, ValueRange{pos});
      pos = branch.getResult(0);
    }
  };
  // One k block (or the whole k loop): its panels, then its row blocks.
  auto emitPhase = [&](Value first, int64_t count, bool load, bool store) {
    KBlock phase = block;
    phase.first = first;
    phase.count = count;
    phase.load = load;
    phase.store = store;
    kblock = first ? &phase : nullptr;
    if (failed(emitPacks(first, count)))
      result = failure();
    bool full = tripJ >= lanes, tail = tripJ % lanes != 0;
    if (full && tail) {
      Value isFull = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::sle,
          arith::AddIOp::create(b, loc, firstLane, i64Const(loc, lanes)),
          i64Const(loc, tripJ));
      auto branch = scf::IfOp::create(b, loc, isFull, /*withElseRegion=*/true);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(branch.thenBlock()->getTerminator());
      emitRows(false);
      b.setInsertionPoint(branch.elseBlock()->getTerminator());
      emitRows(true);
    } else {
      emitRows(tail);
    }
    kblock = nullptr;
  };
  if (kBlocks == 1) {
    emitPhase(Value(), kTrip, false, false);
  } else {
    // First block from the inits, middle blocks, last block and the rest of
    // the body.
    int64_t last = (kBlocks - 1) * kc;
    emitPhase(i64Const(loc, 0), kc, false, true);
    if (kBlocks > 2) {
      auto loop = scf::ForOp::create(b, loc, i64Const(loc, kc),
                                     i64Const(loc, last), i64Const(loc, kc));
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      emitPhase(loop.getInductionVar(), kc, true, true);
    }
    emitPhase(i64Const(loc, last), kTrip - last, true, false);
  }
  return result;
}

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

LLVM::LLVMFuncOp KernelBuilder::createFunction(ModuleOp target,
                                               const SplitInfo &split) {
  MLIRContext *ctx = kernel.getContext();
  Location loc = kernel.getLoc();
  Block &body = kernel.getBody().front();
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
  for (unsigned a = 0; a < numBuffers; ++a) {
    fn.setArgAttr(a, LLVM::LLVMDialect::getNoAliasAttrName(), b.getUnitAttr());
    int64_t align = 64;
    if (auto slot = planSymbols.lookup<SlotOp>(
            kernel.getSlotOf(body.getArgument(a)).getValue()))
      if (auto pool = planSymbols.lookup<PoolOp>(slot.getPool()))
        align = std::min<int64_t>(64, pool.getAlignment());
    fn.setArgAttr(a, LLVM::LLVMDialect::getAlignAttrName(),
                  b.getI64IntegerAttr(align));
  }
  Block *entry = fn.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  for (unsigned a = 0; a < numBuffers; ++a)
    mapping.map(body.getArgument(a), entry->getArgument(a));
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
    LLVM::LLVMFuncOp fn = createFunction(target, split);
    if (succeeded(buildTiled(*plan)))
      return split;
    // Something the tiled form cannot express: start over, untiled.
    fn.erase();
    mapping.clear();
  }

  createFunction(target, split);
  auto ptrTy = LLVM::LLVMPointerType::get(kernel.getContext());
  // Per-thread arrays of the values that cross a barrier phase.
  fissions = analyzeBarriers(kernel, directBarriers);
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

  // The REDUCEs each RANGE carries.
  llvm::DenseMap<Operation *, SmallVector<ReduceOp>> reducesOf;
  for (Operation &op : body)
    if (auto reduce = dyn_cast<ReduceOp>(op))
      reducesOf[reduce.getRange().getDefiningOp()].push_back(reduce);

  for (Operation &op : body) {
    Location l = op.getLoc();
    if (auto range = dyn_cast<RangeOp>(op);
        range && fissions.count(range) && range != split.range) {
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
      // Close this phase: its values that later phases read go to their
      // arrays. Then open the next phase's loop.
      Frame &frame = frames.back();
      auto ptrTy = LLVM::LLVMPointerType::get(b.getContext());
      for (Value v : frame.fission->cross) {
        if (frame.fission->crossPhase.lookup(v) != frame.phase)
          continue;
        Value array = crossArrays.lookup(v), value = lookup(v);
        if (!array || !value)
          continue;
        Value slot = LLVM::GEPOp::create(b, l, ptrTy, value.getType(), array,
                                         ValueRange{frame.iteration});
        LLVM::StoreOp::create(b, l, value, slot);
      }
      b.setInsertionPointAfter(frame.loop);
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
          fail(reduce, "no host type for its dtype");
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
      bool isSplit = range == split.range;
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
      if (frames.empty() || !frames.back().loop) {
        fail(&op, "END without an open RANGE");
        continue;
      }
      Frame frame = frames.pop_back_val();
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
  return split;
}

/// The upstream conversions that finish the job.
static void buildLLVMPipeline(OpPassManager &pm) {
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

struct ConvertL0UOpToLLVMPass
    : public synpl::impl::ConvertL0UOpToLLVMBase<ConvertL0UOpToLLVMPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    OpPassManager pm(ModuleOp::getOperationName());
    buildLLVMPipeline(pm);
    pm.getDependentDialects(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<NotLowered> failures;
    unsigned total = 0;

    // Kernels already lowered (host_entry set, no UOps) are skipped: the
    // pass is idempotent on its own output.
    SmallVector<std::pair<PlanOp, KernelOp>> kernels;
    module.walk([&](KernelOp kernel) {
      if (kernel->hasAttr("host_entry"))
        return;
      if (auto plan = kernel->getParentOfType<PlanOp>())
        kernels.push_back({plan, kernel});
    });

    OwningOpRef<ModuleOp> scratch = ModuleOp::create(module.getLoc());
    SymbolTable moduleSymbols(module);
    llvm::StringSet<> names;
    SmallVector<std::pair<KernelOp, SplitInfo>> built;
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
      SymbolTable planSymbols(plan);
      KernelBuilder builder(kernel, name, planSymbols, failures, tileLanes,
                            tileRows);
      SplitInfo split = builder.build(*scratch);
      built.push_back({kernel, split});
    }
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
    buildLLVMPipeline(pm);
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

    // Commit: move the functions over, then reduce or drop the plans.
    Block *dest = module.getBody();
    for (Operation &op : llvm::make_early_inc_range(*scratch->getBody()))
      op.moveBefore(dest, dest->end());
    Builder builder(ctx);
    for (auto [kernel, split] : built) {
      auto plan = kernel->getParentOfType<PlanOp>();
      std::string name = (plan.getSymName() + "_" + kernel.getSymName()).str();
      Block &body = kernel.getBody().front();
      for (Operation &op : body)
        op.dropAllReferences();
      while (!body.empty())
        body.back().erase();
      kernel->setAttr("host_entry", FlatSymbolRefAttr::get(ctx, name));
      kernel->setAttr("host_iterations",
                      builder.getI64IntegerAttr(split.iterations));
    }
    if (!keepPlan)
      for (PlanOp plan : llvm::make_early_inc_range(module.getOps<PlanOp>()))
        plan.erase();
  }
};

} // namespace
