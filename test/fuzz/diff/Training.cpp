//===- Training.cpp - Random training programs, one step checked ----------===//
#include "Training.h"

#include "Program.h"
#include "RunningBounds.h"

#include "synpl/Conversion/Passes.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Frontend/Syn.h"
#include "synpl/Reference/L1Interpreter.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cmath>
#include <random>
#include <set>
#include <sstream>

using namespace mlir;
using namespace synpl;
using namespace synpl::difffuzz;
using ref::ElementType;
using ref::Tensor;

//===----------------------------------------------------------------------===//
// Recipes
//===----------------------------------------------------------------------===//

namespace {

std::string real(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

/// Walks `layers` from `shape`: checks each against its input and, with
/// `out`, renders it as `.syn`. False with `why` at the first that does not
/// fit.
bool walk(const std::vector<TrainLayer> &layers, std::vector<int64_t> &shape, std::string *out,
          std::string &why, bool tokens = false) {
  auto emit = [&](const std::string &s) {
    if (out)
      *out += (out->empty() || out->back() == '[' ? "" : ", ") + s;
  };
  if (tokens && (layers.empty() || layers.front().kind != TrainLayer::Embed))
    return why = "tokens that no embedding reads", false;
  for (const TrainLayer &l : layers) {
    size_t rank = shape.size();
    if ((l.kind == TrainLayer::Embed) != (tokens && &l == &layers.front()))
      return why = "an embedding of anything but the input tokens", false;
    switch (l.kind) {
    case TrainLayer::Embed:
      // Byte tokens: a table of 256 rows.
      emit("embed(256, " + std::to_string(l.n) + ")");
      shape = {shape[0], l.n};
      break;
    case TrainLayer::Linear:
      if (rank < 1 || rank > 2 || l.n < 1)
        return why = "linear on a rank-" + std::to_string(rank) + " input", false;
      emit("linear(" + std::to_string(shape.back()) + ", " + std::to_string(l.n) + ")");
      shape.back() = l.n;
      break;
    case TrainLayer::Norm:
      if (rank < 1 || rank > 2)
        return why = "norm on a rank-" + std::to_string(rank) + " input", false;
      emit("norm(" + l.variant + ")");
      break;
    case TrainLayer::Act:
      emit("act(" + l.variant + ")");
      break;
    case TrainLayer::Dropout:
      emit("dropout(" + real(l.p) + ")");
      break;
    case TrainLayer::Flatten: {
      int64_t n = 1;
      for (int64_t d : shape)
        n *= d;
      emit("flatten");
      shape = {n};
      break;
    }
    case TrainLayer::Residual: {
      std::vector<int64_t> inner = shape;
      std::string body;
      if (!walk(l.body, inner, out ? &body : nullptr, why))
        return false;
      if (inner != shape)
        return why = "a residual block that changes its input's shape", false;
      emit("residual [" + body + "]");
      break;
    }
    case TrainLayer::Conv: {
      if (rank != 3)
        return why = "conv on a rank-" + std::to_string(rank) + " input", false;
      int64_t h = (shape[1] + 2 * l.padding - l.kernel) / l.stride + 1;
      int64_t w = (shape[2] + 2 * l.padding - l.kernel) / l.stride + 1;
      if (shape[1] + 2 * l.padding < l.kernel || shape[2] + 2 * l.padding < l.kernel || h < 1 ||
          w < 1)
        return why = "a conv window larger than its input", false;
      emit("conv(" + std::to_string(shape[0]) + ", " + std::to_string(l.n) + ", " +
           std::to_string(l.kernel) + ", " + std::to_string(l.stride) + ", " +
           std::to_string(l.padding) + ")");
      shape = {l.n, h, w};
      break;
    }
    case TrainLayer::Pool:
      if (rank != 3 || shape[1] % l.kernel || shape[2] % l.kernel)
        return why = "a pool whose windows do not tile its input", false;
      emit("pool(" + l.variant + ", " + std::to_string(l.kernel) + ")");
      shape = {shape[0], shape[1] / l.kernel, shape[2] / l.kernel};
      break;
    case TrainLayer::Attn:
      if (rank != 2 || l.n < 1 || shape[1] % l.n)
        return why = "attention over a shape its heads do not divide", false;
      emit("attn(" + std::to_string(l.n) + ", " + std::to_string(shape[1]) +
           (l.p ? ", causal: true)" : ")"));
      break;
    }
  }
  return true;
}

std::string shapeList(const std::vector<int64_t> &shape) {
  std::string s;
  for (int64_t d : shape)
    s += (s.empty() ? "" : ", ") + std::to_string(d);
  return s;
}

} // namespace

std::string UpdateSpec::str() const {
  std::string s;
  switch (base) {
  case Sgd:
    s = "sgd(lr: " + real(lr) + ")";
    break;
  case Adam:
    s = "adam(lr: " + real(lr) + ", beta1: " + real(beta1) + ", beta2: " + real(beta2) +
        ", eps: " + real(eps) + ")";
    break;
  case Lion:
    s = "lion(lr: " + real(lr) + ", beta1: " + real(beta1) + ", beta2: " + real(beta2) + ")";
    break;
  }
  for (auto w = wrappers.rbegin(); w != wrappers.rend(); ++w) {
    switch (w->kind) {
    case Wrapper::Schedule:
      s = "schedule(warmup: " + std::to_string(w->warmup) + ", decay: " + w->decay +
          ", inner: " + s + ")";
      break;
    case Wrapper::Clip:
      s = "gradient_clip(max_norm: " + real(w->value) + ", inner: " + s + ")";
      break;
    case Wrapper::Ema:
      s = "ema(decay: " + real(w->value) + ", inner: " + s + ")";
      break;
    }
  }
  return s;
}

std::optional<std::vector<int64_t>> TrainRecipe::outShape(std::string &why) const {
  std::vector<int64_t> shape = in;
  if (!walk(layers, shape, nullptr, why, tokens))
    return std::nullopt;
  return shape;
}

std::string TrainRecipe::syn() const {
  std::vector<int64_t> shape = in;
  std::string body, why;
  walk(layers, shape, &body, why, tokens);
  int64_t features = 1;
  for (int64_t d : shape)
    features *= d;
  std::string head = shape.size() > 1 ? "flatten, " : "";
  head += "linear(" + std::to_string(features) + ", " + std::to_string(classes) + "), softmax";
  std::string s = "// " + summary() + "\n";
  s += "data d {\n    x : tensor(" + std::string(tokens ? "u8" : "f32") + ", [" + shapeList(in) +
       "])\n    y : tensor(u8, [1])\n}\n";
  s += "model classify {\n    in:  d.x\n    out: dist(" + std::to_string(classes) + ")\n}\n";
  s += "loss objective {\n    ce: divergence(classify.out, d.y), weight: 1.0\n";
  if (penalty > 0)
    s += "    penalty: norm(classify.params, p=" + std::to_string(penaltyP) +
         "), weight: " + real(penalty) + "\n";
  s += "    combine: weighted_sum\n}\ngoal: minimize(objective)\n";
  s += "methods for classify {\n    sample: epoch_shuffle(batch: " + std::to_string(batch) +
       ", drop_last: true)\n";
  s += "    infer: sequential [" + body + (body.empty() ? "" : ", ") + head + "]\n";
  s += "    backward: autodiff(mode: reverse)\n    update: " + update.str() + "\n}\n";
  return s;
}

std::string TrainRecipe::summary() const {
  static const char *names[] = {"linear",  "norm",    "act",   "residual", "conv",
                                "pool",    "attn",    "dropout", "flatten", "embed"};
  std::string s = "[" + shapeList(in) + "]" + (tokens ? " tokens" : "") + " x" +
                  std::to_string(batch) + ", " + std::to_string(classes) + " classes:";
  for (const TrainLayer &l : layers)
    s += std::string(" ") + names[l.kind] + (l.variant.empty() ? "" : "(" + l.variant + ")");
  if (layers.empty())
    s += " the head alone";
  s += "; " + update.str();
  if (penalty > 0)
    s += "; L" + std::to_string(penaltyP) + " penalty";
  return s;
}

TrainRecipe synpl::difffuzz::generateTraining(uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 0x7261696eull);
  auto pick = [&](std::initializer_list<int64_t> xs) {
    return *(xs.begin() + std::uniform_int_distribution<size_t>(0, xs.size() - 1)(rng));
  };
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  auto oneOf = [&](std::initializer_list<const char *> xs) {
    return std::string(*(xs.begin() + std::uniform_int_distribution<size_t>(0, xs.size() - 1)(rng)));
  };
  TrainRecipe r;
  r.batch = pick({1, 2, 3, 4});
  r.classes = pick({2, 3, 5, 10});
  int shapeKind = int(pick({0, 0, 1, 2, 3}));
  if (shapeKind == 0)
    r.in = {pick({1, 2, 3, 5, 7, 8, 16, 17, 31, 33})};
  else if (shapeKind == 1)
    r.in = {pick({1, 2, 3}), pick({4, 5, 6, 8}), pick({4, 5, 6, 8})};
  else if (shapeKind == 2)
    r.in = {pick({2, 3, 4, 5}), pick({4, 6, 8, 12})};
  else
    r.in = {pick({1, 2, 5, 8})}, r.tokens = true;

  auto act = [&] {
    TrainLayer l;
    l.kind = TrainLayer::Act;
    l.variant = oneOf({"relu", "gelu", "silu"});
    return l;
  };
  auto norm = [&] {
    TrainLayer l;
    l.kind = TrainLayer::Norm;
    l.variant = oneOf({"layer", "rms"});
    return l;
  };
  auto linear = [&](int64_t n) {
    TrainLayer l;
    l.kind = TrainLayer::Linear;
    l.n = n;
    return l;
  };
  std::vector<int64_t> shape = r.in;
  bool attention = false;
  if (r.tokens) {
    TrainLayer e;
    e.kind = TrainLayer::Embed;
    e.n = pick({4, 6, 8});
    r.layers.push_back(e);
    shape = {shape[0], e.n};
  }
  int count = int(pick({1, 2, 3, 4, 5}));
  for (int i = 0; i < count; ++i) {
    TrainLayer l;
    if (shape.size() == 3) {
      int what = int(pick({0, 0, 1, 2, 3}));
      if (what == 0) {
        l.kind = TrainLayer::Conv;
        l.n = pick({1, 2, 3, 4});
        l.kernel = pick({1, 2, 3});
        l.stride = pick({1, 1, 2});
        l.padding = l.kernel > 1 ? pick({0, 1}) : 0;
      } else if (what == 1 && shape[1] % 2 == 0 && shape[2] % 2 == 0) {
        l.kind = TrainLayer::Pool;
        l.variant = oneOf({"avg", "max"});
        l.kernel = 2;
      } else if (what == 2) {
        l = act();
      } else {
        l.kind = TrainLayer::Flatten;
      }
    } else if (shape.size() == 2) {
      int what = int(pick({0, 0, 1, 2, 3, 4}));
      // One attention layer at most: the worst-case error bounds of two
      // (their softmaxes' divisions and four matmuls each) compound past
      // any use.
      if (what == 0 && attention)
        what = 1;
      if (what == 0) {
        attention = true;
        // A pre-norm attention block, or attention alone.
        TrainLayer a;
        a.kind = TrainLayer::Attn;
        std::vector<int64_t> heads;
        for (int64_t h : {1, 2, 3, 4})
          if (shape[1] % h == 0 && shape[1] / h >= 2)
            heads.push_back(h);
        a.n = heads[std::uniform_int_distribution<size_t>(0, heads.size() - 1)(rng)];
        a.p = chance(0.5);
        if (chance(0.7)) {
          l.kind = TrainLayer::Residual;
          l.body = {norm(), a};
        } else {
          l = a;
        }
      } else if (what == 1) {
        l = norm();
      } else if (what == 2) {
        l = linear(pick({2, 4, 6, 8}));
      } else if (what == 3) {
        l = act();
      } else {
        l.kind = TrainLayer::Flatten;
      }
    } else {
      int what = int(pick({0, 0, 1, 2, 3, 4}));
      if (what == 0) {
        l = linear(pick({1, 2, 3, 7, 8, 16, 17, 32, 33}));
      } else if (what == 1) {
        l = norm();
      } else if (what == 2) {
        l = act();
      } else if (what == 3) {
        l.kind = TrainLayer::Residual;
        l.body = {linear(shape[0]), act()};
        if (chance(0.5))
          l.body.insert(l.body.begin(), norm());
      } else {
        l.kind = TrainLayer::Dropout;
        l.p = double(pick({1, 5})) / 10;
      }
    }
    // A norm over fewer than 4 features divides by a near-zero deviation
    // too often for a bound to survive it.
    bool narrowNorm = false;
    for (const TrainLayer &k : l.kind == TrainLayer::Residual ? l.body : std::vector<TrainLayer>{l})
      narrowNorm |= k.kind == TrainLayer::Norm && shape.back() < 4;
    std::string why;
    std::vector<int64_t> next = shape;
    if (narrowNorm || !walk({l}, next, nullptr, why))
      continue;
    int64_t elements = 1;
    for (int64_t d : next)
      elements *= d;
    if (elements > 1024)
      continue;
    r.layers.push_back(l);
    shape = next;
  }

  UpdateSpec &u = r.update;
  u.base = UpdateSpec::Base(pick({0, 1, 1, 2}));
  auto among = [&](std::initializer_list<double> xs) {
    return *(xs.begin() + std::uniform_int_distribution<size_t>(0, xs.size() - 1)(rng));
  };
  u.lr = u.base == UpdateSpec::Sgd ? among({0.05, 0.1}) : among({0.001, 0.01});
  if (u.base == UpdateSpec::Adam) {
    u.beta1 = among({0.8, 0.9});
    u.beta2 = among({0.99, 0.999});
    u.eps = among({1e-8, 1e-6});
  } else if (u.base == UpdateSpec::Lion) {
    u.beta1 = 0.9;
    u.beta2 = 0.99;
  }
  int wrappers = int(pick({0, 0, 1, 1, 2}));
  std::vector<int64_t> kinds = {0, 1, 2};
  std::shuffle(kinds.begin(), kinds.end(), rng);
  for (int i = 0; i < wrappers; ++i) {
    UpdateSpec::Wrapper w;
    w.kind = UpdateSpec::Wrapper::Kind(kinds[i]);
    if (w.kind == UpdateSpec::Wrapper::Schedule) {
      w.warmup = pick({0, 5, 100});
      w.decay = oneOf({"constant", "linear", "cosine"});
    } else if (w.kind == UpdateSpec::Wrapper::Clip) {
      w.value = among({0.01, 1.0}); // 0.01 clips, 1 may not
    } else {
      w.value = among({0.9, 0.99});
    }
    u.wrappers.push_back(w);
  }
  if (chance(0.3)) {
    r.penalty = among({0.001, 0.01});
    r.penaltyP = int(pick({1, 2}));
  }
  return r;
}

//===----------------------------------------------------------------------===//
// Compiling
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> synpl::difffuzz::compileTraining(MLIRContext *ctx, const std::string &syn,
                                                       StringRef name, bool cuda,
                                                       std::string &why) {
  Diagnostics diags(ctx);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(syn, name), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSyn(sourceMgr, ctx);
  if (!module) {
    why = "the .syn front end: " + diags.text;
    return nullptr;
  }
  {
    PassManager pm(ctx);
    pm.addPass(createL3ToL2());
    if (failed(pm.run(*module))) {
      why = "--synpl-l3-to-l2: " + diags.text;
      return nullptr;
    }
  }
  buildSystem(*module, cuda, /*cores=*/2, /*storage=*/true);
  PassManager pm(ctx);
  L2ToL1Options options;
  options.graphIsa = cuda ? "cuda" : "";
  pm.addPass(createL2ToL1(options));
  if (failed(pm.run(*module))) {
    why = "--synpl-l2-to-l1: " + diags.text;
    return nullptr;
  }
  return module;
}

//===----------------------------------------------------------------------===//
// One step through the reference
//===----------------------------------------------------------------------===//

namespace {

/// Where the handler's message arguments come from: the graph result each
/// `l1.send` operand traces back to through the stages' transfers (the
/// stage after the graph receives the graph's results as its arguments).
bool messageSources(ModuleOp module, l1::TensorGraphOp graph, l1::HandlerOp handler,
                    std::vector<unsigned> &sources, std::string &why) {
  auto actor = handler->getParentOfType<l1::ActorOp>();
  l1::SendOp send;
  module.walk([&](l1::SendOp s) {
    if (s.getTarget().getRootReference() == actor.getSymNameAttr() &&
        s.getTarget().getLeafReference() == handler.getSymNameAttr())
      send = s;
  });
  if (!send)
    return why = "no stage sends to @" + handler.getSymName().str(), false;
  auto stage = send->getParentOfType<l1::StageOp>();
  if (!stage || graph.getThen() != stage.getSymName())
    return why = "the update is not sent by the stage after the graph", false;
  for (Value v : send.getArgs()) {
    while (Operation *def = v.getDefiningOp()) {
      if (def->getNumOperands() != 1)
        return why = "a message argument is computed in the stage", false;
      v = def->getOperand(0);
    }
    sources.push_back(cast<BlockArgument>(v).getArgNumber());
  }
  return true;
}

/// Mid-training state: optimizer moments and counters drawn rather than
/// zero, so that the update depends on all of them; parameters that start
/// at zero (biases, shifts) drawn too.
void perturbState(l1::ActorOp actor, const std::set<std::string> &params, std::mt19937_64 &rng,
                  ref::StateEnv &state) {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  StringRef name = actor.getSymName();
  for (auto field : actor.getOps<l1::StateOp>()) {
    StringRef f = field.getSymName();
    Tensor t = *state.lookup(name, f);
    if (!t.getElementType().isFloat())
      continue;
    // Both paths start from the same f32 numbers (the initializers draw
    // doubles).
    for (double &v : t.data())
      v = double(float(v));
    if (field.getInit() != l1::InitKind::zeros) {
      state.set(name, f, std::move(t));
      continue;
    }
    bool isParam = params.count(f.str()) && t.getRank() > 0;
    for (double &v : t.data()) {
      if (t.getRank() == 0)
        v = std::uniform_int_distribution<int>(1, 40)(rng); // a step counter
      else if (isParam)
        v = 0.1 * unit(rng);
      else if (f.starts_with("v_"))
        v = 1e-4 * (1 + std::abs(normal(rng))); // second moments: positive, ~ g^2
      else
        v = 1e-3 * normal(rng);
      v = double(float(v));
    }
    state.set(name, f, std::move(t));
  }
}

Tensor drawArgument(Type type, bool labels, int64_t classes, std::mt19937_64 &rng) {
  auto tt = cast<RankedTensorType>(type);
  std::optional<ElementType> et = ElementType::get(tt.getElementType());
  Tensor t(*et, tt.getShape());
  for (double &v : t.data()) {
    if (labels)
      v = double(std::uniform_int_distribution<int64_t>(0, classes - 1)(rng));
    else if (et->isInteger())
      v = double(std::uniform_int_distribution<int>(0, 255)(rng));
    else
      v = double(float(std::uniform_real_distribution<double>(-1, 1)(rng)));
  }
  return t;
}

} // namespace

bool synpl::difffuzz::referenceStep(ModuleOp l1, uint64_t seed, StepCase &out,
                                    std::string &why) {
  auto actors = l1.getOps<l1::ActorOp>();
  auto graphs = l1.getOps<l1::TensorGraphOp>();
  if (std::distance(actors.begin(), actors.end()) != 1 ||
      std::distance(graphs.begin(), graphs.end()) != 1)
    return why = "not one actor and one tensor graph", false;
  l1::ActorOp actor = *actors.begin();
  l1::TensorGraphOp graph = *graphs.begin();
  auto handlers = actor.getOps<l1::HandlerOp>();
  if (handlers.empty())
    return why = "the actor has no handler", false;
  l1::HandlerOp handler = *handlers.begin();
  std::vector<unsigned> sources;
  if (!messageSources(l1, graph, handler, sources, why))
    return false;

  // State and batch.
  std::mt19937_64 rng(seed);
  ref::StateEnv state;
  Diagnostics diags(l1.getContext());
  if (failed(ref::initializeActorState(actor, seed, state, /*plannedSteps=*/200)))
    return why = "initial state: " + diags.text, false;
  std::set<std::string> params;
  for (auto window : actor.getOps<l1::WindowOp>())
    for (Attribute f : window.getFields())
      params.insert(cast<FlatSymbolRefAttr>(f).getValue().str());
  perturbState(actor, params, rng, state);
  Block &body = graph.getEntry();
  // The labels (the last argument) range over the classes the loss's
  // one_hot spreads them to.
  int64_t classes = 0;
  graph.walk([&](l1::OneHotOp o) { classes = int64_t(o.getClasses()); });
  if (classes < 1)
    return why = "the graph has no one_hot of its labels", false;
  std::vector<Tensor> inputs;
  for (auto [i, arg] : llvm::enumerate(body.getArguments()))
    inputs.push_back(drawArgument(arg.getType(), i + 1 == body.getNumArguments(), classes, rng));

  // The reference, with running bounds.
  ref::StateEnv before = state;
  RunningBounds bounds;
  ref::InterpretOptions options;
  options.observer = bounds.observer();
  auto outs = ref::interpretTensorGraph(graph, inputs, state, options);
  if (failed(outs))
    return why = "the reference interpreter: " + diags.text, false;
  Operation *ret = body.getTerminator();
  std::vector<Tensor> resultErr;
  for (auto [i, v] : llvm::enumerate(ret->getOperands())) {
    const Tensor *e = bounds.lookup(v);
    resultErr.push_back(e ? *e : Tensor(ElementType::f64(), (*outs)[i].getShape(), 0.0));
  }
  Block &entry = handler.getEntry();
  if (sources.size() != entry.getNumArguments())
    return why = "the message and the handler's arguments differ in count", false;
  std::vector<Tensor> message;
  for (auto [i, src] : llvm::enumerate(sources)) {
    if (src >= outs->size())
      return why = "a message argument beyond the graph's results", false;
    message.push_back((*outs)[src]);
    bounds.set(entry.getArgument(i), resultErr[src]);
  }
  if (failed(ref::interpretHandler(handler, message, state, options)))
    return why = "the reference interpreter (handler): " + diags.text, false;
  // Elements whose bound is infinite are counted, not compared (most often
  // one optimizer division of a few parameters); a loss without a finite
  // bound leaves nothing downstream worth comparing.
  if (resultErr.empty() || std::isinf(resultErr[0][0]))
    return why = "no finite error bound for the loss: " + bounds.unbounded(), false;

  // The case: state before, batch in; results and state after.
  std::string a = actor.getSymName().str();
  out.name = graph.getSymName().str();
  for (auto field : actor.getOps<l1::StateOp>()) {
    std::string f = field.getSymName().str();
    out.feeds.push_back({a + "." + f, *before.lookup(a, f), /*atStart=*/true});
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    out.feeds.push_back({"ingest#" + std::to_string(i), std::move(inputs[i])});
  for (size_t i = 0; i < outs->size(); ++i)
    out.wants.push_back({out.name + ".out" + std::to_string(i), "result #" + std::to_string(i),
                         (*outs)[i], resultErr[i]});
  for (auto field : actor.getOps<l1::StateOp>()) {
    std::string f = field.getSymName().str();
    const Tensor *e = bounds.field(f);
    const Tensor &value = *state.lookup(a, f);
    out.wants.push_back({a + "." + f, "state @" + f, value,
                         e ? *e : Tensor(ElementType::f64(), value.getShape(), 0.0),
                         /*atEnd=*/true});
  }
  return true;
}
