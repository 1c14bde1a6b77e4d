//===- L3VerifyUtils.h - Checks shared by the l3 verifiers --*- C++ -*-===//
#ifndef SYNPL_DIALECT_L3_VERIFYUTILS_H
#define SYNPL_DIALECT_L3_VERIFYUTILS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Types.h"
#include <string>

namespace synpl::l3 {

/// Whether a domain is finite and concrete (L3.5) and well-formed.
struct DomainCheck {
  enum Kind { Ok, NotFinite, Malformed } kind = Ok;
  std::string reason;
};
DomainCheck checkDomain(mlir::Type domain);

/// Reports a non-finite domain as L3.5 (and a malformed one as a plain
/// error) at `op`; `what` names the domain's role ("out", "field @images").
mlir::LogicalResult verifyDomain(mlir::Operation *op, mlir::Type domain,
                                 llvm::StringRef what);

} // namespace synpl::l3

#endif // SYNPL_DIALECT_L3_VERIFYUTILS_H
