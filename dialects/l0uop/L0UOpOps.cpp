//===- L0UOpOps.cpp - The l0uop dialect's operations and verifiers -----------===//
//
// Types, custom syntax and the per-op checks of the l0uop dialect's UOps.
// Every type or structure error of a UOp or a kernel body is row L0.1
// (kernel correctness); the kernel op and the checks of its body are
// L0UOpKernel.cpp's, the plan-wide rows L0.2-L0.6 L0UOpPlan.cpp's.
//
//===----------------------------------------------------------------------===//
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "L0UOpVerify.h"
#include "synpl/Support/Property.h"
#include "synpl/Support/Units.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l0uop;

namespace {
/// How a UOp's operand and result types follow from its short type.
enum class UOpSig { Same, Compare, Select, Load, Store, Vectorize };
/// Which element types a UOp computes on.
enum class Domain { Any, Numeric, Float, Int };
} // namespace


//===----------------------------------------------------------------------===//
// Value types
//===----------------------------------------------------------------------===//

/// Scalars and vectors UOps compute on: integers, floats, index.
static bool isScalar(Type t) { return t.isIntOrIndexOrFloat(); }
static bool isValueType(Type t) {
  if (auto v = llvm::dyn_cast<VectorType>(t))
    return isScalar(v.getElementType()) && !v.isScalable();
  return isScalar(t);
}
static Type elementOf(Type t) {
  if (auto v = llvm::dyn_cast<VectorType>(t))
    return v.getElementType();
  return t;
}
static bool inDomain(Type t, Domain d) {
  if (!isValueType(t))
    return false;
  Type e = elementOf(t);
  switch (d) {
  case Domain::Any:
  case Domain::Numeric:
    return true;
  case Domain::Float:
    return llvm::isa<FloatType>(e);
  case Domain::Int:
    return e.isIntOrIndex();
  }
  return false;
}
static StringRef domainName(Domain d) {
  switch (d) {
  case Domain::Any:
  case Domain::Numeric:
    return "an integer, float or index scalar or vector";
  case Domain::Float:
    return "a float scalar or vector";
  case Domain::Int:
    return "an integer or index scalar or vector";
  }
  return "";
}
/// i1 with the lane shape of t.
static Type boolLike(Type t) {
  Type i1 = IntegerType::get(t.getContext(), 1);
  if (auto v = llvm::dyn_cast<VectorType>(t))
    return VectorType::get(v.getShape(), i1);
  return i1;
}

//===----------------------------------------------------------------------===//
// Short type syntax shared by the UOps: `: T` or `: (T1, T2) -> R`
//===----------------------------------------------------------------------===//

/// The operand and result types a UOp with `n` operands has when its short
/// type is `t`; failure when `t` cannot be one.
static LogicalResult canonicalTypes(UOpSig sig, Type t, unsigned n,
                                    SmallVectorImpl<Type> &ops,
                                    SmallVectorImpl<Type> &res) {
  MLIRContext *ctx = t.getContext();
  ops.clear();
  res.clear();
  switch (sig) {
  case UOpSig::Same:
    ops.assign(n, t);
    res.push_back(t);
    return success();
  case UOpSig::Compare:
    ops.assign(n, t);
    res.push_back(boolLike(t));
    return success();
  case UOpSig::Select:
    for (unsigned i = 0; i < n; ++i)
      ops.push_back(i == 0 ? boolLike(t) : t);
    res.push_back(t);
    return success();
  case UOpSig::Load:
    ops.assign(n, PtrType::get(ctx, elementOf(t)));
    res.push_back(t);
    return success();
  case UOpSig::Store:
    for (unsigned i = 0; i < n; ++i)
      ops.push_back(i == 0 ? Type(PtrType::get(ctx, elementOf(t))) : t);
    return success();
  case UOpSig::Vectorize:
    if (!isScalar(t) || n == 0)
      return failure();
    ops.assign(n, t);
    res.push_back(VectorType::get({static_cast<int64_t>(n)}, t));
    return success();
  }
  return failure();
}

/// The short type an op prints with, or null.
static Type shortTypeOf(UOpSig sig, Operation *op) {
  switch (sig) {
  case UOpSig::Same:
  case UOpSig::Select:
  case UOpSig::Load:
    return op->getNumResults() ? op->getResult(0).getType() : Type();
  case UOpSig::Compare:
    return op->getNumOperands() ? op->getOperand(0).getType() : Type();
  case UOpSig::Store:
    return op->getNumOperands() > 1 ? op->getOperand(1).getType() : Type();
  case UOpSig::Vectorize:
    if (op->getNumResults())
      if (auto v = llvm::dyn_cast<VectorType>(op->getResult(0).getType()))
        return v.getElementType();
    return Type();
  }
  return Type();
}

static ParseResult parseTypeSpec(OpAsmParser &parser, UOpSig sig, unsigned n,
                                 SmallVectorImpl<Type> &ops,
                                 SmallVectorImpl<Type> &res) {
  SMLoc loc = parser.getCurrentLocation();
  Type t;
  if (parser.parseColonType(t))
    return failure();
  if (auto fn = llvm::dyn_cast<FunctionType>(t)) {
    if (fn.getNumInputs() != n)
      return parser.emitError(loc, "expected ")
             << n << " operand types, got " << fn.getNumInputs();
    ops.assign(fn.getInputs().begin(), fn.getInputs().end());
    res.assign(fn.getResults().begin(), fn.getResults().end());
    return success();
  }
  if (failed(canonicalTypes(sig, t, n, ops, res)))
    return parser.emitError(loc, "type ") << t << " cannot be this op's dtype";
  return success();
}

static void printTypeSpec(OpAsmPrinter &p, Operation *op, UOpSig sig) {
  p << " : ";
  Type t = shortTypeOf(sig, op);
  SmallVector<Type> ops, res;
  if (t && succeeded(canonicalTypes(sig, t, op->getNumOperands(), ops, res)) &&
      llvm::equal(ops, op->getOperandTypes()) &&
      llvm::equal(res, op->getResultTypes())) {
    p << t;
    return;
  }
  p << FunctionType::get(op->getContext(), op->getOperandTypes(),
                         op->getResultTypes());
}

static ParseResult parseSrcUOp(OpAsmParser &parser, OperationState &result,
                               UOpSig sig) {
  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  SmallVector<Type> ops, res;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseOperandList(operands) ||
      parser.parseOptionalAttrDict(result.attributes) ||
      parseTypeSpec(parser, sig, operands.size(), ops, res) ||
      parser.resolveOperands(operands, ops, loc, result.operands))
    return failure();
  result.addTypes(res);
  return success();
}

static void printSrcUOp(OpAsmPrinter &p, Operation *op, UOpSig sig) {
  p << ' ';
  p.printOperands(op->getOperands());
  p.printOptionalAttrDict(op->getAttrs());
  printTypeSpec(p, op, sig);
}

namespace {
struct IndexRange {
  int64_t lo, hi;
};
} // namespace
using RangeCache = llvm::DenseMap<Value, std::optional<IndexRange>>;
static std::optional<IndexRange> rangeOf(Value v, RangeCache &cache,
                                         unsigned depth = 0);
static std::optional<IndexRange> rangeOf(Value v) {
  RangeCache cache;
  return rangeOf(v, cache);
}

/// A vector LOAD/STORE moves `lanes` consecutive elements along the last
/// dimension from its INDEX: the last of them must still be inside.
static LogicalResult verifyLanesInBounds(Operation *op, Value ptr, Type v) {
  auto vec = llvm::dyn_cast<VectorType>(v);
  auto index = ptr.getDefiningOp<IndexOp>();
  if (!vec || !index || index.getIndices().empty())
    return success();
  auto buf = llvm::dyn_cast<BufType>(index.getBuffer().getType());
  if (!buf || buf.getRank() != static_cast<int64_t>(index.getIndices().size()))
    return success(); // the INDEX reports it
  unsigned last = buf.getRank() - 1;
  std::optional<IndexRange> r = rangeOf(index.getIndices()[last]);
  int64_t lanes = vec.getNumElements(), extent = buf.getShape()[last];
  if (r && r->hi + lanes > extent)
    return uopError(op) << "a " << lanes << "-lane '"
                        << op->getName().getStringRef()
                        << "' starting at index " << r->hi
                        << " of the last dimension of " << buf
                        << " runs past its extent " << extent;
  return success();
}

/// Row L0.1 for the `(op, dtype, src[], arg)` UOps: arity and types.
static LogicalResult verifySrcUOp(Operation *op, UOpSig sig, int arity,
                                  Domain domain) {
  StringRef name = op->getName().getStringRef();
  unsigned n = op->getNumOperands();
  if (arity >= 0 && n != static_cast<unsigned>(arity))
    return uopError(op) << "'" << name << "' takes " << arity
                        << (arity == 1 ? " operand" : " operands") << ", got "
                        << n;
  if (arity < 0 && n < 2)
    return uopError(op) << "'" << name << "' takes at least 2 operands, got "
                        << n;
  auto typeError = [&](unsigned i, Type want) {
    return uopError(op) << "operand #" << i << " of '" << name
                        << "' has type " << op->getOperand(i).getType()
                        << ", expected " << want;
  };

  switch (sig) {
  case UOpSig::Same: {
    Type t = op->getResult(0).getType();
    if (!inDomain(t, domain))
      return uopError(op) << "'" << name << "' computes on "
                          << domainName(domain) << ", not " << t;
    for (unsigned i = 0; i < n; ++i)
      if (op->getOperand(i).getType() != t)
        return typeError(i, t);
    return success();
  }
  case UOpSig::Compare: {
    Type t = op->getOperand(0).getType();
    if (!inDomain(t, domain))
      return uopError(op) << "'" << name << "' compares "
                          << domainName(domain) << ", not " << t;
    for (unsigned i = 1; i < n; ++i)
      if (op->getOperand(i).getType() != t)
        return typeError(i, t);
    if (op->getResult(0).getType() != boolLike(t))
      return uopError(op) << "'" << name << "' yields " << boolLike(t)
                          << ", not " << op->getResult(0).getType();
    return success();
  }
  case UOpSig::Select: {
    Type t = op->getResult(0).getType();
    if (!isValueType(t))
      return uopError(op) << "'" << name << "' selects "
                          << domainName(domain) << ", not " << t;
    if (op->getOperand(0).getType() != boolLike(t))
      return uopError(op) << "the condition of '" << name << "' has type "
                          << op->getOperand(0).getType() << ", expected "
                          << boolLike(t);
    for (unsigned i = 1; i < n; ++i)
      if (op->getOperand(i).getType() != t)
        return typeError(i, t);
    return success();
  }
  case UOpSig::Load:
  case UOpSig::Store: {
    auto ptr = llvm::dyn_cast<PtrType>(op->getOperand(0).getType());
    if (!ptr)
      return uopError(op) << "'" << name << "' needs a pointer from "
                          << "l0uop.index, got " << op->getOperand(0).getType();
    Type v = sig == UOpSig::Load ? op->getResult(0).getType()
                                 : op->getOperand(1).getType();
    auto vec = llvm::dyn_cast<VectorType>(v);
    bool ok = v == ptr.getElementType() ||
              (vec && vec.getRank() == 1 &&
               vec.getElementType() == ptr.getElementType());
    if (!ok)
      return uopError(op) << "'" << name << "' through " << ptr
                          << " moves " << ptr.getElementType()
                          << " or a 1-D vector of it, not " << v;
    return verifyLanesInBounds(op, op->getOperand(0), v);
  }
  case UOpSig::Vectorize: {
    Type t = op->getOperand(0).getType();
    if (!isScalar(t))
      return uopError(op) << "'" << name << "' packs scalars, not " << t;
    for (unsigned i = 1; i < n; ++i)
      if (op->getOperand(i).getType() != t)
        return typeError(i, t);
    Type want = VectorType::get({static_cast<int64_t>(n)}, t);
    if (op->getResult(0).getType() != want)
      return uopError(op) << "'" << name << "' of " << n << " " << t
                          << " yields " << want << ", not "
                          << op->getResult(0).getType();
    return success();
  }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Custom directive: byte sizes with the spec's units
//===----------------------------------------------------------------------===//

static ParseResult parseBytes(OpAsmParser &parser, IntegerAttr &attr) {
  SMLoc loc = parser.getCurrentLocation();
  uint64_t n;
  if (parser.parseInteger(n))
    return failure();
  std::string text = std::to_string(n);
  StringRef unit;
  if (succeeded(parser.parseOptionalKeyword(
          &unit, {"B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB"})))
    text += unit.str();
  std::optional<uint64_t> bytes = parseByteSize(text);
  if (!bytes || *bytes > static_cast<uint64_t>(INT64_MAX))
    return parser.emitError(loc, "byte size '") << text << "' is too large";
  attr = parser.getBuilder().getI64IntegerAttr(*bytes);
  return success();
}

static void printBytes(OpAsmPrinter &p, Operation *, IntegerAttr attr) {
  uint64_t n = attr.getValue().getZExtValue();
  static const std::pair<const char *, uint64_t> units[] = {
      {"TiB", 1ull << 40}, {"TB", 1000000000000ull}, {"GiB", 1ull << 30},
      {"GB", 1000000000ull}, {"MiB", 1ull << 20},   {"MB", 1000000ull},
      {"KiB", 1ull << 10}, {"KB", 1000ull}};
  // The largest unit that divides exactly reads best: 64MiB, 24GB.
  for (auto [name, scale] : units)
    if (n >= scale && n % scale == 0) {
      p << n / scale << name;
      return;
    }
  p << n;
}

#include "synpl/Dialect/L0UOp/L0UOpEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "synpl/Dialect/L0UOp/L0UOpAttrs.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "synpl/Dialect/L0UOp/L0UOpTypes.cpp.inc"
/// A collective's reduction, written in parentheses right after its kind:
/// `all_reduce(mean)`; absent for the kinds that combine nothing.
static ParseResult parseCollectiveReduce(OpAsmParser &parser, CollectiveReduceAttr &attr) {
  if (failed(parser.parseOptionalLParen()))
    return success();
  SMLoc at = parser.getCurrentLocation();
  StringRef word;
  if (parser.parseKeyword(&word))
    return failure();
  std::optional<CollectiveReduce> kind = symbolizeCollectiveReduce(word);
  if (!kind)
    return parser.emitError(at, "expected sum, mean, max or min, got '") << word << "'";
  attr = CollectiveReduceAttr::get(parser.getContext(), *kind);
  return parser.parseRParen();
}

static void printCollectiveReduce(OpAsmPrinter &p, Operation *, CollectiveReduceAttr attr) {
  if (attr)
    p << "(" << stringifyCollectiveReduce(attr.getValue()) << ")";
}

#define GET_OP_CLASSES
#include "synpl/Dialect/L0UOp/L0UOpOps.cpp.inc"

void L0UOpDialect::registerTypesAndAttributes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "synpl/Dialect/L0UOp/L0UOpTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "synpl/Dialect/L0UOp/L0UOpAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// BufType
//===----------------------------------------------------------------------===//

Type BufType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type element;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/true) ||
      parser.parseType(element) || parser.parseGreater())
    return Type();
  return getChecked([&] { return parser.emitError(loc); },
                    parser.getContext(), shape, element);
}

void BufType::print(AsmPrinter &p) const {
  p << "<";
  for (int64_t d : getShape())
    p << d << "x";
  p << getElementType() << ">";
}

LogicalResult BufType::verify(function_ref<InFlightDiagnostic()> emitError,
                              ArrayRef<int64_t> shape, Type elementType) {
  if (!elementType.isIntOrFloat())
    return emitError() << "buffer elements are integers or floats, not "
                       << elementType;
  for (int64_t d : shape)
    if (d <= 0)
      return emitError() << "buffer dimensions are positive, got " << d;
  return success();
}

uint64_t BufType::getNumElements() const {
  uint64_t n = 1;
  for (int64_t d : getShape())
    n = saturatingMul(n, static_cast<uint64_t>(d));
  return n;
}

uint64_t BufType::getElementBytes() const {
  return (getElementType().getIntOrFloatBitWidth() + 7) / 8;
}

uint64_t BufType::getSizeInBytes() const {
  return saturatingMul(getNumElements(), getElementBytes());
}

std::optional<int64_t> synpl::l0uop::integerConstant(Value v) {
  if (auto c = v.getDefiningOp<ConstOp>())
    if (auto i = llvm::dyn_cast<IntegerAttr>(c.getValue()))
      return i.getValue().getSExtValue();
  return std::nullopt;
}

bool synpl::l0uop::dividesByNonZeroConstant(Operation *op) {
  if (!isa<DivOp, ModOp>(op))
    return false;
  auto divisor = op->getOperand(1).getDefiningOp<ConstOp>();
  auto c = divisor ? llvm::dyn_cast<IntegerAttr>(divisor.getValue()) : IntegerAttr();
  return c && !c.getValue().isZero();
}

//===----------------------------------------------------------------------===//
// Value ranges of index expressions (for INDEX bounds)
//===----------------------------------------------------------------------===//

/// The values `v` can take, when they follow from constants and RANGE
/// bounds through ADD, MUL, DIV, MOD, MAX, NEG and CAST; std::nullopt otherwise.
static std::optional<IndexRange> computeRange(Value v, RangeCache &cache,
                                              unsigned depth);

/// Memoised: index expressions are DAGs, and shared subexpressions must not
/// make the walk exponential.
static std::optional<IndexRange> rangeOf(Value v, RangeCache &cache,
                                         unsigned depth) {
  if (depth > 32)
    return std::nullopt;
  auto it = cache.find(v);
  if (it != cache.end())
    return it->second;
  std::optional<IndexRange> r = computeRange(v, cache, depth);
  cache[v] = r;
  return r;
}

static std::optional<IndexRange> computeRange(Value v, RangeCache &cache,
                                              unsigned depth) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  auto operandRange = [&](unsigned i) {
    return rangeOf(def->getOperand(i), cache, depth + 1);
  };
  if (auto c = llvm::dyn_cast<ConstOp>(def)) {
    if (auto i = llvm::dyn_cast<IntegerAttr>(c.getValue()))
      if (i.getValue().getSignificantBits() <= 64) {
        int64_t x = i.getValue().getSExtValue();
        return IndexRange{x, x};
      }
    return std::nullopt;
  }
  if (auto r = llvm::dyn_cast<RangeOp>(def)) {
    if (r.getTripCount() <= 0)
      return std::nullopt;
    return IndexRange{r.getLower(), r.getLastValue()};
  }
  if (llvm::isa<CastOp>(def) && def->getOperand(0).getType().isIntOrIndex())
    return operandRange(0);
  if (def->getNumOperands() == 1 && llvm::isa<NegOp>(def)) {
    auto a = operandRange(0);
    if (!a || a->lo == INT64_MIN)
      return std::nullopt;
    return IndexRange{-a->hi, -a->lo};
  }
  if (def->getNumOperands() != 2)
    return std::nullopt;
  if (llvm::isa<AddOp>(def)) {
    auto a = operandRange(0), b = operandRange(1);
    IndexRange r;
    if (!a || !b || __builtin_add_overflow(a->lo, b->lo, &r.lo) ||
        __builtin_add_overflow(a->hi, b->hi, &r.hi))
      return std::nullopt;
    return r;
  }
  if (llvm::isa<MulOp>(def)) {
    auto a = operandRange(0), b = operandRange(1);
    if (!a || !b)
      return std::nullopt;
    int64_t p[4];
    if (__builtin_mul_overflow(a->lo, b->lo, &p[0]) ||
        __builtin_mul_overflow(a->lo, b->hi, &p[1]) ||
        __builtin_mul_overflow(a->hi, b->lo, &p[2]) ||
        __builtin_mul_overflow(a->hi, b->hi, &p[3]))
      return std::nullopt;
    return IndexRange{*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
  }
  if (llvm::isa<MaxOp>(def)) {
    auto a = operandRange(0), b = operandRange(1);
    if (!a || !b)
      return std::nullopt;
    return IndexRange{std::max(a->lo, b->lo), std::max(a->hi, b->hi)};
  }
  if (llvm::isa<DivOp>(def)) {
    auto a = operandRange(0), b = operandRange(1);
    if (!a || !b || b->lo != b->hi || b->lo <= 0 || a->lo < 0)
      return std::nullopt;
    return IndexRange{a->lo / b->lo, a->hi / b->lo};
  }
  if (llvm::isa<ModOp>(def)) {
    auto a = operandRange(0), b = operandRange(1);
    if (!a || !b || b->lo != b->hi || b->lo <= 0 || a->lo < 0)
      return std::nullopt;
    return IndexRange{0, std::min(a->hi, b->lo - 1)};
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Memory UOps
//===----------------------------------------------------------------------===//

ParseResult StoreOp::parse(OpAsmParser &parser, OperationState &result) {
  return parseSrcUOp(parser, result, UOpSig::Store);
}
void StoreOp::print(OpAsmPrinter &p) {
  printSrcUOp(p, getOperation(), UOpSig::Store);
}
LogicalResult StoreOp::verify() {
  return verifySrcUOp(getOperation(), UOpSig::Store, 2, Domain::Any);
}

ParseResult IndexOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::UnresolvedOperand buffer;
  SmallVector<OpAsmParser::UnresolvedOperand> indices;
  SMLoc loc = parser.getCurrentLocation();
  Type t;
  if (parser.parseOperand(buffer) ||
      parser.parseOperandList(indices, AsmParser::Delimiter::Square) ||
      parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseColonType(t))
    return failure();
  SmallVector<Type> ops;
  SmallVector<Type> res;
  if (auto fn = llvm::dyn_cast<FunctionType>(t)) {
    if (fn.getNumInputs() != indices.size() + 1)
      return parser.emitError(loc, "expected ")
             << indices.size() + 1 << " operand types";
    ops.assign(fn.getInputs().begin(), fn.getInputs().end());
    res.assign(fn.getResults().begin(), fn.getResults().end());
  } else if (auto buf = llvm::dyn_cast<BufType>(t)) {
    ops.push_back(buf);
    ops.append(indices.size(), parser.getBuilder().getIndexType());
    res.push_back(PtrType::get(parser.getContext(), buf.getElementType()));
  } else {
    return parser.emitError(loc, "expected a !l0uop.buf type, got ") << t;
  }
  SmallVector<OpAsmParser::UnresolvedOperand> all{buffer};
  all.append(indices.begin(), indices.end());
  if (parser.resolveOperands(all, ops, loc, result.operands))
    return failure();
  result.addTypes(res);
  return success();
}

void IndexOp::print(OpAsmPrinter &p) {
  p << ' ' << getBuffer() << '[';
  p.printOperands(getIndices());
  p << ']';
  p.printOptionalAttrDict((*this)->getAttrs());
  p << " : ";
  auto buf = llvm::dyn_cast<BufType>(getBuffer().getType());
  bool canonical =
      buf && getType() == PtrType::get(getContext(), buf.getElementType()) &&
      llvm::all_of(getIndices(),
                   [](Value v) { return v.getType().isIndex(); });
  if (canonical)
    p << buf;
  else
    p << FunctionType::get(getContext(), (*this)->getOperandTypes(),
                           (*this)->getResultTypes());
}

LogicalResult IndexOp::verify() {
  auto buf = llvm::dyn_cast<BufType>(getBuffer().getType());
  if (!buf)
    return uopError(*this) << "'l0uop.index' indexes a !l0uop.buf, not "
                           << getBuffer().getType();
  Type want = PtrType::get(getContext(), buf.getElementType());
  if (getType() != want)
    return uopError(*this) << "'l0uop.index' into " << buf << " yields "
                           << want << ", not " << getType();
  if (static_cast<int64_t>(getIndices().size()) != buf.getRank())
    return uopError(*this) << "'l0uop.index' into " << buf << " takes "
                           << buf.getRank() << " indices, got "
                           << getIndices().size();
  for (auto [i, idx] : llvm::enumerate(getIndices())) {
    if (!idx.getType().isIndex())
      return uopError(*this) << "index #" << i << " has type "
                             << idx.getType() << ", expected index";
    std::optional<IndexRange> r = rangeOf(idx);
    if (!r)
      continue;
    int64_t extent = buf.getShape()[i];
    if (r->hi >= extent || r->lo < 0) {
      auto diag = uopError(*this);
      diag << "index #" << i << " ranges over [" << r->lo << ", " << r->hi
           << "], past dimension " << i << " of " << buf << " (extent "
           << extent << ")";
      if (Operation *def = idx.getDefiningOp())
        diag.attachNote(def->getLoc()) << "the index is computed here";
      return diag;
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Control UOps
//===----------------------------------------------------------------------===//

int64_t RangeOp::getTripCount() {
  int64_t lower = getLower(), upper = getUpper(), step = getStep();
  if (step <= 0 || upper <= lower)
    return 0;
  // (upper - lower) may overflow for extreme bounds; saturate.
  int64_t span;
  if (__builtin_sub_overflow(upper, lower, &span))
    return INT64_MAX;
  return (span - 1) / step + 1;
}

int64_t RangeOp::getLastValue() {
  return getLower() + (getTripCount() - 1) * getStep();
}

LogicalResult RangeOp::verify() {
  if (!getType().isIndex())
    return uopError(*this) << "RANGE yields index, not " << getType();
  if (getStep() <= 0)
    return uopError(*this) << "RANGE step must be positive, got "
                           << getStep();
  if (getUpper() < getLower())
    return uopError(*this) << "RANGE " << getLower() << " to " << getUpper()
                           << " runs backwards";
  return success();
}

//===----------------------------------------------------------------------===//
// Type UOps
//===----------------------------------------------------------------------===//

LogicalResult ConstOp::verify() {
  Type t = getType();
  if (!isScalar(t))
    return uopError(*this) << "CONST is an integer, float or index scalar, "
                           << "not " << t;
  if (!llvm::isa<IntegerAttr, FloatAttr>(getValue()))
    return uopError(*this) << "CONST value must be an integer or float";
  return success();
}

/// Lane shapes of two value types agree (both scalar, or equal vectors).
static bool sameLanes(Type a, Type b) {
  auto va = llvm::dyn_cast<VectorType>(a), vb = llvm::dyn_cast<VectorType>(b);
  if (!va || !vb)
    return !va && !vb;
  return va.getShape() == vb.getShape();
}

LogicalResult CastOp::verify() {
  Type from = getSrc().getType(), to = getType();
  if (!isValueType(from) || !isValueType(to))
    return uopError(*this) << "CAST converts between numeric dtypes, not "
                           << from << " to " << to;
  if (!sameLanes(from, to))
    return uopError(*this) << "CAST keeps the lane shape: " << from
                           << " to " << to;
  return success();
}

static unsigned bitsOf(Type t) {
  auto v = llvm::dyn_cast<VectorType>(t);
  Type e = elementOf(t);
  if (!e.isIntOrFloat())
    return 0;
  return e.getIntOrFloatBitWidth() * (v ? v.getNumElements() : 1);
}

LogicalResult BitcastOp::verify() {
  Type from = getSrc().getType(), to = getType();
  unsigned a = bitsOf(from), b = bitsOf(to);
  if (!isValueType(from) || !isValueType(to) || a == 0 || b == 0)
    return uopError(*this) << "BITCAST reinterprets integers and floats "
                           << "(index has no fixed width), not " << from
                           << " to " << to;
  if (a != b)
    return uopError(*this) << "BITCAST from " << from << " (" << a
                           << " bits) to " << to << " (" << b << " bits)";
  return success();
}

LogicalResult GepOp::verify() {
  auto v = llvm::dyn_cast<VectorType>(getSrc().getType());
  if (!v || v.getRank() != 1)
    return uopError(*this) << "GEP extracts from a 1-D vector, not "
                           << getSrc().getType();
  if (getLane() < 0 || getLane() >= v.getNumElements())
    return uopError(*this) << "GEP lane " << getLane() << " is outside "
                           << v;
  if (getType() != v.getElementType())
    return uopError(*this) << "GEP of " << v << " yields "
                           << v.getElementType() << ", not " << getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Special UOps
//===----------------------------------------------------------------------===//

LogicalResult WmmaOp::verify() {
  auto a = llvm::dyn_cast<VectorType>(getA().getType());
  auto b = llvm::dyn_cast<VectorType>(getB().getType());
  auto c = llvm::dyn_cast<VectorType>(getC().getType());
  if (!a || !b || !c || a.getRank() != 2 || b.getRank() != 2 ||
      c.getRank() != 2)
    return uopError(*this) << "WMMA takes 2-D vector tiles A (MxK), B (KxN) "
                           << "and C (MxN)";
  int64_t m = a.getDimSize(0), k = a.getDimSize(1), n = b.getDimSize(1);
  if (b.getDimSize(0) != k)
    return uopError(*this) << "WMMA tiles disagree on K: A is " << a
                           << ", B is " << b;
  if (c.getDimSize(0) != m || c.getDimSize(1) != n)
    return uopError(*this) << "WMMA accumulator " << c << " is not " << m
                           << "x" << n;
  if (a.getElementType() != b.getElementType())
    return uopError(*this) << "WMMA A and B share an element type: " << a
                           << " vs " << b;
  if (!llvm::isa<FloatType>(a.getElementType()) &&
      !a.getElementType().isInteger())
    return uopError(*this) << "WMMA multiplies numbers, not " << a;
  if (getType() != c)
    return uopError(*this) << "WMMA yields its accumulator's type " << c
                           << ", not " << getType();
  return success();
}

ParseResult ReduceOp::parse(OpAsmParser &parser, OperationState &result) {
  ReduceKindAttr kind;
  OpAsmParser::UnresolvedOperand value, range, init;
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<Type> ops, res;
  if (parser.parseCustomAttributeWithFallback(kind, Type(), "kind",
                                              result.attributes) ||
      parser.parseOperand(value) || parser.parseKeyword("over") ||
      parser.parseOperand(range) || parser.parseKeyword("init") ||
      parser.parseOperand(init) ||
      parser.parseOptionalAttrDict(result.attributes))
    return failure();
  Type t;
  SMLoc typeLoc = parser.getCurrentLocation();
  if (parser.parseColonType(t))
    return failure();
  if (auto fn = llvm::dyn_cast<FunctionType>(t)) {
    if (fn.getNumInputs() != 3)
      return parser.emitError(typeLoc, "expected 3 operand types");
    ops.assign(fn.getInputs().begin(), fn.getInputs().end());
    res.assign(fn.getResults().begin(), fn.getResults().end());
  } else {
    ops = {t, parser.getBuilder().getIndexType(), t};
    res = {t};
  }
  if (parser.resolveOperands({value, range, init}, ops, loc,
                             result.operands))
    return failure();
  result.addTypes(res);
  return success();
}

void ReduceOp::print(OpAsmPrinter &p) {
  p.printStrippedAttrOrType(getKindAttr()); // prints its leading space
  p << ' ' << getValue() << " over " << getRange() << " init " << getInit();
  p.printOptionalAttrDict((*this)->getAttrs(), {"kind"});
  p << " : ";
  Type t = getType();
  if (getValue().getType() == t && getInit().getType() == t &&
      getRange().getType().isIndex())
    p << t;
  else
    p << FunctionType::get(getContext(), (*this)->getOperandTypes(),
                           (*this)->getResultTypes());
}

LogicalResult ReduceOp::verify() {
  Type t = getType();
  if (!isValueType(t))
    return uopError(*this) << "REDUCE folds numbers, not " << t;
  if (getValue().getType() != t || getInit().getType() != t)
    return uopError(*this) << "REDUCE of " << getValue().getType()
                           << " from " << getInit().getType()
                           << " must yield the same dtype, not " << t;
  auto range = getRange().getDefiningOp<RangeOp>();
  if (!range)
    return uopError(*this) << "REDUCE folds over a RANGE, and its range "
                           << "operand is not one";
  if (range.getKind() != RangeKind::loop)
    return uopError(*this) << "REDUCE over a parallel RANGE ("
                           << stringifyRangeKind(range.getKind())
                           << "): reduce across threads with a CUSTOM "
                           << "or split the kernel";
  return success();
}

LogicalResult CustomOp::verify() {
  if (getCallee().empty())
    return uopError(*this) << "CUSTOM names its intrinsic or escape kernel";
  for (Type t : getResultTypes())
    if (!isValueType(t))
      return uopError(*this) << "CUSTOM yields scalars or vectors, not " << t;
  for (Type t : getOperandTypes())
    if (!isValueType(t) && !llvm::isa<BufType, PtrType>(t))
      return uopError(*this) << "CUSTOM takes values, pointers or buffers, "
                             << "not " << t;
  return success();
}
