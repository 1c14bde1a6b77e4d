//===- Driver.cpp - C API of the synplexum compile driver -----------------===//
#include "synpl-c/Driver.h"

#include "synpl/Dialect/IPU21/IPU21Ops.h"
#include "synpl/Driver/Driver.h"
#include "synpl/Search/Search.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/CAPI/Utils.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using synpl::Phase;
using synpl::driver::CompileOptions;

namespace {
CompileOptions *unwrapOptions(SynplCompileOptions o) {
  return static_cast<CompileOptions *>(o.ptr);
}
Phase toPhase(SynplPhase p) { return static_cast<Phase>(p); }
SynplPhase fromPhase(Phase p) { return static_cast<SynplPhase>(p); }

MlirModule parse(MlirContext context, std::unique_ptr<llvm::MemoryBuffer> buffer,
                 llvm::StringRef filename) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      synpl::driver::parseInput(sourceMgr, unwrap(context), filename);
  return wrap(module.release());
}
} // namespace

MlirStringRef synplPhaseGetName(SynplPhase phase) {
  return wrap(synpl::phaseName(toPhase(phase)));
}

bool synplPhaseParse(MlirStringRef name, SynplPhase *phase) {
  std::optional<Phase> p = synpl::parsePhase(unwrap(name));
  if (p && phase)
    *phase = fromPhase(*p);
  return p.has_value();
}

SynplPhase synplModuleGetPhase(MlirModule module) {
  return fromPhase(synpl::detectPhase(unwrap(module)));
}

MlirModule synplParseFile(MlirContext context, MlirStringRef path) {
  std::string name = unwrap(path).str();
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(name, /*IsText=*/true);
  if (!buffer) {
    emitError(UnknownLoc::get(unwrap(context)))
        << "cannot open " << name << ": " << buffer.getError().message();
    return MlirModule{nullptr};
  }
  return parse(context, std::move(*buffer), name);
}

MlirModule synplParseString(MlirContext context, MlirStringRef text,
                            MlirStringRef filename) {
  return parse(context,
               llvm::MemoryBuffer::getMemBufferCopy(unwrap(text), unwrap(filename)),
               unwrap(filename));
}

SynplCompileOptions synplCompileOptionsCreate(void) {
  return SynplCompileOptions{new CompileOptions()};
}

void synplCompileOptionsDestroy(SynplCompileOptions options) {
  delete unwrapOptions(options);
}

void synplCompileOptionsSetFrom(SynplCompileOptions options, SynplPhase phase) {
  unwrapOptions(options)->from = toPhase(phase);
}

void synplCompileOptionsSetTo(SynplCompileOptions options, SynplPhase phase) {
  unwrapOptions(options)->to = toPhase(phase);
}

bool synplCompileOptionsSetTarget(SynplCompileOptions options, MlirStringRef target) {
  using synpl::driver::TargetChoice;
  std::optional<TargetChoice> t =
      llvm::StringSwitch<std::optional<TargetChoice>>(unwrap(target))
          .Case("auto", TargetChoice::Auto)
          .Case("host", TargetChoice::Host)
          .Case("cuda", TargetChoice::Cuda)
          .Case("ipu21", TargetChoice::IPU21)
          .Default(std::nullopt);
  if (t)
    unwrapOptions(options)->target = *t;
  return t.has_value();
}

void synplCompileOptionsSetCudaArch(SynplCompileOptions options, MlirStringRef arch) {
  unwrapOptions(options)->cudaArch = unwrap(arch).str();
}

void synplCompileOptionsSetPtxas(SynplCompileOptions options, MlirStringRef ptxas) {
  unwrapOptions(options)->ptxas = unwrap(ptxas).str();
}

void synplCompileOptionsSetSystemFile(SynplCompileOptions options, MlirStringRef path) {
  unwrapOptions(options)->systemFile = unwrap(path).str();
}

void synplCompileOptionsSetL0Passes(SynplCompileOptions options, MlirStringRef pipeline) {
  unwrapOptions(options)->l0Passes = unwrap(pipeline).str();
}

void synplCompileOptionsSetKernelCache(SynplCompileOptions options, MlirStringRef dir,
                                       MlirStringRef cpu, int optLevel) {
  synpl::driver::KernelCache &cache = unwrapOptions(options)->kernelCache;
  cache.enabled = true;
  cache.dir = unwrap(dir).str();
  cache.cpu = cpu.length ? unwrap(cpu).str() : "native";
  cache.optLevel = optLevel < 0 ? 0 : unsigned(optLevel);
}

void synplCompileOptionsSetSearchCache(SynplCompileOptions options, MlirStringRef dir) {
  synpl::driver::SearchCache &cache = unwrapOptions(options)->searchCache;
  cache.enabled = true;
  cache.dir = unwrap(dir).str();
}

void synplCompileOptionsSetProgress(SynplCompileOptions options,
                                    MlirStringCallback callback, void *userData) {
  if (!callback) {
    unwrapOptions(options)->progress = nullptr;
    return;
  }
  unwrapOptions(options)->progress = [callback, userData](llvm::StringRef line) {
    callback(wrap(line), userData);
  };
}

MlirLogicalResult synplCompile(MlirModule module, SynplCompileOptions options) {
  return wrap(synpl::driver::compile(unwrap(module), *unwrapOptions(options)));
}

void synplModulePrintPtx(MlirModule module, MlirStringCallback callback, void *userData) {
  detail::CallbackOstream stream(callback, userData);
  synpl::driver::printPtx(unwrap(module), stream);
  stream.flush();
}

static synpl::driver::LinkOptions linkOptions(MlirStringRef cpu, int optLevel) {
  synpl::driver::LinkOptions options;
  if (cpu.length)
    options.cpu = unwrap(cpu).str();
  options.optLevel = optLevel < 0 ? 0 : unsigned(optLevel);
  return options;
}

MlirLogicalResult synplWriteObject(MlirModule module, MlirStringRef path,
                                   MlirStringRef cpu, int optLevel) {
  return wrap(synpl::driver::writeObject(unwrap(module), unwrap(path),
                                         linkOptions(cpu, optLevel)));
}

MlirLogicalResult synplWriteExecutable(MlirModule module, MlirStringRef path,
                                       MlirStringRef cpu, int optLevel) {
  return wrap(synpl::driver::writeExecutable(unwrap(module), unwrap(path),
                                             linkOptions(cpu, optLevel)));
}

bool synplModuleIsIPU21Program(MlirModule module) {
  return !unwrap(module).getBody()->getOps<synpl::ipu21::GraphOp>().empty();
}

MlirLogicalResult synplWriteIPU21Program(MlirModule module, MlirStringRef path) {
  return wrap(synpl::driver::writeIPU21Program(unwrap(module), unwrap(path)));
}

void synplSearchReportsPrintJSON(MlirStringCallback callback, void *userData) {
  detail::CallbackOstream stream(callback, userData);
  synpl::search::SearchReportSink::global().printAll(stream,
                                                     synpl::search::ReportFormat::JSON);
  stream.flush();
}

void synplSearchReportsClear(void) { synpl::search::SearchReportSink::global().clear(); }
