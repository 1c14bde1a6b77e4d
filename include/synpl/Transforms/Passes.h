//===- Passes.h - synplexum IR->IR passes within a layer ---------*- C++ -*-===//
#ifndef SYNPL_TRANSFORMS_PASSES_H
#define SYNPL_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace synpl {

#define GEN_PASS_DECL
#include "synpl/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "synpl/Transforms/Passes.h.inc"

} // namespace synpl

#endif // SYNPL_TRANSFORMS_PASSES_H
