//===- Oracle.cpp - Graphs through the reference and the host target ------===//
#include "Oracle.h"

#include "Program.h"

#include "synpl/Conversion/Passes.h"
#include "synpl/Dialect/L0Ctl/L0CtlOps.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Reference/L1Interpreter.h"
#include "synpl/Runtime/Runtime.h"
#include "synpl/Target/HostObject.h"
#include "synpl/Transforms/Passes.h"

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
  }
  return "?";
}

namespace {

/// Collects error diagnostics while alive.
struct Diagnostics {
  explicit Diagnostics(MLIRContext *ctx)
      : handler(ctx, [this](Diagnostic &d) {
          if (d.getSeverity() == DiagnosticSeverity::Error)
            text += (text.empty() ? "" : "\n") + d.str();
          return success();
        }) {}
  std::string text;
  ScopedDiagnosticHandler handler;
};

/// A zeroed (or 0xFF-filled) 64-byte aligned allocation.
struct Aligned {
  Aligned(uint64_t bytes, uint8_t fill) {
    uint64_t rounded = std::max<uint64_t>((bytes + 63) / 64 * 64, 64);
    data = static_cast<uint8_t *>(std::aligned_alloc(64, rounded));
    std::memset(data, fill, rounded);
  }
  ~Aligned() { std::free(data); }
  Aligned(const Aligned &) = delete;
  Aligned &operator=(const Aligned &) = delete;
  uint8_t *data;
};

/// A plan's memory as the runtime lays it out: each pool one allocation,
/// slots at their offsets; transient pools and freelist slots NaN (all
/// bytes 0xFF) so that a read before the write, or two live slots packed
/// over each other, shows in the numbers.
class PlanMemory {
public:
  explicit PlanMemory(l0uop::PlanOp plan) {
    Block &body = plan.getBody().front();
    for (auto pool : body.getOps<l0uop::PoolOp>())
      pools[pool.getSymName().str()] = std::make_unique<Aligned>(
          pool.getCapacity(), pool.getKind() == l0uop::PoolKind::persistent ? 0 : 0xFF);
    for (auto slot : body.getOps<l0uop::SlotOp>()) {
      std::string name = slot.getSymName().str();
      types[name] = slot.getBufType();
      if (std::optional<int64_t> offset = slot.getOffset()) {
        addr[name] = pools.at(slot.getPool().str())->data + *offset;
      } else {
        dynamic.push_back(std::make_unique<Aligned>(slot.getSize(), 0xFF));
        addr[name] = dynamic.back()->data;
      }
    }
  }
  void *at(const std::string &slot) const {
    auto it = addr.find(slot);
    return it == addr.end() ? nullptr : it->second;
  }
  l0uop::BufType type(const std::string &slot) const { return types.at(slot); }

  /// Stores `t` into `slot` in the slot's element type.
  bool write(const std::string &slot, const ref::Tensor &t) {
    uint8_t *p = static_cast<uint8_t *>(at(slot));
    if (!p || int64_t(types.at(slot).getNumElements()) != t.size())
      return false;
    Type e = types.at(slot).getElementType();
    unsigned bytes = std::max(1u, e.getIntOrFloatBitWidth() / 8);
    for (int64_t i = 0; i < t.size(); ++i) {
      if (e.isF32()) {
        float f = float(t[i]);
        std::memcpy(p + 4 * i, &f, 4);
      } else {
        int64_t x = int64_t(t[i]); // little-endian: the low bytes
        std::memcpy(p + bytes * i, &x, bytes);
      }
    }
    return true;
  }
  /// The slot's elements, shaped like `like`.
  ref::Tensor read(const std::string &slot, const ref::Tensor &like) const {
    const uint8_t *p = static_cast<const uint8_t *>(at(slot));
    ref::Tensor t(like.getElementType(), like.getShape());
    Type e = types.at(slot).getElementType();
    unsigned bytes = std::max(1u, e.getIntOrFloatBitWidth() / 8);
    for (int64_t i = 0; i < t.size(); ++i) {
      if (e.isF32()) {
        float f;
        std::memcpy(&f, p + 4 * i, 4);
        t[i] = f;
      } else {
        uint64_t x = 0;
        std::memcpy(&x, p + bytes * i, bytes);
        if (e.getIntOrFloatBitWidth() == 1)
          x &= 1;
        t[i] = double(x);
      }
    }
    return t;
  }

private:
  std::map<std::string, std::unique_ptr<Aligned>> pools;
  std::vector<std::unique_ptr<Aligned>> dynamic;
  std::map<std::string, void *> addr;
  std::map<std::string, l0uop::BufType> types;
};

/// One stream entry, resolved: a kernel call or a transfer.
struct Launch {
  std::string name;
  void (*fn)(void **) = nullptr;
  std::vector<void *> ptrs;
  int64_t iterations = 0, grain = 1;
  void *src = nullptr, *dst = nullptr;
  int64_t bytes = 0;
};

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

/// The first difference between `got` and `want` beyond `bound`, or "".
std::string compareResult(const ref::Tensor &got, const ref::Tensor &want, const Bound &bound) {
  bool exactInts = want.getElementType().isInteger();
  int64_t bad = 0, first = -1;
  double worst = 0;
  for (int64_t i = 0; i < want.size(); ++i) {
    double g = got[i], w = want[i];
    double diff = std::abs(g - w);
    bool ok = exactInts ? g == w : (std::isfinite(g) && diff <= bound.err);
    if (!ok) {
      if (first < 0)
        first = i;
      ++bad;
      if (!(diff <= worst))
        worst = diff;
    }
  }
  if (!bad)
    return "";
  char line[256];
  std::snprintf(line, sizeof line,
                "%lld of %lld elements differ; first at %lld: got %.9g, want %.9g "
                "(allowed error %.3g, values in [%.3g, %.3g])",
                (long long)bad, (long long)want.size(), (long long)first, got[first],
                want[first], bound.err, bound.lo, bound.hi);
  return line;
}

} // namespace

std::vector<Finding> Oracle::check(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  std::vector<Finding> findings;

  // --- The reference, per graph.
  struct Expect {
    std::string name;
    std::vector<ref::Tensor> inputs, outputs;
    std::vector<Bound> bounds;
  };
  std::vector<Expect> expects;
  for (auto graph : module.getOps<l1::TensorGraphOp>()) {
    Expect e;
    e.name = graph.getSymName().str();
    auto ranges = inputRanges(module, graph);
    e.inputs = drawInputs(graph, ranges, options.inputSeed ^ llvm::hash_value(e.name));
    std::string why;
    if (!resultBounds(graph, ranges, e.bounds, why)) {
      findings.push_back({Finding::ReferenceError, e.name, "", why});
      continue;
    }
    Diagnostics diags(ctx);
    ref::StateEnv state;
    auto outs = ref::interpretTensorGraph(graph, e.inputs, state);
    if (failed(outs)) {
      findings.push_back({Finding::ReferenceError, e.name, "", diags.text});
      continue;
    }
    e.outputs.assign(outs->begin(), outs->end());
    expects.push_back(std::move(e));
  }
  totals.graphs += expects.size();
  if (expects.empty())
    return findings;

  // --- Emission, shared by every tile choice.
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
      findings.push_back({Finding::CompileError, "", "host emission", diags.text});
      return findings;
    }
  }

  static bool mvec = !llvm::sys::DynamicLibrary::LoadLibraryPermanently("libmvec.so.1");
  (void)mvec;
  for (auto [lanes, rows] : options.tiles) {
    HostConfig config{lanes, rows, 1};
    OwningOpRef<ModuleOp> compiled = l0->clone();
    Diagnostics diags(ctx);
    {
      PassManager pm(ctx);
      ConvertL0UOpToLLVMOptions uop;
      uop.keepPlan = true;
      uop.tileLanes = lanes;
      uop.tileRows = rows;
      pm.addPass(createConvertL0UOpToLLVM(uop));
      if (failed(pm.run(*compiled))) {
        findings.push_back({Finding::CompileError, "", config.str(), diags.text});
        continue;
      }
    }
    auto plans = compiled->getOps<l0uop::PlanOp>();
    if (plans.empty()) {
      findings.push_back({Finding::CompileError, "", config.str(), "no l0uop.plan"});
      continue;
    }
    l0uop::PlanOp plan = *plans.begin();
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
      PlanMemory mem(plan);
      std::string setup;
      std::vector<Launch> launches;
      for (auto stream : plan.getBody().front().getOps<l0uop::StreamOp>())
        for (Attribute a : stream.getEntries()) {
          Launch l;
          l.name = cast<FlatSymbolRefAttr>(a).getValue().str();
          if (auto kernel = plan.lookup<l0uop::KernelOp>(l.name)) {
            auto entry = kernel->getAttrOfType<FlatSymbolRefAttr>("host_entry");
            auto iters = kernel->getAttrOfType<IntegerAttr>("host_iterations");
            auto grain = kernel->getAttrOfType<IntegerAttr>("host_grain");
            auto fn = entry ? engine->lookupPacked(entry.getValue())
                            : llvm::Expected<void (*)(void **)>(nullptr);
            if (!entry || !iters || !fn || !*fn) {
              if (!fn)
                llvm::consumeError(fn.takeError());
              setup = "kernel @" + l.name + " has no host function";
              break;
            }
            l.fn = *fn;
            l.iterations = iters.getInt();
            l.grain = grain ? grain.getInt() : 1;
            for (Attribute s : llvm::concat<const Attribute>(kernel.getInputs(),
                                                             kernel.getOutputs()))
              l.ptrs.push_back(mem.at(cast<FlatSymbolRefAttr>(s).getValue().str()));
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
        findings.push_back({Finding::RunError, "", config.str(), setup});
        break;
      }
      // Slot lifetimes are launch ticks: an input is stored just before
      // the launch that first reads it and a result read right after the
      // launch that writes it (packing may give their bytes to other slots
      // outside those ticks, as a forwarding stage would find them).
      std::map<int64_t, std::vector<std::pair<std::string, const ref::Tensor *>>> writeAt;
      std::map<int64_t, std::vector<std::pair<std::string, const ref::Tensor *>>> readAt;
      auto tick = [&](const std::string &slot, bool last) -> int64_t {
        auto op = plan.lookup<l0uop::SlotOp>(slot);
        if (!op)
          return -1;
        int64_t t = last ? op.getLastUse() : op.getFirstUse();
        return std::clamp<int64_t>(t, 0, std::max<int64_t>(0, int64_t(launches.size()) - 1));
      };
      for (const Expect &e : expects) {
        for (size_t i = 0; i < e.inputs.size(); ++i) {
          std::string slot = e.name + ".in" + std::to_string(i);
          if (tick(slot, false) < 0)
            setup = "no slot " + slot;
          writeAt[tick(slot, false)].push_back({slot, &e.inputs[i]});
        }
        for (size_t i = 0; i < e.outputs.size(); ++i) {
          std::string slot = e.name + ".out" + std::to_string(i);
          if (tick(slot, true) < 0)
            setup = "no slot " + slot;
          readAt[tick(slot, true)].push_back({slot, &e.outputs[i]});
        }
      }
      if (!setup.empty()) {
        findings.push_back({Finding::RunError, "", config.str(), setup});
        break;
      }
      std::map<std::string, ref::Tensor> results;
      synpl_rt_workers *workers = threads > 1 ? synpl_rt_workers_create(threads) : nullptr;
      for (size_t t = 0; t < std::max<size_t>(launches.size(), 1); ++t) {
        for (auto &[slot, value] : writeAt[int64_t(t)])
          if (!mem.write(slot, *value))
            setup = "slot " + slot + " does not hold its input's type";
        if (t < launches.size()) {
          const Launch &l = launches[t];
          if (l.fn)
            runKernel(l, workers);
          else
            std::memmove(l.dst, l.src, l.bytes);
        }
        for (auto &[slot, like] : readAt[int64_t(t)])
          results[slot] = mem.read(slot, *like);
      }
      if (workers)
        synpl_rt_workers_destroy(workers);
      ++totals.runs;
      if (!setup.empty()) {
        findings.push_back({Finding::RunError, "", config.str(), setup});
        break;
      }

      for (const Expect &e : expects)
        for (size_t i = 0; i < e.outputs.size(); ++i) {
          std::string slot = e.name + ".out" + std::to_string(i);
          const ref::Tensor &got = results.at(slot);
          totals.elements += got.size();
          std::string diff = compareResult(got, e.outputs[i], e.bounds[i]);
          if (!diff.empty())
            findings.push_back({Finding::Mismatch, e.name, config.str(),
                                "result #" + std::to_string(i) + ": " + diff});
        }
    }
  }
  return findings;
}
