//===- LinkUserKernels.cpp - User PTX into the plan's gpu.binary ----------===//
//
// --synpl-cuda-link-user-kernels: the PTX of each user kernel
// (#[l0::kernel("k.ptx")]) is appended to the assembly of its plan's
// gpu.binary, after checking that the file defines the kernel's entry with
// one parameter per buffer. Its header lines (.version, .target,
// .address_size) are dropped: the binary's own header states them once.
//
//===----------------------------------------------------------------------===//
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Support/KernelBoundary.h"
#include "synpl/Target/CudaTarget.h"
#include "synpl/Target/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"

namespace synpl {
#define GEN_PASS_DEF_LINKCUDAUSERKERNELS
#include "synpl/Target/Passes.h.inc"
} // namespace synpl

using namespace mlir;
using namespace synpl;

namespace {

/// The number of parameters of `.entry symbol(...)` in `ptx`; none when it
/// has no such entry.
std::optional<unsigned> entryParams(StringRef ptx, StringRef symbol) {
  size_t at = 0;
  while ((at = ptx.find(".entry", at)) != StringRef::npos) {
    StringRef rest = ptx.drop_front(at + 6).ltrim();
    at += 6;
    if (!rest.consume_front(symbol))
      continue;
    rest = rest.ltrim();
    if (!rest.consume_front("("))
      continue;
    StringRef params = rest.take_until([](char c) { return c == ')'; });
    unsigned n = 0;
    for (size_t p = 0; (p = params.find(".param", p)) != StringRef::npos; p += 6)
      ++n;
    return n;
  }
  return std::nullopt;
}

/// `ptx` without its module header lines.
std::string body(StringRef ptx) {
  std::string out;
  SmallVector<StringRef> lines;
  ptx.split(lines, '\n');
  for (StringRef line : lines) {
    StringRef t = line.trim();
    if (t.starts_with(".version") || t.starts_with(".target") ||
        t.starts_with(".address_size"))
      continue;
    out += line.str() + "\n";
  }
  return out;
}

struct LinkCudaUserKernels
    : public synpl::impl::LinkCudaUserKernelsBase<LinkCudaUserKernels> {
  using LinkCudaUserKernelsBase::LinkCudaUserKernelsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto plan : module.getOps<l0uop::PlanOp>())
      if (failed(link(module, plan)))
        return signalPassFailure();
  }

  LogicalResult link(ModuleOp module, l0uop::PlanOp plan) {
    std::string text;
    llvm::StringSet<> files;
    for (auto kernel : plan.getOps<l0uop::KernelOp>()) {
      auto format = kernel->getAttrOfType<StringAttr>("custom_format");
      if (!format || format.getValue() != "ptx" || !kernel->hasAttr("device_entry"))
        continue;
      StringRef symbol = kernel->getAttrOfType<StringAttr>("custom_kernel").getValue();
      StringRef path = kernel->getAttrOfType<StringAttr>("custom_file").getValue();
      auto error = [&]() { return emitUserKernelError(kernel, symbol, path); };
      auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
      if (!buffer)
        return error() << "cannot read it: " << buffer.getError().message();
      StringRef ptx = (*buffer)->getBuffer();
      unsigned buffers = kernel.getBody().front().getNumArguments();
      std::optional<unsigned> params = entryParams(ptx, symbol);
      if (!params)
        return error() << "the file defines no `.entry " << symbol << "(...)`";
      if (*params != buffers)
        return error() << ".entry " << symbol << " takes " << *params
                       << " parameters; a kernel of " << buffers
                       << " buffers takes one .u64 pointer per buffer (inputs, then outputs)";
      if (files.insert(path).second)
        text += "\n// " + path.str() + "\n" + body(ptx);
    }
    if (text.empty())
      return success();

    // The plan's binary: append to its PTX, or make one.
    std::string name = (plan.getSymName() + "_cuda").str();
    MLIRContext *ctx = module.getContext();
    Builder b(ctx);
    auto binary = SymbolTable::lookupNearestSymbolFrom<gpu::BinaryOp>(
        module, StringAttr::get(ctx, name));
    if (!binary) {
      const cuda::CudaArch *arch = cuda::lookupArch(chip);
      if (!arch)
        return plan.emitError() << "unknown CUDA chip '" << chip
                                << "' (known: " << cuda::knownArchList() << ")";
      std::string header = ".version " + std::to_string(arch->ptxVersion / 10) + "." +
                           std::to_string(arch->ptxVersion % 10) + "\n.target " +
                           arch->chip() + "\n.address_size 64\n";
      auto target = NVVM::NVVMTargetAttr::get(ctx, /*optLevel=*/2, "nvptx64-nvidia-cuda",
                                              arch->chip(), arch->ptxFeatures());
      OpBuilder ob(ctx);
      ob.setInsertionPointToEnd(module.getBody());
      gpu::BinaryOp::create(ob, plan.getLoc(), name, Attribute(),
                            ob.getArrayAttr({gpu::ObjectAttr::get(
                                ctx, target, gpu::CompilationTarget::Assembly,
                                ob.getStringAttr(header + text), DictionaryAttr(),
                                gpu::KernelTableAttr())}));
      module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), b.getUnitAttr());
      return success();
    }
    SmallVector<Attribute> objects(binary.getObjects().begin(), binary.getObjects().end());
    bool appended = false;
    for (Attribute &a : objects) {
      auto o = dyn_cast<gpu::ObjectAttr>(a);
      if (!o || o.getFormat() != gpu::CompilationTarget::Assembly)
        continue;
      // (Without the trailing NUL the NVPTX backend may leave.)
      std::string ptx = o.getObject().getValue().rtrim('\0').str();
      a = gpu::ObjectAttr::get(ctx, o.getTarget(), o.getFormat(),
                               b.getStringAttr(ptx + text), o.getProperties(),
                               o.getKernels());
      appended = true;
    }
    if (!appended)
      return binary.emitError() << "gpu.binary @" << name
                                << " holds no PTX to add the user kernels' PTX to";
    binary.setObjectsAttr(b.getArrayAttr(objects));
    return success();
  }
};

} // namespace
