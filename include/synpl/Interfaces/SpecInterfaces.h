//===- SpecInterfaces.h - What a lower layer reads of a spec -----*- C++ -*-===//
//
// Interfaces a lower dialect uses to check itself against the spec it refines
// (SpecInterfaces.td), and exampleShape(), the tensor view of one example of a
// domain.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_INTERFACES_SPECINTERFACES_H
#define SYNPL_INTERFACES_SPECINTERFACES_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace synpl {

/// The tensor view of one example of a domain.
struct ExampleShape {
  llvm::SmallVector<int64_t> shape;
  mlir::Type elementType;
};

} // namespace synpl

#include "synpl/Interfaces/SpecAttrInterfaces.h.inc"
#include "synpl/Interfaces/SpecOpInterfaces.h.inc"
#include "synpl/Interfaces/SpecTypeInterfaces.h.inc"

namespace synpl {

/// One example of `domain` as a tensor: builtin ranked tensors as they are,
/// domains implementing ExampleDomainTypeInterface by their own rule; none
/// for a domain without a fixed tensor view.
std::optional<ExampleShape> exampleShape(mlir::Type domain);

} // namespace synpl

#endif // SYNPL_INTERFACES_SPECINTERFACES_H
