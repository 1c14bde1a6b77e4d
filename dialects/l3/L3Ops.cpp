//===- L3Ops.cpp - The l3 dialect's operations -------------------------===//
//
// Custom syntax, accessors and the checks that need only the op itself. The
// checks that resolve references (rows L3.1-L3.3, the domain-dependent parts
// of L3.4 and recursion for L3.5) are in L3Verify.cpp.
//
//===----------------------------------------------------------------------===//
#include "L3Syntax.h"
#include "L3VerifyUtils.h"
#include "synpl/Dialect/L3/L3Ops.h"
#include "synpl/Support/Property.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace synpl;
using namespace synpl::l3;

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

/// An enum attribute written as its bare keyword (`weighted_sum`, `ge`,
/// `minimize`).
template <typename AttrT, typename EnumT>
static ParseResult
parseEnumKeyword(OpAsmParser &parser, AttrT &attr,
                 std::optional<EnumT> (*symbolize)(StringRef),
                 StringRef expected) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  std::optional<EnumT> value;
  if (succeeded(parser.parseOptionalKeyword(&keyword)))
    value = symbolize(keyword);
  if (!value)
    return parser.emitError(loc, "expected ") << expected;
  attr = AttrT::get(parser.getContext(), *value);
  return success();
}

static ParseResult parseCombinator(OpAsmParser &parser, CombinatorAttr &attr) {
  return parseEnumKeyword(parser, attr, symbolizeCombinator,
                          "a combinator: weighted_sum, sum, mean or max");
}
static void printCombinator(OpAsmPrinter &printer, Operation *,
                            CombinatorAttr attr) {
  printer << stringifyCombinator(attr.getValue());
}
static ParseResult parseCmpPredicate(OpAsmParser &parser,
                                     CmpPredicateAttr &attr) {
  return parseEnumKeyword(parser, attr, symbolizeCmpPredicate,
                          "a comparison: lt, le, gt, ge, eq or ne");
}
static void printCmpPredicate(OpAsmPrinter &printer, Operation *,
                              CmpPredicateAttr attr) {
  printer << stringifyCmpPredicate(attr.getValue());
}
static ParseResult parseGoalKind(OpAsmParser &parser, GoalKindAttr &attr) {
  return parseEnumKeyword(parser, attr, symbolizeGoalKind,
                          "minimize, maximize or pareto");
}
static void printGoalKind(OpAsmPrinter &printer, Operation *,
                          GoalKindAttr attr) {
  printer << stringifyGoalKind(attr.getValue());
}

/// A weight: `1.0`, `1.0e-04`, `0.5`.
static ParseResult parseReal(OpAsmParser &parser, FloatAttr &attr) {
  double value = 0;
  if (syntax::parseReal(parser, value))
    return failure();
  attr = parser.getBuilder().getF64FloatAttr(value);
  return success();
}
static void printReal(OpAsmPrinter &printer, Operation *, FloatAttr attr) {
  printer << syntax::formatReal(attr.getValueAsDouble());
}

/// A norm exponent: `1`, `2`, `0.5`.
static ParseResult parseExponent(OpAsmParser &parser, FloatAttr &attr) {
  return parseReal(parser, attr);
}
static void printExponent(OpAsmPrinter &printer, Operation *, FloatAttr attr) {
  printer << syntax::formatRealOrInteger(attr.getValueAsDouble());
}

/// The right-hand side of a constraint predicate: a constant or a reference.
static ParseResult parseConstraintRhs(OpAsmParser &parser, Attribute &rhs) {
  SymbolRefAttr ref;
  OptionalParseResult refResult = parser.parseOptionalAttribute(ref);
  if (refResult.has_value()) {
    if (failed(*refResult))
      return failure();
    rhs = ref;
    return success();
  }
  double value = 0;
  if (syntax::parseReal(parser, value))
    return failure();
  rhs = parser.getBuilder().getF64FloatAttr(value);
  return success();
}
static void printConstraintRhs(OpAsmPrinter &printer, Operation *,
                               Attribute rhs) {
  if (auto value = dyn_cast<FloatAttr>(rhs))
    printer << syntax::formatReal(value.getValueAsDouble());
  else
    printer.printAttribute(rhs);
}

/// Model constraints in the spec's syntax:
///   [depth(3), width(512), causal, autoregressive, equivariant(SO2),
///    param_budget(500K), latency_budget(5ms)]
/// An entry that is not a keyword is parsed as an attribute (generic form).
static ParseResult parseConstraints(OpAsmParser &parser, ArrayAttr &result) {
  MLIRContext *ctx = parser.getContext();
  SmallVector<Attribute> constraints;
  auto parseOne = [&]() -> ParseResult {
    SMLoc loc = parser.getCurrentLocation();
    StringRef keyword;
    if (failed(parser.parseOptionalKeyword(&keyword))) {
      Attribute attr;
      if (parser.parseAttribute(attr))
        return failure();
      constraints.push_back(attr);
      return success();
    }
    if (keyword == "causal") {
      constraints.push_back(CausalAttr::get(ctx));
      return success();
    }
    if (keyword == "autoregressive") {
      constraints.push_back(AutoregressiveAttr::get(ctx));
      return success();
    }
    if (keyword != "depth" && keyword != "width" && keyword != "equivariant" &&
        keyword != "param_budget" && keyword != "latency_budget")
      return parser.emitError(loc, "unknown model constraint '")
             << keyword
             << "'; expected depth(n), width(n), causal, autoregressive, "
                "equivariant(group), param_budget(n) or latency_budget(t)";
    if (parser.parseLParen())
      return failure();
    if (keyword == "depth" || keyword == "width") {
      int64_t value = 0;
      if (parser.parseInteger(value))
        return failure();
      constraints.push_back(keyword == "depth"
                                ? Attribute(DepthAttr::get(ctx, value))
                                : Attribute(WidthAttr::get(ctx, value)));
    } else if (keyword == "equivariant") {
      std::string group;
      if (parser.parseKeywordOrString(&group))
        return failure();
      constraints.push_back(EquivariantAttr::get(ctx, group));
    } else if (keyword == "param_budget") {
      uint64_t count = 0;
      if (syntax::parseCount(parser, count))
        return failure();
      constraints.push_back(ParamBudgetAttr::get(ctx, count));
    } else {
      double millis = 0;
      if (syntax::parseMillis(parser, millis))
        return failure();
      constraints.push_back(LatencyBudgetAttr::get(ctx, millis));
    }
    return parser.parseRParen();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseOne))
    return failure();
  result = ArrayAttr::get(ctx, constraints);
  return success();
}

static void printConstraints(OpAsmPrinter &printer, Operation *,
                             ArrayAttr constraints) {
  printer << '[';
  llvm::interleaveComma(constraints, printer, [&](Attribute attr) {
    llvm::TypeSwitch<Attribute>(attr)
        .Case([&](DepthAttr a) { printer << "depth(" << a.getValue() << ')'; })
        .Case([&](WidthAttr a) { printer << "width(" << a.getValue() << ')'; })
        .Case([&](CausalAttr) { printer << "causal"; })
        .Case([&](AutoregressiveAttr) { printer << "autoregressive"; })
        .Case([&](EquivariantAttr a) {
          printer << "equivariant(";
          printer.printKeywordOrString(a.getGroup());
          printer << ')';
        })
        .Case([&](ParamBudgetAttr a) {
          printer << "param_budget(";
          syntax::printCount(printer, a.getCount());
          printer << ')';
        })
        .Case([&](LatencyBudgetAttr a) {
          printer << "latency_budget(";
          syntax::printMillis(printer, a.getMillis());
          printer << ')';
        })
        .Default([&](Attribute a) { printer.printAttribute(a); });
  });
  printer << ']';
}

/// `out <domain>`, then `properties [...]` and optional `hints [...]`, each
/// on its own line.
static ParseResult parseModelProperties(OpAsmParser &parser, TypeAttr &out,
                                        ArrayAttr &constraints,
                                        ArrayAttr &hints) {
  Type outDomain;
  if (parser.parseKeyword("out") || parser.parseType(outDomain))
    return failure();
  out = TypeAttr::get(outDomain);
  if (parser.parseKeyword("properties") ||
      parseConstraints(parser, constraints))
    return failure();
  if (succeeded(parser.parseOptionalKeyword("hints")))
    return parser.parseAttribute(hints);
  return success();
}

static void printModelProperties(OpAsmPrinter &printer, Operation *,
                                 TypeAttr out, ArrayAttr constraints,
                                 ArrayAttr hints) {
  printer << "out ";
  printer.printType(out.getValue());
  printer.increaseIndent();
  printer.printNewline();
  printer << "properties ";
  printConstraints(printer, nullptr, constraints);
  if (hints) {
    printer.printNewline();
    printer << "hints ";
    printer.printAttribute(hints);
  }
  printer.decreaseIndent();
}

/// `@objective` for minimize/maximize, `[@a, @b]` for pareto.
static ParseResult parseGoalTargets(OpAsmParser &parser, GoalKindAttr,
                                    ArrayAttr &targets) {
  SmallVector<Attribute> refs;
  auto parseRef = [&]() -> ParseResult {
    SymbolRefAttr ref;
    if (parser.parseAttribute(ref))
      return failure();
    refs.push_back(ref);
    return success();
  };
  if (succeeded(parser.parseOptionalLSquare())) {
    if (failed(parser.parseOptionalRSquare())) {
      if (parser.parseCommaSeparatedList(parseRef) || parser.parseRSquare())
        return failure();
    }
  } else if (parseRef()) {
    return failure();
  }
  targets = parser.getBuilder().getArrayAttr(refs);
  return success();
}

static void printGoalTargets(OpAsmPrinter &printer, Operation *,
                             GoalKindAttr kind, ArrayAttr targets) {
  if (kind.getValue() != GoalKind::Pareto && targets.size() == 1) {
    printer.printAttribute(targets[0]);
    return;
  }
  printer << '[';
  llvm::interleaveComma(targets, printer,
                        [&](Attribute a) { printer.printAttribute(a); });
  printer << ']';
}

//===----------------------------------------------------------------------===//
// Checks shared by several ops
//===----------------------------------------------------------------------===//

DomainCheck synpl::l3::checkDomain(Type domain) {
  auto notFinite = [](std::string why) {
    return DomainCheck{DomainCheck::NotFinite, std::move(why)};
  };
  auto malformed = [](std::string why) {
    return DomainCheck{DomainCheck::Malformed, std::move(why)};
  };
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto tensor = dyn_cast<RankedTensorType>(domain)) {
    if (!isa<IntegerType, IndexType, FloatType>(tensor.getElementType())) {
      os << "tensor element type " << tensor.getElementType()
         << " is not a numeric dtype";
      return malformed(text);
    }
    for (auto [i, dim] : llvm::enumerate(tensor.getShape())) {
      if (ShapedType::isDynamic(dim)) {
        os << domain << " has a dynamic dimension (#" << i
           << "); every dimension must be a constant";
        return notFinite(text);
      }
      if (dim <= 0) {
        os << domain << " has a dimension of size " << dim << " (#" << i
           << "); sizes must be positive";
        return notFinite(text);
      }
    }
    return {};
  }
  if (isa<UnrankedTensorType>(domain)) {
    os << domain << " has no fixed shape; write tensor<d0x...xdtype>";
    return notFinite(text);
  }
  if (auto dist = dyn_cast<DistType>(domain)) {
    if (dist.getNumClasses() <= 0) {
      os << domain << " is over " << dist.getNumClasses()
         << " classes; the class count must be positive";
      return notFinite(text);
    }
    return {};
  }
  if (isa<ScalarType>(domain))
    return {};
  if (auto seq = dyn_cast<SequenceType>(domain)) {
    if (!seq.isBounded()) {
      os << domain << " is unbounded; give it a max_len";
      return notFinite(text);
    }
    if (seq.getMaxLen() <= 0) {
      os << domain << " has max_len " << seq.getMaxLen()
         << "; it must be positive";
      return notFinite(text);
    }
    return checkDomain(seq.getElementDomain());
  }
  if (auto table = dyn_cast<TableType>(domain)) {
    for (Type column : table.getColumnDomains()) {
      DomainCheck inner = checkDomain(column);
      if (inner.kind != DomainCheck::Ok)
        return inner;
    }
    return {};
  }
  os << domain << " is not an L3 domain";
  return malformed(text);
}

LogicalResult synpl::l3::verifyDomain(Operation *op, Type domain,
                                      StringRef what) {
  DomainCheck check = checkDomain(domain);
  switch (check.kind) {
  case DomainCheck::Ok:
    return success();
  case DomainCheck::NotFinite:
    return emitCheckError(op, Property::Resource, "L3.5")
           << what << " domain is not finite: " << check.reason;
  case DomainCheck::Malformed:
    return op->emitOpError() << what << " domain is malformed: "
                             << check.reason;
  }
  return failure();
}

/// Hints are kept for their target layer; L3 checks only that the target is
/// a layer below it.
static LogicalResult verifyHints(Operation *op,
                                 std::optional<ArrayAttr> hints) {
  if (!hints)
    return success();
  for (Attribute attr : *hints) {
    auto hint = cast<HintAttr>(attr);
    if (!hint.targetsLowerLayer())
      return emitCheckError(op, Property::Safety, "L3.1")
             << "escape hatch " << hint << " targets layer '"
             << hint.getLayer()
             << "'; an L3 hint must target a lower layer (l2, l1 or l0)";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// DataOp / FieldOp
//===----------------------------------------------------------------------===//

FieldOp DataOp::lookupField(StringRef name) {
  if (getBody().empty())
    return {};
  return dyn_cast_or_null<FieldOp>(mlir::SymbolTable::lookupSymbolIn(
      *this, StringAttr::get(getContext(), name)));
}

LogicalResult DataOp::verifyRegions() {
  if (failed(verifyHints(*this, getHints())))
    return failure();
  for (Operation &op : getBody().front())
    if (!isa<FieldOp>(op))
      return op.emitOpError("is not allowed in l3.data; a data declaration "
                            "holds only l3.field ops");
  return success();
}

LogicalResult FieldOp::verify() {
  return verifyDomain(*this, getDomain(),
                      ("field @" + getSymName()).str());
}

//===----------------------------------------------------------------------===//
// ModelOp
//===----------------------------------------------------------------------===//

template <typename AttrT>
static AttrT findConstraint(ArrayAttr constraints) {
  for (Attribute attr : constraints)
    if (auto c = dyn_cast<AttrT>(attr))
      return c;
  return {};
}

std::optional<int64_t> ModelOp::getDepthLimit() {
  if (auto c = findConstraint<DepthAttr>(getConstraints()))
    return c.getValue();
  return std::nullopt;
}

std::optional<int64_t> ModelOp::getWidthLimit() {
  if (auto c = findConstraint<WidthAttr>(getConstraints()))
    return c.getValue();
  return std::nullopt;
}

std::optional<uint64_t> ModelOp::getParamBudget() {
  if (auto c = findConstraint<ParamBudgetAttr>(getConstraints()))
    return c.getCount();
  return std::nullopt;
}

std::optional<double> ModelOp::getLatencyBudgetMs() {
  if (auto c = findConstraint<LatencyBudgetAttr>(getConstraints()))
    return c.getMillis();
  return std::nullopt;
}

bool ModelOp::isCausal() {
  return static_cast<bool>(findConstraint<CausalAttr>(getConstraints()));
}

bool ModelOp::isAutoregressive() {
  return static_cast<bool>(
      findConstraint<AutoregressiveAttr>(getConstraints()));
}

std::optional<StringRef> ModelOp::getEquivariantGroup() {
  if (auto c = findConstraint<EquivariantAttr>(getConstraints()))
    return c.getGroup();
  return std::nullopt;
}

FieldOp ModelOp::resolveInField(SymbolTableCollection &symbols) {
  if (!getInRefAttr())
    return {};
  return dyn_cast_or_null<FieldOp>(
      symbols.lookupNearestSymbolFrom(*this, getInRefAttr()));
}

Type ModelOp::resolveInDomain(SymbolTableCollection &symbols) {
  if (TypeAttr declared = getInDomainAttr())
    return declared.getValue();
  if (FieldOp field = resolveInField(symbols))
    if (TypeAttr domain = field.getDomainAttr())
      return domain.getValue();
  return {};
}

static StringRef constraintName(Attribute attr) {
  return llvm::TypeSwitch<Attribute, StringRef>(attr)
      .Case([](DepthAttr) { return "depth"; })
      .Case([](WidthAttr) { return "width"; })
      .Case([](CausalAttr) { return "causal"; })
      .Case([](AutoregressiveAttr) { return "autoregressive"; })
      .Case([](EquivariantAttr) { return "equivariant"; })
      .Case([](ParamBudgetAttr) { return "param_budget"; })
      .Case([](LatencyBudgetAttr) { return "latency_budget"; })
      .Default([](Attribute) { return StringRef(); });
}

LogicalResult ModelOp::verify() {
  // Well-formedness: every entry is a model constraint.
  for (Attribute attr : getConstraints())
    if (constraintName(attr).empty())
      return emitOpError("properties entry ")
             << attr << " is not a model constraint";

  // L3.4: each constraint once, with a satisfiable value.
  llvm::StringMap<Attribute> seen;
  for (Attribute attr : getConstraints()) {
    StringRef name = constraintName(attr);
    auto [it, inserted] = seen.try_emplace(name, attr);
    if (!inserted) {
      if (it->second == attr)
        return emitCheckError(*this, Property::Consistency, "L3.4")
               << "constraint '" << name << "' is given twice";
      return emitCheckError(*this, Property::Consistency, "L3.4")
             << "conflicting constraints " << it->second << " and " << attr;
    }
  }
  if (auto depth = getDepthLimit(); depth && *depth <= 0)
    return emitCheckError(*this, Property::Consistency, "L3.4")
           << "depth(" << *depth
           << ") admits no model; depth must be positive";
  if (auto width = getWidthLimit(); width && *width <= 0)
    return emitCheckError(*this, Property::Consistency, "L3.4")
           << "width(" << *width
           << ") admits no model; width must be positive";
  if (auto budget = getParamBudget(); budget && *budget == 0)
    return emitCheckError(*this, Property::Consistency, "L3.4")
           << "param_budget(0) admits no model; the budget must be positive";
  if (auto latency = getLatencyBudgetMs();
      latency && !(*latency > 0 && std::isfinite(*latency)))
    return emitCheckError(*this, Property::Consistency, "L3.4")
           << "latency_budget(" << syntax::formatRealOrInteger(*latency)
           << "ms) admits no model; the budget must be positive and finite";
  if (auto group = getEquivariantGroup(); group && group->empty())
    return emitCheckError(*this, Property::Consistency, "L3.4")
           << "equivariant() names no symmetry group";

  // L3.5: the domains are finite.
  if (failed(verifyDomain(*this, getOutDomain(), "out")))
    return failure();
  if (std::optional<Type> in = getInDomain())
    if (failed(verifyDomain(*this, *in, "in")))
      return failure();

  return verifyHints(*this, getHints());
}

//===----------------------------------------------------------------------===//
// LossOp and its terms
//===----------------------------------------------------------------------===//

SmallVector<LossTermOpInterface> LossOp::getTerms() {
  SmallVector<LossTermOpInterface> terms;
  if (getBody().empty())
    return terms;
  for (Operation &op : getBody().front())
    if (auto term = dyn_cast<LossTermOpInterface>(op))
      terms.push_back(term);
  return terms;
}

LogicalResult LossOp::verifyRegions() {
  if (failed(verifyHints(*this, getHints())))
    return failure();
  Block &body = getBody().front();
  for (Operation &op : body)
    if (!isa<LossTermOpInterface>(op))
      return op.emitOpError("is not a loss term; an l3.loss holds only "
                            "divergence, norm, constraint, reconstruction, "
                            "contrastive and custom terms");
  if (body.empty())
    return emitOpError("has no terms");

  // L3.4: `sum` and `mean` ignore weights, so a weight other than 1.0
  // contradicts the combinator.
  Combinator combine = getCombine();
  if (combine == Combinator::Sum || combine == Combinator::Mean) {
    for (LossTermOpInterface term : getTerms()) {
      if (term.getWeightValue() != 1.0)
        return emitCheckError(term, Property::Consistency, "L3.4")
               << "term @" << term.getTermName() << " has weight "
               << syntax::formatReal(term.getWeightValue())
               << ", but combine " << stringifyCombinator(combine)
               << " ignores weights; use weighted_sum or weight 1.0";
    }
  }
  return success();
}

/// L3.5: a weight is a finite number.
static LogicalResult verifyWeight(LossTermOpInterface term) {
  double weight = term.getWeightValue();
  if (!std::isfinite(weight))
    return emitCheckError(term, Property::Resource, "L3.5")
           << "term @" << term.getTermName() << " has a non-finite weight";
  return success();
}

LogicalResult DivergenceOp::verify() { return verifyWeight(*this); }
LogicalResult ReconstructionOp::verify() { return verifyWeight(*this); }
LogicalResult ContrastiveOp::verify() { return verifyWeight(*this); }

LogicalResult NormOp::verify() {
  double p = getP().convertToDouble();
  if (!(p > 0) || std::isnan(p))
    return emitOpError("exponent p must be positive, got ")
           << syntax::formatRealOrInteger(p);
  return verifyWeight(*this);
}

LogicalResult ConstraintOp::verify() {
  if (auto bound = dyn_cast<FloatAttr>(getRhs());
      bound && !std::isfinite(bound.getValueAsDouble()))
    return emitCheckError(*this, Property::Resource, "L3.5")
           << "constraint @" << getSymName() << " compares against a "
           << "non-finite bound";
  return verifyWeight(*this);
}

LogicalResult CustomOp::verify() {
  if (getFn().empty())
    return emitOpError("names no function");
  if (getReads().empty())
    return emitOpError("reads nothing; a custom term must read at least one "
                       "value");
  return verifyWeight(*this);
}

// The read lists skip missing or mistyped attributes: other ops' verifiers
// call them on terms of losses that may not have been verified yet.
static SmallVector<SymbolRefAttr> nonNullRefs(ArrayRef<Attribute> attrs) {
  SmallVector<SymbolRefAttr> refs;
  for (Attribute attr : attrs)
    if (auto ref = dyn_cast_or_null<SymbolRefAttr>(attr))
      refs.push_back(ref);
  return refs;
}

SmallVector<SymbolRefAttr> DivergenceOp::getReadRefs() {
  return nonNullRefs({getPredictedAttr(), getTargetAttr()});
}
SmallVector<SymbolRefAttr> NormOp::getReadRefs() {
  return nonNullRefs({getTargetAttr()});
}
SmallVector<SymbolRefAttr> ConstraintOp::getReadRefs() {
  return nonNullRefs({getLhsAttr(), getRhsAttr()});
}
SmallVector<SymbolRefAttr> ReconstructionOp::getReadRefs() {
  return nonNullRefs({getInputAttr(), getDecodedAttr()});
}
SmallVector<SymbolRefAttr> ContrastiveOp::getReadRefs() {
  return nonNullRefs({getAnchorAttr(), getPositiveAttr(), getNegativeAttr()});
}
SmallVector<SymbolRefAttr> CustomOp::getReadRefs() {
  ArrayAttr reads = getReadsAttr();
  return reads ? nonNullRefs(reads.getValue()) : SmallVector<SymbolRefAttr>();
}

//===----------------------------------------------------------------------===//
// GoalOp
//===----------------------------------------------------------------------===//

LogicalResult GoalOp::verify() {
  GoalKind kind = getKind();
  ArrayAttr targets = getTargets();
  if (kind != GoalKind::Pareto && targets.size() != 1)
    return emitOpError() << stringifyGoalKind(kind)
                         << " takes exactly one target, got "
                         << targets.size();
  if (kind == GoalKind::Pareto) {
    // L3.4: a Pareto front needs at least two distinct objectives.
    if (targets.size() < 2)
      return emitCheckError(*this, Property::Consistency, "L3.4")
             << "pareto over " << targets.size()
             << " objective(s) is not a trade-off; use minimize or maximize";
    llvm::SmallDenseSet<Attribute> seen;
    for (Attribute target : targets)
      if (!seen.insert(target).second)
        return emitCheckError(*this, Property::Consistency, "L3.4")
               << "pareto lists " << target << " twice";
  }
  // L3.4: one goal per module.
  if (auto module = (*this)->getParentOfType<ModuleOp>()) {
    for (auto other : module.getOps<GoalOp>()) {
      if (other == *this)
        break;
      InFlightDiagnostic diag =
          emitCheckError(*this, Property::Consistency, "L3.4")
          << "a spec has one goal; this is a second one";
      diag.attachNote(other.getLoc()) << "the first goal is here";
      return diag;
    }
  }
  return success();
}

#define GET_OP_CLASSES
#include "synpl/Dialect/L3/L3Ops.cpp.inc"
#include "synpl/Dialect/L3/L3Enums.cpp.inc"
#include "synpl/Dialect/L3/L3Interfaces.cpp.inc"
