//===- ProductOps.cpp - Reference loops of l1.matmul and l1.random --------===//
#include "ProductOps.h"

#include "synpl/Support/CounterRng.h"

using namespace synpl::ref;

Tensor detail::matmul(const Tensor &a, const Tensor &b, llvm::ArrayRef<int64_t> shape) {
  int64_t rank = a.getRank();
  int64_t m = a.getShape()[rank - 2], k = a.getShape()[rank - 1], n = b.getShape()[rank - 1];
  int64_t batches = 1;
  for (int64_t d : a.getShape().drop_back(2))
    batches *= d;
  Tensor r(a.getElementType(), shape, 0.0);
  // One [m, k] x [k, n] product per batch index (row-major batches).
  for (int64_t bi = 0; bi < batches; ++bi) {
    const double *x = a.data().data() + bi * m * k, *w = b.data().data() + bi * k * n;
    double *o = r.data().data() + bi * m * n;
    // i-k-j: the inner loop streams a row of `b` into a row of the result.
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p) {
        double s = x[i * k + p];
        const double *wr = w + p * n;
        double *orow = o + i * n;
        for (int64_t j = 0; j < n; ++j)
          orow[j] += s * wr[j];
      }
  }
  return r;
}

Tensor detail::uniformDraws(ElementType type, llvm::ArrayRef<int64_t> shape, uint64_t step,
                            uint64_t seed, uint64_t stream) {
  uint64_t key = rng::squaresKey(seed, stream);
  Tensor out(type, shape, 0.0);
  for (int64_t i = 0; i < out.size(); ++i)
    out[i] = rng::uniform(step, uint64_t(i), key);
  return out;
}
