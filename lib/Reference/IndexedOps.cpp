//===- IndexedOps.cpp - Reference one_hot, gather and scatter_add ---------===//
//
// The operands are checked here, not trusted from the ops' verifiers (the
// interpreter also runs generic-form programs parsed unverified).
//
//===----------------------------------------------------------------------===//
#include "IndexedOps.h"
#include "synpl/Analysis/Shapes.h"

#include <cmath>

using namespace mlir;
using namespace synpl::ref;

namespace {

/// The row `v` selects, or -1 when it is not an integer in [0, rows).
int64_t rowOf(double v, int64_t rows) {
  if (!(v >= 0) || v >= static_cast<double>(rows) || v != std::trunc(v))
    return -1;
  return static_cast<int64_t>(v);
}

/// Checks integer `ids` and rows of the ids' shape ++ [width] (`rowsShape`).
LogicalResult checkIndexed(Operation *op, const Tensor &ids, llvm::ArrayRef<int64_t> rowsShape,
                           int64_t width, StringRef what) {
  if (!ids.getElementType().isInteger())
    return op->emitOpError("indices are ") << ids.getElementType().str() << ", expected integers";
  SmallVector<int64_t, 4> want(ids.getShape());
  want.push_back(width);
  if (rowsShape != ArrayRef<int64_t>(want))
    return op->emitOpError() << what << " shape " << synpl::shapes::formatShape(rowsShape) << " should be "
                             << synpl::shapes::formatShape(want);
  return success();
}

} // namespace

FailureOr<Tensor> synpl::ref::detail::oneHot(Operation *op, ElementType type,
                                             const Tensor &labels, int64_t classes) {
  if (!labels.getElementType().isInteger())
    return op->emitOpError("labels are ") << labels.getElementType().str()
                                          << ", expected integers";
  if (classes <= 0)
    return op->emitOpError("needs a positive class count");
  SmallVector<int64_t, 4> shape(labels.getShape());
  shape.push_back(classes);
  Tensor r(type, shape, 0.0);
  for (int64_t i = 0; i < labels.size(); ++i)
    if (int64_t c = rowOf(labels[i], classes); c >= 0)
      r[i * classes + c] = 1.0;
  return r;
}

FailureOr<Tensor> synpl::ref::detail::gather(Operation *op, const Tensor &table,
                                             const Tensor &ids) {
  if (table.getShape().size() != 2)
    return op->emitOpError("table shape ") << synpl::shapes::formatShape(table.getShape()) << " is not rank 2";
  int64_t rows = table.getShape()[0], width = table.getShape()[1];
  SmallVector<int64_t, 4> shape(ids.getShape());
  shape.push_back(width);
  if (failed(checkIndexed(op, ids, shape, width, "result")))
    return failure();
  Tensor r(table.getElementType(), shape, 0.0);
  for (int64_t p = 0; p < ids.size(); ++p)
    if (int64_t v = rowOf(ids[p], rows); v >= 0)
      for (int64_t d = 0; d < width; ++d)
        r[p * width + d] = table[v * width + d];
  return r;
}

FailureOr<Tensor> synpl::ref::detail::scatterAdd(Operation *op, const Tensor &src,
                                                 const Tensor &ids, int64_t rows) {
  if (src.getShape().empty())
    return op->emitOpError("source is rank 0");
  int64_t width = src.getShape().back();
  if (failed(checkIndexed(op, ids, src.getShape(), width, "source")))
    return failure();
  Tensor r(src.getElementType(), {rows, width}, 0.0);
  for (int64_t p = 0; p < ids.size(); ++p)
    if (int64_t v = rowOf(ids[p], rows); v >= 0)
      for (int64_t d = 0; d < width; ++d)
        r[v * width + d] += src[p * width + d];
  return r;
}
