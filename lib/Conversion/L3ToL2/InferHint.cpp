//===- InferHint.cpp - #[l2::infer(...)]: an architecture forced by a hint -===//
//
// `#[l2::infer(sequential [conv(1, 32, 3, 1, 1), relu, pool(max, 2), ...])]`
// on a model pins the architecture: the search keeps its other axes
// (sample, backward, update) and builds the hinted infer DAG for every
// candidate, which the L2 verifiers then judge like any other (depth,
// width, param_budget, causal, the output domain). The text is the infer
// syntax of a `.syn` methods block (docs/syn.md): `sequential [...]` and
// `residual [...]` (x + block(x)) of layer primitives with positional or
// keyed arguments, plus `reshape([d1, ...])` (l2.reshape). Layers are
// labelled as the front end labels them: fc1, conv1, attn1, norm1, embed1.
//
//===----------------------------------------------------------------------===//
#include "L3ToL2.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <cstdlib>

using namespace mlir;
using namespace synpl;
using namespace synpl::l3tol2;

namespace {
class HintBuilder {
public:
  HintBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  FailureOr<Value> layers(const std::vector<HintValue> &items, Value x) {
    for (const HintValue &item : items) {
      FailureOr<Value> next = layer(item, x);
      if (failed(next))
        return failure();
      x = *next;
    }
    return x;
  }

  FailureOr<Value> layer(const HintValue &v, Value x);

private:
  OpBuilder &b;
  Location loc;
  llvm::StringMap<unsigned> counts;

  InFlightDiagnostic error() { return mlir::emitError(loc); }

  StringAttr label(StringRef prefix) {
    return b.getStringAttr(prefix + Twine(++counts[prefix]));
  }

  /// Binds a call's arguments to `names` (positional first, then by key);
  /// `required` of them must be present.
  FailureOr<SmallVector<const HintValue *>> bind(const HintValue &call,
                                                 ArrayRef<StringRef> names,
                                                 size_t required) {
    SmallVector<const HintValue *> bound(names.size(), nullptr);
    size_t next = 0;
    for (const auto &[key, value] : call.args) {
      size_t slot = next;
      if (key.empty()) {
        if (next >= names.size())
          return error() << call.text << " takes at most " << names.size()
                         << " arguments (" << llvm::join(names, ", ") << ")",
                 failure();
        ++next;
      } else {
        auto it = llvm::find(names, key);
        if (it == names.end())
          return error() << call.text << " has no argument '" << key << "' (it takes "
                         << llvm::join(names, ", ") << ")",
                 failure();
        slot = it - names.begin();
      }
      if (bound[slot])
        return error() << "argument '" << names[slot] << "' of " << call.text
                       << " is given twice",
               failure();
      bound[slot] = &value;
    }
    for (size_t i = 0; i < required; ++i)
      if (!bound[i])
        return error() << call.text << " needs its argument '" << names[i] << "'",
               failure();
    return bound;
  }

  FailureOr<int64_t> integer(const HintValue *v, StringRef what, int64_t low) {
    char *end = nullptr;
    long long n = v && v->kind == HintValue::Number ? std::strtoll(v->text.c_str(), &end, 10) : 0;
    if (!v || v->kind != HintValue::Number || *end != '\0' || n < low)
      return error() << "argument '" << what << "' must be an integer >= " << low
                     << ", got '" << (v ? v->text : "") << "'",
             failure();
    return static_cast<int64_t>(n);
  }

  FailureOr<StringRef> word(const HintValue *v, StringRef what) {
    if (!v || v->kind != HintValue::Word)
      return error() << "argument '" << what << "' must be a word", failure();
    return StringRef(v->text);
  }

  /// Infers the result type of a freshly built layer (created with a
  /// placeholder type); the shape rule reports a misfit as row L2.1.
  FailureOr<Value> finish(Operation *op) {
    auto rule = cast<InferTypeOpInterface>(op);
    SmallVector<Type> inferred;
    if (failed(rule.inferReturnTypes(b.getContext(), op->getLoc(), op->getOperands(),
                                     op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
                                     op->getRegions(), inferred)) ||
        inferred.size() != 1) {
      op->erase();
      return failure();
    }
    op->getResult(0).setType(inferred.front());
    return op->getResult(0);
  }
};
} // namespace

FailureOr<Value> HintBuilder::layer(const HintValue &v, Value x) {
  if (v.kind != HintValue::Call && v.kind != HintValue::Word)
    return error() << "expected a layer, got '" << v.text << "'", failure();
  StringRef name = v.text;
  Type t = x.getType();
  if (name == "sequential" || name == "residual") {
    if (v.kind != HintValue::Call || v.args.size() != 1 ||
        v.args[0].second.kind != HintValue::List)
      return error() << "'" << name << "' takes a list of layers: " << name << " [...]",
             failure();
    FailureOr<Value> y = layers(v.args[0].second.items, x);
    if (failed(y) || name == "sequential")
      return y;
    return finish(l2::AddOp::create(b, loc, t, x, *y, nullptr, nullptr));
  }
  std::optional<l2::ActFn> bareAct = l2::symbolizeActFn(name);
  if (bareAct) {
    if (v.kind == HintValue::Call)
      return error() << "'" << name << "' takes no arguments; write " << name << " or act("
                     << name << ")",
             failure();
    return finish(l2::ActOp::create(b, loc, t, x, *bareAct, nullptr, nullptr));
  }
  if (name == "softmax" || name == "flatten") {
    if (v.kind == HintValue::Call && !v.args.empty())
      return error() << "'" << name << "' takes no arguments", failure();
    if (name == "softmax")
      return finish(l2::SoftmaxOp::create(b, loc, t, x, nullptr, nullptr));
    return finish(l2::FlattenOp::create(b, loc, t, x, nullptr, nullptr));
  }
  HintValue call = v;
  if (call.kind == HintValue::Word)
    call.kind = HintValue::Call; // `norm` alone: its arguments are checked below
  auto args = [&](ArrayRef<StringRef> names, size_t required) {
    return bind(call, names, required);
  };
  if (name == "linear") {
    auto a = args({"in", "out"}, 2);
    if (failed(a))
      return failure();
    FailureOr<int64_t> in = integer((*a)[0], "in", 1), out = integer((*a)[1], "out", 1);
    if (failed(in) || failed(out))
      return failure();
    // As in a methods block: a [N, d1, ..., dk] input whose d1*...*dk is
    // `in` is flattened first.
    if (auto tensor = dyn_cast<RankedTensorType>(t);
        tensor && tensor.hasStaticShape() && tensor.getRank() > 2 &&
        tensor.getShape().back() != *in) {
      int64_t flat = 1;
      for (int64_t d : tensor.getShape().drop_front())
        flat = d > 0 && flat <= *in / d ? flat * d : -1;
      if (flat == *in) {
        FailureOr<Value> f = finish(l2::FlattenOp::create(b, loc, t, x, nullptr, nullptr));
        if (failed(f))
          return failure();
        x = *f;
      }
    }
    return finish(l2::LinearOp::create(b, loc, x.getType(), x, *in, *out, label("fc"), nullptr));
  }
  if (name == "conv") {
    auto a = args({"in_ch", "out_ch", "kernel", "stride", "padding"}, 3);
    if (failed(a))
      return failure();
    FailureOr<int64_t> in = integer((*a)[0], "in_ch", 1), out = integer((*a)[1], "out_ch", 1),
                       k = integer((*a)[2], "kernel", 1);
    FailureOr<int64_t> s = (*a)[3] ? integer((*a)[3], "stride", 1) : FailureOr<int64_t>(1);
    FailureOr<int64_t> pad = (*a)[4] ? integer((*a)[4], "padding", 0) : FailureOr<int64_t>(0);
    if (failed(in) || failed(out) || failed(k) || failed(s) || failed(pad))
      return failure();
    return finish(l2::ConvOp::create(b, loc, t, x, *in, *out, *k, *s, *pad, label("conv"),
                                     nullptr));
  }
  if (name == "attn") {
    auto a = args({"heads", "dim", "causal"}, 2);
    if (failed(a))
      return failure();
    FailureOr<int64_t> heads = integer((*a)[0], "heads", 1), dim = integer((*a)[1], "dim", 1);
    if (failed(heads) || failed(dim))
      return failure();
    bool causal = false;
    if (const HintValue *c = (*a)[2]) {
      if (c->kind != HintValue::Word || (c->text != "true" && c->text != "false"))
        return error() << "argument 'causal' of attn must be true or false", failure();
      causal = c->text == "true";
    }
    return finish(l2::AttnOp::create(b, loc, t, x, *heads, *dim, causal, label("attn"), nullptr));
  }
  if (name == "norm") {
    auto a = args({"kind"}, 1);
    if (failed(a))
      return failure();
    const HintValue *kind = (*a)[0];
    IntegerAttr groups;
    std::optional<l2::NormKind> k;
    if (kind->kind == HintValue::Call && kind->text == "group" && kind->args.size() == 1) {
      FailureOr<int64_t> n = integer(&kind->args[0].second, "group", 1);
      if (failed(n))
        return failure();
      groups = b.getI64IntegerAttr(*n);
      k = l2::NormKind::group;
    } else if (kind->kind == HintValue::Word && kind->text != "group") {
      k = l2::symbolizeNormKind(kind->text);
    }
    if (!k)
      return error() << "norm takes layer, rms or group(n), got '" << kind->text << "'",
             failure();
    return finish(l2::NormOp::create(b, loc, t, x, *k, groups, label("norm"), nullptr));
  }
  if (name == "act") {
    auto a = args({"fn"}, 1);
    if (failed(a))
      return failure();
    FailureOr<StringRef> fn = word((*a)[0], "fn");
    std::optional<l2::ActFn> f = succeeded(fn) ? l2::symbolizeActFn(*fn) : std::nullopt;
    if (!f)
      return error() << "act takes relu, gelu, silu or swish", failure();
    return finish(l2::ActOp::create(b, loc, t, x, *f, nullptr, nullptr));
  }
  if (name == "embed") {
    auto a = args({"vocab", "dim", "positions"}, 2);
    if (failed(a))
      return failure();
    FailureOr<int64_t> vocab = integer((*a)[0], "vocab", 1), dim = integer((*a)[1], "dim", 1);
    if (failed(vocab) || failed(dim))
      return failure();
    IntegerAttr positions;
    if ((*a)[2]) {
      FailureOr<int64_t> n = integer((*a)[2], "positions", 1);
      if (failed(n))
        return failure();
      positions = b.getI64IntegerAttr(*n);
    }
    return finish(l2::EmbedOp::create(b, loc, t, x, *vocab, *dim, positions, label("embed"),
                                      nullptr));
  }
  if (name == "pool") {
    auto a = args({"kind", "kernel"}, 2);
    if (failed(a))
      return failure();
    FailureOr<StringRef> kind = word((*a)[0], "kind");
    std::optional<l2::PoolKind> k = succeeded(kind) ? l2::symbolizePoolKind(*kind) : std::nullopt;
    FailureOr<int64_t> kernel = integer((*a)[1], "kernel", 1);
    if (!k)
      return error() << "pool takes avg or max", failure();
    if (failed(kernel))
      return failure();
    return finish(l2::PoolOp::create(b, loc, t, x, *k, *kernel, nullptr, nullptr));
  }
  if (name == "dropout") {
    auto a = args({"p"}, 1);
    if (failed(a))
      return failure();
    const HintValue *pv = (*a)[0];
    char *end = nullptr;
    double p = pv->kind == HintValue::Number ? std::strtod(pv->text.c_str(), &end) : -1;
    if (pv->kind != HintValue::Number || *end != '\0' || !(p >= 0 && p < 1))
      return error() << "dropout probability must be in [0, 1), got '" << pv->text << "'",
             failure();
    return finish(l2::DropoutOp::create(b, loc, t, x, b.getF64FloatAttr(p), nullptr, nullptr));
  }
  if (name == "reshape") {
    auto a = args({"shape"}, 1);
    if (failed(a))
      return failure();
    const HintValue *list = (*a)[0];
    if (list->kind != HintValue::List)
      return error() << "reshape takes a list of sizes: reshape([d1, ...])", failure();
    SmallVector<int64_t> shape;
    for (const HintValue &item : list->items) {
      FailureOr<int64_t> d = integer(&item, "shape", 1);
      if (failed(d))
        return failure();
      shape.push_back(*d);
    }
    return finish(l2::ReshapeOp::create(b, loc, t, x, shape, nullptr, nullptr));
  }
  return error() << "'" << name
                 << "' is not a layer (linear, conv, attn, norm, act, embed, pool, dropout, "
                    "softmax, flatten, reshape, relu, gelu, silu, swish, sequential, "
                    "residual)",
         failure();
}

FailureOr<Value> synpl::l3tol2::buildHintedInfer(OpBuilder &builder, Location loc,
                                                 const HintValue &tree, Value input) {
  HintBuilder hb(builder, loc);
  return hb.layer(tree, input);
}
