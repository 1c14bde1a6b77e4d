//===- AssembleBinaries.cpp - ptxas over the PTX of gpu.binary ops --------===//
//
// --synpl-cuda-assemble: appends a cubin object next to each PTX object of a
// gpu.binary, made by the CUDA toolkit's ptxas for the object's chip. This is
// the one place synplexum runs ptxas while compiling; the lowerings above it
// only read the objects a gpu.binary holds.
//
//===----------------------------------------------------------------------===//
#include "synpl/Target/CudaTarget.h"
#include "synpl/Target/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

namespace synpl {
#define GEN_PASS_DEF_ASSEMBLECUDABINARIES
#include "synpl/Target/Passes.h.inc"
} // namespace synpl

using namespace mlir;

namespace {

/// Runs `ptxas -arch=<chip>` on `ptx`; the cubin, or the failure with
/// ptxas's own message at `at`.
FailureOr<std::string> runPtxas(StringRef ptxas, StringRef chip, StringRef ptx,
                                Operation *at) {
  SmallString<128> ptxPath, cubinPath, logPath;
  int fd;
  auto cleanup = [&] {
    for (StringRef p : {ptxPath.str(), cubinPath.str(), logPath.str()})
      if (!p.empty())
        llvm::sys::fs::remove(p);
  };
  if (llvm::sys::fs::createTemporaryFile("synpl-kernels", "ptx", fd, ptxPath) ||
      llvm::sys::fs::createTemporaryFile("synpl-kernels", "cubin", cubinPath) ||
      llvm::sys::fs::createTemporaryFile("synpl-ptxas", "log", logPath)) {
    cleanup();
    return at->emitError("ptxas: cannot create temporary files");
  }
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << ptx;
  }
  std::string arch = ("-arch=" + chip).str();
  SmallVector<StringRef> args = {ptxas, arch, "-o", cubinPath, ptxPath};
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logPath),
                                          StringRef(logPath)};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 0, 0,
                                     &execError);
  std::string log;
  if (auto buf = llvm::MemoryBuffer::getFile(logPath))
    log = StringRef((*buf)->getBuffer()).trim().str();
  if (rc != 0) {
    cleanup();
    InFlightDiagnostic diag = at->emitError()
                              << "ptxas (" << ptxas << " " << arch
                              << ") failed on the CUDA kernels: ";
    if (!log.empty())
      diag << log;
    else if (!execError.empty())
      diag << execError;
    else
      diag << "exit status " << rc;
    return failure();
  }
  auto cubin = llvm::MemoryBuffer::getFile(cubinPath, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
  cleanup();
  if (!cubin || (*cubin)->getBufferSize() == 0)
    return at->emitError() << "ptxas (" << ptxas << ") wrote no cubin";
  return (*cubin)->getBuffer().str();
}

struct AssembleCudaBinaries
    : public synpl::impl::AssembleCudaBinariesBase<AssembleCudaBinaries> {
  using AssembleCudaBinariesBase::AssembleCudaBinariesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string tool;
    for (auto binary : module.getOps<gpu::BinaryOp>()) {
      if (failed(assemble(binary, tool)))
        return signalPassFailure();
    }
  }

  /// Appends a cubin for each PTX object of `binary` that lacks one.
  LogicalResult assemble(gpu::BinaryOp binary, std::string &tool) {
    SmallVector<Attribute> objects(binary.getObjects().begin(),
                                   binary.getObjects().end());
    auto hasBinaryFor = [&](NVVM::NVVMTargetAttr target) {
      return llvm::any_of(objects, [&](Attribute a) {
        auto o = dyn_cast<gpu::ObjectAttr>(a);
        return o && o.getTarget() == target &&
               (o.getFormat() == gpu::CompilationTarget::Binary ||
                o.getFormat() == gpu::CompilationTarget::Fatbin);
      });
    };
    size_t count = objects.size();
    for (size_t i = 0; i < count; ++i) {
      auto object = dyn_cast<gpu::ObjectAttr>(objects[i]);
      auto target = object ? dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget())
                           : NVVM::NVVMTargetAttr();
      if (!target || object.getFormat() != gpu::CompilationTarget::Assembly ||
          hasBinaryFor(target))
        continue;
      if (!synpl::cuda::lookupArch(target.getChip()))
        return binary.emitError() << "unknown CUDA chip '" << target.getChip()
                                  << "' (known: " << synpl::cuda::knownArchList()
                                  << ")";
      if (tool.empty() && failed(findTool(binary, tool)))
        return failure();
      // The printed form may carry the trailing NUL the NVPTX backend adds.
      StringRef ptx = object.getObject().getValue().rtrim('\0');
      FailureOr<std::string> cubin = runPtxas(tool, target.getChip(), ptx, binary);
      if (failed(cubin))
        return failure();
      Builder b(binary.getContext());
      objects.push_back(gpu::ObjectAttr::get(
          binary.getContext(), target, gpu::CompilationTarget::Binary,
          b.getStringAttr(*cubin), object.getProperties(), object.getKernels()));
    }
    if (objects.size() != count)
      binary.setObjectsAttr(ArrayAttr::get(binary.getContext(), objects));
    return success();
  }

  /// `ptxas` as a runnable path: a bare name is looked up on PATH.
  LogicalResult findTool(gpu::BinaryOp at, std::string &tool) {
    tool = ptxas;
    if (!StringRef(tool).contains('/'))
      if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(tool))
        tool = *found;
    if (!llvm::sys::fs::can_execute(tool))
      return at.emitError()
             << "ptxas=" << ptxas.getValue()
             << ": no such program (the CUDA toolkit's ptxas assembles the "
                "PTX into a cubin; leave the step out to embed the PTX only)";
    return success();
  }
};

} // namespace
