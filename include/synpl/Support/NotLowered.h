//===- NotLowered.h - The "lowered N of M; not lowered" diagnostic -*- C++ -*-===//
//
// Every lowering converts everything or fails with one diagnostic at the
// first op it could not lower:
//
//   lowered N of M ops; not lowered: <op> at <file:line:col>: <why>
//
// with a note at each other op not lowered (up to eight; those that failed
// only because an operand was not lowered are counted, not noted), leaving
// the module untouched. This header is the one place that message and its
// location format are built.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_SUPPORT_NOTLOWERED_H
#define SYNPL_SUPPORT_NOTLOWERED_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>

namespace synpl {

/// An op a lowering could not convert, and why.
struct NotLowered {
  mlir::Operation *op;
  std::string why;
  /// Only because an operand was not lowered: counted, not noted.
  bool dependent = false;
  /// How the message names the op; empty: its operation name.
  std::string name = {};
};

/// `file:line:col` of the first file location in `loc` (through names,
/// call sites and fused locations); the printed location when it has none.
std::string formatLoc(mlir::Location loc);

/// Reports `failures` (non-empty; the first is the one at fault) as one
/// error at the first op: `lowered <lowered> of <total> <unit>; not lowered:
/// <op> at <loc>: <why>`, with notes for the others.
void reportNotLowered(int64_t lowered, int64_t total, llvm::ArrayRef<NotLowered> failures,
                      llvm::StringRef unit = "ops");
/// The same, counting every failure as an op not lowered.
inline void reportNotLowered(int64_t total, llvm::ArrayRef<NotLowered> failures) {
  reportNotLowered(total - static_cast<int64_t>(failures.size()), total, failures);
}

} // namespace synpl

#endif // SYNPL_SUPPORT_NOTLOWERED_H
