//===- CustomKernel.cpp - User kernels on the host ------------------------===//
//
// An l0uop.kernel with `custom_kernel` (a user kernel, #[l0::kernel("file")])
// has no UOps to lower. Its host entry is a wrapper with the generated
// kernels' signature (a pointer per buffer, then the range the runtime
// splits) that runs once (one iteration) and calls the user's function with
// the buffers in the kernel's order, inputs then outputs:
//
//   LLVM IR (.ll) or bitcode (.bc): after checking that the file defines the
//     function with one `ptr` parameter per buffer and no result, it is
//     declared and the file listed in the module's `synpl.link_ir`: the host
//     backend links it into the module's LLVM IR before optimizing, so the
//     wrapper can inline it (synpl::host::translateToLLVMIR);
//   an object (.o): the function is declared and the file is listed in the
//     module's `synpl.link_objects`, which the driver links.
//
// A PTX kernel has no host entry: it must run on a CUDA device.
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"

#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Support/KernelBoundary.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l0tollvm;

namespace synpl::l0tollvm {
LogicalResult lowerCustomKernel(ModuleOp module, ModuleOp scratch, l0uop::KernelOp kernel,
                                StringRef name, SmallVectorImpl<NotLowered> &failures,
                                llvm::StringMap<std::string> &imported);
} // namespace synpl::l0tollvm

namespace {

InFlightDiagnostic boundaryError(l0uop::KernelOp kernel) {
  return emitUserKernelError(kernel,
                             kernel->getAttrOfType<StringAttr>("custom_kernel").getValue(),
                             kernel->getAttrOfType<StringAttr>("custom_file").getValue());
}

/// Checks that `path` (LLVM IR or bitcode) defines `symbol` as
/// `void(ptr x buffers)`.
LogicalResult checkFile(l0uop::KernelOp kernel, StringRef path, StringRef symbol,
                        unsigned buffers) {
  llvm::LLVMContext llvmContext;
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> llvmModule = llvm::parseIRFile(path, error, llvmContext);
  if (!llvmModule) {
    boundaryError(kernel) << "it does not parse as LLVM IR: line " << error.getLineNo()
                          << ": " << error.getMessage();
    return failure();
  }
  llvm::Function *fn = llvmModule->getFunction(symbol);
  if (!fn || fn->isDeclaration()) {
    boundaryError(kernel) << "the file defines no function @" << symbol;
    return failure();
  }
  bool allPointers = llvm::all_of(fn->args(), [](llvm::Argument &a) {
    return a.getType()->isPointerTy();
  });
  if (fn->arg_size() != buffers || !allPointers || !fn->getReturnType()->isVoidTy()) {
    std::string type, ptrs;
    llvm::raw_string_ostream os(type);
    fn->getFunctionType()->print(os);
    for (unsigned i = 0; i < buffers; ++i)
      ptrs += i ? ", ptr" : "ptr";
    boundaryError(kernel) << "@" << symbol << " is `" << type << "`; a kernel of " << buffers
                          << " buffers is `void (" << ptrs << ")` (inputs, then outputs)";
    return failure();
  }
  return success();
}

/// Appends `path` to the module's string list `attr` (once).
void listFile(ModuleOp module, StringRef attr, StringRef path) {
  Builder b(module.getContext());
  SmallVector<Attribute> files;
  if (auto old = module->getAttrOfType<ArrayAttr>(attr))
    files.assign(old.begin(), old.end());
  if (!llvm::is_contained(files, b.getStringAttr(path)))
    files.push_back(b.getStringAttr(path));
  module->setAttr(attr, b.getArrayAttr(files));
}

} // namespace

LogicalResult synpl::l0tollvm::lowerCustomKernel(ModuleOp module, ModuleOp scratch,
                                                 l0uop::KernelOp kernel, StringRef name,
                                                 SmallVectorImpl<NotLowered> &failures,
                                                 llvm::StringMap<std::string> &imported) {
  MLIRContext *ctx = module.getContext();
  StringRef symbol = kernel->getAttrOfType<StringAttr>("custom_kernel").getValue();
  StringRef path = kernel->getAttrOfType<StringAttr>("custom_file").getValue();
  StringRef format = kernel->getAttrOfType<StringAttr>("custom_format").getValue();
  unsigned buffers = kernel.getBody().front().getNumArguments();
  if (format == "ptx") {
    failures.push_back({kernel, "its user kernel is PTX, which runs on a CUDA device, but "
                                "the kernel is placed on the host (give an LLVM IR or "
                                "object file, or place the layer on a GPU)"});
    return failure();
  }
  OpBuilder b(ctx);
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  auto voidTy = LLVM::LLVMVoidType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  SmallVector<Type> ptrs(buffers, ptrTy);
  auto userTy = LLVM::LLVMFunctionType::get(voidTy, ptrs);

  // The user's function: declared once, its file listed for the link.
  std::string key = (path + "#" + symbol).str();
  if (!imported.count(key)) {
    if (format != "object" && failed(checkFile(kernel, path, symbol, buffers)))
      return failure();
    Operation *existing = SymbolTable::lookupSymbolIn(scratch, symbol);
    if (!existing)
      existing = SymbolTable::lookupSymbolIn(module, symbol);
    if (existing) {
      auto fn = dyn_cast<LLVM::LLVMFuncOp>(existing);
      if (!fn || !fn.isExternal() || fn.getFunctionType() != userTy) {
        boundaryError(kernel) << "its function @" << symbol
                              << " is already a symbol of the program";
        return failure();
      }
    } else {
      b.setInsertionPointToEnd(scratch.getBody());
      LLVM::LLVMFuncOp::create(b, kernel.getLoc(), symbol, userTy);
    }
    listFile(module, format == "object" ? "synpl.link_objects" : "synpl.link_ir", path);
    imported[key] = symbol.str();
  }

  // The wrapper, with the generated kernels' signature (a pointer per
  // buffer, then the range [begin, end) the runtime splits) and one
  // iteration: if (begin == 0 && begin < end) symbol(buffers...).
  Location loc = kernel.getLoc();
  b.setInsertionPointToEnd(scratch.getBody());
  SmallVector<Type> params(ptrs);
  params.append({i64, i64});
  auto fn = LLVM::LLVMFuncOp::create(b, loc, name, LLVM::LLVMFunctionType::get(voidTy, params));
  fn->setAttr("synpl.iterations", b.getI64IntegerAttr(1));
  Block *entry = fn.addEntryBlock(b);
  Block *call = fn.addBlock(), *done = fn.addBlock();
  b.setInsertionPointToEnd(entry);
  Value begin = entry->getArgument(buffers), end = entry->getArgument(buffers + 1);
  Value zero = LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(0));
  Value first = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, begin, zero);
  Value nonEmpty = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::slt, begin, end);
  Value run = LLVM::AndOp::create(b, loc, first, nonEmpty);
  LLVM::CondBrOp::create(b, loc, run, call, done);
  b.setInsertionPointToEnd(call);
  LLVM::CallOp::create(b, loc, userTy, FlatSymbolRefAttr::get(ctx, symbol),
                       entry->getArguments().take_front(buffers));
  LLVM::BrOp::create(b, loc, done);
  b.setInsertionPointToEnd(done);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  return success();
}
