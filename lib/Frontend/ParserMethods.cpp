//===- ParserMethods.cpp - The .syn method calls (L2) ---------------------===//
//
// The values of a `methods for` block (numbers, words, lists, calls with
// positional and keyword arguments) and the method families they name:
// sampling, backward, update rules and their schedules, built as l2
// attributes with every argument checked and located.
//
//===----------------------------------------------------------------------===//
#include "Parser.h"
#include "ParserUtil.h"

#include "synpl/Dialect/L2/L2Dialect.h"
#include "synpl/Dialect/L2/L2Model.h"
#include "synpl/Dialect/L2/L2Ops.h"
#include "synpl/Dialect/L1/L1Dialect.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Support/Units.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::syn;
using namespace synpl::syn::detail;

//===----------------------------------------------------------------------===//
// methods for (L2)
//===----------------------------------------------------------------------===//

std::string synpl::syn::detail::listWords(ArrayRef<StringRef> words, StringRef conjunction) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i)
      out += i + 1 == words.size() ? (" " + conjunction + " ").str() : ", ";
    out += words[i].str();
  }
  return out;
}

/// value ::= int | real | count | string | ident [ '(' args ')' ]
///         | ('sequential' | 'residual') '[' [ value {',' value} ] ']'
///         | '[' [ value {',' value} ] ']' | '{' args '}'
/// A layer in a list may carry escape hatches: `#[l1::on(gpu_1)] linear(...)`.
ParseResult Parser::parseValue(SynValue &value) {
  if (valueDepth >= kMaxDomainDepth)
    return error("method arguments nested more than " +
                 llvm::Twine(kMaxDomainDepth) + " levels deep");
  struct DepthGuard {
    unsigned &depth;
    explicit DepthGuard(unsigned &d) : depth(d) { ++depth; }
    ~DepthGuard() { --depth; }
  } depthGuard(valueDepth);
  if (tok.is(Token::HashLSquare)) {
    value.hintsLoc = loc();
    size_t before = hatchUses.size();
    if (parseHatches(value.hints))
      return failure();
    // A layer's hatch is verified with the layer op, where it lands.
    hatchUses.truncate(before);
  }
  value.tok = tok;
  value.loc = loc();
  value.close = value.loc;
  switch (tok.kind) {
  case Token::Integer:
  case Token::Suffixed:
    value.kind = SynValue::Int;
    consume();
    return success();
  case Token::Float:
    value.kind = SynValue::Real;
    consume();
    return success();
  case Token::String:
    value.kind = SynValue::Str;
    consume();
    return success();
  case Token::Identifier:
    consume();
    // `sequential [...]`, `residual [...]`: the spec's trace writes the list
    // without parentheses; it reads as the call's one argument.
    if ((value.tok.spelling == "sequential" ||
         value.tok.spelling == "residual") &&
        tok.is(Token::LSquare)) {
      value.kind = SynValue::Call;
      SynArg arg{StringRef(), loc(), SynValue(loc())};
      if (parseValue(arg.value))
        return failure();
      value.close = arg.value.close;
      value.args.push_back(std::move(arg));
      return success();
    }
    if (!tok.is(Token::LParen)) {
      value.kind = SynValue::Word;
      return success();
    }
    value.kind = SynValue::Call;
    consume(); // '('
    return parseArgs(value, Token::RParen);
  case Token::LSquare:
    value.kind = SynValue::List;
    consume();
    while (!tok.is(Token::RSquare)) {
      value.items.emplace_back(loc());
      if (parseValue(value.items.back()))
        return failure();
      if (!consumeIf(Token::Comma))
        break;
    }
    value.close = loc();
    return expect(Token::RSquare, "to close the list");
  case Token::LBrace:
    value.kind = SynValue::Record;
    consume();
    return parseArgs(value, Token::RBrace);
  default:
    return expected("a value (a number, a name, a method or a list)");
  }
}

/// args ::= [ arg {',' arg} ]     arg ::= [ ident ':' ] value
ParseResult Parser::parseArgs(SynValue &call, Token::Kind close) {
  while (!tok.is(close)) {
    SynArg arg{StringRef(), loc(), SynValue(loc())};
    if (tok.is(Token::Identifier) && peek().is(Token::Colon)) {
      arg.key = tok.spelling;
      consume();
      consume(); // ':'
    }
    if (parseValue(arg.value))
      return failure();
    call.args.push_back(std::move(arg));
    if (!consumeIf(Token::Comma))
      break;
  }
  call.close = loc();
  return expect(close, close == Token::RParen ? "to close the argument list"
                                              : "to close the record");
}

ParseResult Parser::bindArgs(const SynValue &call, ArrayRef<StringRef> params,
                             SmallVectorImpl<const SynValue *> &slots) {
  StringRef name = call.tok.spelling;
  slots.assign(params.size(), nullptr);
  size_t next = 0;
  for (const SynArg &arg : call.args) {
    size_t index;
    if (arg.key.empty()) {
      while (next < params.size() && slots[next])
        ++next;
      if (next == params.size()) {
        if (params.empty())
          return emitError(arg.value.loc, "'")
                 << name << "' takes no arguments";
        return emitError(arg.value.loc, "too many arguments to '")
               << name << "'; it takes " << listWords(params, "and");
      }
      index = next;
    } else {
      auto it = llvm::find(params, arg.key);
      if (it == params.end()) {
        if (params.empty())
          return emitError(arg.keyLoc, "'") << name << "' takes no arguments";
        return emitError(arg.keyLoc, "unknown argument '")
               << arg.key << "' to '" << name << "'; expected "
               << listWords(params);
      }
      index = it - params.begin();
      if (slots[index])
        return emitError(arg.keyLoc, "duplicate argument '")
               << arg.key << "' to '" << name << "'";
    }
    slots[index] = &arg.value;
  }
  return success();
}

ParseResult Parser::need(const SynValue &call, const SynValue *arg,
                         StringRef param) {
  if (arg)
    return success();
  return emitError(call.close, "'")
         << call.tok.spelling << "' needs argument '" << param << "'";
}

std::string synpl::syn::detail::describeValue(const SynValue &v) {
  switch (v.kind) {
  case SynValue::Call:
    return ("'" + v.tok.spelling + "(...)'").str();
  case SynValue::List:
    return "a list";
  case SynValue::Record:
    return "a record";
  default:
    return ("'" + v.tok.spelling + "'").str();
  }
}

FailureOr<int64_t> Parser::intArg(const SynValue *v, StringRef param) {
  int64_t value = 0;
  if (v->kind == SynValue::Int) {
    if (v->tok.is(Token::Integer)) {
      if (!v->tok.spelling.getAsInteger(10, value))
        return value;
    } else if (std::optional<uint64_t> n = synpl::parseCount(v->tok.spelling);
               n && *n <= uint64_t(INT64_MAX)) {
      return int64_t(*n);
    }
    return emitError(v->loc, "argument '")
           << param << "' must be an integer that fits in 64 bits (a count "
           << "may end in K, M or G), got " << describeValue(*v);
  }
  return emitError(v->loc, "argument '")
         << param << "' must be an integer, got " << describeValue(*v);
}

FailureOr<double> Parser::realArg(const SynValue *v, StringRef param) {
  if ((v->kind == SynValue::Int && v->tok.is(Token::Integer)) ||
      v->kind == SynValue::Real) {
    std::string text = v->tok.spelling.str();
    errno = 0;
    char *end = nullptr;
    double value = std::strtod(text.c_str(), &end);
    if (errno != ERANGE && std::isfinite(value) &&
        end == text.c_str() + text.size())
      return value;
    return emitError(v->loc, "number '")
           << v->tok.spelling << "' is out of range";
  }
  return emitError(v->loc, "argument '")
         << param << "' must be a number, got " << describeValue(*v);
}

FailureOr<bool> Parser::boolArg(const SynValue *v, StringRef param) {
  if (v->kind == SynValue::Word &&
      (v->tok.spelling == "true" || v->tok.spelling == "false"))
    return v->tok.spelling == "true";
  return emitError(v->loc, "argument '")
         << param << "' must be true or false, got " << describeValue(*v);
}

FailureOr<StringRef> Parser::wordArg(const SynValue *v, StringRef param,
                                     ArrayRef<StringRef> known) {
  if (v->kind == SynValue::Word && llvm::is_contained(known, v->tok.spelling))
    return v->tok.spelling;
  if (v->kind == SynValue::Word)
    return emitError(v->loc, "unknown ") << param << " '" << v->tok.spelling
                                         << "'; expected " << listWords(known);
  return emitError(v->loc, "argument '")
         << param << "' must be one of " << listWords(known) << ", got "
         << describeValue(*v);
}

static constexpr StringRef kSampleMethods[] = {"epoch_shuffle", "stream_window",
                                               "curriculum", "replay",
                                               "distributed_shard"};
static constexpr StringRef kBackwardMethods[] = {
    "autodiff",         "evolution",    "dfa",   "reinforce",
    "straight_through", "zeroth_order", "hybrid"};
static constexpr StringRef kUpdateMethods[] = {
    "sgd",           "adam", "muon",      "lion",          "schedule",
    "gradient_clip", "ema",  "per_param", "param_override"};

static StringRef familyName(Family family) {
  switch (family) {
  case Family::Sample:
    return "sample";
  case Family::Backward:
    return "backward";
  case Family::Update:
    return "update";
  }
  return "";
}

/// Builds the method attribute a call names, checked by the attribute's own
/// verifier (located at the method's name).
FailureOr<Attribute> Parser::buildMethod(const SynValue &call, Family family) {
  ArrayRef<StringRef> known = family == Family::Sample ? kSampleMethods
                              : family == Family::Backward
                                  ? ArrayRef<StringRef>(kBackwardMethods)
                                  : ArrayRef<StringRef>(kUpdateMethods);
  StringRef name = call.tok.spelling;
  if (!call.hints.empty())
    return emitError(call.hintsLoc, "an escape hatch inside 'methods for' "
                                    "attaches to a layer, not to a method");
  if (call.kind != SynValue::Call && call.kind != SynValue::Word)
    return emitError(call.loc, "expected a ")
           << familyName(family) << " method (" << listWords(known)
           << "), found " << describeValue(call);
  if (!llvm::is_contained(known, name))
    return emitError(call.loc, "unknown ")
           << familyName(family) << " method '" << name << "'; expected "
           << listWords(known);
  Location at = call.loc;
  auto emit = [&] { return emitError(at); };
  SmallVector<const SynValue *> a;
  auto bind = [&](ArrayRef<StringRef> params) {
    return bindArgs(call, params, a);
  };
  auto i64 = [&](unsigned i, StringRef p,
                 std::optional<int64_t> dflt = {}) -> FailureOr<int64_t> {
    if (!a[i] && dflt)
      return *dflt;
    if (need(call, a[i], p))
      return failure();
    return intArg(a[i], p);
  };
  auto f64 = [&](unsigned i, StringRef p,
                 std::optional<double> dflt = {}) -> FailureOr<APFloat> {
    if (!a[i] && dflt)
      return APFloat(*dflt);
    if (need(call, a[i], p))
      return failure();
    FailureOr<double> v = realArg(a[i], p);
    if (failed(v))
      return failure();
    return APFloat(*v);
  };
  auto method = [&](unsigned i, StringRef p, Family f) -> FailureOr<Attribute> {
    if (need(call, a[i], p))
      return failure();
    return buildMethod(*a[i], f);
  };
  auto word = [&](unsigned i, StringRef p,
                  ArrayRef<StringRef> words) -> FailureOr<StringRef> {
    if (need(call, a[i], p))
      return failure();
    return wordArg(a[i], p, words);
  };
  Attribute result;

  if (name == "epoch_shuffle") {
    if (bind({"batch", "drop_last"}))
      return failure();
    SYN_TRY(batch, i64(0, "batch"));
    bool dropLast = false;
    if (a[1]) {
      SYN_TRY(b, boolArg(a[1], "drop_last"));
      dropLast = b;
    }
    result = l2::EpochShuffleAttr::getChecked(emit, ctx, batch, dropLast);
  } else if (name == "stream_window") {
    if (bind({"window", "stride", "batch"}))
      return failure();
    SYN_TRY(window, i64(0, "window"));
    SYN_TRY(stride, i64(1, "stride"));
    int64_t windows = 0;
    if (a[2]) {
      SYN_TRY(n, i64(2, "batch"));
      windows = n;
    }
    result = l2::StreamWindowAttr::getChecked(emit, ctx, window, stride, windows);
  } else if (name == "curriculum") {
    if (bind({"phases", "batch"}))
      return failure();
    if (need(call, a[0], "phases"))
      return failure();
    if (a[0]->kind != SynValue::List)
      return emitError(a[0]->loc, "argument 'phases' must be a list of "
                                  "{ filter: <pred>, duration: n_steps }");
    SmallVector<Attribute> phases;
    for (const SynValue &item : a[0]->items) {
      if (item.kind != SynValue::Record)
        return emitError(item.loc, "a curriculum phase is a record "
                                   "{ filter: <pred>, duration: n_steps }, "
                                   "got ")
               << describeValue(item);
      SmallVector<const SynValue *> f;
      SynValue phase = item;
      phase.tok = call.tok; // errors name the curriculum
      if (bindArgs(phase, {"filter", "duration"}, f) ||
          need(phase, f[0], "filter") || need(phase, f[1], "duration"))
        return failure();
      if (f[0]->kind != SynValue::Str && f[0]->kind != SynValue::Word)
        return emitError(f[0]->loc, "a phase's filter is a predicate "
                                    "written as a string or a name, got ")
               << describeValue(*f[0]);
      std::string filter = f[0]->kind == SynValue::Str
                               ? f[0]->tok.getStringValue()
                               : f[0]->tok.spelling.str();
      SYN_TRY(duration, intArg(f[1], "duration"));
      at = item.loc;
      Attribute p =
          l2::PhaseAttr::getChecked(emit, ctx, StringRef(filter), duration);
      if (!p)
        return failure();
      phases.push_back(p);
    }
    at = call.loc;
    SYN_TRY(batch, i64(1, "batch"));
    result = l2::CurriculumAttr::getChecked(emit, ctx, batch,
                                            builder.getArrayAttr(phases));
  } else if (name == "replay") {
    if (bind({"buffer", "priority", "batch"}))
      return failure();
    SYN_TRY(buffer, i64(0, "buffer"));
    SYN_TRY(priority, word(1, "priority", L2_ENUM_WORDS(ReplayPriority)));
    SYN_TRY(batch, i64(2, "batch"));
    result = l2::ReplayAttr::getChecked(
        emit, ctx, buffer, *l2::symbolizeReplayPriority(priority), batch);
  } else if (name == "distributed_shard") {
    if (bind({"shards", "method"}))
      return failure();
    SYN_TRY(shards, i64(0, "shards"));
    SYN_TRY(inner, method(1, "method", Family::Sample));
    result = l2::DistributedShardAttr::getChecked(emit, ctx, shards, inner);
  } else if (name == "autodiff") {
    if (bind({"mode", "checkpoint"}))
      return failure();
    SYN_TRY(mode, word(0, "mode", L2_ENUM_WORDS(AutodiffMode)));
    ArrayAttr checkpoint;
    if (a[1]) {
      if (a[1]->kind != SynValue::List)
        return emitError(a[1]->loc, "argument 'checkpoint' must be a list "
                                    "of layer names, got ")
               << describeValue(*a[1]);
      SmallVector<Attribute> names;
      for (const SynValue &item : a[1]->items) {
        if (item.kind == SynValue::Word)
          names.push_back(builder.getStringAttr(item.tok.spelling));
        else if (item.kind == SynValue::Str)
          names.push_back(builder.getStringAttr(item.tok.getStringValue()));
        if (item.kind == SynValue::Word || item.kind == SynValue::Str)
          checkpointUses.push_back(
              {cast<StringAttr>(names.back()).str(), item.loc});
        else
          return emitError(item.loc, "a checkpoint is a layer name (fc1, "
                                     "norm2, ...), got ")
                 << describeValue(item);
      }
      checkpoint = builder.getArrayAttr(names);
    }
    result = l2::AutodiffAttr::getChecked(
        emit, ctx, *l2::symbolizeAutodiffMode(mode), checkpoint);
  } else if (name == "evolution") {
    if (bind({"pop", "sigma", "selection"}))
      return failure();
    SYN_TRY(pop, i64(0, "pop"));
    SYN_TRY(sigma, f64(1, "sigma"));
    SYN_TRY(selection, word(2, "selection", L2_ENUM_WORDS(Selection)));
    result = l2::EvolutionAttr::getChecked(emit, ctx, pop, sigma,
                                           *l2::symbolizeSelection(selection));
  } else if (name == "dfa") {
    if (bind({"feedback_dim"}))
      return failure();
    SYN_TRY(dim, i64(0, "feedback_dim"));
    result = l2::DfaAttr::getChecked(emit, ctx, dim);
  } else if (name == "reinforce") {
    if (bind({"baseline"}))
      return failure();
    SYN_TRY(baseline, word(0, "baseline", L2_ENUM_WORDS(Baseline)));
    result = l2::ReinforceAttr::getChecked(emit, ctx,
                                           *l2::symbolizeBaseline(baseline));
  } else if (name == "straight_through") {
    if (bind({"estimator"}))
      return failure();
    SYN_TRY(estimator, word(0, "estimator", L2_ENUM_WORDS(Estimator)));
    result = l2::StraightThroughAttr::getChecked(
        emit, ctx, *l2::symbolizeEstimator(estimator));
  } else if (name == "zeroth_order") {
    if (bind({"samples", "sigma"}))
      return failure();
    SYN_TRY(samples, i64(0, "samples"));
    SYN_TRY(sigma, f64(1, "sigma"));
    result = l2::ZerothOrderAttr::getChecked(emit, ctx, samples, sigma);
  } else if (name == "hybrid") {
    if (bind({"primary", "aux", "blend"}))
      return failure();
    SYN_TRY(primary, method(0, "primary", Family::Backward));
    SYN_TRY(aux, method(1, "aux", Family::Backward));
    SYN_TRY(blend, word(2, "blend", L2_ENUM_WORDS(DecayKind)));
    result = l2::HybridAttr::getChecked(emit, ctx, primary, aux,
                                        *l2::symbolizeDecayKind(blend));
  } else if (name == "sgd") {
    if (bind({"lr"}))
      return failure();
    SYN_TRY(lr, f64(0, "lr"));
    result = l2::SgdAttr::getChecked(emit, ctx, lr);
  } else if (name == "adam") {
    if (bind({"lr", "beta1", "beta2", "eps"}))
      return failure();
    SYN_TRY(lr, f64(0, "lr"));
    SYN_TRY(beta1, f64(1, "beta1", 0.9));
    SYN_TRY(beta2, f64(2, "beta2", 0.999));
    SYN_TRY(eps, f64(3, "eps", 1e-8));
    result = l2::AdamAttr::getChecked(emit, ctx, lr, beta1, beta2, eps);
  } else if (name == "muon") {
    if (bind({"lr", "ns_steps"}))
      return failure();
    SYN_TRY(lr, f64(0, "lr"));
    SYN_TRY(steps, i64(1, "ns_steps", 5));
    result = l2::MuonAttr::getChecked(emit, ctx, lr, steps);
  } else if (name == "lion") {
    if (bind({"lr", "beta1", "beta2"}))
      return failure();
    SYN_TRY(lr, f64(0, "lr"));
    SYN_TRY(beta1, f64(1, "beta1", 0.9));
    SYN_TRY(beta2, f64(2, "beta2", 0.99));
    result = l2::LionAttr::getChecked(emit, ctx, lr, beta1, beta2);
  } else if (name == "schedule") {
    if (bind({"warmup", "decay", "inner"}))
      return failure();
    SYN_TRY(warmup, i64(0, "warmup"));
    SYN_TRY(decay, word(1, "decay", L2_ENUM_WORDS(DecayKind)));
    SYN_TRY(inner, method(2, "inner", Family::Update));
    result = l2::ScheduleAttr::getChecked(
        emit, ctx, warmup, *l2::symbolizeDecayKind(decay), inner);
  } else if (name == "gradient_clip") {
    if (bind({"max_norm", "inner"}))
      return failure();
    SYN_TRY(maxNorm, f64(0, "max_norm"));
    SYN_TRY(inner, method(1, "inner", Family::Update));
    result = l2::GradientClipAttr::getChecked(emit, ctx, maxNorm, inner);
  } else if (name == "ema") {
    if (bind({"decay", "inner"}))
      return failure();
    SYN_TRY(decay, f64(0, "decay"));
    SYN_TRY(inner, method(1, "inner", Family::Update));
    result = l2::EmaAttr::getChecked(emit, ctx, decay, inner);
  } else if (name == "per_param") {
    if (bind({"others", "matrix", "overrides"}))
      return failure();
    SYN_TRY(others, method(0, "others", Family::Update));
    Attribute matrix;
    if (a[1]) {
      SYN_TRY(m, buildMethod(*a[1], Family::Update));
      matrix = m;
    }
    ArrayAttr overrides;
    if (a[2]) {
      if (a[2]->kind != SynValue::List)
        return emitError(a[2]->loc, "argument 'overrides' must be a list of "
                                    "param_override(...), got ")
               << describeValue(*a[2]);
      SmallVector<Attribute> list;
      for (const SynValue &item : a[2]->items) {
        if (item.kind != SynValue::Call ||
            item.tok.spelling != "param_override")
          return emitError(item.loc, "an override is param_override(param: "
                                     "\"<layer>.<slot>\", shape: [...], "
                                     "update: <update>), got ")
                 << describeValue(item);
        SYN_TRY(o, buildMethod(item, Family::Update));
        list.push_back(o);
      }
      overrides = builder.getArrayAttr(list);
    }
    result = l2::PerParamAttr::getChecked(emit, ctx, others, matrix, overrides);
  } else { // param_override
    if (bind({"param", "shape", "update"}))
      return failure();
    if (need(call, a[0], "param") || need(call, a[1], "shape"))
      return failure();
    if (a[0]->kind != SynValue::Str)
      return emitError(a[0]->loc, "argument 'param' must be a string "
                                  "(\"fc1.weight\"), got ")
             << describeValue(*a[0]);
    if (a[1]->kind != SynValue::List)
      return emitError(a[1]->loc, "argument 'shape' must be a list of "
                                  "dimensions, got ")
             << describeValue(*a[1]);
    SmallVector<int64_t> shape;
    for (const SynValue &item : a[1]->items) {
      SYN_TRY(d, intArg(&item, "shape"));
      shape.push_back(d);
    }
    SYN_TRY(update, method(2, "update", Family::Update));
    std::string param = a[0]->tok.getStringValue();
    overrideUses.push_back({param, call.loc});
    result = l2::ParamOverrideAttr::getChecked(
        emit, ctx, StringRef(param), ArrayRef<int64_t>(shape), update);
  }
  if (!result)
    return failure();
  return result;
}
