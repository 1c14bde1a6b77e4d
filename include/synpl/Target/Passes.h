//===- Passes.h - Passes of the target layer ---------------------*- C++ -*-===//
#ifndef SYNPL_TARGET_PASSES_H
#define SYNPL_TARGET_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace synpl {

#define GEN_PASS_DECL
#include "synpl/Target/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "synpl/Target/Passes.h.inc"

} // namespace synpl

#endif // SYNPL_TARGET_PASSES_H
