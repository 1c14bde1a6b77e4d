//===- Lowering.h - Shared helpers of the L0 -> LLVM lowerings ---*- C++ -*-===//
//
// Both lowerings convert everything or fail with one diagnostic
//   lowered N of M ops; not lowered: <op> at <loc>: <why>
// at the first op they could not lower, leaving the module untouched.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_CONVERSION_L0TOLLVM_LOWERING_H
#define SYNPL_LIB_CONVERSION_L0TOLLVM_LOWERING_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace synpl::l0tollvm {

/// An op the lowering could not convert, and why.
struct NotLowered {
  mlir::Operation *op;
  std::string why;
  /// Only because an operand was not lowered: counted, not noted.
  bool dependent = false;
};

/// `file:line:col` for file locations, the printed location otherwise.
inline std::string formatLoc(mlir::Location loc) {
  if (auto flc = llvm::dyn_cast<mlir::FileLineColLoc>(loc))
    return (flc.getFilename().getValue() + ":" + llvm::Twine(flc.getLine()) +
            ":" + llvm::Twine(flc.getColumn()))
        .str();
  if (auto named = llvm::dyn_cast<mlir::NameLoc>(loc))
    return formatLoc(named.getChildLoc());
  if (auto fused = llvm::dyn_cast<mlir::FusedLoc>(loc))
    if (!fused.getLocations().empty())
      return formatLoc(fused.getLocations().front());
  std::string s;
  llvm::raw_string_ostream os(s);
  loc.print(os);
  return s;
}

/// Reports the first op not lowered (notes for the others) at its location.
inline void reportNotLowered(unsigned total,
                             llvm::ArrayRef<NotLowered> failures) {
  const NotLowered &first = failures.front();
  mlir::InFlightDiagnostic diag = mlir::emitError(first.op->getLoc())
                                  << "lowered " << total - failures.size()
                                  << " of " << total
                                  << " ops; not lowered: "
                                  << first.op->getName() << " at "
                                  << formatLoc(first.op->getLoc()) << ": "
                                  << first.why;
  unsigned notes = 0;
  for (const NotLowered &f : failures.drop_front()) {
    if (f.dependent || ++notes > 8)
      continue;
    diag.attachNote(f.op->getLoc())
        << "also not lowered: " << f.op->getName() << ": " << f.why;
  }
}

} // namespace synpl::l0tollvm

#endif // SYNPL_LIB_CONVERSION_L0TOLLVM_LOWERING_H
