//===- ParserLayers.cpp - The .syn layers and methods blocks --------------===//
//
// The layer calls of an `infer` body (linear, conv, attn, norm, act,
// embed, pool, dropout, softmax, the region layers, ...) built as l2 ops,
// and the `methods for` block that holds them.
//
//===----------------------------------------------------------------------===//
#include "Parser.h"
#include "ParserUtil.h"

#include "synpl/Dialect/L2/L2Dialect.h"
#include "synpl/Dialect/L2/L2Model.h"
#include "synpl/Dialect/L2/L2Ops.h"
#include "synpl/Dialect/L3/L3Ops.h"
#include "synpl/Dialect/L1/L1Dialect.h"
#include "synpl/Dialect/L1/L1Ops.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::syn;
using namespace synpl::syn::detail;

//===--- Layers
//------------------------------------------------------------===//

static constexpr StringRef kLayers[] = {
    "linear",   "conv",       "attn",      "norm",    "act",
    "embed",    "pool",       "dropout",   "softmax", "flatten",
    "quantize", "relu",       "gelu",      "silu",    "swish",
    "residual", "sequential", "recurrent", "mixture", "diffusion_chain"};

/// Gives `op` its result type from its shape rule; a rule that does not
/// hold is reported as row L2.1 at the layer's token.
FailureOr<Value> Parser::finishLayer(Operation *op) {
  auto rule = cast<InferTypeOpInterface>(op);
  SmallVector<Type> inferred;
  if (failed(rule.inferReturnTypes(
          ctx, op->getLoc(), op->getOperands(), op->getRawDictionaryAttrs(),
          op->getPropertiesStorage(), op->getRegions(), inferred)) ||
      inferred.size() != 1)
    return failure();
  op->getResult(0).setType(inferred.front());
  return op->getResult(0);
}

FailureOr<Value> Parser::buildLayers(const std::vector<SynValue> &layers,
                                     Value x) {
  for (const SynValue &layer : layers) {
    FailureOr<Value> next = buildLayer(layer, x);
    if (failed(next))
      return failure();
    x = *next;
  }
  return x;
}

/// One element of `sequential [...]`: a layer primitive (`linear(784, 256)`,
/// a bare activation `gelu`), or a nested `sequential [...]` /
/// `residual [...]` (x + block(x), merged with l2.add).
FailureOr<Value> Parser::buildLayer(const SynValue &layer, Value x) {
  StringRef name = layer.tok.spelling;
  if ((layer.kind != SynValue::Call && layer.kind != SynValue::Word) ||
      !llvm::is_contained(kLayers, name)) {
    if (layer.kind == SynValue::Call || layer.kind == SynValue::Word)
      return emitError(layer.loc, "unknown layer '")
             << name << "'; expected " << listWords(kLayers);
    return emitError(layer.loc, "expected a layer (")
           << listWords(kLayers) << "), found " << describeValue(layer);
  }
  Location at = layer.loc;
  if (!layer.hints.empty() &&
      llvm::is_contained(
          {"recurrent", "mixture", "diffusion_chain", "sequential", "residual"},
          name))
    return emitError(layer.hintsLoc, "an escape hatch attaches to a layer "
                                     "primitive, not to '")
           << name << "'";
  if (name == "recurrent" || name == "mixture" || name == "diffusion_chain")
    return buildRegionLayer(layer, x);
  if (name == "sequential" || name == "residual") {
    // `sequential [...]` reads as a call with one list argument when written
    // `sequential([...])`; a bare `residual` inside a list has no body.
    const SynValue *body = nullptr;
    if (layer.kind == SynValue::Call && layer.args.size() == 1 &&
        layer.args[0].key.empty() && layer.args[0].value.kind == SynValue::List)
      body = &layer.args[0].value;
    if (!body)
      return emitError(layer.loc, "'")
             << name << "' takes a list of layers: " << name << " [...]";
    FailureOr<Value> y = buildLayers(body->items, x);
    if (failed(y) || name == "sequential")
      return y;
    auto add = l2::AddOp::create(builder, at, x.getType(), x, *y, StringAttr(),
                                 ArrayAttr());
    return finishLayer(add);
  }
  // `gelu` is `act(gelu)`.
  SynValue call = layer;
  if (llvm::is_contained({"relu", "gelu", "silu", "swish"}, name)) {
    if (layer.kind == SynValue::Call)
      return emitError(layer.loc, "'")
             << name << "' takes no arguments; "
             << "write " << name << " or act(" << name << ")";
    call.args.clear();
    SynArg fn{StringRef(), layer.loc, layer};
    call.args.push_back(std::move(fn));
    name = "act";
  }
  ArrayAttr hints =
      layer.hints.empty() ? ArrayAttr() : builder.getArrayAttr(layer.hints);
  // Layers with parameters are labelled for checkpoints and per-parameter
  // overrides: fc1, fc2 (linear), conv1, attn1, norm1, embed1.
  auto label = [&](StringRef prefix) {
    return builder.getStringAttr(prefix + Twine(++layerCounts[prefix]));
  };
  SmallVector<const SynValue *> a;
  auto posInt =
      [&](unsigned i, StringRef p,
          std::optional<int64_t> dflt = {}) -> FailureOr<IntegerAttr> {
    if (!a[i] && dflt)
      return builder.getI64IntegerAttr(*dflt);
    if (need(call, a[i], p))
      return failure();
    FailureOr<int64_t> v = intArg(a[i], p);
    if (failed(v))
      return failure();
    if (*v <= 0 && !(dflt && *dflt == 0))
      return emitError(a[i]->loc, "argument '")
             << p << "' of '" << name << "' must be positive, got " << *v;
    if (*v < 0)
      return emitError(a[i]->loc, "argument '")
             << p << "' of '" << name << "' must not be negative, got " << *v;
    return builder.getI64IntegerAttr(*v);
  };
  Operation *op = nullptr;
  Type t = x.getType();
  if (name == "linear") {
    if (bindArgs(call, {"in", "out"}, a))
      return failure();
    SYN_TRY(in, posInt(0, "in"));
    SYN_TRY(out, posInt(1, "out"));
    // `sequential` feeds images to a linear layer as flat rows: a
    // [N, d1, ..., dk] input whose d1*...*dk is `in` is flattened first.
    if (auto tensor = dyn_cast<RankedTensorType>(t);
        tensor && tensor.hasStaticShape() && tensor.getRank() > 2 &&
        tensor.getShape().back() != in.getInt()) {
      int64_t flat = 1;
      for (int64_t d : tensor.getShape().drop_front()) {
        if (d <= 0 || flat > in.getInt() / d) {
          flat = -1; // larger than `in` (or empty): no flatten
          break;
        }
        flat *= d;
      }
      if (flat == in.getInt()) {
        auto flatten =
            l2::FlattenOp::create(builder, at, t, x, StringAttr(), ArrayAttr());
        FailureOr<Value> f = finishLayer(flatten);
        if (failed(f))
          return failure();
        x = *f;
        t = x.getType();
      }
    }
    op = l2::LinearOp::create(builder, at, t, x, in, out, label("fc"), hints);
  } else if (name == "conv") {
    if (bindArgs(call, {"in_ch", "out_ch", "kernel", "stride", "padding"}, a))
      return failure();
    SYN_TRY(inCh, posInt(0, "in_ch"));
    SYN_TRY(outCh, posInt(1, "out_ch"));
    SYN_TRY(kernel, posInt(2, "kernel"));
    SYN_TRY(stride, posInt(3, "stride", 1));
    SYN_TRY(padding, posInt(4, "padding", 0));
    op = l2::ConvOp::create(builder, at, t, x, inCh, outCh, kernel, stride,
                            padding, label("conv"), hints);
  } else if (name == "attn") {
    if (bindArgs(call, {"heads", "dim", "causal"}, a))
      return failure();
    SYN_TRY(heads, posInt(0, "heads"));
    SYN_TRY(dim, posInt(1, "dim"));
    bool causal = false;
    if (a[2]) {
      SYN_TRY(c, boolArg(a[2], "causal"));
      causal = c;
    }
    op = l2::AttnOp::create(builder, at, t, x, heads, dim,
                            causal ? builder.getUnitAttr() : UnitAttr(),
                            label("attn"), hints);
  } else if (name == "norm") {
    if (bindArgs(call, {"kind"}, a) || need(call, a[0], "kind"))
      return failure();
    // norm(layer), norm(rms), norm(group(n))
    const SynValue *kind = a[0];
    IntegerAttr groups;
    StringRef word = kind->tok.spelling;
    if (kind->kind == SynValue::Call && word == "group") {
      SynValue groupCall = *kind;
      SmallVector<const SynValue *> g;
      if (bindArgs(groupCall, {"n"}, g) || need(groupCall, g[0], "n"))
        return failure();
      FailureOr<int64_t> n = intArg(g[0], "n");
      if (failed(n))
        return failure();
      if (*n <= 0)
        return emitError(g[0]->loc, "group(n) needs a positive n, got ") << *n;
      groups = builder.getI64IntegerAttr(*n);
    } else {
      SmallVector<StringRef> kinds{"layer", "rms"};
      if (kind->kind == SynValue::Word && word == "group")
        return emitError(kind->loc, "group normalization needs its number "
                                    "of groups: group(n)");
      FailureOr<StringRef> w =
          wordArg(kind, "norm kind", {"layer", "group(n)", "rms"});
      if (failed(w))
        return failure();
    }
    op = l2::NormOp::create(
        builder, at, t, x,
        l2::NormKindAttr::get(ctx, *l2::symbolizeNormKind(word)), groups,
        label("norm"), hints);
  } else if (name == "act") {
    if (bindArgs(call, {"fn"}, a) || need(call, a[0], "fn"))
      return failure();
    SYN_TRY(fn, wordArg(a[0], "activation", L2_ENUM_WORDS(ActFn)));
    op = l2::ActOp::create(builder, at, t, x,
                           l2::ActFnAttr::get(ctx, *l2::symbolizeActFn(fn)),
                           StringAttr(), hints);
  } else if (name == "embed") {
    if (bindArgs(call, {"vocab", "dim", "positions"}, a))
      return failure();
    SYN_TRY(vocab, posInt(0, "vocab"));
    SYN_TRY(dim, posInt(1, "dim"));
    IntegerAttr positions;
    if (a[2]) {
      SYN_TRY(n, posInt(2, "positions"));
      positions = n;
    }
    op = l2::EmbedOp::create(builder, at, t, x, vocab, dim, positions, label("embed"),
                             hints);
  } else if (name == "pool") {
    if (bindArgs(call, {"kind", "kernel"}, a) || need(call, a[0], "kind"))
      return failure();
    SYN_TRY(kind, wordArg(a[0], "pool kind", L2_ENUM_WORDS(PoolKind)));
    SYN_TRY(kernel, posInt(1, "kernel"));
    op = l2::PoolOp::create(
        builder, at, t, x,
        l2::PoolKindAttr::get(ctx, *l2::symbolizePoolKind(kind)), kernel,
        StringAttr(), hints);
  } else if (name == "dropout") {
    if (bindArgs(call, {"p"}, a) || need(call, a[0], "p"))
      return failure();
    SYN_TRY(p, realArg(a[0], "p"));
    if (!(p >= 0 && p < 1))
      return emitError(a[0]->loc, "dropout's p must be in [0, 1), got ")
             << a[0]->tok.spelling;
    op = l2::DropoutOp::create(builder, at, t, x, builder.getF64FloatAttr(p),
                               StringAttr(), hints);
  } else if (name == "quantize") {
    if (bindArgs(call, {"bits"}, a))
      return failure();
    SYN_TRY(bits, posInt(0, "bits"));
    op = l2::QuantizeOp::create(builder, at, t, x, bits, StringAttr(), hints);
  } else { // softmax, flatten
    if (bindArgs(call, {}, a))
      return failure();
    if (name == "softmax")
      op = l2::SoftmaxOp::create(builder, at, t, x, StringAttr(), hints);
    else
      op = l2::FlattenOp::create(builder, at, t, x, StringAttr(), hints);
  }
  return finishLayer(op);
}

/// Fills `region` with one block taking `input`, the DAG `body`, and an
/// l2.yield of its result (at the body's closing bracket).
FailureOr<Value> Parser::buildSubDag(Region &region, Type input,
                                     const SynValue &body) {
  Block &block = region.emplaceBlock();
  Value arg = block.addArgument(input, body.loc);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&block);
  FailureOr<Value> y = buildLayer(body, arg);
  if (failed(y))
    return failure();
  l2::YieldOp::create(builder, body.close, ValueRange{*y});
  return *y;
}

/// The infer methods with bodies:
///   recurrent(cell: <infer>, steps: n | until(<pred>, max_steps: n))
///   diffusion_chain(steps: n, noise: linear | cosine | sigmoid,
///                   denoiser: <infer>)
///   mixture(experts: [<infer>, ...], gate: <infer>, top_k: k)
/// Each <infer> is a layer or `sequential [...]`; its block takes the
/// op's input (the recurrent state, the noised sample).
FailureOr<Value> Parser::buildRegionLayer(const SynValue &layer, Value x) {
  StringRef name = layer.tok.spelling;
  Location at = layer.loc;
  SmallVector<const SynValue *> a;
  auto positive = [&](const SynValue *v, StringRef p) -> FailureOr<int64_t> {
    FailureOr<int64_t> n = intArg(v, p);
    if (succeeded(n) && *n <= 0)
      return emitError(v->loc, "argument '")
             << p << "' of '" << name << "' must be positive, got " << *n;
    return n;
  };
  if (layer.kind != SynValue::Call)
    return emitError(at, "'")
           << name << "' needs its arguments: " << name << "(...)";
  if (name == "recurrent") {
    if (bindArgs(layer, {"cell", "steps", "max_steps"}, a) ||
        need(layer, a[0], "cell") || need(layer, a[1], "steps"))
      return failure();
    IntegerAttr steps, maxSteps;
    StringAttr until;
    if (a[1]->kind == SynValue::Call && a[1]->tok.spelling == "until") {
      SmallVector<const SynValue *> u;
      if (bindArgs(*a[1], {"pred", "max_steps"}, u) ||
          need(*a[1], u[0], "pred"))
        return failure();
      if (u[0]->kind != SynValue::Str && u[0]->kind != SynValue::Word)
        return emitError(u[0]->loc, "until's predicate is a string or a "
                                    "name, got ")
               << describeValue(*u[0]);
      until = builder.getStringAttr(u[0]->kind == SynValue::Str
                                        ? u[0]->tok.getStringValue()
                                        : u[0]->tok.spelling.str());
      const SynValue *bound = u[1] ? u[1] : a[2];
      if (u[1] && a[2])
        return emitError(a[2]->loc, "max_steps is given twice");
      if (bound) {
        FailureOr<int64_t> n = positive(bound, "max_steps");
        if (failed(n))
          return failure();
        maxSteps = builder.getI64IntegerAttr(*n);
      }
    } else {
      if (a[2])
        return emitError(a[2]->loc, "max_steps bounds until(<pred>); "
                                    "steps is already a count");
      FailureOr<int64_t> n = positive(a[1], "steps");
      if (failed(n))
        return failure();
      steps = builder.getI64IntegerAttr(*n);
    }
    auto op = l2::RecurrentOp::create(builder, at, x.getType(), x, steps, until,
                                      maxSteps, StringAttr());
    if (failed(buildSubDag(op.getCell(), x.getType(), *a[0])))
      return failure();
    return op.getResult();
  }
  if (name == "diffusion_chain") {
    if (bindArgs(layer, {"steps", "noise", "denoiser"}, a) ||
        need(layer, a[0], "steps") || need(layer, a[1], "noise") ||
        need(layer, a[2], "denoiser"))
      return failure();
    FailureOr<int64_t> steps = positive(a[0], "steps");
    if (failed(steps))
      return failure();
    FailureOr<StringRef> noise =
        wordArg(a[1], "noise schedule", L2_ENUM_WORDS(NoiseSchedule));
    if (failed(noise))
      return failure();
    auto op = l2::DiffusionChainOp::create(
        builder, at, x.getType(), x, builder.getI64IntegerAttr(*steps),
        l2::NoiseScheduleAttr::get(ctx, *l2::symbolizeNoiseSchedule(*noise)),
        StringAttr());
    if (failed(buildSubDag(op.getDenoiser(), x.getType(), *a[2])))
      return failure();
    return op.getResult();
  }
  // mixture
  if (bindArgs(layer, {"experts", "gate", "top_k"}, a) ||
      need(layer, a[0], "experts") || need(layer, a[1], "gate"))
    return failure();
  if (a[0]->kind != SynValue::List || a[0]->items.empty())
    return emitError(a[0]->loc, "argument 'experts' must be a non-empty list "
                                "of infer DAGs, got ")
           << describeValue(*a[0]);
  IntegerAttr topK;
  if (a[2]) {
    FailureOr<int64_t> k = positive(a[2], "top_k");
    if (failed(k))
      return failure();
    topK = builder.getI64IntegerAttr(*k);
  }
  auto op = l2::MixtureOp::create(builder, at, x.getType(), x, topK,
                                  StringAttr(), a[0]->items.size());
  Type result;
  for (auto [i, expert] : llvm::enumerate(a[0]->items)) {
    FailureOr<Value> y = buildSubDag(op.getExperts()[i], x.getType(), expert);
    if (failed(y))
      return failure();
    if (!result)
      result = y->getType();
  }
  op->getResult(0).setType(result);
  if (failed(buildSubDag(op.getGate(), x.getType(), *a[1])))
    return failure();
  return op.getResult();
}

/// methods ::= 'methods' 'for' ident '{' { 'sample' ':' method
///                                       | 'infer' ':' layer
///                                       | 'backward' ':' method
///                                       | 'update' ':' method
///                                       | 'train' ':' loop } '}'
/// loop ::= 'loop' '(' 'epochs' ':' n [',' 'evaluate' ':' split]
///                     [',' 'checkpoint_every' ':' n] ')'
ParseResult Parser::parseMethods() {
  Location methodsLoc = loc();
  consume(); // 'methods'
  if (!tok.isKeyword("for"))
    return expected("'for' after 'methods' (methods for <model> { ... })");
  consume();
  Location modelLoc = loc();
  StringRef modelName;
  if (parseIdent(modelName, "the model's name after 'methods for'"))
    return failure();
  auto module = cast<ModuleOp>(builder.getInsertionBlock()->getParentOp());
  Operation *named = SymbolTable::lookupSymbolIn(module, modelName);
  auto model = dyn_cast_or_null<l3::ModelOp>(named);
  if (named && !model) {
    InFlightDiagnostic diag = emitError(modelLoc, "'")
                              << modelName << "' is not a model; 'methods "
                              << "for' names the model it trains";
    diag.attachNote(named->getLoc())
        << "'" << modelName << "' is declared here";
    return diag;
  }
  if (!model) {
    SmallVector<StringRef> models;
    for (auto m : module.getOps<l3::ModelOp>())
      models.push_back(m.getSymName());
    InFlightDiagnostic diag = emitError(modelLoc, "unknown model '")
                              << modelName << "' in 'methods for'";
    if (models.empty())
      diag << "; no model is declared before it";
    else
      diag << "; the models declared before it are " << listWords(models);
    return diag;
  }
  Location open = loc();
  if (expect(Token::LBrace, "to open the methods block"))
    return failure();
  std::optional<SynValue> sample, infer, backward, update, train;
  Location inferLoc = open;
  while (!tok.is(Token::RBrace)) {
    if (tok.is(Token::Eof) || startsTopLevelForm(/*goalIsEntry=*/false))
      return unclosedBody("methods", modelName, open);
    Location keyLoc = loc();
    StringRef key;
    if (parseIdent(key, "'sample', 'infer', 'backward', 'update', 'train' or '}'"))
      return failure();
    std::optional<SynValue> *slot =
        llvm::StringSwitch<std::optional<SynValue> *>(key)
            .Case("sample", &sample)
            .Case("infer", &infer)
            .Case("backward", &backward)
            .Case("update", &update)
            .Case("train", &train)
            .Default(nullptr);
    if (!slot)
      return emitError(keyLoc, "unknown methods entry '")
             << key << "'; expected sample, infer, backward, update or train";
    if (*slot)
      return emitError(keyLoc, "duplicate '")
             << key << "' in methods for '" << modelName << "'";
    if (key == "infer")
      inferLoc = keyLoc;
    if (expect(Token::Colon, ("after '" + key + "'").str()))
      return failure();
    slot->emplace(loc());
    if (parseValue(**slot))
      return failure();
  }
  Location close = loc();
  consume(); // '}'
  for (auto [entry, what] :
       {std::make_pair(&sample, "sample"), std::make_pair(&infer, "infer"),
        std::make_pair(&backward, "backward"),
        std::make_pair(&update, "update")})
    if (!*entry)
      return emitError(close, "methods for '")
             << modelName << "' has no '" << what << ":' entry";

  checkpointUses.clear();
  overrideUses.clear();
  FailureOr<Attribute> sampleAttr = buildMethod(*sample, Family::Sample);
  if (failed(sampleAttr))
    return failure();
  FailureOr<Attribute> backwardAttr = buildMethod(*backward, Family::Backward);
  if (failed(backwardAttr))
    return failure();
  FailureOr<Attribute> updateAttr = buildMethod(*update, Family::Update);
  if (failed(updateAttr))
    return failure();
  // `train: loop(epochs: 3, evaluate: t10k, checkpoint_every: 500)`, optional
  // (docs/training.md); `evaluate` is a split name (a word or a string).
  l2::TrainLoopAttr trainAttr;
  if (train) {
    const SynValue &call = *train;
    if (call.kind != SynValue::Call || call.tok.spelling != "loop")
      return emitError(call.loc, "'train' takes loop(epochs: n, evaluate: "
                                 "<split>, checkpoint_every: n, steps: n), got ")
             << describeValue(call);
    SmallVector<const SynValue *> a;
    if (bindArgs(call, {"epochs", "evaluate", "checkpoint_every", "steps"}, a) ||
        need(call, a[0], "epochs"))
      return failure();
    FailureOr<int64_t> epochs = intArg(a[0], "epochs");
    if (failed(epochs))
      return failure();
    if (*epochs < 1)
      return emitError(a[0]->loc, "argument 'epochs' must be positive, got ")
             << *epochs;
    std::string split;
    if (a[1]) {
      if (a[1]->kind != SynValue::Word && a[1]->kind != SynValue::Str)
        return emitError(a[1]->loc, "argument 'evaluate' must name a split "
                                    "(t10k, none, ...), got ")
               << describeValue(*a[1]);
      split = a[1]->kind == SynValue::Str ? a[1]->tok.getStringValue()
                                          : a[1]->tok.spelling.str();
    }
    int64_t every = 0;
    if (a[2]) {
      FailureOr<int64_t> e = intArg(a[2], "checkpoint_every");
      if (failed(e))
        return failure();
      every = *e;
    }
    int64_t steps = 0;
    if (a[3]) {
      FailureOr<int64_t> n = intArg(a[3], "steps");
      if (failed(n))
        return failure();
      if (*n < 1)
        return emitError(a[3]->loc, "argument 'steps' must be positive, got ") << *n;
      steps = *n;
    }
    auto emit = [&] { return emitError(call.loc); };
    trainAttr = l2::TrainLoopAttr::getChecked(
        llvm::function_ref<InFlightDiagnostic()>(emit), ctx, *epochs,
        StringRef(split), every, steps);
    if (!trainAttr)
      return failure();
  }

  // The infer input: one batch of the model's `in` field.
  Type domain;
  if (TypeAttr inline_ = model.getInDomainAttr())
    domain = inline_.getValue();
  SymbolRefAttr inRef = model.getInRef();
  if (!domain) {
    auto data = dyn_cast_or_null<l3::DataOp>(
        SymbolTable::lookupSymbolIn(module, inRef.getRootReference()));
    Operation *field = nullptr;
    if (data && inRef.getNestedReferences().size() == 1)
      field = SymbolTable::lookupSymbolIn(data, inRef.getLeafReference());
    if (auto f = dyn_cast_or_null<l3::FieldOp>(field))
      domain = f.getDomain();
  }
  if (!domain) {
    InFlightDiagnostic diag =
        emitError(inferLoc, "cannot type the infer input: model '")
        << modelName << "' reads " << inRef
        << ", which is not a data field declared before it";
    diag.attachNote(model.getLoc()) << "the model is declared here";
    return diag;
  }
  auto example = exampleShape(domain);
  if (!example) {
    InFlightDiagnostic diag = emitError(inferLoc, "cannot type the infer "
                                                  "input: model '")
                              << modelName << "' reads " << inRef
                              << " of domain " << domain
                              << ", which has no tensor layout";
    diag.attachNote(model.getLoc()) << "the model is declared here";
    return diag;
  }
  int64_t batch = l2::sampleBatch(*sampleAttr);
  SmallVector<int64_t> shape{batch};
  shape.append(example->shape);
  auto inputType = RankedTensorType::get(shape, example->elementType);

  std::string symName = (inRef.getRootReference().getValue() + "_method").str();
  for (unsigned k = 2; SymbolTable::lookupSymbolIn(module, symName); ++k)
    symName =
        (inRef.getRootReference().getValue() + "_method" + Twine(k)).str();
  auto methods =
      l2::MethodsOp::create(builder, methodsLoc, builder.getStringAttr(symName),
                            FlatSymbolRefAttr::get(ctx, modelName), *sampleAttr,
                            *backwardAttr, *updateAttr, trainAttr);
  methodsUses.try_emplace(methodsLoc,
                          MethodsUse{sample->loc, backward->loc, update->loc,
                                     checkpointUses, overrideUses});
  Block &body = methods.getInfer().emplaceBlock();
  Value x = body.addArgument(inputType, infer->loc);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&body);
  layerCounts.clear();
  FailureOr<Value> y = buildLayer(*infer, x);
  if (failed(y))
    return failure();
  l2::YieldOp::create(builder, infer->close, ValueRange{*y});
  return success();
}
