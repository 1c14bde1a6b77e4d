//===- UpdateRulesTest.cpp - L2 update chains as L1 handlers, numerically -===//
//
// Each update rule of lib/Conversion/L2ToL1/UpdateRules.cpp is materialised
// into a handler of a small actor, run for several steps by the reference
// interpreter (synpl/Reference/L1Interpreter.h) on random gradients, and
// compared with a plain C++ implementation of the optimiser written here
// from its definition (PyTorch's, and the Muon / Lion reference code).
//
//===----------------------------------------------------------------------===//
#include "Conversion/L2ToL1/L2ToL1Impl.h"

#include "synpl/Dialect/L1/L1Ops.h"
#include "TestContext.h"
#include "synpl/InitAll.h"
#include "synpl/Reference/L1Interpreter.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace mlir;
using namespace synpl;
using synpl::ref::ElementType;
using synpl::ref::Tensor;

namespace {

using Vec = std::vector<double>;

using synpl::test::makeContext;

/// A parameter of the test actor.
struct P {
  std::string name; // state field, and "<name>.w" as the L2 name
  std::vector<int64_t> shape;
  int64_t size() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
};

/// An actor holding `params`, with the handler `update` materialised; runs
/// it step by step on the reference interpreter.
struct Harness {
  std::unique_ptr<MLIRContext> ctx = makeContext();
  OwningOpRef<ModuleOp> module;
  l1::ActorOp actor;
  l1::HandlerOp handler;
  std::vector<P> params;
  ref::StateEnv state;
  std::string errors;

  Harness(std::vector<P> ps, StringRef update) : params(std::move(ps)) {
    std::string text = R"(
      l1.system @s {
        l1.node @ram_0 memory {capacity = "1GB"}
        l1.node @cpu_0 compute {isa = "x86_64"}
        l1.edge @ram_0 <-> @cpu_0 bandwidth "1GB/s"
      }
      l1.actor @a on @cpu_0 {
)";
    for (const P &p : params) {
      text += "        l1.state @" + p.name + " : tensor<";
      for (int64_t d : p.shape)
        text += std::to_string(d) + "x";
      text += "f32> init zeros\n";
    }
    text += "      }\n";
    module = parseSourceString<ModuleOp>(text, ctx.get());
    REQUIRE(module);
    actor = *module->getOps<l1::ActorOp>().begin();
    Attribute attr = parseAttribute(update, ctx.get());
    REQUIRE(attr);
    SmallVector<l2tol1::UpdateParam> ups;
    for (const P &p : params)
      ups.push_back({p.name, p.name + ".w", SmallVector<int64_t, 4>(p.shape.begin(), p.shape.end())});
    ScopedDiagnosticHandler diag(ctx.get(), [&](Diagnostic &d) {
      errors += d.str() + "\n";
      return success();
    });
    FailureOr<l1::HandlerOp> h =
        l2tol1::materializeUpdate(actor, "Update", attr, ups, actor.getLoc());
    INFO(errors);
    REQUIRE(succeeded(h));
    handler = *h;
    REQUIRE(succeeded(verify(*module)));
    // Every state field starts at zero but the parameters and the horizon.
    for (l1::StateOp s : actor.getOps<l1::StateOp>())
      state.set("a", s.getSymName(),
                Tensor(ElementType::f32(), cast<RankedTensorType>(s.getType()).getShape()));
  }

  bool hasState(StringRef name) { return state.contains("a", name); }
  void setParam(const P &p, const Vec &v) {
    state.set("a", p.name,
              Tensor(ElementType::f32(), p.shape, std::vector<double>(v.begin(), v.end())));
  }
  Vec get(StringRef field) { return state.lookup("a", field)->data(); }

  void step(const std::vector<Vec> &grads) {
    SmallVector<Tensor> args;
    for (auto [p, g] : llvm::zip(params, grads))
      args.push_back(Tensor(ElementType::f32(), p.shape, g));
    ScopedDiagnosticHandler diag(ctx.get(), [&](Diagnostic &d) {
      errors += d.str() + "\n";
      return success();
    });
    INFO(errors);
    REQUIRE(succeeded(ref::interpretHandler(handler, args, state)));
  }
};

Vec randomVec(std::mt19937_64 &rng, int64_t n, double scale = 1.0) {
  std::normal_distribution<double> dist(0.0, scale);
  Vec v(n);
  for (double &x : v)
    x = dist(rng);
  return v;
}

void requireClose(const Vec &got, const Vec &want, double rtol = 1e-9, double atol = 1e-12) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    REQUIRE(std::abs(got[i] - want[i]) <= atol + rtol * std::abs(want[i]));
  }
}

//===--- the reference optimisers ------------------------------------------===//

double sgn(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; }

/// schedule(warmup, decay) factor at step t (1-based) of T.
double scheduleFactor(double t, double warmup, double total, const std::string &decay) {
  double f = warmup > 0 ? std::min(t / warmup, 1.0) : 1.0;
  if (decay == "constant")
    return f;
  double progress = std::min(std::max(t - warmup, 0.0) / std::max(total - warmup, 1.0), 1.0);
  if (decay == "cosine")
    return f * 0.5 * (1.0 + std::cos(M_PI * progress));
  return f * (1.0 - progress);
}

struct AdamRef {
  double lr, b1, b2, eps;
  Vec m, v;
  void step(Vec &p, const Vec &g, double t, double factor) {
    if (m.empty())
      m.assign(p.size(), 0), v.assign(p.size(), 0);
    double bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
    for (size_t i = 0; i < p.size(); ++i) {
      m[i] = b1 * m[i] + (1 - b1) * g[i];
      v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
      double mhat = m[i] / bc1, vhat = v[i] / bc2;
      p[i] -= lr * factor * mhat / (std::sqrt(vhat) + eps);
    }
  }
};

using Mat = std::vector<Vec>;
Mat toMat(const Vec &v, int64_t r, int64_t c) {
  Mat m(r, Vec(c));
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j)
      m[i][j] = v[i * c + j];
  return m;
}
Vec fromMat(const Mat &m) {
  Vec v;
  for (const Vec &row : m)
    v.insert(v.end(), row.begin(), row.end());
  return v;
}
Mat matmul(const Mat &a, const Mat &b) {
  Mat c(a.size(), Vec(b[0].size(), 0.0));
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t k = 0; k < b.size(); ++k)
      for (size_t j = 0; j < b[0].size(); ++j)
        c[i][j] += a[i][k] * b[k][j];
  return c;
}
Mat transposeM(const Mat &a) {
  Mat t(a[0].size(), Vec(a.size()));
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = 0; j < a[0].size(); ++j)
      t[j][i] = a[i][j];
  return t;
}

/// zeropower_via_newtonschulz5 of the Muon reference, in double.
Mat newtonSchulz(Mat x, int steps) {
  const double a = 3.4445, b = -4.7750, c = 2.0315;
  bool tall = x.size() > x[0].size();
  if (tall)
    x = transposeM(x);
  double norm = 0;
  for (const Vec &row : x)
    for (double e : row)
      norm += e * e;
  norm = std::sqrt(norm);
  for (Vec &row : x)
    for (double &e : row)
      e /= norm + 1e-7;
  for (int s = 0; s < steps; ++s) {
    Mat A = matmul(x, transposeM(x));
    Mat AA = matmul(A, A);
    Mat B = A;
    for (size_t i = 0; i < B.size(); ++i)
      for (size_t j = 0; j < B.size(); ++j)
        B[i][j] = b * A[i][j] + c * AA[i][j];
    Mat BX = matmul(B, x);
    for (size_t i = 0; i < x.size(); ++i)
      for (size_t j = 0; j < x[0].size(); ++j)
        x[i][j] = a * x[i][j] + BX[i][j];
  }
  return tall ? transposeM(x) : x;
}

} // namespace

TEST_CASE("update rules: sgd", "[l2tol1][update]") {
  std::vector<P> ps{{"w", {3, 2}}, {"b", {2}}};
  Harness h(ps, "#l2.sgd<lr = 0.1>");
  CHECK_FALSE(h.hasState("step")); // plain SGD needs no counter
  std::mt19937_64 rng(1);
  std::vector<Vec> p{randomVec(rng, 6), randomVec(rng, 2)};
  h.setParam(ps[0], p[0]);
  h.setParam(ps[1], p[1]);
  for (int t = 1; t <= 4; ++t) {
    std::vector<Vec> g{randomVec(rng, 6), randomVec(rng, 2)};
    h.step(g);
    for (int k = 0; k < 2; ++k)
      for (size_t i = 0; i < p[k].size(); ++i)
        p[k][i] -= 0.1 * g[k][i];
  }
  requireClose(h.get("w"), p[0]);
  requireClose(h.get("b"), p[1]);
}

TEST_CASE("update rules: adam under warmup + cosine (the MNIST handler)", "[l2tol1][update]") {
  std::vector<P> ps{{"w", {4, 3}}, {"b", {3}}};
  Harness h(ps, "#l2.schedule<warmup = 3, decay = cosine, inner = adam<lr = 0.01>>");
  REQUIRE(h.hasState("m_w"));
  REQUIRE(h.hasState("v_b"));
  REQUIRE(h.hasState("step"));
  REQUIRE(h.hasState("total_steps"));
  // The runtime fills total_steps with the run's planned steps.
  const double T = 10;
  h.state.set("a", "total_steps", Tensor::scalar(T));
  std::mt19937_64 rng(2);
  std::vector<Vec> p{randomVec(rng, 12), randomVec(rng, 3)};
  h.setParam(ps[0], p[0]);
  h.setParam(ps[1], p[1]);
  std::vector<AdamRef> ref(2, AdamRef{0.01, 0.9, 0.999, 1e-8, {}, {}});
  for (int t = 1; t <= 12; ++t) { // past the horizon: the rate stays 0
    std::vector<Vec> g{randomVec(rng, 12), randomVec(rng, 3)};
    h.step(g);
    double f = scheduleFactor(t, 3, T, "cosine");
    for (int k = 0; k < 2; ++k)
      ref[k].step(p[k], g[k], t, f);
  }
  requireClose(h.get("w"), p[0]);
  requireClose(h.get("b"), p[1]);
  requireClose(h.get("m_w"), ref[0].m);
  requireClose(h.get("v_b"), ref[1].v);
  requireClose(h.get("step"), {12.0});
}

TEST_CASE("update rules: sgd under linear decay without warmup", "[l2tol1][update]") {
  std::vector<P> ps{{"w", {5}}};
  Harness h(ps, "#l2.schedule<warmup = 0, decay = linear, inner = sgd<lr = 0.5>>");
  h.state.set("a", "total_steps", Tensor::scalar(4));
  std::mt19937_64 rng(3);
  Vec p = randomVec(rng, 5);
  h.setParam(ps[0], p);
  for (int t = 1; t <= 5; ++t) {
    Vec g = randomVec(rng, 5);
    h.step({g});
    double f = scheduleFactor(t, 0, 4, "linear");
    for (size_t i = 0; i < p.size(); ++i)
      p[i] -= 0.5 * f * g[i];
  }
  requireClose(h.get("w"), p);
}

TEST_CASE("update rules: lion", "[l2tol1][update]") {
  std::vector<P> ps{{"w", {3, 3}}};
  Harness h(ps, "#l2.lion<lr = 0.01, beta1 = 0.9, beta2 = 0.99>");
  std::mt19937_64 rng(4);
  Vec p = randomVec(rng, 9), m(9, 0.0);
  h.setParam(ps[0], p);
  for (int t = 1; t <= 5; ++t) {
    Vec g = randomVec(rng, 9);
    h.step({g});
    for (size_t i = 0; i < 9; ++i) {
      double c = 0.9 * m[i] + 0.1 * g[i];
      p[i] -= 0.01 * sgn(c);
      m[i] = 0.99 * m[i] + 0.01 * g[i];
    }
  }
  requireClose(h.get("w"), p);
  requireClose(h.get("m_w"), m);
}

TEST_CASE("update rules: muon (wide and tall matrices, vectors by Adam)", "[l2tol1][update]") {
  std::vector<P> ps{{"wide", {3, 5}}, {"tall", {6, 2}}, {"bias", {2}}};
  Harness h(ps, "#l2.muon<lr = 0.02, ns_steps = 5>");
  REQUIRE(h.hasState("m_wide"));
  REQUIRE(h.hasState("v_bias")); // the Adam fallback
  std::mt19937_64 rng(5);
  std::vector<Vec> p{randomVec(rng, 15), randomVec(rng, 12), randomVec(rng, 2)};
  for (int k = 0; k < 3; ++k)
    h.setParam(ps[k], p[k]);
  std::vector<Vec> mom{Vec(15, 0.0), Vec(12, 0.0)};
  AdamRef adam{3e-4, 0.9, 0.999, 1e-8, {}, {}};
  const double beta = 0.95;
  for (int t = 1; t <= 3; ++t) {
    std::vector<Vec> g{randomVec(rng, 15), randomVec(rng, 12), randomVec(rng, 2)};
    h.step(g);
    for (int k = 0; k < 2; ++k) {
      int64_t r = ps[k].shape[0], c = ps[k].shape[1];
      Vec u(g[k].size());
      for (size_t i = 0; i < u.size(); ++i) {
        mom[k][i] = beta * mom[k][i] + (1 - beta) * g[k][i];
        u[i] = (1 - beta) * g[k][i] + beta * mom[k][i];
      }
      Vec o = fromMat(newtonSchulz(toMat(u, r, c), 5));
      double s = std::sqrt(std::max(1.0, double(r) / double(c)));
      for (size_t i = 0; i < o.size(); ++i)
        p[k][i] -= 0.02 * s * o[i];
    }
    adam.step(p[2], g[2], t, 1.0);
  }
  requireClose(h.get("wide"), p[0], 1e-8);
  requireClose(h.get("tall"), p[1], 1e-8);
  requireClose(h.get("bias"), p[2]);
  // Newton–Schulz makes the update nearly orthogonal: the squared singular
  // values of a normalised wide matrix average 1/3 before and land in the
  // quintic's band around 1 after.
  Mat x = newtonSchulz(toMat(randomVec(rng, 15), 3, 5), 5);
  Mat xxT = matmul(x, transposeM(x));
  double meanSq = (xxT[0][0] + xxT[1][1] + xxT[2][2]) / 3;
  CHECK(meanSq > 0.7);
  CHECK(meanSq < 1.3);
}

TEST_CASE("update rules: gradient_clip scales by the global norm", "[l2tol1][update]") {
  std::vector<P> ps{{"w", {2, 2}}, {"b", {3}}};
  Harness h(ps, "#l2.gradient_clip<max_norm = 1.0, inner = sgd<lr = 1.0>>");
  std::mt19937_64 rng(6);
  std::vector<Vec> p{randomVec(rng, 4), randomVec(rng, 3)};
  h.setParam(ps[0], p[0]);
  h.setParam(ps[1], p[1]);
  for (double scale : {10.0, 0.01}) { // clipped, then not
    std::vector<Vec> g{randomVec(rng, 4, scale), randomVec(rng, 3, scale)};
    h.step(g);
    double sq = 0;
    for (const Vec &gv : g)
      for (double x : gv)
        sq += x * x;
    double f = std::min(1.0, 1.0 / (std::sqrt(sq) + 1e-6));
    if (scale > 1)
      REQUIRE(f < 1.0);
    else
      REQUIRE(f == 1.0);
    for (int k = 0; k < 2; ++k)
      for (size_t i = 0; i < p[k].size(); ++i)
        p[k][i] -= f * g[k][i];
  }
  requireClose(h.get("w"), p[0]);
  requireClose(h.get("b"), p[1]);
}

TEST_CASE("update rules: ema keeps a shadow of the updated parameters", "[l2tol1][update]") {
  std::vector<P> ps{{"w", {4}}};
  Harness h(ps, "#l2.ema<decay = 0.9, inner = adam<lr = 0.1>>");
  REQUIRE(h.hasState("ema_w"));
  std::mt19937_64 rng(7);
  Vec p = randomVec(rng, 4), shadow(4, 0.0);
  h.setParam(ps[0], p);
  AdamRef adam{0.1, 0.9, 0.999, 1e-8, {}, {}};
  for (int t = 1; t <= 5; ++t) {
    Vec g = randomVec(rng, 4);
    h.step({g});
    adam.step(p, g, t, 1.0);
    // AveragedModel: the first call copies, later calls average.
    for (size_t i = 0; i < 4; ++i)
      shadow[i] = t == 1 ? p[i] : 0.9 * shadow[i] + 0.1 * p[i];
  }
  requireClose(h.get("w"), p);
  requireClose(h.get("ema_w"), shadow);
}

TEST_CASE("update rules: per_param routes matrices, vectors and overrides", "[l2tol1][update]") {
  std::vector<P> ps{{"w", {2, 3}}, {"b", {3}}, {"g", {3}}};
  Harness h(ps, "#l2.per_param<others = sgd<lr = 0.1>, matrix = lion<lr = 0.01>, "
                "overrides = [#l2.param_override<param = \"g.w\", shape = [3], "
                "update = sgd<lr = 1.0>>]>");
  REQUIRE(h.hasState("m_w"));   // lion on the matrix
  REQUIRE_FALSE(h.hasState("m_b"));
  std::mt19937_64 rng(8);
  std::vector<Vec> p{randomVec(rng, 6), randomVec(rng, 3), randomVec(rng, 3)};
  for (int k = 0; k < 3; ++k)
    h.setParam(ps[k], p[k]);
  Vec m(6, 0.0);
  for (int t = 1; t <= 3; ++t) {
    std::vector<Vec> g{randomVec(rng, 6), randomVec(rng, 3), randomVec(rng, 3)};
    h.step(g);
    for (size_t i = 0; i < 6; ++i) {
      p[0][i] -= 0.01 * sgn(0.9 * m[i] + 0.1 * g[0][i]);
      m[i] = 0.99 * m[i] + 0.01 * g[0][i];
    }
    for (size_t i = 0; i < 3; ++i) {
      p[1][i] -= 0.1 * g[1][i];
      p[2][i] -= 1.0 * g[2][i];
    }
  }
  requireClose(h.get("w"), p[0]);
  requireClose(h.get("b"), p[1]);
  requireClose(h.get("g"), p[2]);
}

TEST_CASE("update rules: what is not lowered says why", "[l2tol1][update]") {
  auto ctx = makeContext();
  SmallVector<l2tol1::UpdateParam> ps{{"w", "fc.weight", {2, 2}}};
  auto why = [&](StringRef text) {
    Attribute a = parseAttribute(text, ctx.get());
    REQUIRE(a);
    return l2tol1::whyUpdateNotLowered(a, ps);
  };
  CHECK_FALSE(why("#l2.adam<lr = 0.1>"));
  std::optional<std::string> w =
      why("#l2.ema<decay = 0.5, inner = schedule<warmup = 1, decay = step, inner = sgd<lr = 0.1>>>");
  REQUIRE(w);
  CHECK(w->find("decay step needs a rate or step size") != std::string::npos);
  w = why("#l2.per_param<others = sgd<lr = 0.1>, overrides = [#l2.param_override<param = "
          "\"nope.weight\", shape = [2, 2], update = sgd<lr = 1.0>>]>");
  REQUIRE(w);
  CHECK(w->find("'nope.weight', which is no parameter") != std::string::npos);
}
