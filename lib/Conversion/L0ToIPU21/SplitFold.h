//===- SplitFold.h - A kernel's fold in two stages --------------------*- C++ -*-===//
//
// A generic kernel whose work is a fold (a REDUCE over a loop RANGE: a
// product's sum over K, a row's sum) can only be cut along its parallel
// RANGEs; when those are few (a reduction to one row of results) or a
// tile's share of the fold does not fit (a weight gradient's sum over the
// batch), the fold itself must be cut: poplibs reduces in two stages. The
// first stage folds G groups of the RANGE's iterations in parallel into
// partial results P[g, ...] (a new parallel RANGE over the groups, each
// group's fold starting at the op's identity); the second folds each
// result's G partials, starting at the kernel's own init, and runs the
// kernel's epilogue. Float sums come out in another order than one fold's.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_CONVERSION_L0TOIPU21_SPLITFOLD_H
#define SYNPL_LIB_CONVERSION_L0TOIPU21_SPLITFOLD_H

#include "synpl/Dialect/IPU21/IPU21Ops.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace synpl::l0toipu21 {

/// A fold a kernel may be cut along: the body is its parallel RANGEs (from
/// 0, step 1) and pure UOps, then the loop RANGE `range` (no STORE inside),
/// then the float REDUCEs over it and the epilogue.
struct Fold {
  l0uop::RangeOp range;
  llvm::SmallVector<l0uop::ReduceOp, 2> reduces;
  llvm::SmallVector<l0uop::RangeOp, 3> parallel; ///< in body order
  int64_t trips = 0;
};

/// The kernel body's fold that can be cut in two stages (the longest when
/// there are several), or none.
std::optional<Fold> findFold(mlir::Block &body);

/// The two stages' codelets for `groups` groups of the fold's iterations
/// (which `groups` divides), named `<name>.fold<groups>.{first,second}.codelet`,
/// and the partials' types (one per REDUCE: [groups, parallel trips...]).
/// Fields: the first stage reads every buffer of the kernel and writes the
/// partials (`<field>` names, then `partials<r>`); the second reads the
/// kernel's inputs and the partials and writes the kernel's outputs.
struct TwoStages {
  ipu21::CodeletOp first, second;
  llvm::SmallVector<mlir::RankedTensorType, 2> partials;
};
TwoStages buildTwoStages(mlir::OpBuilder &b, mlir::Block &body, unsigned numInputs,
                         llvm::ArrayRef<mlir::Attribute> fieldNames, const Fold &fold,
                         int64_t groups, llvm::StringRef name);

} // namespace synpl::l0toipu21

#endif // SYNPL_LIB_CONVERSION_L0TOIPU21_SPLITFOLD_H
