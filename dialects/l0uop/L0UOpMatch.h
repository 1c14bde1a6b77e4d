//===- L0UOpMatch.h - Structural matches of l0uop kernels ----------*- C++ -*-===//
//
// Recognising the shape of a kernel from its UOps, for the sinks that map a
// shape onto a unit of their own (tensor cores, the IPU's AMP): a matrix
// product C[i, j] = sum_k A(i, k) * B(k, j) with affine operand addressing
// and straight-line ops around the k loop (its epilogue). The match only
// reads the kernel; each sink decides what it can take.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_DIALECT_L0UOP_MATCH_H
#define SYNPL_DIALECT_L0UOP_MATCH_H

#include "synpl/Dialect/L0UOp/L0UOpOps.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace synpl::l0uop {

/// c + i*I + j*J + k*K: an index expression of a matmul's ranges.
struct MatmulAffine {
  int64_t c = 0, i = 0, j = 0, k = 0;
  bool constant() const { return !i && !j && !k; }
};

/// One operand of the product: input buffer argument `arg`, element (r, k)
/// at base + r*strideR + k*strideK (r = i for A, j for B).
struct MatmulOperand {
  unsigned arg = 0;
  mlir::Type elem;
  int64_t base = 0, strideR = 0, strideK = 0;
  bool kContig() const { return strideK == 1; }
  bool rContig() const { return strideR == 1; }
};

/// RANGE i, RANGE j (parallel, from 0 step 1), one loop RANGE k whose body
/// is the product of two loads of input buffers (each optionally CAST to
/// f32) folded by an f32 REDUCE add, and straight-line scalar ops outside
/// the k loop (re-run per output element: the epilogue).
struct MatmulStructure {
  RangeOp ri, rj, rk;
  int64_t M = 0, N = 0, K = 0;
  MatmulOperand a, b;
  ReduceOp reduce;
  /// The loads' element type, and whether both are CAST to f32 before the
  /// product (false: both are f32 and multiplied as loaded).
  mlir::Type elem;
  bool castToF32 = false;
  /// The ops outside the k loop in program order (RANGE/END excluded).
  llvm::SmallVector<mlir::Operation *> scalarOps;
};

/// The matrix product `kernel` computes, when its UOps have that shape.
std::optional<MatmulStructure> matchMatmulStructure(KernelOp kernel);

} // namespace synpl::l0uop

#endif // SYNPL_DIALECT_L0UOP_MATCH_H
