//===- KernelBuilder.h - Rebuilding one l0uop kernel as LLVM ---*- C++ -*-===//
//
// Private to the l0uop -> LLVM lowering: the builder of one kernel's
// function (L0UOpToLLVM.cpp; one UOp at a time in KernelBuilder.cpp,
// which the NVVM lowering shares) and its tiled lowering of matmul-shaped
// kernels (TiledKernel.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_CONVERSION_L0TOLLVM_KERNELBUILDER_H
#define SYNPL_LIB_CONVERSION_L0TOLLVM_KERNELBUILDER_H

#include "Lowering.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/MathExtras.h"

#include <optional>
#include <string>

namespace synpl::l0tollvm {
// A private header of two files that are written against these names.
using namespace mlir;
using namespace synpl::l0uop;

/// Whether t (or its element type) is a float.
inline bool isFloat(Type t) {
  if (auto v = dyn_cast<VectorType>(t))
    t = v.getElementType();
  return isa<FloatType>(t);
}
/// The element type of a vector, else t.
inline Type elementOf(Type t) {
  if (auto v = dyn_cast<VectorType>(t))
    return v.getElementType();
  return t;
}

/// The bytes of one element: the alignment a scalar access may claim.
inline unsigned elementAlign(Type t) {
  return std::max<unsigned>(1, (elementOf(t).getIntOrFloatBitWidth() + 7) / 8);
}

/// The alignment of a row of `lanes` elements of a 64-byte aligned panel.
inline unsigned panelAlign(Type element, unsigned lanes) {
  return llvm::MinAlign(64, uint64_t(elementAlign(element)) * lanes);
}

/// The split range of a kernel and whether chunking it is sound (see the
/// pass description).
struct SplitInfo {
  RangeOp range;      // null: not splittable
  int64_t iterations; // what the runtime splits: [0, iterations)
  /// The fewest iterations worth a chunk of their own; > 1 when every chunk
  /// repeats a fixed setup (the packing of a tiled matmul's operand), so
  /// that the runtime runs one chunk per thread.
  int64_t grain = 1;
};

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
    /// A row pack whose operand is adjacent along the rows and not along
    /// k, its k iterations more than a page apart (A^T of a weight
    /// gradient; nearer, it is read in place): its array holds the slice
    /// k-major (iteration x rows), so that the copy reads and writes in
    /// order.
    bool kMajor = false;
  };
  SmallVector<Pack> packs;
  llvm::DenseMap<Operation *, unsigned> packOf;
  /// A load of the blockable k loop that is the same in every lane and
  /// addressed from i, k and constants alone (the row operand, A of
  /// A·B): where the k blocks run outside the lane blocks, each k block
  /// copies the row panel's slice of it into a contiguous array (rows x
  /// the block's k iterations) that every lane block then reads, instead
  /// of rows a whole k range apart in the matrix.
  SmallVector<Pack> rowPacks;
  llvm::DenseMap<Operation *, unsigned> rowPackOf;
  /// The body's one k loop when its iterations may be split into blocks
  /// (no other loop, no STORE before it): null otherwise.
  mutable RangeOp blockable;
  /// Iterations per k block of `blockable` (0: not split).
  int64_t kBlock = 0;
  /// Row groups of a batched matmul (0: none): i runs over (batch, row)
  /// pairs, and the lane operand's address depends on i only through
  /// i / rowGroup (B[b, k, j] at b = i / rows). The row blocks then never
  /// cross a multiple of rowGroup, so the values in `groupShared` (those
  /// that depend on i only through such quotients) are the same in every
  /// row of a block and computed once, as the unbatched B[k, j] is.
  int64_t rowGroup = 0;
  llvm::DenseSet<Value> groupShared;
  /// Some pack's load is group-shared (B[b, k, j] of a batched matmul or
  /// of split-K partial products): its panels hold one group's lanes, so
  /// a chunk runs group by group, each packing its own panels with i at
  /// the group's first row.
  bool groupPacks = false;
};

/// The tiled lowering's plan for a kernel of its shape (see the pass
/// description), or nothing.
std::optional<TilePlan> matchTile(KernelOp kernel, SplitInfo split,
                                  unsigned lanes, unsigned maxRows);

/// Whether a RANGE maps onto the launch (global_*, group_*, local_*).
inline bool isParallel(RangeKind k) { return k != RangeKind::loop; }

/// The tile intrinsics CUSTOM may name (both targets take them).
constexpr llvm::StringLiteral kTileLoad = "host.tile_load";
constexpr llvm::StringLiteral kTileStore = "host.tile_store";
/// The runtime's per-thread scratch memory of host kernels
/// (`void *synpl_rt_kernel_scratch(int64_t bytes)`, synpl/Runtime/Runtime.h).
constexpr llvm::StringLiteral kKernelScratchFn = "synpl_rt_kernel_scratch";

/// The barrier phases of the RANGEs `splits` selects that hold BARRIERs
/// directly in their body (the host: RANGEs that serialize a block's
/// threads; CUDA: RANGEs whose launch over-covers them, so that a guard
/// masks threads off). `directBarriers` gets those BARRIERs.
llvm::DenseMap<Operation *, Fission>
analyzeBarriers(KernelOp kernel, llvm::DenseSet<Operation *> &directBarriers,
                llvm::function_ref<bool(RangeOp)> splits);

/// The upstream conversions that finish a kernel built by KernelBuilder
/// (scf -> cf, vector/math/arith/cf/ub -> llvm, reconcile casts).
void buildKernelLLVMPipeline(OpPassManager &pm);

/// Rebuilds one kernel as an llvm.func of upstream ops. The walk over the
/// flat UOps (RANGE/END, IF/ENDIF, REDUCE, barrier phases) and the per-op
/// lowering (lowerOp, castValue, address) are shared by the host lowering
/// (build()) and the CUDA one (lib/Conversion/L0ToNVVM), which overrides
/// the target hooks below.
class KernelBuilder {
public:
  KernelBuilder(KernelOp kernel, StringRef name, SymbolTable &planSymbols,
                SmallVectorImpl<NotLowered> &failures, unsigned tileLanes = 0,
                unsigned tileRows = 0)
      : kernel(kernel), name(name), planSymbols(planSymbols),
        failures(failures), b(kernel.getContext()), tileLanes(tileLanes),
        tileRows(tileRows) {}
  virtual ~KernelBuilder() = default;

  /// EXP2 of f32 as inlineExp2F32 (true) or a math library call (false).
  bool inlineExp2 = true;

  /// Builds the host function at the end of `target`'s body; returns its
  /// split.
  SplitInfo build(ModuleOp target);

protected:
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
    /// A RANGE mapped onto the launch (CUDA): no loop; `branch` is its
    /// guard when the launch over-covers it, `guard` that guard's
    /// condition, `varyingMask` whether the guard differs between the
    /// threads of one block.
    bool parallel = false;
    Value guard;
    bool varyingMask = false;
  };

  // Target hooks (the host's are the defaults).
  /// The target's name in diagnostics ("host", "CUDA").
  virtual StringRef targetName() const { return "host"; }
  /// Opens a RANGE over a parallel kind itself (pushing its Frame), or
  /// returns false to have it run as a loop.
  virtual bool openParallelRange(RangeOp range) { return false; }
  /// Lowers `op` the target's own way, or returns nothing to take the
  /// shared lowering. `args` are the lowered operands (null for buffers).
  virtual std::optional<LogicalResult>
  lowerTargetOp(Operation *op, ArrayRef<Value> args, Type resultType,
                std::string &why) {
    return std::nullopt;
  }
  /// Opens phase `frame.phase` of a RANGE split at its barriers.
  virtual void openPhase(Frame &frame, Location loc);
  /// Closes phase `frame.phase` at a barrier: the values later phases read
  /// are saved, the insertion point leaves the phase.
  virtual void closePhase(Frame &frame, Location loc);

  /// The shared walk over the kernel's UOps, at the current insertion
  /// point; `splitRange` (host) runs over the chunk [begin, end).
  void lowerBody(RangeOp splitRange);

  /// The function with its signature, entry block, buffer and scratch
  /// pointers; the insertion point is before its return.
  LLVM::LLVMFuncOp createFunction(ModuleOp target, const SplitInfo &split);

  /// Marks `fn`'s first `numBuffers` parameters (the kernel's buffers)
  /// noalias, aligned to their pool's alignment capped at `maxAlign`
  /// (`defaultAlign` for a slot without a pool), adds the entry block and
  /// maps the kernel's buffer arguments to its arguments.
  Block *bindBufferParams(LLVM::LLVMFuncOp fn, unsigned numBuffers,
                          int64_t defaultAlign, int64_t maxAlign);

  // The tiled lowering (see the pass description).
  using LaneMap = llvm::DenseMap<Value, LaneValue>;
  LogicalResult buildTiled(const TilePlan &plan);
  LogicalResult emitBlock(const TilePlan &plan, Value firstRow, unsigned rows,
                          Value firstLane, Value mask);
  LogicalResult lowerTiledOp(Operation *op, const TilePlan &plan,
                             MutableArrayRef<LaneMap> rows, unsigned r,
                             Value mask);
  /// Prefetches, for each row of a block, the lines that the loads and
  /// stores in `epilogue` (the ops after a k loop) will touch, where their
  /// addresses are known before the loop: they arrive while it runs.
  void prefetchEpilogue(const TilePlan &plan, ArrayRef<Operation *> epilogue,
                        MutableArrayRef<LaneMap> rows, Value mask);
  /// Prefetches the line of the first lane of `ptr` (lane 0 and a byte
  /// stride of `bytes` per step), and that of its last lane where it is in
  /// another line.
  void prefetchLanes(Location loc, const LaneValue &ptr, int64_t bytes, unsigned lanes,
                     int32_t write, int32_t locality);
  /// `lv` as a value of type `t`: itself, or splatted over the lanes (an
  /// affine one as lane0 + l * stride).
  Value laneForm(Location loc, const LaneValue &lv, Type t);
  /// The value of `range`'s variable at iteration `it` (lower + it * step).
  Value rangeValue(Location loc, RangeOp range, Value it);
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
  /// EXP2 of a float scalar or vector whose results below the smallest
  /// normal are zero (as the GPUs' ex2.approx.ftz gives them): the input is
  /// clamped to the smallest normal's exponent, so the vector math library
  /// stays on its fast path (a masked score, -inf, would otherwise send its
  /// whole vector through the scalar fallback), and lanes below it select 0.
  Value exp2FlushingSubnormals(Location loc, Value x);
  /// 2^x of an f32 scalar or vector x in [-126, +inf] or NaN, without a
  /// call: x = n + f with n = roundeven(min(x, 128)) and |f| <= 1/2, 2^f by
  /// a degree-6 polynomial (Cephes' exp2f, relative error below 2e-7), and
  /// 2^n as two powers of two built in the exponent bits (each a normal
  /// number, so results near 2^-126 round once into the subnormals and
  /// 2^127.9 does not overflow early). NaN stays NaN, +inf gives +inf.
  Value inlineExp2F32(Location loc, Value x);
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
  /// per-row arrays `accs` (row - panelLo, lanes) between blocks; when the
  /// k blocks run outside the lane blocks, each lane block has its own
  /// rows, from element `laneBase` on.
  struct KBlock {
    Value first;
    int64_t count;
    bool load, store;
    Value panelLo;
    Value laneBase;
    /// Where the row packs' arrays exist (rowPanels), they hold this
    /// block's slice (TilePlan::rowPacks): rows `rowStride` elements apart,
    /// or, k-major (Pack::kMajor), iterations `iterationStride` apart.
    int64_t rowStride = 0, iterationStride = 0;
    SmallVector<Value> accs; // one per REDUCE of the loop
  };
  const KBlock *kblock = nullptr;
  /// Whether the built function calls kKernelScratchFn (build() declares
  /// it in the target module).
  bool usesScratch = false;
  /// The row packs' arrays and, inside a row block of a row-packed k
  /// block, each row's first element in each of them ([pack][row]).
  SmallVector<Value> rowPanels;
  SmallVector<SmallVector<Value>> rowPanelStarts;
};

} // namespace synpl::l0tollvm

#endif // SYNPL_LIB_CONVERSION_L0TOLLVM_KERNELBUILDER_H
