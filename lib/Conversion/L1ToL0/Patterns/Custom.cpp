//===- Custom.cpp - The user kernel's place among the emission patterns ---===//
//
// l1.kernel_call is a kernel of its own (OpKind::Custom): the grouping seals
// it, its operands are stored dense, and Emitter::emitCustomKernel
// (CustomKernel.cpp) writes its l0uop.kernel without UOps. The pattern only
// says so; it never builds a value.
//
//===----------------------------------------------------------------------===//
#include "../EmitPatterns.h"

#include "synpl/Dialect/L1/L1Ops.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l1tol0;

namespace {

struct KernelCallPattern : OpEmitPattern<l1::KernelCallOp> {
  KernelCallPattern(MLIRContext *ctx) : OpEmitPattern(ctx, OpKind::Custom) {}
  Value build(KernelBuilder &, l1::KernelCallOp, ArrayRef<Value>) const override {
    llvm_unreachable("a user kernel is emitted whole by Emitter::emitCustomKernel");
  }
};

} // namespace

void synpl::l1tol0::populateCustomEmitPatterns(EmitPatternSet &patterns) {
  patterns.add<KernelCallPattern>();
}
