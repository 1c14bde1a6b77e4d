//===- MlirMutator.h - Structure-aware mutation of MLIR inputs --*- C++ -*-===//
//
// libFuzzer's byte mutations rarely keep MLIR text parseable, so a target
// that compiles (the pipeline target) spends most executions in the parser.
// This mutator parses the input and mutates the IR instead, then prints it
// back: it replaces an operand with another value of the same type defined
// before it, swaps two operands of one type, erases an op (its uses
// rewired to an earlier value of the same type), duplicates an op, tweaks
// an integer, float or array attribute (an axis, a window, a constant: to
// 0, 1, -1, one more or less, twice, a large value), or changes one
// dimension of a result type. Most results still verify and reach the
// passes; the rest test the verifiers with near misses. One input in four,
// and any input that does not parse, gets libFuzzer's byte mutations.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TEST_FUZZ_MLIRMUTATOR_H
#define SYNPL_TEST_FUZZ_MLIRMUTATOR_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace mlir {
class MLIRContext;
}

namespace synpl::fuzz {

/// One structure-aware mutation of the MLIR text `in` with `seed`: the
/// mutated text, or "" when `in` does not parse or no mutation applied.
std::string mutateMlir(mlir::MLIRContext &ctx, const std::string &in, unsigned seed);

} // namespace synpl::fuzz

#endif // SYNPL_TEST_FUZZ_MLIRMUTATOR_H
