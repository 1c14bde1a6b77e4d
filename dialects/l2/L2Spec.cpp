//===- L2Spec.cpp - The rows that check an l2.methods against its l3.model ===//
//
// L2.2 spec constraint check (depth, width, param_budget, causal, output
// domain), the data half of L2.5 (infer inputs vs the model's input field)
// and the latency half of L2.7. They read the model named by `for` (an
// l3.model, through ModelSpecOpInterface, so that this dialect does not link
// the l3 dialect) and run in verifySymbolUses, after every op has verified on its own.
//
//===----------------------------------------------------------------------===//
#include "synpl/Dialect/L2/L2Model.h"
#include "synpl/Dialect/L2/L2Ops.h"
#include "synpl/Interfaces/SpecInterfaces.h"
#include "synpl/Support/Property.h"
#include "synpl/Support/Units.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSwitch.h"

#include <cstdio>

using namespace mlir;
using namespace synpl;
using namespace synpl::l2;

/// `%g`: 0.25, 1e-06, 6.99346.
static std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

static RankedTensorType batched(const ExampleShape &example, int64_t batch) {
  SmallVector<int64_t> shape{batch};
  shape.append(example.shape);
  return RankedTensorType::get(shape, example.elementType);
}

/// L2.5: the infer inputs are batches of the model's input field.
static LogicalResult checkData(MethodsOp methods, ModelSpecOpInterface model,
                               SymbolTableCollection &symbols) {
  Operation *field = model.resolveInputField(symbols);
  Type domain = model.resolveInDomain(symbols);
  if (!field || !domain)
    return success(); // the model reports its own dangling `in` (L3.1)
  std::optional<ExampleShape> example = exampleShape(domain);
  if (!example)
    return success(); // tables: no fixed tensor view to compare against
  Block &block = methods.getInferBlock();
  if (block.getNumArguments() != 1)
    return emitCheckError(methods, Property::Consistency, "L2.5")
           << "the infer region takes " << block.getNumArguments()
           << " inputs, but @" << model.getSymName() << " has one input, "
           << model.getInRef();
  int64_t batch = sampleBatch(methods.getSample());
  RankedTensorType expected = batched(*example, batch);
  Type actual = block.getArgument(0).getType();
  if (actual != expected) {
    InFlightDiagnostic diag = emitCheckError(methods, Property::Consistency, "L2.5");
    diag << "infer input #0 has type " << actual << ", but a batch of " << batch
         << " examples of " << model.getInRef() << " (domain " << domain
         << ") is " << expected;
    diag.attachNote(field->getLoc()) << "the data field the model reads";
    return diag;
  }
  return success();
}

/// L2.2: the infer DAG stays within the model's declared constraints.
static LogicalResult checkConstraints(MethodsOp methods, ModelSpecOpInterface model) {
  auto fail = [&](Operation *at) {
    InFlightDiagnostic diag = emitCheckError(at, Property::Consistency, "L2.2");
    diag.attachNote(model.getLoc()) << "the constraints of @" << model.getSymName();
    return diag;
  };

  // The output is one batch of the model's `out` domain.
  YieldOp yield = methods.getInferYield();
  int64_t batch = sampleBatch(methods.getSample());
  if (std::optional<ExampleShape> out = exampleShape(model.getOutDomain())) {
    auto actual = cast<RankedTensorType>(yield.getValues()[0].getType());
    RankedTensorType expected = batched(*out, batch);
    auto outDomain = dyn_cast<ExampleDomainTypeInterface>(model.getOutDomain());
    bool isDist = outDomain && outDomain.isDistribution();
    bool match = yield.getValues().size() == 1 &&
                 actual.getShape() == expected.getShape() &&
                 (isDist ? isa<FloatType>(actual.getElementType())
                         : actual.getElementType() == expected.getElementType());
    if (!match)
      return fail(yield) << "the infer DAG yields " << actual << ", but a batch of @"
                         << model.getSymName() << "'s output domain "
                         << model.getOutDomain() << " is " << expected
                         << (isDist ? " (any float type)" : "");
  }

  if (std::optional<int64_t> limit = model.getDepthLimit()) {
    int64_t depth = composedDepth(methods);
    if (depth > *limit)
      return fail(methods) << "the infer DAG composes " << depth
                           << " stages (linear, conv, attn, embed) on its longest path, "
                              "but @"
                           << model.getSymName() << " allows depth(" << *limit << ")";
  }

  if (std::optional<int64_t> limit = model.getWidthLimit()) {
    // The layers that produce the output have the output domain's width,
    // not a hidden one: look through shape-preserving ops from the yield.
    llvm::SmallPtrSet<Operation *, 4> outputLayers;
    for (Value v : yield.getValues()) {
      Operation *op = v.getDefiningOp();
      while (isa_and_nonnull<ActOp, SoftmaxOp, DropoutOp, NormOp, QuantizeOp, ReshapeOp>(op))
        op = op->getOperand(0).getDefiningOp();
      if (op)
        outputLayers.insert(op);
    }
    Operation *widest = nullptr;
    int64_t width = 0;
    methods.getInfer().walk([&](Operation *op) {
      if (outputLayers.contains(op))
        return;
      std::optional<int64_t> w = layerWidth(op);
      if (w && *w > width) {
        width = *w;
        widest = op;
      }
    });
    if (widest && width > *limit)
      return fail(widest) << describeLayer(widest) << " is " << width
                          << " wide, but @" << model.getSymName() << " allows width("
                          << *limit << ")";
  }

  if (std::optional<uint64_t> budget = model.getParamBudget()) {
    uint64_t total = 0;
    SmallVector<ParamInfo> params = collectParams(methods);
    for (const ParamInfo &p : params)
      total = saturatingAdd(total, p.count());
    if (total > *budget) {
      InFlightDiagnostic diag = fail(methods);
      diag << "the infer DAG has " << total << " parameters, over @"
           << model.getSymName() << "'s param_budget(" << *budget << "); by layer: ";
      llvm::MapVector<Operation *, uint64_t> perLayer;
      for (const ParamInfo &p : params)
        perLayer[p.layer] = saturatingAdd(perLayer[p.layer], p.count());
      llvm::MapVector<Operation *, std::string> names = layerNames(methods);
      llvm::interleaveComma(perLayer, diag, [&](const auto &entry) {
        diag << names.lookup(entry.first) << " " << entry.second;
      });
      return diag;
    }
  }

  if (model.isCausal()) {
    AttnOp acausal;
    methods.getInfer().walk([&](AttnOp attn) {
      if (!acausal && !attn.getCausal())
        acausal = attn;
    });
    if (acausal)
      return fail(acausal) << describeLayer(acausal) << " attends to future positions, "
                           << "but @" << model.getSymName()
                           << " is causal; write attn(..., causal)";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Escape hatches from L3: #[l2::backward(evolution(pop: 50))] on the model
//===----------------------------------------------------------------------===//

namespace {
/// A method call as the spec writes it, `name(key: value, ...)`, or as an
/// attribute prints, `#l2.name<key = value, ...>`; values are kept as text.
struct MethodCall {
  std::string name;
  SmallVector<std::pair<std::string, std::string>> args;
  bool positional = false; ///< an argument without a key
};
} // namespace

/// Splits `text` at top-level commas (outside (), [], <> and quotes).
static SmallVector<StringRef> splitTopLevel(StringRef text) {
  SmallVector<StringRef> parts;
  int depth = 0;
  bool quoted = false;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"' && (i == 0 || text[i - 1] != '\\'))
      quoted = !quoted;
    if (quoted)
      continue;
    if (c == '(' || c == '[' || c == '<')
      ++depth;
    else if (c == ')' || c == ']' || c == '>')
      --depth;
    else if (c == ',' && depth == 0) {
      parts.push_back(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  StringRef last = text.drop_front(start).trim();
  if (!last.empty())
    parts.push_back(last);
  return parts;
}

static std::optional<MethodCall> parseCall(StringRef text) {
  text = text.trim();
  text.consume_front("#l2.");
  size_t open = text.find_first_of("(<");
  MethodCall call;
  call.name = text.take_front(open).trim().str();
  if (call.name.empty())
    return std::nullopt;
  if (open == StringRef::npos)
    return call; // a bare name: `adam`
  char close = text[open] == '(' ? ')' : '>';
  if (!text.ends_with(StringRef(&close, 1)))
    return std::nullopt;
  for (StringRef arg : splitTopLevel(text.slice(open + 1, text.size() - 1))) {
    size_t sep = arg.find_first_of(":=");
    if (sep == StringRef::npos) {
      call.positional = true;
      continue;
    }
    call.args.push_back({arg.take_front(sep).trim().str(), arg.drop_front(sep + 1).trim().str()});
  }
  return call;
}

/// Whether the value `actual` (as printed) satisfies the hinted `wanted`:
/// equal numbers, equal words, or a nested call that matches recursively.
static bool matches(StringRef wanted, StringRef actual);

static bool callMatches(const MethodCall &wanted, const MethodCall &actual) {
  if (wanted.name != actual.name)
    return false;
  for (const auto &arg : wanted.args) {
    auto it = llvm::find_if(actual.args, [&](auto &a) { return a.first == arg.first; });
    if (it == actual.args.end() || !matches(arg.second, it->second))
      return false;
  }
  return true;
}

static bool matches(StringRef wanted, StringRef actual) {
  wanted = wanted.trim();
  actual = actual.trim();
  double w, a;
  if (!wanted.getAsDouble(w) && !actual.getAsDouble(a))
    return w == a;
  if (wanted.find_first_of("(<") != StringRef::npos) {
    std::optional<MethodCall> wc = parseCall(wanted), ac = parseCall(actual);
    return wc && ac && callMatches(*wc, *ac);
  }
  return wanted == actual;
}

/// Row L2.2 for the model's escape hatches that force an L2 method
/// (`l2::sample`, `l2::backward`, `l2::update`): the method must be the
/// hinted one, with the hinted arguments. The error points at the hint's
/// model, as the spec asks of a broken escape hatch.
static LogicalResult checkHints(MethodsOp methods, ModelSpecOpInterface model) {
  ArrayAttr hints = model.getHintsAttr();
  if (!hints)
    return success();
  for (Attribute entry : hints) {
    auto hint = dyn_cast<EscapeHatchAttrInterface>(entry);
    if (!hint || hint.getLayer() != "l2")
      continue;
    Attribute method = llvm::StringSwitch<Attribute>(hint.getDirective())
                           .Case("sample", methods.getSample())
                           .Case("backward", methods.getBackward())
                           .Case("update", methods.getUpdate())
                           .Default(Attribute());
    if (!method)
      continue; // other L2 directives are for other parts of the lowering
    std::optional<MethodCall> wanted = parseCall(hint.getArgs());
    auto fail = [&]() {
      InFlightDiagnostic diag = emitCheckError(model, Property::Consistency, "L2.2");
      diag.attachNote(methods.getLoc()) << "the method for @" << model.getSymName();
      return diag;
    };
    if (!wanted || wanted->positional)
      return fail() << "the escape hatch #[l2::" << hint.getDirective() << "("
                    << hint.getArgs()
                    << ")] is not an L2 method written as name(key: value, ...)";
    std::string printed;
    llvm::raw_string_ostream os(printed);
    method.print(os);
    std::optional<MethodCall> actual = parseCall(printed);
    if (!actual || !callMatches(*wanted, *actual))
      return fail() << "the escape hatch #[l2::" << hint.getDirective() << "("
                    << hint.getArgs() << ")] forces the " << hint.getDirective()
                    << " method, but @" << methods.getSymName() << " uses " << method;
  }
  return success();
}

/// L2.7: the forward pass fits the model's latency budget at the reference
/// throughput.
static LogicalResult checkLatency(MethodsOp methods, ModelSpecOpInterface model) {
  std::optional<double> budget = model.getLatencyBudgetMs();
  if (!budget)
    return success();
  FailureOr<ResourceEstimate> est = estimateResources(methods);
  if (failed(est))
    return success(); // reported by the region verifier
  double ms = est->forwardLatencyMs();
  if (ms <= *budget)
    return success();
  InFlightDiagnostic diag = emitCheckError(methods, Property::Resource, "L2.7");
  diag << "the forward pass is estimated at " << est->forwardFlops << " FLOPs, "
       << fmt(ms) << " ms at the reference " << fmt(kReferenceFlopsPerSecond / 1e12)
       << " TFLOP/s (kReferenceFlopsPerSecond), over @" << model.getSymName()
       << "'s latency_budget(" << fmt(*budget) << "ms)";
  diag.attachNote(model.getLoc()) << "the constraints of @" << model.getSymName();
  return diag;
}

LogicalResult MethodsOp::verifySymbolUses(SymbolTableCollection &symbols) {
  Operation *target = symbols.lookupNearestSymbolFrom(*this, getModelAttr());
  auto model = dyn_cast_or_null<ModelSpecOpInterface>(target);
  if (!model) {
    InFlightDiagnostic diag = emitCheckError(*this, Property::Safety, "L3.1");
    diag << "methods for " << getModelAttr() << ": ";
    if (target)
      diag << "the symbol is a '" << target->getName() << "', not a model (an op such as l3.model that declares what is trained)";
    else
      diag << "no such model";
    return diag;
  }
  // A malformed infer region is reported by the region verifier; the rows
  // below need its block and its yield.
  YieldOp yield = getInferYield();
  if (!yield || yield.getValues().empty() || getInferBlock().getNumArguments() == 0)
    return success();
  if (failed(checkData(*this, model, symbols)) || failed(checkConstraints(*this, model)) ||
      failed(checkHints(*this, model)) || failed(checkLatency(*this, model)))
    return failure();
  return success();
}
