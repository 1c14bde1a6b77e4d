//===- Reducer.h - Shrink a failing program to a minimal one ----*- C++ -*-===//
//
// Greedy delta debugging over a Program's recipe, to a fixpoint:
//
//   * delete a step: its readers read a new input instead, drawn from the
//     deleted value's interval (so a log's operand stays positive); a
//     value nothing reads is dropped with its step or input;
//   * bypass a step: its readers read its operand of the same shape;
//   * shrink a symbolic size: to 1, 2, half, or one less.
//
// A candidate is kept when it still builds (Program.h) and `stillFails`
// says it fails the same way. The result is the smallest program found.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TEST_FUZZ_DIFF_REDUCER_H
#define SYNPL_TEST_FUZZ_DIFF_REDUCER_H

#include "Program.h"

#include <functional>

namespace synpl::difffuzz {

struct ReduceStats {
  int candidates = 0, kept = 0;
};

Program reduce(mlir::MLIRContext *ctx, const Program &program, const SizeLimits &limits,
               const std::function<bool(const Program &)> &stillFails, int maxCandidates,
               ReduceStats &stats);

} // namespace synpl::difffuzz

#endif // SYNPL_TEST_FUZZ_DIFF_REDUCER_H
