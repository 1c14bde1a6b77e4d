//===- L3Types.cpp - l3 domain types, attributes and their syntax ---------===//
#include "L3Syntax.h"
#include "synpl/Dialect/L3/L3Ops.h"
#include "synpl/Support/Units.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace synpl;
using namespace synpl::l3;

//===----------------------------------------------------------------------===//
// Literals
//===----------------------------------------------------------------------===//

/// Makes printf output lex as an MLIR float literal: a '.' before any
/// exponent (1e-05 -> 1.0e-05, 10 -> 10.0).
static std::string withPoint(std::string text) {
  size_t exp = text.find_first_of("eE");
  std::string mantissa = text.substr(0, exp);
  if (mantissa.find('.') == std::string::npos)
    mantissa += ".0";
  return exp == std::string::npos ? mantissa : mantissa + text.substr(exp);
}

std::string syntax::formatReal(double value) {
  if (std::isnan(value))
    return "0x7FF8000000000000";
  if (std::isinf(value))
    return value > 0 ? "0x7FF0000000000000" : "0xFFF0000000000000";
  // The shortest text that reads back exactly, in scientific or fixed
  // notation, whichever is shorter (fixed on a tie).
  char buf[400];
  std::string scientific;
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value) {
      scientific = withPoint(buf);
      break;
    }
  }
  if (std::fabs(value) < 1e16) {
    for (int digits = 0; digits <= 20; ++digits) {
      std::snprintf(buf, sizeof(buf), "%.*f", digits, value);
      if (std::strtod(buf, nullptr) == value) {
        std::string fixed = withPoint(buf);
        if (scientific.empty() || fixed.size() <= scientific.size())
          return fixed;
        break;
      }
    }
  }
  return scientific;
}

std::string syntax::formatRealOrInteger(double value) {
  if (std::isfinite(value) && value == std::trunc(value) &&
      std::fabs(value) < 1e15)
    return std::to_string(static_cast<int64_t>(value));
  return formatReal(value);
}

ParseResult syntax::parseCount(AsmParser &parser, uint64_t &count) {
  SMLoc loc = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalMinus()))
    return parser.emitError(loc, "expected a non-negative count");
  std::string text;
  uint64_t integer = 0;
  OptionalParseResult intResult = parser.parseOptionalInteger(integer);
  if (intResult.has_value()) {
    if (failed(*intResult))
      return failure();
    text = std::to_string(integer);
  } else {
    double real = 0;
    if (parser.parseFloat(real))
      return failure();
    if (!(real >= 0))
      return parser.emitError(loc, "expected a non-negative count");
    text = formatReal(real);
  }
  StringRef suffix;
  if (succeeded(parser.parseOptionalKeyword(&suffix, {"K", "M", "G"})))
    text += suffix.str();
  std::optional<uint64_t> parsed = synpl::parseCount(text);
  if (!parsed)
    return parser.emitError(loc, "'")
           << text << "' is not an exact count (an integer, or a decimal with "
           << "a K/M/G suffix that scales it to an integer)";
  count = *parsed;
  return success();
}

void syntax::printCount(AsmPrinter &printer, uint64_t count) {
  static constexpr std::pair<uint64_t, char> suffixes[] = {
      {1000000000ull, 'G'}, {1000000ull, 'M'}, {1000ull, 'K'}};
  for (auto [scale, suffix] : suffixes) {
    if (count != 0 && count % scale == 0) {
      printer.getStream() << count / scale << suffix;
      return;
    }
  }
  printer.getStream() << count;
}

ParseResult syntax::parseReal(AsmParser &parser, double &value) {
  bool negative = succeeded(parser.parseOptionalMinus());
  uint64_t integer = 0;
  OptionalParseResult intResult = parser.parseOptionalInteger(integer);
  if (intResult.has_value()) {
    if (failed(*intResult))
      return failure();
    value = static_cast<double>(integer);
  } else if (parser.parseFloat(value)) {
    return failure();
  }
  if (negative)
    value = -value;
  return success();
}

ParseResult syntax::parseMillis(AsmParser &parser, double &millis) {
  double value = 0;
  if (parseReal(parser, value))
    return failure();
  SMLoc unitLoc = parser.getCurrentLocation();
  StringRef unit;
  if (failed(parser.parseOptionalKeyword(&unit)))
    return parser.emitError(unitLoc, "expected a time unit (ms, us or s)");
  std::optional<double> scale = llvm::StringSwitch<std::optional<double>>(unit)
                                    .Case("ms", 1.0)
                                    .Case("us", 1e-3)
                                    .Case("s", 1e3)
                                    .Default(std::nullopt);
  if (!scale)
    return parser.emitError(unitLoc, "expected a time unit (ms, us or s), got '")
           << unit << "'";
  millis = value * *scale;
  return success();
}

void syntax::printMillis(AsmPrinter &printer, double millis) {
  printer.getStream() << formatRealOrInteger(millis) << "ms";
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

LogicalResult
ScalarType::verify(function_ref<InFlightDiagnostic()> emitError, Type dtype) {
  if (!isa<IntegerType, IndexType, FloatType>(dtype))
    return emitError() << "scalar dtype must be an integer, index or float "
                          "type, got "
                       << dtype;
  return success();
}

Type SequenceType::parse(AsmParser &parser) {
  Type element;
  int64_t maxLen = ShapedType::kDynamic;
  if (parser.parseLess() || parser.parseType(element) || parser.parseComma())
    return {};
  if (failed(parser.parseOptionalQuestion())) {
    if (parser.parseInteger(maxLen))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return SequenceType::get(parser.getContext(), element, maxLen);
}

void SequenceType::print(AsmPrinter &printer) const {
  printer << '<' << getElementDomain() << ", ";
  if (isBounded())
    printer << getMaxLen();
  else
    printer << '?';
  printer << '>';
}

Type TableType::parse(AsmParser &parser) {
  SmallVector<StringAttr> names;
  SmallVector<Type> domains;
  auto parseColumn = [&]() -> ParseResult {
    std::string name;
    Type domain;
    if (parser.parseKeywordOrString(&name) || parser.parseColon() ||
        parser.parseType(domain))
      return failure();
    names.push_back(StringAttr::get(parser.getContext(), name));
    domains.push_back(domain);
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::LessGreater,
                                     parseColumn))
    return {};
  return parser.getChecked<TableType>(parser.getContext(), names, domains);
}

void TableType::print(AsmPrinter &printer) const {
  printer << '<';
  for (auto [i, name, domain] :
       llvm::enumerate(getColumnNames(), getColumnDomains())) {
    if (i)
      printer << ", ";
    printer.printKeywordOrString(name.getValue());
    printer << ": " << domain;
  }
  printer << '>';
}

LogicalResult TableType::verify(function_ref<InFlightDiagnostic()> emitError,
                                ArrayRef<StringAttr> names,
                                ArrayRef<Type> domains) {
  if (names.size() != domains.size())
    return emitError() << "table has " << names.size() << " column names but "
                       << domains.size() << " column domains";
  if (names.empty())
    return emitError() << "table must have at least one column";
  llvm::SmallDenseSet<StringAttr> seen;
  for (StringAttr name : names)
    if (!seen.insert(name).second)
      return emitError() << "table column '" << name.getValue()
                         << "' is declared twice";
  return success();
}

Type TableType::getColumnDomain(StringRef name) const {
  for (auto [column, domain] : llvm::zip(getColumnNames(), getColumnDomains()))
    if (column.getValue() == name)
      return domain;
  return {};
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

Attribute EquivariantAttr::parse(AsmParser &parser, Type) {
  std::string group;
  if (parser.parseLess() || parser.parseKeywordOrString(&group) ||
      parser.parseGreater())
    return {};
  return EquivariantAttr::get(parser.getContext(), group);
}

void EquivariantAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printer.printKeywordOrString(getGroup());
  printer << '>';
}

Attribute ParamBudgetAttr::parse(AsmParser &parser, Type) {
  uint64_t count = 0;
  if (parser.parseLess() || syntax::parseCount(parser, count) ||
      parser.parseGreater())
    return {};
  return ParamBudgetAttr::get(parser.getContext(), count);
}

void ParamBudgetAttr::print(AsmPrinter &printer) const {
  printer << '<';
  syntax::printCount(printer, getCount());
  printer << '>';
}

Attribute LatencyBudgetAttr::parse(AsmParser &parser, Type) {
  double millis = 0;
  if (parser.parseLess() || syntax::parseMillis(parser, millis) ||
      parser.parseGreater())
    return {};
  return LatencyBudgetAttr::get(parser.getContext(), millis);
}

void LatencyBudgetAttr::print(AsmPrinter &printer) const {
  printer << '<';
  syntax::printMillis(printer, getMillis());
  printer << '>';
}

// #l3.hint<l2::backward, "evolution(pop: 50)">
Attribute HintAttr::parse(AsmParser &parser, Type) {
  StringRef layer, directive;
  std::string args;
  if (parser.parseLess() || parser.parseKeyword(&layer) ||
      parser.parseColon() || parser.parseColon() ||
      parser.parseKeyword(&directive))
    return {};
  if (succeeded(parser.parseOptionalComma()) && parser.parseString(&args))
    return {};
  if (parser.parseGreater())
    return {};
  return HintAttr::get(parser.getContext(), layer, directive, args);
}

void HintAttr::print(AsmPrinter &printer) const {
  printer << '<' << getLayer() << "::" << getDirective();
  if (!getArgs().empty()) {
    printer << ", ";
    printer.printString(getArgs());
  }
  printer << '>';
}

bool HintAttr::targetsLowerLayer() const {
  StringRef layer = getLayer();
  return layer == "l2" || layer == "l1" || layer == "l0";
}

std::string HintAttr::spelled() const {
  std::string s = ("#[" + getLayer() + "::" + getDirective()).str();
  if (!getArgs().empty())
    s += ("(" + getArgs() + ")").str();
  return s + "]";
}

#define GET_ATTRDEF_CLASSES
#include "synpl/Dialect/L3/L3Attrs.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "synpl/Dialect/L3/L3Types.cpp.inc"

void L3Dialect::registerTypesAndAttributes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "synpl/Dialect/L3/L3Types.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "synpl/Dialect/L3/L3Attrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// ExampleDomainTypeInterface: one example of a domain as a tensor
//===----------------------------------------------------------------------===//

FailureOr<ExampleShape> ScalarType::getExampleShape() const {
  return ExampleShape{{}, getDtype()};
}

FailureOr<ExampleShape> SequenceType::getExampleShape() const {
  std::optional<ExampleShape> inner = exampleShape(getElementDomain());
  if (!inner)
    return failure();
  inner->shape.insert(inner->shape.begin(), getMaxLen());
  return *inner;
}

FailureOr<ExampleShape> DistType::getExampleShape() const {
  return ExampleShape{{getNumClasses()}, Float32Type::get(getContext())};
}

bool DistType::isDistribution() const { return true; }
