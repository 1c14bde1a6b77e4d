//===- WindowOps.cpp - Reference semantics of l1.unfold and l1.fold -------===//
//
// Both walk every element of the windows tensor [N, O..., C, K...] and the
// input position it corresponds to, [n, c, o * stride + k - padding]: unfold
// reads it (zero in the padding), fold adds to it (the padding's share is
// dropped). Fold is therefore unfold's adjoint. Channels last, the windows
// are [N, O..., K..., C] and the input position [n, o * stride + k -
// padding, c].
//
//===----------------------------------------------------------------------===//
#include "WindowOps.h"

using namespace synpl::ref;

namespace {

/// Calls fn(windowOffset, inputOffset or -1) for every window element.
template <typename Fn>
void forEachWindowElement(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> windows,
                          llvm::ArrayRef<int64_t> kernel, llvm::ArrayRef<int64_t> stride,
                          llvm::ArrayRef<int64_t> padding, bool channelsLast, Fn fn) {
  size_t s = kernel.size();
  // Where the windows hold the kernel offsets and the channel, and where
  // the input holds its spatial dimensions.
  size_t kAt = channelsLast ? 1 + s : s + 2, cAt = channelsLast ? 1 + 2 * s : s + 1,
         iAt = channelsLast ? 1 : 2;
  int64_t channels = channelsLast ? input.back() : input[1];
  int64_t total = 1;
  for (int64_t d : windows)
    total *= d;
  std::vector<int64_t> idx(windows.size(), 0);
  for (int64_t w = 0; w < total; ++w) {
    // idx = [n, o_1..o_s, c, k_1..k_s] of element w ([n, o..., k..., c]
    // channels last).
    int64_t rest = w;
    for (size_t d = windows.size(); d-- > 0;) {
      idx[d] = rest % windows[d];
      rest /= windows[d];
    }
    int64_t n = idx[0], c = idx[cAt];
    int64_t offset = channelsLast ? n : n * channels + c;
    bool inside = true;
    for (size_t d = 0; d < s; ++d) {
      int64_t i = idx[1 + d] * stride[d] + idx[kAt + d] - padding[d];
      if (i < 0 || i >= input[iAt + d]) {
        inside = false;
        break;
      }
      offset = offset * input[iAt + d] + i;
    }
    if (channelsLast)
      offset = offset * channels + c;
    fn(w, inside ? offset : -1);
  }
}

} // namespace

Tensor synpl::ref::detail::unfold(const Tensor &x, llvm::ArrayRef<int64_t> kernel,
                                  llvm::ArrayRef<int64_t> stride,
                                  llvm::ArrayRef<int64_t> padding,
                                  llvm::ArrayRef<int64_t> windows, bool channelsLast) {
  Tensor r(x.getElementType(), windows);
  forEachWindowElement(x.getShape(), windows, kernel, stride, padding, channelsLast,
                       [&](int64_t w, int64_t i) { r[w] = i < 0 ? 0.0 : x[i]; });
  return r;
}

Tensor synpl::ref::detail::fold(const Tensor &p, llvm::ArrayRef<int64_t> kernel,
                                llvm::ArrayRef<int64_t> stride, llvm::ArrayRef<int64_t> padding,
                                llvm::ArrayRef<int64_t> shape, bool channelsLast) {
  Tensor r(p.getElementType(), shape);
  forEachWindowElement(shape, p.getShape(), kernel, stride, padding, channelsLast,
                       [&](int64_t w, int64_t i) {
    if (i >= 0)
      r[i] += p[w];
  });
  return r;
}
