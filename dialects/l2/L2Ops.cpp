//===- L2Ops.cpp - The l2 dialect's operations and verifiers -----------===//
//
// Attribute parameter parsing, the method attributes' own checks, the shape
// rule of every layer op (row L2.1) and the region ops' verifiers. The checks
// of a whole `l2.methods` op live in L2Verify.cpp; the analyses they share
// (parameters, depth, cycles, the resource estimate) in L2Model.cpp.
//
//===----------------------------------------------------------------------===//
#include "synpl/Dialect/L2/L2Ops.h"
#include "synpl/Dialect/L2/L2Model.h"
#include "synpl/Interfaces/SpecInterfaces.h"
#include "synpl/Support/Property.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace synpl;
using namespace synpl::l2;

//===----------------------------------------------------------------------===//
// Parameter parsers and printers
//===----------------------------------------------------------------------===//

FailureOr<APFloat> synpl::l2::parseF64(AsmParser &parser) {
  double value;
  if (parser.parseFloat(value))
    return failure();
  return APFloat(value);
}

void synpl::l2::printF64(AsmPrinter &printer, const APFloat &apValue) {
  double value = apValue.convertToDouble();
  // The shortest %g form that reads back as the same double.
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value)
      break;
  }
  std::string text(buf);
  // An MLIR float literal needs a '.' (`1e-08` would lex as `1` `e-08`).
  if (std::isfinite(value) && text.find('.') == std::string::npos) {
    size_t exp = text.find_first_of("eE");
    if (exp == std::string::npos)
      text += ".0";
    else
      text.insert(exp, ".0");
  }
  printer << text;
}

FailureOr<bool> synpl::l2::parseBool(AsmParser &parser) {
  if (succeeded(parser.parseOptionalKeyword("true")))
    return true;
  if (succeeded(parser.parseOptionalKeyword("false")))
    return false;
  return parser.emitError(parser.getCurrentLocation(), "expected 'true' or 'false'");
}

FailureOr<SmallVector<int64_t>> synpl::l2::parseShape(AsmParser &parser) {
  SmallVector<int64_t> shape;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() -> ParseResult {
        int64_t dim;
        SMLoc loc = parser.getCurrentLocation();
        if (parser.parseInteger(dim))
          return failure();
        if (dim <= 0)
          return parser.emitError(loc, "parameter dimensions must be positive");
        shape.push_back(dim);
        return success();
      }))
    return failure();
  return shape;
}

void synpl::l2::printShape(AsmPrinter &printer, ArrayRef<int64_t> shape) {
  printer << '[';
  llvm::interleaveComma(shape, printer);
  printer << ']';
}

// `steps = n` | `until("pred")` [`, max_steps = n`]
static ParseResult parseTripCount(OpAsmParser &parser, IntegerAttr &steps,
                                  StringAttr &until, IntegerAttr &maxSteps) {
  Builder b(parser.getContext());
  int64_t n;
  if (succeeded(parser.parseOptionalKeyword("steps"))) {
    if (parser.parseEqual() || parser.parseInteger(n))
      return failure();
    steps = b.getI64IntegerAttr(n);
    return success();
  }
  std::string pred;
  if (parser.parseKeyword("until") || parser.parseLParen() || parser.parseString(&pred) ||
      parser.parseRParen())
    return failure();
  until = b.getStringAttr(pred);
  if (succeeded(parser.parseOptionalComma())) {
    if (parser.parseKeyword("max_steps") || parser.parseEqual() || parser.parseInteger(n))
      return failure();
    maxSteps = b.getI64IntegerAttr(n);
  }
  return success();
}

static void printTripCount(OpAsmPrinter &printer, Operation *, IntegerAttr steps,
                           StringAttr until, IntegerAttr maxSteps) {
  if (steps)
    printer << "steps = " << steps.getInt();
  if (steps && until)
    printer << ", ";
  if (until) {
    printer << "until(";
    printer.printString(until.getValue());
    printer << ")";
  }
  if (maxSteps)
    printer << ", max_steps = " << maxSteps.getInt();
}

// A dropout probability, printed in its shortest exact form (`0.1`).
static ParseResult parseProbability(OpAsmParser &parser, FloatAttr &p) {
  double value;
  if (parser.parseFloat(value))
    return failure();
  p = Builder(parser.getContext()).getF64FloatAttr(value);
  return success();
}

static void printProbability(OpAsmPrinter &printer, Operation *, FloatAttr p) {
  printF64(printer, p.getValue());
}

#include "synpl/Dialect/L2/L2Enums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "synpl/Dialect/L2/L2Attrs.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "synpl/Dialect/L2/L2Types.cpp.inc"
#define GET_OP_CLASSES
#include "synpl/Dialect/L2/L2Ops.cpp.inc"

FailureOr<Attribute> synpl::l2::parseMethod(AsmParser &parser) {
  Attribute method;
  StringRef mnemonic;
  SMLoc loc = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalKeyword(&mnemonic))) {
    // The keyword is consumed: dispatch on it to the attribute's body parser.
    auto parseAs = [&](auto tag) -> bool {
      using AttrT = decltype(tag);
      if (mnemonic != AttrT::getMnemonic())
        return false;
      method = AttrT::parse(parser, Type());
      return true;
    };
    bool known =
        parseAs(EpochShuffleAttr()) || parseAs(StreamWindowAttr()) ||
        parseAs(CurriculumAttr()) || parseAs(ReplayAttr()) ||
        parseAs(DistributedShardAttr()) || parseAs(PhaseAttr()) ||
        parseAs(AutodiffAttr()) || parseAs(EvolutionAttr()) || parseAs(DfaAttr()) ||
        parseAs(ReinforceAttr()) || parseAs(StraightThroughAttr()) ||
        parseAs(ZerothOrderAttr()) || parseAs(HybridAttr()) || parseAs(SgdAttr()) ||
        parseAs(AdamAttr()) || parseAs(MuonAttr()) || parseAs(LionAttr()) ||
        parseAs(ScheduleAttr()) || parseAs(GradientClipAttr()) ||
        parseAs(EmaAttr()) || parseAs(PerParamAttr()) || parseAs(ParamOverrideAttr());
    if (!known)
      return parser.emitError(loc, "unknown method '") << mnemonic << "'";
    if (!method)
      return failure();
    return method;
  }
  if (parser.parseAttribute(method))
    return failure();
  return method;
}

void synpl::l2::printMethod(AsmPrinter &printer, Attribute method) {
  if (method && isa<L2Dialect>(method.getDialect()) &&
      succeeded(generatedAttributePrinter(method, printer)))
    return;
  printer << method;
}

// Here, where the attribute storage classes are complete.
void L2Dialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "synpl/Dialect/L2/L2Attrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Method families and the method attributes' own checks
//===----------------------------------------------------------------------===//

bool synpl::l2::isSampleMethod(Attribute attr) {
  return isa_and_nonnull<EpochShuffleAttr, StreamWindowAttr, CurriculumAttr,
                         ReplayAttr, DistributedShardAttr>(attr);
}

bool synpl::l2::isBackwardMethod(Attribute attr) {
  return isa_and_nonnull<AutodiffAttr, EvolutionAttr, DfaAttr, ReinforceAttr,
                         StraightThroughAttr, ZerothOrderAttr, HybridAttr>(attr);
}

bool synpl::l2::isUpdateMethod(Attribute attr) {
  return isa_and_nonnull<SgdAttr, AdamAttr, MuonAttr, LionAttr, ScheduleAttr,
                         GradientClipAttr, EmaAttr, PerParamAttr>(attr);
}

using EmitFn = llvm::function_ref<InFlightDiagnostic()>;

static LogicalResult checkPositive(EmitFn emitError, StringRef what, int64_t v) {
  if (v > 0)
    return success();
  return emitError() << what << " must be positive, got " << v;
}

static LogicalResult checkPositive(EmitFn emitError, StringRef what, const APFloat &f) {
  double v = f.convertToDouble();
  if (std::isfinite(v) && v > 0)
    return success();
  return emitError() << what << " must be a positive finite number, got " << v;
}

// A decay or interpolation coefficient in [0, 1).
static LogicalResult checkUnitInterval(EmitFn emitError, StringRef what,
                                       const APFloat &f) {
  double v = f.convertToDouble();
  if (v >= 0 && v < 1)
    return success();
  return emitError() << what << " must be in [0, 1), got " << v;
}

static LogicalResult checkFamily(EmitFn emitError, StringRef what, Attribute attr,
                                 bool (*isFamily)(Attribute), StringRef family) {
  if (isFamily(attr))
    return success();
  return emitError() << what << " must be " << family << " method, got " << attr;
}

LogicalResult EpochShuffleAttr::verify(EmitFn emitError, int64_t batch, bool) {
  return checkPositive(emitError, "batch", batch);
}

LogicalResult TrainLoopAttr::verify(EmitFn emitError, int64_t epochs, StringRef evaluate,
                                    int64_t checkpointEvery, int64_t steps) {
  if (failed(checkPositive(emitError, "epochs", epochs)))
    return failure();
  if (steps < 0)
    return emitError() << "steps must be at least 0 (0: the whole split), got " << steps;
  if (checkpointEvery < 0)
    return emitError() << "checkpoint_every must be at least 0, got " << checkpointEvery;
  if (evaluate.contains('/'))
    return emitError() << "evaluate names a split (a file-name prefix such as \"t10k\"), not a "
                          "path: \""
                       << evaluate << "\"";
  return success();
}

LogicalResult StreamWindowAttr::verify(EmitFn emitError, int64_t window, int64_t stride,
                                       int64_t batch) {
  if (failed(checkPositive(emitError, "window", window)) ||
      failed(checkPositive(emitError, "stride", stride)))
    return failure();
  if (batch < 0)
    return emitError() << "batch must be positive (or 0: the window), got " << batch;
  return success();
}

LogicalResult PhaseAttr::verify(EmitFn emitError, StringRef filter, int64_t duration) {
  if (filter.empty())
    return emitError() << "a curriculum phase needs a filter predicate";
  return checkPositive(emitError, "duration", duration);
}

LogicalResult CurriculumAttr::verify(EmitFn emitError, int64_t batch, ArrayAttr phases) {
  if (failed(checkPositive(emitError, "batch", batch)))
    return failure();
  if (!phases || phases.empty())
    return emitError() << "a curriculum needs at least one phase";
  for (Attribute phase : phases)
    if (!isa<PhaseAttr>(phase))
      return emitError() << "curriculum phases must be #l2.phase, got " << phase;
  return success();
}

LogicalResult ReplayAttr::verify(EmitFn emitError, int64_t buffer, ReplayPriority,
                                 int64_t batch) {
  if (failed(checkPositive(emitError, "buffer", buffer)) ||
      failed(checkPositive(emitError, "batch", batch)))
    return failure();
  if (batch > buffer)
    return emitError() << "a replay batch of " << batch
                       << " cannot be drawn from a buffer of " << buffer;
  return success();
}

LogicalResult DistributedShardAttr::verify(EmitFn emitError, int64_t shards,
                                           Attribute method) {
  if (failed(checkPositive(emitError, "shards", shards)))
    return failure();
  return checkFamily(emitError, "the sharded method", method, isSampleMethod, "a sample");
}

LogicalResult AutodiffAttr::verify(EmitFn emitError, AutodiffMode, ArrayAttr checkpoint) {
  if (!checkpoint)
    return success();
  for (Attribute ref : checkpoint)
    if (!isa<StringAttr>(ref))
      return emitError() << "checkpoint entries must be layer names (strings), got "
                         << ref;
  return success();
}

LogicalResult EvolutionAttr::verify(EmitFn emitError, int64_t pop, APFloat sigma,
                                    Selection) {
  if (failed(checkPositive(emitError, "pop", pop)) ||
      failed(checkPositive(emitError, "sigma", sigma)))
    return failure();
  return success();
}

LogicalResult DfaAttr::verify(EmitFn emitError, int64_t feedbackDim) {
  return checkPositive(emitError, "feedback_dim", feedbackDim);
}

LogicalResult ReinforceAttr::verify(EmitFn, Baseline) { return success(); }
LogicalResult StraightThroughAttr::verify(EmitFn, Estimator) { return success(); }

LogicalResult ZerothOrderAttr::verify(EmitFn emitError, int64_t samples, APFloat sigma) {
  if (failed(checkPositive(emitError, "samples", samples)) ||
      failed(checkPositive(emitError, "sigma", sigma)))
    return failure();
  return success();
}

LogicalResult HybridAttr::verify(EmitFn emitError, Attribute primary, Attribute aux,
                                 DecayKind) {
  if (failed(checkFamily(emitError, "primary", primary, isBackwardMethod, "a backward")) ||
      failed(checkFamily(emitError, "aux", aux, isBackwardMethod, "a backward")))
    return failure();
  return success();
}

LogicalResult SgdAttr::verify(EmitFn emitError, APFloat lr) {
  return checkPositive(emitError, "lr", lr);
}

LogicalResult AdamAttr::verify(EmitFn emitError, APFloat lr, APFloat beta1, APFloat beta2,
                               APFloat eps) {
  if (failed(checkPositive(emitError, "lr", lr)) ||
      failed(checkUnitInterval(emitError, "beta1", beta1)) ||
      failed(checkUnitInterval(emitError, "beta2", beta2)) ||
      failed(checkPositive(emitError, "eps", eps)))
    return failure();
  return success();
}

LogicalResult MuonAttr::verify(EmitFn emitError, APFloat lr, int64_t nsSteps) {
  if (failed(checkPositive(emitError, "lr", lr)) ||
      failed(checkPositive(emitError, "ns_steps", nsSteps)))
    return failure();
  return success();
}

LogicalResult LionAttr::verify(EmitFn emitError, APFloat lr, APFloat beta1, APFloat beta2) {
  if (failed(checkPositive(emitError, "lr", lr)) ||
      failed(checkUnitInterval(emitError, "beta1", beta1)) ||
      failed(checkUnitInterval(emitError, "beta2", beta2)))
    return failure();
  return success();
}

LogicalResult ScheduleAttr::verify(EmitFn emitError, int64_t warmup, DecayKind,
                                   Attribute inner) {
  if (warmup < 0)
    return emitError() << "warmup must not be negative, got " << warmup;
  return checkFamily(emitError, "inner", inner, isUpdateMethod, "an update");
}

LogicalResult GradientClipAttr::verify(EmitFn emitError, APFloat maxNorm, Attribute inner) {
  if (failed(checkPositive(emitError, "max_norm", maxNorm)))
    return failure();
  return checkFamily(emitError, "inner", inner, isUpdateMethod, "an update");
}

LogicalResult EmaAttr::verify(EmitFn emitError, APFloat decay, Attribute inner) {
  if (failed(checkUnitInterval(emitError, "decay", decay)))
    return failure();
  return checkFamily(emitError, "inner", inner, isUpdateMethod, "an update");
}

LogicalResult ParamOverrideAttr::verify(EmitFn emitError, StringRef param,
                                        ArrayRef<int64_t>, Attribute update) {
  if (param.empty())
    return emitError() << "a parameter override needs a parameter name";
  return checkFamily(emitError, "the override's update", update, isUpdateMethod,
                     "an update");
}

LogicalResult PerParamAttr::verify(EmitFn emitError, Attribute others, Attribute matrix,
                                   ArrayAttr overrides) {
  if (failed(checkFamily(emitError, "others", others, isUpdateMethod, "an update")))
    return failure();
  if (matrix &&
      failed(checkFamily(emitError, "matrix", matrix, isUpdateMethod, "an update")))
    return failure();
  if (overrides) {
    llvm::StringSet<> seen;
    for (Attribute entry : overrides) {
      auto override = dyn_cast<ParamOverrideAttr>(entry);
      if (!override)
        return emitError() << "overrides must be #l2.param_override, got " << entry;
      if (!seen.insert(override.getParam()).second)
        return emitError() << "parameter \"" << override.getParam()
                           << "\" is overridden twice";
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Layer shape rules (row L2.1)
//===----------------------------------------------------------------------===//

namespace {
/// Reports a shape-rule violation as row L2.1 when the caller has a location
/// (the parser and the verifier always do).
struct ShapeError {
  std::optional<Location> loc;
  template <typename... Args>
  LogicalResult operator()(const Args &...args) const {
    if (loc) {
      InFlightDiagnostic diag = emitCheckError(*loc, Property::Consistency, "L2.1");
      (diag << ... << args);
    }
    return failure();
  }
};
} // namespace

static std::string typeString(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

/// Layers take statically shaped tensors: shapes are known at L2.
static FailureOr<RankedTensorType> staticInput(Value value, const ShapeError &error) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape()) {
    (void)error("layers take statically shaped tensors, got ", typeString(value.getType()));
    return failure();
  }
  return type;
}

#define L2_STATIC_INPUT(name, value)                                           \
  FailureOr<RankedTensorType> name##OrFailure = staticInput(value, error);     \
  if (failed(name##OrFailure))                                                 \
    return failure();                                                          \
  RankedTensorType name = *name##OrFailure;

LogicalResult synpl::l2::verifyLayerOp(Operation *op) {
  if (auto hints = op->getAttrOfType<ArrayAttr>("hints")) {
    for (Attribute hint : hints) {
      auto h = dyn_cast<EscapeHatchAttrInterface>(hint);
      if (!h)
        return op->emitOpError("hints must be escape hatches (#l3.hint<...>), got ")
               << hint;
      if (h.getLayer() != "l1" && h.getLayer() != "l0")
        return op->emitOpError("an escape hatch on an L2 layer must target a lower "
                               "layer (l1 or l0), got ")
               << h.getLayer() << "::" << h.getDirective();
    }
  }
  auto rule = cast<InferTypeOpInterface>(op);
  SmallVector<Type> inferred;
  if (failed(rule.inferReturnTypes(op->getContext(), op->getLoc(), op->getOperands(),
                                   op->getRawDictionaryAttrs(),
                                   op->getPropertiesStorage(), op->getRegions(),
                                   inferred)))
    return failure();
  if (TypeRange(inferred) != op->getResultTypes()) {
    InFlightDiagnostic diag = emitCheckError(op, Property::Consistency, "L2.1");
    diag << "the result is declared as ";
    llvm::interleaveComma(op->getResultTypes(), diag);
    diag << ", but the shape rule gives ";
    llvm::interleaveComma(inferred, diag);
    return diag;
  }
  return success();
}

// Mismatches are reported by verifyShapeRule, as row L2.1.
#define L2_COMPATIBLE_RESULTS(Op)                                              \
  bool Op::isCompatibleReturnTypes(TypeRange, TypeRange) { return true; }
L2_COMPATIBLE_RESULTS(LinearOp)
L2_COMPATIBLE_RESULTS(ConvOp)
L2_COMPATIBLE_RESULTS(AttnOp)
L2_COMPATIBLE_RESULTS(NormOp)
L2_COMPATIBLE_RESULTS(ActOp)
L2_COMPATIBLE_RESULTS(EmbedOp)
L2_COMPATIBLE_RESULTS(PoolOp)
L2_COMPATIBLE_RESULTS(DropoutOp)
L2_COMPATIBLE_RESULTS(SoftmaxOp)
L2_COMPATIBLE_RESULTS(FlattenOp)
L2_COMPATIBLE_RESULTS(ReshapeOp)
L2_COMPATIBLE_RESULTS(AddOp)
L2_COMPATIBLE_RESULTS(QuantizeOp)
#undef L2_COMPATIBLE_RESULTS

LogicalResult LinearOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  ShapeError error{loc};
  L2_STATIC_INPUT(input, adaptor.getInput())
  int64_t in = adaptor.getIn(), out = adaptor.getOut();
  if (input.getRank() < 1 || input.getShape().back() != in)
    return error("linear(", in, ", ", out, ") expects an input whose last dimension is ",
                 in, ", got ", typeString(input));
  SmallVector<int64_t> shape(input.getShape());
  shape.back() = out;
  results.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor, SmallVectorImpl<Type> &results) {
  ShapeError error{loc};
  L2_STATIC_INPUT(input, adaptor.getInput())
  int64_t inCh = adaptor.getInCh(), outCh = adaptor.getOutCh();
  int64_t k = adaptor.getKernel(), s = adaptor.getStride(), p = adaptor.getPadding();
  if (input.getRank() != 3 && input.getRank() != 4)
    return error("conv expects a channels-first [N, C, L] or [N, C, H, W] input, got ",
                 typeString(input));
  if (input.getDimSize(1) != inCh)
    return error("conv(", inCh, ", ", outCh, ", ...) expects ", inCh,
                 " input channels (dimension 1), got ", typeString(input));
  SmallVector<int64_t> shape{input.getDimSize(0), outCh};
  for (int64_t d = 2; d < input.getRank(); ++d) {
    int64_t x = input.getDimSize(d), padded;
    if (__builtin_mul_overflow(p, 2, &padded) || __builtin_add_overflow(x, padded, &padded))
      return error("conv padding ", p, " overflows spatial dimension ", d);
    if (padded < k)
      return error("conv kernel ", k, " does not fit spatial dimension ", d, " of size ",
                   x, " with padding ", p);
    shape.push_back((padded - k) / s + 1);
  }
  results.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult AttnOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor, SmallVectorImpl<Type> &results) {
  ShapeError error{loc};
  L2_STATIC_INPUT(input, adaptor.getInput())
  int64_t heads = adaptor.getHeads(), dim = adaptor.getDim();
  if (dim % heads != 0)
    return error("attn dim ", dim, " is not divisible by ", heads, " heads");
  if (input.getRank() != 3 || input.getDimSize(2) != dim)
    return error("attn(heads: ", heads, ", dim: ", dim,
                 ") expects a [N, T, ", dim, "] input, got ", typeString(input));
  results.push_back(input);
  return success();
}

LogicalResult NormOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor, SmallVectorImpl<Type> &results) {
  ShapeError error{loc};
  L2_STATIC_INPUT(input, adaptor.getInput())
  if (adaptor.getKind() == NormKind::group) {
    if (input.getRank() < 2)
      return error("norm(group) expects a channels-first input of rank >= 2, got ",
                   typeString(input));
    std::optional<uint64_t> groups = adaptor.getGroups();
    if (groups && input.getDimSize(1) % static_cast<int64_t>(*groups) != 0)
      return error("norm(group(", *groups, ")) needs the channel count to divide into ",
                   *groups, " groups, got ", input.getDimSize(1), " channels");
  } else if (input.getRank() < 1) {
    return error("norm expects a tensor of rank >= 1, got ", typeString(input));
  }
  results.push_back(input);
  return success();
}

LogicalResult NormOp::verify() {
  if ((getKind() == NormKind::group) != getGroups().has_value())
    return emitOpError("takes a group count exactly when its kind is group: ")
           << "write norm(group(n)), norm(layer) or norm(rms)";
  return success();
}

LogicalResult ActOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                      Adaptor adaptor, SmallVectorImpl<Type> &results) {
  ShapeError error{loc};
  L2_STATIC_INPUT(input, adaptor.getInput())
  results.push_back(input);
  return success();
}

LogicalResult EmbedOp::inferReturnTypes(MLIRContext *ctx, std::optional<Location> loc,
                                        Adaptor adaptor, SmallVectorImpl<Type> &results) {
  ShapeError error{loc};
  L2_STATIC_INPUT(input, adaptor.getInput())
  if (!input.getElementType().isSignlessInteger() &&
      !input.getElementType().isUnsignedInteger())
    return error("embed expects integer token ids, got ", typeString(input));
  if (std::optional<uint64_t> positions = adaptor.getPositions())
    if (input.getRank() != 2 || input.getDimSize(1) != static_cast<int64_t>(*positions))
      return error("embed with positions = ", *positions, " expects [batch, ", *positions,
                   "] token ids, got ", typeString(input));
  SmallVector<int64_t> shape(input.getShape());
  shape.push_back(adaptor.getDim());
  results.push_back(RankedTensorType::get(shape, Float32Type::get(ctx)));
  return success();
}

LogicalResult PoolOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor, SmallVectorImpl<Type> &results) {
  ShapeError error{loc};
  L2_STATIC_INPUT(input, adaptor.getInput())
  int64_t k = adaptor.getKernel();
  if (input.getRank() != 3 && input.getRank() != 4)
    return error("pool expects a channels-first [N, C, L] or [N, C, H, W] input, got ",
                 typeString(input));
  SmallVector<int64_t> shape(input.getShape());
  for (int64_t d = 2; d < input.getRank(); ++d) {
    if (shape[d] < k)
      return error("pool kernel ", k, " is larger than spatial dimension ", d,
                   " of size ", shape[d]);
    shape[d] /= k;
  }
  results.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult DropoutOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor, SmallVectorImpl<Type> &results) {
  double p = adaptor.getP().convertToDouble();
  if (!(p >= 0 && p < 1)) {
    if (loc)
      mlir::emitError(*loc) << "dropout probability must be in [0, 1), got " << p;
    return failure();
  }
  ShapeError error{loc};
  L2_STATIC_INPUT(input, adaptor.getInput())
  results.push_back(input);
  return success();
}

LogicalResult SoftmaxOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor, SmallVectorImpl<Type> &results) {
  ShapeError error{loc};
  L2_STATIC_INPUT(input, adaptor.getInput())
  if (input.getRank() < 1)
    return error("softmax expects a tensor of rank >= 1, got ",
                           typeString(input));
  results.push_back(input);
  return success();
}

LogicalResult FlattenOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor, SmallVectorImpl<Type> &results) {
  ShapeError error{loc};
  L2_STATIC_INPUT(input, adaptor.getInput())
  if (input.getRank() < 1)
    return error("flatten expects a batched tensor (rank >= 1), got ",
                           typeString(input));
  int64_t rest = 1;
  for (int64_t d : input.getShape().drop_front())
    if (__builtin_mul_overflow(rest, d, &rest))
      return error("flatten of ", typeString(input),
                             " has more elements than fit in 64 bits");
  results.push_back(
      RankedTensorType::get({input.getDimSize(0), rest}, input.getElementType()));
  return success();
}

LogicalResult ReshapeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor, SmallVectorImpl<Type> &results) {
  ShapeError error{loc};
  L2_STATIC_INPUT(input, adaptor.getInput())
  if (input.getRank() < 1)
    return error("reshape expects a batched tensor (rank >= 1), got ", typeString(input));
  int64_t from = 1, to = 1;
  for (int64_t d : input.getShape().drop_front())
    if (__builtin_mul_overflow(from, d, &from))
      return error("reshape of ", typeString(input), " has more elements than fit in 64 bits");
  SmallVector<int64_t> shape{input.getDimSize(0)};
  for (int64_t d : adaptor.getShape()) {
    if (d <= 0)
      return error("reshape sizes must be positive, got ", d);
    if (__builtin_mul_overflow(to, d, &to))
      return error("reshape sizes overflow 64 bits");
    shape.push_back(d);
  }
  if (from != to)
    return error("reshape of ", typeString(input), " (", from,
                 " elements per example) to ", to, " elements per example");
  results.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult AddOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                      Adaptor adaptor, SmallVectorImpl<Type> &results) {
  ShapeError error{loc};
  L2_STATIC_INPUT(lhs, adaptor.getLhs())
  L2_STATIC_INPUT(rhs, adaptor.getRhs())
  if (lhs != rhs)
    return error("add merges tensors of one type, got ", typeString(lhs),
                           " and ", typeString(rhs));
  results.push_back(lhs);
  return success();
}

LogicalResult QuantizeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                           Adaptor adaptor, SmallVectorImpl<Type> &results) {
  ShapeError error{loc};
  L2_STATIC_INPUT(input, adaptor.getInput())
  results.push_back(input);
  return success();
}

//===----------------------------------------------------------------------===//
// Region-holding infer forms
//===----------------------------------------------------------------------===//

RegionKind MethodsOp::getRegionKind(unsigned) { return RegionKind::Graph; }
RegionKind RecurrentOp::getRegionKind(unsigned) { return RegionKind::Graph; }
RegionKind MixtureOp::getRegionKind(unsigned) { return RegionKind::Graph; }
RegionKind GraphOp::getRegionKind(unsigned) { return RegionKind::Graph; }
RegionKind DiffusionChainOp::getRegionKind(unsigned) { return RegionKind::Graph; }

/// Checks that `region`'s block takes `args` and ends in an l2.yield of
/// `yields` (row L2.1: the edges into and out of a sub-DAG are shape edges).
static LogicalResult verifySubDag(Operation *owner, Region &region, StringRef what,
                                  TypeRange args, TypeRange yields) {
  Block &block = region.front();
  if (block.getArgumentTypes() != args) {
    InFlightDiagnostic diag = emitCheckError(owner, Property::Consistency, "L2.1");
    diag << "the " << what << " region must take (";
    llvm::interleaveComma(args, diag);
    diag << "), got (";
    llvm::interleaveComma(block.getArgumentTypes(), diag);
    return diag << ")";
  }
  auto yield = block.empty() ? YieldOp() : dyn_cast<YieldOp>(block.back());
  if (!yield)
    return owner->emitOpError("expects its ") << what << " region to end in l2.yield";
  if (yield.getValues().getTypes() != yields) {
    InFlightDiagnostic diag = emitCheckError(yield, Property::Consistency, "L2.1");
    diag << "the " << what << " region must yield (";
    llvm::interleaveComma(yields, diag);
    diag << "), got (";
    llvm::interleaveComma(yield.getValues().getTypes(), diag);
    return diag << ")";
  }
  return verifyAcyclic(block, owner);
}

std::optional<int64_t> RecurrentOp::getTripCount() {
  if (std::optional<uint64_t> steps = getSteps())
    return static_cast<int64_t>(*steps);
  if (std::optional<uint64_t> bound = getMaxSteps())
    return static_cast<int64_t>(*bound);
  return std::nullopt;
}

LogicalResult RecurrentOp::verify() {
  if (getSteps().has_value() == getUntil().has_value())
    return emitOpError("takes exactly one of `steps = n` and `until(pred)`");
  if (getSteps() && getMaxSteps())
    return emitOpError("`max_steps` bounds an `until`; `steps` is already a count");
  if (getUntil() && !getMaxSteps())
    return emitCheckError(*this, Property::Resource, "L2.6")
           << "recurrent until(\"" << *getUntil()
           << "\") has no proven bound; declare one with `max_steps = n` "
              "(unbounded execution is a specification error)";
  return success();
}

LogicalResult RecurrentOp::verifyRegions() {
  return verifySubDag(*this, getCell(), "cell", getInit().getType(), getType());
}

LogicalResult MixtureOp::verifyRegions() {
  if (getExperts().empty())
    return emitOpError("needs at least one expert");
  int64_t numExperts = getExperts().size();
  if (std::optional<uint64_t> k = getTopK(); k && static_cast<int64_t>(*k) > numExperts)
    return emitOpError("top_k ") << *k << " exceeds the " << numExperts << " experts";
  for (Region &expert : getExperts())
    if (failed(verifySubDag(*this, expert, "expert", getInput().getType(), getType())))
      return failure();
  // The gate scores the experts: [..., numExperts] over the input's batch.
  Block &gate = getGate().front();
  auto yield = gate.empty() ? YieldOp() : dyn_cast<YieldOp>(gate.back());
  if (!yield || yield.getValues().size() != 1)
    return emitOpError("expects its gate region to yield one tensor of expert scores");
  auto scores = cast<RankedTensorType>(yield.getValues()[0].getType());
  auto input = getInput().getType();
  if (scores.getRank() != 2 || scores.getDimSize(0) != input.getDimSize(0) ||
      scores.getDimSize(1) != numExperts)
    return emitCheckError(yield, Property::Consistency, "L2.1")
           << "the gate must yield [" << input.getDimSize(0) << ", " << numExperts
           << "] expert scores, got " << scores;
  return verifySubDag(*this, getGate(), "gate", input, scores);
}

LogicalResult GraphOp::verifyRegions() {
  return verifySubDag(*this, getBody(), "graph body", getInputs().getTypes(),
                      getResultTypes());
}

LogicalResult DiffusionChainOp::verifyRegions() {
  return verifySubDag(*this, getDenoiser(), "denoiser", getInput().getType(), getType());
}

YieldOp MethodsOp::getInferYield() {
  if (getInfer().empty())
    return {};
  Block &block = getInferBlock();
  return block.empty() ? YieldOp() : dyn_cast<YieldOp>(block.back());
}

//===----------------------------------------------------------------------===//
// l2.methods assembly
//===----------------------------------------------------------------------===//

// l2.methods @name for @model
//     sample <attr>
//     infer(%x: type, ...) { ... }
//     backward <attr>
//     update <attr> [attributes {...}]
ParseResult MethodsOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr name;
  FlatSymbolRefAttr model;
  FailureOr<Attribute> sample, backward, update;
  SmallVector<OpAsmParser::Argument> args;
  Region *infer = result.addRegion();
  if (parser.parseSymbolName(name) || parser.parseKeyword("for") ||
      parser.parseAttribute(model) || parser.parseKeyword("sample") ||
      failed(sample = parseMethod(parser)) || parser.parseKeyword("infer") ||
      parser.parseArgumentList(args, AsmParser::Delimiter::Paren, /*allowType=*/true) ||
      parser.parseRegion(*infer, args) || parser.parseKeyword("backward") ||
      failed(backward = parseMethod(parser)) || parser.parseKeyword("update") ||
      failed(update = parseMethod(parser)))
    return failure();
  // `train loop<...>` (or the full `#l2.loop<...>`), optional.
  Attribute train;
  if (succeeded(parser.parseOptionalKeyword("train"))) {
    SMLoc loc = parser.getCurrentLocation();
    if (succeeded(parser.parseOptionalKeyword("loop")))
      train = TrainLoopAttr::parse(parser, Type());
    else if (parser.parseAttribute(train))
      return failure();
    if (!train)
      return failure();
    if (!isa<TrainLoopAttr>(train))
      return parser.emitError(loc, "train must be a training loop (loop<epochs = n, ...>), got ")
             << train;
  }
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  if (infer->empty())
    infer->emplaceBlock();
  MethodsOp::Properties &props = result.getOrAddProperties<MethodsOp::Properties>();
  props.sym_name = name;
  props.model = model;
  props.sample = *sample;
  props.backward = *backward;
  props.update = *update;
  props.train = cast_or_null<TrainLoopAttr>(train);
  return success();
}

void MethodsOp::print(OpAsmPrinter &p) {
  p << ' ';
  p.printSymbolName(getSymName());
  p << " for " << getModelAttr();
  p.increaseIndent();
  p.printNewline();
  p << "sample ";
  printMethod(p, getSample());
  p.printNewline();
  p << "infer(";
  if (!getInfer().empty())
    llvm::interleaveComma(getInferBlock().getArguments(), p,
                          [&](BlockArgument arg) { p.printRegionArgument(arg); });
  p << ") ";
  p.printRegion(getInfer(), /*printEntryBlockArgs=*/false);
  p.printNewline();
  p << "backward ";
  printMethod(p, getBackward());
  p.printNewline();
  p << "update ";
  printMethod(p, getUpdate());
  if (TrainLoopAttr train = getTrainAttr()) {
    p.printNewline();
    p << "train ";
    printMethod(p, train);
  }
  p.decreaseIndent();
  p.printOptionalAttrDictWithKeyword(
      (*this)->getAttrs(),
      {getSymNameAttrName(), getModelAttrName(), getSampleAttrName(),
       getBackwardAttrName(), getUpdateAttrName(), getTrainAttrName()});
}
