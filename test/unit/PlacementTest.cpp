//===- PlacementTest.cpp - The L2 -> L1 placement search ------------------===//
//
// lib/Conversion/L2ToL1/Placement.cpp: node facts (nominal throughput, the
// memory a compute node keeps its buffers in) and the search's choices on
// small systems: the faster node wins, memory and hints filter, the result
// is deterministic, and a failure says which check rejected what.
//
//===----------------------------------------------------------------------===//
#include "Conversion/L2ToL1/L2ToL1Impl.h"

#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <catch2/catch.hpp>

using namespace mlir;
using namespace synpl;

namespace {

struct System {
  std::unique_ptr<MLIRContext> ctx;
  OwningOpRef<ModuleOp> module;
  l1::SystemOp system;
  std::string errors;

  explicit System(StringRef body) {
    DialectRegistry registry;
    registerAllDialects(registry);
    ctx = std::make_unique<MLIRContext>(registry);
    ctx->loadAllAvailableDialects();
    module = parseSourceString<ModuleOp>(("l1.system @s {\n" + body + "\n}\n").str(),
                                         ctx.get());
    REQUIRE(module);
    system = *module->getOps<l1::SystemOp>().begin();
  }
  l1::NodeOp node(StringRef name) { return system.lookupNode(name); }

  FailureOr<l2tol1::Placement> place(const l2tol1::PlacementProblem &problem) {
    ScopedDiagnosticHandler diag(ctx.get(), [&](Diagnostic &d) {
      errors += d.str() + "\n";
      for (Diagnostic &note : d.getNotes())
        errors += note.str() + "\n";
      return success();
    });
    return l2tol1::searchPlacement(UnknownLoc::get(ctx.get()), problem);
  }
};

constexpr const char *kSingleGpu = R"(
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "32GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 8}
  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB", sm = 84}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"
)";

l2tol1::PlacementProblem mnistLike(l1::SystemOp system) {
  l2tol1::PlacementProblem p;
  p.system = system;
  p.persistentBytes = 3u << 20;
  p.batchBytes = 128 * (784 * 4 + 1);
  p.gradientBytes = 1u << 20;
  p.reportBytes = 8;
  p.activationBytes = 4u << 20;
  p.contractionFlops = 200000000;
  p.elementwiseStreamBytes = 20000000;
  p.updateStreamBytes = 8000000;
  p.hasUnboundFields = true;
  return p;
}

} // namespace

TEST_CASE("placement: node facts", "[l2tol1][placement]") {
  System s(std::string(kSingleGpu) + R"(
  l1.node @lonely compute {isa = "x86_64"}
  l1.node @dsp compute {isa = "hexagon"}
  )");
  CHECK(*l2tol1::nominalThroughput(s.node("cpu_0")) == Approx(8 * 64.0e9));
  CHECK(*l2tol1::nominalThroughput(s.node("gpu_0")) == Approx(84 * 384.0e9));
  CHECK(*l2tol1::nominalThroughput(s.node("lonely")) == Approx(64.0e9));
  CHECK_FALSE(l2tol1::nominalThroughput(s.node("dsp")));
  CHECK_FALSE(l2tol1::nominalThroughput(s.node("ram_0")));
  // A GPU keeps its buffers in its vram, a CPU in the RAM at its edge, a
  // CPU without an edge to memory nowhere.
  CHECK(*l2tol1::bufferNodeOf(s.system, s.node("gpu_0")) == "gpu_0");
  CHECK(*l2tol1::bufferNodeOf(s.system, s.node("cpu_0")) == "ram_0");
  CHECK_FALSE(l2tol1::bufferNodeOf(s.system, s.node("lonely")));
}

TEST_CASE("placement: the GPU wins on single_gpu, deterministically", "[l2tol1][placement]") {
  System s(kSingleGpu);
  auto a = s.place(mnistLike(s.system));
  auto b = s.place(mnistLike(s.system));
  INFO(s.errors);
  REQUIRE(succeeded(a));
  REQUIRE(succeeded(b));
  CHECK(a->compute == "gpu_0");
  CHECK(a->host == "cpu_0");
  CHECK(a->staging == "ram_0");
  CHECK(a->deviceMem == "gpu_0");
  CHECK(a->storage == "ssd_0");
  CHECK(a->needsTransfer());
  CHECK(a->stageCount() == 4);
  CHECK(a->compute == b->compute);
  CHECK(a->depth == b->depth);
}

TEST_CASE("placement: hints and memory filter", "[l2tol1][placement]") {
  System s(kSingleGpu);
  l2tol1::PlacementProblem p = mnistLike(s.system);
  p.forcedNode = "cpu_0";
  auto forced = s.place(p);
  REQUIRE(succeeded(forced));
  CHECK(forced->compute == "cpu_0");
  CHECK_FALSE(forced->needsTransfer());
  CHECK(forced->deviceMem == "ram_0");

  // State larger than the vram but within the RAM: the CPU.
  p.forcedNode.reset();
  p.persistentBytes = 25000000000ull; // > 24GB vram, < 32GB RAM
  p.activationBytes = 0;
  auto big = s.place(p);
  REQUIRE(succeeded(big));
  CHECK(big->compute == "cpu_0");

  // Larger than every memory: a located failure naming the check.
  p.persistentBytes = 64ull << 30;
  CHECK(failed(s.place(p)));
  CHECK(s.errors.find("no candidates") != std::string::npos);
  CHECK(s.errors.find("check 'memory' rejected") != std::string::npos);
}

//===----------------------------------------------------------------------===//
// Tensor parallelism: how a shard count splits the linears
//===----------------------------------------------------------------------===//

namespace {
l2tol1::SplitLinear linear(std::string name, int64_t in, int64_t out, bool inputGrad = true,
                           int feeds = -1) {
  l2tol1::SplitLinear s;
  s.name = std::move(name);
  s.rows = 128;
  s.in = in;
  s.out = out;
  s.inputGrad = inputGrad;
  s.feeds = feeds;
  return s;
}
} // namespace

TEST_CASE("tensor parallel: a column split feeding a row split through activations pairs",
          "[placement][tensor-parallel]") {
  // fc1 -> act -> fc2, then fc3 on its own (wide to narrow, input gradient
  // needed: rows), fc4 narrow to wide (columns).
  SmallVector<l2tol1::SplitLinear> all{linear("fc1", 784, 256, false, 1), linear("fc2", 256, 256),
                                       linear("fc3", 256, 64), linear("fc4", 64, 256)};
  auto splits = l2tol1::splitLinears(all, 2);
  REQUIRE(splits.size() == 4);
  CHECK(l2tol1::describeSplits(splits) ==
        "fc1 by columns, fc2 by rows (paired with fc1), fc3 by rows, fc4 by columns");
  CHECK(splits[0].blockOut);
  CHECK_FALSE(splits[0].blockIn);
  CHECK(splits[1].blockIn);
  CHECK_FALSE(splits[1].blockOut);
  CHECK_FALSE(splits[2].blockIn);
  CHECK(splits[0].weightAxis() == 1);
  CHECK(splits[1].weightAxis() == 0);
}

TEST_CASE("tensor parallel: each linear by the axis the shard count divides, or not at all",
          "[placement][tensor-parallel]") {
  // 3 shards: fc1's 255 outputs and fc2's 255 inputs divide: the pair;
  // fc3 divides neither axis and stays whole.
  SmallVector<l2tol1::SplitLinear> all{linear("fc1", 784, 255, false, 1), linear("fc2", 255, 256),
                                       linear("fc3", 256, 256)};
  auto splits = l2tol1::splitLinears(all, 3);
  CHECK(l2tol1::describeSplits(splits) == "fc1 by columns, fc2 by rows (paired with fc1)");
  // fc1's 783 inputs divide but not its outputs, fc2's outputs but not its
  // inputs: no pair, each by the axis that divides.
  all[0].in = 783;
  all[0].out = 256;
  all[1].in = 256;
  all[1].out = 255;
  CHECK(l2tol1::describeSplits(l2tol1::splitLinears(all, 3)) ==
        "fc1 by rows, fc2 by columns");
  all[0].in = 784;
  all[1].out = 256;
  CHECK(l2tol1::splitLinears(all, 3).empty());
  // Without an input gradient, columns gather the output once where rows
  // would sum it: columns, though both divide.
  SmallVector<l2tol1::SplitLinear> first{linear("fc1", 1024, 256, false)};
  CHECK(l2tol1::describeSplits(l2tol1::splitLinears(first, 2)) == "fc1 by columns");
}

//===----------------------------------------------------------------------===//
// The scaling model: what each form costs decides between them
//===----------------------------------------------------------------------===//

namespace {
constexpr const char *kTwoHosts = R"(
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {cores = 1, isa = "x86_64"}
  l1.node @ram_1 memory {capacity = "16GB"}
  l1.node @cpu_1 compute {cores = 1, isa = "x86_64"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
  l1.edge @ram_1 <-> @cpu_1 bandwidth "50GB/s"
  l1.edge @ram_0 <-> @ram_1 bandwidth "1.25GB/s"
)";

/// The Fashion-MNIST MLP's figures (global batch 128, Adam): fc1 784 -> 256
/// on the model's input, fc2 256 -> 256.
l2tol1::PlacementProblem mlpOnTwoHosts(l1::SystemOp system) {
  l2tol1::PlacementProblem p = mnistLike(system);
  p.gradientBytes = 1081384;
  p.lastGradientBytes = (784 * 256 + 256) * 4;
  p.persistentBytes = 3 * p.gradientBytes;
  p.optimizerStatePerParam = 2;
  p.updateBytesPerParamByte = 7;
  p.contractionFlops = 155000000;
  p.elementwiseStreamBytes = 3200000;
  p.updateStreamBytes = 7 * p.gradientBytes;
  p.largestComputedBytes = 128 * 256 * 4;
  p.globalBatch = 128;
  p.splittable = {linear("fc1", 784, 256, false), linear("fc2", 256, 256)};
  return p;
}
} // namespace

TEST_CASE("scaling model: replicas repeat the update, shards split it",
          "[placement][scaling]") {
  System s(kTwoHosts);
  // The MLP: each replica would stream the whole Adam update and wait for
  // the first layer's gradients on the slow link; the shards win.
  l2tol1::PlacementProblem p = mlpOnTwoHosts(s.system);
  auto mlp = s.place(p);
  INFO(s.errors);
  REQUIRE(succeeded(mlp));
  CHECK(mlp->shardCount() == 2);
  CHECK(mlp->replicaCount() == 1);
  // Ten times the batch: the contractions and elementwise layers the
  // replicas halve outweigh the update they repeat, and the shards'
  // activations to gather grow with the batch; the replicas win.
  p.contractionFlops *= 10;
  p.elementwiseStreamBytes *= 10;
  p.activationBytes *= 10;
  p.batchBytes *= 10;
  p.globalBatch *= 10;
  for (l2tol1::SplitLinear &l : p.splittable)
    l.rows *= 10;
  auto big = s.place(p);
  REQUIRE(succeeded(big));
  CHECK(big->replicaCount() == 2);
  // Nothing to split: replicas or one process. With the gradients the
  // backward pass produces last a small share of them, their all-reduce
  // hides behind the backward pass and the replicas win; when they are
  // nearly all of them, it cannot, and one process does.
  p = mlpOnTwoHosts(s.system);
  p.splittable.clear();
  p.contractionFlops = 100000000;
  p.lastGradientBytes = p.gradientBytes / 20;
  auto hidden = s.place(p);
  REQUIRE(succeeded(hidden));
  CHECK(hidden->replicaCount() == 2);
  p.lastGradientBytes = p.gradientBytes;
  auto exposed = s.place(p);
  REQUIRE(succeeded(exposed));
  CHECK(exposed->replicaCount() == 1);
}

TEST_CASE("update sharding: forced, refused, or left for memory", "[placement][scaling]") {
  // The MLP as two replicas (distributed_shard fixes them): fc1 and fc2's
  // weights qualify for update sharding, the biases and fc3 do not.
  auto replicasOf = [](l1::SystemOp system) {
    l2tol1::PlacementProblem p = mlpOnTwoHosts(system);
    p.splittable.clear();
    p.shards = 2;
    p.paramRowsAndElements = {{784, 784 * 256}, {256, 256}, {256, 256 * 256},
                              {256, 256},       {256, 2560}, {10, 10}};
    return p;
  };
  std::string fast = kTwoHosts;
  fast.replace(fast.find("1.25GB/s"), 8, "10GB/s");
  System f(fast.c_str());
  // Left to the search, with memory enough for the whole update: the
  // replicas update everything (sharding is for memory).
  l2tol1::PlacementProblem p = replicasOf(f.system);
  auto plain = f.place(p);
  INFO(f.errors);
  REQUIRE(succeeded(plain));
  CHECK(plain->replicaCount() == 2);
  CHECK_FALSE(plain->shardedUpdate);
  // `on` shards it.
  p.updateSharding = l2tol1::UpdateSharding::On;
  auto on = f.place(p);
  REQUIRE(succeeded(on));
  CHECK(on->replicaCount() == 2);
  CHECK(on->shardedUpdate);
  // An update that needs whole gradients, or rows the replicas do not
  // divide: nothing to shard, even when asked.
  p.updateShardingObstacle = "gradient_clip ...";
  auto clip = f.place(p);
  REQUIRE(succeeded(clip));
  CHECK_FALSE(clip->shardedUpdate);
  p = replicasOf(f.system);
  p.updateSharding = l2tol1::UpdateSharding::On;
  p.paramRowsAndElements = {{785, 785 * 256}, {256, 256}};
  auto odd = f.place(p);
  REQUIRE(succeeded(odd));
  CHECK_FALSE(odd->shardedUpdate);
  // Off: never.
  p = replicasOf(f.system);
  p.updateSharding = l2tol1::UpdateSharding::Off;
  auto off = f.place(p);
  REQUIRE(succeeded(off));
  CHECK_FALSE(off->shardedUpdate);
}

namespace {
/// `n` GPUs on one host, a ring of NVLink edges (each stating `latency`
/// when it is not empty) and PCIe to the host.
std::string gpuRing(int n, StringRef latency) {
  std::string s = R"(
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "2TB"}
  l1.node @cpu_0 compute {cores = 16, isa = "x86_64"}
  l1.edge @ssd_0 -> @ram_0 bandwidth "7GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "200GB/s"
)";
  for (int i = 0; i < n; ++i)
    s += "  l1.node @gpu_" + std::to_string(i) +
         " compute {isa = \"cuda\", sm = 132, vram = \"80GB\"}\n  l1.edge @cpu_0 <-> @gpu_" +
         std::to_string(i) + " bandwidth \"64GB/s\"\n";
  for (int i = 0; i < n; ++i)
    s += "  l1.edge @gpu_" + std::to_string(i) + " <-> @gpu_" + std::to_string((i + 1) % n) +
         " bandwidth \"450GB/s\"" +
         (latency.empty() ? std::string() : " latency \"" + latency.str() + "\"") + "\n";
  return s;
}
} // namespace

TEST_CASE("scaling model: kernels' fixed costs and links' latencies",
          "[placement][scaling]") {
  System s(gpuRing(8, "").c_str());
  // The MLP on GPUs: a step of about forty small kernels, each a few
  // microseconds however little it computes. Split among replicas, every
  // replica still runs all of them, and adds the all-reduce: one GPU.
  l2tol1::PlacementProblem p = mlpOnTwoHosts(s.system);
  p.splittable.clear();
  p.kernelsPerStep = 3 * 8 + 6;
  auto small = s.place(p);
  INFO(s.errors);
  REQUIRE(succeeded(small));
  CHECK(small->replicaCount() == 1);
  // A thousand times the batch's compute: the kernels are long, the
  // replicas share them, and the ring's 14 steps over NVLink (2 us each
  // by default) are cheap: all eight GPUs.
  p.contractionFlops *= 1000;
  p.elementwiseStreamBytes *= 1000;
  p.globalBatch *= 1000;
  auto big = s.place(p);
  REQUIRE(succeeded(big));
  CHECK(big->replicaCount() == 8);
  // The same links stating a latency of 2 ms: the ring's steps now cost
  // more than the compute the replicas save, and one GPU wins again.
  System slow(gpuRing(8, "2ms").c_str());
  p.system = slow.system;
  auto latent = slow.place(p);
  INFO(slow.errors);
  REQUIRE(succeeded(latent));
  CHECK(latent->replicaCount() == 1);
}
