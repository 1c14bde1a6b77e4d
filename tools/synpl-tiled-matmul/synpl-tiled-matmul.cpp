//===- synpl-tiled-matmul.cpp - Test and bench driver of the tiled matmul ---===//
//
// Runs buildTiledMatmul on every l0uop.kernel of the input and prints one
// gpu.module per kernel it takes (LLVM + NVVM dialects), or, with
// --emit=ptx, their PTX (upstream gpu-module-to-binary format=isa) into
// --out-dir together with <kernel>.json (entry, grid, block, shared bytes,
// buffers): what bench/gpu/matmul_bench.py loads on the GPU machine. A
// kernel the lowering declines is reported on stderr. The real lowering
// calls buildTiledMatmul from --synpl-convert-l0uop-to-nvvm; this driver
// exists so that the tiled kernels are tested and benchmarked on their own.
//
//===----------------------------------------------------------------------===//
#include "../../lib/Conversion/L0ToNVVM/TiledMatmul.h"
#include "synpl/InitAll.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.mlir>"),
                                      cl::init("-"));
static cl::opt<std::string> chip("chip", cl::desc("sm_80, sm_90, ..."),
                                 cl::init("sm_80"));
static cl::opt<std::string> emit("emit", cl::desc("mlir | ptx"),
                                 cl::init("mlir"));
static cl::opt<std::string> outDir("out-dir",
                                   cl::desc("--emit=ptx: where to write"),
                                   cl::init("."));
static cl::opt<unsigned> rank("rank",
                              cl::desc("build the cost model's n-th ranked "
                                       "candidate (entry suffix _r<n>)"),
                              cl::init(0));
static cl::opt<bool> allowTf32("allow-tf32",
                               cl::desc("f32 operands on tf32 tensor cores"));
static cl::opt<bool> noTensorCores("no-tensor-cores",
                                   cl::desc("decline bf16/f16 kernels"));

static std::string entryName(StringRef sym) {
  std::string s = sym.str();
  for (char &ch : s)
    if (!llvm::isAlnum(ch) && ch != '_')
      ch = '_';
  return s;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "synplexum tiled matmul driver\n");
  DialectRegistry registry;
  synpl::registerAllDialects(registry);
  synpl::registerUpstreamDialects(registry);
  registry.insert<gpu::GPUDialect, LLVM::LLVMDialect, NVVM::NVVMDialect>();
  registerAllToLLVMIRTranslations(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();

  std::string error;
  auto file = openInputFile(inputFile, &error);
  if (!file) {
    llvm::errs() << error << "\n";
    return 1;
  }
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> input = parseSourceFile<ModuleOp>(sources, &ctx);
  if (!input)
    return 1;
  std::optional<synpl::cuda::CudaTarget> target = synpl::cuda::makeTarget(chip);
  if (!target) {
    llvm::errs() << "unknown chip '" << chip << "' (known: "
                 << synpl::cuda::knownArchList() << ")\n";
    return 1;
  }
  OpBuilder b(&ctx);
  OwningOpRef<ModuleOp> out = ModuleOp::create(b.getUnknownLoc());
  (*out)->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), b.getUnitAttr());
  auto nvvmTarget = NVVM::NVVMTargetAttr::get(
      &ctx, /*optLevel=*/3, "nvptx64-nvidia-cuda", chip,
      target->arch->ptxFeatures());
  synpl::l0tonvvm::TiledMatmulOptions options;
  options.tensorCores = !noTensorCores;
  options.candidateRank = rank;
  options.allowTf32 = allowTf32;
  llvm::json::Array launches;
  bool failedAny = false;
  input->walk([&](synpl::l0uop::KernelOp kernel) {
    std::string entry = entryName(kernel.getSymName());
    if (rank > 0)
      entry += "_r" + std::to_string(rank);
    b.setInsertionPointToEnd(out->getBody());
    auto module = gpu::GPUModuleOp::create(b, kernel.getLoc(), entry + "_cuda",
                                           b.getArrayAttr({nvvmTarget}));
    auto result = synpl::l0tonvvm::buildTiledMatmul(
        kernel, entry, *target, module.getBodyRegion().front(), options);
    if (failed(result)) {
      failedAny = true;
      module->erase();
      return;
    }
    if (!*result) {
      llvm::errs() << "declined: " << kernel.getSymName() << "\n";
      module->erase();
      return;
    }
    const synpl::l0tonvvm::TiledLaunch &l = **result;
    llvm::errs() << "tiled: " << kernel.getSymName() << ": " << l.description
                 << "\n";
    llvm::json::Array bufs;
    auto addBuf = [&](Value arg, Attribute slot, StringRef role) {
      auto buf = cast<synpl::l0uop::BufType>(arg.getType());
      std::string dtype;
      llvm::raw_string_ostream os(dtype);
      os << buf.getElementType();
      bufs.push_back(llvm::json::Object{
          {"slot", cast<FlatSymbolRefAttr>(slot).getValue().str()},
          {"role", role.str()},
          {"shape", llvm::json::Array(buf.getShape())},
          {"dtype", dtype}});
    };
    for (unsigned i = 0; i < kernel.getNumInputs(); ++i)
      addBuf(kernel.getInputArg(i), kernel.getInputs()[i], "input");
    for (unsigned i = 0; i < kernel.getNumOutputs(); ++i)
      addBuf(kernel.getOutputArg(i), kernel.getOutputs()[i], "output");
    launches.push_back(llvm::json::Object{
        {"kernel", kernel.getSymName().str()},
        {"entry", entry},
        {"rank", int64_t(rank)},
        {"ptx", entry + ".ptx"},
        {"grid", llvm::json::Array(l.grid)},
        {"block", llvm::json::Array(l.block)},
        {"shared_bytes", l.sharedBytes},
        {"description", l.description},
        {"buffers", std::move(bufs)}});
  });
  if (failedAny)
    return 1;
  if (failed(verify(*out)))
    return 1;
  if (emit == "mlir") {
    out->print(llvm::outs());
    llvm::outs() << "\n";
    return 0;
  }
  if (emit != "ptx") {
    llvm::errs() << "--emit must be mlir or ptx\n";
    return 1;
  }
  PassManager pm(&ctx);
  GpuModuleToBinaryPassOptions binOptions;
  binOptions.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binOptions));
  if (failed(pm.run(*out)))
    return 1;
  llvm::sys::fs::create_directories(outDir);
  for (auto binary : out->getOps<gpu::BinaryOp>()) {
    auto object = cast<gpu::ObjectAttr>(binary.getObjects()[0]);
    std::string name = binary.getSymName().str();
    name.resize(name.size() - std::string("_cuda").size());
    SmallString<256> path(outDir.getValue());
    llvm::sys::path::append(path, name + ".ptx");
    std::string err;
    auto os = openOutputFile(path, &err);
    if (!os) {
      llvm::errs() << err << "\n";
      return 1;
    }
    os->os() << object.getObject().getValue();
    os->keep();
  }
  for (auto &value : launches) {
    const llvm::json::Object *o = value.getAsObject();
    SmallString<256> path(outDir.getValue());
    llvm::sys::path::append(path, *o->getString("entry") + ".json");
    std::string err;
    auto os = openOutputFile(path, &err);
    if (!os) {
      llvm::errs() << err << "\n";
      return 1;
    }
    os->os() << llvm::formatv("{0:2}", value) << "\n";
    os->keep();
  }
  return 0;
}
