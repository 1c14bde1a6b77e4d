//===- Compile.cpp - Run the phases, deciding what they cannot ------------===//
//
// The phases are pass pipelines; around them the driver decides what the IR
// alone does not say: the system to place an L2 program on (a --system
// file, the program's own, else this machine, with a nominal GPU for a CUDA
// build on a machine without one) and, once placed, whether the kernels run
// on a GPU (and for which chip) or on an IPU (the ipu21 sink, when the
// placement chose an isa = ipu21 or ipu2 node, or --target=ipu21).
//
//===----------------------------------------------------------------------===//
#include "synpl/Driver/Driver.h"

#include "KernelObjects.h"
#include "SearchCache.h"
#include "synpl/Support/DeepInput.h"

#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Frontend/Syn.h"
#include "synpl/InitAll.h"
#include "synpl/Pipelines/Pipelines.h"
#include "synpl/Search/Search.h"
#include "synpl/Target/CudaTarget.h"
#include "synpl/Target/HostObject.h"
#include "synpl/Target/HostSystem.h"
#include "synpl/Target/IPU21/Facts.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::driver;

void synpl::driver::registerDialects(DialectRegistry &registry) {
  registerHostCodegen(registry);
  registerCudaCodegen(registry);
}

/// False after a located error when the main buffer of `sourceMgr` nests
/// deeper than the parsers may recurse (synpl/Support/DeepInput.h).
static bool refuseDeepInput(llvm::SourceMgr &sourceMgr, MLIRContext *context) {
  const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  std::optional<size_t> at = findDeepNesting(buffer->getBuffer());
  if (!at)
    return true;
  auto [line, column] =
      sourceMgr.getLineAndColumn(llvm::SMLoc::getFromPointer(buffer->getBufferStart() + *at));
  emitError(FileLineColLoc::get(context, buffer->getBufferIdentifier(), line, column))
      << deepNestingMessage();
  return false;
}

OwningOpRef<ModuleOp> synpl::driver::parseInput(llvm::SourceMgr &sourceMgr,
                                                MLIRContext *context,
                                                llvm::StringRef filename) {
  if (!refuseDeepInput(sourceMgr, context))
    return {};
  OwningOpRef<ModuleOp> module = filename.ends_with(".syn")
                                     ? parseSyn(sourceMgr, context)
                                     : parseSourceFile<ModuleOp>(sourceMgr, context);
  if (!module || failed(verify(*module)))
    return {};
  return module;
}

void synpl::driver::printPtx(ModuleOp module, llvm::raw_ostream &os) {
  for (auto binary : module.getOps<gpu::BinaryOp>())
    for (Attribute a : binary.getObjects())
      if (auto object = dyn_cast<gpu::ObjectAttr>(a);
          object && object.getFormat() == gpu::CompilationTarget::Assembly)
        os << object.getObject().getValue();
}

namespace {

/// One compile: the options, the module, and the error and progress sinks.
struct Compilation {
  ModuleOp module;
  const CompileOptions &options;

  LogicalResult fail(const llvm::Twine &message) {
    if (options.error)
      options.error(message);
    else
      emitError(module.getLoc()) << message.str();
    return failure();
  }
  void progress(const llvm::Twine &line) {
    if (options.progress)
      options.progress(line.str());
  }

  /// Fills `pm` with the caller's configuration (CompileOptions::configure)
  /// and the passes from phase `from` to `to`.
  LogicalResult buildPipeline(PassManager &pm, llvm::StringRef name, Phase from, Phase to,
                              KernelTarget target, const PhaseOptions &phaseOptions) {
    if (options.configure && failed(options.configure(pm, name)))
      return failure();
    std::string error;
    if (failed(buildPhasePipeline(pm, from, to, target, phaseOptions, error)))
      return fail(error);
    return success();
  }

  LogicalResult runPipeline(llvm::StringRef name, Phase from, Phase to,
                            KernelTarget target, const PhaseOptions &phaseOptions,
                            std::unique_ptr<PassInstrumentation> instrumentation = nullptr) {
    PassManager pm(module.getContext());
    if (failed(buildPipeline(pm, name, from, to, target, phaseOptions)))
      return failure();
    if (instrumentation)
      pm.addInstrumentation(std::move(instrumentation));
    progress(name);
    return pm.run(module);
  }

  /// Writes the module to <dumpDir>/<dumpStem>.<phase>.mlir.
  LogicalResult dump(llvm::StringRef phase) {
    if (options.dumpDir.empty())
      return success();
    if (std::error_code ec = llvm::sys::fs::create_directories(options.dumpDir))
      return fail("cannot create " + options.dumpDir + ": " + ec.message());
    llvm::SmallString<256> path(options.dumpDir);
    llvm::sys::path::append(path, options.dumpStem + "." + phase + ".mlir");
    std::string error;
    auto file = openOutputFile(path, &error);
    if (!file)
      return fail(error);
    module.print(file->os());
    file->os() << "\n";
    file->keep();
    return success();
  }

  /// L3 -> L2: the method search, or with a search cache the method it
  /// chose before for the same program, options and compiler.
  LogicalResult searchMethod(const PhaseOptions &phaseOptions);

  LogicalResult loadSystem(llvm::StringRef path);
  LogicalResult addHostSystem(const cuda::CudaArch *nominalGpu);
  /// The nodes of the placed program's system whose isa is `wanted` and
  /// that hold an actor, a stage or a tensor graph (in system order).
  SmallVector<l1::NodeOp> usedNodes(llvm::function_ref<bool(llvm::StringRef)> wanted);
  SmallVector<l1::NodeOp> usedCudaNodes() {
    return usedNodes([](llvm::StringRef isa) { return isa == "cuda"; });
  }
  /// The IPU nodes (isa ipu21 or ipu2) the placed program uses.
  SmallVector<l1::NodeOp> usedIpuNodes() {
    return usedNodes([](llvm::StringRef isa) { return ipu21::factsFor(isa).has_value(); });
  }
  LogicalResult run();
  /// The last phase, to the LLVM dialect: with a kernel cache (an
  /// executable on the host), the cached kernels are not lowered.
  LogicalResult toLLVM(Phase from, KernelTarget target, PhaseOptions &phaseOptions);
};

LogicalResult Compilation::searchMethod(const PhaseOptions &phaseOptions) {
  llvm::StringRef name = "L3 -> L2 (method search)";
  if (!options.searchCache.enabled ||
      search::SearchReportSink::global().format() != search::ReportFormat::None)
    return runPipeline(name, Phase::L3, Phase::L2, KernelTarget::Host, phaseOptions);
  MLIRContext *context = module.getContext();
  PassManager pm(context);
  if (failed(buildPipeline(pm, name, Phase::L3, Phase::L2, KernelTarget::Host, phaseOptions)))
    return failure();
  // The kept searches count toward the cache's size limit. A compile that
  // goes on to the kernel objects leaves trimming to the link, after its
  // objects are looked up (and so marked used); any other compile links
  // nothing, so keeping a search trims the cache.
  llvm::Expected<host::ObjectCache> cache = host::ObjectCache::at(options.searchCache.dir);
  if (!cache)
    return fail(llvm::toString(cache.takeError()));
  const std::string &dir = cache->dir;
  std::string key = dir.empty() ? "" : methodSearchKey(module, pm);
  if (!key.empty())
    if (OwningOpRef<ModuleOp> chosen = lookupMethodSearch(dir, key, context)) {
      replaceModule(module, *chosen);
      progress(name + ": the method chosen before for this program (from the cache " + dir +
               ")");
      return success();
    }
  progress(name);
  // A search that says anything (a hint it cannot honour, a remark) is not
  // kept: a later compile that reads the choice back would not say it.
  bool spoke = false;
  LogicalResult searched = success();
  {
    ScopedDiagnosticHandler watch(context, [&](Diagnostic &) {
      spoke = true;
      return failure(); // on to the caller's handler
    });
    searched = pm.run(module);
  }
  if (succeeded(searched) && !spoke && !key.empty()) {
    keepMethodSearch(dir, key, module);
    if (!options.kernelCache.enabled || options.to != Phase::LLVM)
      trimObjectCache(*cache, options.progress);
  }
  return searched;
}

/// Reads the l1.system of `path` (.syn or .mlir) into the module, replacing
/// any system it has.
LogicalResult Compilation::loadSystem(llvm::StringRef path) {
  MLIRContext *context = module.getContext();
  std::string error;
  auto buffer = openInputFile(path, &error);
  if (!buffer)
    return fail(error);
  auto sourceMgr = std::make_shared<llvm::SourceMgr>();
  sourceMgr->AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(*sourceMgr, context);
  if (!refuseDeepInput(*sourceMgr, context))
    return failure();
  OwningOpRef<ModuleOp> systemModule =
      path.ends_with(".syn") ? parseSyn(*sourceMgr, context)
                             : parseSourceFile<ModuleOp>(*sourceMgr, context);
  if (!systemModule)
    return failure();
  SmallVector<l1::SystemOp> systems(systemModule->getBody()->getOps<l1::SystemOp>());
  if (systems.size() != 1)
    return fail(path + ": --system needs a file with exactly one system "
                       "(l1.system), found " +
                llvm::Twine(systems.size()));
  for (auto old : llvm::make_early_inc_range(module.getBody()->getOps<l1::SystemOp>()))
    old.erase();
  module.getBody()->push_front(systems.front()->clone());
  return success();
}

/// Adds this machine's system unless the module has one. With `nominalGpu`,
/// a machine without a GPU gets one of that architecture (to compile here
/// for a GPU machine).
LogicalResult Compilation::addHostSystem(const cuda::CudaArch *nominalGpu) {
  if (!module.getBody()->getOps<l1::SystemOp>().empty())
    return success();
  host::HostFacts facts = host::detectHostFacts();
  for (const cuda::CudaDevice &d : facts.gpus)
    progress("found GPU " + llvm::Twine(d.ordinal) + ": " + d.name +
             " (compute capability " + llvm::Twine(d.major) + "." +
             llvm::Twine(d.minor) + ", " + llvm::Twine(d.smCount) + " SMs, " +
             llvm::Twine(d.memoryBytes >> 20) + " MiB): arch " + d.chip);
  if (facts.gpus.empty())
    progress("no GPU: " + facts.noGpuReason);
  if (facts.gpus.empty() && nominalGpu) {
    facts.gpus.push_back(host::nominalDevice(*nominalGpu));
    progress("--target=cuda: placing on a nominal " + nominalGpu->name + " GPU (" +
             nominalGpu->part + ")");
  }
  std::string text = host::hostSystemText(facts);
  OwningOpRef<ModuleOp> parsed = parseSourceString<ModuleOp>(text, module.getContext());
  if (!parsed)
    return failure();
  auto system = *parsed->getBody()->getOps<l1::SystemOp>().begin();
  module.getBody()->push_front(system->clone());
  return success();
}

SmallVector<l1::NodeOp> Compilation::usedNodes(llvm::function_ref<bool(llvm::StringRef)> wanted) {
  SmallVector<l1::NodeOp> used;
  for (auto system : module.getBody()->getOps<l1::SystemOp>())
    for (auto node : system.getBody().front().getOps<l1::NodeOp>()) {
      if (!node.getIsa() || !wanted(*node.getIsa()))
        continue;
      bool holds = false;
      for (Operation &op : module.getBody()->getOperations())
        if (auto ref = op.getAttrOfType<FlatSymbolRefAttr>("node"))
          holds |= isa<l1::ActorOp, l1::StageOp, l1::TensorGraphOp>(op) &&
                   ref.getValue() == node.getSymName();
      if (holds)
        used.push_back(node);
    }
  return used;
}

LogicalResult Compilation::run() {
  Phase from = options.from ? *options.from : detectPhase(module);
  Phase to = options.to;
  if (to < from)
    return fail("the program is at " + phaseName(from) + ", past " + phaseName(to));
  if (!options.cudaArch.empty() && !cuda::lookupArch(options.cudaArch))
    return fail("unknown --cuda-arch " + options.cudaArch + " (known: " +
                cuda::knownArchList() + ")");
  // --target=cuda on a machine without a GPU places on a nominal one.
  const cuda::CudaArch *nominalGpu = nullptr;
  if (options.target == TargetChoice::Cuda)
    nominalGpu = cuda::lookupArch(options.cudaArch.empty()
                                      ? cuda::defaultChip()
                                      : llvm::StringRef(options.cudaArch));
  if (!options.systemFile.empty() && from >= Phase::L1)
    return fail("--system places a program above L1; this one is already placed "
                "(it is at " + phaseName(from) + ")");

  PhaseOptions phaseOptions;
  phaseOptions.summary = options.summary;
  phaseOptions.hotShare = options.hotKernelShare;
  phaseOptions.lightLevel = options.lightOptLevel;
  phaseOptions.updateSharding = options.updateSharding;
  // --target=cuda: the graph goes to a GPU, though the search may find a
  // small model faster on the host.
  if (options.target == TargetChoice::Cuda)
    phaseOptions.graphIsa = "cuda";
  auto step = [&](llvm::StringRef name, Phase next, KernelTarget target) {
    if (failed(runPipeline(name, from, next, target, phaseOptions)) ||
        failed(dump(phaseName(next))))
      return failure();
    from = next;
    return success();
  };
  if (failed(dump(phaseName(from))))
    return failure();
  if (from == Phase::L3 && to >= Phase::L2) {
    if (failed(searchMethod(phaseOptions)) || failed(dump(phaseName(Phase::L2))))
      return failure();
    from = Phase::L2;
  }
  if (from == Phase::L2 && to >= Phase::L1) {
    // The hardware: --system, else the program's own, else this machine.
    if (!options.systemFile.empty() ? failed(loadSystem(options.systemFile))
                                    : failed(addHostSystem(nominalGpu)))
      return failure();
    if (failed(step("L2 -> L1 (placement search)", Phase::L1, KernelTarget::Host)))
      return failure();
  }
  if (from == to)
    return success();

  // The target: what the placement used, or what was asked for. (Read
  // now: L1 -> L0 replaces the L1 ops.)
  KernelTarget target = KernelTarget::Host;
  SmallVector<l1::NodeOp> ipus;
  if (from == Phase::L1)
    ipus = usedIpuNodes();
  if (!ipus.empty()) {
    // The placement put the model on an IPU: the ipu21 sink compiles it,
    // for the node's chip.
    if (options.target == TargetChoice::Host || options.target == TargetChoice::Cuda)
      return fail("the placement put the model on @" + ipus.front().getSymName() + " (isa " +
                  *ipus.front().getIsa() + "); --target=" +
                  (options.target == TargetChoice::Host ? "host" : "cuda") +
                  " cannot run it (--target=ipu21, or a system without the IPU)");
    if (ipus.size() > 1)
      return fail("the placed program uses " + llvm::Twine(ipus.size()) +
                  " IPU nodes; the ipu21 sink runs one IPU per program");
    target = KernelTarget::IPU21;
    phaseOptions.ipuArch = ipus.front().getIsa()->str();
    progress("target ipu21: @" + ipus.front().getSymName() + ", the " + phaseOptions.ipuArch +
             " (docs/ipu21.md)");
  } else if (options.target == TargetChoice::IPU21) {
    // The kernels go to the IPU's tiles whatever node the placement chose:
    // the L0 plan is what the ipu21 sink reads.
    target = KernelTarget::IPU21;
    phaseOptions.ipuArch = options.ipuArch;
    progress("target ipu21: the " + options.ipuArch + " (docs/ipu21.md)");
  } else if (from == Phase::L1) {
    SmallVector<l1::NodeOp> gpus = usedCudaNodes();
    bool useCuda = options.target == TargetChoice::Cuda ||
                   (options.target == TargetChoice::Auto && !gpus.empty());
    if (useCuda) {
      if (gpus.empty()) {
        std::string node;
        for (auto system : module.getBody()->getOps<l1::SystemOp>())
          for (auto n : system.getBody().front().getOps<l1::NodeOp>())
            if (n.getIsa() == "cuda" && node.empty())
              node = n.getSymName().str();
        return fail(node.empty()
                        ? "--target=cuda: the system has no isa = \"cuda\" node"
                        : "--target=cuda: nothing is placed on @" + node +
                              " (the L2 -> L1 placement search rejected it; "
                              "--search-report says which check)");
      }
      if (gpus.size() > 1)
        return fail("the placed program uses " + llvm::Twine(gpus.size()) +
                    " GPU nodes; the CUDA sink runs one device per program");
      std::string chip = !options.cudaArch.empty() ? options.cudaArch
                         : gpus.front().getArch()  ? gpus.front().getArch()->str()
                                                   : cuda::defaultChip().str();
      if (!cuda::lookupArch(chip))
        return gpus.front().emitError()
               << "unknown CUDA arch '" << chip << "' (the CUDA sink emits for "
               << cuda::knownArchList() << ")";
      phaseOptions.chip = chip;
      if (std::optional<int64_t> sm = gpus.front().getSm())
        phaseOptions.smCount = (unsigned)*sm;
      target = KernelTarget::Cuda;
      progress("target cuda: @" + gpus.front().getSymName() + ", PTX for " + chip);
    }
  } else if (options.target == TargetChoice::Cuda) {
    // Below L1 the placement is gone: the chip is what was asked for.
    target = KernelTarget::Cuda;
    phaseOptions.chip =
        options.cudaArch.empty() ? cuda::defaultChip().str() : options.cudaArch;
  }
  phaseOptions.hostKernels = options.hostKernels;

  // L1 -> L0 emits for the host or CUDA; the ipu21 sink reads that plan.
  if (from == Phase::L1 &&
      failed(step("L1 -> L0 (emission, memory packing)", Phase::L0,
                  target == KernelTarget::IPU21 ? KernelTarget::Host : target)))
    return failure();
  if (from == Phase::L0 && !options.l0Passes.empty()) {
    PassManager pm(module.getContext());
    if (options.configure && failed(options.configure(pm, "L0 -> L0 (--l0-passes)")))
      return failure();
    std::string error;
    llvm::raw_string_ostream os(error);
    if (failed(parsePassPipeline(options.l0Passes, pm, os)))
      return fail("--l0-passes: " + error);
    progress("L0 -> L0 (--l0-passes)");
    if (failed(pm.run(module)))
      return failure();
  }
  if (from == Phase::L0 && failed(dump("l0")))
    return failure();
  if (to == Phase::L0)
    return success();
  if (from == Phase::L0 && target == KernelTarget::IPU21)
    return step("L0 -> IPU21 (tile plans, placement)", Phase::Device, target);
  if (target == KernelTarget::IPU21)
    return from == Phase::Device
               ? success()
               : fail("--target=ipu21 compiles an L0 plan or a program above it");
  if (from == Phase::L0) {
    if (target == KernelTarget::Cuda) {
      if (failed(step("L0 -> PTX (device kernels for " + phaseOptions.chip + ")",
                      Phase::Device, target)))
        return failure();
    } else {
      from = Phase::Device; // no device kernels to compile
    }
  }
  if (to == Phase::Device)
    return success();

  if (target == KernelTarget::Cuda && options.ptxas != "none") {
    // The cubin next to the PTX, when a ptxas is at hand.
    std::string ptxas = options.ptxas;
    if (ptxas.empty()) {
      if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
        ptxas = "/usr/local/cuda/bin/ptxas";
      else if (llvm::ErrorOr<std::string> p = llvm::sys::findProgramByName("ptxas"))
        ptxas = *p;
    } else if (!llvm::sys::fs::can_execute(ptxas)) {
      return fail("--ptxas " + ptxas + ": not an executable");
    }
    phaseOptions.ptxas = ptxas;
    progress(ptxas.empty() ? "no ptxas: embedding the PTX only"
                           : "assembling a cubin with " + ptxas);
  }
  return toLLVM(from, target, phaseOptions);
}

LogicalResult Compilation::toLLVM(Phase from, KernelTarget target, PhaseOptions &phaseOptions) {
  llvm::StringRef name = "L0 -> LLVM (kernels, control, tables)";
  // Without a folder (no SYNPL_CACHE_DIR, XDG_CACHE_HOME or HOME) nothing
  // is cached, as for the other parts.
  std::string cacheDir = options.kernelCache.dir.empty() ? host::ObjectCache::defaultDir()
                                                         : options.kernelCache.dir;
  if (!options.kernelCache.enabled || cacheDir.empty() || target != KernelTarget::Host ||
      !options.dumpDir.empty()) {
    if (failed(runPipeline(name, from, Phase::LLVM, target, phaseOptions)))
      return failure();
    return dump(phaseName(Phase::LLVM));
  }
  // An executable's host kernels compiled before come from the object
  // cache: their levels are set first (they are part of the key), then the
  // cached ones get their entry points and the rest are lowered.
  if (phaseOptions.hotShare != 1.0) {
    PassManager pm(module.getContext());
    if (options.configure && failed(options.configure(pm, "L0 kernel effort")))
      return failure();
    buildKernelEffortPipeline(pm, phaseOptions.hotShare, phaseOptions.lightLevel);
    if (failed(pm.run(module)))
      return failure();
    phaseOptions.hotShare = 1.0; // done: the codegen pipeline leaves the levels
  }
  KernelObjects objects;
  objects.cache = options.kernelCache;
  objects.cache.dir = cacheDir;
  std::string error;
  if (failed(reuseKernelObjects(module, objects, error)))
    return fail(error);
  progress("kernels: " + llvm::Twine(objects.kernels) + " in " +
           llvm::Twine(objects.objects.size()) + " objects, " +
           llvm::Twine(objects.reusedKernels) + " from the cache (not lowered)");
  // The manifests are read from the kernels once lowered, before the
  // plan's tables replace them.
  struct AfterKernels : PassInstrumentation {
    KernelObjects *objects;
    explicit AfterKernels(KernelObjects *objects) : objects(objects) {}
    void runAfterPass(Pass *pass, Operation *op) override {
      if (pass->getArgument() == "synpl-convert-l0uop-to-llvm")
        if (auto module = dyn_cast<ModuleOp>(op))
          describeKernelObjects(module, *objects);
    }
  };
  if (failed(runPipeline(name, from, Phase::LLVM, target, phaseOptions,
                         std::make_unique<AfterKernels>(&objects))))
    return failure();
  attachKernelObjects(module, objects);
  return success();
}

} // namespace

LogicalResult synpl::driver::compile(ModuleOp module, const CompileOptions &options) {
  Compilation c{module, options};
  return c.run();
}
