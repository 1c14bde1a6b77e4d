//===- synpl-translate.cpp - Translations in and out of synplexum IR -------===//
//
// Registers the upstream translations the codegen path needs
// (--mlir-to-llvmir, --import-llvm) and synplexum's own: --synpl-to-object
// (the in-process x86-64 backend, lib/Target/Host), --import-syn
// (lib/Frontend), --synpl-to-ptx (the PTX of an L0 plan's CUDA kernels,
// lib/Registration/ToPtx.cpp) and --synpl-ipu21-to-program (an ipu21 graph
// as the program file synpl-ipu21-sim runs, lib/Target/IPU21).
//
//===----------------------------------------------------------------------===//
#include "synpl/Frontend/Syn.h"
#include "synpl/InitAll.h"
#include "synpl/Support/DeepInput.h"
#include "synpl/Target/HostObject.h"
#include "synpl/Target/IPU21/Translate.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllTranslations.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"

/// The input file mlirTranslateMain will read: its one positional argument
/// (every other argument is an option, and only -o takes its value apart).
/// Empty for standard input.
static llvm::StringRef inputArgument(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "-o") {
      ++i;
      continue;
    }
    if (arg == "--")
      return i + 1 < argc ? llvm::StringRef(argv[i + 1]) : llvm::StringRef();
    if (!arg.starts_with("-"))
      return arg;
  }
  return {};
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::registerToLLVMIRTranslation();
  mlir::registerFromLLVMIRTranslation();
  synpl::host::registerToObjectTranslation();
  synpl::registerImportSynTranslation();
  synpl::registerToPtxTranslation();
  synpl::ipu21::registerToProgramTranslation();
  // Every translation's parser recurses per nesting level: a large stack,
  // and an input file nesting deeper than synpl::kMaxInputNesting is
  // refused, located, before it is read. (Standard input gets the large
  // stack alone.)
  llvm::StringRef input = inputArgument(argc, argv);
  if (!input.empty()) {
    if (auto buffer = llvm::MemoryBuffer::getFile(input, /*IsText=*/true))
      if (!synpl::checkNesting((*buffer)->getBuffer(), input))
        return 1;
  }
  return synpl::runWithLargeStack([&] {
    return mlir::failed(mlir::mlirTranslateMain(argc, argv, "synplexum translation driver\n"));
  });
}
