//===- Passes.h - synplexum lowerings between layers -------------*- C++ -*-===//
#ifndef SYNPL_CONVERSION_PASSES_H
#define SYNPL_CONVERSION_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace synpl {

#define GEN_PASS_DECL
#include "synpl/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "synpl/Conversion/Passes.h.inc"

} // namespace synpl

#endif // SYNPL_CONVERSION_PASSES_H
