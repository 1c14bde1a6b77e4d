//===- HostObject.cpp - LLVM dialect module -> x86-64 object file ---------===//
#include "synpl/Target/HostObject.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/SystemLibraries.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/Triple.h"

#include <optional>

using namespace mlir;

namespace synpl::host {

static std::string hostFeatures() {
  llvm::SubtargetFeatures features;
  for (const auto &f : llvm::sys::getHostCPUFeatures())
    features.AddFeature(f.first(), f.second);
  return features.getString();
}

/// The O`level` pipeline over the whole of `module`.
static void optimizeAtLevel(llvm::Module &module, llvm::TargetMachine &machine,
                            const ObjectOptions &options, unsigned level) {
  llvm::Module *llvmModule = &module;
  const llvm::Triple &triple = machine.getTargetTriple();
  // The O-level pipeline, with glibc's vector math library (libmvec) known
  // to the vectorizer, so that loops calling exp2/log2/sin vectorize.
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = level > 1;
  tuning.SLPVectorization = level > 1;
  llvm::PassBuilder pb(&machine, tuning);
  llvm::TargetLibraryInfoImpl tlii(triple);
  if (options.useLibmvec) {
    tlii.addVectorizableFunctionsFromVecLib(llvm::VectorLibrary::LIBMVEC,
                                            triple);
    // glibc >= 2.35 also has these; LLVM's table does not list them.
    static const llvm::VecDesc extra[] = {
        {"llvm.exp2.f32", "_ZGVdN8v_exp2f", llvm::ElementCount::getFixed(8),
         false, "_ZGV_LLVM_N8v", std::nullopt},
        {"exp2f", "_ZGVdN8v_exp2f", llvm::ElementCount::getFixed(8), false,
         "_ZGV_LLVM_N8v", std::nullopt},
        {"llvm.log2.f32", "_ZGVdN8v_log2f", llvm::ElementCount::getFixed(8),
         false, "_ZGV_LLVM_N8v", std::nullopt},
        {"log2f", "_ZGVdN8v_log2f", llvm::ElementCount::getFixed(8), false,
         "_ZGV_LLVM_N8v", std::nullopt},
    };
    tlii.addVectorizableFunctions(extra);
  }
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tlii); });
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel optimization = llvm::OptimizationLevel::O0;
  switch (std::min(level, 3u)) {
  case 1:
    optimization = llvm::OptimizationLevel::O1;
    break;
  case 2:
    optimization = llvm::OptimizationLevel::O2;
    break;
  case 3:
    optimization = llvm::OptimizationLevel::O3;
    break;
  }
  llvm::ModulePassManager mpm =
      optimization == llvm::OptimizationLevel::O0
          ? pb.buildO0DefaultPipeline(optimization)
          : pb.buildPerModuleDefaultPipeline(optimization);
  mpm.run(*llvmModule, mam);
}

llvm::Error optimizeForHost(llvm::Module &module, llvm::TargetMachine &machine,
                            const ObjectOptions &options) {
  llvm::Module *llvmModule = &module;
  // Kernel reductions have no fixed order (a GPU reduces in a tree): their
  // float adds and multiplies may be reassociated and contracted into FMAs,
  // which lets the vectorizer split a reduction over lanes.
  if (options.reassociate)
    for (llvm::Function &f : *llvmModule)
      for (llvm::BasicBlock &bb : f)
        for (llvm::Instruction &inst : bb)
          if (inst.getOpcode() == llvm::Instruction::FAdd ||
              inst.getOpcode() == llvm::Instruction::FSub ||
              inst.getOpcode() == llvm::Instruction::FMul) {
            inst.setHasAllowReassoc(true);
            inst.setHasAllowContract(true);
          }

  unsigned cap = std::min(options.optLevel, 3u);
  std::optional<unsigned> uniform;
  bool mixed = false;
  for (llvm::Function &f : module) {
    if (f.isDeclaration())
      continue;
    llvm::Expected<unsigned> level = functionOptLevel(f, cap);
    if (!level)
      return level.takeError();
    mixed |= uniform && *uniform != *level;
    uniform = *level;
  }
  if (!mixed) {
    for (llvm::Function &f : module)
      f.removeFnAttr(kOptLevelAttr);
    optimizeAtLevel(module, machine, options, uniform.value_or(cap));
    return llvm::Error::success();
  }
  // One module per level, each optimized at its level, linked back.
  llvm::Expected<std::vector<LevelModule>> parts =
      splitByOptLevel(llvm::CloneModule(module), cap);
  if (!parts)
    return parts.takeError();
  module.dropAllReferences();
  while (!module.ifunc_empty())
    module.ifunc_begin()->eraseFromParent();
  while (!module.alias_empty())
    module.alias_begin()->eraseFromParent();
  while (!module.empty())
    module.begin()->eraseFromParent();
  while (!module.global_empty())
    module.global_begin()->eraseFromParent();
  while (!module.named_metadata_empty())
    module.named_metadata_begin()->eraseFromParent();
  for (LevelModule &part : *parts) {
    optimizeAtLevel(*part.module, machine, options, part.level);
    if (llvm::Linker::linkModules(module, std::move(part.module)))
      return llvm::createStringError("linking the O" + std::to_string(part.level) +
                                     " functions back into the program failed");
  }
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createHostTargetMachine(const ObjectOptions &options, std::string *cpuOut,
                        std::string *featuresOut) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(options.triple.empty() ? llvm::sys::getProcessTriple()
                                             : options.triple);
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return llvm::createStringError("no LLVM backend for " + triple.str() +
                                   ": " + error);
  std::string cpu = options.cpu, features = options.features;
  if (cpu == "native") {
    cpu = llvm::sys::getHostCPUName().str();
    std::string host = hostFeatures();
    features = features.empty() ? host : host + "," + features;
  }
  llvm::TargetOptions targetOptions;
  std::optional<llvm::CodeGenOptLevel> level =
      llvm::CodeGenOpt::getLevel(std::min(options.optLevel, 3u));
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, cpu, features, targetOptions, llvm::Reloc::PIC_, std::nullopt,
      level.value_or(llvm::CodeGenOptLevel::Default)));
  if (!tm)
    return llvm::createStringError("cannot create a target machine for " +
                                   triple.str() + " (cpu " + cpu + ")");
  if (cpuOut)
    *cpuOut = cpu;
  if (featuresOut)
    *featuresOut = features;
  return std::move(tm);
}

std::unique_ptr<llvm::Module> translateToLLVMIR(ModuleOp module,
                                                llvm::LLVMContext &llvmContext) {
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  module.getContext()->appendDialectRegistry(registry);
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "synpl");
  if (!llvmModule) {
    module.emitError() << "translation to LLVM IR failed";
    return nullptr;
  }
  SmallVector<StringAttr> files;
  if (auto list = module->getAttrOfType<ArrayAttr>("synpl.link_ir"))
    files.assign(list.getAsRange<StringAttr>().begin(), list.getAsRange<StringAttr>().end());
  for (StringAttr file : files) {
    llvm::SMDiagnostic error;
    std::unique_ptr<llvm::Module> user = llvm::parseIRFile(file.getValue(), error, llvmContext);
    if (!user) {
      module.emitError() << "user kernel " << file.getValue() << ": line "
                         << error.getLineNo() << ": " << error.getMessage();
      return nullptr;
    }
    // The program's target, whatever the file was written for.
    user->setTargetTriple(llvmModule->getTargetTriple());
    user->setDataLayout(llvmModule->getDataLayout());
    if (llvm::Linker::linkModules(*llvmModule, std::move(user))) {
      module.emitError() << "user kernel " << file.getValue()
                         << ": linking it into the program failed (a symbol defined twice?)";
      return nullptr;
    }
  }
  return llvmModule;
}

llvm::SmallVector<std::string> linkedObjects(ModuleOp module) {
  llvm::SmallVector<std::string> paths;
  if (auto files = module->getAttrOfType<ArrayAttr>("synpl.link_objects"))
    for (auto file : files.getAsRange<StringAttr>())
      paths.push_back(file.getValue().str());
  return paths;
}

llvm::Error compileForHost(llvm::Module &llvmModule, llvm::TargetMachine &tm,
                          const ObjectOptions &options, llvm::raw_pwrite_stream &os) {
  if (llvm::Error err = optimizeForHost(llvmModule, tm, options))
    return llvm::createStringError("LLVM optimization failed: " +
                                   llvm::toString(std::move(err)));
  llvm::legacy::PassManager codegen;
  if (tm.addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError("the " + tm.getTargetTriple().str() +
                                   " backend cannot emit object files");
  codegen.run(llvmModule);
  return llvm::Error::success();
}

FailureOr<HostModule> translateForHost(ModuleOp module, const ObjectOptions &options,
                                       llvm::LLVMContext &context) {
  HostModule host;
  auto created = createHostTargetMachine(options, &host.cpu, &host.features);
  if (!created)
    return module.emitError() << llvm::toString(created.takeError());
  host.machine = std::move(*created);
  host.module = translateToLLVMIR(module, context);
  if (!host.module)
    return failure();
  host.module->setTargetTriple(host.machine->getTargetTriple());
  host.module->setDataLayout(host.machine->createDataLayout());
  for (llvm::Function &f : *host.module) {
    if (f.isDeclaration())
      continue;
    f.addFnAttr("target-cpu", host.cpu);
    if (!host.features.empty())
      f.addFnAttr("target-features", host.features);
  }
  return host;
}

LogicalResult emitObject(ModuleOp module, llvm::raw_pwrite_stream &os,
                         const ObjectOptions &options) {
  llvm::LLVMContext llvmContext;
  FailureOr<HostModule> host = translateForHost(module, options, llvmContext);
  if (failed(host))
    return failure();
  if (llvm::Error err = compileForHost(*host->module, *host->machine, options, os))
    return module.emitError() << llvm::toString(std::move(err));
  return success();
}

void registerToObjectTranslation() {
  static llvm::cl::opt<std::string> cpu(
      "synpl-cpu", llvm::cl::desc("CPU for --synpl-to-object (default: native)"),
      llvm::cl::init("native"));
  static llvm::cl::opt<unsigned> optLevel(
      "synpl-opt-level", llvm::cl::desc("LLVM optimization level for "
                                        "--synpl-to-object (0-3, default 3)"),
      llvm::cl::init(3));
  TranslateFromMLIRRegistration reg(
      "synpl-to-object",
      "Write an LLVM dialect module (synpl-opt --synpl-host-pipeline="
      "executable=true) as an x86-64 ELF object: kernels, control code and "
      "the plan's metadata tables",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        ObjectOptions options;
        options.cpu = cpu;
        options.optLevel = optLevel;
        llvm::SmallString<0> buffer;
        llvm::raw_svector_ostream bufferStream(buffer);
        if (failed(emitObject(module, bufferStream, options)))
          return failure();
        os << buffer;
        return success();
      },
      [](DialectRegistry &registry) {
        registry.insert<LLVM::LLVMDialect>();
        registerBuiltinDialectTranslation(registry);
        registerLLVMDialectTranslation(registry);
      });
}

} // namespace synpl::host
