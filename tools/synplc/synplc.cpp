//===- synplc.cpp - The synplexum compiler driver -------------------------===//
//
//   synplc examples/fashion_mnist/fashion_mnist.syn -o train && ./train
//
// Takes a program at any layer and compiles it for this host (or its GPU).
// The work is the driver library's (synpl/Driver/Driver.h), over the phases
// of synpl/Pipelines/Phases.h; this file maps the command line onto them:
// --emit (or --compile-from / --compile-to) picks the phases and the
// output, the rest are the driver's options. The standard MLIR debugging
// flags (--mlir-print-ir-after-all, --mlir-timing, ...) apply to every pass.
//
//===----------------------------------------------------------------------===//
#include "synpl/Dialect/IPU21/IPU21Ops.h"
#include "synpl/Driver/Driver.h"
#include "synpl/Support/DeepInput.h"
#include "synpl/InitAll.h"
#include "synpl/Search/Search.h"
#include "synpl/Target/HostObject.h"

#include "mlir/Debug/CLOptionsSetup.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <deque>

using namespace mlir;
using namespace synpl::driver;
using synpl::Phase;
namespace cl = llvm::cl;

namespace {

enum class Emit { L3, L2, L1, L0, PTX, LLVMDialect, LLVMIR, Object, Executable };

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
cl::opt<double> hotKernelShare(
    "hot-kernel-share",
    cl::desc("the cheapest host kernels, as many as take at most 1 - this share of a "
             "training step's estimated time when run 8 times slower (unvectorized), "
             "are optimized at --light-opt-level, the others at -O (default 0.99; 1: "
             "every kernel at -O)"),
    cl::init(0.99), cl::cat(category));
cl::opt<unsigned> lightOptLevel(
    "light-opt-level",
    cl::desc("optimization level 0-3 of the host kernels outside --hot-kernel-share "
             "(default 1; capped by -O)"),
    cl::init(1), cl::cat(category));
cl::opt<std::string> updateSharding(
    "update-sharding",
    cl::desc("data-parallel replicas: whether each updates its block of the large "
             "parameters (ZeRO stage 1: gradients reduce-scattered, the optimizer state "
             "split among the replicas, the updated blocks all-gathered): auto (the "
             "placement search decides, the default), on (whenever one qualifies), off"),
    cl::init("auto"), cl::cat(category));
cl::opt<std::string> runtimeLib(
    "runtime-lib",
    cl::desc("the host runtime archive to link (default: ../lib/libSynplRuntime.a "
             "next to synplc, the install prefix's, else the build tree's)"),
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
cl::opt<TargetChoice> target(
    "target",
    cl::desc("where the kernels run (default auto: CUDA when the placement "
             "puts the model on a GPU node, else this host)"),
    cl::init(TargetChoice::Auto),
    cl::values(clEnumValN(TargetChoice::Auto, "auto",
                          "CUDA if the placed program uses an isa = \"cuda\" node"),
               clEnumValN(TargetChoice::Host, "host",
                          "every kernel on this CPU (a GPU placement's device "
                          "memory becomes host memory)"),
               clEnumValN(TargetChoice::Cuda, "cuda",
                          "device kernels as PTX, run through the CUDA driver; "
                          "the placement puts the model on a GPU even where the "
                          "host would run it faster; without a GPU in the "
                          "system, this machine's system gets a nominal gpu_0 "
                          "of --cuda-arch"),
               clEnumValN(TargetChoice::IPU21, "ipu21",
                          "the L0 plan on a Graphcore IPU's tiles, written as the "
                          "program file synpl-ipu21-sim runs (-o, default a.ipu); "
                          "a plan holding what the sink cannot place yet fails "
                          "whole, naming it (docs/ipu21.md)")),
    cl::cat(category));
cl::opt<std::string> ipuArch(
    "ipu-arch",
    cl::desc("with --target=ipu21: the IPU (ipu21: the C600's, the default; "
             "ipu2: GC200, Bow)"),
    cl::init("ipu21"), cl::cat(category));
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
cl::opt<bool> noCache(
    "no-cache",
    cl::desc("search the method, lower and compile every kernel and part of "
             "the executable and keep nothing (by default they come from the "
             "object cache, $SYNPL_CACHE_DIR or ~/.cache/synpl, when compiled "
             "before: kernels with the same L0 code are then not even lowered, "
             "the other parts need the same IR, both the same target and "
             "options; an L3 program searched before with the same options "
             "reads the method chosen then; the cache keeps within "
             "$SYNPL_CACHE_MAX_SIZE, default 2G)"),
    cl::cat(category));
cl::opt<bool> verbose("v", cl::desc("print each stage, the plan summary and the "
                                    "link command"),
                      cl::cat(category));

cl::opt<std::string> compileFrom(
    "compile-from",
    cl::desc("the phase the input is at (l3, l2, l1, l0, device; default: "
             "what it holds)"),
    cl::value_desc("phase"), cl::cat(category));
cl::opt<std::string> compileTo(
    "compile-to",
    cl::desc("stop after this phase and print the program (l3, l2, l1, l0, "
             "device, llvm); overrides --emit"),
    cl::value_desc("phase"), cl::cat(category));

int fail(const llvm::Twine &msg) {
  llvm::errs() << "synplc: error: " << msg << "\n";
  return 1;
}

/// The phase --emit stops after.
Phase lastPhase(Emit e) {
  switch (e) {
  case Emit::L3:
    return Phase::L3;
  case Emit::L2:
    return Phase::L2;
  case Emit::L1:
    return Phase::L1;
  case Emit::L0:
    return Phase::L0;
  case Emit::PTX:
    return Phase::Device;
  default:
    return Phase::LLVM;
  }
}

/// Whether one of MLIR's IR printing flags (--mlir-print-ir-after-all,
/// --mlir-print-ir-before=..., ...) was given: the passes must then run to
/// be printed.
bool printingIR() {
  for (auto &entry : llvm::cl::getRegisteredOptions())
    if (entry.first.starts_with("mlir-print-ir-") && entry.second->getNumOccurrences())
      return true;
  return false;
}

} // namespace

static int synplcMain(int argc, char **argv) {
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  registerAsmPrinterCLOptions();
  tracing::DebugConfig::registerCLOptions();
  // The passes by name: --l0-passes and --mlir-print-ir-after take them.
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
      "When it puts the model on an IPU node (isa: ipu21, as in\n"
      "examples/systems/c600.syn), or with --target=ipu21, the L0 plan is\n"
      "placed on the IPU's tiles and written as a program file that\n"
      "synpl-ipu21-sim trains (the runtime's executor, the BSP simulator as\n"
      "its device); what the sink cannot place fails the compile, named.\n"
      "On a system of several hosts or GPUs (examples/systems/2-hosts.syn)\n"
      "the placement may split the batch among data-parallel replicas (the\n"
      "executable then runs under mpirun, one rank per replica, gradients\n"
      "all-reduced while the backward pass goes on) or, for a model one\n"
      "node's memory cannot hold, split its large linear layers by columns\n"
      "or rows across tensor-parallel shards (mpirun -np <shards>;\n"
      "docs/distributed.md).\n"
      "Run the result with --help for its options. --emit stops at\n"
      "any layer (or --compile-from / --compile-to name the phases: l3, l2,\n"
      "l1, l0, device, llvm); --search-report shows each search's candidates\n"
      "and choice.\n"
      "The standard MLIR flags (--mlir-print-ir-after-all, --mlir-timing,\n"
      "...) apply to every pass; see --help-hidden.\n");

  DialectRegistry registry;
  registerDialects(registry);
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
  OwningOpRef<ModuleOp> module = parseInput(sourceMgr, &context, inputFile);
  if (!module)
    return 1;

  // What to run: --compile-from / --compile-to, else --emit.
  CompileOptions options;
  Emit output = emit;
  options.to = lastPhase(emit);
  if (!compileFrom.empty()) {
    options.from = synpl::parsePhase(compileFrom);
    if (!options.from)
      return fail("--compile-from=" + compileFrom + ": the phases are " +
                  synpl::phaseNames());
  }
  if (!compileTo.empty()) {
    std::optional<Phase> to = synpl::parsePhase(compileTo);
    if (!to)
      return fail("--compile-to=" + compileTo + ": the phases are " +
                  synpl::phaseNames());
    options.to = *to;
    output = Emit::LLVMDialect; // print the module, whatever phase
  }
  Phase at = options.from ? *options.from : synpl::detectPhase(*module);
  bool isSyn = llvm::StringRef(inputFile).ends_with(".syn");
  if (options.to < at) {
    // A .syn file prints as read, whatever layers it declares.
    if (emit == Emit::L3 && isSyn && compileTo.empty())
      options.to = at;
    else
      return fail((compileTo.empty() ? "--emit=" + synpl::phaseName(options.to)
                                     : "--compile-to=" + compileTo) +
                  ": " + inputFile + " is already an " +
                  llvm::StringRef(synpl::phaseName(at)).upper() + " program");
  }
  if (emit == Emit::PTX && target == TargetChoice::Host)
    return fail("--emit=ptx needs a CUDA target, not --target=host");
  // The ipu21 sink ends in its program file (the default output) at the
  // device phase; the layers above print as usual.
  bool ipu21 = target == TargetChoice::IPU21;
  if (ipu21 && compileTo.empty()) {
    if (emit == Emit::Executable)
      options.to = Phase::Device;
    else if (options.to > Phase::L0)
      return fail("--target=ipu21 writes its program file (the default --emit) or a layer "
                  "up to l0 (--emit=l3 ... l0); --compile-to=device prints the ipu21 graph");
  }
  options.target = emit == Emit::PTX && target == TargetChoice::Auto
                       ? TargetChoice::Cuda
                       : target.getValue();
  options.cudaArch = cudaArch;
  options.ipuArch = ipuArch;
  options.ptxas = ptxasPath;
  options.systemFile = systemFile;
  options.l0Passes = l0Passes;
  options.hostKernels = cudaHostKernels;
  options.summary = verbose;
  options.hotKernelShare = hotKernelShare;
  options.lightOptLevel = lightOptLevel;
  options.updateSharding = updateSharding;
  options.dumpDir = dumpPhases;
  // An executable's kernels compiled before are not lowered again.
  if (output == Emit::Executable && !noCache) {
    options.kernelCache.enabled = true;
    options.kernelCache.cpu = cpu;
    options.kernelCache.optLevel = optLevel;
  }
  // A .syn compiled again reads the method its search chose before; not
  // when the search is being watched (its report, the IR around its pass).
  options.searchCache.enabled =
      !noCache && searchReport == synpl::search::ReportFormat::None && !printingIR();
  // --dump-phases DIR: DIR/<name>.<phase>.mlir, <name> the input's file
  // name without its extensions (fashion_mnist.l1.mlir -> fashion_mnist).
  std::string stem = llvm::sys::path::filename(inputFile).str();
  options.dumpStem = stem.substr(0, stem.find('.'));
  options.error = [](const llvm::Twine &msg) { fail(msg); };
  if (verbose)
    options.progress = [](llvm::StringRef line) {
      llvm::errs() << "synplc: " << line << "\n";
    };
  // Every phase's passes share the timing report (--mlir-timing) and the
  // pass manager flags (--mlir-print-ir-after-all, ...).
  DefaultTimingManager tm;
  applyDefaultTimingManagerCLOptions(tm);
  // One scope per phase, stopped when the next starts (a pass manager keeps
  // a reference to its scope: a deque never moves them).
  TimingScope timing = tm.getRootScope();
  std::deque<TimingScope> phaseTimers;
  auto startPhase = [&](llvm::StringRef phase) -> TimingScope & {
    if (!phaseTimers.empty())
      phaseTimers.back().stop();
    phaseTimers.push_back(timing.nest(phase));
    return phaseTimers.back();
  };
  options.configure = [&](PassManager &pm, llvm::StringRef phase) {
    if (failed(applyPassManagerCLOptions(pm)))
      return failure();
    pm.enableTiming(startPhase(phase));
    return success();
  };
  if (searchReport != synpl::search::ReportFormat::None)
    synpl::search::SearchReportSink::global().setFormat(searchReport);

  if (failed(compile(*module, options)))
    return 1;

  std::string out = outputFile.empty() ? "-" : outputFile.getValue();
  auto writeText = [&](auto print) -> int {
    auto file = openOutputFile(out, &error);
    if (!file)
      return fail(error);
    print(file->os());
    file->keep();
    return 0;
  };
  // A placement on an IPU node compiles for the ipu21 sink too: the module
  // then ends in its graph.
  bool onIpu = ipu21 || !module->getBody()->getOps<synpl::ipu21::GraphOp>().empty();
  if (onIpu && compileTo.empty() && output == Emit::Executable)
    return failed(writeIPU21Program(*module, outputFile.empty() ? "a.ipu" : out));
  if (onIpu && compileTo.empty() && output > Emit::L0)
    return fail("the placement put the model on an IPU: synplc writes its program file (the "
                "default --emit) or a layer up to l0");
  switch (output) {
  case Emit::PTX:
    return writeText([&](llvm::raw_ostream &os) { printPtx(*module, os); });
  case Emit::LLVMIR: {
    // The module as LLVM IR, before the backend's optimization (what
    // --emit=obj then optimizes and compiles).
    llvm::LLVMContext llvmContext;
    std::unique_ptr<llvm::Module> llvmModule =
        synpl::host::translateToLLVMIR(*module, llvmContext);
    if (!llvmModule)
      return 1;
    return writeText([&](llvm::raw_ostream &os) { llvmModule->print(os, nullptr); });
  }
  case Emit::Object:
  case Emit::Executable: {
    startPhase("LLVM optimization, code generation and link");
    LinkOptions link;
    link.cpu = cpu;
    link.optLevel = optLevel;
    link.runtimeLib = runtimeLib;
    link.linkerDriver = linkerDriver;
    link.cache = !noCache;
    link.progress = options.progress;
    link.error = options.error;
    if (output == Emit::Object)
      return failed(writeObject(*module, outputFile.empty() ? "a.o" : out, link));
    return failed(writeExecutable(*module, outputFile.empty() ? "a.out" : out, link));
  }
  default:
    return writeText([&](llvm::raw_ostream &os) { module->print(os); os << "\n"; });
  }
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // The parsers recurse per nesting level: a large stack, and input deeper
  // than synpl::kMaxInputNesting is refused before it is parsed.
  return synpl::runWithLargeStack([&] { return synplcMain(argc, argv); });
}
