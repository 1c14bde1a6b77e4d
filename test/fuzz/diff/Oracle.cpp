//===- Oracle.cpp - Graphs through the reference and the host target ------===//
#include "Oracle.h"

#include "NvvmSim.h"
#include "PlanMemory.h"
#include "Program.h"

#include "synpl/Conversion/Passes.h"
#include "synpl/Pipelines/Pipelines.h"
#include "synpl/Dialect/L0Ctl/L0CtlOps.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Dialect/L1/L1Program.h"
#include "synpl/Reference/L1Interpreter.h"
#include "synpl/Runtime/Runtime.h"
#include "synpl/Target/HostObject.h"
#include "synpl/Target/IPU21/Facts.h"
#include "synpl/Target/IPU21/Simulator.h"
#include "synpl/Target/IPU21/Translate.h"
#include "synpl/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/DynamicLibrary.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>

using namespace mlir;
using namespace synpl;
using namespace synpl::difffuzz;

std::string CudaConfig::str() const {
  return "cuda " + chip + (fastMath ? "" : ", exact math") + (blockReduce ? "" : ", no block-reduce") +
         (tuneLaunch ? "" : ", default launch");
}

std::string Ipu21Config::str() const {
  return arch + (tiles ? " on " + std::to_string(tiles) + " tiles" : std::string());
}

std::string HostConfig::str() const {
  std::string tile = tileLanes ? std::to_string(tileLanes) + "x" + std::to_string(tileRows)
                               : std::string("untiled");
  return "host tile " + tile + ", " + std::to_string(threads) + " thread" +
         (threads == 1 ? "" : "s");
}

const char *Finding::kindName(Kind k) {
  switch (k) {
  case Mismatch: return "mismatch";
  case CompileError: return "compile error";
  case RunError: return "run error";
  case ReferenceError: return "not a valid test";
  case Refused: return "refused for resources";
  }
  return "?";
}

bool synpl::difffuzz::onGpu(const Finding &f) {
  StringRef config(f.config);
  return config.starts_with("cuda") || config.contains("GPU");
}

std::string synpl::difffuzz::reproduceFlags(const Finding &f, const OracleOptions &narrow) {
  if (onGpu(f))
    return " --targets=cuda";
  if (StringRef(f.config).starts_with("ipu"))
    return " --targets=ipu21";
  std::string tiles, threads;
  for (auto [l, r] : narrow.tiles)
    tiles += (tiles.empty() ? "" : ",") +
             (l ? std::to_string(l) + "x" + std::to_string(r) : std::string("untiled"));
  for (int t : narrow.threads)
    threads += (threads.empty() ? "" : ",") + std::to_string(t);
  return " --tiles=" + tiles + " --thread-counts=" + threads;
}

using test::PlanMemory;

/// One stream entry, resolved: a kernel call or a transfer.
struct synpl::difffuzz::detail::Launch {
  std::string name;
  void (*fn)(void **) = nullptr;
  /// A device kernel: run on the SIMT interpreter.
  LLVM::LLVMFuncOp device;
  std::vector<std::pair<uint8_t *, size_t>> buffers;
  int64_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1}, shared = 0;
  std::vector<void *> ptrs;
  int64_t iterations = 0, grain = 1;
  void *src = nullptr, *dst = nullptr;
  int64_t bytes = 0;
};

namespace {
using synpl::difffuzz::detail::Launch;

struct ChunkCall {
  const Launch *launch;
};

/// fn(ptrs..., begin, end) through the packed wrapper.
void callChunk(void *ctx, int64_t begin, int64_t end) {
  const Launch &l = *static_cast<ChunkCall *>(ctx)->launch;
  std::vector<void *> values = l.ptrs;
  std::vector<void *> args;
  for (void *&p : values)
    args.push_back(&p);
  args.push_back(&begin);
  args.push_back(&end);
  l.fn(args.data());
}

/// Runs one kernel as Executor::runKernel does with `workers`.
void runKernel(const Launch &l, synpl_rt_workers *workers) {
  ChunkCall call{&l};
  if (l.iterations <= 1 || !workers || synpl_rt_workers_count(workers) <= 1) {
    callChunk(&call, 0, l.iterations);
    return;
  }
  int64_t count = synpl_rt_workers_count(workers);
  if (l.grain > 1)
    synpl_rt_parallel_for_grain(workers, l.iterations,
                                std::max(l.grain, (l.iterations + count - 1) / count), callChunk,
                                &call);
  else
    synpl_rt_parallel_for(workers, l.iterations, callChunk, &call);
}

/// The first difference between `got` and `want` beyond `err`, or "".
std::string compareResult(const ref::Tensor &got, const ref::Tensor &want,
                          const ref::Tensor &err, int64_t &unbounded) {
  bool ints = want.getElementType().isInteger();
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < want.size(); ++i) {
    double g = got[i], w = want[i], e = err[i];
    if (std::isinf(e)) {
      ++unbounded;
      continue;
    }
    bool ok = ints && e == 0 ? g == w : std::isfinite(g) && std::abs(g - w) <= e;
    if (!ok) {
      if (first < 0)
        first = i;
      ++bad;
    }
  }
  if (!bad)
    return "";
  char line[256];
  std::snprintf(line, sizeof line,
                "%lld of %lld elements differ; first at %lld: got %.9g, want %.9g "
                "(allowed error %.3g)",
                (long long)bad, (long long)want.size(), (long long)first, got[first],
                want[first], err[first]);
  return line;
}

/// Runs the passes `build` adds on a copy of `l0` (into `compiled`); its
/// plan, or null after recording the compile error under `config`.
l0uop::PlanOp lowerCopy(ModuleOp l0, const std::string &config, OwningOpRef<ModuleOp> &compiled,
                        std::vector<Finding> &findings,
                        const std::function<void(PassManager &)> &build) {
  compiled = l0.clone();
  Diagnostics diags(l0.getContext());
  PassManager pm(l0.getContext());
  build(pm);
  if (failed(pm.run(*compiled))) {
    findings.push_back({Finding::CompileError, "", config, diags.text});
    return {};
  }
  auto plans = compiled->getOps<l0uop::PlanOp>();
  if (plans.empty()) {
    findings.push_back({Finding::CompileError, "", config, "no l0uop.plan"});
    return {};
  }
  return *plans.begin();
}

} // namespace

std::vector<StepCase> Oracle::reference(ModuleOp module, std::vector<Finding> &findings) {
  std::vector<StepCase> cases;
  for (auto graph : module.getOps<l1::TensorGraphOp>()) {
    StepCase c;
    c.name = graph.getSymName().str();
    auto ranges = inputRanges(module, graph);
    std::vector<ref::Tensor> inputs =
        drawInputs(graph, ranges, options.inputSeed ^ llvm::hash_value(c.name));
    std::vector<Bound> bounds;
    std::string why;
    if (!resultBounds(graph, ranges, bounds, why)) {
      findings.push_back({Finding::ReferenceError, c.name, "", why});
      continue;
    }
    Diagnostics diags(module.getContext());
    ref::StateEnv state;
    auto outs = ref::interpretTensorGraph(graph, inputs, state);
    if (failed(outs)) {
      findings.push_back({Finding::ReferenceError, c.name, "", diags.text});
      continue;
    }
    for (size_t i = 0; i < inputs.size(); ++i)
      c.feeds.push_back({c.name + ".in" + std::to_string(i), std::move(inputs[i])});
    for (size_t i = 0; i < outs->size(); ++i) {
      ref::Tensor err(ref::ElementType::f64(), (*outs)[i].getShape(), bounds[i].err);
      c.wants.push_back({c.name + ".out" + std::to_string(i), "result #" + std::to_string(i),
                         std::move((*outs)[i]), std::move(err)});
    }
    cases.push_back(std::move(c));
  }
  totals.graphs += cases.size();
  return cases;
}

std::vector<Finding> Oracle::check(ModuleOp module) {
  std::vector<Finding> findings;
  std::vector<StepCase> cases = reference(module, findings);
  if (cases.empty())
    return findings;
  for (Finding &f : checkCases(module, cases))
    findings.push_back(std::move(f));
  return findings;
}

std::vector<Finding> Oracle::checkCases(ModuleOp module, const std::vector<StepCase> &cases) {
  std::vector<Finding> findings;

  // --- Emission, shared by every configuration: the host pipeline's first
  // half (the rewrites it runs only touch host graphs).
  MLIRContext *ctx = module.getContext();
  OwningOpRef<ModuleOp> l0 = module.clone();
  {
    Diagnostics diags(ctx);
    PassManager pm(ctx);
    pm.addPass(createL1FuseAcrossReshapes());
    pm.addPass(createL1SplitReductions());
    L1ToL0Options emission;
    emission.testPlantMiscompile = options.plant;
    pm.addPass(createL1ToL0(emission));
    pm.addPass(createL0PackMemory());
    if (failed(pm.run(*l0))) {
      findings.push_back({Finding::CompileError, "", "emission", diags.text});
      return findings;
    }
  }
  // A training step's batch goes to the plan's ingest slots (`ingest#<i>`:
  // the reader's i-th slot).
  std::vector<StepCase> resolved = cases;
  l0uop::IngestOp ingest;
  l0->walk([&](l0uop::IngestOp op) { ingest = op; });
  for (StepCase &c : resolved)
    for (Feed &f : c.feeds) {
      StringRef slot(f.slot);
      if (!slot.consume_front("ingest#"))
        continue;
      unsigned index = 0;
      if (slot.getAsInteger(10, index) || !ingest || index >= ingest.getSlots().size()) {
        findings.push_back({Finding::CompileError, c.name, "emission",
                            "no ingest slot #" + slot.str() + " for the batch"});
        return findings;
      }
      f.slot = cast<FlatSymbolRefAttr>(ingest.getSlots()[index]).getValue().str();
    }
  bool cuda = false;
  for (auto graph : module.getOps<l1::TensorGraphOp>())
    if (l1::NodeOp node = l1::lookupNode(graph, graph.getNodeAttr()))
      cuda |= node.getIsa() == StringRef("cuda");
  if (cuda) {
    checkCuda(*l0, resolved, findings);
    return findings;
  }
  if (options.host)
    checkHost(*l0, resolved, findings);
  if (options.ipu21)
    checkIpu21(*l0, resolved, findings);
  return findings;
}

void Oracle::checkHost(ModuleOp l0, const std::vector<StepCase> &cases,
                       std::vector<Finding> &findings) {
  static bool mvec = !llvm::sys::DynamicLibrary::LoadLibraryPermanently("libmvec.so.1");
  (void)mvec;
  for (auto tile : options.tiles) {
    unsigned lanes = tile.first, rows = tile.second;
    HostConfig config{lanes, rows, 1};
    OwningOpRef<ModuleOp> compiled;
    l0uop::PlanOp plan = lowerCopy(l0, config.str(), compiled, findings, [&](PassManager &pm) {
      ConvertL0UOpToLLVMOptions uop;
      uop.keepPlan = true;
      uop.tileLanes = lanes;
      uop.tileRows = rows;
      pm.addPass(createConvertL0UOpToLLVM(uop));
    });
    if (!plan)
      continue;
    OwningOpRef<ModuleOp> code = compiled->clone();
    for (Operation &op : llvm::make_early_inc_range(code->getBody()->getOperations()))
      if (isa<l0uop::PlanOp>(op) || isa<l0ctl::L0CtlDialect>(op.getDialect()) ||
          isa<l1::L1Dialect>(op.getDialect()))
        op.erase();
    auto machine = host::createHostTargetMachine();
    if (!machine) {
      findings.push_back({Finding::CompileError, "", config.str(),
                          llvm::toString(machine.takeError())});
      continue;
    }
    auto optimize = [&](llvm::Module *m) -> llvm::Error {
      return host::optimizeForHost(*m, **machine);
    };
    ExecutionEngineOptions engineOptions;
    engineOptions.transformer = optimize;
    auto created = ExecutionEngine::create(*code, engineOptions);
    if (!created) {
      findings.push_back({Finding::CompileError, "", config.str(),
                          "JIT: " + llvm::toString(created.takeError())});
      continue;
    }
    std::unique_ptr<ExecutionEngine> engine = std::move(*created);
    engine->registerSymbols([](llvm::orc::MangleAndInterner interner) {
      llvm::orc::SymbolMap map;
      map[interner("synpl_rt_kernel_scratch")] = {
          llvm::orc::ExecutorAddr::fromPtr(&synpl_rt_kernel_scratch),
          llvm::JITSymbolFlags::Exported};
      return map;
    });
    for (int threads : options.threads) {
      config.threads = threads;
      auto resolve = [&](l0uop::KernelOp kernel, Launch &l) -> std::string {
        auto entry = kernel->getAttrOfType<FlatSymbolRefAttr>("host_entry");
        auto iters = kernel->getAttrOfType<IntegerAttr>("host_iterations");
        auto grain = kernel->getAttrOfType<IntegerAttr>("host_grain");
        if (!entry || !iters)
          return "kernel @" + l.name + " has no host function";
        auto fn = engine->lookupPacked(entry.getValue());
        if (!fn) {
          llvm::consumeError(fn.takeError());
          return "kernel @" + l.name + ": no JIT'd @" + entry.getValue().str();
        }
        l.fn = *fn;
        l.iterations = iters.getInt();
        l.grain = grain ? grain.getInt() : 1;
        return "";
      };
      runPlan(plan, cases, config.str(), resolve, threads, findings);
    }
  }
}

void Oracle::checkCuda(ModuleOp l0, const std::vector<StepCase> &cases,
                       std::vector<Finding> &findings) {
  for (const CudaConfig &config : options.cuda) {
    OwningOpRef<ModuleOp> compiled;
    l0uop::PlanOp plan = lowerCopy(l0, config.str(), compiled, findings, [&](PassManager &pm) {
      CudaKernelPipelineOptions cuda;
      cuda.chip = config.chip;
      cuda.fastMath = config.fastMath;
      cuda.blockReduce = config.blockReduce;
      cuda.tuneLaunch = config.tuneLaunch;
      cuda.binary = false; // the NVVM functions run on the interpreter
      buildCudaKernelPipeline(pm, cuda);
    });
    if (!plan)
      continue;
    auto gpuModule =
        compiled->lookupSymbol<gpu::GPUModuleOp>((plan.getSymName() + "_cuda").str());
    auto resolve = [&](l0uop::KernelOp kernel, Launch &l) -> std::string {
      auto entry = kernel->getAttrOfType<StringAttr>("device_entry");
      if (!entry || !gpuModule)
        return "kernel @" + l.name + " has no device function (a host kernel in a GPU graph)";
      l.device = gpuModule.lookupSymbol<LLVM::LLVMFuncOp>(entry.getValue());
      if (!l.device)
        return "no device function @" + entry.getValue().str();
      for (int d = 0; d < 3; ++d)
        l.grid[d] = kernel.getGrid()[d], l.block[d] = kernel.getBlock()[d];
      l.shared = kernel.getSharedMem();
      return "";
    };
    runPlan(plan, cases, config.str(), resolve, 1, findings);
  }
}

void Oracle::runPlan(l0uop::PlanOp plan, const std::vector<StepCase> &cases,
                     const std::string &config,
                     const std::function<std::string(l0uop::KernelOp, Launch &)> &resolve,
                     int threads, std::vector<Finding> &findings) {
  PlanMemory mem(plan);
  std::string setup;
  std::vector<Launch> launches;
  for (auto stream : plan.getBody().front().getOps<l0uop::StreamOp>())
    for (Attribute a : stream.getEntries()) {
      Launch l;
      l.name = cast<FlatSymbolRefAttr>(a).getValue().str();
      if (auto kernel = plan.lookup<l0uop::KernelOp>(l.name)) {
        setup = resolve(kernel, l);
        if (!setup.empty())
          break;
        for (Attribute s : llvm::concat<const Attribute>(kernel.getInputs(),
                                                         kernel.getOutputs())) {
          std::string slot = cast<FlatSymbolRefAttr>(s).getValue().str();
          l.ptrs.push_back(mem.at(slot));
          l.buffers.push_back({static_cast<uint8_t *>(mem.at(slot)), mem.bytes(slot)});
        }
        ++totals.kernels;
      } else if (auto tx = plan.lookup<l0uop::TransferOp>(l.name)) {
        l.src = mem.at(tx.getSrc().str());
        l.dst = mem.at(tx.getDst().str());
        l.bytes = tx.getBytes();
      } else {
        setup = "stream entry @" + l.name + " is neither a kernel nor a transfer";
        break;
      }
      launches.push_back(std::move(l));
    }
  if (!setup.empty()) {
    findings.push_back({Finding::RunError, "", config, setup});
    return;
  }
  // Slot lifetimes are launch ticks: an input is stored just before the
  // launch that first reads it and a result read right after the launch
  // that writes it (packing may give their bytes to other slots outside
  // those ticks, as a forwarding stage would find them).
  using SlotList = std::vector<std::pair<std::string, const ref::Tensor *>>;
  std::map<int64_t, SlotList> writeAt, readAt;
  int64_t lastTick = std::max<int64_t>(0, int64_t(launches.size()) - 1);
  for (const StepCase &c : cases) {
    auto add = [&](const std::string &slot, const ref::Tensor &t, bool result, bool edge) {
      auto op = plan.lookup<l0uop::SlotOp>(slot);
      if (!op) {
        setup = "no slot " + slot;
        return;
      }
      int64_t tick = edge ? (result ? lastTick : 0)
                          : std::clamp<int64_t>(result ? op.getLastUse() : op.getFirstUse(),
                                                0, lastTick);
      (result ? readAt : writeAt)[tick].push_back({slot, &t});
    };
    for (const Feed &f : c.feeds)
      add(f.slot, f.value, false, f.atStart);
    for (const Want &w : c.wants)
      add(w.slot, w.value, true, w.atEnd);
  }
  if (!setup.empty()) {
    findings.push_back({Finding::RunError, "", config, setup});
    return;
  }
  std::map<std::string, ref::Tensor> results;
  synpl_rt_workers *workers = threads > 1 ? synpl_rt_workers_create(threads) : nullptr;
  for (int64_t t = 0; t <= lastTick && setup.empty(); ++t) {
    for (auto &[slot, value] : writeAt[t])
      if (!mem.write(slot, *value))
        setup = "slot " + slot + " does not hold its input's type";
    if (t < int64_t(launches.size())) {
      const Launch &l = launches[t];
      if (l.fn) {
        runKernel(l, workers);
      } else if (l.device) {
        test::NvvmSim sim(l.device, l.buffers, l.shared, /*eagerCopies=*/false);
        if (!sim.runGrid({l.grid[0], l.grid[1], l.grid[2]},
                         {l.block[0], l.block[1], l.block[2]}))
          setup = "kernel @" + l.name + " faulted on the SIMT interpreter: " + sim.error;
      } else {
        std::memmove(l.dst, l.src, l.bytes);
      }
    }
    for (auto &[slot, like] : readAt[t])
      results[slot] = mem.read(slot, *like);
  }
  if (workers)
    synpl_rt_workers_destroy(workers);
  ++totals.runs;
  if (!setup.empty()) {
    findings.push_back({Finding::RunError, "", config, setup});
    return;
  }
  for (const StepCase &c : cases)
    for (const Want &w : c.wants)
      compare(c, w, results.at(w.slot), config, findings);
}

void Oracle::compare(const StepCase &c, const Want &w, const ref::Tensor &got,
                     const std::string &config, std::vector<Finding> &findings) {
  int64_t unboundedBefore = totals.unbounded;
  std::string diff = compareResult(got, w.value, w.err, totals.unbounded);
  totals.elements += got.size() - (totals.unbounded - unboundedBefore);
  if (!diff.empty())
    findings.push_back({Finding::Mismatch, c.name, config, w.what + ": " + diff});
}

void Oracle::checkIpu21(ModuleOp l0, const std::vector<StepCase> &cases,
                        std::vector<Finding> &findings) {
  MLIRContext *ctx = l0.getContext();
  for (const Ipu21Config &config : options.ipu21Configs) {
    OwningOpRef<ModuleOp> compiled = l0.clone();
    Diagnostics diags(ctx);
    PassManager pm(ctx);
    ConvertL0UOpToIPU21Options ipu;
    ipu.arch = config.arch;
    ipu.maxTiles = config.tiles;
    pm.addPass(createConvertL0UOpToIPU21(ipu));
    if (failed(pm.run(*compiled))) {
      // Too large for the tiles asked for: the placement's own refusal, or
      // the tile search's when no tiling fits a tile's memory.
      if (StringRef(diags.text).contains("[resource]") ||
          StringRef(diags.text).contains("'tile-memory' rejected")) {
        ++totals.refused;
        continue;
      }
      findings.push_back({Finding::CompileError, "", config.str(), diags.text});
      continue;
    }
    FailureOr<ipu21::sim::Program> program = ipu21::toScheduledProgram(*compiled);
    if (failed(program)) {
      findings.push_back({Finding::CompileError, "", config.str(),
                          "no ipu21 program: " + diags.text});
      continue;
    }
    std::optional<ipu21::Facts> facts = ipu21::factsFor(program->target.arch);
    if (!facts) {
      findings.push_back({Finding::CompileError, "", config.str(), "no facts of the arch"});
      continue;
    }
    ipu21::sim::Simulator sim(*program, *facts);
    std::string error;
    bool ok = sim.valid(error);
    for (const StepCase &c : cases)
      for (const Feed &f : c.feeds)
        ok = ok && sim.setTensor(f.slot, f.value.data(), error);
    // The host side of a training program sets its training-mode slot (1:
    // a training step, which runs the backward and the update) as the
    // executor does.
    compiled->walk([&](l0uop::InitOp init) {
      if (ok && init.getKind() == l0uop::InitKind::training_mode)
        ok = sim.setTensor(init.getSlot().str(), {1.0}, error);
    });
    // A training step's batch arrives as the host streams it: the stream
    // of each ingest slot gives that slot's feed.
    sim.setStreamSource([&](std::string_view stream, std::vector<double> &out) {
      for (const StepCase &c : cases)
        for (const Feed &f : c.feeds)
          if (f.slot == stream) {
            out = f.value.data();
            return true;
          }
      return false;
    });
    ok = ok && sim.run(error);
    ++totals.runs;
    if (!ok) {
      findings.push_back({Finding::RunError, "", config.str(), error});
      continue;
    }
    for (const StepCase &c : cases)
      for (const Want &w : c.wants) {
        std::vector<double> values;
        if (!sim.getTensor(w.slot, values, error)) {
          findings.push_back({Finding::RunError, c.name, config.str(), error});
          continue;
        }
        if (int64_t(values.size()) != w.value.size()) {
          findings.push_back({Finding::RunError, c.name, config.str(),
                              w.slot + " holds " + std::to_string(values.size()) + " values"});
          continue;
        }
        compare(c, w, ref::Tensor(w.value.getElementType(), w.value.getShape(), values),
                config.str(), findings);
      }
  }
}
