//===- CudaKernelSimTest.cpp - CUDA kernels against their host lowering ---===//
//
// Execution evidence for the CUDA lowering of ordinary kernels without a
// GPU. The spec's Fashion-MNIST program placed on one GPU
// (test/Tools/synplc/Inputs/single_gpu.syn) goes through the front end and
// L3 -> L2 -> L1 -> L0 -> packing -> block-reduce -> launch search (sm_80),
// as synplc does. The plan is then lowered twice:
//
// * its device kernels by --synpl-convert-l0uop-to-nvvm{chip=sm_80
//   tensor-cores=false fast-math=false} (the .rn math forms, no
//   contraction), run on the SIMT interpreter of NvvmSim.h over the
//   kernel's whole launch (every block);
// * the same kernels by --synpl-convert-l0uop-to-llvm, JIT-compiled and run
//   over [0, host_iterations) as the host runtime runs them.
//
// Both start from the same pseudo-random buffers (inputs and outputs: an
// output may be read before it is written); every output element must
// agree. Block-reduce ran before both lowerings, so both sum in the same
// tree; the remaining slack is the approximate PTX forms (ex2/lg2/sin
// .approx, interpreted as the exact value rounded to f32) against libm.
//
// Also: the same with fast-math (synplc's default); the hand-written kernels
// of test/Conversion/L0ToNVVM (barrier fission, leader stores, 3-D ranges,
// every math form); the interpreter's own launch/barrier/fault semantics.
// Hidden (slow): the eight tiled matmuls against the host
// ("[cuda-sim-tiled]", ~45 s) and other launches of the Fashion-MNIST
// kernels ("[cuda-sim-variants]": no launch search, no block-reduce, sm_90).
//
//===----------------------------------------------------------------------===//
#include "HostJit.h"
#include "NvvmSim.h"
#include "TestContext.h"

#include "synpl/Conversion/Passes.h"
#include "synpl/Dialect/L0Ctl/L0CtlOps.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Frontend/Syn.h"
#include "synpl/InitAll.h"
#include "synpl/Pipelines/Pipelines.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#ifndef SYNPL_SOURCE_DIR
#error "SYNPL_SOURCE_DIR must point at the source tree"
#endif

using namespace mlir;
using namespace synpl;
using namespace synpl::test;

extern "C" __bf16 synplTestTruncSfBf2(float f) {
  uint16_t h = synpl::test::floatToBf16(f);
  __bf16 r;
  std::memcpy(&r, &h, 2);
  return r;
}

namespace {

/// A 256-byte aligned buffer (the kernels' `llvm.align` is at most 256).
struct Aligned {
  explicit Aligned(size_t n) : size(n) {
    data = static_cast<uint8_t *>(std::aligned_alloc(256, (n + 255) / 256 * 256 + 256));
  }
  ~Aligned() { std::free(data); }
  Aligned(const Aligned &) = delete;
  Aligned &operator=(const Aligned &) = delete;
  uint8_t *data;
  size_t size;
};

OwningOpRef<ModuleOp> parseSynFile(const std::string &path, MLIRContext *ctx) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return {};
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  return parseSyn(sourceMgr, ctx);
}

using synpl::test::runPipeline;

/// The plan of a spec (by default the Fashion-MNIST example) on one GPU:
/// L0 after packing, block-reduce and the sm_80 launch search.
OwningOpRef<ModuleOp> fashionMnistOnGpu(
    MLIRContext *ctx, const std::string &l0Passes,
    const std::string &spec = "/examples/fashion_mnist/fashion_mnist.syn") {
  std::string root = SYNPL_SOURCE_DIR;
  OwningOpRef<ModuleOp> module = parseSynFile(root + spec, ctx);
  REQUIRE(module);
  REQUIRE(succeeded(runPipeline(*module, "synpl-l3-to-l2")));
  OwningOpRef<ModuleOp> system =
      parseSynFile(root + "/test/Tools/synplc/Inputs/single_gpu.syn", ctx);
  REQUIRE(system);
  auto systems = system->getBody()->getOps<l1::SystemOp>();
  REQUIRE(std::distance(systems.begin(), systems.end()) == 1);
  for (auto old : llvm::make_early_inc_range(module->getBody()->getOps<l1::SystemOp>()))
    old.erase();
  module->getBody()->push_front((*systems.begin())->clone());
  // The device kernels are the subject: the graph on the GPU, though a
  // model this small runs faster on the host.
  REQUIRE(succeeded(runPipeline(*module, "synpl-l2-to-l1{graph-isa=cuda}")));
  {
    PassManager pm(ctx);
    HostPipelineOptions options;
    options.executable = true;
    buildHostEmissionPipeline(pm, options);
    REQUIRE(succeeded(pm.run(*module)));
  }
  if (!l0Passes.empty())
    REQUIRE(succeeded(runPipeline(*module, l0Passes)));
  return module;
}

struct Tally {
  int compared = 0, positive = 0;
  std::vector<std::string> skipped;
  std::vector<std::string> comparedNames;
  double maxRel = 0;
  std::string maxRelAt;
  std::chrono::duration<double> simTime{0};
  int withShared = 0, withBarrier = 0, multiDim = 0;
  std::set<std::string> ops; ///< the ops of the compared device functions
};

} // namespace

static Tally compareModule(ModuleOp l0, bool tiledOnly, bool fastMath,
                           const std::string &chip);

/// A context with everything the pipelines, the JIT and the NVVM lowering
/// need; `errors` collects the error diagnostics.
struct Env {
  Env() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    registerAllPasses();
    DialectRegistry registry;
    registerHostCodegen(registry);
    registerCudaCodegen(registry);
    ctx = std::make_unique<MLIRContext>(registry);
    ctx->loadAllAvailableDialects();
    handler = std::make_unique<ScopedDiagnosticHandler>(
        ctx.get(), [this](Diagnostic &d) {
          if (d.getSeverity() == DiagnosticSeverity::Error)
            errors += d.str() + "\n";
          return success();
        });
  }
  std::unique_ptr<MLIRContext> ctx;
  std::unique_ptr<ScopedDiagnosticHandler> handler;
  std::string errors;
};

/// Runs the Fashion-MNIST plan's device kernels (the generic ones, or only
/// the tiled matmuls) on the interpreter and on the host.
static Tally compareDeviceKernels(
    bool tiledOnly, bool fastMath = false, const std::string &chip = "sm_80",
    const std::string &l0Passes =
        "synpl-l0-block-reduce,synpl-l0-tune-launch{chip=sm_80}",
    const std::string &spec = "/examples/fashion_mnist/fashion_mnist.syn") {
  Env env;
  OwningOpRef<ModuleOp> l0 = fashionMnistOnGpu(env.ctx.get(), l0Passes, spec);
  INFO(env.errors);
  return compareModule(*l0, tiledOnly, fastMath, chip);
}

/// Every device kernel of every plan of `l0`: lowered to NVVM and run on the
/// interpreter, lowered for the host and JIT-run, outputs compared.
static Tally compareModule(ModuleOp l0, bool tiledOnly, bool fastMath,
                           const std::string &chip) {
  // (a) The device copy: NVVM, the exact (.rn) forms.
  OwningOpRef<ModuleOp> device = l0.clone();
  REQUIRE(succeeded(runPipeline(
      *device, "synpl-convert-l0uop-to-nvvm{chip=" + chip +
                   " tensor-cores=false fast-math=" +
                   (fastMath ? "true" : "false") + "}")));
  // (b) The host copy: every kernel (device ones included) for the CPU.
  OwningOpRef<ModuleOp> host = l0.clone();
  if (failed(runPipeline(*host, "synpl-convert-l0uop-to-llvm{keep-plan=true}"))) {
    // Some device kernels have no host form (e.g. a BARRIER the host cannot
    // split): nothing to compare them with.
    Tally tally;
    for (auto plan : device->getOps<l0uop::PlanOp>())
      for (auto kernel : plan.getOps<l0uop::KernelOp>())
        if (kernel->hasAttr("device_entry"))
          tally.skipped.push_back(kernel.getSymName().str() +
                                  " (no host lowering of its module)");
    return tally;
  }
  OwningOpRef<ModuleOp> code = host->clone();
  for (Operation &op : llvm::make_early_inc_range(code->getBody()->getOperations()))
    if (isa<l0uop::PlanOp>(op) || isa<l0ctl::L0CtlDialect>(op.getDialect()))
      op.erase();
  // No reassociation or contraction: the kernels' own order of operations.
  auto optimize = makeOptimizingTransformer(/*optLevel=*/1, /*sizeLevel=*/0,
                                            nullptr);
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = optimize;
  auto created = ExecutionEngine::create(*code, engineOptions);
  std::string jitError;
  if (!created)
    jitError = llvm::toString(created.takeError());
  INFO(jitError);
  REQUIRE(jitError.empty());
  std::unique_ptr<ExecutionEngine> engine = std::move(*created);
  // The host runtime's kernel scratch, and compiler-rt's f32 -> bf16 (the
  // JIT links no runtime library).
  synpl::test::bindRuntime(
      *engine, {{"__truncsfbf2", reinterpret_cast<void *>(&synplTestTruncSfBf2)}});

  Tally tally;
  for (l0uop::PlanOp devPlan : device->getOps<l0uop::PlanOp>()) {
  auto gpuModule = device->lookupSymbol<gpu::GPUModuleOp>(
      (devPlan.getSymName() + "_cuda").str());
  if (!gpuModule)
    continue; // no device kernel
  auto hostPlan = host->lookupSymbol<l0uop::PlanOp>(devPlan.getSymName());
  REQUIRE(hostPlan);
  SymbolTable hostSymbols(hostPlan);
  for (l0uop::KernelOp kernel : devPlan.getOps<l0uop::KernelOp>()) {
    auto entry = kernel->getAttrOfType<StringAttr>("device_entry");
    if (!entry)
      continue; // a host kernel
    std::string name = kernel.getSymName().str();
    INFO("kernel @" << name << " (entry " << entry.getValue().str() << ")");
    auto func = gpuModule.lookupSymbol<LLVM::LLVMFuncOp>(entry.getValue());
    REQUIRE(func);
    ArrayRef<int64_t> grid = kernel.getGrid(), block = kernel.getBlock();
    // The tiled matmuls (TiledMatmul.cpp) have their own launch and their
    // own test (TiledMatmulTest.cpp): recognised by their shared array.
    bool tiled = false;
    func.walk([&](NVVM::CpAsyncOp) { tiled = true; });
    func.walk([&](LLVM::AddressOfOp a) {
      tiled |= a.getGlobalName() == (entry.getValue() + "_smem").str();
    });
    if (tiled != tiledOnly) {
      tally.skipped.push_back(name + (tiled ? " (tiled matmul)" : " (not tiled)"));
      continue;
    }
    func.walk([&](Operation *op) {
      tally.ops.insert(op->getName().getStringRef().str());
      if (auto call = dyn_cast<LLVM::CallIntrinsicOp>(op))
        tally.ops.insert(call.getIntrin().str());
    });
    tally.withShared += kernel.getSharedMem() > 0;
    bool barrier = false;
    func.walk([&](NVVM::Barrier0Op) { barrier = true; });
    tally.withBarrier += barrier;
    if (grid[1] * grid[2] * block[1] * block[2] > 1)
      ++tally.multiDim;
    auto hostKernel = hostSymbols.lookup<l0uop::KernelOp>(name);
    REQUIRE(hostKernel);
    auto hostEntry = hostKernel->getAttrOfType<FlatSymbolRefAttr>("host_entry");
    auto iterations = hostKernel->getAttrOfType<IntegerAttr>("host_iterations");
    REQUIRE(hostEntry);
    REQUIRE(iterations);
    auto fn = engine->lookupPacked(hostEntry.getValue());
    if (!fn) {
      std::string msg = llvm::toString(fn.takeError());
      FAIL("no JIT'd function @" << hostEntry.getValue().str() << ": " << msg);
    }

    // Buffers: one per kernel argument (a slot is listed once).
    Block &body = hostKernel.getBody().front();
    unsigned nArgs = hostKernel.getNumInputs() + hostKernel.getNumOutputs();
    std::mt19937 rng(std::hash<std::string>()(name) & 0xffffffff);
    auto fill = [&](bool positive) {
      std::vector<std::vector<uint8_t>> bufs;
      std::mt19937 r = rng;
      std::uniform_int_distribution<int> sixtyfourths(-128, 128), label(0, 9);
      for (unsigned a = 0; a < nArgs; ++a) {
        auto buf = cast<l0uop::BufType>(body.getArgument(a).getType());
        Type e = buf.getElementType();
        size_t eb = sizeOf(e);
        std::vector<uint8_t> bytes(buf.getNumElements() * eb);
        for (uint64_t x = 0; x < buf.getNumElements(); ++x) {
          Val v;
          // Multiples of 1/64 in [-2, 2] (positive: (0, 2]); integers (labels,
          // pixels, counters) in [0, 10).
          // A one-element float (a step counter, a learning rate, the
          // training flag) is never negative: a counter converts to an
          // unsigned integer.
          int k = sixtyfourths(r);
          bool scalar = buf.getNumElements() == 1;
          v.f = (positive || scalar ? std::abs(k) + 1 : k) / 64.0;
          v.i = label(r);
          // A stored i1 (a mask) is a byte holding 0 or 1.
          if (e.isInteger(1))
            v.i &= 1;
          storeScalar(e, &bytes[x * eb], v);
        }
        bufs.push_back(std::move(bytes));
      }
      return bufs;
    };
    auto runHost = [&](std::vector<std::vector<uint8_t>> &bufs) {
      std::vector<std::unique_ptr<Aligned>> mem;
      std::vector<void *> ptrs;
      for (auto &b : bufs) {
        mem.push_back(std::make_unique<Aligned>(b.size()));
        std::memcpy(mem.back()->data, b.data(), b.size());
        ptrs.push_back(mem.back()->data);
      }
      int64_t begin = 0, end = iterations.getInt();
      std::vector<void *> args;
      for (void *&p : ptrs)
        args.push_back(&p);
      args.push_back(&begin);
      args.push_back(&end);
      (*fn)(args.data());
      for (size_t n = 0; n < bufs.size(); ++n)
        std::memcpy(bufs[n].data(), mem[n]->data, bufs[n].size());
    };
    auto hasNaN = [&](const std::vector<std::vector<uint8_t>> &bufs) {
      for (unsigned a = hostKernel.getNumInputs(); a < nArgs; ++a) {
        Type e = cast<l0uop::BufType>(body.getArgument(a).getType()).getElementType();
        if (!isa<FloatType>(e))
          continue;
        for (size_t x = 0; x * sizeOf(e) < bufs[a].size(); ++x)
          if (std::isnan(loadScalar(e, &bufs[a][x * sizeOf(e)]).f))
            return true;
      }
      return false;
    };
    // Signed inputs first; where they make NaNs (log2, sqrt of a negative),
    // positive ones, so that every output is a number.
    bool positive = false;
    std::vector<std::vector<uint8_t>> want = fill(false);
    runHost(want);
    if (hasNaN(want)) {
      positive = true;
      want = fill(true);
      runHost(want);
    }
    tally.positive += positive;
    CHECK_FALSE(hasNaN(want));

    // The device kernel over its whole launch, from the same buffers.
    std::vector<std::vector<uint8_t>> got = fill(positive);
    std::vector<std::unique_ptr<Aligned>> mem;
    std::vector<std::pair<uint8_t *, size_t>> args;
    for (auto &b : got) {
      mem.push_back(std::make_unique<Aligned>(b.size()));
      std::memcpy(mem.back()->data, b.data(), b.size());
      args.push_back({mem.back()->data, b.size()});
    }
    INFO("grid (" << grid[0] << ", " << grid[1] << ", " << grid[2]
                  << ") block (" << block[0] << ", " << block[1] << ", "
                  << block[2] << ") shared " << kernel.getSharedMem());
    NvvmSim sim(func, args, kernel.getSharedMem(), /*eagerCopies=*/false);
    auto start = std::chrono::steady_clock::now();
    bool ran = sim.runGrid({grid[0], grid[1], grid[2]},
                           {block[0], block[1], block[2]});
    tally.simTime += std::chrono::steady_clock::now() - start;
    INFO(sim.error);
    REQUIRE(ran);
    for (size_t n = 0; n < got.size(); ++n)
      std::memcpy(got[n].data(), mem[n]->data, got[n].size());

    // Every output element.
    for (unsigned a = hostKernel.getNumInputs(); a < nArgs; ++a) {
      Type e = cast<l0uop::BufType>(body.getArgument(a).getType()).getElementType();
      size_t eb = sizeOf(e);
      size_t bad = 0, first = 0;
      double firstGot = 0, firstWant = 0;
      for (size_t x = 0; x * eb < want[a].size(); ++x) {
        Val g = loadScalar(e, &got[a][x * eb]), w = loadScalar(e, &want[a][x * eb]);
        bool same;
        if (isa<FloatType>(e)) {
          double diff = std::fabs(g.f - w.f);
          double scale = std::max(std::fabs(g.f), std::fabs(w.f));
          // Relative 1e-5, plus the approximate forms' slack near zero.
          // (Equal infinities, e.g. a division by a zero count, agree.)
          same = g.f == w.f || diff <= 1e-5 * scale + 1e-6 ||
                 (std::isnan(g.f) && std::isnan(w.f));
          if (same && scale > 0 && diff / scale > tally.maxRel) {
            tally.maxRel = diff / scale;
            tally.maxRelAt = name;
          }
        } else {
          same = g.i == w.i;
        }
        if (!same && bad++ == 0) {
          first = x;
          firstGot = isa<FloatType>(e) ? g.f : double(g.i);
          firstWant = isa<FloatType>(e) ? w.f : double(w.i);
        }
      }
      INFO("output " << (a - hostKernel.getNumInputs()) << ": " << bad
                     << " elements differ; first at " << first << ": device "
                     << firstGot << ", host " << firstWant);
      CHECK(bad == 0);
    }
    ++tally.compared;
    tally.comparedNames.push_back(name);
  }
  }
  return tally;
}

static std::string describe(const Tally &tally) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "compared " << tally.compared << " device kernels (" << tally.positive
     << " on positive inputs; " << tally.withShared << " with shared memory, "
     << tally.withBarrier << " with barriers, " << tally.multiDim
     << " with a multi-dimensional launch), skipped " << tally.skipped.size()
     << ":\n";
  for (const std::string &k : tally.skipped)
    os << "  " << k << "\n";
  os << "max relative error " << tally.maxRel << " (" << tally.maxRelAt
     << "), simulation " << tally.simTime.count() << " s\nops:";
  for (const std::string &op : tally.ops)
    os << " " << op;
  return s;
}

TEST_CASE("Fashion-MNIST device kernels on the SIMT interpreter match their "
          "host lowering", "[cuda-sim]") {
  // The tiled matmuls are skipped here: TiledMatmulTest.cpp checks them
  // against their UOps (and the hidden case below against the host).
  Tally tally = compareDeviceKernels(/*tiledOnly=*/false);
  WARN(describe(tally));
  CHECK(tally.compared == 50);
  CHECK(tally.skipped.size() == 8);
  CHECK(tally.withShared > 0);
  CHECK(tally.withBarrier > 0);
}

TEST_CASE("Fashion-MNIST device kernels with fast-math on the SIMT "
          "interpreter match their host lowering", "[cuda-sim]") {
  // synplc's default: the .approx.ftz forms (interpreted as the exact value
  // rounded, flushed) and `contract` on the products and sums (the
  // interpreter rounds each op, as the host does): this checks the
  // structure of the fast path, not the hardware's last bits.
  Tally tally = compareDeviceKernels(/*tiledOnly=*/false, /*fastMath=*/true);
  WARN(describe(tally));
  CHECK(tally.compared == 50);
  CHECK(tally.ops.count("llvm.call_intrinsic"));
}

// A small convolutional network (test/unit/Inputs/small_cnn.syn: padded
// and strided convolutions, max pooling) on the GPU: its window kernels
// (unfold, fold), pooling and masks among the compared.
TEST_CASE("convolutional device kernels on the SIMT interpreter match their "
          "host lowering", "[cuda-sim]") {
  Tally tally = compareDeviceKernels(/*tiledOnly=*/false, false, "sm_80",
                                     "synpl-l0-block-reduce,synpl-l0-tune-launch{chip=sm_80}",
                                     "/test/unit/Inputs/small_cnn.syn");
  WARN(describe(tally));
  auto has = [&](llvm::StringRef part) {
    return llvm::any_of(tally.comparedNames,
                        [&](const std::string &n) { return llvm::StringRef(n).contains(part); });
  };
  CHECK(has("unfold"));
  CHECK(has("fold"));
  CHECK(tally.compared > 20);
}

TEST_CASE("dropout's device kernels on the SIMT interpreter match their host lowering",
          "[cuda-sim]") {
  Tally tally = compareDeviceKernels(/*tiledOnly=*/false, false, "sm_80",
                                     "synpl-l0-block-reduce,synpl-l0-tune-launch{chip=sm_80}",
                                     "/test/unit/Inputs/small_dropout.syn");
  WARN(describe(tally));
  // The draws (the step converted to the counter, 64-bit rounds) ran on both.
  CHECK(tally.ops.count("llvm.fptoui"));
  CHECK(tally.ops.count("llvm.urem"));
  CHECK(tally.compared > 10);
}

TEST_CASE("a transformer's device kernels on the SIMT interpreter match their host "
          "lowering", "[cuda-sim]") {
  Tally tally = compareDeviceKernels(/*tiledOnly=*/false, false, "sm_80",
                                     "synpl-l0-block-reduce,synpl-l0-tune-launch{chip=sm_80}",
                                     "/test/unit/Inputs/small_transformer.syn");
  WARN(describe(tally));
  auto has = [&](llvm::StringRef part) {
    return llvm::any_of(tally.comparedNames,
                        [&](const std::string &n) { return llvm::StringRef(n).contains(part); });
  };
  // The batched matmuls (attention's scores and values, forward and
  // backward) split their rows with DIV and MOD.
  CHECK(has("matmul"));
  CHECK(tally.ops.count("llvm.udiv") + tally.ops.count("llvm.sdiv") > 0);
  CHECK(tally.compared > 30);
  // Its tiled matmuls too (small: seconds), batched ones included.
  Tally tiled = compareDeviceKernels(/*tiledOnly=*/true, false, "sm_80",
                                     "synpl-l0-block-reduce,synpl-l0-tune-launch{chip=sm_80}",
                                     "/test/unit/Inputs/small_transformer.syn");
  WARN(describe(tiled));
  CHECK(tiled.compared > 10);
}

// The lowering's own lit inputs (hand-written kernels: barriers splitting
// guards, leader stores, 3-D ranges, shared buffers, every math form), each
// `// -----` chunk on its own.
TEST_CASE("the NVVM lit tests' device kernels on the SIMT interpreter match "
          "their host lowering", "[cuda-sim]") {
  Tally all;
  for (const char *file : {"barrier-shared.mlir", "ranges.mlir", "math.mlir",
                           "ops.mlir"}) {
    std::string path =
        std::string(SYNPL_SOURCE_DIR "/test/Conversion/L0ToNVVM/") + file;
    auto buffer = llvm::MemoryBuffer::getFile(path);
    REQUIRE(buffer);
    llvm::SmallVector<llvm::StringRef> chunks;
    (*buffer)->getBuffer().split(chunks, "// -----");
    for (auto [n, chunk] : llvm::enumerate(chunks)) {
      Env env;
      INFO(file << " chunk " << n);
      OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(chunk, env.ctx.get());
      INFO(env.errors);
      REQUIRE(module);
      for (bool fast : {false, true}) {
        // barrier-shared.mlir's @rev (a global_x RANGE over 4 blocks that
        // exchanges through a shared buffer across a BARRIER) and @tile (a
        // BARRIER inside a loop) have no host lowering: the host refuses
        // them (located), so they are skipped.
        Tally t = compareModule(*module, /*tiledOnly=*/false, fast, "sm_80");
        all.compared += t.compared;
        all.withShared += t.withShared;
        all.withBarrier += t.withBarrier;
        all.multiDim += t.multiDim;
        all.positive += t.positive;
        all.skipped.insert(all.skipped.end(), t.skipped.begin(), t.skipped.end());
        all.ops.insert(t.ops.begin(), t.ops.end());
        all.simTime += t.simTime;
        if (t.maxRel > all.maxRel) {
          all.maxRel = t.maxRel;
          all.maxRelAt = std::string(file) + " " + t.maxRelAt;
        }
      }
    }
  }
  WARN(describe(all));
  CHECK(all.compared == 18);
  CHECK(all.skipped.size() == 4);
}

// Other launches of the same kernels: L1 -> L0's own (no launch search),
// no block reductions, the sm_90 search (slow: "[cuda-sim-variants]").
TEST_CASE("Fashion-MNIST device kernels under other launches on the SIMT "
          "interpreter match their host lowering", "[.][cuda-sim-variants]") {
  for (const char *passes :
       {"", "synpl-l0-block-reduce", "synpl-l0-tune-launch{chip=sm_80}",
        "synpl-l0-block-reduce,synpl-l0-tune-launch{chip=sm_90}"}) {
    INFO("L0 passes: " << passes);
    std::string chip = llvm::StringRef(passes).contains("sm_90") ? "sm_90" : "sm_80";
    Tally tally = compareDeviceKernels(/*tiledOnly=*/false, false, chip, passes);
    WARN(passes << ": " << describe(tally));
    CHECK(tally.compared > 0);
  }
}

// The eight tiled matmul kernels (tensor-cores=false: the f32 SIMT tiles)
// the same way (slow: `synpl-unit-tests "[cuda-sim-tiled]"`).
TEST_CASE("Fashion-MNIST tiled matmul kernels on the SIMT interpreter match "
          "their host lowering", "[.][cuda-sim-tiled]") {
  Tally tally = compareDeviceKernels(/*tiledOnly=*/true);
  WARN(describe(tally));
  CHECK(tally.compared == 8);
}

//===----------------------------------------------------------------------===//
// The interpreter itself: launch registers, barriers, unknown ops
//===----------------------------------------------------------------------===//

static const char *kSimKernels = R"mlir(
module {
  llvm.mlir.global external @__synpl_dynamic_shared() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
  llvm.func @ids(%out: !llvm.ptr) attributes {nvvm.kernel} {
    %tx = nvvm.read.ptx.sreg.tid.x : i32
    %ty = nvvm.read.ptx.sreg.tid.y : i32
    %tz = nvvm.read.ptx.sreg.tid.z : i32
    %nx = nvvm.read.ptx.sreg.ntid.x : i32
    %ny = nvvm.read.ptx.sreg.ntid.y : i32
    %nz = nvvm.read.ptx.sreg.ntid.z : i32
    %bx = nvvm.read.ptx.sreg.ctaid.x : i32
    %by = nvvm.read.ptx.sreg.ctaid.y : i32
    %bz = nvvm.read.ptx.sreg.ctaid.z : i32
    %gx = nvvm.read.ptx.sreg.nctaid.x : i32
    %gy = nvvm.read.ptx.sreg.nctaid.y : i32
    %b0 = llvm.mul %bz, %gy : i32
    %b1 = llvm.add %b0, %by : i32
    %b2 = llvm.mul %b1, %gx : i32
    %blk = llvm.add %b2, %bx : i32
    %t0 = llvm.mul %tz, %ny : i32
    %t1 = llvm.add %t0, %ty : i32
    %t2 = llvm.mul %t1, %nx : i32
    %t = llvm.add %t2, %tx : i32
    %s0 = llvm.mul %nx, %ny : i32
    %size = llvm.mul %s0, %nz : i32
    %g0 = llvm.mul %blk, %size : i32
    %g = llvm.add %g0, %t : i32
    %one = llvm.mlir.constant(1 : i32) : i32
    %v = llvm.add %g, %one : i32
    %p = llvm.getelementptr %out[%g] : (!llvm.ptr, i32) -> !llvm.ptr, i32
    llvm.store %v, %p {alignment = 4 : i64} : i32, !llvm.ptr
    llvm.return
  }
  llvm.func @rotate(%out: !llvm.ptr) attributes {nvvm.kernel} {
    %base = llvm.mlir.addressof @__synpl_dynamic_shared : !llvm.ptr<3>
    %sh = llvm.addrspacecast %base : !llvm.ptr<3> to !llvm.ptr
    %t = nvvm.read.ptx.sreg.tid.x : i32
    %n = nvvm.read.ptx.sreg.ntid.x : i32
    %p = llvm.getelementptr %sh[%t] : (!llvm.ptr, i32) -> !llvm.ptr, i32
    llvm.store %t, %p {alignment = 4 : i64} : i32, !llvm.ptr
    nvvm.barrier0
    %one = llvm.mlir.constant(1 : i32) : i32
    %t1 = llvm.add %t, %one : i32
    %next = llvm.urem %t1, %n : i32
    %q = llvm.getelementptr %sh[%next] : (!llvm.ptr, i32) -> !llvm.ptr, i32
    %v = llvm.load %q {alignment = 4 : i64} : !llvm.ptr -> i32
    %o = llvm.getelementptr %out[%t] : (!llvm.ptr, i32) -> !llvm.ptr, i32
    llvm.store %v, %o {alignment = 4 : i64} : i32, !llvm.ptr
    llvm.return
  }
  llvm.func @rotate_nobarrier(%out: !llvm.ptr) attributes {nvvm.kernel} {
    %base = llvm.mlir.addressof @__synpl_dynamic_shared : !llvm.ptr<3>
    %sh = llvm.addrspacecast %base : !llvm.ptr<3> to !llvm.ptr
    %t = nvvm.read.ptx.sreg.tid.x : i32
    %n = nvvm.read.ptx.sreg.ntid.x : i32
    %p = llvm.getelementptr %sh[%t] : (!llvm.ptr, i32) -> !llvm.ptr, i32
    llvm.store %t, %p {alignment = 4 : i64} : i32, !llvm.ptr
    %one = llvm.mlir.constant(1 : i32) : i32
    %t1 = llvm.add %t, %one : i32
    %next = llvm.urem %t1, %n : i32
    %q = llvm.getelementptr %sh[%next] : (!llvm.ptr, i32) -> !llvm.ptr, i32
    %v = llvm.load %q {alignment = 4 : i64} : !llvm.ptr -> i32
    %o = llvm.getelementptr %out[%t] : (!llvm.ptr, i32) -> !llvm.ptr, i32
    llvm.store %v, %o {alignment = 4 : i64} : i32, !llvm.ptr
    llvm.return
  }
  llvm.func @unknown(%out: !llvm.ptr) attributes {nvvm.kernel} {
    %t = nvvm.read.ptx.sreg.tid.x : i32
    %c = llvm.intr.ctpop(%t) : (i32) -> i32
    llvm.store %c, %out {alignment = 4 : i64} : i32, !llvm.ptr
    llvm.return
  }
}
)mlir";

TEST_CASE("NvvmSim: 3-D launches, shared memory, barriers, unknown ops",
          "[cuda-sim]") {
  DialectRegistry registry;
  registerCudaCodegen(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kSimKernels, &ctx);
  REQUIRE(module);
  auto fn = [&](StringRef name) {
    auto f = module->lookupSymbol<LLVM::LLVMFuncOp>(name);
    REQUIRE(f);
    return f;
  };
  auto i32At = [](const std::vector<uint8_t> &b, size_t n) {
    int32_t v;
    std::memcpy(&v, &b[4 * n], 4);
    return v;
  };
  // Every thread of a (2, 3, 2) x (4, 2, 3) launch writes its linear id + 1
  // where CUDA's x-fastest numbering puts it.
  {
    Dim3 grid{2, 3, 2}, block{4, 2, 3};
    std::vector<std::vector<uint8_t>> bufs(1);
    bufs[0].assign(4 * grid.count() * block.count(), 0);
    NvvmSim sim(fn("ids"), bufs, 0, false);
    bool ok = sim.runGrid(grid, block);
    INFO(sim.error);
    REQUIRE(ok);
    for (int64_t n = 0; n < grid.count() * block.count(); ++n)
      REQUIRE(i32At(bufs[0], n) == n + 1);
  }
  // Two warps exchange through shared memory across a barrier; without it
  // warp 0 reads what warp 1 has not written yet (0xff.. = -1).
  for (bool barrier : {true, false}) {
    std::vector<std::vector<uint8_t>> bufs(1);
    bufs[0].assign(4 * 64, 0);
    NvvmSim sim(fn(barrier ? "rotate" : "rotate_nobarrier"), bufs, 4 * 64, false);
    bool ok = sim.runBlock(0, 64);
    INFO(sim.error);
    REQUIRE(ok);
    CHECK(i32At(bufs[0], 31) == (barrier ? 32 : -1));
    CHECK(i32At(bufs[0], 63) == 0);
  }
  // Too little shared memory: a fault, not a silent write.
  {
    std::vector<std::vector<uint8_t>> bufs(1);
    bufs[0].assign(4 * 64, 0);
    NvvmSim sim(fn("rotate"), bufs, 4 * 32, false);
    CHECK_FALSE(sim.runBlock(0, 64));
    CHECK_THAT(sim.error, Catch::Contains("out-of-bounds access"));
  }
  // An op the interpreter does not know fails, naming it.
  {
    std::vector<std::vector<uint8_t>> bufs(1);
    bufs[0].assign(4, 0);
    NvvmSim sim(fn("unknown"), bufs, 0, false);
    CHECK_FALSE(sim.runBlock(0, 1));
    CHECK_THAT(sim.error, Catch::Contains("op not simulated: llvm.intr.ctpop"));
  }
}
