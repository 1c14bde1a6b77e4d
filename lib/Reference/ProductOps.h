//===- ProductOps.h - Reference loops of l1.matmul and l1.random -*- C++ -*-===//
//
// Internal to lib/Reference: the interpreter's definitions of the matrix
// product (plain and batched) and of the counter-based draws, as plain loops
// over their elements, on operands the interpreter has already checked.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_REFERENCE_PRODUCTOPS_H
#define SYNPL_LIB_REFERENCE_PRODUCTOPS_H

#include "synpl/Reference/L1Interpreter.h"

#include <cstdint>

namespace synpl::ref::detail {

/// `a` [b..., m, k] times `b` [b..., k, n] into a tensor of `shape`
/// ([b..., m, n]), one product per batch index, in double precision.
Tensor matmul(const Tensor &a, const Tensor &b, llvm::ArrayRef<int64_t> shape);

/// The uniform draws of `l1.random` (synpl/Support/CounterRng.h): element i
/// of `shape` drawn at counter `step` with the key of (seed, stream).
Tensor uniformDraws(ElementType type, llvm::ArrayRef<int64_t> shape, uint64_t step,
                    uint64_t seed, uint64_t stream);

} // namespace synpl::ref::detail

#endif // SYNPL_LIB_REFERENCE_PRODUCTOPS_H
