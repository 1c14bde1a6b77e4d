//===- synplc.cpp - The synplexum compiler driver -------------------------===//
//
//   synplc examples/fashion_mnist/fashion_mnist.syn -o train && ./train
//
// Takes a program at any layer and compiles it for this host (or its GPU):
//   L3 (a .syn spec, or l3 ops)  --synpl-l3-to-l2 (search)-->
//   L2 (l2.methods)              --synpl-l2-to-l1 (search, over a system)-->
//   L1 (a placed program)        --the pinned host pipeline-->
//   L0, LLVM, an x86-64 object, an executable linked with the host runtime;
// a program placed on an isa = "cuda" node (or --target=cuda) has its device
// kernels compiled to PTX by synpl-cuda-kernel-pipeline and embedded.
// The system the L2 -> L1 search places the program on is `--system FILE`,
// else one the input declares, else this machine (synpl::host). `--emit`
// stops at any layer and prints it; `--dump-phases DIR` writes every layer.
// The standard MLIR debugging flags (--mlir-print-ir-after-all,
// --mlir-timing, ...) apply to every pass.
//
//===----------------------------------------------------------------------===//
#include "synpl/Conversion/Passes.h"
#include "synpl/Frontend/Syn.h"
#include "synpl/InitAll.h"
#include "synpl/Transforms/Passes.h"
#include "synpl/Pipelines/Pipelines.h"
#include "synpl/Target/HostObject.h"
#include "synpl/Target/HostSystem.h"
#include "synpl/Search/Search.h"
#include "synpl/Target/CudaTarget.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Dialect/L2/L2Ops.h"
#include "synpl/Dialect/L3/L3Ops.h"

#include "mlir/Debug/CLOptionsSetup.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#ifndef SYNPL_RUNTIME_BUILD_LIB
#define SYNPL_RUNTIME_BUILD_LIB ""
#endif
#ifndef SYNPL_DEFAULT_LINKER_DRIVER
#define SYNPL_DEFAULT_LINKER_DRIVER "clang++"
#endif

using namespace mlir;
namespace cl = llvm::cl;

namespace {

enum class Emit { L3, L2, L1, L0, PTX, LLVMDialect, LLVMIR, Object, Executable };

/// Where the kernels run: `auto` is CUDA when the placed program puts an
/// actor or a tensor graph on an isa = "cuda" node.
enum class Target { Auto, Host, Cuda };

/// The layer a program is at: what the highest lowering left to do reads.
enum class Layer { L3, L2, L1 };

cl::OptionCategory category("synplc options");

cl::opt<std::string> inputFile(cl::Positional,
                               cl::desc("<spec (.syn) or program at L3, L2 or L1 (.mlir)>"),
                               cl::Required, cl::cat(category));
cl::opt<std::string> outputFile("o", cl::desc("output file (default: a.out for "
                                              "executables, stdout for text)"),
                                cl::value_desc("file"), cl::cat(category));
cl::opt<Emit> emit(
    "emit", cl::desc("what to produce (default exe)"), cl::init(Emit::Executable),
    cl::values(clEnumValN(Emit::L3, "l3", "the spec as read (an L3 program, or a .syn file's L3 and what "
                                          "lower layers it also declares)"),
               clEnumValN(Emit::L2, "l2", "the spec and the method the L3 -> L2 search chose"),
               clEnumValN(Emit::L1, "l1", "the placed program the L2 -> L1 search chose"),
               clEnumValN(Emit::L0, "l0", "the L0 plan after memory packing"),
               clEnumValN(Emit::PTX, "ptx",
                          "the PTX of the device kernels (a CUDA target)"),
               clEnumValN(Emit::LLVMDialect, "mlir-llvm",
                          "the LLVM dialect module (kernels, control code, tables)"),
               clEnumValN(Emit::LLVMIR, "llvm",
                          "LLVM IR (before the backend's optimization)"),
               clEnumValN(Emit::Object, "obj", "an x86-64 ELF object"),
               clEnumValN(Emit::Executable, "exe",
                          "an executable linked with the host runtime")),
    cl::cat(category));
cl::opt<std::string> cpu("cpu", cl::desc("target CPU (default: native, this host's "
                                         "CPU and features)"),
                         cl::init("native"), cl::cat(category));
cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimization level 0-3 (default 3)"),
                           cl::Prefix, cl::init(3), cl::cat(category));
cl::opt<std::string> runtimeLib(
    "runtime-lib",
    cl::desc("the host runtime archive to link (default: ../lib/libSynplRuntime.a "
             "next to synplc, else the build tree's)"),
    cl::value_desc("path"), cl::cat(category));
cl::opt<std::string> linkerDriver(
    "linker-driver", cl::desc("C++ compiler driver used to link (default: the "
                              "one synplexum was built with, else clang++)"),
    cl::value_desc("path"), cl::cat(category));
cl::opt<std::string> systemFile(
    "system",
    cl::desc("the hardware to place the program on: a .syn file with a "
             "`system` block or a .mlir file with an l1.system (default: the "
             "program's own system, else this machine)"),
    cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> dumpPhases(
    "dump-phases",
    cl::desc("write the program at every layer it passes through to "
             "DIR/<name>.{l3,l2,l1,l0,llvm}.mlir"),
    cl::value_desc("dir"), cl::cat(category));
cl::opt<synpl::search::ReportFormat> searchReport(
    "search-report",
    cl::desc("print each search boundary's report (candidates, rejections "
             "per check, the best few with their costs, why the winner won, "
             "time) to stderr"),
    cl::ValueOptional, cl::init(synpl::search::ReportFormat::None),
    cl::values(clEnumValN(synpl::search::ReportFormat::Text, "text",
                          "a readable table (default)"),
               clEnumValN(synpl::search::ReportFormat::JSON, "json",
                          "one JSON object per line"),
               clEnumValN(synpl::search::ReportFormat::Text, "", "")),
    cl::cat(category));
cl::opt<Target> target(
    "target",
    cl::desc("where the kernels run (default auto: CUDA when the placement "
             "puts the model on a GPU node, else this host)"),
    cl::init(Target::Auto),
    cl::values(clEnumValN(Target::Auto, "auto",
                          "CUDA if the placed program uses an isa = \"cuda\" node"),
               clEnumValN(Target::Host, "host",
                          "every kernel on this CPU (a GPU placement's device "
                          "memory becomes host memory)"),
               clEnumValN(Target::Cuda, "cuda",
                          "device kernels as PTX, run through the CUDA driver; "
                          "without a GPU in the system, this machine's system "
                          "gets a nominal gpu_0 of --cuda-arch")),
    cl::cat(category));
cl::opt<std::string> cudaArch(
    "cuda-arch",
    cl::desc("the GPU architecture to emit PTX for (sm_80, sm_86, sm_89, "
             "sm_90, sm_90a; default: the GPU node's arch, else sm_80)"),
    cl::value_desc("sm_XX"), cl::cat(category));
cl::opt<std::string> ptxasPath(
    "ptxas",
    cl::desc("ptxas to assemble the PTX into a cubin embedded next to it "
             "(default: /usr/local/cuda/bin/ptxas or ptxas on PATH when "
             "present; 'none': embed the PTX only, JIT-compiled by the driver)"),
    cl::value_desc("path"), cl::cat(category));
cl::opt<std::string> l0Passes(
    "l0-passes",
    cl::desc("extra passes to run on the L0 plan after memory packing, before "
             "codegen (a pass pipeline, e.g. "
             "'synpl-l0-block-reduce{device-only=false}')"),
    cl::value_desc("pipeline"), cl::cat(category));
cl::opt<bool> cudaHostKernels(
    "cuda-host-kernels",
    cl::desc("also compile each device kernel for this CPU (a test aid: the "
             "fake driver of test/lib/FakeCuda runs them, so a CUDA build "
             "trains without a GPU)"),
    cl::Hidden, cl::cat(category));
cl::opt<bool> verbose("v", cl::desc("print each stage, the plan summary and the "
                                    "link command"),
                      cl::cat(category));

/// The runtime archive: next to the installed tool, else the build tree's.
std::string findRuntime(const char *argv0) {
  if (!runtimeLib.empty())
    return runtimeLib;
  std::string exe = llvm::sys::fs::getMainExecutable(argv0, (void *)&findRuntime);
  llvm::SmallString<256> installed(llvm::sys::path::parent_path(
      llvm::sys::path::parent_path(exe)));
  llvm::sys::path::append(installed, "lib", "libSynplRuntime.a");
  if (llvm::sys::fs::exists(installed))
    return installed.str().str();
  return SYNPL_RUNTIME_BUILD_LIB;
}

std::string findLinker() {
  if (!linkerDriver.empty())
    return linkerDriver;
  if (llvm::sys::fs::can_execute(SYNPL_DEFAULT_LINKER_DRIVER))
    return SYNPL_DEFAULT_LINKER_DRIVER;
  for (const char *name : {"clang++-22", "clang++", "c++", "g++"})
    if (llvm::ErrorOr<std::string> p = llvm::sys::findProgramByName(name))
      return *p;
  return "";
}

int fail(const llvm::Twine &msg) {
  llvm::errs() << "synplc: error: " << msg << "\n";
  return 1;
}

/// The layer of `module`: L1 when it holds a placed program (actors, stages
/// or tensor graphs), L2 when it holds a method, else L3.
Layer layerOf(ModuleOp module) {
  bool l2 = false;
  for (Operation &op : module.getBody()->getOperations()) {
    if (isa<synpl::l1::ActorOp, synpl::l1::StageOp, synpl::l1::TensorGraphOp>(op))
      return Layer::L1;
    l2 |= isa<synpl::l2::MethodsOp>(op);
  }
  return l2 ? Layer::L2 : Layer::L3;
}

/// Reads the l1.system of `path` (.syn or .mlir) into `module`, replacing
/// any system it has.
LogicalResult loadSystem(ModuleOp module, llvm::StringRef path,
                         MLIRContext *context) {
  std::string error;
  auto buffer = openInputFile(path, &error);
  if (!buffer) {
    llvm::errs() << "synplc: error: " << error << "\n";
    return failure();
  }
  auto sourceMgr = std::make_shared<llvm::SourceMgr>();
  sourceMgr->AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(*sourceMgr, context);
  OwningOpRef<ModuleOp> systemModule =
      path.ends_with(".syn") ? synpl::parseSyn(*sourceMgr, context)
                             : parseSourceFile<ModuleOp>(*sourceMgr, context);
  if (!systemModule)
    return failure();
  SmallVector<synpl::l1::SystemOp> systems(
      systemModule->getBody()->getOps<synpl::l1::SystemOp>());
  if (systems.size() != 1) {
    llvm::errs() << "synplc: error: " << path << ": --system needs a file with "
                 << "exactly one system (l1.system), found " << systems.size()
                 << "\n";
    return failure();
  }
  for (auto old : llvm::make_early_inc_range(
           module.getBody()->getOps<synpl::l1::SystemOp>()))
    old.erase();
  module.getBody()->push_front(systems.front()->clone());
  return success();
}

/// Adds this machine's system (synpl::host) unless `module` has one. With
/// `nominalGpu`, a machine without a GPU gets one of that architecture (to
/// compile here for a GPU machine).
LogicalResult addHostSystem(ModuleOp module, MLIRContext *context,
                            const synpl::cuda::CudaArch *nominalGpu) {
  if (!module.getBody()->getOps<synpl::l1::SystemOp>().empty())
    return success();
  synpl::host::HostFacts facts = synpl::host::detectHostFacts();
  if (verbose) {
    for (const synpl::cuda::CudaDevice &d : facts.gpus)
      llvm::errs() << "synplc: found GPU " << d.ordinal << ": " << d.name
                   << " (compute capability " << d.major << "." << d.minor
                   << ", " << d.smCount << " SMs, " << (d.memoryBytes >> 20)
                   << " MiB): arch " << d.chip << "\n";
    if (facts.gpus.empty())
      llvm::errs() << "synplc: no GPU: " << facts.noGpuReason << "\n";
  }
  if (facts.gpus.empty() && nominalGpu) {
    facts.gpus.push_back(synpl::host::nominalDevice(*nominalGpu));
    if (verbose)
      llvm::errs() << "synplc: --target=cuda: placing on a nominal "
                   << nominalGpu->name << " GPU (" << nominalGpu->part << ")\n";
  }
  std::string text = synpl::host::hostSystemText(facts);
  OwningOpRef<ModuleOp> parsed = parseSourceString<ModuleOp>(text, context);
  if (!parsed)
    return failure();
  auto system = *parsed->getBody()->getOps<synpl::l1::SystemOp>().begin();
  module.getBody()->push_front(system->clone());
  return success();
}

/// The CUDA nodes of the placed program's system that hold an actor, a
/// stage or a tensor graph (in system order).
SmallVector<synpl::l1::NodeOp> usedCudaNodes(ModuleOp module) {
  SmallVector<synpl::l1::NodeOp> used;
  for (auto system : module.getBody()->getOps<synpl::l1::SystemOp>())
    for (auto node : system.getBody().front().getOps<synpl::l1::NodeOp>()) {
      if (node.getIsa() != "cuda")
        continue;
      bool holds = false;
      for (Operation &op : module.getBody()->getOperations())
        if (auto ref = op.getAttrOfType<FlatSymbolRefAttr>("node"))
          holds |= isa<synpl::l1::ActorOp, synpl::l1::StageOp,
                       synpl::l1::TensorGraphOp>(op) &&
                   ref.getValue() == node.getSymName();
      if (holds)
        used.push_back(node);
    }
  return used;
}

/// Adds the pass registered as `name` (`synpl-l3-to-l2`, ...) to `pm`.
LogicalResult addNamedPass(OpPassManager &pm, llvm::StringRef name) {
  std::string error;
  llvm::raw_string_ostream os(error);
  if (succeeded(parsePassPipeline(name, pm, os)))
    return success();
  llvm::errs() << "synplc: error: this build has no pass " << name << ": "
               << error << "\n";
  return failure();
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  registerAsmPrinterCLOptions();
  tracing::DebugConfig::registerCLOptions();
  // The passes by name (the phases look theirs up; --mlir-print-ir-after
  // takes pass names).
  synpl::registerAllPasses();
  cl::HideUnrelatedOptions({&category});
  cl::ParseCommandLineOptions(
      argc, argv,
      "synplc: compiles a training program for this host or its GPU\n\n"
      "  synplc examples/fashion_mnist/fashion_mnist.syn -o train && ./train\n\n"
      "The input is a .syn spec or an MLIR program at L3, L2 or L1. What it\n"
      "leaves open is searched: L3 -> L2 picks a method (architecture,\n"
      "sampling, backward, update), L2 -> L1 places it on a system (--system,\n"
      "else the program's own, else this machine); then the pinned host\n"
      "pipeline (L1 -> L0, memory packing, l0ctl/l0uop -> LLVM, the plan's\n"
      "tables), an x86-64 object written in process, linked with the host\n"
      "runtime. When the placement puts the model on a GPU node (this\n"
      "machine's GPUs join its system when the CUDA driver is installed), or\n"
      "with --target=cuda, the device kernels become PTX (NVPTX in process)\n"
      "embedded in the executable, which runs them through the CUDA driver.\n"
      "Run the result with --help for its options. --emit stops at\n"
      "any layer; --search-report shows each search's candidates and choice.\n"
      "The standard MLIR flags (--mlir-print-ir-after-all, --mlir-timing,\n"
      "...) apply to every pass; see --help-hidden.\n");

  DialectRegistry registry;
  synpl::registerHostCodegen(registry);
  synpl::registerCudaCodegen(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  std::string error;
  auto input = openInputFile(inputFile, &error);
  if (!input)
    return fail(error);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  // Remarks (the plan summary) only with -v.
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  context.getDiagEngine().registerHandler([&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Remark && !verbose)
      return success();
    return failure(); // on to the source manager handler
  });

  // A .syn spec is read by the front end (L3 today); anything else is MLIR.
  bool isSyn = llvm::StringRef(inputFile).ends_with(".syn");
  OwningOpRef<ModuleOp> module =
      isSyn ? synpl::parseSyn(sourceMgr, &context)
            : parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;
  if (failed(verify(*module)))
    return 1;
  auto writeModule = [&]() -> int {
    std::string out = outputFile.empty() ? "-" : outputFile.getValue();
    auto file = openOutputFile(out, &error);
    if (!file)
      return fail(error);
    module->print(file->os());
    file->os() << "\n";
    file->keep();
    return 0;
  };
  // Every phase's passes share the timing report (--mlir-timing) and the
  // pass manager flags (--mlir-print-ir-after-all, ...).
  DefaultTimingManager tm;
  applyDefaultTimingManagerCLOptions(tm);
  TimingScope timing = tm.getRootScope();
  auto runPhase = [&](llvm::StringRef name,
                      llvm::function_ref<LogicalResult(OpPassManager &)> build)
      -> LogicalResult {
    PassManager pm(&context);
    if (failed(applyPassManagerCLOptions(pm)) || failed(build(pm)))
      return failure();
    TimingScope phase = timing.nest(name);
    pm.enableTiming(phase);
    if (verbose)
      llvm::errs() << "synplc: " << name << "\n";
    return pm.run(*module);
  };
  // --dump-phases DIR: DIR/<name>.<layer>.mlir, <name> the input's file
  // name without its extensions (fashion_mnist.l1.mlir -> fashion_mnist).
  std::string stem = llvm::sys::path::filename(inputFile).str();
  stem = stem.substr(0, stem.find('.'));
  auto dump = [&](llvm::StringRef layer) -> LogicalResult {
    if (dumpPhases.empty())
      return success();
    if (std::error_code ec = llvm::sys::fs::create_directories(dumpPhases)) {
      llvm::errs() << "synplc: error: cannot create " << dumpPhases << ": "
                   << ec.message() << "\n";
      return failure();
    }
    llvm::SmallString<256> path(dumpPhases);
    llvm::sys::path::append(path, stem + "." + layer + ".mlir");
    auto file = openOutputFile(path, &error);
    if (!file) {
      llvm::errs() << "synplc: error: " << error << "\n";
      return failure();
    }
    module->print(file->os());
    file->os() << "\n";
    file->keep();
    return success();
  };
  if (searchReport != synpl::search::ReportFormat::None)
    synpl::search::SearchReportSink::global().setFormat(searchReport);

  // --target=cuda on a machine without a GPU places on a nominal one.
  const synpl::cuda::CudaArch *nominalGpu = nullptr;
  if (!cudaArch.empty() && !synpl::cuda::lookupArch(cudaArch))
    return fail("unknown --cuda-arch " + cudaArch + " (known: " +
                synpl::cuda::knownArchList() + ")");
  if (target == Target::Cuda)
    nominalGpu = synpl::cuda::lookupArch(
        cudaArch.empty() ? synpl::cuda::defaultChip() : llvm::StringRef(cudaArch));
  if (emit == Emit::PTX && target == Target::Host)
    return fail("--emit=ptx needs a CUDA target, not --target=host");

  Layer layer = layerOf(*module);
  if (!systemFile.empty() && layer == Layer::L1)
    return fail("--system places a program above L1; " + inputFile +
                " is already placed (it is an L1 program)");
  if (layer == Layer::L3) {
    if (failed(dump("l3")))
      return 1;
    if (emit == Emit::L3)
      return writeModule();
    if (failed(runPhase("L3 -> L2 (method search)", [](OpPassManager &pm) {
          return addNamedPass(pm, "synpl-l3-to-l2");
        })))
      return 1;
    layer = Layer::L2;
  } else if (emit == Emit::L3) {
    // A .syn file prints as read, whatever layers it declares; an MLIR
    // program below L3 has no L3 form to stop at.
    if (!isSyn)
      return fail("--emit=l3: " + inputFile + " is already an " +
                  (layer == Layer::L2 ? "L2" : "L1") + " program");
    return writeModule();
  }
  if (layer == Layer::L2) {
    if (failed(dump("l2")))
      return 1;
    if (emit == Emit::L2)
      return writeModule();
    // The hardware: --system, else the program's own, else this machine.
    if (!systemFile.empty() ? failed(loadSystem(*module, systemFile, &context))
                            : failed(addHostSystem(*module, &context, nominalGpu)))
      return 1;
    if (failed(runPhase("L2 -> L1 (placement search)", [](OpPassManager &pm) {
          return addNamedPass(pm, "synpl-l2-to-l1");
        })))
      return 1;
    layer = Layer::L1;
  } else if (emit == Emit::L2) {
    return fail("--emit=l2: " + inputFile + " is already an L1 program");
  }
  if (failed(dump("l1")))
    return 1;
  if (emit == Emit::L1)
    return writeModule();

  // The target: what the placement used, or what was asked for.
  SmallVector<synpl::l1::NodeOp> gpus = usedCudaNodes(*module);
  bool useCuda = target == Target::Cuda ||
                 (target == Target::Auto && (!gpus.empty() || emit == Emit::PTX));
  // (Read now: L1 -> L0 replaces the L1 ops.)
  std::string chip;
  unsigned gpuSmCount = 0;
  if (useCuda) {
    if (gpus.empty()) {
      std::string node;
      for (auto system : module->getBody()->getOps<synpl::l1::SystemOp>())
        for (auto n : system.getBody().front().getOps<synpl::l1::NodeOp>())
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
    chip = !cudaArch.empty() ? cudaArch.getValue()
           : gpus.front().getArch() ? gpus.front().getArch()->str()
                                    : synpl::cuda::defaultChip().str();
    if (std::optional<int64_t> sm = gpus.front().getSm())
      gpuSmCount = (unsigned)*sm;
    if (verbose)
      llvm::errs() << "synplc: target cuda: @" << gpus.front().getSymName()
                   << ", PTX for " << chip << "\n";
  }

  synpl::HostPipelineOptions hostOptions;
  hostOptions.summary = verbose.getValue();
  hostOptions.executable = true;
  if (failed(runPhase("L1 -> L0 (emission, memory packing)",
                      [&](OpPassManager &pm) {
                        synpl::buildHostEmissionPipeline(pm, hostOptions);
                        return success();
                      })))
    return 1;
  if (!l0Passes.empty() &&
      failed(runPhase("L0 -> L0 (--l0-passes)", [&](OpPassManager &pm) {
        std::string error;
        llvm::raw_string_ostream os(error);
        if (succeeded(parsePassPipeline(l0Passes, pm, os)))
          return success();
        llvm::errs() << "synplc: error: --l0-passes: " << error << "\n";
        return failure();
      })))
    return 1;
  if (failed(dump("l0")))
    return 1;
  if (emit == Emit::L0)
    return writeModule();

  if (useCuda) {
    // The device kernels: block reductions, the launch search, l0uop ->
    // NVVM, PTX in process (gpu.binary). With --cuda-host-kernels they keep
    // their UOps, and the host codegen below compiles them too.
    synpl::CudaKernelPipelineOptions cudaOptions;
    cudaOptions.chip = chip;
    cudaOptions.smCount = gpuSmCount;
    cudaOptions.keepUops = cudaHostKernels.getValue();
    if (failed(runPhase("L0 -> PTX (device kernels for " + chip + ")",
                        [&](OpPassManager &pm) {
                          synpl::buildCudaKernelPipeline(pm, cudaOptions);
                          return success();
                        })) ||
        failed(dump("cuda")))
      return 1;
    if (emit == Emit::PTX) {
      std::string out = outputFile.empty() ? "-" : outputFile.getValue();
      auto file = openOutputFile(out, &error);
      if (!file)
        return fail(error);
      for (auto binary : module->getOps<gpu::BinaryOp>())
        for (Attribute a : binary.getObjects())
          if (auto object = dyn_cast<gpu::ObjectAttr>(a);
              object && object.getFormat() == gpu::CompilationTarget::Assembly)
            file->os() << object.getObject().getValue();
      file->keep();
      return 0;
    }
    // The cubin next to the PTX, when a ptxas is at hand.
    if (ptxasPath != "none") {
      std::string ptxas = ptxasPath;
      if (ptxas.empty()) {
        if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
          ptxas = "/usr/local/cuda/bin/ptxas";
        else if (llvm::ErrorOr<std::string> p = llvm::sys::findProgramByName("ptxas"))
          ptxas = *p;
      } else if (!llvm::sys::fs::can_execute(ptxas)) {
        return fail("--ptxas " + ptxas + ": not an executable");
      }
      hostOptions.ptxas = ptxas;
      if (verbose)
        llvm::errs() << "synplc: "
                     << (ptxas.empty() ? "no ptxas: embedding the PTX only"
                                       : "assembling a cubin with " + ptxas)
                     << "\n";
    }
  }

  if (failed(runPhase("L0 -> LLVM (kernels, control, tables)",
                      [&](OpPassManager &pm) {
                        synpl::buildHostCodegenPipeline(pm, hostOptions);
                        return success();
                      })) ||
      failed(dump("llvm")))
    return 1;

  auto writeText = [&](auto print) -> int {
    std::string out = outputFile.empty() ? "-" : outputFile.getValue();
    auto file = openOutputFile(out, &error);
    if (!file)
      return fail(error);
    print(file->os());
    file->keep();
    return 0;
  };
  if (emit == Emit::LLVMDialect)
    return writeModule();

  synpl::host::ObjectOptions objectOptions;
  objectOptions.cpu = cpu;
  objectOptions.optLevel = std::min(optLevel.getValue(), 3u);
  if (emit == Emit::LLVMIR) {
    // The module as LLVM IR, before the backend's optimization (what
    // --emit=obj then optimizes and compiles).
    llvm::LLVMContext llvmContext;
    std::unique_ptr<llvm::Module> llvmModule =
        translateModuleToLLVMIR(*module, llvmContext, "synpl");
    if (!llvmModule)
      return 1;
    return writeText([&](llvm::raw_ostream &os) { llvmModule->print(os, nullptr); });
  }

  // The object: to the output (--emit=obj) or a temporary to link.
  std::string objectPath;
  llvm::SmallString<128> tmpObject;
  if (emit == Emit::Object) {
    objectPath = outputFile.empty() ? "a.o" : outputFile.getValue();
  } else {
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("synplc", "o", tmpObject))
      return fail("cannot create a temporary object file: " + ec.message());
    objectPath = tmpObject.str().str();
  }
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objectPath, ec, llvm::sys::fs::OF_None);
    if (ec)
      return fail("cannot write " + objectPath + ": " + ec.message());
    if (verbose)
      llvm::errs() << "synplc: writing the object " << objectPath << "\n";
    if (failed(synpl::host::emitObject(*module, os, objectOptions)))
      return 1;
  }
  if (emit == Emit::Object)
    return 0;

  std::string runtime = findRuntime(argv[0]);
  if (runtime.empty() || !llvm::sys::fs::exists(runtime)) {
    llvm::sys::fs::remove(objectPath);
    return fail("cannot find the host runtime libSynplRuntime.a (looked next to "
                "synplc and in the build tree); pass --runtime-lib");
  }
  std::string linker = findLinker();
  if (linker.empty()) {
    llvm::sys::fs::remove(objectPath);
    return fail("no C++ linker driver found (clang++, c++ or g++); pass "
                "--linker-driver");
  }
  std::string output = outputFile.empty() ? "a.out" : outputFile.getValue();
  // -ldl: the runtime opens the CUDA driver with dlopen.
  SmallVector<std::string> linkArgs = {linker,  objectPath, runtime, "-lz",
                                       "-lpthread", "-ldl", "-lmvec",  "-lm",
                                       "-o",    output};
  if (llvm::StringRef(linker).contains("clang"))
    linkArgs.insert(linkArgs.begin() + 1, "-fuse-ld=lld");
  SmallVector<llvm::StringRef> argRefs(linkArgs.begin(), linkArgs.end());
  if (verbose) {
    llvm::errs() << "synplc: linking:";
    for (llvm::StringRef a : argRefs)
      llvm::errs() << " " << a;
    llvm::errs() << "\n";
  }
  std::string linkError;
  int rc = llvm::sys::ExecuteAndWait(linker, argRefs, std::nullopt, {}, 0, 0,
                                     &linkError);
  llvm::sys::fs::remove(objectPath);
  if (rc != 0)
    return fail("linking " + output + " failed" +
                (linkError.empty() ? "" : ": " + linkError));
  return 0;
}
