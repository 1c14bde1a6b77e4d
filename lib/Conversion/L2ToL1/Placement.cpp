//===- Placement.cpp - L2 -> L1 placement search --------------------------===//
//
// The spec's L2 -> L1 search: where the tensor graph and the actor run, which
// compute node runs the host stages, which memory node stages the batches,
// and how deep the pipeline is. Enumerate every (compute, host, staging,
// depth), filter by the target's own rules (isa, topology paths, memory
// capacity, the #[l1::on] hatch), score with the spec's cost model (transfer
// time, compute time, memory pressure, bubble ratio), select the cheapest.
//
//===----------------------------------------------------------------------===//
#include "synpl/Target/IPU21/Facts.h"
#include "L2ToL1Impl.h"

#include "synpl/Search/Search.h"
#include "synpl/Support/Units.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>
#include <limits>

using namespace mlir;
using namespace synpl;
using namespace synpl::l2tol1;

//===----------------------------------------------------------------------===//
// Hardware facts derived from node properties
//===----------------------------------------------------------------------===//

namespace {
/// Nominal per-unit rates (docs/l2-to-l1.md, "Cost model"). A step's
/// contractions (matmuls, convolutions) run at the node's FLOP rate; its
/// elementwise layers and its update stream bytes at the node's memory
/// rate.
///  * x86_64 core: 2 GHz x 2 FMA units x 8 f32 lanes (AVX2) x 2 = 64 GFLOP/s;
///    25 GB/s streamed per core, at most the bandwidth of the edge to the
///    memory that holds its buffers (the cores of a host share it). A
///    process whose values are all under 1 MiB streams on one core: the
///    runtime runs a kernel that small on the calling thread, since waking
///    the workers costs more than splitting it saves.
///  * CUDA SM: 128 f32 lanes x 2 (FMA) x 1.5 GHz = 384 GFLOP/s; 25 GB/s of
///    HBM per SM (an H100's 3.35 TB/s over its 132 SMs).
///  * An IPU (isa ipu21 or ipu2): its f32 AMP peak from its facts (tiles x
///    ampF32MacsPerCycle x 2 x clock; 70 TFLOP/s on the ipu21), derated by
///    half (the epilogues run on the workers); each tile streams its own
///    SRAM at one 64-bit load per cycle.
constexpr double kX86CoreFlops = 64.0e9;
constexpr double kX86CoreStreamBytes = 25.0e9;
constexpr uint64_t kX86ParallelStreamBytes = 1 << 20;
constexpr double kCudaSmFlops = 384.0e9;
constexpr double kCudaSmStreamBytes = 25.0e9;
constexpr double kIpuTileStreamBytesPerCycle = 8;
/// The fixed cost of one kernel of a step, besides its FLOPs and bytes:
///  * x86_64: the executor's dispatch of a kernel (the small kernels of
///    the Fashion-MNIST MLP's step take 0.1 to 1 us a call, work
///    included; those large enough to split among the cores amortize
///    waking the workers);
///  * CUDA: a launch and the drain of a small kernel on a stream (a CUDA
///    graph replays its kernels at about that rate);
///  * IPU: one BSP sync, 600 cycles a compute set.
constexpr double kX86KernelSeconds = 0.5e-6;
constexpr double kCudaKernelSeconds = 4e-6;
constexpr double kIpuSyncCycles = 600;
/// A node that does not state its unit count is assumed to have one.
constexpr int64_t kDefaultUnits = 1;
/// A full buffer node costs as much as this many seconds per step: memory
/// pressure separates candidates of equal speed, it does not outweigh them.
constexpr double kPressureWeightSeconds = 1.0e-3;
} // namespace

std::optional<double> synpl::l2tol1::nominalThroughput(l1::NodeOp node) {
  if (!node || node.getKind() != l1::NodeKind::compute || !node.getIsa())
    return std::nullopt;
  StringRef isa = *node.getIsa();
  if (isa == "x86_64")
    return kX86CoreFlops * double(node.getCores().value_or(kDefaultUnits));
  if (isa == "cuda")
    return kCudaSmFlops * double(node.getSm().value_or(kDefaultUnits));
  if (std::optional<ipu21::Facts> f = ipu21::factsFor(isa))
    return 0.5 * double(f->tiles) * double(f->ampF32MacsPerCycle) * 2 * f->clockHz;
  return std::nullopt;
}

/// Seconds of a kernel's fixed cost on `node` (kX86KernelSeconds, ...).
static std::optional<double> kernelSeconds(l1::NodeOp node) {
  if (!node || node.getKind() != l1::NodeKind::compute || !node.getIsa())
    return std::nullopt;
  StringRef isa = *node.getIsa();
  if (isa == "x86_64")
    return kX86KernelSeconds;
  if (isa == "cuda")
    return kCudaKernelSeconds;
  if (std::optional<ipu21::Facts> f = ipu21::factsFor(isa))
    return kIpuSyncCycles / f->clockHz;
  return std::nullopt;
}

/// Bytes per second a compute node's kernels stream from the memory of its
/// buffers (`linkBandwidth`: the edge to that memory, 0 when the node holds
/// them itself), for a program whose largest value is `largestValue` bytes.
static std::optional<double> streamRate(l1::NodeOp node, double linkBandwidth,
                                        uint64_t largestValue) {
  if (!node || node.getKind() != l1::NodeKind::compute || !node.getIsa())
    return std::nullopt;
  StringRef isa = *node.getIsa();
  double rate;
  if (isa == "x86_64")
    rate = kX86CoreStreamBytes * (largestValue < kX86ParallelStreamBytes
                                      ? 1.0
                                      : double(node.getCores().value_or(kDefaultUnits)));
  else if (isa == "cuda")
    rate = kCudaSmStreamBytes * double(node.getSm().value_or(kDefaultUnits));
  else if (std::optional<ipu21::Facts> f = ipu21::factsFor(isa))
    rate = double(f->tiles) * kIpuTileStreamBytesPerCycle * f->clockHz;
  else
    return std::nullopt;
  return linkBandwidth > 0 ? std::min(rate, linkBandwidth) : rate;
}

static SmallVector<l1::NodeOp> nodesOf(l1::SystemOp system) {
  return llvm::to_vector(system.getBody().front().getOps<l1::NodeOp>());
}

std::optional<std::string> synpl::l2tol1::bufferNodeOf(l1::SystemOp system,
                                                       l1::NodeOp node) {
  if (!node)
    return std::nullopt;
  if (node.holdsBuffers())
    return node.getSymName().str();
  std::optional<std::string> best;
  for (l1::EdgeOp e : system.getBody().front().getOps<l1::EdgeOp>()) {
    StringRef other;
    if (e.getFrom() == node.getSymName())
      other = e.getTo();
    else if (e.getTo() == node.getSymName())
      other = e.getFrom();
    else
      continue;
    l1::NodeOp n = system.lookupNode(other);
    if (n && n.getKind() == l1::NodeKind::memory && (!best || other < *best))
      best = other.str();
  }
  return best;
}

namespace {
/// The fixed cost of one message over an edge that states no `latency`:
/// between two GPUs (NVLink), one hop of NCCL's low-latency protocol;
/// otherwise a message between MPI processes (shared memory, a network).
constexpr double kGpuLinkLatencySeconds = 2e-6;
constexpr double kProcessLinkLatencySeconds = 20e-6;

double edgeLatency(l1::SystemOp system, l1::EdgeOp e) {
  if (std::optional<StringRef> stated = e.getLatency())
    if (std::optional<uint64_t> ns = parseDuration(*stated))
      return double(*ns) * 1e-9;
  l1::NodeOp a = system.lookupNode(e.getFrom()), b = system.lookupNode(e.getTo());
  bool gpus = a && b && a.getIsa() == "cuda" && b.getIsa() == "cuda";
  return gpus ? kGpuLinkLatencySeconds : kProcessLinkLatencySeconds;
}

/// Transfer times over the system's edges: the fastest path for a number of
/// bytes, store-and-forward (each edge carries the whole payload in turn).
class Topology {
public:
  explicit Topology(l1::SystemOp system) : system(system) {
    for (l1::NodeOp n : nodesOf(system))
      index[n.getSymName()] = names.size(), names.push_back(n.getSymName().str());
    for (l1::EdgeOp e : system.getBody().front().getOps<l1::EdgeOp>()) {
      auto a = index.find(e.getFrom()), b = index.find(e.getTo());
      std::optional<uint64_t> bw = parseBandwidth(e.getBandwidth());
      if (a == index.end() || b == index.end() || !bw || !*bw)
        continue;
      double latency = edgeLatency(system, e);
      edges.push_back({a->second, b->second, double(*bw), latency});
      if (e.getBidirectional())
        edges.push_back({b->second, a->second, double(*bw), latency});
    }
  }

  bool hasPath(StringRef from, StringRef to) { return system.hasPath(from, to); }

  /// The bandwidth of the edge from `from` to `to` (bytes/s), 0 if none.
  double edgeBandwidth(StringRef from, StringRef to) const {
    auto a = index.find(from), b = index.find(to);
    if (a == index.end() || b == index.end())
      return 0;
    double best = 0;
    for (const Edge &e : edges)
      if (e.from == a->second && e.to == b->second)
        best = std::max(best, e.bandwidth);
    return best;
  }

  /// Seconds to move `bytes` from `from` to `to`; 0 on the same node,
  /// infinity without a path.
  double seconds(StringRef from, StringRef to, uint64_t bytes) const {
    if (bytes == 0 && index.count(from) && index.count(to))
      return 0;
    return route(from, to, bytes).seconds;
  }

  /// One message of `bytes` from `from` to `to` (a collective's step): its
  /// transfer time plus its fixed cost, the largest latency along the path
  /// (the slowest link's transport sets it). Infinity without a path.
  double messageSeconds(StringRef from, StringRef to, uint64_t bytes) const {
    Route r = route(from, to, std::max<uint64_t>(bytes, 1));
    return (bytes ? r.seconds : 0) + r.latency;
  }

private:
  struct Edge {
    size_t from, to;
    double bandwidth, latency;
  };
  struct Route {
    double seconds = 0, latency = 0;
  };
  /// The fastest path for `bytes` (Dijkstra over a handful of nodes:
  /// O(V^2) is plenty), and the largest latency along it.
  Route route(StringRef from, StringRef to, uint64_t bytes) const {
    constexpr double inf = std::numeric_limits<double>::infinity();
    auto a = index.find(from), b = index.find(to);
    if (a == index.end() || b == index.end())
      return {inf, inf};
    if (a->second == b->second)
      return {};
    std::vector<double> dist(names.size(), inf), latency(names.size(), 0);
    std::vector<bool> done(names.size(), false);
    dist[a->second] = 0;
    for (size_t round = 0; round < names.size(); ++round) {
      size_t u = names.size();
      for (size_t i = 0; i < names.size(); ++i)
        if (!done[i] && (u == names.size() || dist[i] < dist[u]))
          u = i;
      if (u == names.size() || std::isinf(dist[u]))
        break;
      done[u] = true;
      for (const Edge &e : edges) {
        double via = dist[u] + double(bytes) / e.bandwidth;
        if (e.from == u && via < dist[e.to]) {
          dist[e.to] = via;
          latency[e.to] = std::max(latency[u], e.latency);
        }
      }
    }
    if (std::isinf(dist[b->second]))
      return {inf, inf};
    return {dist[b->second], latency[b->second]};
  }
  l1::SystemOp system;
  llvm::StringMap<size_t> index;
  std::vector<std::string> names;
  std::vector<Edge> edges;
};

/// The memory (in bytes) of the node that holds `compute`'s buffers.
std::optional<uint64_t> memoryOf(l1::SystemOp system, StringRef node) {
  l1::NodeOp n = system.lookupNode(node);
  return n ? n.getMemoryBytes() : std::nullopt;
}
} // namespace

//===----------------------------------------------------------------------===//
// The search
//===----------------------------------------------------------------------===//

namespace {
/// Per-step times of one rank of a candidate, in seconds.
struct StepTimes {
  double transfer = 0;    // staging <-> device
  double contraction = 0; // the contractions' FLOPs at the node's rate
  double memory = 0;      // the streamed bytes at the node's memory rate
  double launch = 0;      // the kernels' fixed costs
  double compute() const { return contraction + memory + launch; }
};

/// The gradients' buckets, at most this many bytes each (the default of
/// --synpl-l1-bucket-all-reduce): a GPU launches one all-reduce per bucket.
constexpr uint64_t kBucketBytes = 256 * 1024;

/// The slowest hop of the ring through `ranks` for a message of `bytes`,
/// its fixed cost (the links' latency) included: one step of a ring
/// collective. With 0 bytes, the latency alone (a sum of scalars).
double slowestHop(const Topology &topo, ArrayRef<std::string> ranks, uint64_t bytes) {
  double slowest = 0;
  for (size_t i = 0; i < ranks.size(); ++i)
    slowest = std::max(slowest,
                       topo.messageSeconds(ranks[i], ranks[(i + 1) % ranks.size()], bytes));
  return slowest;
}

/// Where a rank's kernels and collectives run, and how fast it streams.
struct Rank {
  l1::NodeOp node;
  double flops = 0;  // contractions, FLOP/s
  double stream = 0; // bytes/s from the memory of its buffers
  double kernel = 0; // seconds of one kernel's fixed cost
  /// A host's MPI moves and reduces a collective's bytes with the rank's
  /// own cores, between its kernels; a GPU's NCCL runs beside them.
  bool copiesOnCores = false;
};

Rank rankOf(const PlacementProblem &problem, const Topology &topo, const Placement &p) {
  Rank r;
  l1::SystemOp system = problem.system;
  r.node = system.lookupNode(p.compute);
  double link = p.deviceMem == p.compute ? 0 : topo.edgeBandwidth(p.compute, p.deviceMem);
  // 0 where the node cannot run the graph (the isa filter says why): its
  // times are infinite.
  r.flops = nominalThroughput(r.node).value_or(0);
  r.stream = streamRate(r.node, link, problem.largestComputedBytes).value_or(0);
  r.kernel = kernelSeconds(r.node).value_or(0);
  r.copiesOnCores = r.node && r.node.getIsa() == "x86_64";
  return r;
}

/// A ring collective of `bytes` (the whole tensor) over `ranks`: a sum (an
/// all-reduce) in 2 (d - 1) steps, a gather or a reduce-scatter in d - 1,
/// each moving 1/d of the bytes over the slowest hop (`link`). On a host
/// the rank's cores do the work (`copy`): each step's block copied into and
/// out of the transport's buffers, and a sum's (or a reduce-scatter's)
/// d - 1 reductions reading two blocks and writing one, at the rank's
/// memory rate.
struct RingCost {
  double link = 0, copy = 0;
};
enum class Ring { AllReduce, ReduceScatter, AllGather };
RingCost ringCost(const Topology &topo, ArrayRef<std::string> ranks, const Rank &rank,
                  uint64_t bytes, Ring kind) {
  RingCost c;
  uint64_t d = ranks.size();
  if (d < 2 || bytes == 0)
    return c;
  uint64_t block = (bytes + d - 1) / d;
  double steps = double(kind == Ring::AllReduce ? 2 * (d - 1) : d - 1);
  bool reduces = kind != Ring::AllGather;
  c.link = steps * slowestHop(topo, ranks, block);
  if (rank.copiesOnCores)
    c.copy = (2 * steps + (reduces ? 3.0 * double(d - 1) : 0.0)) * double(block) / rank.stream;
  return c;
}

/// Tensor parallelism: the linears a placement on its shards splits, and
/// how (splitLinears).
SmallVector<SplitLinear> splitsOf(const PlacementProblem &problem, const Placement &p) {
  if (p.shardCount() < 2)
    return {};
  return splitLinears(problem.splittable, p.shardCount());
}

/// One step's FLOPs of the split linears' matmuls (forward, weight
/// gradient and, when needed, input gradient).
double splitFlops(ArrayRef<SplitLinear> splits) {
  double flops = 0;
  for (const SplitLinear &s : splits)
    flops += 2.0 * double(s.rows) * double(s.in) * double(s.out) * (s.inputGrad ? 3 : 2);
  return flops;
}

/// Update sharding: the bytes of the parameters whose update the replicas
/// shard (shardedUpdateParams).
uint64_t shardedUpdateBytes(const PlacementProblem &problem, const Placement &p) {
  if (!p.shardedUpdate)
    return 0;
  uint64_t bytes = 0;
  for (unsigned i : shardedUpdateParams(problem.paramRowsAndElements, p.replicaCount()))
    bytes = saturatingAdd(bytes, uint64_t(problem.paramRowsAndElements[i].second) * 4);
  return std::min(bytes, problem.gradientBytes);
}

/// Bytes of the split parameters (weights, and biases split by columns).
uint64_t splitParamBytes(ArrayRef<SplitLinear> splits) {
  uint64_t bytes = 0;
  for (const SplitLinear &s : splits) {
    int64_t elements = s.in * s.out + (s.axis == SplitLinear::Axis::columns ? s.out : 0);
    bytes = saturatingAdd(bytes, uint64_t(elements) * 4);
  }
  return bytes;
}

/// Parameters and optimizer state on one rank: a split's shards hold 1/d
/// of the split parameters and of their state; under update sharding a
/// replica holds 1/d of the sharded parameters' optimizer state.
uint64_t persistentOn(const PlacementProblem &problem, const Placement &p) {
  uint64_t split = splitParamBytes(splitsOf(problem, p));
  split = uint64_t(double(split) * (1.0 + problem.optimizerStatePerParam));
  split = std::min(split, problem.persistentBytes);
  uint64_t bytes = problem.persistentBytes - split + split / uint64_t(p.shardCount());
  uint64_t state = std::min(
      uint64_t(double(shardedUpdateBytes(problem, p)) * problem.optimizerStatePerParam), bytes);
  return bytes - state + state / uint64_t(p.replicaCount());
}

/// One step's gradients on one rank; under update sharding, also the
/// reduce-scattered blocks beside the gradients they come from, and the
/// updated blocks the handler gathers.
uint64_t gradientsOn(const PlacementProblem &problem, const Placement &p) {
  uint64_t split = std::min(splitParamBytes(splitsOf(problem, p)), problem.gradientBytes);
  return problem.gradientBytes - split + split / uint64_t(p.shardCount()) +
         2 * (shardedUpdateBytes(problem, p) / uint64_t(p.replicaCount()));
}

StepTimes stepTimes(const PlacementProblem &problem, const Topology &topo, const Placement &p,
                    const Rank &rank) {
  StepTimes t;
  // Each replica computes its slice of the global batch.
  double d = double(p.replicaCount()), s = double(p.shardCount());
  // The batch to the graph's memory; the reported metrics back to staging.
  // The gradients stay where the graph left them: the actor runs on the
  // graph's node. (Storage is read once: the decoder loads a data set into
  // host memory before the first step, so disk bandwidth is not per step.)
  t.transfer = topo.seconds(p.staging, p.deviceMem, uint64_t(double(problem.batchBytes) / d)) +
               topo.seconds(p.deviceMem, p.staging, problem.reportBytes);
  // Each shard computes its block of the split linears, and the rest of
  // the step whole; it updates its block of their parameters. Every
  // replica updates every parameter, or under update sharding its block
  // of the sharded ones.
  SmallVector<SplitLinear> splits = splitsOf(problem, p);
  double contraction = double(problem.contractionFlops);
  double split = std::min(splitFlops(splits), contraction);
  t.contraction = (contraction - split + split / s) / d / rank.flops;
  double update = double(problem.updateStreamBytes);
  double splitUpdate =
      std::min(update, double(splitParamBytes(splits)) * problem.updateBytesPerParamByte);
  double shardedUpdate = std::min(update - splitUpdate,
                                  double(shardedUpdateBytes(problem, p)) *
                                      problem.updateBytesPerParamByte);
  t.memory = (double(problem.elementwiseStreamBytes) / d + update - splitUpdate -
              shardedUpdate + splitUpdate / s + shardedUpdate / d) /
             rank.stream;
  // Every rank runs every kernel of the step, on its slice or its block.
  t.launch = double(problem.kernelsPerStep) * rank.kernel;
  return t;
}

/// The ring all-reduce of the gradients across the replicas, the part of
/// it the step waits for. It starts bucket by bucket during the backward
/// pass (about two thirds of the compute): the links' time hides behind
/// it, except the last gradients' (the first layer's), which the backward
/// pass produces when it has nothing left to do; on hosts the copies and
/// reductions take the rank's own cores. Under update sharding the sharded
/// parameters' gradients are reduce-scattered alike (half the ring's
/// steps), and after the update each replica's blocks are all-gathered:
/// the step waits for all of that gather.
double allReduceSeconds(const PlacementProblem &problem, const Topology &topo,
                        const Placement &p, const Rank &rank, const StepTimes &t) {
  if (p.replicaCount() < 2 || problem.gradientBytes == 0)
    return 0;
  // A GPU launches each collective like a kernel (NCCL's), in the step's
  // stream: the metrics' sum and one per bucket of the gradients
  // (--synpl-l1-bucket-all-reduce's 256 KiB), and under update sharding a
  // reduce-scatter and a gather per sharded parameter.
  double launches = 0;
  if (!rank.copiesOnCores) {
    uint64_t calls = 1 + (problem.gradientBytes + kBucketBytes - 1) / kBucketBytes;
    if (p.shardedUpdate)
      calls += 2 * shardedUpdateParams(problem.paramRowsAndElements, p.replicaCount()).size();
    launches = double(calls) * rank.kernel;
  }
  uint64_t sharded = shardedUpdateBytes(problem, p);
  RingCost c = ringCost(topo, p.replicas, rank, problem.gradientBytes - sharded,
                        Ring::AllReduce);
  RingCost rs = ringCost(topo, p.replicas, rank, sharded, Ring::ReduceScatter);
  RingCost ag = ringCost(topo, p.replicas, rank, sharded, Ring::AllGather);
  double link = c.link + rs.link;
  double backward = 2.0 / 3.0 * t.compute();
  double last = double(std::min(problem.lastGradientBytes, problem.gradientBytes)) /
                double(problem.gradientBytes);
  return launches + c.copy + rs.copy + std::max(link * last, link - backward) + ag.link +
         ag.copy;
}

/// The collectives of a tensor-parallel step, on its critical path: per
/// split linear, a ring all-gather or a ring all-reduce of its output, and
/// one of its input's gradient when the backward pass needs it
/// (splitLinears: a column split gathers the output and sums the input's
/// gradient, a row split sums the output and gathers the input's gradient,
/// and a pair keeps the blocks in between); and the sums of scalars (a
/// norm of the parameters), latency alone.
double tensorParallelSeconds(const PlacementProblem &problem, const Topology &topo,
                             const Placement &p, const Rank &rank) {
  int64_t d = p.shardCount();
  if (d < 2)
    return 0;
  auto ring = [&](int64_t elements, bool sum) {
    RingCost c = ringCost(topo, p.shards, rank, uint64_t(elements) * 4,
                          sum ? Ring::AllReduce : Ring::AllGather);
    // On a GPU each is a launch (NCCL's kernel) besides.
    return c.link + c.copy + (rank.copiesOnCores ? 0 : rank.kernel);
  };
  double seconds = 0;
  for (const SplitLinear &s : splitsOf(problem, p)) {
    bool columns = s.axis == SplitLinear::Axis::columns;
    if (!s.blockOut)
      seconds += ring(s.rows * s.out, /*sum=*/!columns);
    if (s.inputGrad && !s.blockIn)
      seconds += ring(s.rows * s.in, /*sum=*/columns);
  }
  seconds += double(problem.scalarSums) * 2.0 * double(d - 1) * slowestHop(topo, p.shards, 0);
  return seconds;
}

/// Tensor parallelism: the buffers a step of a split adds to the one
/// process's, at most: a column split's output block and its output
/// gradient's block, and the copy its input gradient's sum may need; a
/// row split's input block and its input gradient's block, and the copy
/// its output's sum may need (a pair's blocks replace the whole values).
uint64_t splitStepBytes(const PlacementProblem &problem, const Placement &p) {
  int64_t d = p.shardCount();
  uint64_t elements = 0;
  for (const SplitLinear &s : splitsOf(problem, p)) {
    bool columns = s.axis == SplitLinear::Axis::columns;
    if (columns && !s.blockOut)
      elements += uint64_t(2 * s.rows * (s.out / d));
    if (columns && s.inputGrad)
      elements += uint64_t(s.rows * s.in);
    if (!columns && !s.blockIn)
      elements += uint64_t(2 * s.rows * (s.in / d));
    if (!columns)
      elements += uint64_t(s.rows * s.out);
  }
  return saturatingMul(elements, 4);
}

/// Bytes live on the graph's memory node with `depth` steps in flight.
uint64_t devicePeakBytes(const PlacementProblem &problem, const Placement &p) {
  uint64_t d = uint64_t(p.replicaCount());
  uint64_t values = saturatingAdd(problem.activationBytes, problem.gradientTemporaryBytes) / d;
  uint64_t perStep = saturatingAdd(
      saturatingAdd(saturatingAdd(values, splitStepBytes(problem, p)), gradientsOn(problem, p)),
      saturatingAdd(problem.batchBytes / d, problem.reportBytes));
  return saturatingAdd(persistentOn(problem, p),
                       saturatingMul(perStep, uint64_t(p.depth)));
}

uint64_t stagingPeakBytes(const PlacementProblem &problem, const Placement &p) {
  uint64_t perStep =
      saturatingAdd(problem.batchBytes / uint64_t(p.replicaCount()), problem.reportBytes);
  return saturatingMul(perStep, uint64_t(p.depth));
}

std::string describe(const Placement &p) {
  std::string s = llvm::formatv("graph+actor@{0} host@{1} staging@{2} depth={3}", p.compute,
                                p.host, p.staging, p.depth)
                      .str();
  if (!p.replicas.empty())
    s += " replicas=" + llvm::join(p.replicas, ",");
  if (p.shardedUpdate)
    s += " update-sharded";
  if (!p.shards.empty())
    s += " shards=" + llvm::join(p.shards, ",");
  return s;
}
} // namespace

std::optional<std::string> synpl::l2tol1::whyUpdateNotSharded(const PlacementProblem &problem,
                                                              int64_t replicas) {
  if (!problem.updateShardingObstacle.empty())
    return problem.updateShardingObstacle;
  if (shardedUpdateParams(problem.paramRowsAndElements, replicas).empty())
    return "no parameter of " + std::to_string(kMinSplitElements) +
           " or more elements has rows that " + std::to_string(replicas) + " replicas divide";
  return std::nullopt;
}

FailureOr<Placement> synpl::l2tol1::searchPlacement(Location loc,
                                                    const PlacementProblem &problem) {
  l1::SystemOp system = problem.system;
  Topology topo(system);
  SmallVector<l1::NodeOp> nodes = nodesOf(system);
  SmallVector<std::string> computes, memories, storages;
  for (l1::NodeOp n : nodes) {
    std::string name = n.getSymName().str();
    switch (n.getKind()) {
    case l1::NodeKind::compute:
      computes.push_back(name);
      break;
    case l1::NodeKind::memory:
      memories.push_back(name);
      break;
    case l1::NodeKind::storage:
      storages.push_back(name);
      break;
    }
  }
  llvm::sort(computes);
  llvm::sort(memories);
  llvm::sort(storages);
  // The storage node of the unbound fields: the first (by name) that
  // reaches the staging memory.
  auto defaultStorage = [&](StringRef staging) -> std::string {
    for (const std::string &s : storages)
      if (topo.hasPath(s, staging))
        return s;
    return std::string();
  };
  // Every storage node the batches come from.
  auto sourcesFor = [&](const Placement &p) -> SmallVector<std::string> {
    SmallVector<std::string> src(problem.storageNodes.begin(), problem.storageNodes.end());
    if (problem.hasUnboundFields && !p.storage.empty() &&
        !llvm::is_contained(src, p.storage))
      src.push_back(p.storage);
    return src;
  };

  // A system without a compute or a memory node has nothing to enumerate:
  // say which kind is missing rather than "no candidates".
  if (computes.empty() || memories.empty()) {
    InFlightDiagnostic diag = emitError(loc)
        << "system @" << system.getSymName() << " has no "
        << (computes.empty() ? "compute" : "memory") << " node to place the "
        << (computes.empty() ? "model's tensor graph and actor on"
                             : "batches and buffers in");
    diag.attachNote(system.getLoc()) << "the system is declared here";
    return failure();
  }

  search::SearchSpec<Placement> spec;
  spec.name = "L2->L1 @" + system.getSymName().str();
  // Data parallelism: replica counts d > 1 that divide the global batch
  // (or the one distributed_shard fixes); the replicas of compute node c
  // are c and the next d - 1 compute nodes of its isa, by name. Each graph
  // node's choices, computed once: no replicas (one process), then one set
  // per count its isa has nodes enough for.
  llvm::StringMap<SmallVector<SmallVector<std::string>>> replicaSets, shardSets;
  for (const std::string &c : computes) {
    SmallVector<SmallVector<std::string>> &sets = replicaSets[c];
    sets.emplace_back(); // one process
    SmallVector<std::string> alike{c};
    l1::NodeOp first = system.lookupNode(c);
    for (const std::string &o : computes)
      if (o != c && system.lookupNode(o).getIsa() == first.getIsa())
        alike.push_back(o);
    for (int64_t d = 2; d <= (int64_t)alike.size(); ++d)
      if (problem.shards ? d == problem.shards : problem.globalBatch % d == 0)
        sets.emplace_back(alike.begin(), alike.begin() + d);
    // Tensor parallelism: d shards when they split some linear.
    SmallVector<SmallVector<std::string>> &split = shardSets[c];
    for (int64_t d = 2; d <= (int64_t)alike.size(); ++d)
      if (!splitLinears(problem.splittable, d).empty())
        split.emplace_back(alike.begin(), alike.begin() + d);
  }
  spec.countCandidates = [&]() -> std::optional<uint64_t> {
    uint64_t perGraphNode = 0;
    bool sharding = problem.updateSharding != UpdateSharding::Off;
    for (const std::string &c : computes)
      perGraphNode += (sharding ? 2 * replicaSets[c].size() - 1 : replicaSets[c].size()) +
                      shardSets[c].size();
    return perGraphNode * computes.size() * memories.size() * 3;
  };
  spec.enumerate = [&](llvm::function_ref<bool(Placement)> yield) {
    for (const std::string &c : computes)
      for (const std::string &h : computes)
        for (const std::string &m : memories)
          for (int64_t depth : {1, 2, 3})
            for (bool tensor : {false, true})
              for (const SmallVector<std::string> &ranks :
                   tensor ? shardSets[c] : replicaSets[c])
                // Replicas with and without update sharding (unless off).
                for (bool sharded : {false, true}) {
                  if (sharded && (tensor || ranks.empty() ||
                                  problem.updateSharding == UpdateSharding::Off))
                    continue;
                  Placement p;
                  p.compute = c;
                  p.host = h;
                  p.staging = m;
                  p.depth = depth;
                  p.deviceMem =
                      bufferNodeOf(system, system.lookupNode(c)).value_or(std::string());
                  p.storage = defaultStorage(m);
                  (tensor ? p.shards : p.replicas) = ranks;
                  p.shardedUpdate = sharded;
                  if (!yield(std::move(p)))
                    return;
                }
  };
  spec.describe = describe;

  using Check = std::optional<std::string>;
  spec.filters.push_back({"hint", [&](const Placement &p) -> Check {
                            if (problem.forcedNode && p.compute != *problem.forcedNode)
                              return "#[l1::on(" + *problem.forcedNode +
                                     ")] forces the model onto @" + *problem.forcedNode;
                            l1::NodeOp c = system.lookupNode(p.compute);
                            if (!problem.graphIsa.empty() &&
                                c.getIsa().value_or("") != problem.graphIsa)
                              return "graph-isa=" + problem.graphIsa +
                                     " (synplc --target) places the model on isa " +
                                     problem.graphIsa + ", not @" + p.compute + "'s " +
                                     c.getIsa().value_or("?").str();
                            return std::nullopt;
                          }});
  // Each rank reaches the next, both ways (the collectives' ring).
  auto ringPath = [&](ArrayRef<std::string> ranks, StringRef what) -> Check {
    for (size_t i = 0; i + 1 < ranks.size(); ++i)
      for (auto [a, b] : {std::pair(i, i + 1), std::pair(i + 1, i)})
        if (!topo.hasPath(ranks[a], ranks[b]))
          return ("no path from " + what + " @" + ranks[a] + " to @" + ranks[b]).str();
    return std::nullopt;
  };
  spec.filters.push_back({"replicas", [&](const Placement &p) -> Check {
                            // Every rank runs the same plan on its own node:
                            // a rank on a node without memory of its own (a
                            // host's core) stages its batches in the memory
                            // its kernels' buffers are in.
                            if (p.rankCount() > 1 && p.deviceMem != p.staging &&
                                !system.lookupNode(p.compute).holdsBuffers())
                              return "each rank stages its batches in its own host's memory (@" +
                                     p.deviceMem + "), not @" + p.staging;
                            if (p.shardCount() > 1) {
                              if (!problem.tensorParallelObstacle.empty())
                                return "tensor parallel: " + problem.tensorParallelObstacle;
                              if (problem.shards > 1)
                                return "distributed_shard(shards: " +
                                       std::to_string(problem.shards) +
                                       ") splits the data among replicas; tensor-parallel "
                                       "shards each read the whole batch";
                              if (p.depth > 1)
                                return "tensor-parallel shards meet in every step's "
                                       "collectives: one step in flight";
                              l1::NodeOp c = system.lookupNode(p.compute);
                              StringRef isa = c.getIsa().value_or("?");
                              if (isa != "x86_64" && isa != "cuda")
                                return "tensor-parallel shards run on hosts and CUDA GPUs "
                                       "(isa x86_64, cuda); @" +
                                       p.compute + " is " + isa.str();
                              return ringPath(p.shards, "shard");
                            }
                            if (problem.shards > 1 && p.replicaCount() != problem.shards) {
                              l1::NodeOp c = system.lookupNode(p.compute);
                              int64_t alike = llvm::count_if(computes, [&](const std::string &o) {
                                return system.lookupNode(o).getIsa() == c.getIsa();
                              });
                              return "distributed_shard(shards: " +
                                     std::to_string(problem.shards) + ") needs " +
                                     std::to_string(problem.shards) +
                                     " replicas, compute nodes of one isa (the system has " +
                                     std::to_string(alike) + " of isa " +
                                     c.getIsa().value_or("?").str() + ")";
                            }
                            return ringPath(p.replicas, "replica");
                          }});
  // Parameters, state and the peak of a step against the memory nodes.
  auto memoryCheck = [&](const Placement &p) -> Check {
    std::optional<uint64_t> dev = memoryOf(system, p.deviceMem);
    if (!dev)
      return "@" + p.deviceMem + " states no capacity";
    uint64_t persistent = persistentOn(problem, p);
    if (persistent > *dev)
      return "parameters and optimizer state (" +
             formatBytes(persistent) +
             ") exceed @" + p.deviceMem + " (" +
             formatBytes(*dev) + ")";
    uint64_t need = devicePeakBytes(problem, p);
    if (!p.needsTransfer())
      need = saturatingAdd(need, stagingPeakBytes(problem, p));
    if (need > *dev)
      return "peak live bytes " + formatBytes(need) +
             " at depth " + std::to_string(p.depth) +
             " exceed @" + p.deviceMem + " (" + formatBytes(*dev) + ")";
    std::optional<uint64_t> stage = memoryOf(system, p.staging);
    if (p.needsTransfer() &&
        (!stage || stagingPeakBytes(problem, p) > *stage))
      return "staging buffers exceed @" + p.staging;
    return std::nullopt;
  };
  // Update sharding: a rule that updates blocks, a parameter the replicas
  // divide; `on` keeps only the sharded form where it exists.
  spec.filters.push_back(
      {"update sharding", [&](const Placement &p) -> Check {
         if (p.replicaCount() < 2)
           return std::nullopt;
         std::optional<std::string> why = whyUpdateNotSharded(problem, p.replicaCount());
         if (p.shardedUpdate && why)
           return "update sharding: " + *why;
         if (!p.shardedUpdate && !why && problem.updateSharding == UpdateSharding::On)
           return std::string("update-sharding=on: the replicas shard the update");
         // Left to the search, the replicas shard their update where its
         // state does not fit whole. Measured on hosts (two ranks over
         // shared memory, bench/data_parallel.py), the sharded step is a few
         // percent slower than the all-reduce's: the update streams from
         // cache faster than the model's memory rate, so less is saved, and
         // the blocking gathers wait for the slower rank.
         if (p.shardedUpdate && problem.updateSharding == UpdateSharding::Auto) {
           Placement whole = p;
           whole.shardedUpdate = false;
           if (!memoryCheck(whole))
             return std::string("the replicas' whole update fits: update sharding is "
                                "for memory (--update-sharding=on forces it)");
         }
         return std::nullopt;
       }});
  spec.filters.push_back({"isa", [&](const Placement &p) -> Check {
                            l1::NodeOp c = system.lookupNode(p.compute);
                            if (!nominalThroughput(c))
                              return "@" + p.compute + " (isa " +
                                     c.getIsa().value_or("?").str() +
                                     ") cannot run tensor graphs (x86_64, cuda, ipu21, ipu2)";
                            l1::NodeOp h = system.lookupNode(p.host);
                            if (h.getIsa().value_or("") != "x86_64")
                              return "@" + p.host + " (isa " +
                                     h.getIsa().value_or("?").str() +
                                     ") cannot run host stages (x86_64)";
                            return std::nullopt;
                          }});
  spec.filters.push_back({"topology", [&](const Placement &p) -> Check {
                            if (p.deviceMem.empty())
                              return "@" + p.compute +
                                     " has no memory of its own (vram) and no "
                                     "memory node at an edge";
                            if (problem.hasUnboundFields && p.storage.empty())
                              return "no storage node reaches @" + p.staging;
                            SmallVector<std::string> src = sourcesFor(p);
                            for (const std::string &s : src) {
                              if (!topo.hasPath(s, p.staging))
                                return "no path from storage @" + s + " to @" + p.staging;
                              if (!topo.hasPath(s, p.host))
                                return "no path from storage @" + s + " to host @" + p.host;
                            }
                            std::pair<StringRef, StringRef> needed[] = {
                                {p.host, p.compute},      {p.compute, p.host},
                                {p.staging, p.deviceMem}, {p.deviceMem, p.staging}};
                            for (auto [from, to] : needed)
                              if (!topo.hasPath(from, to))
                                return ("no path from @" + from + " to @" + to).str();
                            return std::nullopt;
                          }});
  spec.filters.push_back({"memory", memoryCheck});

  spec.score = [&](const Placement &p) {
    Rank rank = rankOf(problem, topo, p);
    StepTimes t = stepTimes(problem, topo, p, rank);
    double serial = t.transfer + t.compute();
    // At depth d, up to d steps are in flight: transfers overlap the
    // compute of other steps, but the actor fences compute between steps.
    double overlapped =
        std::max({t.transfer, t.compute(), serial / double(p.depth)});
    double bubble = double(p.depth - 1) / double(p.depth * p.stageCount());
    uint64_t peak = devicePeakBytes(problem, p);
    if (!p.needsTransfer())
      peak = saturatingAdd(peak, stagingPeakBytes(problem, p));
    double capacity = double(memoryOf(system, p.deviceMem).value_or(1));
    SmallVector<search::CostTerm> terms;
    terms.push_back({"transfer_s", t.transfer, 1});
    terms.push_back({"contraction_s", t.contraction, 1});
    terms.push_back({"memory_s", t.memory, 1});
    terms.push_back({"launch_s", t.launch, 1});
    // What the step waits for of the all-reduce (bench/data_parallel.py
    // checks it against measured runs).
    terms.push_back({"allreduce_s", allReduceSeconds(problem, topo, p, rank, t), 1});
    terms.push_back({"tp_collectives_s", tensorParallelSeconds(problem, topo, p, rank), 1});
    terms.push_back({"overlap_s", overlapped - serial, 1});
    terms.push_back({"bubble", bubble, overlapped});
    terms.push_back({"memory_pressure", double(peak) / capacity, kPressureWeightSeconds});
    return terms;
  };
  // The scaling model: the best candidate per replica count (data
  // parallel) and per shard count (tensor parallel), its predicted step
  // time and the speedup over one process.
  struct Best {
    double cost = std::numeric_limits<double>::infinity();
    double compute = 0, collectives = 0;
    std::string what;
  };
  std::map<std::pair<bool, int64_t>, Best> bestPer; // (tensor parallel, ranks)
  spec.observe = [&](const Placement &p, const SmallVector<search::CostTerm> &terms) {
    Best &b = bestPer[{p.shardCount() > 1, p.rankCount()}];
    double cost = search::totalCost(terms);
    if (cost >= b.cost)
      return;
    b.cost = cost;
    b.compute = b.collectives = 0;
    for (const search::CostTerm &t : terms) {
      if (t.name == "contraction_s" || t.name == "memory_s" || t.name == "launch_s")
        b.compute += t.value;
      else if (t.name == "allreduce_s" || t.name == "tp_collectives_s")
        b.collectives += t.value;
    }
    b.what = describe(p);
  };
  spec.notes = [&]() {
    std::vector<std::string> lines;
    if (bestPer.size() < 2 && (bestPer.empty() || bestPer.begin()->first.second == 1))
      return lines; // one process only: nothing to scale
    lines.push_back("scaling (data parallel: ring all-reduce of " +
                    formatBytes(problem.gradientBytes) +
                    " of gradients; tensor parallel: the split linears' gathers and sums; "
                    "predicted seconds per step):");
    double one = bestPer.count({false, 1}) ? bestPer[{false, 1}].cost : 0;
    for (auto &[key, b] : bestPer) {
      auto [tensor, d] = key;
      std::string what = d == 1   ? "1 process  "
                         : tensor ? std::to_string(d) + " shards   "
                                  : std::to_string(d) + " replicas ";
      lines.push_back(llvm::formatv("  {0}: {1:e3} s (compute {2:e3}, {3} {4:e3}){5}  {6}", what,
                                    b.cost, b.compute, tensor ? "collectives" : "all-reduce",
                                    b.collectives,
                                    one > 0 ? llvm::formatv(", x{0:f2}", one / b.cost).str()
                                            : std::string(),
                                    b.what)
                          .str());
      if (tensor)
        lines.push_back("      split: " +
                        describeSplits(splitLinears(problem.splittable, d)));
    }
    return lines;
  };
  return search::searchAndReport(loc, spec);
}
