//===- Generator.h - Random well-formed L1 tensor graphs --------*- C++ -*-===//
//
// Generates a Program (Program.h) from a seed: a few inputs, then a chain
// of idioms drawn over the whole L1 tensor vocabulary — elementwise ops,
// reductions on any axis, matmuls (batched too), reshape / transpose /
// broadcast chains, convolutions as unfold + reshape + matmul and their
// fold, max pools, gather / scatter_add / one_hot, casts, compare and
// select, counter-based random numbers (a dropout mask), softmax and layer
// norm as L2 -> L1 writes them. Shapes reach rank 6; sizes favour the edges
// of the lowerings: 1, primes, the tile sizes (6 rows, 16 lanes, k blocks
// of 256) and one on either side of them.
//
// Each idiom is kept only if the program still builds, verifies and is
// free of undefined or ill-conditioned behaviour (Bounds.h): the generator
// proposes, the builder decides. A log reads `abs(x) + 1`, a division
// `abs(y) + c`, so most proposals pass.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TEST_FUZZ_DIFF_GENERATOR_H
#define SYNPL_TEST_FUZZ_DIFF_GENERATOR_H

#include "Program.h"

namespace mlir {
class MLIRContext;
}

namespace synpl::difffuzz {

struct GenOptions {
  int minOps = 3;
  int maxOps = 14;
  SizeLimits limits;
};

/// The program of `seed`: the same seed gives the same program.
Program generate(mlir::MLIRContext *ctx, uint64_t seed, const GenOptions &options);

} // namespace synpl::difffuzz

#endif // SYNPL_TEST_FUZZ_DIFF_GENERATOR_H
