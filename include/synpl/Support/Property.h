//===- Property.h - The spec's four property kinds --------------*- C++ -*-===//
//
// Every verification row of the spec belongs to exactly one of four property
// kinds. A diagnostic from a row carries its kind as a tag and its row id, so
// that a user (and a test) can tell which contract a program broke:
//
//   error: [liveness] L1.7: buffer %b is live at the end of path ...
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_SUPPORT_PROPERTY_H
#define SYNPL_SUPPORT_PROPERTY_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"

namespace synpl {

/// The four property kinds of the spec's verification tables.
enum class Property { Safety, Consistency, Liveness, Resource };

/// The tag a diagnostic carries: "safety", "consistency", "liveness", "resource".
llvm::StringRef propertyTag(Property kind);

/// Emits `[<kind>] <rowId>: ` at `loc` and returns the diagnostic so that the
/// caller streams the rest of the message. `rowId` is the row's id in
/// docs/spec-map.md (e.g. "L1.7").
mlir::InFlightDiagnostic emitCheckError(mlir::Location loc, Property kind,
                                        llvm::StringRef rowId);

/// Same, located at `op`; notes added to the diagnostic point at related ops.
mlir::InFlightDiagnostic emitCheckError(mlir::Operation *op, Property kind,
                                        llvm::StringRef rowId);

} // namespace synpl

#endif // SYNPL_SUPPORT_PROPERTY_H
