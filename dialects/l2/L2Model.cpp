//===- L2Model.cpp - Analyses of an L2 method ----------------------------===//
#include "synpl/Dialect/L2/L2Model.h"
#include "synpl/Dialect/L2/L2Ops.h"
#include "synpl/Support/Property.h"
#include "synpl/Support/Units.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <initializer_list>
#include <limits>

using namespace mlir;
using namespace synpl;
using namespace synpl::l2;

static constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();

//===----------------------------------------------------------------------===//
// Cost constants: the whole L2 cost model's per-element and per-parameter
// FLOP counts, in one place. Multiply-add = 2 FLOPs. Rough by design (the
// spec: "rough FLOPs, memory — feeds L1 search cost model").
//===----------------------------------------------------------------------===//
namespace cost {
// Forward, per output element.
constexpr uint64_t kLayerNorm = 8;  // mean, variance, normalize, scale, shift
constexpr uint64_t kRmsNorm = 6;    // square-mean, rsqrt, normalize, scale
constexpr uint64_t kRelu = 1;
constexpr uint64_t kGelu = 8;       // tanh approximation
constexpr uint64_t kSilu = 5;       // x * sigmoid(x)
constexpr uint64_t kSoftmax = 5;    // max, subtract, exp, sum, divide
constexpr uint64_t kDropout = 2;    // draw, select
constexpr uint64_t kQuantize = 4;   // scale, round, clamp, unscale
constexpr uint64_t kAdd = 1;
constexpr uint64_t kNoise = 3;      // diffusion: sample, scale, add
// Update chain, per parameter element and step.
constexpr uint64_t kSgd = 2;
constexpr uint64_t kAdam = 12;
constexpr uint64_t kLion = 8;
constexpr uint64_t kMuonMomentum = 4; // plus the Newton–Schulz matmuls
constexpr uint64_t kClip = 3;         // norm contribution, scale
constexpr uint64_t kEma = 3;
// Memory traffic, per byte of a value an elementwise layer computes, in
// one reverse-mode step: written and read forward, then its saved copy and
// its gradient read and its input's gradient written backward.
constexpr uint64_t kStreamPasses = 6;
// The update's traffic per parameter byte: the parameter and its gradient
// read, the parameter written, and each state copy read and written.
constexpr uint64_t kUpdatePasses = 3;
constexpr uint64_t kUpdatePassesPerState = 2;
// Backward, as multiples of one forward pass.
constexpr uint64_t kReverseModeFactor = 3; // forward + backward (~2x forward)
constexpr uint64_t kForwardModeFactor = 3; // forward gradient: one JVP
constexpr uint64_t kDfaFactor = 2;         // forward + local gradients
} // namespace cost

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Saturating products and sums: an estimate past 2^64 stays there and is
/// reported (row L2.7) instead of wrapping.
static uint64_t mul(std::initializer_list<uint64_t> factors) {
  uint64_t r = 1;
  for (uint64_t f : factors)
    r = saturatingMul(r, f);
  return r;
}
static uint64_t add(std::initializer_list<uint64_t> terms) {
  uint64_t r = 0;
  for (uint64_t t : terms)
    r = saturatingAdd(r, t);
  return r;
}

static uint64_t numElements(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 0;
  uint64_t n = 1;
  for (int64_t d : tensor.getShape())
    n = saturatingMul(n, static_cast<uint64_t>(d));
  return n;
}

static unsigned elementBytes(Type type) {
  Type elt = type;
  if (auto shaped = dyn_cast<ShapedType>(type))
    elt = shaped.getElementType();
  if (elt.isIntOrFloat())
    return std::max(1u, (elt.getIntOrFloatBitWidth() + 7) / 8);
  return 4;
}

static uint64_t valueBytes(Value v) {
  return saturatingMul(numElements(v.getType()), elementBytes(v.getType()));
}

static uint64_t product(ArrayRef<int64_t> shape) {
  uint64_t n = 1;
  for (int64_t d : shape)
    n = saturatingMul(n, static_cast<uint64_t>(d));
  return n;
}

uint64_t ParamInfo::count() const { return product(shape); }

static bool isRegionOp(Operation *op) {
  return isa<RecurrentOp, MixtureOp, GraphOp, DiffusionChainOp>(op);
}

static bool isLayerOp(Operation *op) {
  return isa<LinearOp, ConvOp, AttnOp, NormOp, ActOp, EmbedOp, PoolOp, DropoutOp,
             SoftmaxOp, FlattenOp, ReshapeOp, AddOp, QuantizeOp>(op);
}

//===----------------------------------------------------------------------===//
// Parameters and names
//===----------------------------------------------------------------------===//

SmallVector<ParamSlot> synpl::l2::layerParamSlots(Operation *op) {
  SmallVector<ParamSlot> slots;
  auto add = [&](StringRef slot, ArrayRef<int64_t> shape) {
    slots.push_back({slot, SmallVector<int64_t, 4>(shape)});
  };
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](LinearOp l) {
        int64_t in = l.getIn(), out = l.getOut();
        add("weight", {in, out});
        add("bias", {out});
      })
      .Case([&](ConvOp c) {
        int64_t in = c.getInCh(), out = c.getOutCh(), k = c.getKernel();
        SmallVector<int64_t, 4> shape{out, in, k};
        if (c.getInput().getType().getRank() == 4)
          shape.push_back(k);
        add("weight", shape);
        add("bias", {out});
      })
      .Case([&](AttnOp a) {
        int64_t d = a.getDim();
        for (StringRef w : {"wq", "wk", "wv", "wo"})
          add(w, {d, d});
        for (StringRef b : {"bq", "bk", "bv", "bo"})
          add(b, {d});
      })
      .Case([&](NormOp n) {
        auto type = n.getInput().getType();
        if (type.getRank() == 0)
          return;
        int64_t c = n.getKind() == NormKind::group && type.getRank() >= 2
                        ? type.getDimSize(1)
                        : type.getShape().back();
        add("gain", {c});
        if (n.getKind() != NormKind::rms)
          add("bias", {c});
      })
      .Case([&](EmbedOp e) {
        add("table", {static_cast<int64_t>(e.getVocab()),
                      static_cast<int64_t>(e.getDim())});
        if (std::optional<uint64_t> n = e.getPositions())
          add("positions", {static_cast<int64_t>(*n), static_cast<int64_t>(e.getDim())});
      })
      .Default([](Operation *) {});
  return slots;
}

static std::optional<StringRef> labelOf(Operation *op) {
  if (auto label = op->getAttrOfType<StringAttr>("label"))
    return label.getValue();
  return std::nullopt;
}

llvm::MapVector<Operation *, std::string> synpl::l2::layerNames(MethodsOp methods) {
  llvm::MapVector<Operation *, std::string> names;
  llvm::StringMap<unsigned> counters;
  if (methods.getInfer().empty())
    return names;
  methods.getInfer().walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (!isLayerOp(op) && !isRegionOp(op))
      return;
    StringRef mnemonic = op->getName().stripDialect();
    unsigned k = counters[mnemonic]++;
    if (std::optional<StringRef> label = labelOf(op))
      names[op] = label->str();
    else
      names[op] = (mnemonic + "_" + Twine(k)).str();
  });
  return names;
}

std::string synpl::l2::describeLayer(Operation *op) {
  if (auto methods = dyn_cast<MethodsOp>(op))
    return ("@" + methods.getSymName()).str();
  std::string s = ("'" + op->getName().getStringRef() + "'").str();
  if (std::optional<StringRef> label = labelOf(op))
    s += (" \"" + *label + "\"").str();
  return s;
}

SmallVector<ParamInfo> synpl::l2::collectParams(MethodsOp methods) {
  SmallVector<ParamInfo> params;
  for (auto &[op, name] : layerNames(methods)) {
    unsigned bytes = op->getNumResults() ? elementBytes(op->getResult(0).getType()) : 4;
    for (ParamSlot &slot : layerParamSlots(op))
      params.push_back({name + "." + slot.slot.str(), slot.shape, op, bytes});
  }
  return params;
}

//===----------------------------------------------------------------------===//
// Cycles (row L2.6)
//===----------------------------------------------------------------------===//

/// The ops of `block` whose results `op` (or an op nested in it) reads.
static SmallVector<Operation *> producersIn(Block &block, Operation *op) {
  SmallVector<Operation *> producers;
  llvm::SmallPtrSet<Operation *, 8> seen;
  op->walk([&](Operation *user) {
    for (Value operand : user->getOperands()) {
      Operation *def = operand.getDefiningOp();
      // Values defined inside `op` are internal edges of its own sub-DAG.
      if (def && def != op && op->isProperAncestor(def))
        continue;
      // Climb to the ancestor of the definition that lives in `block`.
      while (def && def->getBlock() != &block)
        def = def->getParentOp();
      if (def && seen.insert(def).second)
        producers.push_back(def);
    }
  });
  return producers;
}

SmallVector<Operation *> synpl::l2::findCycle(Block &block) {
  enum Color : uint8_t { White, Grey, Black };
  llvm::DenseMap<Operation *, Color> color;
  // Iterative DFS over producer edges (consumer -> producer), so that a deep
  // DAG cannot exhaust the native stack.
  struct Frame {
    Operation *op;
    SmallVector<Operation *> producers;
    size_t next = 0;
  };
  SmallVector<Frame> stack;
  for (Operation &root : block) {
    if (color.lookup(&root) != White)
      continue;
    color[&root] = Grey;
    stack.push_back({&root, producersIn(block, &root)});
    while (!stack.empty()) {
      Frame &top = stack.back();
      if (top.next == top.producers.size()) {
        color[top.op] = Black;
        stack.pop_back();
        continue;
      }
      Operation *producer = top.producers[top.next++];
      Color c = color.lookup(producer);
      if (c == White) {
        color[producer] = Grey;
        stack.push_back({producer, producersIn(block, producer)});
        continue;
      }
      if (c == Black)
        continue;
      // A grey producer closes a cycle: the frames from it to the top, whose
      // edges run producer -> consumer, i.e. against the stack order.
      SmallVector<Operation *> cycle;
      for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
        cycle.push_back(it->op);
        if (it->op == producer)
          break;
      }
      // Start the cycle at the op written first, so the report is stable.
      auto first = llvm::min_element(
          cycle, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
      std::rotate(cycle.begin(), first, cycle.end());
      return cycle;
    }
  }
  return {};
}

/// The ops of an acyclic graph-region block, producers before consumers.
static SmallVector<Operation *> topologicalOrder(Block &block) {
  llvm::DenseMap<Operation *, unsigned> pending;
  llvm::DenseMap<Operation *, SmallVector<Operation *>> consumers;
  SmallVector<Operation *> ready, order;
  for (Operation &op : block) {
    SmallVector<Operation *> producers = producersIn(block, &op);
    pending[&op] = producers.size();
    for (Operation *producer : producers)
      consumers[producer].push_back(&op);
    if (producers.empty())
      ready.push_back(&op);
  }
  while (!ready.empty()) {
    Operation *op = ready.pop_back_val();
    order.push_back(op);
    for (Operation *consumer : consumers.lookup(op))
      if (--pending[consumer] == 0)
        ready.push_back(consumer);
  }
  return order; // shorter than the block when it has a cycle
}

LogicalResult synpl::l2::verifyAcyclic(Block &block, Operation *owner) {
  SmallVector<Operation *> cycle = findCycle(block);
  if (cycle.empty())
    return success();
  InFlightDiagnostic diag = emitCheckError(cycle.front(), Property::Resource, "L2.6");
  diag << "the infer graph of " << describeLayer(owner) << " has a cycle: ";
  for (Operation *op : cycle)
    diag << describeLayer(op) << " -> ";
  diag << describeLayer(cycle.front())
       << " (unroll the loop as l2.recurrent with a bounded trip count)";
  for (Operation *op : llvm::drop_begin(cycle))
    diag.attachNote(op->getLoc()) << "on the cycle: " << describeLayer(op);
  return diag;
}

//===----------------------------------------------------------------------===//
// Depth and width
//===----------------------------------------------------------------------===//

bool synpl::l2::isStageLayer(Operation *op) {
  return isa<LinearOp, ConvOp, AttnOp, EmbedOp>(op);
}

std::optional<int64_t> synpl::l2::layerWidth(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<int64_t>>(op)
      .Case([](LinearOp l) { return static_cast<int64_t>(l.getOut()); })
      .Case([](ConvOp c) { return static_cast<int64_t>(c.getOutCh()); })
      .Case([](AttnOp a) { return static_cast<int64_t>(a.getDim()); })
      .Case([](EmbedOp e) { return static_cast<int64_t>(e.getDim()); })
      .Default([](Operation *) { return std::nullopt; });
}

namespace {
/// Longest stage chain ending at each value, computed block by block in
/// topological order (nested regions in place). Acyclic DAGs only.
struct DepthAnalysis {
  llvm::DenseMap<Value, int64_t> depth;

  int64_t of(Value v) const { return depth.lookup(v); }

  /// Runs `region` with its block arguments at the depths of `args`; returns
  /// the depth of its `index`-th yielded value.
  int64_t runRegion(Region &region, ValueRange args, unsigned index) {
    Block &block = region.front();
    for (auto [arg, from] : llvm::zip(block.getArguments(), args))
      depth[arg] = of(from);
    runBlock(block);
    auto yield = block.empty() ? YieldOp() : dyn_cast<YieldOp>(block.back());
    if (!yield || index >= yield.getValues().size())
      return 0;
    return of(yield.getValues()[index]);
  }

  void runBlock(Block &block) {
    for (Operation *op : topologicalOrder(block)) {
      if (auto rec = dyn_cast<RecurrentOp>(op)) {
        depth[rec.getResult()] = runRegion(rec.getCell(), rec.getInit(), 0);
      } else if (auto mix = dyn_cast<MixtureOp>(op)) {
        int64_t d = runRegion(mix.getGate(), mix.getInput(), 0);
        for (Region &expert : mix.getExperts())
          d = std::max(d, runRegion(expert, mix.getInput(), 0));
        depth[mix.getResult()] = d;
      } else if (auto graph = dyn_cast<GraphOp>(op)) {
        for (unsigned i = 0; i < graph.getNumResults(); ++i)
          depth[graph.getResult(i)] = runRegion(graph.getBody(), graph.getInputs(), i);
      } else if (auto diff = dyn_cast<DiffusionChainOp>(op)) {
        depth[diff.getResult()] = runRegion(diff.getDenoiser(), diff.getInput(), 0);
      } else {
        int64_t d = 0;
        for (Value operand : op->getOperands())
          d = std::max(d, of(operand));
        if (isStageLayer(op))
          ++d;
        for (Value result : op->getResults())
          depth[result] = d;
      }
    }
  }
};
} // namespace

int64_t synpl::l2::composedDepth(MethodsOp methods) {
  YieldOp yield = methods.getInferYield();
  if (!yield)
    return 0;
  DepthAnalysis analysis;
  analysis.runBlock(methods.getInferBlock());
  int64_t depth = 0;
  for (Value v : yield.getValues())
    depth = std::max(depth, analysis.of(v));
  return depth;
}

//===----------------------------------------------------------------------===//
// Sample batch
//===----------------------------------------------------------------------===//

int64_t synpl::l2::sampleBatch(Attribute sample) {
  return llvm::TypeSwitch<Attribute, int64_t>(sample)
      .Case([](EpochShuffleAttr a) { return a.getBatch(); })
      .Case([](StreamWindowAttr a) { return a.getBatch() ? a.getBatch() : a.getWindow(); })
      .Case([](CurriculumAttr a) { return a.getBatch(); })
      .Case([](ReplayAttr a) { return a.getBatch(); })
      .Case([](DistributedShardAttr a) { return sampleBatch(a.getMethod()); })
      .Default([](Attribute) { return 0; });
}

//===----------------------------------------------------------------------===//
// FLOPs and the resource estimate (row L2.7)
//===----------------------------------------------------------------------===//

/// Layers whose work is a contraction (a matmul at heart).
static bool isContraction(Operation *op) { return isa<LinearOp, ConvOp, AttnOp>(op); }

/// The multiply-adds of a contraction's forward pass, without its bias or
/// softmax (those stream like elementwise layers).
static uint64_t contractionFlops(Operation *op) {
  auto elems = [](Value v) { return numElements(v.getType()); };
  return llvm::TypeSwitch<Operation *, uint64_t>(op)
      .Case([&](LinearOp l) {
        return mul({elems(l.getResult()) / l.getOut(), 2, l.getIn(), l.getOut()});
      })
      .Case([&](ConvOp c) {
        uint64_t window = c.getKernel();
        if (c.getInput().getType().getRank() == 4)
          window = mul({window, c.getKernel()});
        return mul({elems(c.getResult()), 2, c.getInCh(), window});
      })
      .Case([&](AttnOp a) {
        auto type = a.getInput().getType();
        if (type.getRank() != 3)
          return uint64_t(0);
        uint64_t n = type.getDimSize(0), t = type.getDimSize(1), d = a.getDim();
        return add({mul({n, t, 4, 2, d, d}), mul({n, t, t, 4, d})});
      })
      .Default([](Operation *) { return uint64_t(0); });
}

Value synpl::l2::throughViews(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<FlattenOp, ReshapeOp>(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

uint64_t synpl::l2::layerForwardFlops(Operation *op) {
  auto elems = [](Value v) { return numElements(v.getType()); };
  auto perElement = [&](uint64_t c) { return saturatingMul(c, elems(op->getResult(0))); };
  return llvm::TypeSwitch<Operation *, uint64_t>(op)
      // A linear's bias, a conv's: one add per output element.
      .Case<LinearOp, ConvOp>(
          [&](Operation *c) { return saturatingAdd(contractionFlops(c), perElement(1)); })
      .Case([&](AttnOp a) {
        auto type = a.getInput().getType();
        if (type.getRank() != 3)
          return uint64_t(0);
        // The four projections' biases, and the softmax of every head's
        // scores.
        uint64_t n = type.getDimSize(0), t = type.getDimSize(1), d = a.getDim();
        uint64_t biases = mul({n, t, 4, d});
        uint64_t soft = mul({n, t, t, a.getHeads(), cost::kSoftmax});
        return add({contractionFlops(a), biases, soft});
      })
      .Case([&](NormOp n) {
        return perElement(n.getKind() == NormKind::rms ? cost::kRmsNorm
                                                       : cost::kLayerNorm);
      })
      .Case([&](ActOp a) {
        switch (a.getFn()) {
        case ActFn::relu:
          return perElement(cost::kRelu);
        case ActFn::gelu:
          return perElement(cost::kGelu);
        case ActFn::silu:
        case ActFn::swish:
          return perElement(cost::kSilu);
        }
        return uint64_t(0);
      })
      .Case([&](PoolOp p) { return elems(p.getInput()); })
      .Case([&](DropoutOp) { return perElement(cost::kDropout); })
      .Case([&](SoftmaxOp) { return perElement(cost::kSoftmax); })
      .Case([&](AddOp) { return perElement(cost::kAdd); })
      .Case([&](QuantizeOp) { return perElement(cost::kQuantize); })
      .Default([](Operation *) { return uint64_t(0); }); // embed, flatten, reshape: no math
}

/// The forward multiply-adds of the contractions of `block` that read the
/// model's input (through views alone): reverse mode computes no gradient
/// for their input.
static uint64_t inputContractionFlops(Block &block) {
  uint64_t flops = 0;
  for (Operation &op : block) {
    if (isa<LinearOp, ConvOp>(op) && isa<BlockArgument>(throughViews(op.getOperand(0))))
      flops = saturatingAdd(flops, contractionFlops(&op));
  }
  return flops;
}

namespace {
/// Forward FLOPs, activation bytes and the largest single activation of a
/// block, scaled by how many times it runs per step.
struct BlockCost {
  uint64_t flops = 0;
  /// The part of `flops` in contractions (linear, conv, attention's
  /// projections and products): compute-bound.
  uint64_t contractionFlops = 0;
  /// Bytes the other (elementwise, memory-bound) layers compute.
  uint64_t elementwiseBytes = 0;
  uint64_t activationBytes = 0;
  uint64_t largestValueBytes = 0;
  /// The largest value an op computes (not a view: flatten, reshape).
  uint64_t largestComputedBytes = 0;
  /// The layer ops a pass runs (views aside): each is a kernel at least.
  uint64_t layerOps = 0;
  bool ok = true;

  void addValue(Value v, uint64_t times) {
    uint64_t bytes = valueBytes(v);
    activationBytes = saturatingAdd(activationBytes, saturatingMul(bytes, times));
    largestValueBytes = std::max(largestValueBytes, bytes);
    Operation *def = v.getDefiningOp();
    if (def && !isa<FlattenOp, ReshapeOp>(def))
      largestComputedBytes = std::max(largestComputedBytes, bytes);
  }
  void add(const BlockCost &other, uint64_t times) {
    flops = saturatingAdd(flops, saturatingMul(other.flops, times));
    contractionFlops =
        saturatingAdd(contractionFlops, saturatingMul(other.contractionFlops, times));
    elementwiseBytes =
        saturatingAdd(elementwiseBytes, saturatingMul(other.elementwiseBytes, times));
    activationBytes =
        saturatingAdd(activationBytes, saturatingMul(other.activationBytes, times));
    largestValueBytes = std::max(largestValueBytes, other.largestValueBytes);
    largestComputedBytes = std::max(largestComputedBytes, other.largestComputedBytes);
    layerOps = saturatingAdd(layerOps, saturatingMul(other.layerOps, times));
    ok &= other.ok;
  }
};
} // namespace

static BlockCost costOf(Block &block) {
  BlockCost cost;
  if (!findCycle(block).empty()) {
    cost.ok = false;
    return cost;
  }
  for (Operation &op : block) {
    if (auto rec = dyn_cast<RecurrentOp>(op)) {
      std::optional<int64_t> trips = rec.getTripCount();
      if (!trips) {
        cost.ok = false;
        continue;
      }
      // Backpropagation through time keeps every step's activations.
      cost.add(costOf(rec.getCell().front()), *trips);
    } else if (auto mix = dyn_cast<MixtureOp>(op)) {
      cost.add(costOf(mix.getGate().front()), 1);
      SmallVector<BlockCost> experts;
      for (Region &expert : mix.getExperts())
        experts.push_back(costOf(expert.front()));
      if (std::optional<uint64_t> k = mix.getTopK()) {
        // Each example runs k experts: bound by the k most expensive.
        llvm::sort(experts, [](const BlockCost &a, const BlockCost &b) {
          return a.flops > b.flops;
        });
        experts.resize(std::min<size_t>(*k, experts.size()));
      }
      for (BlockCost &expert : experts)
        cost.add(expert, 1);
    } else if (auto graph = dyn_cast<GraphOp>(op)) {
      cost.add(costOf(graph.getBody().front()), 1);
    } else if (auto diff = dyn_cast<DiffusionChainOp>(op)) {
      // One training step denoises at one random noise level.
      cost.add(costOf(diff.getDenoiser().front()), 1);
      cost.flops = saturatingAdd(
          cost.flops, saturatingMul(cost::kNoise, numElements(diff.getType())));
    } else if (!isa<YieldOp>(op)) {
      uint64_t flops = layerForwardFlops(&op);
      cost.flops = saturatingAdd(cost.flops, flops);
      if (!isa<FlattenOp, ReshapeOp>(op))
        ++cost.layerOps;
      if (isContraction(&op)) {
        cost.contractionFlops = saturatingAdd(cost.contractionFlops, contractionFlops(&op));
      } else if (!isa<FlattenOp, ReshapeOp>(op)) {
        for (Value result : op.getResults())
          cost.elementwiseBytes = saturatingAdd(cost.elementwiseBytes, valueBytes(result));
      }
    }
    for (Value result : op.getResults())
      cost.addValue(result, 1);
  }
  return cost;
}

namespace {
/// What the backward method costs and keeps.
struct BackwardCost {
  uint64_t flops = 0;
  bool storesActivations = false;
  bool needsGradients = false;
};
} // namespace

static BackwardCost backwardCost(Attribute method, uint64_t forward, uint64_t params) {
  BackwardCost c;
  llvm::TypeSwitch<Attribute>(method)
      .Case([&](AutodiffAttr a) {
        bool reverse = a.getMode() == AutodiffMode::reverse;
        uint64_t factor = reverse ? cost::kReverseModeFactor : cost::kForwardModeFactor;
        // (Recomputing checkpointed layers is added by the caller, which
        // knows which layers they are.)
        c.flops = saturatingMul(forward, factor);
        c.storesActivations = reverse;
        c.needsGradients = true;
      })
      .Case<StraightThroughAttr, ReinforceAttr>([&](Attribute) {
        c.flops = saturatingMul(forward, cost::kReverseModeFactor);
        c.storesActivations = c.needsGradients = true;
      })
      .Case([&](DfaAttr a) {
        // Local gradients plus the random feedback projection of the error.
        c.flops = saturatingAdd(saturatingMul(forward, cost::kDfaFactor),
                                mul({2, static_cast<uint64_t>(a.getFeedbackDim()), params}));
        c.storesActivations = c.needsGradients = true;
      })
      .Case([&](EvolutionAttr a) { c.flops = saturatingMul(forward, a.getPop()); })
      .Case([&](ZerothOrderAttr a) {
        c.flops = mul({forward, 2, static_cast<uint64_t>(a.getSamples())});
        c.needsGradients = true; // the estimate is accumulated like a gradient
      })
      .Case([&](HybridAttr h) {
        BackwardCost p = backwardCost(h.getPrimary(), forward, params);
        BackwardCost x = backwardCost(h.getAux(), forward, params);
        c.flops = saturatingAdd(p.flops, x.flops);
        c.storesActivations = p.storesActivations || x.storesActivations;
        c.needsGradients = p.needsGradients || x.needsGradients;
      });
  return c;
}

namespace {
/// Per-element update cost and state copies of one parameter's update chain.
struct UpdateCost {
  uint64_t flops = 0;
  uint64_t stateCopies = 0;
};
} // namespace

static UpdateCost updateCost(Attribute method, const ParamInfo &param);

static Attribute pickPerParam(PerParamAttr rule, const ParamInfo &param) {
  if (ArrayAttr overrides = rule.getOverrides())
    for (Attribute entry : overrides)
      if (auto o = dyn_cast<ParamOverrideAttr>(entry); o && o.getParam() == param.name)
        return o.getUpdate();
  if (rule.getMatrix() && param.shape.size() >= 2)
    return rule.getMatrix();
  return rule.getOthers();
}

static UpdateCost updateCost(Attribute method, const ParamInfo &param) {
  uint64_t n = param.count();
  UpdateCost c;
  llvm::TypeSwitch<Attribute>(method)
      .Case([&](SgdAttr) { c.flops = saturatingMul(cost::kSgd, n); })
      .Case([&](AdamAttr) {
        c.flops = saturatingMul(cost::kAdam, n);
        c.stateCopies = 2;
      })
      .Case([&](LionAttr) {
        c.flops = saturatingMul(cost::kLion, n);
        c.stateCopies = 1;
      })
      .Case([&](MuonAttr m) {
        // Newton–Schulz on the [a, b] matrix view, a <= b: each iteration
        // forms X X^T (2a^2 b), a polynomial in it (2a^3) and applies it (2a^2 b).
        uint64_t rows = param.shape.empty() ? 1 : param.shape.front();
        uint64_t cols = rows ? n / rows : 0;
        uint64_t a = std::min(rows, cols), b = std::max(rows, cols);
        uint64_t perIter = add({mul({4, a, a, b}), mul({2, a, a, a})});
        c.flops = saturatingAdd(saturatingMul(cost::kMuonMomentum, n),
                                saturatingMul(perIter, m.getNsSteps()));
        c.stateCopies = 1;
      })
      .Case([&](ScheduleAttr s) { c = updateCost(s.getInner(), param); })
      .Case([&](GradientClipAttr g) {
        c = updateCost(g.getInner(), param);
        c.flops = saturatingAdd(c.flops, saturatingMul(cost::kClip, n));
      })
      .Case([&](EmaAttr e) {
        c = updateCost(e.getInner(), param);
        c.flops = saturatingAdd(c.flops, saturatingMul(cost::kEma, n));
        ++c.stateCopies;
      })
      .Case([&](PerParamAttr p) { c = updateCost(pickPerParam(p, param), param); });
  return c;
}

uint64_t ResourceEstimate::totalBytes() const {
  return saturatingAdd(saturatingAdd(paramBytes, optimizerStateBytes),
                       saturatingAdd(gradientBytes, activationBytes));
}

double ResourceEstimate::forwardLatencyMs() const {
  return static_cast<double>(forwardFlops) / kReferenceFlopsPerSecond * 1e3;
}

FailureOr<ResourceEstimate> synpl::l2::estimateResources(MethodsOp methods) {
  if (methods.getInfer().empty() || !methods.getInferYield())
    return failure();
  Block &block = methods.getInferBlock();
  BlockCost forward = costOf(block);
  if (!forward.ok)
    return failure();
  for (BlockArgument arg : block.getArguments())
    forward.addValue(arg, 1);

  ResourceEstimate est;
  est.largestComputedBytes = forward.largestComputedBytes;
  est.forwardLayerOps = forward.layerOps;
  SmallVector<ParamInfo> params = collectParams(methods);
  uint64_t stateBytes = 0, updateFlops = 0;
  for (const ParamInfo &p : params) {
    uint64_t bytes = saturatingMul(p.count(), p.elementBytes);
    est.params = saturatingAdd(est.params, p.count());
    est.paramBytes = saturatingAdd(est.paramBytes, bytes);
    UpdateCost u = updateCost(methods.getUpdate(), p);
    updateFlops = saturatingAdd(updateFlops, u.flops);
    est.updateStreamBytes = saturatingAdd(
        est.updateStreamBytes,
        saturatingMul(bytes, cost::kUpdatePasses + cost::kUpdatePassesPerState * u.stateCopies));
    stateBytes = saturatingAdd(stateBytes, saturatingMul(bytes, u.stateCopies));
  }
  est.optimizerStateBytes = stateBytes;
  est.forwardFlops = forward.flops;

  // Checkpointing (activation checkpointing, as the backward expansion
  // does it): the named layers' outputs are not kept for the backward pass,
  // which recomputes those layers' forward ops instead.
  auto autodiff = dyn_cast<AutodiffAttr>(methods.getBackward());
  bool checkpointed = autodiff && autodiff.getCheckpoint() && !autodiff.getCheckpoint().empty();
  BackwardCost bwd =
      backwardCost(methods.getBackward(), forward.flops, est.params);
  uint64_t recomputedFlops = 0, droppedBytes = 0;
  if (checkpointed && bwd.storesActivations) {
    llvm::StringSet<> recomputed;
    for (Attribute ref : autodiff.getCheckpoint())
      if (auto name = dyn_cast<StringAttr>(ref))
        recomputed.insert(name.getValue());
    for (auto &[op, name] : layerNames(methods)) {
      if (!recomputed.contains(name))
        continue;
      recomputedFlops = saturatingAdd(recomputedFlops, layerForwardFlops(op));
      for (Value result : op->getResults())
        droppedBytes = saturatingAdd(droppedBytes, valueBytes(result));
    }
  }
  est.flopsPerStep = saturatingAdd(saturatingAdd(bwd.flops, recomputedFlops), updateFlops);
  // The same split into contractions and streamed bytes (recomputed layers
  // aside: a few percent of a checkpointed step).
  uint64_t factor = forward.flops ? bwd.flops / forward.flops : 1;
  est.contractionFlopsPerStep = saturatingMul(forward.contractionFlops, factor);
  if (bwd.storesActivations)
    est.contractionFlopsPerStep -=
        std::min(inputContractionFlops(block), est.contractionFlopsPerStep);
  est.elementwiseStreamBytes = saturatingMul(forward.elementwiseBytes, cost::kStreamPasses);
  if (bwd.needsGradients)
    est.gradientBytes = est.paramBytes;
  if (!bwd.storesActivations)
    est.activationBytes = saturatingMul(forward.largestValueBytes, 2);
  else if (forward.activationBytes == kSaturated)
    est.activationBytes = kSaturated;
  else
    est.activationBytes = forward.activationBytes - std::min(droppedBytes, forward.activationBytes);

  for (uint64_t v : {est.params, est.paramBytes, est.optimizerStateBytes,
                     est.forwardFlops, est.flopsPerStep, est.contractionFlopsPerStep,
                     est.elementwiseStreamBytes, est.updateStreamBytes, est.activationBytes,
                     est.totalBytes()})
    if (v == kSaturated)
      return failure();
  return est;
}

//===----------------------------------------------------------------------===//
// Rebatching (data parallelism)
//===----------------------------------------------------------------------===//

LogicalResult synpl::l2::rebatchInfer(MethodsOp methods, int64_t batch) {
  Block &infer = methods.getInferBlock();
  SmallVector<std::pair<Value, Type>> retyped;
  auto undo = [&]() {
    for (auto &[v, t] : llvm::reverse(retyped))
      v.setType(t);
    return failure();
  };
  auto setType = [&](Value v, Type t) {
    if (v.getType() == t)
      return;
    retyped.push_back({v, v.getType()});
    v.setType(t);
  };
  for (BlockArgument arg : infer.getArguments()) {
    auto t = dyn_cast<RankedTensorType>(arg.getType());
    if (!t || t.getRank() == 0) {
      methods.emitError() << "the infer DAG's input " << arg.getType()
                          << " has no batch dimension to split across replicas";
      return undo();
    }
    SmallVector<int64_t> shape(t.getShape());
    shape[0] = batch;
    setType(arg, RankedTensorType::get(shape, t.getElementType()));
  }
  for (Operation &op : infer) {
    if (op.getNumResults() == 0)
      continue;
    auto rule = dyn_cast<InferTypeOpInterface>(&op);
    if (!rule) {
      op.emitError() << "'" << op.getName()
                     << "' has no shape rule: the model cannot be split into "
                        "replicas of "
                     << batch << " examples";
      return undo();
    }
    SmallVector<Type> inferred;
    if (failed(rule.inferReturnTypes(op.getContext(), op.getLoc(), op.getOperands(),
                                     op.getRawDictionaryAttrs(), op.getPropertiesStorage(),
                                     op.getRegions(), inferred))) {
      op.emitError() << "the shape rule refuses batches of " << batch
                     << " examples (data-parallel replicas)";
      return undo();
    }
    for (auto [r, t] : llvm::zip(op.getResults(), inferred))
      setType(r, t);
  }
  return success();
}
