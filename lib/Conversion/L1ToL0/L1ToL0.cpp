//===- L1ToL0.cpp - Emit the L0 plan of a verified L1 program --------------===//
//
// The spec's L1 -> L0 lowering, as one pass with three phases over a shared
// model of the program:
//
//  1. Buffers. Every buffer value of the step (read_batch results, transfer
//     results, tensor graph inputs and outputs, handler arguments, actor
//     state) gets a Slot, following forward / then / send edges, so the
//     producer and the consumer of a buffer name the same slot.
//  2. Kernel scheduling & fusion. The ops of each tensor graph and handler
//     are grouped into kernels (Group): an op joins the kernel of a direct
//     operand of its own iteration space unless that would make the kernel
//     depend on itself; matmuls and reductions open a kernel and read their
//     operands from memory (the reduction boundary), and their elementwise
//     consumers fuse after them. Values used outside their kernel, or
//     through a movement op, are materialized into arena slots.
//  3. Emission. Kernels in dependency order become l0uop.kernel ops with
//     UOp bodies; the launch order of one step gives the ticks, the slots'
//     lifetimes and bump offsets, the streams (one per step in flight) and
//     the record/wait chain between them.
//
// Nothing is emitted unless every op lowers: a failure is reported as
// `lowered N of M ops; not lowered: <op> at <loc>: <why>`.
//
//===----------------------------------------------------------------------===//
#include "synpl/Conversion/Passes.h"

#include "synpl/Dialect/L0Ctl/L0CtlDialect.h"
#include "synpl/Dialect/L0UOp/L0UOpDialect.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Dialect/L1/L1Dialect.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Dialect/L1/L1Program.h"
#include "synpl/Support/Property.h"
#include "synpl/Support/Units.h"
#include "synpl/Runtime/PlanFormat.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <functional>
#include <map>
#include <tuple>
#include <memory>

namespace synpl {
#define GEN_PASS_DEF_L1TOL0
#include "synpl/Conversion/Passes.h.inc"
} // namespace synpl

using namespace mlir;
using namespace synpl;

namespace {

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
};

/// One kernel: ops of one iteration space.
struct Group {
  unsigned id;
  SmallVector<int64_t> space;
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

/// The file a field with no path (bound when the program runs) is read
/// from, relative to the executable's `--data DIR`: the IDX naming of MNIST,
/// `train-<field>-idx<N>-ubyte` (N = 1 + the sample's non-unit dimensions;
/// the runtime also takes it with `.gz`, and `t10k-` for the test split).
static std::string runTimeBoundPath(l1::FieldOp field) {
  auto type = cast<RankedTensorType>(field.getType());
  return ("train-" + field.getSymName() + "-idx" +
          Twine(l0uop::IngestOp::fileRank(type.getShape())) + "-ubyte")
      .str();
}

static bool isElementwise(Operation *op) {
  return isa<l1::AddOp, l1::SubOp, l1::MulOp, l1::DivOp, l1::MaxOp, l1::MinOp,
             l1::ExpOp, l1::LogOp, l1::SqrtOp, l1::ReciprocalOp, l1::TanhOp,
             l1::CosOp, l1::AbsOp, l1::SignOp, l1::NegOp, l1::ScaleOp,
             l1::CmpOp, l1::SelectOp, l1::CastOp, l1::OneHotOp>(op);
}
static bool isReducing(Operation *op) {
  return isa<l1::MatmulOp, l1::ReduceSumOp, l1::ReduceMeanOp,
             l1::ReduceMaxOp>(op);
}
static bool isView(Operation *op) {
  return isa<l1::BroadcastOp, l1::TransposeOp, l1::ReshapeOp>(op);
}
static bool isCompute(Operation *op) {
  return isElementwise(op) || isReducing(op);
}

static RankedTensorType tensorOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

static std::string locString(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().getValue() + ":" + Twine(file.getLine()) + ":" +
            Twine(file.getColumn()))
        .str();
  if (auto fused = dyn_cast<FusedLoc>(loc); fused && !fused.getLocations().empty())
    return locString(fused.getLocations().front());
  if (auto name = dyn_cast<NameLoc>(loc))
    return locString(name.getChildLoc());
  std::string s;
  llvm::raw_string_ostream os(s);
  loc.print(os);
  return s;
}

static std::string sanitize(StringRef s) {
  std::string out;
  for (char c : s)
    out.push_back(llvm::isAlnum(c) || c == '_' || c == '.' ? c : '_');
  return out;
}

/// Why an op of a tensor graph or handler cannot be lowered, or "".
static std::string unsupportedReason(Operation *op) {
  auto isF = [](Value v) {
    return isa<FloatType>(tensorOf(v).getElementType());
  };
  if (isa<l1::ConstOp, l1::WindowReadOp, l1::StateReadOp, l1::StateWriteOp,
          l1::ReturnOp, l1::BroadcastOp, l1::ReshapeOp>(op))
    return "";
  if (auto t = dyn_cast<l1::TransposeOp>(op))
    return "";
  if (auto m = dyn_cast<l1::MatmulOp>(op)) {
    if (tensorOf(m.getLhs()).getRank() != 2 ||
        tensorOf(m.getRhs()).getRank() != 2)
      return "only rank-2 matmuls lower (a RANGE nest over i, j, k)";
    if (!isF(m.getResult()))
      return "integer matmul has no lowering";
    return "";
  }
  if (isa<l1::ReduceSumOp, l1::ReduceMeanOp, l1::ReduceMaxOp>(op)) {
    if (!isF(op->getResult(0)))
      return "integer reductions have no lowering";
    return "";
  }
  if (isa<l1::DivOp, l1::ExpOp, l1::LogOp, l1::SqrtOp, l1::ReciprocalOp,
          l1::TanhOp, l1::CosOp>(op)) {
    if (!isF(op->getResult(0)))
      return "needs a float element type";
    return "";
  }
  if (isa<l1::AddOp, l1::SubOp, l1::MulOp, l1::MaxOp, l1::MinOp, l1::AbsOp,
          l1::SignOp, l1::NegOp, l1::ScaleOp, l1::CmpOp, l1::SelectOp,
          l1::CastOp, l1::OneHotOp>(op))
    return "";
  return "no L0 lowering for this op";
}

//===----------------------------------------------------------------------===//
// The emitter
//===----------------------------------------------------------------------===//

/// The smallest `classes` of the one_hot ops that read `v` (through
/// forwards into stages and tensor graphs, transfers and views), or 0 when
/// none does: a label field the runtime must check to be in [0, classes).
static int64_t labelClasses(Value v, llvm::DenseSet<Value> &seen) {
  if (!seen.insert(v).second)
    return 0;
  int64_t best = 0;
  auto merge = [&](int64_t c) {
    if (c > 0 && (best == 0 || c < best))
      best = c;
  };
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (auto oneHot = dyn_cast<l1::OneHotOp>(user)) {
      merge(oneHot.getClasses());
    } else if (isa<l1::TransferOp>(user) || isView(user)) {
      merge(labelClasses(user->getResult(0), seen));
    } else if (auto fwd = dyn_cast<l1::ForwardOp>(user)) {
      Operation *target =
          SymbolTable::lookupNearestSymbolFrom(fwd, fwd.getTargetAttr());
      if (!target || target->getNumRegions() == 0 ||
          target->getRegion(0).empty())
        continue;
      Block &entry = target->getRegion(0).front();
      unsigned index = use.getOperandNumber();
      if (index < entry.getNumArguments())
        merge(labelClasses(entry.getArgument(index), seen));
    }
  }
  return best;
}

class Emitter {
public:
  Emitter(ModuleOp module) : module(module), ctx(module.getContext()) {}

  /// Builds the plan; on failure reports and returns failure, leaving the
  /// module untouched.
  LogicalResult run();
  /// Tensor ops computed by the kernels (fused or inlined).
  int64_t numLowered() const { return (int64_t)groupOf.size() + (int64_t)inlined.size(); }

private:
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
  static Value baseOf(Value v, bool &throughView);
  /// Calls fn(value, throughView) for every memory or computed value `v`
  /// reads through movement ops and inlined elementwise ops.
  void collectLeaves(Value v, bool view,
                     llvm::function_ref<void(Value, bool)> fn);

  // Phase 3: emission.
  LogicalResult emitKernel(OpBuilder &b, Group &g, Launch &launch);
  LogicalResult fail(Operation *op, const Twine &why);

  ModuleOp module;
  MLIRContext *ctx;
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
  };
  std::vector<IngestItem> ingests;
  struct ReportItem {
    std::string metric;
    Slot *slot;
    Location loc;
  };
  std::vector<ReportItem> reports;
  llvm::DenseMap<std::pair<Operation *, unsigned>, Slot *> graphOut;
  llvm::DenseMap<Operation *, Pool *> arenaOf;
};

std::string Emitter::uniqueName(StringRef base) {
  std::string name = sanitize(base);
  if (names.insert(name).second)
    return name;
  for (unsigned i = 1;; ++i) {
    std::string n = name + "_" + std::to_string(i);
    if (names.insert(n).second)
      return n;
  }
}

l0uop::MemSpace Emitter::spaceOf(l1::NodeOp node) const {
  if (node && node.getKind() == l1::NodeKind::compute && node.getVram())
    return l0uop::MemSpace::device;
  return l0uop::MemSpace::host;
}

Pool *Emitter::poolFor(l1::NodeOp node, l0uop::PoolKind kind, StringRef owner) {
  Pool *&known = poolByKey[{node.getOperation(), (int)kind, owner.str()}];
  if (known)
    return known;
  auto p = std::make_unique<Pool>();
  p->name = uniqueName((owner + "." + l0uop::stringifyPoolKind(kind)).str());
  known = p.get();
  p->kind = kind;
  p->space = spaceOf(node);
  p->node = node;
  pools.push_back(std::move(p));
  return pools.back().get();
}

Slot *Emitter::newSlot(StringRef name, Pool *pool, RankedTensorType type) {
  auto s = std::make_unique<Slot>();
  s->name = uniqueName(name);
  s->pool = pool;
  s->shape.assign(type.getShape().begin(), type.getShape().end());
  s->elementType = type.getElementType();
  slots.push_back(std::move(s));
  return slots.back().get();
}

LogicalResult Emitter::fail(Operation *op, const Twine &why) {
  if (!hasFailed) {
    hasFailed = true;
    op->emitError() << "lowered " << (totalOps - 1) << " of " << totalOps
                    << " ops; not lowered: " << op->getName() << " at "
                    << locString(op->getLoc()) << ": " << why;
  }
  return failure();
}

/// `v` with the movement ops in front of it removed.
static Value baseOfConst(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isView(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

Value Emitter::baseOf(Value v, bool &throughView) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isView(def))
      break;
    throughView = true;
    v = def->getOperand(0);
  }
  return v;
}

void Emitter::collectLeaves(Value v, bool view,
                            llvm::function_ref<void(Value, bool)> fn) {
  Operation *def = v.getDefiningOp();
  if (def && isView(def))
    return collectLeaves(def->getOperand(0), true, fn);
  if (def && inlined.contains(def)) {
    for (Value o : def->getOperands())
      collectLeaves(o, view, fn);
    return;
  }
  if (def && isa<l1::ConstOp>(def))
    return;
  fn(v, view);
}

bool Emitter::reaches(unsigned from, unsigned to) const {
  // from depends (transitively) on to?
  SmallVector<unsigned> stack{from};
  llvm::DenseSet<unsigned> seen;
  while (!stack.empty()) {
    unsigned g = stack.pop_back_val();
    if (g == to)
      return true;
    if (!seen.insert(g).second)
      continue;
    for (unsigned d : groups[g].deps)
      stack.push_back(d);
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Phase 1: buffers
//===----------------------------------------------------------------------===//

LogicalResult Emitter::planBuffers() {
  SymbolTableCollection tables;
  // Actor state: one persistent slot per field on the actor's node.
  for (auto actor : module.getOps<l1::ActorOp>()) {
    l1::NodeOp node = l1::lookupNode(actor, actor.getNodeAttr());
    Pool *pool = poolFor(node, l0uop::PoolKind::persistent,
                         node ? node.getSymName() : actor.getSymName());
    for (auto state : actor.getOps<l1::StateOp>()) {
      auto type = cast<RankedTensorType>(state.getType());
      Slot *s = newSlot((actor.getSymName() + "." + state.getSymName()).str(),
                        pool, type);
      s->persistent = true;
      stateSlot[state] = s;
      stateByName[{actor, state.getSymNameAttr()}] = s;
    }
  }

  // Stages, graphs and handlers in dataflow order.
  l1::Dataflow flow = l1::Dataflow::build(tables, &module.getBody()->front());
  SmallVector<Operation *> order;
  {
    llvm::DenseMap<Operation *, unsigned> indeg;
    for (Operation *n : flow.getNodes())
      indeg[n];
    for (Operation *n : flow.getNodes())
      for (Operation *s : flow.getSuccessors(n))
        ++indeg[s];
    SmallVector<Operation *> ready;
    for (Operation *n : flow.getNodes())
      if (!indeg[n])
        ready.push_back(n);
    while (!ready.empty()) {
      Operation *n = ready.front();
      ready.erase(ready.begin());
      order.push_back(n);
      for (Operation *s : flow.getSuccessors(n))
        if (--indeg[s] == 0)
          ready.push_back(s);
    }
    if (order.size() != flow.getNodes().size())
      return fail(module, "the dataflow among stages and tensor graphs has a "
                          "cycle (the L1 verifier rejects this)");
  }

  auto nodeOf = [&](Operation *from, FlatSymbolRefAttr ref) {
    return l1::lookupNode(from, ref);
  };
  // Buffers that stages move: device buffers live in the node's io arena,
  // host buffers in its freelist staging pool.
  auto stagingPool = [&](l1::NodeOp node) -> Pool * {
    return spaceOf(node) == l0uop::MemSpace::device
               ? ioArena(node)
               : poolFor(node, l0uop::PoolKind::freelist,
                         node ? node.getSymName() : "host");
  };

  for (Operation *n : order) {
    if (auto stage = dyn_cast<l1::StageOp>(n)) {
      std::string owner = stage.getSymName().str();
      unsigned txIndex = 0;
      // A transfer or window copy: a fresh staging slot for `result`, filled
      // from `src` by a plan transfer at this point of the step.
      auto copyIntoStaging = [&](Operation *op, Slot *src, Value result,
                                 StringRef suffix) {
        auto bt = cast<l1::BufType>(result.getType());
        l1::NodeOp node = nodeOf(op, bt.getNode());
        l0uop::MemSpace space = spaceOf(node);
        Slot *dst = newSlot(owner + suffix.str() + std::to_string(txIndex),
                            stagingPool(node), bt.getTensor());
        slotOf[result] = dst;
        bool fromHost = src->pool->space == l0uop::MemSpace::host;
        bool toHost = space == l0uop::MemSpace::host;
        l0uop::Direction dir =
            fromHost ? (toHost ? l0uop::Direction::h2h : l0uop::Direction::h2d)
                     : (toHost ? l0uop::Direction::d2h : l0uop::Direction::d2d);
        transfers.push_back(
            {uniqueName(owner + ".copy" + std::to_string(txIndex)), src, dst, dir});
        stepItems.push_back({(int)transfers.size() - 1, nullptr});
        ++txIndex;
      };
      // Buffers a root stage receives come from outside the step (the
      // runtime): they get slots of their own, where their type places them.
      if (!stage.getBody().empty())
        for (BlockArgument arg : stage.getBody().front().getArguments()) {
          auto bt = dyn_cast<l1::BufType>(arg.getType());
          if (!bt || slotOf.count(arg))
            continue;
          slotOf[arg] = newSlot(owner + ".in" + std::to_string(arg.getArgNumber()),
                                stagingPool(nodeOf(stage, bt.getNode())),
                                bt.getTensor());
        }
      WalkResult r = stage.walk([&](Operation *op) -> WalkResult {
        if (auto rb = dyn_cast<l1::ReadBatchOp>(op)) {
          IngestItem ingest{uniqueName(owner + ".read" + std::to_string(ingests.size())),
                            rb, {}, {}};
          auto data = SymbolTable::lookupNearestSymbolFrom<l1::DataOp>(
              rb, rb.getSourceAttr());
          for (auto [i, res] : llvm::enumerate(rb.getResults())) {
            auto bt = cast<l1::BufType>(res.getType());
            l1::NodeOp node = nodeOf(op, bt.getNode());
            Pool *pool = poolFor(node, l0uop::PoolKind::freelist,
                                 node ? node.getSymName() : "host");
            auto field = cast<FlatSymbolRefAttr>(rb.getFields()[i]);
            slotOf[res] = newSlot(owner + "." + field.getValue().str(), pool,
                                  bt.getTensor());
            auto fieldOp =
                data ? dyn_cast_or_null<l1::FieldOp>(
                           SymbolTable::lookupSymbolIn(data, field.getAttr()))
                     : nullptr;
            if (!fieldOp) {
              (void)fail(op, "field " + field.getValue() +
                                 " is not a field of the data source");
              return WalkResult::interrupt();
            }
            if (fieldOp.getFormat() != l1::DataFormat::idx) {
              (void)fail(op, "field " + field.getValue() + " has format " +
                                 l1::stringifyDataFormat(fieldOp.getFormat()) +
                                 ", which has no host decoder (known: idx)");
              return WalkResult::interrupt();
            }
            ingest.slots.push_back(slotOf[res]);
            ingest.paths.push_back(fieldOp.getPath().empty()
                                       ? runTimeBoundPath(fieldOp)
                                       : fieldOp.getPath().str());
          }
          ingests.push_back(std::move(ingest));
          return WalkResult::advance();
        }
        if (auto report = dyn_cast<l1::ReportOp>(op)) {
          Slot *s = slotOf.lookup(report.getValue());
          if (!s) {
            (void)fail(op, "the reported buffer has no slot");
            return WalkResult::interrupt();
          }
          reports.push_back({report.getMetric().str(), s, op->getLoc()});
          return WalkResult::advance();
        }
        if (auto tx = dyn_cast<l1::TransferOp>(op)) {
          Slot *src = slotOf.lookup(tx.getSource());
          if (!src) {
            (void)fail(op, "the transferred buffer has no slot (it does not come "
                     "from a read_batch, transfer or tensor graph)");
            return WalkResult::interrupt();
          }
          copyIntoStaging(op, src, tx.getResult(), ".tx");
          return WalkResult::advance();
        }
        if (auto br = dyn_cast<BranchOpInterface>(op)) {
          // Buffers passed to a successor block are the same buffers.
          for (unsigned i = 0; i < op->getNumSuccessors(); ++i) {
            SuccessorOperands ops = br.getSuccessorOperands(i);
            Block *dest = op->getSuccessor(i);
            for (unsigned a = 0; a < dest->getNumArguments() && a < ops.size(); ++a)
              if (Value v = ops[a])
                if (Slot *s = slotOf.lookup(v))
                  slotOf[dest->getArgument(a)] = s;
          }
          return WalkResult::advance();
        }
        if (auto fwd = dyn_cast<l1::ForwardOp>(op)) {
          Operation *target =
              l1::lookupInProgram(tables, op, fwd.getTargetAttr());
          if (!target || target->getNumRegions() == 0 ||
              target->getRegion(0).empty())
            return WalkResult::advance();
          Block &entry = target->getRegion(0).front();
          for (auto [arg, v] : llvm::zip(entry.getArguments(), fwd.getArgs()))
            if (Slot *s = slotOf.lookup(v))
              slotOf[arg] = s;
          return WalkResult::advance();
        }
        if (auto send = dyn_cast<l1::SendOp>(op)) {
          auto handler = dyn_cast_or_null<l1::HandlerOp>(
              l1::lookupInProgram(tables, op, send.getTarget()));
          if (!handler)
            return WalkResult::advance();
          Block &entry = handler.getBody().front();
          for (auto [arg, v] : llvm::zip(entry.getArguments(), send.getArgs()))
            if (Slot *s = slotOf.lookup(v))
              slotOf[arg] = s;
          // The handler runs when its message arrives: its kernels launch
          // here in the step.
          stepItems.push_back({-1, handler});
          return WalkResult::advance();
        }
        if (auto wc = dyn_cast<l1::WindowCopyOp>(op)) {
          // A snapshot of actor state: a copy from the state's slot.
          Operation *actorOp = l1::lookupInProgram(
              tables, op, SymbolRefAttr::get(wc.getWindow().getRootReference()));
          Slot *src = stateByName.lookup({actorOp, wc.getFieldAttr().getAttr()});
          if (!src) {
            (void)fail(op, "the window's actor state does not resolve");
            return WalkResult::interrupt();
          }
          copyIntoStaging(op, src, wc.getResult(), ".snap");
          return WalkResult::advance();
        }
        return WalkResult::advance();
      });
      if (r.wasInterrupted())
        return failure();
      continue;
    }
    auto graph = dyn_cast<l1::TensorGraphOp>(n);
    if (!graph)
      continue;
    stepItems.push_back({-1, graph});
    // Results: io slots on the graph's node, passed to the `then` stage.
    l1::NodeOp node = nodeOf(graph, graph.getNodeAttr());
    if (!node)
      return fail(graph, "its node does not resolve");
    Block &body = graph.getBody().front();
    // Inputs no stage forwards are filled from outside the step (by the
    // runtime): they get io slots of their own.
    for (BlockArgument arg : body.getArguments())
      if (!slotOf.count(arg))
        slotOf[arg] = newSlot(graph.getSymName().str() + ".in" +
                                  std::to_string(arg.getArgNumber()),
                              ioArena(node),
                              tensorOf(arg));
    auto ret = dyn_cast<l1::ReturnOp>(body.getTerminator());
    Operation *then = graph.getThenAttr()
                          ? l1::lookupInProgram(tables, graph, graph.getThenAttr())
                          : nullptr;
    if (ret) {
      Pool *io = ioArena(node);
      for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
        Slot *s = newSlot(graph.getSymName().str() + ".out" + std::to_string(i),
                          io, tensorOf(v));
        graphOut[{graph, (unsigned)i}] = s;
        if (then && then->getNumRegions() && !then->getRegion(0).empty() &&
            i < then->getRegion(0).front().getNumArguments())
          slotOf[then->getRegion(0).front().getArgument(i)] = s;
      }
    }
  }
  return success();
}


//===----------------------------------------------------------------------===//
// Phase 2: kernel scheduling & fusion
//===----------------------------------------------------------------------===//

LogicalResult Emitter::groupRegion(Operation *region, Block &body) {
  SymbolTableCollection tables;
  std::string owner;
  l1::ActorOp actor;
  if (auto g = dyn_cast<l1::TensorGraphOp>(region)) {
    owner = g.getSymName().str();
  } else {
    auto h = cast<l1::HandlerOp>(region);
    actor = h->getParentOfType<l1::ActorOp>();
    owner = (actor.getSymName() + "." + h.getSymName()).str();
  }
  l1::NodeOp node = isa<l1::TensorGraphOp>(region)
                        ? l1::lookupNode(region, cast<l1::TensorGraphOp>(region).getNodeAttr())
                        : l1::lookupNode(actor, actor.getNodeAttr());
  if (!node)
    return fail(region, "its node does not resolve");
  arenaOf[region] = poolFor(node, l0uop::PoolKind::arena, owner);
  ownerOf[region] = owner;
  // Arguments of a handler whose sender's buffers have no slot.
  for (BlockArgument arg : body.getArguments())
    if (!slotOf.count(arg))
      if (auto t = dyn_cast<RankedTensorType>(arg.getType()))
        slotOf[arg] = newSlot(owner + ".arg" + std::to_string(arg.getArgNumber()),
                              ioArena(node),
                              t);
  SmallVector<unsigned> &mine = regionKernels[region];

  // Values a kernel must compute and store: stored to state or returned,
  // or read through a reshape (a matmul reading a reshaped activation
  // loads it, rather than recomputing it for every output column).
  llvm::DenseSet<Value> mustStore;
  for (Operation &op : body) {
    if (auto sw = dyn_cast<l1::StateWriteOp>(&op))
      mustStore.insert(sw.getValue());
    else if (isa<l1::ReturnOp>(&op))
      mustStore.insert(op.getOperands().begin(), op.getOperands().end());
    else if (auto rs = dyn_cast<l1::ReshapeOp>(&op))
      mustStore.insert(rs.getOperand());
  }
  // An elementwise op over memory and constants only, with one consumer, is
  // computed inside its consumer at the consumer's index (prologue fusion,
  // e.g. |w| inside the loop of sum |w|): it never opens a kernel of its
  // own. With several consumers it is computed once by a kernel instead.
  // An inlined tree reads at most kMaxInlinedLeaves buffers, so that one
  // op never needs more buffers than a kernel may bind.
  std::function<bool(Value)> fromMemory = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (!def || isa<l1::ConstOp, l1::WindowReadOp, l1::StateReadOp>(def))
      return true;
    if (isView(def))
      return fromMemory(def->getOperand(0));
    return inlined.contains(def);
  };
  llvm::DenseMap<Operation *, int64_t> leavesOf;
  auto leafCount = [&](Value v) -> int64_t {
    Operation *def = baseOfConst(v).getDefiningOp();
    if (def && isa<l1::ConstOp>(def))
      return 0;
    return def && inlined.contains(def) ? leavesOf.lookup(def) : 1;
  };
  for (Operation &op : body) {
    if (!isElementwise(&op) || mustStore.contains(op.getResult(0)) ||
        !op.getResult(0).hasOneUse() || !llvm::all_of(op.getOperands(), fromMemory))
      continue;
    int64_t leaves = 0;
    for (Value v : op.getOperands())
      leaves += leafCount(v);
    if (leaves > kMaxInlinedLeaves)
      continue;
    inlined.insert(&op);
    leavesOf[&op] = leaves;
  }

  // The group of a computed value, if any.
  auto groupOfValue = [&](Value b) -> std::optional<unsigned> {
    Operation *def = b.getDefiningOp();
    if (def && isCompute(def)) {
      auto it = groupOf.find(def);
      if (it != groupOf.end())
        return it->second;
    }
    return std::nullopt;
  };

  // Whether `op` may join group `g` without a cycle: every value it reads
  // through a view or
  // from another kernel must not depend on `g`, and state it reads must not
  // be rewritten by a kernel that `g` depends on.
  auto acyclicJoin = [&](Operation *op, unsigned g) {
    bool ok = true;
    for (Value v : op->getOperands())
      collectLeaves(v, false, [&](Value b, bool view) {
        if (std::optional<unsigned> h = groupOfValue(b)) {
          if (*h == g ? view : reaches(*h, g))
            ok = false;
        }
        if (Slot *s = slotOf.lookup(b); s && s->persistent) {
          auto w = writerOf.find(s);
          if (w != writerOf.end() && groups[w->second].region == region &&
              (w->second == g ? view : reaches(g, w->second)))
            ok = false;
        }
      });
    return ok;
  };

  for (Operation &opRef : body) {
    Operation *op = &opRef;
    if (isa<l1::ConstOp>(op) || isView(op) || inlined.contains(op))
      continue;
    if (auto wr = dyn_cast<l1::WindowReadOp>(op)) {
      auto *actorOp = l1::lookupInProgram(
          tables, op, SymbolRefAttr::get(wr.getWindow().getRootReference()));
      Slot *s = stateByName.lookup({actorOp, wr.getFieldAttr().getAttr()});
      if (!s)
        return fail(op, "the window's actor state does not resolve");
      slotOf[wr.getResult()] = s;
      continue;
    }
    if (auto rd = dyn_cast<l1::StateReadOp>(op)) {
      Slot *s = stateByName.lookup({actor, rd.getFieldAttr().getAttr()});
      if (!s)
        return fail(op, "the state field does not resolve");
      if (writerOf.count(s))
        return fail(op, "reads a state field after this handler wrote it; "
                        "read the written value instead");
      slotOf[rd.getResult()] = s;
      continue;
    }
    if (isa<l1::StateWriteOp, l1::ReturnOp>(op)) {
      auto sinkOf = [&](Value v, Slot *dst) -> LogicalResult {
        bool view = false;
        Value b = baseOf(v, view);
        std::optional<unsigned> h = groupOfValue(b);
        if (!dst)
          return fail(op, "has no slot to store into");
        if (view || !h || sinkSlot.count(b) || !b.getDefiningOp()) {
          // No kernel computes it into `dst` (an input, state, constant or
          // view, or a value stored elsewhere already): a copy kernel that
          // runs after everything before it in the graph or handler.
          Group g;
          g.id = groups.size();
          g.space.assign(tensorOf(v).getShape().begin(),
                         tensorOf(v).getShape().end());
          g.region = region;
          g.copies.push_back({v, dst});
          g.loc = op->getLoc();
          for (unsigned k : mine)
            g.deps.insert(k);
          groups.push_back(std::move(g));
          mine.push_back(groups.back().id);
          unsigned c = groups.back().id;
          collectLeaves(v, false, [&](Value leaf, bool) {
            if (groupOfValue(leaf))
              materialized.insert(leaf);
          });
          if (dst->persistent)
            writerOf[dst] = c;
          return success();
        }
        sinkSlot[b] = dst;
        materialized.insert(b);
        if (dst->persistent) {
          // Write after read: every kernel that read the old state runs
          // first.
          for (unsigned k : readersOf.lookup(dst)) {
            // Readers in earlier graphs or handlers run earlier in the step.
            if (k == *h || groups[k].region != region)
              continue;
            if (reaches(k, *h))
              return fail(op, "the new value of the state depends on a "
                              "kernel that reads its old value");
            groups[*h].deps.insert(k);
          }
          writerOf[dst] = *h;
        }
        return success();
      };
      if (auto sw = dyn_cast<l1::StateWriteOp>(op)) {
        Slot *dst = stateByName.lookup({actor, sw.getFieldAttr().getAttr()});
        if (!dst)
          return fail(op, "the state field does not resolve");
        if (writerOf.count(dst))
          return fail(op, "writes a state field twice in one handler");
        if (failed(sinkOf(sw.getValue(), dst)))
          return failure();
      } else {
        for (auto [i, v] : llvm::enumerate(op->getOperands()))
          if (failed(sinkOf(v, graphOut.lookup({region, (unsigned)i}))))
            return failure();
      }
      continue;
    }
    if (!isCompute(op))
      return fail(op, unsupportedReason(op));

    // Choose the kernel: the kernel of a direct operand of the same
    // iteration space, else the latest kernel of that space (sibling
    // fusion), when joining keeps the kernel graph acyclic; a matmul or
    // reduction always opens its own.
    auto shape = tensorOf(op->getResult(0)).getShape();
    // The buffers it may bind; a kernel it would take past the runtime's
    // argument table does not take it (deep models: one update kernel per
    // parameter group instead of one over every parameter).
    llvm::SmallSetVector<Value, 8> opBuffers;
    opBuffers.insert(op->getResult(0));
    for (Value v : op->getOperands())
      collectLeaves(v, false, [&](Value leaf, bool) { opBuffers.insert(leaf); });
    auto fits = [&](unsigned g) {
      int64_t n = groups[g].buffers.size();
      for (Value v : opBuffers)
        n += !groups[g].buffers.contains(v);
      return n <= kMaxKernelBuffers;
    };
    auto canJoin = [&](Operation *o, unsigned g) { return fits(g) && acyclicJoin(o, g); };
    std::optional<unsigned> chosen;
    if (!isReducing(op)) {
      for (Value v : op->getOperands()) {
        std::optional<unsigned> g = groupOfValue(v);
        if (g && llvm::equal(groups[*g].space, shape) && canJoin(op, *g)) {
          chosen = g;
          break;
        }
      }
      for (unsigned k = mine.size(); !chosen && k-- > 0;)
        if (llvm::equal(groups[mine[k]].space, shape) && canJoin(op, mine[k]))
          chosen = mine[k];
    }
    if (!chosen) {
      Group g;
      g.id = groups.size();
      g.space.assign(shape.begin(), shape.end());
      g.region = region;
      groups.push_back(std::move(g));
      mine.push_back(groups.back().id);
      chosen = groups.back().id;
    }
    unsigned g = *chosen;
    groups[g].ops.push_back(op);
    groups[g].buffers.insert(opBuffers.begin(), opBuffers.end());
    groupOf[op] = g;

    // What it reads: registers when computed in this kernel at the same
    // index, memory otherwise.
    bool failedHere = false;
    for (Value v : op->getOperands()) {
      bool direct = v.getDefiningOp() && !isView(v.getDefiningOp()) &&
                    !inlined.contains(v.getDefiningOp());
      collectLeaves(v, false, [&](Value b, bool view) {
        if (std::optional<unsigned> h = groupOfValue(b)) {
          if (*h == g && direct && !view && !isReducing(op))
            return;
          materialized.insert(b);
          if (*h != g)
            groups[g].deps.insert(*h);
        }
        if (Slot *s = slotOf.lookup(b); s && s->persistent) {
          readersOf[s].push_back(g);
          auto w = writerOf.find(s);
          if (w != writerOf.end() && w->second != g &&
              groups[w->second].region == region) {
            if (reaches(g, w->second))
              failedHere = true;
            else
              groups[w->second].deps.insert(g);
          }
        }
      });
    }
    if (failedHere)
      return fail(op, "reads the old value of a state field that a kernel "
                      "it depends on rewrites");
  }

  // A chain of reshapes over a buffer reads it at one linear index: the
  // buffer is stored flat. A reshape of a broadcast, a transpose or an
  // inlined elementwise op splits its index with DIV and MOD instead.
  for (Operation &op : body) {
    auto rs = dyn_cast<l1::ReshapeOp>(&op);
    if (!rs)
      continue;
    Value src = rs.getOperand();
    while (auto inner = src.getDefiningOp<l1::ReshapeOp>())
      src = inner.getOperand();
    Operation *def = src.getDefiningOp();
    if (def && (isView(def) || isa<l1::ConstOp>(def) || inlined.contains(def)))
      continue;
    flatValues.insert(src);
    if (def && isCompute(def))
      materialized.insert(src);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Phase 3: UOp emission
//===----------------------------------------------------------------------===//

namespace {
/// Emits one kernel body.
class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc,
                const llvm::DenseMap<Value, Slot *> &slotOf,
                const llvm::DenseSet<Operation *> &inlined,
                llvm::DenseMap<Slot *, Value> &args, unsigned group,
                const llvm::DenseMap<Operation *, unsigned> &groupOf)
      : b(b), loc(loc), slotOf(slotOf), inlined(inlined), args(args),
        group(group), groupOf(groupOf) {}

  Value index(int64_t v) {
    return l0uop::ConstOp::create(b, loc, b.getIndexType(), b.getIndexAttr(v));
  }
  Value constant(Type t, double v) {
    if (isa<FloatType>(t))
      return l0uop::ConstOp::create(b, loc, t, b.getFloatAttr(t, v));
    return l0uop::ConstOp::create(b, loc, t, b.getIntegerAttr(t, (int64_t)v));
  }
  Value negInf(Type t) {
    auto ft = cast<FloatType>(t);
    return l0uop::ConstOp::create(b, 
        loc, t, FloatAttr::get(t, APFloat::getInf(ft.getFloatSemantics(), true)));
  }
  template <typename OpT> Value op(Type t, ValueRange src) {
    return OpT::create(b, loc, t, src);
  }

  /// Row-major linear index of `idx` in `shape`.
  Value linearize(ArrayRef<Value> idx, ArrayRef<int64_t> shape) {
    if (idx.empty())
      return index(0);
    Value flat = idx[0];
    for (size_t i = 1; i < idx.size(); ++i) {
      flat = op<l0uop::MulOp>(b.getIndexType(), {flat, index(shape[i])});
      flat = op<l0uop::AddOp>(b.getIndexType(), {flat, idx[i]});
    }
    return flat;
  }

  Value pointer(Slot *s, ArrayRef<Value> idx, bool flatIdx) {
    Value buf = args.lookup(s);
    auto bt = cast<l0uop::BufType>(buf.getType());
    SmallVector<Value> ind;
    if (flatIdx)
      ind.push_back(idx[0]);
    else if (s->shape.empty() || s->flat)
      ind.push_back(linearize(idx, s->shape));
    else
      ind.assign(idx.begin(), idx.end());
    return l0uop::IndexOp::create(b, 
        loc, l0uop::PtrType::get(b.getContext(), bt.getElementType()), buf,
        ind);
  }

  /// The scalar value of `v` at `idx` (an index per dimension of v; or one
  /// flat index when `flatIdx`).
  Value eval(Value v, ArrayRef<Value> idx, bool flatIdx = false) {
    // Values computed outside any reduction loop are reused (CSE); inside a
    // loop they die at its END.
    if (loopDepth > 0)
      return evalUncached(v, idx, flatIdx);
    CacheKey key{v.getAsOpaquePointer(), {}, flatIdx};
    for (Value i : idx)
      key.idx.push_back(i.getAsOpaquePointer());
    auto it = cache.find(key);
    if (it != cache.end())
      return it->second;
    Value r = evalUncached(v, idx, flatIdx);
    cache[key] = r;
    return r;
  }

  /// The row-major coordinates in `shape` of the linear index `flat`
  /// (`(flat div stride) mod extent` per dimension, with the division or
  /// the remainder left out where it cannot change the value).
  SmallVector<Value> delinearize(Value flat, ArrayRef<int64_t> shape) {
    SmallVector<Value> sub(shape.size());
    int64_t stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      if (shape[d] == 1) {
        sub[d] = index(0);
        continue;
      }
      Value q = stride == 1 ? flat : op<l0uop::DivOp>(b.getIndexType(), {flat, index(stride)});
      sub[d] = d == 0 ? q : op<l0uop::ModOp>(b.getIndexType(), {q, index(shape[d])});
      stride *= shape[d];
    }
    return sub;
  }

  /// The coordinates in `in` of the element at `idx` of its reshape to
  /// `out`. Both shapes split into runs of dimensions with equal extents
  /// (a reshape only merges and splits within a run); each run's indices
  /// are linearized and delinearized on their own, so a dimension a
  /// reshape keeps costs no arithmetic.
  SmallVector<Value> reshapeIndex(ArrayRef<Value> idx, ArrayRef<int64_t> out,
                                  ArrayRef<int64_t> in) {
    SmallVector<Value> sub;
    size_t i = 0, j = 0;
    while (i < out.size() || j < in.size()) {
      size_t i0 = i, j0 = j;
      int64_t pa = 1, pb = 1;
      if (i < out.size())
        pa *= out[i++];
      if (j < in.size())
        pb *= in[j++];
      while (pa != pb && (i < out.size() || j < in.size())) {
        if ((pa < pb && i < out.size()) || j >= in.size())
          pa *= out[i++];
        else
          pb *= in[j++];
      }
      if (i - i0 == 1 && j - j0 == 1) {
        sub.push_back(idx[i0]);
        continue;
      }
      if (j == j0)
        continue; // unit dimensions of `out` only
      Value flat = linearize(idx.slice(i0, i - i0), out.slice(i0, i - i0));
      auto part = delinearize(flat, in.slice(j0, j - j0));
      sub.append(part.begin(), part.end());
    }
    return sub;
  }

  /// Whether `v` can be read at one linear index: a reshape (which passes
  /// it on), a constant, or a buffer stored flat (or of rank <= 1).
  bool takesFlatIndex(Value v) const {
    Operation *def = v.getDefiningOp();
    if (def && isa<l1::ReshapeOp, l1::ConstOp>(def))
      return true;
    if (def && (isView(def) || inlined.contains(def)))
      return false;
    Slot *s = slotOf.lookup(v);
    return s && (s->flat || s->shape.size() <= 1);
  }

  Value evalUncached(Value v, ArrayRef<Value> idx, bool flatIdx) {
    Type et = tensorOf(v).getElementType();
    Operation *def = v.getDefiningOp();
    if (flatIdx && !takesFlatIndex(v))
      return eval(v, delinearize(idx[0], tensorOf(v).getShape()));
    if (!flatIdx && regs.count(v))
      return regs.lookup(v);
    if (def) {
      if (auto c = dyn_cast<l1::ConstOp>(def))
        return constant(et, c.getValue().convertToDouble());
      if (auto bc = dyn_cast<l1::BroadcastOp>(def)) {
        auto in = tensorOf(bc.getOperand()).getShape();
        auto out = tensorOf(v).getShape();
        SmallVector<Value> sub;
        for (size_t i = 0; i < in.size(); ++i) {
          int64_t d = bc.getDims() ? (*bc.getDims())[i]
                                   : (int64_t)(i + out.size() - in.size());
          sub.push_back(in[i] == 1 && out[d] != 1 ? index(0) : idx[d]);
        }
        return eval(bc.getOperand(), sub);
      }
      if (auto tr = dyn_cast<l1::TransposeOp>(def)) {
        size_t r = idx.size();
        SmallVector<Value> sub(r);
        for (size_t i = 0; i < r; ++i) {
          int64_t p = tr.getPerm() ? (*tr.getPerm())[i] : (int64_t)(r - 1 - i);
          sub[p] = idx[i];
        }
        return eval(tr.getOperand(), sub);
      }
      if (auto rs = dyn_cast<l1::ReshapeOp>(def)) {
        Value src = rs.getOperand();
        if (!flatIdx && !takesFlatIndex(src))
          return eval(src, reshapeIndex(idx, tensorOf(v).getShape(),
                                        tensorOf(src).getShape()));
        Value flat = flatIdx ? idx[0] : linearize(idx, tensorOf(v).getShape());
        return eval(src, {flat}, /*flatIdx=*/true);
      }
      if (inlined.contains(def))
        return elementwise(def, idx);
    }
    Slot *s = slotOf.lookup(v);
    if (!s) {
      broken = true;
      return constant(et, 0);
    }
    Value ptr = pointer(s, idx, flatIdx);
    return op<l0uop::LoadOp>(s->elementType, {ptr});
  }

  /// The index of operand `o` of an elementwise op evaluated at `idx`.
  SmallVector<Value> operandIndex(Value o, Value result, ArrayRef<Value> idx) {
    auto os = tensorOf(o).getShape(), rs = tensorOf(result).getShape();
    if (os == rs)
      return SmallVector<Value>(idx.begin(), idx.end());
    SmallVector<Value> zeros;
    for (size_t i = 0; i < os.size(); ++i)
      zeros.push_back(index(0));
    return zeros; // a one-element operand (the verifier allows no other)
  }

  Value elementwise(Operation *o, ArrayRef<Value> idx) {
    Value res = o->getResult(0);
    Type t = tensorOf(res).getElementType();
    auto arg = [&](unsigned i) {
      Value v = o->getOperand(i);
      return eval(v, operandIndex(v, res, idx));
    };
    constexpr double log2e = 1.4426950408889634;
    constexpr double ln2 = 0.6931471805599453;
    constexpr double halfPi = 1.5707963267948966;
    return llvm::TypeSwitch<Operation *, Value>(o)
        .Case([&](l1::AddOp) { return op<l0uop::AddOp>(t, {arg(0), arg(1)}); })
        .Case([&](l1::SubOp) {
          Value n = op<l0uop::NegOp>(t, {arg(1)});
          return op<l0uop::AddOp>(t, {arg(0), n});
        })
        .Case([&](l1::MulOp) { return op<l0uop::MulOp>(t, {arg(0), arg(1)}); })
        .Case([&](l1::ScaleOp) { return op<l0uop::MulOp>(t, {arg(0), arg(1)}); })
        .Case([&](l1::DivOp) {
          Value r = op<l0uop::ReciprocalOp>(t, {arg(1)});
          return op<l0uop::MulOp>(t, {arg(0), r});
        })
        .Case([&](l1::MaxOp) { return op<l0uop::MaxOp>(t, {arg(0), arg(1)}); })
        .Case([&](l1::MinOp) {
          Value a = op<l0uop::NegOp>(t, {arg(0)});
          Value c = op<l0uop::NegOp>(t, {arg(1)});
          Value m = op<l0uop::MaxOp>(t, {a, c});
          return op<l0uop::NegOp>(t, {m});
        })
        .Case([&](l1::NegOp) { return op<l0uop::NegOp>(t, {arg(0)}); })
        .Case([&](l1::AbsOp) {
          Value x = arg(0);
          Value n = op<l0uop::NegOp>(t, {x});
          return op<l0uop::MaxOp>(t, {x, n});
        })
        .Case([&](l1::SignOp) {
          // (0 < x) - (x < 0): 0 at 0 (and for NaN).
          Value x = arg(0);
          Value zero = constant(t, 0), one = constant(t, 1), m1 = constant(t, -1);
          Type i1 = b.getI1Type();
          Value pos = op<l0uop::CmpLtOp>(i1, {zero, x});
          Value neg = op<l0uop::CmpLtOp>(i1, {x, zero});
          Value negOrZero = op<l0uop::WhereOp>(t, {neg, m1, zero});
          return op<l0uop::WhereOp>(t, {pos, one, negOrZero});
        })
        .Case([&](l1::ExpOp) {
          // e^x = 2^(x log2 e)
          Value s = op<l0uop::MulOp>(t, {arg(0), constant(t, log2e)});
          return op<l0uop::Exp2Op>(t, {s});
        })
        .Case([&](l1::LogOp) {
          // ln x = log2(x) ln 2
          Value l = op<l0uop::Log2Op>(t, {arg(0)});
          return op<l0uop::MulOp>(t, {l, constant(t, ln2)});
        })
        .Case([&](l1::SqrtOp) { return op<l0uop::SqrtOp>(t, {arg(0)}); })
        .Case([&](l1::ReciprocalOp) {
          return op<l0uop::ReciprocalOp>(t, {arg(0)});
        })
        .Case([&](l1::TanhOp) {
          // tanh x = 2 / (1 + 2^(-2x log2 e)) - 1; saturates to +-1.
          Value s = op<l0uop::MulOp>(t, {arg(0), constant(t, -2 * log2e)});
          Value e = op<l0uop::Exp2Op>(t, {s});
          Value d = op<l0uop::AddOp>(t, {e, constant(t, 1)});
          Value r = op<l0uop::ReciprocalOp>(t, {d});
          return op<l0uop::MulAccOp>(t, {r, constant(t, 2), constant(t, -1)});
        })
        .Case([&](l1::CosOp) {
          // cos x = sin(x + pi/2)
          Value s = op<l0uop::AddOp>(t, {arg(0), constant(t, halfPi)});
          return op<l0uop::SinOp>(t, {s});
        })
        .Case([&](l1::CmpOp c) {
          Type i1 = b.getI1Type();
          Value l = eval(c.getLhs(), operandIndex(c.getLhs(), res, idx));
          Value r = eval(c.getRhs(), operandIndex(c.getRhs(), res, idx));
          Value f = constant(i1, 0), tr = constant(i1, 1);
          switch (c.getPredicate()) {
          case l1::CmpPredicate::lt:
            return op<l0uop::CmpLtOp>(i1, {l, r});
          case l1::CmpPredicate::gt:
            return op<l0uop::CmpLtOp>(i1, {r, l});
          case l1::CmpPredicate::ne:
            return op<l0uop::CmpNeOp>(i1, {l, r});
          case l1::CmpPredicate::eq:
            return op<l0uop::WhereOp>(i1, {op<l0uop::CmpNeOp>(i1, {l, r}), f, tr});
          case l1::CmpPredicate::le:
            return op<l0uop::WhereOp>(i1, {op<l0uop::CmpLtOp>(i1, {r, l}), f, tr});
          case l1::CmpPredicate::ge:
            return op<l0uop::WhereOp>(i1, {op<l0uop::CmpLtOp>(i1, {l, r}), f, tr});
          }
          return Value();
        })
        .Case([&](l1::SelectOp) {
          return op<l0uop::WhereOp>(t, {arg(0), arg(1), arg(2)});
        })
        .Case([&](l1::CastOp c) {
          Value x = arg(0);
          Type from = x.getType();
          if (from == t)
            return x;
          if (from.isInteger(1))
            return op<l0uop::WhereOp>(t, {x, constant(t, 1), constant(t, 0)});
          if (t.isInteger(1))
            return op<l0uop::CmpNeOp>(t, {x, constant(from, 0)});
          return (Value)l0uop::CastOp::create(b, loc, t, x);
        })
        .Case([&](l1::OneHotOp oh) {
          // result[..., c] = (labels[...] == c)
          SmallVector<Value> pre(idx.begin(), idx.end() - 1);
          Value lab = eval(oh.getLabels(), pre);
          Value c = idx.back();
          Value labT = lab.getType() == t ? lab
                                          : (Value)l0uop::CastOp::create(b, loc, t, lab);
          Value cT = l0uop::CastOp::create(b, loc, t, c);
          Value ne = op<l0uop::CmpNeOp>(b.getI1Type(), {labT, cT});
          return op<l0uop::WhereOp>(t, {ne, constant(t, 0), constant(t, 1)});
        })
        .Case([&](l1::MatmulOp m) {
          // A loop over k folded by REDUCE.
          Value zero = constant(t, 0);
          int64_t k = tensorOf(m.getLhs()).getShape()[1];
          Value kv = l0uop::RangeOp::create(b, loc, b.getIndexType(), int64_t{0}, k, 1,
                                              l0uop::RangeKind::loop);
          ++loopDepth;
          Value a = eval(m.getLhs(), {idx[0], kv});
          Value w = eval(m.getRhs(), {kv, idx[1]});
          Value p = op<l0uop::MulOp>(t, {a, w});
          --loopDepth;
          l0uop::EndOp::create(b, loc, kv);
          return (Value)l0uop::ReduceOp::create(b, loc, t, l0uop::ReduceKind::add,
                                                  p, kv, zero);
        })
        .Default([&](Operation *r) -> Value {
          // reduce_sum / reduce_mean / reduce_max.
          Value in = r->getOperand(0);
          auto inShape = tensorOf(in).getShape();
          std::optional<int64_t> axis;
          if (auto a = r->getAttrOfType<IntegerAttr>("axis"))
            axis = a.getInt();
          bool isMax = isa<l1::ReduceMaxOp>(r);
          Value init = isMax ? negInf(t) : constant(t, 0);
          SmallVector<Value> ranges, sub;
          int64_t count = 1;
          if (axis) {
            sub.assign(idx.begin(), idx.end());
            Value kv = l0uop::RangeOp::create(b, loc, b.getIndexType(), int64_t{0},
                                                inShape[*axis], 1,
                                                l0uop::RangeKind::loop);
            ranges.push_back(kv);
            sub.insert(sub.begin() + *axis, kv);
            count = inShape[*axis];
          } else {
            for (int64_t d : inShape) {
              Value kv = l0uop::RangeOp::create(b, loc, b.getIndexType(), int64_t{0}, d,
                                                  1, l0uop::RangeKind::loop);
              ranges.push_back(kv);
              sub.push_back(kv);
              count *= d;
            }
          }
          loopDepth += ranges.size();
          Value acc = eval(in, sub);
          loopDepth -= ranges.size();
          for (Value kv : llvm::reverse(ranges)) {
            l0uop::EndOp::create(b, loc, kv);
            acc = l0uop::ReduceOp::create(b, 
                loc, t, isMax ? l0uop::ReduceKind::max : l0uop::ReduceKind::add,
                acc, kv, init);
          }
          if (ranges.empty())
            acc = isMax ? acc : op<l0uop::AddOp>(t, {acc, init});
          if (isa<l1::ReduceMeanOp>(r))
            acc = op<l0uop::MulOp>(t, {acc, constant(t, 1.0 / (double)count)});
          return acc;
        });
  }

  OpBuilder &b;
  Location loc;
  const llvm::DenseMap<Value, Slot *> &slotOf;
  const llvm::DenseSet<Operation *> &inlined;
  llvm::DenseMap<Slot *, Value> &args;
  unsigned group;
  const llvm::DenseMap<Operation *, unsigned> &groupOf;
  llvm::DenseMap<Value, Value> regs;
  bool broken = false;
  int loopDepth = 0;
  struct CacheKey {
    const void *value;
    std::vector<const void *> idx;
    bool flat;
    bool operator<(const CacheKey &o) const {
      return std::tie(value, idx, flat) < std::tie(o.value, o.idx, o.flat);
    }
  };
  std::map<CacheKey, Value> cache;
};
} // namespace

LogicalResult Emitter::emitKernel(OpBuilder &b, Group &g, Launch &launch) {
  // Slots it reads and writes.
  llvm::SetVector<Slot *> outs, ins;
  for (Operation *op : g.ops)
    if (materialized.contains(op->getResult(0)))
      outs.insert(slotOf.lookup(op->getResult(0)));
  for (auto &[v, dst] : g.copies)
    outs.insert(dst);
  for (auto &[v, dst] : g.copies)
    collectLeaves(v, false, [&](Value b2, bool) {
      if (Slot *s = slotOf.lookup(b2))
        if (!outs.contains(s))
          ins.insert(s);
    });
  for (Operation *op : g.ops)
    for (Value v : op->getOperands())
      collectLeaves(v, false, [&](Value b2, bool) {
        Operation *def = b2.getDefiningOp();
        if (def && groupOf.count(def) && groupOf.lookup(def) == g.id &&
            !materialized.contains(b2))
          return;
        if (Slot *s = slotOf.lookup(b2))
          if (!outs.contains(s))
            ins.insert(s);
      });
  // Launch shape: the last dimension across a block's threads, leading
  // dimensions across blocks, the rest as loops.
  auto space = g.space;
  SmallVector<l0uop::RangeKind> kinds(space.size(), l0uop::RangeKind::loop);
  int64_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  if (!space.empty()) {
    size_t last = space.size() - 1;
    if (space[last] <= kMaxBlock) {
      kinds[last] = l0uop::RangeKind::local_x;
      block[0] = space[last];
    }
    const l0uop::RangeKind groupKinds[3] = {l0uop::RangeKind::group_x,
                                            l0uop::RangeKind::group_y,
                                            l0uop::RangeKind::group_z};
    unsigned axis = 0;
    for (size_t d = 0; d < space.size() && axis < 3; ++d) {
      if (kinds[d] != l0uop::RangeKind::loop)
        continue;
      if (axis > 0 && space[d] > kMaxGridYZ)
        continue;
      kinds[d] = groupKinds[axis];
      grid[axis] = space[d];
      ++axis;
    }
  }

  if ((int64_t)(ins.size() + outs.size()) > kMaxKernelBuffers)
    return fail(g.ops.empty() ? g.region : g.ops.front(),
                "its kernel would bind " + Twine(ins.size() + outs.size()) +
                    " buffers, more than the " + Twine(kMaxKernelBuffers) +
                    " a kernel may bind");
  MLIRContext *c = ctx;
  SmallVector<Attribute> inRefs, outRefs;
  for (Slot *s : ins)
    inRefs.push_back(FlatSymbolRefAttr::get(c, s->name));
  for (Slot *s : outs)
    outRefs.push_back(FlatSymbolRefAttr::get(c, s->name));
  Location loc = g.loc ? *g.loc : g.ops.front()->getLoc();
  auto kernel = l0uop::KernelOp::create(b, 
      loc, g.name, b.getArrayAttr(inRefs), b.getArrayAttr(outRefs),
      ArrayRef<int64_t>(grid, 3), ArrayRef<int64_t>(block, 3), 0);
  Block *body = new Block();
  kernel.getBody().push_back(body);
  llvm::DenseMap<Slot *, Value> args;
  for (Slot *s : ins)
    args[s] = body->addArgument(s->bufType(c), loc);
  for (Slot *s : outs)
    args[s] = body->addArgument(s->bufType(c), loc);

  OpBuilder kb = OpBuilder::atBlockEnd(body);
  KernelBuilder k(kb, loc, slotOf, inlined, args, g.id, groupOf);
  SmallVector<Value> idx;
  for (auto [d, kind] : llvm::enumerate(kinds))
    idx.push_back(l0uop::RangeOp::create(kb, loc, kb.getIndexType(), int64_t{0}, space[d],
                                            1, kind));
  for (Operation *op : g.ops) {
    k.loc = op->getLoc();
    k.regs[op->getResult(0)] = k.elementwise(op, idx);
  }
  // Stores last, so that every load of this kernel sees the values before
  // the kernel (a state field it reads and rewrites).
  SmallVector<std::pair<Slot *, Value>> stores;
  for (Operation *op : g.ops) {
    Value r = op->getResult(0);
    if (materialized.contains(r))
      stores.push_back({slotOf.lookup(r), k.regs.lookup(r)});
  }
  for (auto &[v, dst] : g.copies)
    stores.push_back({dst, k.eval(v, idx)});
  for (auto &[s, value] : stores) {
    Value ptr = k.pointer(s, idx, false);
    l0uop::StoreOp::create(kb, loc, ValueRange{ptr, value});
  }
  for (Value r : llvm::reverse(idx))
    l0uop::EndOp::create(kb, loc, r);

  for (Slot *s : ins)
    launch.reads.push_back(s);
  for (Slot *s : outs)
    launch.writes.push_back(s);
  if (k.broken)
    return fail(g.ops.empty() ? g.region : g.ops.front(),
                "a value its kernel reads has no buffer");
  return success();
}


//===----------------------------------------------------------------------===//
// The driver
//===----------------------------------------------------------------------===//

LogicalResult Emitter::run() {
  l1::SystemOp system;
  for (auto sys : module.getOps<l1::SystemOp>())
    system = sys;
  if (!system)
    return success(); // nothing of L1 here (e.g. the pass's own output)

  // Count the ops to lower and refuse up front what has no lowering.
  SmallVector<std::pair<Operation *, std::string>> bad;
  // Buffers hold integers or floats, and every dimension is positive.
  auto badType = [](Operation *op) -> std::string {
    auto check = [](Type t) -> std::string {
      RankedTensorType tt = dyn_cast<RankedTensorType>(t);
      if (auto b = dyn_cast<l1::BufType>(t))
        tt = b.getTensor();
      if (!tt)
        return "";
      if (!tt.getElementType().isIntOrFloat())
        return "a buffer of " + std::string(llvm::isa<IndexType>(tt.getElementType())
                                                ? "index"
                                                : "non-numeric") +
               " elements has no L0 form";
      if (llvm::is_contained(tt.getShape(), 0))
        return "an empty tensor has no L0 buffer";
      return "";
    };
    for (Type t : op->getResultTypes())
      if (std::string why = check(t); !why.empty())
        return why;
    for (Type t : op->getOperandTypes())
      if (std::string why = check(t); !why.empty())
        return why;
    return "";
  };
  auto consider = [&](Operation *op) {
    ++totalOps;
    std::string why = badType(op);
    if (why.empty())
      why = unsupportedReason(op);
    if (why.empty() && isElementwise(op) && !isa<l1::OneHotOp>(op)) {
      auto rs = tensorOf(op->getResult(0)).getShape();
      for (Value o : op->getOperands()) {
        auto t = tensorOf(o);
        if (t.getShape() != rs && t.getNumElements() != 1)
          why = "an operand's shape differs from the result's (implicit "
                "broadcast has no lowering; use l1.broadcast)";
      }
    }
    if (!why.empty())
      bad.push_back({op, why});
  };
  for (auto graph : module.getOps<l1::TensorGraphOp>()) {
    for (BlockArgument arg : graph.getBody().front().getArguments())
      if (RankedTensorType t = dyn_cast<RankedTensorType>(arg.getType());
          t && (!t.getElementType().isIntOrFloat() || llvm::is_contained(t.getShape(), 0)))
        bad.push_back({graph, "an input has no L0 buffer form (non-numeric "
                              "elements or an empty dimension)"});
    for (Operation &op : graph.getBody().front())
      consider(&op);
  }
  for (auto actor : module.getOps<l1::ActorOp>())
    for (auto state : actor.getOps<l1::StateOp>()) {
      auto t = cast<RankedTensorType>(state.getType());
      if (!t.getElementType().isIntOrFloat() || llvm::is_contained(t.getShape(), 0))
        bad.push_back({state, "the state field has no L0 buffer form "
                              "(non-numeric elements or an empty dimension)"});
    }
  // A handler no stage messages never runs: nothing of it is emitted.
  l1::Dataflow flow = l1::Dataflow::build(&module.getBody()->front());
  for (auto actor : module.getOps<l1::ActorOp>())
    for (auto handler : actor.getOps<l1::HandlerOp>())
      if (!flow.getSenders(handler).empty())
        for (Operation &op : handler.getBody().front())
          consider(&op);
  for (auto stage : module.getOps<l1::StageOp>())
    stage.walk([&](Operation *op) {
      if (isa<l1::ReadBatchOp, l1::TransferOp, l1::WindowCopyOp, l1::ForwardOp,
              l1::SendOp>(op)) {
        ++totalOps;
        if (std::string why = badType(op); !why.empty())
          bad.push_back({op, why});
      }
    });
  if (!bad.empty()) {
    // Graph inputs and state fields are not ops of the count.
    int64_t badOps = llvm::count_if(bad, [](auto &b) {
      return !isa<l1::TensorGraphOp, l1::StateOp>(b.first);
    });
    auto diag = bad.front().first->emitError()
                << "lowered " << (totalOps - badOps) << " of "
                << totalOps << " ops; not lowered: "
                << bad.front().first->getName() << " at "
                << locString(bad.front().first->getLoc()) << ": "
                << bad.front().second;
    for (auto &[op, why] : llvm::drop_begin(bad))
      diag.attachNote(op->getLoc()) << "not lowered either: " << why;
    return failure();
  }

  // A reduction of a whole rank>=2 tensor to a scalar would run in one
  // thread (a REDUCE cannot fold a parallel RANGE): reduce the last axis
  // first, in parallel over the rest, until one axis is left. Exact for sum
  // and max, and for mean (equal group sizes); the program stays valid L1.
  {
    SmallVector<Operation *> full;
    module.walk([&](Operation *op) {
      if (isa<l1::ReduceSumOp, l1::ReduceMeanOp, l1::ReduceMaxOp>(op) &&
          !op->getAttr("axis") && tensorOf(op->getOperand(0)).getRank() >= 2)
        full.push_back(op);
    });
    for (Operation *op : full) {
      OpBuilder b(op);
      Value v = op->getOperand(0);
      while (tensorOf(v).getRank() >= 2) {
        RankedTensorType t = tensorOf(v);
        OperationState st(op->getLoc(), op->getName());
        st.addOperands(v);
        st.addTypes(RankedTensorType::get(t.getShape().drop_back(),
                                          t.getElementType()));
        st.addAttribute("axis", b.getI64IntegerAttr(t.getRank() - 1));
        v = b.create(st)->getResult(0);
      }
      op->setOperand(0, v);
    }
  }

  if (failed(planBuffers()))
    return failure();

  // Kernel scheduling & fusion per tensor graph and handler.
  for (StepItem &item : stepItems) {
    if (!item.region || regionKernels.count(item.region))
      continue;
    Block &body = item.region->getRegion(0).front();
    if (failed(groupRegion(item.region, body)))
      return failure();
  }
  // Handlers nobody messages, graphs nobody feeds: nothing launches them.

  // Slots of materialized values, in kernel order.
  for (StepItem &item : stepItems) {
    if (!item.region)
      continue;
    unsigned counter = 0;
    for (unsigned id : regionKernels[item.region])
      for (Operation *op : groups[id].ops) {
        Value r = op->getResult(0);
        if (!materialized.contains(r) || slotOf.count(r))
          continue;
        if (Slot *sink = sinkSlot.lookup(r)) {
          slotOf[r] = sink;
          continue;
        }
        Pool *arena = arenaOf.lookup(item.region);
        const std::string &owner = ownerOf[item.region];
        slotOf[r] = newSlot(owner + ".t" + std::to_string(counter++) + "_" +
                                op->getName().stripDialect().str(),
                            arena, tensorOf(r));
      }
  }
  for (Value v : flatValues)
    if (Slot *s = slotOf.lookup(v))
      s->flat = true;

  // Kernel order: dependencies first, then creation order.
  llvm::DenseMap<Operation *, SmallVector<unsigned>> ordered;
  for (StepItem &item : stepItems) {
    if (!item.region || ordered.count(item.region))
      continue;
    SmallVector<unsigned> &ids = regionKernels[item.region];
    SmallVector<unsigned> out;
    llvm::DenseSet<unsigned> done;
    while (out.size() < ids.size()) {
      bool progress = false;
      for (unsigned id : ids) {
        if (done.contains(id))
          continue;
        if (llvm::all_of(groups[id].deps,
                         [&](unsigned d) { return done.contains(d); })) {
          out.push_back(id);
          done.insert(id);
          progress = true;
          break;
        }
      }
      if (!progress)
        return fail(item.region, "its kernels depend on each other in a cycle");
    }
    ordered[item.region] = out;
  }

  // Launches of one step.
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  // Plan items are located at the L1 declarations they come from (the
  // system; a pool at its node), so remarks and errors on them point there.
  Location planLoc = system.getLoc();
  // The training loop's defaults (epochs, evaluate, checkpoint_every)
  // travel from the schedule to the plan header unchanged.
  l1::ScheduleOp sched;
  if (!module.getOps<l1::ScheduleOp>().empty())
    sched = *module.getOps<l1::ScheduleOp>().begin();
  auto plan = l0uop::PlanOp::create(
      b, planLoc, system.getSymName(),
      sched ? (int64_t)sched.getPipelineDepth() : int64_t{1},
      sched ? sched.getEpochsAttr() : IntegerAttr(),
      sched ? sched.getEvaluateAttr() : StringAttr(),
      sched ? sched.getCheckpointEveryAttr() : IntegerAttr());
  int64_t depth = plan.getPipelineDepth();
  plan.getBody().push_back(new Block());
  OpBuilder pb = OpBuilder::atBlockEnd(&plan.getBody().front());

  // Kernels first; the pools and slots go in front of them once their
  // lifetimes are known.
  Block *planBlock = &plan.getBody().front();
  OpBuilder kb = OpBuilder::atBlockEnd(planBlock);
  std::vector<Launch> launches;
  llvm::DenseSet<Operation *> emitted;
  for (StepItem &item : stepItems) {
    if (item.transfer >= 0) {
      TransferItem &t = transfers[item.transfer];
      Launch l;
      l.name = t.name;
      l.reads.push_back(t.src);
      l.writes.push_back(t.dst);
      launches.push_back(l);
      continue;
    }
    if (!emitted.insert(item.region).second)
      continue;
    const std::string &owner = ownerOf[item.region];
    unsigned n = 0;
    for (unsigned id : ordered[item.region]) {
      Group &g = groups[id];
      g.name = uniqueName(
          owner + ".k" + std::to_string(n++) + "_" +
          (g.ops.empty() ? std::string("copy")
                         : g.ops.front()->getName().stripDialect().str()));
      Launch l;
      l.name = g.name;
      if (failed(emitKernel(kb, g, l))) {
        plan.erase();
        return failure();
      }
      launches.push_back(l);
    }
  }

  // Ticks and lifetimes.
  int64_t lastTick = std::max<int64_t>(0, (int64_t)launches.size() - 1);
  for (auto [t, l] : llvm::enumerate(launches)) {
    for (Slot *s : l.reads)
      s->touch(t);
    for (Slot *s : l.writes)
      s->touch(t);
  }
  for (auto &s : slots) {
    if (s->persistent) {
      s->firstUse = 0;
      s->lastUse = lastTick;
    } else if (s->firstUse < 0) {
      s->firstUse = s->lastUse = 0;
    }
  }
  // A buffer a stage reports is read on the host when the step's launches
  // are done, not by a launch: it lives to the end of the step. (A graph
  // output on a CPU's memory is reported where the graph wrote it; without
  // this, packing reused its bytes for a later output.)
  module.walk([&](l1::ReportOp report) {
    if (Slot *s = slotOf.lookup(report.getValue()); s && !s->persistent)
      s->lastUse = lastTick;
  });

  // Bump offsets and capacities.
  for (auto &s : slots) {
    Pool *p = s->pool;
    if (p->kind == l0uop::PoolKind::freelist) {
      p->used += llvm::alignTo(s->bytes(), kAlign);
      continue;
    }
    s->offset = llvm::alignTo(p->used, kAlign);
    p->used = s->offset + s->bytes();
  }
  // A compute node without memory of its own (no vram) keeps its pools in
  // the memory node it has an edge to (as L1.6 and L1.9 hold): that node's
  // capacity is what they must fit in.
  auto memoryOf = [](l1::NodeOp node) -> Operation * {
    if (node.getMemoryBytes())
      return node;
    auto system = node->getParentOfType<l1::SystemOp>();
    if (!system)
      return node;
    for (auto edge : system.getBody().front().getOps<l1::EdgeOp>()) {
      StringRef other;
      if (edge.getFrom() == node.getSymName())
        other = edge.getTo();
      else if (edge.getTo() == node.getSymName())
        other = edge.getFrom();
      else
        continue;
      l1::NodeOp mem = system.lookupNode(other);
      if (mem && mem.getKind() == l1::NodeKind::memory && mem.getMemoryBytes())
        return mem;
    }
    return node;
  };
  llvm::MapVector<Operation *, int64_t> perNode;
  for (auto &p : pools) {
    int64_t need = std::max<int64_t>(llvm::alignTo(p->used, kAlign), kAlign);
    p->capacity = p->kind == l0uop::PoolKind::freelist ? depth * need : need;
    if (p->node)
      perNode[memoryOf(p->node)] += p->capacity;
  }
  for (auto &[nodeOp, bytes] : perNode) {
    auto node = cast<l1::NodeOp>(nodeOp);
    std::optional<StringRef> cap = node.getCapacity() ? node.getCapacity()
                                                      : node.getVram();
    if (!cap)
      continue;
    std::optional<uint64_t> have = parseByteSize(*cap);
    if (have && (uint64_t)bytes > *have) {
      plan.erase();
      // A resource error of the plan (the L0.5 sweep's bound, known here
      // before any slot is placed), at the node whose memory is short.
      hasFailed = true;
      InFlightDiagnostic d =
          emitCheckError(node, Property::Resource, "L0.5")
          << "the plan needs " << formatBytes(bytes) << " of @"
          << node.getSymName() << " but it has "
          << (node.getCapacity() ? "capacity " : "vram ") << *cap;
      for (auto &p : pools)
        if (p->node && memoryOf(p->node) == nodeOp)
          d.attachNote(p->node.getLoc())
              << "pool " << p->name << " (" << l0uop::stringifyPoolKind(p->kind)
              << "): " << formatBytes(p->capacity);
      return failure();
    }
  }

  // The plan: memory, kernels, transfers, streams and syncs, inits.
  if (!planBlock->empty())
    pb.setInsertionPoint(&planBlock->front());
  for (auto &p : pools)
    l0uop::PoolOp::create(pb, p->node ? p->node.getLoc() : planLoc, p->name,
                          p->kind, p->space,
                             p->capacity, kAlign);
  for (auto &s : slots)
    l0uop::SlotOp::create(pb, 
        s->pool->node ? s->pool->node.getLoc() : planLoc, s->name, s->pool->name,
        s->offset >= 0 ? pb.getI64IntegerAttr(s->offset) : IntegerAttr(),
        s->bytes(), s->firstUse, s->lastUse, s->bufType(ctx));
  pb.setInsertionPointToEnd(planBlock);
  for (IngestItem &in : ingests) {
    SmallVector<Attribute> slotRefs;
    for (Slot *s : in.slots)
      slotRefs.push_back(FlatSymbolRefAttr::get(ctx, s->name));
    SmallVector<StringRef> paths(in.paths.begin(), in.paths.end());
    l1::ReadBatchOp rb = in.op;
    SmallVector<int64_t> classes;
    bool anyClasses = false;
    for (Value res : rb.getResults()) {
      llvm::DenseSet<Value> seen;
      classes.push_back(labelClasses(res, seen));
      anyClasses |= classes.back() > 0;
    }
    // A flat slot (read through a reshape) no longer shows its file's rank.
    SmallVector<int64_t> ranks;
    bool anyFlat = false;
    for (Slot *s : in.slots) {
      ranks.push_back(
          l0uop::IngestOp::fileRank(ArrayRef<int64_t>(s->shape).drop_front()));
      anyFlat |= s->flat;
    }
    l0uop::IngestOp::create(
        pb, rb.getLoc(), in.name, pb.getArrayAttr(slotRefs),
        pb.getStrArrayAttr(paths), "idx", rb.getBatch(),
        rb.getOrder() == l1::BatchOrder::shuffle, rb.getDropLast(),
        (int64_t)rb.getSeed().value_or(0),
        anyClasses ? pb.getDenseI64ArrayAttr(classes) : DenseI64ArrayAttr(),
        anyFlat ? pb.getDenseI64ArrayAttr(ranks) : DenseI64ArrayAttr());
  }
  for (TransferItem &t : transfers)
    l0uop::TransferOp::create(pb, planLoc, t.name, t.src->name,
                                 t.dst->name, t.dir, t.src->bytes());
  for (ReportItem &r : reports)
    l0uop::ReportOp::create(pb, r.loc, r.metric, r.slot->name);
  if (!launches.empty()) {
    SmallVector<Attribute> entries;
    for (Launch &l : launches)
      entries.push_back(FlatSymbolRefAttr::get(ctx, l.name));
    SmallVector<std::string> streams;
    for (int64_t i = 0; i < depth; ++i) {
      streams.push_back(uniqueName("stream_" + std::to_string(i)));
      l0uop::StreamOp::create(pb, planLoc, pb.getStringAttr(streams.back()),
                                 pb.getArrayAttr(entries));
    }
    // Step k's stream finishes (its handler rewrote the actor state) before
    // step k+1's stream starts: the actor is the fence between steps.
    for (int64_t i = 0; i + 1 < depth; ++i) {
      std::string ev = uniqueName("step_" + std::to_string(i) + "_done");
      l0uop::EventOp::create(pb, planLoc, pb.getStringAttr(ev));
      l0uop::RecordOp::create(pb, 
          planLoc, FlatSymbolRefAttr::get(ctx, ev),
          FlatSymbolRefAttr::get(ctx, launches.back().name),
          FlatSymbolRefAttr::get(ctx, streams[i]));
      l0uop::WaitOp::create(pb, 
          planLoc, FlatSymbolRefAttr::get(ctx, ev),
          FlatSymbolRefAttr::get(ctx, launches.front().name),
          FlatSymbolRefAttr::get(ctx, streams[i + 1]));
    }
  }
  // Inits of the actor state.
  int64_t seed = 0;
  for (auto actor : module.getOps<l1::ActorOp>())
    for (auto state : actor.getOps<l1::StateOp>()) {
      Slot *s = stateSlot.lookup(state);
      l0uop::InitKind kind;
      IntegerAttr fanIn, seedAttr;
      switch (state.getInit()) {
      case l1::InitKind::zeros:
        kind = l0uop::InitKind::zeros;
        break;
      case l1::InitKind::ones:
        kind = l0uop::InitKind::ones;
        break;
      case l1::InitKind::kaiming:
      case l1::InitKind::xavier:
        kind = state.getInit() == l1::InitKind::kaiming
                   ? l0uop::InitKind::kaiming
                   : l0uop::InitKind::xavier;
        fanIn = pb.getI64IntegerAttr(s->shape.empty() ? 1 : s->shape.front());
        seedAttr = pb.getI64IntegerAttr(++seed);
        break;
      case l1::InitKind::planned_steps:
        kind = l0uop::InitKind::planned_steps;
        break;
      }
      l0uop::InitOp::create(pb, state.getLoc(), kind, s->name, StringAttr(),
                               FloatAttr(), fanIn, seedAttr);
    }

  // Control (path A): the step dispatcher. Each step pops its batch
  // descriptor (when a stage reads batches), counts the step, and pushes a
  // launch descriptor for the runtime: bits 32 and up pick the step's
  // stream (steps rotate over the pipeline_depth streams), the low bits
  // carry the batch. The conventions are those of examples/mnist/mnist.l0.mlir.
  {
    bool readsBatches = false;
    module.walk([&](l1::ReadBatchOp) { readsBatches = true; });
    std::string batchQ = uniqueName("batch_queue");
    std::string launchQ = uniqueName("launch_queue");
    std::string stepState = uniqueName("step_state");
    std::string program = uniqueName("step_dispatch");
    std::string text;
    llvm::raw_string_ostream os(text);
    if (readsBatches)
      os << "l0ctl.region @" << batchQ << " size 64 access ro queue 8\n";
    os << "l0ctl.region @" << launchQ << " size 64 access wo queue 8\n"
       << "l0ctl.region @" << stepState << " size 16 access rw\n"
       << "l0ctl.program @" << program << " {\n";
    if (readsBatches)
      os << "  %batch = l0ctl.queue_pop @" << batchQ << " : i64\n";
    else
      os << "  %batch = l0ctl.const 0 : i64\n";
    os << "  %step = l0ctl.load @" << stepState << "[0] : i64\n"
       << "  %one = l0ctl.const 1 : i64\n"
       << "  %next = l0ctl.arith add %step, %one : i64\n"
       << "  l0ctl.store @" << stepState << "[0], %next : i64\n"
       << "  %stream = l0ctl.load @" << stepState << "[8] : i64\n"
       << "  %c32 = l0ctl.const 32 : i64\n"
       << "  %tag = l0ctl.arith shl %stream, %c32 : i64\n"
       << "  %launch = l0ctl.arith or %tag, %batch : i64\n"
       << "  l0ctl.queue_push @" << launchQ << ", %launch : i64\n"
       << "  %following = l0ctl.arith add %stream, %one : i64\n"
       << "  %depth = l0ctl.const " << depth << " : i64\n"
       << "  %wrap = l0ctl.cmp eq %following, %depth : i64\n"
       << "  l0ctl.branch %wrap, ^wrap, ^keep\n"
       << "^wrap:\n"
       << "  %zero = l0ctl.const 0 : i64\n"
       << "  l0ctl.store @" << stepState << "[8], %zero : i64\n"
       << "  l0ctl.terminate\n"
       << "^keep:\n"
       << "  l0ctl.store @" << stepState << "[8], %following : i64\n"
       << "  l0ctl.terminate\n"
       << "}\n";
    Block parsed;
    ParserConfig config(ctx, /*verifyAfterParse=*/false);
    if (failed(parseSourceString(os.str(), &parsed, config))) {
      plan.erase();
      return fail(system, "internal error: the step dispatcher does not parse");
    }
    while (!parsed.empty())
      parsed.front().moveBefore(planBlock, planBlock->end());
  }

  // The L1 program is now the plan.
  SmallVector<Operation *> dead;
  for (Operation &op : module.getBody()->getOperations())
    if (isa<l1::L1Dialect>(op.getDialect()))
      dead.push_back(&op);
  for (Operation *op : llvm::reverse(dead)) {
    op->dropAllUses();
    op->dropAllReferences();
  }
  for (Operation *op : llvm::reverse(dead))
    op->erase();
  return success();
}

struct L1ToL0Pass : public synpl::impl::L1ToL0Base<L1ToL0Pass> {
  using L1ToL0Base::L1ToL0Base;

  void runOnOperation() override {
    Emitter emitter(getOperation());
    if (failed(emitter.run()))
      return signalPassFailure();
    if (!summary)
      return;
    for (auto plan : getOperation().getOps<l0uop::PlanOp>()) {
      int64_t kernels = 0, slots = 0;
      std::string pools;
      for (Operation &op : plan.getBody().front()) {
        if (isa<l0uop::KernelOp>(op))
          ++kernels;
        else if (isa<l0uop::SlotOp>(op))
          ++slots;
        else if (auto pool = dyn_cast<l0uop::PoolOp>(op))
          pools += (", @" + pool.getSymName() + " " +
                    l0uop::stringifyPoolKind(pool.getKind()) + " " +
                    std::to_string(pool.getCapacity()) + " bytes")
                       .str();
      }
      plan.emitRemark() << "plan @" << plan.getSymName() << ": " << kernels
                        << " kernels (" << emitter.numLowered()
                        << " tensor ops), " << slots << " slots" << pools;
    }
  }
};

// The pinned pipeline of the L1 -> L0 boundary (DESIGN.md §5.2): one list,
// verified after every pass.
static PassPipelineRegistration<> l1ToL0Pipeline(
    "synpl-l1-to-l0-pipeline",
    "Lower a verified L1 program to one verified l0uop.plan",
    [](OpPassManager &pm) { pm.addPass(createL1ToL0()); });

} // namespace
