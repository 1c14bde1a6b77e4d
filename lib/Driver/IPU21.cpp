//===- IPU21.cpp - The ipu21 sink's output of a compile --------------------===//
#include "synpl/Driver/Driver.h"

#include "synpl/Target/IPU21/Translate.h"

mlir::LogicalResult synpl::driver::writeIPU21Program(mlir::ModuleOp module,
                                                     llvm::StringRef path) {
  return ipu21::saveProgramFile(module, path);
}
