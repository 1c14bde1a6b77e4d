//===- synpl-translate.cpp - Translations in and out of synplexum IR -------===//
//
// Registers the upstream translations the codegen path needs
// (--mlir-to-llvmir, --import-llvm) and synplexum's own: --synpl-to-object
// (the in-process x86-64 backend, lib/Target/Host), --import-syn
// (lib/Frontend), and --synpl-to-ptx (the PTX of an L0 plan's CUDA kernels,
// lib/Registration/ToPtx.cpp).
//
//===----------------------------------------------------------------------===//
#include "synpl/Frontend/Syn.h"
#include "synpl/InitAll.h"
#include "synpl/Target/HostObject.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllTranslations.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::registerToLLVMIRTranslation();
  mlir::registerFromLLVMIRTranslation();
  synpl::host::registerToObjectTranslation();
  synpl::registerImportSynTranslation();
  synpl::registerToPtxTranslation();
  return mlir::failed(mlir::mlirTranslateMain(
      argc, argv, "synplexum translation driver\n"));
}
