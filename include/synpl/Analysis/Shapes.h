//===- Shapes.h - Tensor shape rules ---------------------------*- C++ -*-===//
//
// The shape rules of the primitive tensor ops (matmul, elementwise, broadcast,
// transpose, reduce, reshape, one_hot) as plain functions on static shapes.
// Each returns the result shape or a message saying why the operands do not
// fit; op verifiers (L1.5 tensor shape propagation, L2.1) turn the message
// into a diagnostic. No MLIR types here, so any layer can use them.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_ANALYSIS_SHAPES_H
#define SYNPL_ANALYSIS_SHAPES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace synpl::shapes {

using Shape = llvm::SmallVector<int64_t, 4>;

/// A result shape, or the reason there is none.
class ShapeResult {
public:
  static ShapeResult ok(llvm::ArrayRef<int64_t> shape) {
    ShapeResult r;
    r.shape_ = Shape(shape.begin(), shape.end());
    return r;
  }
  static ShapeResult error(std::string message) {
    ShapeResult r;
    r.message_ = std::move(message);
    return r;
  }
  bool succeeded() const { return shape_.has_value(); }
  bool failed() const { return !succeeded(); }
  explicit operator bool() const { return succeeded(); }
  /// The result shape; only valid when succeeded().
  llvm::ArrayRef<int64_t> shape() const { return *shape_; }
  /// Why the rule does not apply; empty when succeeded().
  llvm::StringRef message() const { return message_; }

private:
  std::optional<Shape> shape_;
  std::string message_;
};

/// `[128, 784]`; `[]` for a scalar.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// Number of elements (1 for a scalar); std::nullopt on overflow or a
/// dynamic/negative extent.
std::optional<uint64_t> numElements(llvm::ArrayRef<int64_t> shape);

/// [m, k] x [k, n] -> [m, n]; batched, [b..., m, k] x [b..., k, n] ->
/// [b..., m, n] with equal batch dimensions (no broadcasting).
ShapeResult matmulShape(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// Elementwise binary ops take equal shapes (broadcasting is explicit).
ShapeResult elementwiseShape(llvm::ArrayRef<int64_t> lhs,
                             llvm::ArrayRef<int64_t> rhs);

/// Broadcast `in` to `out`: input dimension i maps to output dimension
/// dims[i] (strictly increasing) and must be 1 or equal to it. Empty `dims`
/// with a non-scalar input means trailing alignment (numpy style).
ShapeResult broadcastShape(llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> out,
                           llvm::ArrayRef<int64_t> dims);

/// The trailing-alignment dims for broadcasting rank `inRank` to `outRank`.
Shape defaultBroadcastDims(int64_t inRank, int64_t outRank);

/// Permute `in`; an empty `perm` reverses the dimensions.
ShapeResult transposeShape(llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> perm);

/// Remove dimension `axis`; without an axis, reduce all dimensions (scalar).
ShapeResult reduceShape(llvm::ArrayRef<int64_t> in, std::optional<int64_t> axis);

/// A reshape keeps the number of elements.
ShapeResult reshapeShape(llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> out);

/// one_hot of integer labels of shape S with C classes is S ++ [C].
ShapeResult oneHotShape(llvm::ArrayRef<int64_t> in, int64_t classes);

/// The sliding windows of an [N, C, I1..IS] tensor: [N, O1..OS, C, K1..KS]
/// with O = (I + 2 padding - K) / stride + 1 per spatial dimension (S >= 1;
/// kernel, stride and padding have S entries). With `channelsLast`, of an
/// [N, I1..IS, C] tensor: [N, O1..OS, K1..KS, C].
ShapeResult unfoldShape(llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> kernel,
                        llvm::ArrayRef<int64_t> stride, llvm::ArrayRef<int64_t> padding,
                        bool channelsLast = false);

} // namespace synpl::shapes

#endif // SYNPL_ANALYSIS_SHAPES_H
