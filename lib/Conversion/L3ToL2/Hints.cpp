//===- Hints.cpp - l2:: escape hatches on a model ---------------------------===//
//
// `#[l2::backward(evolution(pop: 50))]` is stored by L3 as
// `#l3.hint<l2::backward, "evolution(pop: 50)">`. The L3 -> L2 search turns
// the argument text into the L2 attribute it names and uses it as the only
// choice of that axis. The text is the spec's call syntax,
// `name(key: value, ...)` with nested calls, numbers, words and `[...]`
// lists; it is rewritten into the attribute syntax
// (`#l2.evolution<pop = 50, sigma = 2.0e-2, selection = truncation>`), the
// arguments the hint leaves out filled with documented defaults, and parsed
// and verified by the l2 dialect itself, so a hint is exactly as valid as
// the attribute it names.
//
//===----------------------------------------------------------------------===//
#include "L3ToL2.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace synpl;
using namespace synpl::l3tol2;

namespace {
class CallParser {
public:
  /// `positional`: arguments may come without a key, and `name [...]` is a
  /// call with one list argument (the infer syntax: `sequential [linear(4, 8)]`).
  explicit CallParser(StringRef text, bool positional = false)
      : text(text), positional(positional) {}

  std::optional<HintValue> parseAll() {
    std::optional<HintValue> v = parseValue();
    if (!v)
      return std::nullopt;
    skipSpace();
    if (pos != text.size())
      return fail("unexpected '" + text.substr(pos).str() + "' after the method");
    return v;
  }

  std::string error;

private:
  StringRef text;
  bool positional;
  size_t pos = 0;

  std::nullopt_t fail(const std::string &why) {
    if (error.empty())
      error = why;
    return std::nullopt;
  }
  void skipSpace() {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }
  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  std::string identifier() {
    skipSpace();
    size_t start = pos;
    while (pos < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[pos])) || text[pos] == '_' ||
            text[pos] == '.'))
      ++pos;
    return text.slice(start, pos).str();
  }

  std::optional<HintValue> parseValue() {
    skipSpace();
    if (pos >= text.size())
      return fail("expected a value");
    char c = text[pos];
    HintValue v;
    if (c == '"') {
      size_t end = text.find('"', pos + 1);
      if (end == StringRef::npos)
        return fail("unterminated string");
      v.kind = HintValue::String;
      v.text = text.slice(pos + 1, end).str();
      pos = end + 1;
      return v;
    }
    if (c == '[') {
      ++pos;
      v.kind = HintValue::List;
      if (consume(']'))
        return v;
      do {
        std::optional<HintValue> item = parseValue();
        if (!item)
          return std::nullopt;
        v.items.push_back(std::move(*item));
      } while (consume(','));
      if (!consume(']'))
        return fail("expected ']'");
      return v;
    }
    if (c == '-' || c == '+' || std::isdigit(static_cast<unsigned char>(c))) {
      size_t start = pos++;
      while (pos < text.size() &&
             (std::isalnum(static_cast<unsigned char>(text[pos])) || text[pos] == '.' ||
              ((text[pos] == '-' || text[pos] == '+') &&
               (text[pos - 1] == 'e' || text[pos - 1] == 'E'))))
        ++pos;
      v.kind = HintValue::Number;
      v.text = text.slice(start, pos).str();
      return v;
    }
    std::string name = identifier();
    if (name.empty())
      return fail("unexpected '" + std::string(1, c) + "'");
    v.text = name;
    if (positional) {
      skipSpace();
      if (pos < text.size() && text[pos] == '[') {
        // `sequential [...]`: the call sequential([...]).
        std::optional<HintValue> list = parseValue();
        if (!list)
          return std::nullopt;
        v.kind = HintValue::Call;
        v.args.push_back({"", std::move(*list)});
        return v;
      }
    }
    if (!consume('('))
      return v; // a word: reverse, cosine, true, adam
    v.kind = HintValue::Call;
    if (consume(')'))
      return v;
    unsigned index = 0;
    do {
      ++index;
      size_t save = pos;
      std::string key = identifier();
      if (key.empty() || !consume(':')) {
        pos = save;
        if (positional) {
          std::optional<HintValue> arg = parseValue();
          if (!arg)
            return std::nullopt;
          v.args.push_back({"", std::move(*arg)});
          continue;
        }
        return fail("argument " + std::to_string(index) + " of " + name +
                    " has no key; write " + name + "(key: value, ...)");
      }
      std::optional<HintValue> arg = parseValue();
      if (!arg)
        return std::nullopt;
      v.args.push_back({key, std::move(*arg)});
    } while (consume(','));
    if (!consume(')'))
      return fail("expected ',' or ')' in the arguments of " + name);
    return v;
  }
};

/// Each method's parameters in the attribute's order (its struct format
/// parses them in that order), with what a hint that leaves one out gets:
/// a default value, kOmit (the attribute has its own default or the
/// parameter is optional), or kRequired.
constexpr const char *kOmit = "?";
constexpr const char *kRequired = "";
using Signature = std::vector<std::pair<std::string, std::string>>;
const llvm::StringMap<Signature> &signatures() {
  static const llvm::StringMap<Signature> table = {
      {"epoch_shuffle", {{"batch", "128"}, {"drop_last", "true"}}},
      {"stream_window", {{"window", "128"}, {"stride", "128"}}},
      {"curriculum", {{"batch", "128"}, {"phases", kRequired}}},
      {"replay", {{"buffer", kRequired}, {"priority", "uniform"}, {"batch", "128"}}},
      {"distributed_shard",
       {{"shards", kRequired}, {"method", "epoch_shuffle<batch = 128, drop_last = true>"}}},
      {"autodiff", {{"mode", "reverse"}, {"checkpoint", kOmit}}},
      {"evolution", {{"pop", kRequired}, {"sigma", "2.0e-2"}, {"selection", "truncation"}}},
      {"dfa", {{"feedback_dim", kRequired}}}, // the output width, filled in callText
      {"reinforce", {{"baseline", "moving_average"}}},
      {"straight_through", {{"estimator", "identity"}}},
      {"zeroth_order", {{"samples", kRequired}, {"sigma", "1.0e-3"}}},
      {"hybrid", {{"primary", kRequired}, {"aux", kRequired}, {"blend", "linear"}}},
      {"sgd", {{"lr", "1.0e-2"}}},
      {"adam", {{"lr", "3.0e-4"}, {"beta1", kOmit}, {"beta2", kOmit}, {"eps", kOmit}}},
      {"muon", {{"lr", "2.0e-2"}, {"ns_steps", kOmit}}},
      {"lion", {{"lr", "1.0e-4"}, {"beta1", kOmit}, {"beta2", kOmit}}},
      {"schedule",
       {{"warmup", "1000"}, {"decay", "cosine"}, {"inner", "adam<lr = 3.0e-4>"}}},
      {"gradient_clip", {{"max_norm", "1.0"}, {"inner", "adam<lr = 3.0e-4>"}}},
      {"ema", {{"decay", "0.999"}, {"inner", "adam<lr = 3.0e-4>"}}},
      {"per_param", {{"others", kRequired}, {"matrix", kOmit}, {"overrides", kOmit}}},
  };
  return table;
}

/// A number as an MLIR literal: `3e-4` -> `3.0e-4` (a float literal needs
/// a '.'); integers stay integers.
std::string numberText(StringRef text) {
  std::string s = text.str();
  size_t exp = s.find_first_of("eE");
  if (exp != std::string::npos && s.find('.') == std::string::npos)
    s.insert(exp, ".0");
  return s;
}

std::string toAttrText(const HintValue &v, int64_t outWidth, std::string &error);

std::string callText(const HintValue &call, int64_t outWidth, std::string &error);

/// One argument as attribute text.
std::string argText(StringRef key, const HintValue &value, int64_t outWidth,
                    std::string &error) {
  std::string text = toAttrText(value, outWidth, error);
  // Float parameters written as integers (`max_norm: 1`) need a '.'.
  static const llvm::StringSet<> floatKeys = {"lr",    "beta1", "beta2",   "eps",
                                             "sigma", "decay", "max_norm"};
  if (value.kind == HintValue::Number && floatKeys.contains(key) &&
      text.find_first_of(".eE") == std::string::npos)
    text += ".0";
  return text;
}

std::string callText(const HintValue &call, int64_t outWidth, std::string &error) {
  auto it = signatures().find(call.text);
  std::vector<std::pair<std::string, std::string>> args;
  if (it == signatures().end()) {
    // Not a method the table knows: as written (the parser will judge).
    for (auto &[key, value] : call.args)
      args.push_back({key, argText(key, value, outWidth, error)});
  } else {
    const Signature &sig = it->second;
    for (auto &arg : call.args) {
      const std::string &key = arg.first;
      if (llvm::none_of(sig, [&](auto &param) { return param.first == key; })) {
        std::string known;
        for (auto &param : sig)
          known += (known.empty() ? "" : ", ") + param.first;
        if (error.empty())
          error = call.text + " has no argument '" + key + "'; its arguments are " + known;
      }
    }
    for (auto &entry : sig) {
      const auto &param = entry.first;
      const auto &fallback = entry.second;
      auto given = llvm::find_if(call.args, [&](auto &a) { return a.first == param; });
      if (given != call.args.end()) {
        args.push_back({param, argText(param, given->second, outWidth, error)});
      } else if (call.text == "dfa" && param == "feedback_dim") {
        args.push_back({param, std::to_string(outWidth)});
      } else if (fallback == kRequired) {
        if (error.empty())
          error = call.text + " needs the argument '" + param + "'";
      } else if (fallback != kOmit) {
        args.push_back({param, fallback});
      }
    }
  }
  std::string s = call.text + "<";
  for (auto [i, arg] : llvm::enumerate(args))
    s += (i ? ", " : "") + arg.first + " = " + arg.second;
  return s + ">";
}

std::string toAttrText(const HintValue &v, int64_t outWidth, std::string &error) {
  switch (v.kind) {
  case HintValue::Word:
    // A nested method is written as a call, `inner: adam()` for its
    // defaults: the L2 hint check (L2.2) compares a nested method of the
    // hatch with the method as a call, so a bare `adam` would never match.
    if (signatures().count(v.text) && error.empty())
      error = "write the nested method '" + v.text + "' as a call, " + v.text +
              "(...) (" + v.text + "() for its defaults)";
    return v.text;
  case HintValue::Number:
    return numberText(v.text);
  case HintValue::String: {
    std::string s = "\"";
    for (char c : v.text)
      s += (c == '\\' ? "\\\\" : std::string(1, c));
    return s + "\"";
  }
  case HintValue::Call:
    return callText(v, outWidth, error);
  case HintValue::List: {
    // Lists hold layer names (autodiff checkpoint): strings.
    std::string s = "[";
    for (auto [i, item] : llvm::enumerate(v.items)) {
      if (i)
        s += ", ";
      s += item.kind == HintValue::String || item.kind == HintValue::Word
               ? "\"" + item.text + "\""
               : toAttrText(item, outWidth, error);
    }
    return s + "]";
  }
  }
  return "";
}
} // namespace

Attribute synpl::l3tol2::parseHintMethod(MLIRContext *context, StringRef text,
                                         int64_t outWidth, std::string &error) {
  StringRef body = text.trim();
  std::string attrText;
  if (body.starts_with("#l2.")) {
    attrText = body.str(); // already the attribute form
  } else {
    CallParser parser(body);
    std::optional<HintValue> value = parser.parseAll();
    if (!value) {
      error = parser.error;
      return {};
    }
    if (value->kind != HintValue::Call && value->kind != HintValue::Word) {
      error = "expected a method, name(key: value, ...)";
      return {};
    }
    std::string callError;
    attrText = "#l2." + callText(*value, outWidth, callError);
    if (!callError.empty()) {
      error = callError;
      return {};
    }
  }
  // The l2 dialect parses and verifies it; its diagnostics become ours.
  std::string diagnostics;
  Attribute attr;
  {
    ScopedDiagnosticHandler capture(context, [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error && diagnostics.empty())
        diagnostics = diag.str();
      return success();
    });
    size_t consumed = 0;
    attr = mlir::parseAttribute(attrText, context, Type(), &consumed);
    if (attr && consumed != attrText.size()) {
      attr = {};
      if (diagnostics.empty())
        diagnostics = "unexpected text after the method";
    }
  }
  if (!attr) {
    error = "as an L2 attribute, " + attrText + ": " +
            (diagnostics.empty() ? std::string("does not parse") : diagnostics);
    return {};
  }
  return attr;
}

std::string synpl::l3tol2::methodString(Attribute method) {
  std::string s;
  llvm::raw_string_ostream os(s);
  method.print(os);
  StringRef ref(s);
  ref.consume_front("#l2.");
  return ref.str();
}

std::optional<HintValue> synpl::l3tol2::parseLayerCall(StringRef text, std::string &error) {
  CallParser parser(text, /*positional=*/true);
  std::optional<HintValue> v = parser.parseAll();
  if (!v)
    error = parser.error;
  return v;
}
