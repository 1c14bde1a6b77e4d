//===- WindowOps.h - Reference semantics of l1.unfold and l1.fold -*- C++ -*-===//
//
// Internal to lib/Reference: the interpreter's definitions of the window
// ops, written as plain loops over every window element so that the
// compiled kernels (and the convolution's gradient rules) have an
// independent check.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_REFERENCE_WINDOWOPS_H
#define SYNPL_LIB_REFERENCE_WINDOWOPS_H

#include "synpl/Reference/L1Interpreter.h"

namespace synpl::ref::detail {

/// The windows of `x` ([N, C, I...]) as [N, O..., C, K...]; `windows` is
/// that shape. Zero where a window reaches into the padding. With
/// `channelsLast`, of `x` [N, I..., C] as [N, O..., K..., C].
Tensor unfold(const Tensor &x, llvm::ArrayRef<int64_t> kernel, llvm::ArrayRef<int64_t> stride,
              llvm::ArrayRef<int64_t> padding, llvm::ArrayRef<int64_t> windows,
              bool channelsLast = false);

/// The windows `p` ([N, O..., C, K...]) summed back onto a tensor of
/// `shape` ([N, C, I...]); what lies in the padding is dropped. With
/// `channelsLast`, `p` [N, O..., K..., C] onto [N, I..., C].
Tensor fold(const Tensor &p, llvm::ArrayRef<int64_t> kernel, llvm::ArrayRef<int64_t> stride,
            llvm::ArrayRef<int64_t> padding, llvm::ArrayRef<int64_t> shape,
            bool channelsLast = false);

} // namespace synpl::ref::detail

#endif // SYNPL_LIB_REFERENCE_WINDOWOPS_H
