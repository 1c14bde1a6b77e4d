//===- L3Syntax.h - Shared pieces of the l3 custom syntax ---*- C++ -*-===//
//
// Parsers and printers for the literals the spec writes with units or
// suffixes (`500K`, `5ms`), and for reals printed in their shortest form
// (`1.0e-04`, not `1.000000e-04`). Internal to the l3 dialect.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_DIALECT_L3_SYNTAX_H
#define SYNPL_DIALECT_L3_SYNTAX_H

#include "mlir/IR/OpImplementation.h"
#include <cstdint>
#include <string>

namespace synpl::l3::syntax {

/// A real written as an integer or a float literal: `1`, `0.5`, `1.0e-04`.
mlir::ParseResult parseReal(mlir::AsmParser &parser, double &value);

/// A count with an optional K/M/G suffix: `500K`, `1.5M`, `784`.
mlir::ParseResult parseCount(mlir::AsmParser &parser, uint64_t &count);
/// Prints the count with the largest exact suffix (`500K`, `784`).
void printCount(mlir::AsmPrinter &printer, uint64_t count);

/// A duration `5ms`, `250us`, `1s`, `1.5ms`, returned in milliseconds.
mlir::ParseResult parseMillis(mlir::AsmParser &parser, double &millis);
void printMillis(mlir::AsmPrinter &printer, double millis);

/// The shortest decimal text that reads back as `value` and lexes as an MLIR
/// float literal (`1.0`, `1.0e-04`, `0.25`).
std::string formatReal(double value);
/// Same, but integral values print as integers (`p = 1`).
std::string formatRealOrInteger(double value);

} // namespace synpl::l3::syntax

#endif // SYNPL_DIALECT_L3_SYNTAX_H
