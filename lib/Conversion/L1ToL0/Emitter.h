//===- Emitter.h - The L1 -> L0 emitter's model of a program -*- C++ -*-===//
//
// Internal to lib/Conversion/L1ToL0. The spec's L1 -> L0 lowering is one
// pass with three phases over a shared model of the program:
//
//  1. Buffers (Buffers.cpp). Every buffer value of the step (read_batch
//     results, transfer results, tensor graph inputs and outputs, handler
//     arguments, actor state) gets a Slot, following forward / then / send
//     edges, so the producer and the consumer of a buffer name the same
//     slot.
//  2. Kernel scheduling & fusion (Grouping.cpp). The ops of each tensor
//     graph and handler are grouped into kernels (Group): an op joins the
//     kernel of a direct operand of its own iteration space unless that
//     would make the kernel depend on itself or bind more buffers than a
//     kernel may; matmuls and reductions open a kernel and read their
//     operands from memory (the reduction boundary), and their elementwise
//     consumers fuse after them. Values used outside their kernel, or
//     through a movement op, are materialized into arena slots.
//  3. Emission (KernelBuilder.cpp, Plan.cpp). Kernels in dependency order
//     become l0uop.kernel ops whose UOp bodies the ops' emission patterns
//     build (EmitPatterns.h); the launch order of one step gives the ticks,
//     the slots' lifetimes and bump offsets, the streams (one per step in
//     flight) and the record/wait chain between them.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_CONVERSION_L1TOL0_EMITTER_H
#define SYNPL_LIB_CONVERSION_L1TOL0_EMITTER_H

#include "EmitPatterns.h"

#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Runtime/PlanFormat.h"
#include "synpl/Support/NotLowered.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace synpl::l1tol0 {
using namespace mlir;

constexpr int64_t kAlign = 256;
constexpr int64_t kMaxBlock = 1024;
constexpr int64_t kMaxGridYZ = 65535;
/// The most buffers a kernel binds (the runtime's argument table).
constexpr int64_t kMaxKernelBuffers = SYNPL_PLAN_MAX_KERNEL_ARGS;
/// The most buffers an elementwise tree inlined into its consumer reads.
constexpr int64_t kMaxInlinedLeaves = 64;

//===----------------------------------------------------------------------===//
// Program model
//===----------------------------------------------------------------------===//

/// A pool of the plan.
struct Pool {
  std::string name;
  l0uop::PoolKind kind;
  l0uop::MemSpace space;
  l1::NodeOp node;
  int64_t used = 0;     // bump pointer (static pools)
  int64_t capacity = 0; // set at emission
};

/// A slot of the plan: one buffer of one step.
struct Slot {
  std::string name;
  Pool *pool = nullptr;
  SmallVector<int64_t> shape; // logical shape ([] for rank 0)
  Type elementType;
  bool flat = false;       // stored as a 1-D buffer (it is reshaped somewhere)
  bool persistent = false; // lives for the whole program
  /// Tensor parallelism: > 0 when the slot holds one rank's block of a
  /// larger tensor (l0uop.slot shard_rows).
  int64_t shardRows = 0;
  int64_t offset = -1;
  int64_t firstUse = -1, lastUse = -1;

  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  int64_t bytes() const {
    int64_t eb = std::max<int64_t>(1, (elementType.getIntOrFloatBitWidth() + 7) / 8);
    return numElements() * eb;
  }
  /// The buffer's shape in the plan: rank 0 is one element; a reshaped
  /// buffer is flat so that every view of it linearizes with MUL and ADD.
  SmallVector<int64_t> bufShape() const {
    if (shape.empty() || flat)
      return {numElements()};
    return shape;
  }
  l0uop::BufType bufType(MLIRContext *ctx) const {
    return l0uop::BufType::get(ctx, bufShape(), elementType);
  }
  void touch(int64_t tick) {
    firstUse = firstUse < 0 ? tick : std::min(firstUse, tick);
    lastUse = std::max(lastUse, tick);
  }
};

/// A launch of one step: a kernel or a transfer.
struct Launch {
  std::string name;
  SmallVector<Slot *> reads, writes;
  /// The region (graph, handler) whose kernel it is; null for a transfer
  /// or a collective.
  Operation *region = nullptr;
};

/// One kernel: ops of one iteration space.
struct Group {
  unsigned id;
  SmallVector<int64_t> space;
  /// The leading dimensions of `space` (all but the last) run as one range
  /// whose index DIV and MOD split back: a batched matmul's rows, so that
  /// its kernel keeps the two parallel ranges (rows, lanes) the tiled host
  /// and CUDA lowerings take; for a column reduction (a rank-1 space), one
  /// row.
  bool flatRows = false;
  /// A scatter's kernel: its one op stores the whole result itself, lanes
  /// over the result's last dimension; no other op joins it.
  bool scatter = false;
  /// A user kernel's (l1.kernel_call): its one op, no other joins it.
  bool custom = false;
  /// Not a kernel: a collective of a tensor-parallel graph (l1.all_gather,
  /// l1.all_sum), an entry of the stream between the kernels around it.
  bool collective = false;
  /// No other op may join the kernel.
  bool sealed() const { return scatter || custom || collective; }
  SmallVector<Operation *> ops;
  llvm::SetVector<unsigned> deps; // groups that must run first
  std::string name;
  Operation *region; // the tensor graph or handler
  // Copy kernels: values stored into a slot no kernel computes them into.
  SmallVector<std::pair<Value, Slot *>> copies;
  // An upper bound of the buffers it binds: every value it reads from
  // memory or another kernel, and every value it computes.
  llvm::DenseSet<Value> buffers;
  std::optional<Location> loc;
};

/// A symbol-safe form of `s`.
std::string sanitize(StringRef s);

class Emitter {
public:
  Emitter(ModuleOp module, const EmitPatternSet &patterns)
      : module(module), ctx(module.getContext()), patterns(patterns) {}

  /// Builds the plan; on failure reports and returns failure, leaving the
  /// module untouched.
  LogicalResult run();
  /// The differential fuzzer's planted miscompile (the pass's
  /// test-plant-miscompile=join-through-view): grouping lets an op join the
  /// kernel whose result it reads through a view.
  bool plantJoinThroughView = false;

  /// Tensor ops computed by the kernels (fused or inlined).
  int64_t numLowered() const { return (int64_t)groupOf.size() + (int64_t)inlined.size(); }

private:
  // The op kinds the grouping reads (from the ops' emission patterns).
  bool isElementwise(Operation *op) const { return patterns.is(op, OpKind::Elementwise); }
  /// Reductions, gathers and scatters: each opens a kernel and reads its
  /// operands from memory.
  bool opensKernel(Operation *op) const {
    return patterns.is(op, OpKind::Reduction) || patterns.is(op, OpKind::Gather) ||
           isScatter(op) || isCustom(op);
  }
  bool isCustom(Operation *op) const { return patterns.is(op, OpKind::Custom); }
  bool isScatter(Operation *op) const { return patterns.is(op, OpKind::Scatter); }
  bool isView(Operation *op) const { return patterns.is(op, OpKind::Movement); }
  /// The tensor ops across ranks: stream entries, not kernels.
  static bool isCollective(Operation *op) { return isa<l1::AllGatherOp, l1::AllSumOp>(op); }
  bool isCompute(Operation *op) const {
    return isElementwise(op) || opensKernel(op) || isCollective(op);
  }
  /// Why an op of a tensor graph or handler cannot be lowered, or "".
  std::string unsupportedReason(Operation *op) const;

  // The checks before anything is emitted: every op lowers, or the pass
  // fails naming the first that does not.
  LogicalResult checkLowerable(l1::SystemOp system);
  /// Reduces whole rank >= 2 tensors one axis at a time (parallel over the
  /// rest), so that no full reduction runs in one thread.
  void splitFullReductions();
  /// Rewrites each l1.all_gather along an inner axis into one along axis 0
  /// (the ranks' buffers one after the other, as the collective leaves
  /// them) read through a reshape and a transpose (Collectives.cpp).
  void gatherAlongAxisZero();
  /// A collective group's stream entry and its l0 item (Collectives.cpp).
  void emitCollective(Group &g, Launch &launch);

  // Phase 1: buffers.
  LogicalResult planBuffers();
  Pool *poolFor(l1::NodeOp node, l0uop::PoolKind kind, StringRef owner);
  /// The arena of a device node that holds buffers crossing stage, graph and
  /// handler boundaries (`@<node>.io.arena`).
  Pool *ioArena(l1::NodeOp node) {
    return poolFor(node, l0uop::PoolKind::arena, (node.getSymName() + ".io").str());
  }
  Slot *newSlot(StringRef name, Pool *pool, RankedTensorType type);
  l0uop::MemSpace spaceOf(l1::NodeOp node) const;
  std::string uniqueName(StringRef base);

  // Phase 2: grouping.
  LogicalResult groupRegion(Operation *region, Block &body);
  bool reaches(unsigned from, unsigned to) const;
  /// The value a use reads through movement ops, and whether any was seen.
  Value baseOf(Value v, bool &throughView) const;
  /// `v` with the movement ops in front of it removed.
  Value stripViews(Value v) const {
    bool view = false;
    return baseOf(v, view);
  }
  /// Whether a matmul reads `v` with affine loads (no index splitting).
  bool isPlainMatrix(Value v) const;
  /// The smallest `classes` of the one_hot ops that read `v`, or 0.
  int64_t labelClasses(Value v, llvm::DenseSet<Value> &seen) const;
  /// Calls fn(value, throughView) for every memory or computed value `v`
  /// reads through movement ops and inlined elementwise ops.
  /// Views stored by a copy kernel count as leaves for the kernels formed
  /// after that copy (`forGroup`; all of them by default).
  void collectLeaves(Value v, bool view, llvm::function_ref<void(Value, bool)> fn,
                     unsigned forGroup = ~0u);

  /// The kernels of each graph and handler in dependency order.
  FailureOr<llvm::DenseMap<Operation *, SmallVector<unsigned>>> orderKernels();

  // Phase 3: emission.
  LogicalResult emitKernel(OpBuilder &b, Group &g, Launch &launch);
  /// A user kernel's l0uop.kernel: its buffers, no body, the file and
  /// function, after checking the file's typed boundary (row L0.1).
  LogicalResult emitCustomKernel(OpBuilder &b, Group &g, Launch &launch);
  /// The plan: kernels, then memory (lifetimes, offsets, capacities),
  /// transfers, ingests, streams, inits and the control program.
  LogicalResult emitPlan(l1::SystemOp system,
                         llvm::DenseMap<Operation *, SmallVector<unsigned>> &ordered);
  /// Places the slots (ticks, lifetimes, bump offsets) and sizes the pools;
  /// fails when a node's memory is short (L0.5).
  LogicalResult placeSlots(ArrayRef<Launch> launches, int64_t depth);
  /// The step dispatcher (the control path) into `planBlock`.
  LogicalResult emitControl(l1::SystemOp system, Block *planBlock, int64_t depth);
  LogicalResult fail(Operation *op, const Twine &why);

  ModuleOp module;
  MLIRContext *ctx;
  const EmitPatternSet &patterns;
  int64_t totalOps = 0;
  bool hasFailed = false;

  std::vector<std::unique_ptr<Pool>> pools;
  std::map<std::tuple<Operation *, int, std::string>, Pool *> poolByKey;
  llvm::DenseMap<Operation *, std::string> ownerOf; // graph / handler -> name
  std::vector<std::unique_ptr<Slot>> slots;
  llvm::StringSet<> names;
  llvm::DenseMap<Value, Slot *> slotOf;               // buffers and materialized values
  llvm::DenseMap<Operation *, Slot *> stateSlot;      // l1.state -> slot
  llvm::DenseMap<std::pair<Operation *, Attribute>, Slot *> stateByName;

  // Grouping results.
  std::vector<Group> groups;
  llvm::DenseMap<Operation *, unsigned> groupOf;
  llvm::DenseSet<Value> materialized;
  llvm::DenseSet<Operation *> inlined; // elementwise ops recomputed in place
  /// Views stored by a copy kernel of their own (a matmul's operand), and
  /// that kernel; their slot is in slotOf.
  llvm::DenseMap<Value, unsigned> storedViews;
  llvm::DenseMap<Operation *, SmallVector<unsigned>> regionKernels; // in order

  // Grouping state.
  llvm::DenseMap<Value, Slot *> sinkSlot; // value -> state / output slot
  llvm::DenseMap<Slot *, unsigned> writerOf;                 // state slot -> group
  llvm::DenseMap<Slot *, SmallVector<unsigned>> readersOf;   // state slot -> groups
  llvm::SetVector<Value> flatValues;

  // The step, in launch order: transfers and the kernels of graphs/handlers.
  struct TransferItem {
    std::string name;
    Slot *src, *dst;
    l0uop::Direction dir;
  };
  std::vector<TransferItem> transfers;
  struct StepItem {
    int transfer = -1;           // index into transfers, or
    Operation *region = nullptr; // a tensor graph or handler
  };
  std::vector<StepItem> stepItems;
  // Batch readers and reported scalars (host-side plan items).
  struct IngestItem {
    std::string name;
    l1::ReadBatchOp op;
    SmallVector<Slot *> slots;
    SmallVector<std::string> paths;
    /// The host decoder: "idx", or "text" (windows of a plain-text file,
    /// each slot at its shift within the window, starts `stride` apart).
    std::string format = "idx";
    SmallVector<int64_t> shifts;
    int64_t stride = 1;
  };
  std::vector<IngestItem> ingests;
  struct ReportItem {
    std::string metric;
    Slot *slot;
    Location loc;
  };
  std::vector<ReportItem> reports;
  /// Data parallelism: an l1.all_reduce, in place on its buffers' slots.
  /// It launches right after the last launch that writes one of them and
  /// completes before the next one that touches them (the rest of the
  /// backward pass runs meanwhile).
  /// Tensor parallelism: a collective of a tensor graph (all_gather: a
  /// (source, destination) pair; all_sum: an all_reduce in place), whose
  /// launch has its place among the graph's kernels already.
  struct CollectiveItem {
    std::string name;
    l0uop::CollectiveReduce reduce;
    SmallVector<Slot *> slots;
    Location loc;
    std::string completeBefore; // a launch's name; "": the end of the step
    l0uop::CollectiveKind kind = l0uop::CollectiveKind::all_reduce;
    bool inGraph = false;
  };
  std::vector<CollectiveItem> collectives;
  /// The slot a tensor graph's collective works on when it is not its
  /// operand's own (a copy: the operand is a view, or read elsewhere too).
  llvm::DenseMap<Operation *, Slot *> collectiveSource;
  /// Inserts each collective's launch into the step's launches, defers the
  /// kernels that wait for one, and sets where each completes.
  void placeCollectives(std::vector<Launch> &launches);
  llvm::DenseMap<std::pair<Operation *, unsigned>, Slot *> graphOut;
  llvm::DenseMap<Operation *, Pool *> arenaOf;
};

} // namespace synpl::l1tol0

#endif // SYNPL_LIB_CONVERSION_L1TOL0_EMITTER_H
