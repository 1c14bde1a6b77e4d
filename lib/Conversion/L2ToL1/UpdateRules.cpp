//===- UpdateRules.cpp - L2 update chains as L1 actor handlers ------------===//
//
// The spec's update materialisation: an L2 update chain (sgd, adam, muon,
// lion, wrapped in schedule / gradient_clip / ema, routed per parameter by
// per_param) becomes an actor handler whose body is explicit l1 tensor
// arithmetic over the gradients it receives and the state it keeps.
//
// The handler is emitted in program order: the step counter first (when a
// rule needs it), then the wrappers from the outside in (a clip scales the
// gradients its inner rule sees, a schedule contributes learning-rate
// factors), then one block per parameter, then the EMA shadows of the
// parameters just written. Adam under schedule(warmup, cosine) is op for op
// the handler of test/Dialect/L1/Inputs/mnist/mnist.py, except that the
// decay horizon is the state `total_steps` (init planned_steps: the runtime
// knows how many steps the run takes) instead of a compiled-in constant.
//
//===----------------------------------------------------------------------===//
#include "L2ToL1Impl.h"

#include "synpl/Dialect/L2/L2Ops.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <map>

using namespace mlir;
using namespace synpl;
using namespace synpl::l2tol1;

static double f64(const llvm::APFloat &v) { return v.convertToDouble(); }

/// How an update method is named in diagnostics: its mnemonic.
static std::string methodName(Attribute attr) {
  std::string s;
  llvm::raw_string_ostream os(s);
  attr.print(os);
  return s;
}

//===----------------------------------------------------------------------===//
// Checking
//===----------------------------------------------------------------------===//

/// Why `update` cannot be materialised ("<method>: <why>"), or nothing.
static std::optional<std::string> whyNot(Attribute update, ArrayRef<UpdateParam> params) {
  auto no = [&](const Twine &why) -> std::optional<std::string> {
    return (methodName(update) + ": " + why).str();
  };
  if (!update)
    return std::string("no update method");
  if (llvm::any_of(params, [](const UpdateParam &p) { return p.replicaBlocks > 0; }))
    if (std::optional<std::string> why = updateShardingObstacle(update))
      return no("update sharding: " + *why);
  if (isa<l2::SgdAttr, l2::AdamAttr, l2::LionAttr>(update))
    return std::nullopt;
  if (auto muon = dyn_cast<l2::MuonAttr>(update)) {
    if (muon.getNsSteps() < 0)
      return no("ns_steps must not be negative");
    return std::nullopt;
  }
  if (auto s = dyn_cast<l2::ScheduleAttr>(update)) {
    switch (s.getDecay()) {
    case l2::DecayKind::constant:
    case l2::DecayKind::linear:
    case l2::DecayKind::cosine:
      break;
    case l2::DecayKind::exponential:
    case l2::DecayKind::step:
      return no("decay " + l2::stringifyDecayKind(s.getDecay()) +
                " needs a rate or step size the L2 form does not give "
                "(constant, linear and cosine are lowered)");
    }
    if (s.getWarmup() < 0)
      return no("warmup must not be negative");
    return whyNot(s.getInner(), params);
  }
  if (auto c = dyn_cast<l2::GradientClipAttr>(update)) {
    if (!(f64(c.getMaxNorm()) > 0))
      return no("max_norm must be positive");
    return whyNot(c.getInner(), params);
  }
  if (auto e = dyn_cast<l2::EmaAttr>(update))
    return whyNot(e.getInner(), params);
  if (auto pp = dyn_cast<l2::PerParamAttr>(update)) {
    if (auto why = whyNot(pp.getOthers(), params))
      return why;
    if (pp.getMatrix())
      if (auto why = whyNot(pp.getMatrix(), params))
        return why;
    if (ArrayAttr overrides = pp.getOverrides())
      for (Attribute o : overrides) {
        auto po = dyn_cast<l2::ParamOverrideAttr>(o);
        if (!po)
          return no("an override is not a param_override");
        if (!llvm::any_of(params, [&](const UpdateParam &p) {
              return p.l2Name == po.getParam();
            }))
          return no("param_override names '" + po.getParam() +
                    "', which is no parameter of the model");
        if (auto why = whyNot(po.getUpdate(), params))
          return why;
      }
    return std::nullopt;
  }
  if (auto po = dyn_cast<l2::ParamOverrideAttr>(update))
    return whyNot(po.getUpdate(), params);
  return no("not an update method this lowering knows");
}

std::optional<std::string> synpl::l2tol1::whyUpdateNotLowered(Attribute update,
                                                              ArrayRef<UpdateParam> params) {
  return whyNot(update, params);
}

Attribute synpl::l2tol1::wholeTensorRule(Attribute update) {
  Attribute rule;
  if (update)
    update.walk([&](Attribute a) {
      if (!rule && isa<l2::GradientClipAttr, l2::MuonAttr>(a))
        rule = a;
    });
  return rule;
}

std::optional<std::string> synpl::l2tol1::updateShardingObstacle(Attribute update) {
  Attribute rule = wholeTensorRule(update);
  if (!rule)
    return std::nullopt;
  if (isa<l2::GradientClipAttr>(rule))
    return std::string("gradient_clip scales by the norm of every gradient, and a replica "
                       "holds only its block of a sharded parameter's gradient");
  return std::string("muon orthogonalizes whole weight matrices, and a replica updates only "
                     "its block of a sharded parameter's rows");
}

SmallVector<unsigned>
synpl::l2tol1::shardedUpdateParams(ArrayRef<std::pair<int64_t, int64_t>> rowsAndElements,
                                   int64_t replicas) {
  SmallVector<unsigned> sharded;
  if (replicas < 2)
    return sharded;
  for (auto [i, re] : llvm::enumerate(rowsAndElements))
    if (re.second >= kMinSplitElements && re.first > 0 && re.first % replicas == 0)
      sharded.push_back(unsigned(i));
  return sharded;
}

//===----------------------------------------------------------------------===//
// Emission
//===----------------------------------------------------------------------===//

namespace {
class UpdateEmitter {
public:
  UpdateEmitter(l1::ActorOp actor, l1::HandlerOp handler, ArrayRef<UpdateParam> params,
                const UpdateConstants &k)
      : actor(actor), params(params), k(k), b(handler.getContext()),
        loc(handler.getLoc()) {
    b.setInsertionPointToEnd(&handler.getEntry());
    f32 = b.getF32Type();
  }

  /// The parameters' values after the update, indexed like `params`.
  SmallVector<Value> newParams;

  void run(Attribute update, Block &entry, bool countSteps) {
    newParams.assign(params.size(), Value());
    if (countSteps)
      step();
    SmallVector<unsigned> all;
    SmallVector<Value> grads;
    for (unsigned i = 0; i < params.size(); ++i) {
      all.push_back(i);
      grads.push_back(entry.getArgument(i));
    }
    emitChain(update, all, grads, {});
    l1::ReturnOp::create(b, loc, ValueRange{});
    // The counters go after the per-parameter state, as mnist.py has them.
    for (l1::StateOp s : counters)
      if (Operation *anchor = firstNonState())
        s->moveBefore(anchor);
  }

private:
  l1::ActorOp actor;
  ArrayRef<UpdateParam> params;
  const UpdateConstants &k;
  OpBuilder b;
  Location loc;
  Type f32;
  Value stepValue, horizonValue, rankValue;
  SmallVector<l1::StateOp> counters;
  std::map<std::pair<double, std::string>, Value> constants;

  //===--- building blocks ------------------------------------------------===//

  RankedTensorType type(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, f32);
  }
  static std::string key(ArrayRef<int64_t> shape) {
    std::string s;
    for (int64_t d : shape)
      s += std::to_string(d) + "x";
    return s;
  }
  /// A splat constant, shared by every use in the handler.
  Value cst(double v, ArrayRef<int64_t> shape = {}) {
    Value &slot = constants[{v, key(shape)}];
    if (!slot)
      slot = l1::ConstOp::create(b, loc, type(shape), b.getF64FloatAttr(v));
    return slot;
  }
  Type typeOf(Value v) { return v.getType(); }
  Value add(Value a, Value c) { return l1::AddOp::create(b, loc, typeOf(a), a, c); }
  Value sub(Value a, Value c) { return l1::SubOp::create(b, loc, typeOf(a), a, c); }
  Value mul(Value a, Value c) { return l1::MulOp::create(b, loc, typeOf(a), a, c); }
  Value div(Value a, Value c) { return l1::DivOp::create(b, loc, typeOf(a), a, c); }
  Value min(Value a, Value c) { return l1::MinOp::create(b, loc, typeOf(a), a, c); }
  Value max(Value a, Value c) { return l1::MaxOp::create(b, loc, typeOf(a), a, c); }
  Value scale(Value a, Value s) { return l1::ScaleOp::create(b, loc, typeOf(a), a, s); }
  template <typename Op>
  Value un(Value a) {
    return Op::create(b, loc, typeOf(a), a);
  }
  Value sumAll(Value a) {
    return l1::ReduceSumOp::create(b, loc, type({}), a, IntegerAttr());
  }
  Value matmul(Value a, Value c) {
    auto ta = cast<RankedTensorType>(a.getType()), tc = cast<RankedTensorType>(c.getType());
    return l1::MatmulOp::create(b, loc, type({ta.getDimSize(0), tc.getDimSize(1)}), a, c);
  }
  Value transpose(Value a) {
    auto t = cast<RankedTensorType>(a.getType());
    return l1::TransposeOp::create(b, loc, type({t.getDimSize(1), t.getDimSize(0)}), a,
                                   DenseI64ArrayAttr());
  }
  Value reshape(Value a, ArrayRef<int64_t> shape) {
    if (cast<RankedTensorType>(a.getType()).getShape() == shape)
      return a;
    return l1::ReshapeOp::create(b, loc, type(shape), a);
  }

  Operation *firstNonState() {
    for (Operation &op : actor.getBody().front())
      if (!isa<l1::StateOp>(op))
        return &op;
    return nullptr;
  }
  /// Adds state field `name` (after the existing ones) unless it exists.
  l1::StateOp addState(StringRef name, ArrayRef<int64_t> shape, l1::InitKind init,
                       std::optional<uint64_t> shard = std::nullopt) {
    for (l1::StateOp s : actor.getBody().front().getOps<l1::StateOp>())
      if (s.getSymName() == name)
        return s;
    OpBuilder sb(actor.getContext());
    if (Operation *anchor = firstNonState())
      sb.setInsertionPoint(anchor);
    else
      sb.setInsertionPointToEnd(&actor.getBody().front());
    return l1::StateOp::create(sb, loc, name, type(shape), init,
                               shard ? sb.getI64IntegerAttr(*shard) : IntegerAttr());
  }
  Value read(StringRef field, ArrayRef<int64_t> shape) {
    return l1::StateReadOp::create(b, loc, type(shape),
                                   FlatSymbolRefAttr::get(b.getContext(), field));
  }
  void write(StringRef field, Value v) {
    l1::StateWriteOp::create(b, loc, FlatSymbolRefAttr::get(b.getContext(), field), v);
  }

  /// The axis `p`'s optimizer state splits: tensor parallelism's, or under
  /// update sharding the rows (0).
  static std::optional<uint64_t> shardOf(const UpdateParam &p) {
    if (p.replicaBlocks > 0)
      return 0;
    return p.shard;
  }
  /// The whole parameter's shape (`p.shape` is a block under update
  /// sharding).
  static SmallVector<int64_t> wholeShape(const UpdateParam &p) {
    SmallVector<int64_t> whole(p.shape.begin(), p.shape.end());
    if (p.replicaBlocks > 0)
      whole[0] *= p.replicaBlocks;
    return whole;
  }
  /// The parameter the rule updates: the whole field, or under update
  /// sharding the replica's block of its rows.
  Value readParam(const UpdateParam &p) {
    if (p.replicaBlocks == 0)
      return read(p.state, p.shape);
    if (!rankValue) {
      counters.push_back(addState(kRankField, {}, l1::InitKind::rank));
      rankValue = read(kRankField, {});
    }
    Value whole = read(p.state, wholeShape(p));
    return l1::BlockSliceOp::create(b, loc, type(p.shape), whole, rankValue, 0);
  }
  /// Writes the updated parameter: under update sharding, the replicas'
  /// updated blocks gathered into the whole.
  void writeParam(const UpdateParam &p, Value v) {
    if (p.replicaBlocks > 0)
      v = l1::AllGatherOp::create(b, loc, type(wholeShape(p)), v, 0);
    write(p.state, v);
  }

  /// t, the number of this update (1 on the first): `step` + 1, written back.
  Value step() {
    if (!stepValue) {
      counters.push_back(addState(kStepField, {}, l1::InitKind::zeros));
      Value prev = read(kStepField, {});
      stepValue = add(prev, cst(1.0));
      write(kStepField, stepValue);
    }
    return stepValue;
  }
  /// T, the number of updates the run takes (the decay horizon).
  Value horizon() {
    if (!horizonValue) {
      counters.push_back(addState("total_steps", {}, l1::InitKind::planned_steps));
      horizonValue = read("total_steps", {});
    }
    return horizonValue;
  }

  //===--- the chain --------------------------------------------------------===//

  /// Emits `update` for the parameters `idx` (their gradients `grads`, in
  /// the same order) with learning-rate factors `lrFactors`; records each
  /// parameter's new value in newParams.
  void emitChain(Attribute update, ArrayRef<unsigned> idx, ArrayRef<Value> grads,
                 ArrayRef<Value> lrFactors) {
    if (auto s = dyn_cast<l2::ScheduleAttr>(update))
      return emitSchedule(s, idx, grads, lrFactors);
    if (auto c = dyn_cast<l2::GradientClipAttr>(update))
      return emitClip(c, idx, grads, lrFactors);
    if (auto e = dyn_cast<l2::EmaAttr>(update))
      return emitEma(e, idx, grads, lrFactors);
    if (auto pp = dyn_cast<l2::PerParamAttr>(update))
      return emitPerParam(pp, idx, grads, lrFactors);
    if (auto po = dyn_cast<l2::ParamOverrideAttr>(update))
      return emitChain(po.getUpdate(), idx, grads, lrFactors);
    if (auto sgd = dyn_cast<l2::SgdAttr>(update))
      return emitSgd(sgd, idx, grads, lrFactors);
    if (auto adam = dyn_cast<l2::AdamAttr>(update))
      return emitAdam(f64(adam.getLr()), f64(adam.getBeta1()), f64(adam.getBeta2()),
                      f64(adam.getEps()), idx, grads, lrFactors);
    if (auto lion = dyn_cast<l2::LionAttr>(update))
      return emitLion(lion, idx, grads, lrFactors);
    if (auto muon = dyn_cast<l2::MuonAttr>(update))
      return emitMuon(muon, idx, grads, lrFactors);
    llvm_unreachable("checkUpdate admits no other method");
  }

  /// lr = base * f0 * f1 ... (in that order, as mnist.py multiplies).
  Value learningRate(double base, ArrayRef<Value> lrFactors) {
    Value lr = cst(base);
    for (Value f : lrFactors)
      lr = mul(lr, f);
    return lr;
  }

  // schedule(warmup, decay, inner): lr scaled by min(t / warmup, 1) and by
  // the decay of progress = min(max(t - warmup, 0) / max(T - warmup, 1), 1):
  // constant 1, linear 1 - progress, cosine 0.5 (1 + cos(pi progress)).
  void emitSchedule(l2::ScheduleAttr s, ArrayRef<unsigned> idx, ArrayRef<Value> grads,
                    ArrayRef<Value> lrFactors) {
    SmallVector<Value> factors(lrFactors.begin(), lrFactors.end());
    Value t = step();
    Value one = cst(1.0);
    int64_t warmup = s.getWarmup();
    if (warmup > 0) {
      Value frac = scale(t, cst(1.0 / double(warmup)));
      factors.push_back(min(frac, one));
    }
    if (s.getDecay() != l2::DecayKind::constant) {
      Value w = cst(double(warmup));
      Value after = max(sub(t, w), cst(0.0));
      Value span = max(sub(horizon(), w), one);
      Value progress = min(div(after, span), one);
      Value decay;
      if (s.getDecay() == l2::DecayKind::cosine) {
        Value angle = mul(progress, cst(M_PI));
        decay = mul(add(one, un<l1::CosOp>(angle)), cst(0.5));
      } else {
        decay = sub(one, progress);
      }
      factors.push_back(decay);
    }
    emitChain(s.getInner(), idx, grads, factors);
  }

  // gradient_clip(max_norm, inner): every gradient scaled by
  // min(1, max_norm / (||g|| + eps)), ||g|| the L2 norm over all of them.
  void emitClip(l2::GradientClipAttr c, ArrayRef<unsigned> idx, ArrayRef<Value> grads,
                ArrayRef<Value> lrFactors) {
    Value sumsq;
    for (Value g : grads) {
      Value s = sumAll(mul(g, g));
      sumsq = sumsq ? add(sumsq, s) : s;
    }
    Value norm = un<l1::SqrtOp>(sumsq);
    Value ratio = div(cst(f64(c.getMaxNorm())), add(norm, cst(k.clipEps)));
    Value factor = min(cst(1.0), ratio);
    SmallVector<Value> clipped;
    for (Value g : grads)
      clipped.push_back(scale(g, factor));
    emitChain(c.getInner(), idx, clipped, lrFactors);
  }

  // ema(decay, inner): after the inner update, shadow = d_t shadow +
  // (1 - d_t) p with d_t = decay from the second update on and 0 on the
  // first (the shadow starts as the first updated parameters, as PyTorch's
  // AveragedModel does).
  void emitEma(l2::EmaAttr e, ArrayRef<unsigned> idx, ArrayRef<Value> grads,
               ArrayRef<Value> lrFactors) {
    emitChain(e.getInner(), idx, grads, lrFactors);
    Value t = step();
    Value one = cst(1.0);
    Value started = min(sub(t, one), one);
    Value d = mul(started, cst(f64(e.getDecay())));
    Value keep = sub(one, d);
    for (unsigned i : idx) {
      const UpdateParam &p = params[i];
      std::string name = "ema_" + p.state;
      addState(name, p.shape, l1::InitKind::zeros, shardOf(p));
      Value shadow = read(name, p.shape);
      write(name, add(scale(shadow, d), scale(newParams[i], keep)));
    }
  }

  // per_param: a matching override first, then `matrix` for rank >= 2, then
  // `others`.
  void emitPerParam(l2::PerParamAttr pp, ArrayRef<unsigned> idx, ArrayRef<Value> grads,
                    ArrayRef<Value> lrFactors) {
    SmallVector<std::pair<Attribute, SmallVector<unsigned>>> groups;
    SmallVector<SmallVector<Value>> groupGrads;
    auto put = [&](Attribute rule, unsigned pos) {
      for (auto [g, entry] : llvm::enumerate(groups))
        if (entry.first == rule) {
          entry.second.push_back(idx[pos]);
          groupGrads[g].push_back(grads[pos]);
          return;
        }
      groups.push_back({rule, {idx[pos]}});
      groupGrads.push_back({grads[pos]});
    };
    for (unsigned pos = 0; pos < idx.size(); ++pos) {
      const UpdateParam &p = params[idx[pos]];
      Attribute rule;
      if (ArrayAttr overrides = pp.getOverrides())
        for (Attribute o : overrides)
          if (auto po = dyn_cast<l2::ParamOverrideAttr>(o); po && po.getParam() == p.l2Name) {
            rule = po.getUpdate();
            break;
          }
      if (!rule && pp.getMatrix() && p.shape.size() >= 2)
        rule = pp.getMatrix();
      if (!rule)
        rule = pp.getOthers();
      put(rule, pos);
    }
    for (auto [g, entry] : llvm::enumerate(groups))
      emitChain(entry.first, entry.second, groupGrads[g], lrFactors);
  }

  void emitSgd(l2::SgdAttr sgd, ArrayRef<unsigned> idx, ArrayRef<Value> grads,
               ArrayRef<Value> lrFactors) {
    Value lr = learningRate(f64(sgd.getLr()), lrFactors);
    for (auto [i, g] : llvm::zip(idx, grads)) {
      const UpdateParam &p = params[i];
      Value w = readParam(p);
      newParams[i] = sub(w, scale(g, lr));
      writeParam(p, newParams[i]);
    }
  }

  // Bias-corrected Adam, as mnist.py writes it: 1 - beta^t = 1 - exp(t ln
  // beta), step = lr / (1 - beta1^t), p -= step * m / (sqrt(v / (1 -
  // beta2^t)) + eps).
  void emitAdam(double base, double beta1, double beta2, double eps,
                ArrayRef<unsigned> idx, ArrayRef<Value> grads, ArrayRef<Value> lrFactors) {
    Value t = step();
    Value lr = learningRate(base, lrFactors);
    Value one = cst(1.0);
    Value pw1 = un<l1::ExpOp>(mul(t, cst(std::log(beta1))));
    Value pw2 = un<l1::ExpOp>(mul(t, cst(std::log(beta2))));
    Value bc1 = sub(one, pw1);
    Value bc2 = sub(one, pw2);
    Value stepSize = div(lr, bc1);
    Value invBc2 = un<l1::ReciprocalOp>(bc2);
    Value b1 = cst(beta1), omb1 = cst(1.0 - beta1);
    Value b2 = cst(beta2), omb2 = cst(1.0 - beta2);
    for (auto [i, g] : llvm::zip(idx, grads)) {
      const UpdateParam &p = params[i];
      std::string m = "m_" + p.state, v = "v_" + p.state;
      addState(m, p.shape, l1::InitKind::zeros, shardOf(p));
      addState(v, p.shape, l1::InitKind::zeros, shardOf(p));
      Value m0 = read(m, p.shape), v0 = read(v, p.shape), w = readParam(p);
      Value m1 = add(scale(m0, b1), scale(g, omb1));
      Value v1 = add(scale(v0, b2), scale(mul(g, g), omb2));
      Value vhat = scale(v1, invBc2);
      Value denom = add(un<l1::SqrtOp>(vhat), cst(eps, p.shape));
      Value update = scale(div(m1, denom), stepSize);
      newParams[i] = sub(w, update);
      write(m, m1);
      write(v, v1);
      writeParam(p, newParams[i]);
    }
  }

  // Lion: p -= lr sign(beta1 m + (1 - beta1) g); m = beta2 m + (1 - beta2) g.
  void emitLion(l2::LionAttr lion, ArrayRef<unsigned> idx, ArrayRef<Value> grads,
                ArrayRef<Value> lrFactors) {
    double beta1 = f64(lion.getBeta1()), beta2 = f64(lion.getBeta2());
    Value lr = learningRate(f64(lion.getLr()), lrFactors);
    for (auto [i, g] : llvm::zip(idx, grads)) {
      const UpdateParam &p = params[i];
      std::string m = "m_" + p.state;
      addState(m, p.shape, l1::InitKind::zeros, shardOf(p));
      Value m0 = read(m, p.shape), w = readParam(p);
      Value c = add(scale(m0, cst(beta1)), scale(g, cst(1.0 - beta1)));
      newParams[i] = sub(w, scale(un<l1::SignOp>(c), lr));
      Value m1 = add(scale(m0, cst(beta2)), scale(g, cst(1.0 - beta2)));
      write(m, m1);
      writeParam(p, newParams[i]);
    }
  }

  // Muon: Nesterov momentum, then ns_steps quintic Newton–Schulz iterations
  // on the update viewed as a [d0, rest] matrix (transposed when taller
  // than wide), normalised by its Frobenius norm; scaled by
  // sqrt(max(1, rows / cols)). Parameters of rank < 2: Adam (defaults,
  // lr UpdateConstants::muonFallbackLr) under the same schedule.
  void emitMuon(l2::MuonAttr muon, ArrayRef<unsigned> idx, ArrayRef<Value> grads,
                ArrayRef<Value> lrFactors) {
    SmallVector<unsigned> vecIdx;
    SmallVector<Value> vecGrads;
    Value lr;
    double mu = k.muonMomentum;
    for (auto [i, g] : llvm::zip(idx, grads)) {
      const UpdateParam &p = params[i];
      if (p.shape.size() < 2) {
        vecIdx.push_back(i);
        vecGrads.push_back(g);
        continue;
      }
      if (!lr)
        lr = learningRate(f64(muon.getLr()), lrFactors);
      std::string m = "m_" + p.state;
      addState(m, p.shape, l1::InitKind::zeros, shardOf(p));
      Value m0 = read(m, p.shape), w = readParam(p);
      Value m1 = add(scale(m0, cst(mu)), scale(g, cst(1.0 - mu)));
      write(m, m1);
      Value u = add(scale(g, cst(1.0 - mu)), scale(m1, cst(mu)));
      int64_t rows = p.shape[0], cols = 1;
      for (int64_t d : ArrayRef<int64_t>(p.shape).drop_front())
        cols *= d;
      Value x = reshape(u, {rows, cols});
      bool tall = rows > cols;
      if (tall)
        x = transpose(x);
      Value norm = un<l1::SqrtOp>(sumAll(mul(x, x)));
      x = scale(x, un<l1::ReciprocalOp>(add(norm, cst(k.nsEps))));
      for (int64_t s = 0; s < muon.getNsSteps(); ++s) {
        Value a = matmul(x, transpose(x));
        Value bm = add(scale(a, cst(k.nsB)), scale(matmul(a, a), cst(k.nsC)));
        x = add(scale(x, cst(k.nsA)), matmul(bm, x));
      }
      if (tall)
        x = transpose(x);
      x = reshape(x, p.shape);
      double shapeScale = std::sqrt(std::max(1.0, double(rows) / double(cols)));
      Value stepLr = shapeScale == 1.0 ? lr : mul(lr, cst(shapeScale));
      newParams[i] = sub(w, scale(x, stepLr));
      writeParam(p, newParams[i]);
    }
    if (!vecIdx.empty())
      emitAdam(k.muonFallbackLr, 0.9, 0.999, 1e-8, vecIdx, vecGrads, lrFactors);
  }
};
} // namespace

FailureOr<l1::HandlerOp>
synpl::l2tol1::materializeUpdate(l1::ActorOp actor, StringRef handlerName,
                                 Attribute update, ArrayRef<UpdateParam> params,
                                 Location diagLoc, const UpdateConstants &constants,
                                 bool countSteps) {
  if (std::optional<std::string> why = whyNot(update, params))
    return emitError(diagLoc) << "update method not lowered: " << *why;
  Block &body = actor.getBody().front();
  for (const UpdateParam &p : params)
    if (!llvm::any_of(body.getOps<l1::StateOp>(),
                      [&](l1::StateOp s) { return s.getSymName() == p.state; }))
      return emitError(diagLoc) << "actor @" << actor.getSymName()
                                << " has no state field @" << p.state;
  OpBuilder b(actor.getContext());
  b.setInsertionPointToEnd(&body);
  auto handler = l1::HandlerOp::create(b, actor.getLoc(), handlerName);
  Block *entry = new Block();
  handler.getBody().push_back(entry);
  Type f32 = b.getF32Type();
  for (const UpdateParam &p : params)
    entry->addArgument(RankedTensorType::get(p.shape, f32), actor.getLoc());
  UpdateEmitter emitter(actor, handler, params, constants);
  emitter.run(update, *entry, countSteps);
  return handler;
}
