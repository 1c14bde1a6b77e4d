//===- synplc.cpp - The synplexum compiler driver -------------------------===//
//
//   synplc examples/fashion_mnist/fashion_mnist.l1.mlir -o train && ./train
//
// Reads a verified L1 program, lowers it through the pinned host pipeline
// (L1 -> L0 emission, memory packing, l0ctl/l0uop -> LLVM, the plan's
// metadata tables), writes an x86-64 object with the in-process LLVM
// backend, and links it with the host runtime (SynplRuntime) into an
// executable through the clang driver and lld. `--emit` stops at any
// stage and prints or writes it. The standard MLIR debugging flags
// (--mlir-print-ir-after-all, --mlir-timing, ...) apply to the pipeline.
//
//===----------------------------------------------------------------------===//
#include "synpl/Conversion/Passes.h"
#include "synpl/Frontend/Syn.h"
#include "synpl/InitAll.h"
#include "synpl/Transforms/Passes.h"
#include "synpl/Pipelines/Pipelines.h"
#include "synpl/Target/HostObject.h"

#include "mlir/Debug/CLOptionsSetup.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
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

enum class Emit { L3, L0, LLVMDialect, LLVMIR, Object, Executable };

cl::OptionCategory category("synplc options");

cl::opt<std::string> inputFile(cl::Positional,
                               cl::desc("<L1 program (.mlir) or spec (.syn)>"),
                               cl::Required, cl::cat(category));
cl::opt<std::string> outputFile("o", cl::desc("output file (default: a.out for "
                                              "executables, stdout for text)"),
                                cl::value_desc("file"), cl::cat(category));
cl::opt<Emit> emit(
    "emit", cl::desc("what to produce (default exe)"), cl::init(Emit::Executable),
    cl::values(clEnumValN(Emit::L3, "l3", "what a .syn file declares (L3, and L2 methods)"),
               clEnumValN(Emit::L0, "l0", "the L0 plan after memory packing"),
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

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  registerAsmPrinterCLOptions();
  tracing::DebugConfig::registerCLOptions();
  cl::HideUnrelatedOptions({&category});
  cl::ParseCommandLineOptions(
      argc, argv,
      "synplc: compiles an L1 training program for this host\n\n"
      "  synplc prog.l1.mlir -o train && ./train --epochs 3\n\n"
      "Lowers the program through the pinned host pipeline (L1 -> L0, memory\n"
      "packing, l0ctl/l0uop -> LLVM, the plan's metadata tables), writes an\n"
      "x86-64 object in process and links it with the host runtime. Run the\n"
      "result with --help for its options. The standard MLIR flags\n"
      "(--mlir-print-ir-after-all, --mlir-timing, ...) apply to the pipeline;\n"
      "see --help-hidden.\n");

  DialectRegistry registry;
  synpl::registerHostCodegen(registry);
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
  if (emit == Emit::L3) {
    if (!isSyn)
      return fail("--emit=l3 needs a .syn spec; " + inputFile +
                  " is an MLIR program");
    return writeModule();
  }
  if (isSyn)
    return fail(inputFile + ": lowering a spec below L3 (the L3 -> L2 and "
                            "L2 -> L1 searches) is not built yet; "
                            "--emit=l3 prints the spec, and an L1 program "
                            "(.mlir) compiles to an executable");

  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  DefaultTimingManager tm;
  applyDefaultTimingManagerCLOptions(tm);
  TimingScope timing = tm.getRootScope();
  pm.enableTiming(timing);
  synpl::HostPipelineOptions hostOptions;
  hostOptions.summary = verbose.getValue();
  hostOptions.executable = true;
  if (emit == Emit::L0) {
    // Only the L0 part of the host pipeline.
    synpl::L1ToL0Options emission;
    emission.summary = verbose.getValue();
    pm.addPass(synpl::createL1ToL0(emission));
    pm.addPass(synpl::createL0PackMemory());
  } else {
    synpl::buildHostPipeline(pm, hostOptions);
  }
  if (verbose)
    llvm::errs() << "synplc: lowering " << inputFile << "\n";
  if (failed(pm.run(*module)))
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
  if (emit == Emit::L0 || emit == Emit::LLVMDialect)
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
  SmallVector<std::string> linkArgs = {linker, objectPath, runtime, "-lz",
                                       "-lpthread", "-lmvec", "-lm", "-o", output};
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
