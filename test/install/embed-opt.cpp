// An embedder's opt tool with a subset of synplexum: the l1, l0uop and
// l0ctl dialects (and the upstream ones an L1 program's stages use) and the
// one lowering between them, --synpl-l1-to-l0. It links synpl::SynplL1ToL0
// and what that needs, nothing of l3, l2 or the code generators.
#include "synpl/Conversion/Passes.h"
#include "synpl/Dialect/L0Ctl/L0CtlDialect.h"
#include "synpl/Dialect/L0UOp/L0UOpDialect.h"
#include "synpl/Dialect/L1/L1Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<synpl::l1::L1Dialect, synpl::l0uop::L0UOpDialect,
                  synpl::l0ctl::L0CtlDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::cf::ControlFlowDialect>();
  synpl::registerL1ToL0();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "embed-opt: l1 -> l0 only\n", registry));
}
