// Embeds the synplexum dialects in another MLIR tool: registers them
// (header-only, linking the dialect libraries alone), parses a program of
// each layer's dialect namespace and verifies it.
#include "synpl/InitAllDialects.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  synpl::registerAllDialects(registry);
  synpl::registerUpstreamDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  for (llvm::StringRef name : {"l3", "l2", "l1", "l0ctl", "l0uop"}) {
    if (!context.getLoadedDialect(name)) {
      llvm::errs() << "dialect " << name << " is not loaded\n";
      return 1;
    }
  }
  if (argc > 1) {
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceFile<mlir::ModuleOp>(argv[1], &context);
    if (!module)
      return 1;
    llvm::outs() << "verified " << argv[1] << "\n";
  }
  llvm::outs() << "embedder: 5 synplexum dialects loaded\n";
  return 0;
}
