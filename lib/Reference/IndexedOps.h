//===- IndexedOps.h - Reference one_hot, gather and scatter_add -*- C++ -*-===//
//
// Internal to lib/Reference: the interpreter's definitions of the ops that
// read integer indices as positions: one_hot, the embedding lookup
// (gather) and its adjoint (scatter_add), as plain loops over the indices.
// An index that is not an integer in [0, rows) selects nothing: a zero
// encoding, a zero row, no contribution.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_REFERENCE_INDEXEDOPS_H
#define SYNPL_LIB_REFERENCE_INDEXEDOPS_H

#include "synpl/Reference/L1Interpreter.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

namespace synpl::ref::detail {

/// `labels` one-hot encoded over `classes`, as `type` (labels' shape ++
/// [classes]).
mlir::FailureOr<Tensor> oneHot(mlir::Operation *op, ElementType type, const Tensor &labels,
                               int64_t classes);

/// Rows of `table` ([rows, width]) at `ids`: ids' shape ++ [width].
mlir::FailureOr<Tensor> gather(mlir::Operation *op, const Tensor &table, const Tensor &ids);

/// The rows of `src` (ids' shape ++ [width]) summed at `ids` into `rows`
/// rows, in the indices' row-major order.
mlir::FailureOr<Tensor> scatterAdd(mlir::Operation *op, const Tensor &src, const Tensor &ids,
                                   int64_t rows);

/// Block `index` (truncated; one outside the blocks is block 0) of `in`
/// along `axis`, the block `shape` (l1.block_slice).
mlir::FailureOr<Tensor> blockSlice(mlir::Operation *op, const Tensor &in, double index,
                                   int64_t axis, llvm::ArrayRef<int64_t> shape);

} // namespace synpl::ref::detail

#endif // SYNPL_LIB_REFERENCE_INDEXEDOPS_H
