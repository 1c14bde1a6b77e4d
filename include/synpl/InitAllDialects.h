//===- InitAllDialects.h - Register the synplexum dialects -------*- C++ -*-===//
//
// Declarations only, as MLIR's own InitAllDialects.h (LLVM 21 and later):
// the definitions are in the library synpl::SynplRegisterAllDialects
// (lib/Registration/RegisterAllDialects.cpp), which links the five dialect
// libraries (SynplL3, SynplL2, SynplL1, SynplL0Ctl, SynplL0UOp, SynplIPU21) and the
// upstream dialects, not the passes. Keeping the dialects' headers out of
// this one keeps every file that registers dialects cheap to compile (the
// NVVM dialect's header alone takes seconds to parse). Any subset can be
// inserted directly instead: `registry.insert<synpl::l1::L1Dialect>()`.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_INITALLDIALECTS_H
#define SYNPL_INITALLDIALECTS_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace synpl {

/// l3, l2, l1, l0ctl, l0uop.
void registerAllDialects(mlir::DialectRegistry &registry);

/// The upstream dialects synplexum's lowerings produce: func, arith, cf,
/// llvm, gpu, nvvm.
void registerUpstreamDialects(mlir::DialectRegistry &registry);

} // namespace synpl

#endif // SYNPL_INITALLDIALECTS_H
