//===- Property.cpp - Property-tagged verifier diagnostics ----------------===//
#include "synpl/Support/Property.h"

using namespace mlir;

llvm::StringRef synpl::propertyTag(Property kind) {
  switch (kind) {
  case Property::Safety:
    return "safety";
  case Property::Consistency:
    return "consistency";
  case Property::Liveness:
    return "liveness";
  case Property::Resource:
    return "resource";
  }
  llvm_unreachable("unknown property kind");
}

InFlightDiagnostic synpl::emitCheckError(Location loc, Property kind,
                                         llvm::StringRef rowId) {
  return mlir::emitError(loc) << "[" << propertyTag(kind) << "] " << rowId
                              << ": ";
}

InFlightDiagnostic synpl::emitCheckError(Operation *op, Property kind,
                                         llvm::StringRef rowId) {
  return op->emitError() << "[" << propertyTag(kind) << "] " << rowId
                           << ": ";
}
