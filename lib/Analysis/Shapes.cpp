//===- Shapes.cpp - Tensor shape rules -------------------------------------===//
#include "synpl/Analysis/Shapes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace synpl::shapes;
using llvm::ArrayRef;

std::string synpl::shapes::formatShape(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << '[';
  llvm::interleaveComma(shape, os);
  os << ']';
  return s;
}

std::optional<uint64_t> synpl::shapes::numElements(ArrayRef<int64_t> shape) {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    if (d != 0 && n > UINT64_MAX / static_cast<uint64_t>(d))
      return std::nullopt;
    n *= static_cast<uint64_t>(d);
  }
  return n;
}

static bool allStatic(ArrayRef<int64_t> shape) {
  return llvm::all_of(shape, [](int64_t d) { return d >= 0; });
}

ShapeResult synpl::shapes::matmulShape(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  if (lhs.size() < 2 || lhs.size() != rhs.size())
    return ShapeResult::error("matmul takes two tensors of one rank >= 2 ([m, k] x [k, n], "
                              "or batched [b..., m, k] x [b..., k, n]), got " +
                              formatShape(lhs) + " and " + formatShape(rhs));
  size_t r = lhs.size();
  ArrayRef<int64_t> batch = lhs.drop_back(2);
  if (batch != rhs.drop_back(2))
    return ShapeResult::error("matmul of " + formatShape(lhs) + " by " + formatShape(rhs) +
                              ": batch dimensions " + formatShape(batch) + " and " +
                              formatShape(rhs.drop_back(2)) + " differ");
  if (lhs[r - 1] != rhs[r - 2])
    return ShapeResult::error("matmul of " + formatShape(lhs) + " by " +
                              formatShape(rhs) + ": inner dimensions " +
                              std::to_string(lhs[r - 1]) + " and " +
                              std::to_string(rhs[r - 2]) + " differ");
  Shape out(batch.begin(), batch.end());
  out.push_back(lhs[r - 2]);
  out.push_back(rhs[r - 1]);
  return ShapeResult::ok(out);
}

ShapeResult synpl::shapes::elementwiseShape(ArrayRef<int64_t> lhs,
                                            ArrayRef<int64_t> rhs) {
  if (lhs != rhs)
    return ShapeResult::error("elementwise operands have shapes " + formatShape(lhs) +
                              " and " + formatShape(rhs) +
                              " (broadcast explicitly)");
  return ShapeResult::ok(lhs);
}

Shape synpl::shapes::defaultBroadcastDims(int64_t inRank, int64_t outRank) {
  Shape dims;
  for (int64_t i = 0; i < inRank; ++i)
    dims.push_back(outRank - inRank + i);
  return dims;
}

ShapeResult synpl::shapes::broadcastShape(ArrayRef<int64_t> in, ArrayRef<int64_t> out,
                                          ArrayRef<int64_t> dims) {
  if (in.size() > out.size())
    return ShapeResult::error("cannot broadcast " + formatShape(in) + " to the lower-rank " +
                              formatShape(out));
  Shape owned;
  if (dims.empty() && !in.empty()) {
    owned = defaultBroadcastDims(in.size(), out.size());
    dims = owned;
  }
  if (dims.size() != in.size())
    return ShapeResult::error("broadcast dims " + formatShape(dims) + " must name one output "
                              "dimension per input dimension of " + formatShape(in));
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= static_cast<int64_t>(out.size()))
      return ShapeResult::error("broadcast dim " + std::to_string(dims[i]) +
                                " is out of range for " + formatShape(out));
    if (i > 0 && dims[i] <= dims[i - 1])
      return ShapeResult::error("broadcast dims " + formatShape(dims) +
                                " must be strictly increasing");
    if (in[i] != 1 && in[i] != out[dims[i]])
      return ShapeResult::error("cannot broadcast " + formatShape(in) + " to " +
                                formatShape(out) + ": input dimension " +
                                std::to_string(i) + " (" + std::to_string(in[i]) +
                                ") is neither 1 nor " + std::to_string(out[dims[i]]));
  }
  return ShapeResult::ok(out);
}

ShapeResult synpl::shapes::transposeShape(ArrayRef<int64_t> in, ArrayRef<int64_t> perm) {
  Shape owned;
  if (perm.empty()) {
    for (size_t i = in.size(); i > 0; --i)
      owned.push_back(i - 1);
    perm = owned;
  }
  if (perm.size() != in.size())
    return ShapeResult::error("permutation " + formatShape(perm) + " does not match rank " +
                              std::to_string(in.size()));
  llvm::SmallVector<bool, 4> seen(in.size(), false);
  Shape result;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(in.size()) || seen[p])
      return ShapeResult::error(formatShape(perm) + " is not a permutation of rank " +
                                std::to_string(in.size()));
    seen[p] = true;
    result.push_back(in[p]);
  }
  return ShapeResult::ok(result);
}

ShapeResult synpl::shapes::reduceShape(ArrayRef<int64_t> in, std::optional<int64_t> axis) {
  if (!axis)
    return ShapeResult::ok({});
  if (*axis < 0 || *axis >= static_cast<int64_t>(in.size()))
    return ShapeResult::error("axis " + std::to_string(*axis) + " is out of range for " +
                              formatShape(in));
  Shape result(in.begin(), in.end());
  result.erase(result.begin() + *axis);
  return ShapeResult::ok(result);
}

ShapeResult synpl::shapes::reshapeShape(ArrayRef<int64_t> in, ArrayRef<int64_t> out) {
  if (!allStatic(in) || !allStatic(out))
    return ShapeResult::error("reshape needs static shapes");
  auto a = numElements(in), b = numElements(out);
  if (!a || !b || *a != *b)
    return ShapeResult::error("reshape from " + formatShape(in) + " to " +
                              formatShape(out) + " changes the number of elements");
  return ShapeResult::ok(out);
}

ShapeResult synpl::shapes::oneHotShape(ArrayRef<int64_t> in, int64_t classes) {
  if (classes <= 0)
    return ShapeResult::error("one_hot needs a positive class count, got " +
                              std::to_string(classes));
  Shape result(in.begin(), in.end());
  result.push_back(classes);
  return ShapeResult::ok(result);
}

ShapeResult synpl::shapes::unfoldShape(ArrayRef<int64_t> in, ArrayRef<int64_t> kernel,
                                       ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                                       bool channelsLast) {
  if (in.size() < 3)
    return ShapeResult::error(std::string("windows need an ") +
                              (channelsLast ? "[N, spatial..., C]" : "[N, C, spatial...]") +
                              " input, got " + formatShape(in));
  size_t s = in.size() - 2;
  // The spatial sizes and the channels.
  ArrayRef<int64_t> spatial = in.slice(channelsLast ? 1 : 2, s);
  int64_t channels = channelsLast ? in.back() : in[1];
  if (kernel.size() != s || stride.size() != s || padding.size() != s)
    return ShapeResult::error("kernel, stride and padding need " + std::to_string(s) +
                              " entries (one per spatial dimension of " + formatShape(in) + ")");
  Shape result{in[0]};
  for (size_t d = 0; d < s; ++d) {
    if (kernel[d] <= 0 || stride[d] <= 0 || padding[d] < 0)
      return ShapeResult::error("a window needs kernel > 0, stride > 0 and padding >= 0, "
                                "got kernel " + std::to_string(kernel[d]) +
                                ", stride " + std::to_string(stride[d]) + ", padding " +
                                std::to_string(padding[d]));
    int64_t span = spatial[d] + 2 * padding[d] - kernel[d];
    if (span < 0)
      return ShapeResult::error("a kernel of " + std::to_string(kernel[d]) +
                                " does not fit spatial dimension " + std::to_string(d) + " of " +
                                formatShape(in) + " (padding " + std::to_string(padding[d]) + ")");
    result.push_back(span / stride[d] + 1);
  }
  if (channelsLast) {
    result.append(kernel.begin(), kernel.end());
    result.push_back(channels);
  } else {
    result.push_back(channels);
    result.append(kernel.begin(), kernel.end());
  }
  return ShapeResult::ok(result);
}
