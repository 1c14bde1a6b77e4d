//===- L1TensorOps.cpp - Verifiers of the L1 tensor ops (row L1.5) --------===//
//
// Every tensor op of a tensor graph or handler checks its shapes with the
// rules of synpl/Analysis/Shapes.h and reports a mismatch as row L1.5
// (consistency): elementwise ops, matmul, movement, reductions,
// comparisons, one_hot, gather and scatter_add, constants, and the window
// ops (unfold, fold) that turn a convolution into a matmul.
//
//===----------------------------------------------------------------------===//
#include "synpl/Dialect/L1/L1Ops.h"
#include "L1TensorVerify.h"
#include "synpl/Analysis/Shapes.h"
#include "synpl/Support/CounterRng.h"
#include "synpl/Support/Property.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l1;
namespace sh = synpl::shapes;

//===----------------------------------------------------------------------===//
// Tensor ops: shape propagation (L1.5)
//===----------------------------------------------------------------------===//

static RankedTensorType tt(Type t) { return cast<RankedTensorType>(t); }

static std::string shapeOf(Type t) {
  if (auto r = dyn_cast<RankedTensorType>(t))
    return sh::formatShape(r.getShape());
  return "?";
}

static InFlightDiagnostic shapeError(Operation *op) {
  return emitCheckError(op, Property::Consistency, "L1.5")
         << op->getName().stripDialect() << ": ";
}

static LogicalResult checkResultShape(Operation *op, ArrayRef<int64_t> expected,
                                      Type result) {
  if (tt(result).getShape() != expected)
    return shapeError(op) << "result shape " << shapeOf(result) << " should be "
                          << sh::formatShape(expected);
  return success();
}

static LogicalResult checkSameElement(Operation *op, Type a, Type b) {
  if (tt(a).getElementType() != tt(b).getElementType())
    return shapeError(op) << "element types " << tt(a).getElementType() << " and "
                          << tt(b).getElementType() << " differ";
  return success();
}

LogicalResult synpl::l1::detail::verifyBinary(Operation *op) {
  Type l = op->getOperand(0).getType(), r = op->getOperand(1).getType(),
       res = op->getResult(0).getType();
  sh::ShapeResult s = sh::elementwiseShape(tt(l).getShape(), tt(r).getShape());
  if (!s)
    return shapeError(op) << s.message();
  if (failed(checkSameElement(op, l, r)) || failed(checkSameElement(op, l, res)))
    return failure();
  return checkResultShape(op, s.shape(), res);
}

LogicalResult synpl::l1::detail::verifyUnary(Operation *op, bool floatOnly) {
  Type in = op->getOperand(0).getType(), res = op->getResult(0).getType();
  if (floatOnly && !isa<FloatType>(tt(in).getElementType()))
    return shapeError(op) << "takes floats, got " << in;
  if (in != res)
    return shapeError(op) << "result type " << res << " should be " << in;
  return success();
}

LogicalResult synpl::l1::detail::verifyReduce(Operation *op, std::optional<uint64_t> axisAttr) {
  Type in = op->getOperand(0).getType(), res = op->getResult(0).getType();
  std::optional<int64_t> axis;
  if (axisAttr)
    axis = static_cast<int64_t>(*axisAttr);
  sh::ShapeResult s = sh::reduceShape(tt(in).getShape(), axis);
  if (!s)
    return shapeError(op) << s.message();
  if (failed(checkSameElement(op, in, res)))
    return failure();
  return checkResultShape(op, s.shape(), res);
}

LogicalResult MatmulOp::verify() {
  Type l = getLhs().getType(), r = getRhs().getType(), res = getResult().getType();
  sh::ShapeResult s = sh::matmulShape(tt(l).getShape(), tt(r).getShape());
  if (!s)
    return shapeError(*this) << s.message();
  if (!isa<FloatType>(tt(l).getElementType()))
    return shapeError(*this) << "takes floats, got " << l;
  if (failed(checkSameElement(*this, l, r)) || failed(checkSameElement(*this, l, res)))
    return failure();
  return checkResultShape(*this, s.shape(), res);
}

LogicalResult ScaleOp::verify() {
  Type in = getOperand().getType(), sc = getScalar().getType(),
       res = getResult().getType();
  if (tt(sc).getRank() != 0)
    return shapeError(*this) << "the scalar is a rank-0 tensor, got shape "
                             << shapeOf(sc);
  if (failed(checkSameElement(*this, in, sc)))
    return failure();
  if (in != res)
    return shapeError(*this) << "result type " << res << " should be " << in;
  return success();
}

LogicalResult BroadcastOp::verify() {
  Type in = getOperand().getType(), res = getResult().getType();
  SmallVector<int64_t> dims;
  if (auto d = getDims())
    dims.assign(d->begin(), d->end());
  sh::ShapeResult s = sh::broadcastShape(tt(in).getShape(), tt(res).getShape(), dims);
  if (!s)
    return shapeError(*this) << s.message();
  return checkSameElement(*this, in, res);
}

LogicalResult TransposeOp::verify() {
  Type in = getOperand().getType(), res = getResult().getType();
  SmallVector<int64_t> perm;
  if (auto p = getPerm())
    perm.assign(p->begin(), p->end());
  sh::ShapeResult s = sh::transposeShape(tt(in).getShape(), perm);
  if (!s)
    return shapeError(*this) << s.message();
  if (failed(checkSameElement(*this, in, res)))
    return failure();
  return checkResultShape(*this, s.shape(), res);
}

LogicalResult ReshapeOp::verify() {
  Type in = getOperand().getType(), res = getResult().getType();
  sh::ShapeResult s = sh::reshapeShape(tt(in).getShape(), tt(res).getShape());
  if (!s)
    return shapeError(*this) << s.message();
  return checkSameElement(*this, in, res);
}

LogicalResult CmpOp::verify() {
  Type l = getLhs().getType(), r = getRhs().getType(), res = getResult().getType();
  sh::ShapeResult s = sh::elementwiseShape(tt(l).getShape(), tt(r).getShape());
  if (!s)
    return shapeError(*this) << s.message();
  if (failed(checkSameElement(*this, l, r)))
    return failure();
  if (!tt(res).getElementType().isInteger(1))
    return shapeError(*this) << "result elements are i1, got " << res;
  return checkResultShape(*this, s.shape(), res);
}

LogicalResult SelectOp::verify() {
  Type c = getCond().getType(), l = getLhs().getType(), r = getRhs().getType(),
       res = getResult().getType();
  if (!tt(c).getElementType().isInteger(1))
    return shapeError(*this) << "the condition has i1 elements, got " << c;
  sh::ShapeResult s = sh::elementwiseShape(tt(l).getShape(), tt(r).getShape());
  if (!s)
    return shapeError(*this) << s.message();
  if (tt(c).getShape() != tt(l).getShape())
    return shapeError(*this) << "condition shape " << shapeOf(c)
                             << " differs from operand shape " << shapeOf(l);
  if (failed(checkSameElement(*this, l, r)))
    return failure();
  if (l != res)
    return shapeError(*this) << "result type " << res << " should be " << l;
  return success();
}

LogicalResult CastOp::verify() {
  Type in = getOperand().getType(), res = getResult().getType();
  if (tt(in).getShape() != tt(res).getShape())
    return shapeError(*this) << "a cast keeps the shape: " << shapeOf(in) << " vs "
                             << shapeOf(res);
  return success();
}

LogicalResult OneHotOp::verify() {
  Type in = getLabels().getType(), res = getResult().getType();
  if (!isa<IntegerType>(tt(in).getElementType()))
    return shapeError(*this) << "labels are integers, got " << in;
  if (!isa<FloatType>(tt(res).getElementType()))
    return shapeError(*this) << "the encoding is float, got " << res;
  sh::ShapeResult s = sh::oneHotShape(tt(in).getShape(), getClasses());
  if (!s)
    return shapeError(*this) << s.message();
  return checkResultShape(*this, s.shape(), res);
}

/// The checks a gather and a scatter-add share: a rank-2 float table
/// (`table`, the gather's operand or the scatter's result), integer
/// indices, and rows of the indices' shape with the table's row appended
/// (`rows`, the gather's result or the scatter's source).
static LogicalResult verifyIndexedRows(Operation *op, Type table, Type ids, Type rows,
                                       StringRef rowsName) {
  auto t = tt(table), i = tt(ids), r = tt(rows);
  if (t.getRank() != 2)
    return shapeError(op) << "the table is rank 2 ([rows, width]), got " << table;
  if (!isa<FloatType>(t.getElementType()))
    return shapeError(op) << "the table is float, got " << table;
  if (!isa<IntegerType>(i.getElementType()))
    return shapeError(op) << "the indices are integers, got " << ids;
  if (failed(checkSameElement(op, table, rows)))
    return failure();
  SmallVector<int64_t> expected(i.getShape());
  expected.push_back(t.getShape()[1]);
  if (r.getShape() != ArrayRef<int64_t>(expected))
    return shapeError(op) << rowsName << " shape " << shapeOf(rows) << " should be "
                          << sh::formatShape(expected)
                          << " (the indices' shape, then the table's width)";
  return success();
}

LogicalResult GatherOp::verify() {
  return verifyIndexedRows(*this, getTable().getType(), getIds().getType(),
                           getResult().getType(), "result");
}

LogicalResult ScatterAddOp::verify() {
  return verifyIndexedRows(*this, getResult().getType(), getIds().getType(),
                           getSrc().getType(), "source");
}

LogicalResult KernelCallOp::verify() {
  if (getSymbol().empty() || getFile().empty())
    return emitOpError("names a kernel by a function and a file, both non-empty");
  // Only the form is the dialect's to check: what the file holds is checked
  // where it is read (the L1 -> L0 lowering, row L0.1).
  return success();
}

LogicalResult RandomOp::verify() {
  auto counter = tt(getCounter().getType()), res = tt(getResult().getType());
  if (counter.getRank() != 0 || !counter.getElementType().isF32())
    return shapeError(*this) << "the counter is a rank-0 f32 (tensor<f32>), got " << counter;
  if (!res.getElementType().isF32())
    return shapeError(*this) << "the draws are f32, got " << res;
  std::optional<uint64_t> n = sh::numElements(res.getShape());
  if (!n || *n >= rng::kMaxElements)
    return shapeError(*this) << "one draw has fewer than 2^32 elements (the element "
                                "index is the counter's low half), got "
                             << res;
  // I64Attr reads back as uint64_t: its sign is the top bit.
  int64_t seed = int64_t(getSeed()), stream = int64_t(getStream());
  if (seed < 0 || stream < 0)
    return shapeError(*this) << "seed and stream are non-negative, got seed " << seed
                             << " stream " << stream;
  return success();
}

LogicalResult ConstOp::verify() {
  Type elt = tt(getResult().getType()).getElementType();
  if (!elt.isIntOrFloat())
    return shapeError(*this) << "constants are integers or floats, got " << elt;
  if (isa<IntegerType>(elt) && getValue().convertToDouble() !=
                                   static_cast<double>(static_cast<int64_t>(
                                       getValue().convertToDouble())))
    return shapeError(*this) << "an integer constant needs an integral value";
  return success();
}


//===----------------------------------------------------------------------===//
// Window ops
//===----------------------------------------------------------------------===//

LogicalResult UnfoldOp::verify() {
  Type in = getOperand().getType(), res = getResult().getType();
  sh::ShapeResult s =
      sh::unfoldShape(tt(in).getShape(), getKernel(), getStride(), getPadding(), getChannelsLast());
  if (!s)
    return shapeError(*this) << s.message();
  if (failed(checkSameElement(*this, in, res)))
    return failure();
  return checkResultShape(*this, s.shape(), res);
}

LogicalResult FoldOp::verify() {
  // The operand must be the windows of a tensor of the result's shape.
  Type in = getOperand().getType(), res = getResult().getType();
  sh::ShapeResult s =
      sh::unfoldShape(tt(res).getShape(), getKernel(), getStride(), getPadding(), getChannelsLast());
  if (!s)
    return shapeError(*this) << s.message();
  if (failed(checkSameElement(*this, in, res)))
    return failure();
  if (tt(in).getShape() != s.shape())
    return shapeError(*this) << "the windows of " << sh::formatShape(tt(res).getShape())
                             << " are " << sh::formatShape(s.shape()) << ", not "
                             << sh::formatShape(tt(in).getShape());
  return success();
}
