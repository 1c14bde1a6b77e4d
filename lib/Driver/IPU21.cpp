//===- IPU21.cpp - The ipu21 sink's output of a compile --------------------===//
#include "synpl/Driver/Driver.h"

#include "synpl/Dialect/IPU21/IPU21Ops.h"
#include "synpl/Target/IPU21/ProgramFile.h"
#include "synpl/Target/IPU21/Translate.h"

using namespace mlir;

LogicalResult
synpl::driver::writeIPU21Program(ModuleOp module, llvm::StringRef path,
                                 const std::function<void(const llvm::Twine &)> &error) {
  auto graphs = module.getBody()->getOps<ipu21::GraphOp>();
  if (graphs.empty() || std::next(graphs.begin()) != graphs.end()) {
    error("the ipu21 program file holds one ipu21.graph; the compiled module has " +
          llvm::Twine(std::distance(graphs.begin(), graphs.end())));
    return failure();
  }
  FailureOr<ipu21::sim::Program> program = ipu21::toProgram(*graphs.begin());
  if (failed(program))
    return failure();
  std::string message;
  if (!ipu21::sim::saveProgram(path.str(), *program, message)) {
    error(path + ": " + message);
    return failure();
  }
  return success();
}
