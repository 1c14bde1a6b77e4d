//===- IndexedOps.cpp - Reference one_hot, gather, scatter_add, block_slice ===//
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

FailureOr<Tensor> synpl::ref::detail::blockSlice(Operation *op, const Tensor &in, double index,
                                                 int64_t axis, ArrayRef<int64_t> shape) {
  ArrayRef<int64_t> from = in.getShape();
  bool tiles = (int64_t)shape.size() == in.getRank() && axis >= 0 && axis < in.getRank() &&
               shape[axis] > 0 && from[axis] % shape[axis] == 0;
  for (int64_t d = 0; tiles && d < in.getRank(); ++d)
    tiles = d == axis || shape[d] == from[d];
  if (!tiles)
    return op->emitOpError("the block ")
           << synpl::shapes::formatShape(shape) << " does not tile axis " << axis << " of "
           << synpl::shapes::formatShape(from);
  int64_t n = shape[axis];
  double i = std::trunc(index);
  int64_t block = i >= 0 && i < double(from[axis] / n) ? int64_t(i) : 0;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= from[d];
  for (int64_t d = axis + 1; d < in.getRank(); ++d)
    inner *= from[d];
  std::vector<double> out;
  out.reserve(size_t(outer * n * inner));
  for (int64_t o = 0; o < outer; ++o) {
    const double *row = in.data().data() + (o * from[axis] + block * n) * inner;
    out.insert(out.end(), row, row + n * inner);
  }
  return Tensor(in.getElementType(), shape, std::move(out));
}
