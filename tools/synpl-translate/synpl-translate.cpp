//===- synpl-translate.cpp - Translations in and out of synplexum IR -------===//
//
// Registers the upstream translations the codegen path needs
// (--mlir-to-llvmir, --import-llvm); synplexum's own translations (.syn
// import, ELF and PTX emission) register here as they land.
//
//===----------------------------------------------------------------------===//
#include "synpl/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllTranslations.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::registerToLLVMIRTranslation();
  mlir::registerFromLLVMIRTranslation();
  return mlir::failed(mlir::mlirTranslateMain(
      argc, argv, "synplexum translation driver\n"));
}
