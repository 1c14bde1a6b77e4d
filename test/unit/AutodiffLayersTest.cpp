//===- AutodiffLayersTest.cpp - L2 -> L1 backward expansion, by layer -----===//
//
// The layers with windows, heads and draws, through buildTrainingGraph and
// the reference interpreter (AutodiffHarness.h): pooling, multi-head
// attention, single layers' values against direct formulas, a mixture of
// experts, checkpointed recomputation, dropout and convolutions; each
// gradient against central finite differences.
//
//===----------------------------------------------------------------------===//
#include "AutodiffHarness.h"

using namespace autodiff_test;

TEST_CASE("autodiff: max and avg pooling over windows that tile the input", "[autodiff]") {
  std::string src = program({"x : tensor<2x6x6xf32>", "y : tensor<1xui8>"}, "net", "!l3.dist<3>",
                            {"l3.divergence @ce(@net::@out, @d::@y) weight 1.0"}, 3,
                            "%x: tensor<3x2x6x6xf32>", R"(
      %h = l2.linear(6, 6) %x as "mix" : tensor<3x2x6x6xf32>
      %m = l2.pool(max, kernel = 2) %h : tensor<3x2x6x6xf32>
      %a = l2.pool(avg, kernel = 3) %m : tensor<3x2x3x3xf32>
      %f = l2.flatten %a : tensor<3x2x1x1xf32>
      %o = l2.linear(2, 3) %f as "head" : tensor<3x2xf32>
      %p = l2.softmax %o : tensor<3x3xf32>
      l2.yield %p : tensor<3x3xf32>
)");
  auto b = buildOk(src, {"d.x", "d.y"});
  checkGradients(*b, randomInputs(b->graph, 20, 3), randomState(*b, 21), 10);

  // A pool whose windows leave a remainder (6 = 4 + 2) is not lowered.
  std::string ragged = replaceAll(src,
                                  "l2.pool(max, kernel = 2) %h : tensor<3x2x6x6xf32>\n"
                                  "      %a = l2.pool(avg, kernel = 3) %m : tensor<3x2x3x3xf32>",
                                  "l2.pool(max, kernel = 4) %h : tensor<3x2x6x6xf32>\n"
                                  "      %a = l2.pool(avg, kernel = 1) %m : tensor<3x2x1x1xf32>");
  auto r = build(ragged, {"d.x", "d.y"});
  checkRefused(
      *r, {"lowered 5 of 6 ops; not lowered: 'l2.pool' at ", "its windows do not tile the input"},
      true);
}

TEST_CASE("autodiff: multi-head self-attention in a residual block", "[autodiff]") {
  std::string src =
      program({"x : tensor<3x4xf32>", "y : tensor<1xui8>"}, "tf", "!l3.dist<3>",
              {"l3.divergence @ce(@tf::@out, @d::@y) weight 1.0"}, 2, "%x: tensor<2x3x4xf32>", R"(
      %h = l2.linear(4, 4) %x as "embed_in" : tensor<2x3x4xf32>
      %a = l2.attn(heads = 2, dim = 4) %h as "sa" : tensor<2x3x4xf32>
      %r = l2.add %a, %h : tensor<2x3x4xf32>, tensor<2x3x4xf32>
      %n = l2.norm(layer) %r as "ln" : tensor<2x3x4xf32>
      %f = l2.flatten %n : tensor<2x3x4xf32>
      %o = l2.linear(12, 3) %f as "head" : tensor<2x12xf32>
      %p = l2.softmax %o : tensor<2x3xf32>
      l2.yield %p : tensor<2x3xf32>
)");
  auto b = buildOk(src, {"d.x", "d.y"});
  CHECK(b->params.size() == 2 + 8 + 2 + 2);
  std::vector<Tensor> inputs = randomInputs(b->graph, 22, 3);
  for (double &v : inputs[0].data())
    v = 4.0 * v - 2.0;
  checkGradients(*b, inputs, randomState(*b, 23), 8);

  // The attention's values, computed directly: an autoencoder made of one
  // attention layer over 6 positions, its loss mean((attn(x) - x)^2).
  for (bool causal : {false, true}) {
    std::string ae = program({"x : tensor<6x4xf32>"}, "sa", "tensor<6x4xf32>",
                             {"l3.reconstruction @rec(@sa::@in, @sa::@out) weight 1.0"}, 2,
                             "%x: tensor<2x6x4xf32>", R"(
      %a = l2.attn(heads = 2, dim = 4CAUSAL) %x as "sa" : tensor<2x6x4xf32>
      l2.yield %a : tensor<2x6x4xf32>
)");
    auto one = build(replaceAll(ae, "CAUSAL", causal ? ", causal" : ""), {"d.x"});
    INFO("causal " << causal);
    requireBuilt(*one);
    std::vector<Tensor> x = randomInputs(one->graph, 24, 1);
    ref::StateEnv st = randomState(*one, 25);
    auto param = [&](const char *n) { return *st.lookup("model_state", std::string("sa_") + n); };
    Tensor wq = param("wq"), wk = param("wk"), wv = param("wv"), wo = param("wo");
    Tensor bq = param("bq"), bk = param("bk"), bv = param("bv"), bo = param("bo");
    const int64_t T = 6;
    double sq = 0;
    for (int64_t n = 0; n < 2; ++n) {
      double q[T][4], k[T][4], v[T][4], o[T][4] = {};
      for (int64_t t = 0; t < T; ++t)
        for (int64_t c = 0; c < 4; ++c) {
          q[t][c] = bq[c], k[t][c] = bk[c], v[t][c] = bv[c];
          for (int64_t i = 0; i < 4; ++i) {
            double xi = x[0][(n * T + t) * 4 + i];
            q[t][c] += xi * wq[i * 4 + c];
            k[t][c] += xi * wk[i * 4 + c];
            v[t][c] += xi * wv[i * 4 + c];
          }
        }
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t i = 0; i < T; ++i) {
          int64_t last = causal ? i : T - 1;
          double sc[T], z = 0;
          for (int64_t j = 0; j <= last; ++j) {
            sc[j] = 0;
            for (int64_t c = 2 * h; c < 2 * h + 2; ++c)
              sc[j] += q[i][c] * k[j][c] / std::sqrt(2.0);
            z += std::exp(sc[j]);
          }
          for (int64_t j = 0; j <= last; ++j)
            for (int64_t c = 2 * h; c < 2 * h + 2; ++c)
              o[i][c] += std::exp(sc[j]) / z * v[j][c];
        }
      for (int64_t t = 0; t < T; ++t)
        for (int64_t c = 0; c < 4; ++c) {
          double y = bo[c];
          for (int64_t i = 0; i < 4; ++i)
            y += o[t][i] * wo[i * 4 + c];
          double dlt = y - x[0][(n * T + t) * 4 + c];
          sq += dlt * dlt;
        }
    }
    CHECK(run(*one, x, st)[0][0] == Approx(sq / (2 * T * 4)).epsilon(1e-12));
    checkGradients(*one, x, st, 8);
  }
}

namespace {
/// One layer between input and output, its loss sum(out^2) / batch: the
/// graph's loss against `expected(x, state)`, and its gradients.
void checkSingleLayer(const std::string &layer, const std::string &inShape,
                      const std::string &outShape, int64_t batch,
                      const std::function<double(const Tensor &, const ref::StateEnv &)> &expected,
                      int64_t intRange = 1) {
  std::string in = std::to_string(batch) + "x" + inShape;
  std::string src =
      program({"x : tensor<" + inShape + ">"}, "one", "tensor<" + outShape + ">",
              {"l3.norm @sq(@one::@out, p = 2) weight 1.0"}, batch, "%x: tensor<" + in + ">",
              "      %a = " + layer + " %x as \"layer\" : tensor<" + in + ">\n" +
                  "      l2.yield %a : tensor<" + std::to_string(batch) + "x" + outShape + ">\n");
  auto b = build(src, {"d.x"});
  INFO(layer);
  requireBuilt(*b);
  std::vector<Tensor> x = randomInputs(b->graph, 26, intRange);
  if (x[0].getElementType().isFloat())
    for (double &v : x[0].data())
      v = 4.0 * v - 2.0;
  ref::StateEnv state = randomState(*b, 27);
  CHECK(run(*b, x, state)[0][0] == Approx(expected(x[0], state)).epsilon(1e-12));
  if (!b->params.empty())
    checkGradients(*b, x, state, 6);
}
} // namespace

TEST_CASE("autodiff: layer values computed directly", "[autodiff]") {
  auto param = [](const ref::StateEnv &s, const char *slot) {
    return *s.lookup("model_state", std::string("layer_") + slot);
  };
  auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  SECTION("group norm: 2 groups of 2 channels x 2 positions") {
    checkSingleLayer("l2.norm(group(2))", "4x2xf32", "4x2xf32", 2,
                     [&](const Tensor &x, const ref::StateEnv &s) {
                       Tensor g = param(s, "gain"), be = param(s, "bias");
                       double total = 0;
                       for (int64_t n = 0; n < 2; ++n)
                         for (int64_t grp = 0; grp < 2; ++grp) {
                           double mu = 0, var = 0;
                           auto at = [&](int64_t i) { return x[n * 8 + grp * 4 + i]; };
                           for (int64_t i = 0; i < 4; ++i)
                             mu += at(i) / 4;
                           for (int64_t i = 0; i < 4; ++i)
                             var += (at(i) - mu) * (at(i) - mu) / 4;
                           for (int64_t i = 0; i < 4; ++i) {
                             int64_t c = grp * 2 + i / 2;
                             double y = (at(i) - mu) / std::sqrt(var + 1e-5) * g[c] + be[c];
                             total += y * y;
                           }
                         }
                       return total / 2;
                     });
  }
  SECTION("rms norm") {
    checkSingleLayer("l2.norm(rms)", "3xf32", "3xf32", 2,
                     [&](const Tensor &x, const ref::StateEnv &s) {
                       Tensor g = param(s, "gain");
                       double total = 0;
                       for (int64_t n = 0; n < 2; ++n) {
                         double ms = 0;
                         for (int64_t i = 0; i < 3; ++i)
                           ms += x[n * 3 + i] * x[n * 3 + i] / 3;
                         for (int64_t i = 0; i < 3; ++i) {
                           double y = x[n * 3 + i] / std::sqrt(ms + 1e-5) * g[i];
                           total += y * y;
                         }
                       }
                       return total / 2;
                     });
  }
  SECTION("silu and relu") {
    for (const char *fn : {"silu", "swish", "relu"}) {
      bool relu = std::string(fn) == "relu";
      checkSingleLayer(std::string("l2.act(") + fn + ")", "5xf32", "5xf32", 2,
                       [&](const Tensor &x, const ref::StateEnv &) {
                         double total = 0;
                         for (double v : x.data()) {
                           double y = relu ? std::max(v, 0.0) : v * sigmoid(v);
                           total += y * y;
                         }
                         return total / 2;
                       });
    }
  }
  SECTION("embed: a row of the table per id") {
    checkSingleLayer(
        "l2.embed(vocab = 6, dim = 2)", "3xi32", "3x2xf32", 2,
        [&](const Tensor &x, const ref::StateEnv &s) {
          Tensor table = param(s, "table");
          double total = 0;
          for (double id : x.data())
            for (int64_t c = 0; c < 2; ++c)
              total +=
                  table[static_cast<int64_t>(id) * 2 + c] * table[static_cast<int64_t>(id) * 2 + c];
          return total / 2;
        },
        6);
  }
  SECTION("max and avg pool") {
    for (bool isMax : {true, false}) {
      checkSingleLayer(isMax ? "l2.pool(max, kernel = 2)" : "l2.pool(avg, kernel = 2)", "1x2x4xf32",
                       "1x1x2xf32", 2, [&](const Tensor &x, const ref::StateEnv &) {
                         double total = 0;
                         for (int64_t n = 0; n < 2; ++n)
                           for (int64_t w = 0; w < 2; ++w) {
                             double m = isMax ? -1e300 : 0;
                             for (int64_t r = 0; r < 2; ++r)
                               for (int64_t c = 0; c < 2; ++c) {
                                 double v = x[n * 8 + r * 4 + w * 2 + c];
                                 m = isMax ? std::max(m, v) : m + v / 4;
                               }
                             total += m * m;
                           }
                         return total / 2;
                       });
    }
  }
}

TEST_CASE("autodiff: a mixture of experts without top_k", "[autodiff]") {
  std::string src =
      program({"x : tensor<3xf32>"}, "moe", "tensor<3xf32>",
              {"l3.norm @sq(@moe::@out, p = 2) weight 1.0"}, 2, "%x: tensor<2x3xf32>", R"(
      %y = l2.mixture %x as "mix" : tensor<2x3xf32> -> tensor<2x3xf32>
        experts({
        ^bb0(%a: tensor<2x3xf32>):
          %0 = l2.linear(3, 3) %a as "e0" : tensor<2x3xf32>
          l2.yield %0 : tensor<2x3xf32>
        }, {
        ^bb0(%b: tensor<2x3xf32>):
          %1 = l2.linear(3, 3) %b as "e1" : tensor<2x3xf32>
          l2.yield %1 : tensor<2x3xf32>
        }) gate {
        ^bb0(%c: tensor<2x3xf32>):
          %2 = l2.linear(3, 2) %c as "g" : tensor<2x3xf32>
          l2.yield %2 : tensor<2x2xf32>
        }
      l2.yield %y : tensor<2x3xf32>
)");
  auto b = buildOk(src, {"d.x"});
  std::vector<Tensor> x = randomInputs(b->graph, 28, 1);
  ref::StateEnv st = randomState(*b, 29);
  auto param = [&](const std::string &n) { return *st.lookup("model_state", n); };
  auto lin = [&](const std::string &l, int64_t n, int64_t out, int64_t c) {
    Tensor w = param(l + "_weight"), bias = param(l + "_bias");
    double z = bias[c];
    for (int64_t i = 0; i < 3; ++i)
      z += x[0][n * 3 + i] * w[i * out + c];
    return z;
  };
  double total = 0;
  for (int64_t n = 0; n < 2; ++n) {
    double s0 = lin("g", n, 2, 0), s1 = lin("g", n, 2, 1);
    double w0 = std::exp(s0) / (std::exp(s0) + std::exp(s1)), w1 = 1 - w0;
    for (int64_t c = 0; c < 3; ++c) {
      double y = w0 * lin("e0", n, 3, c) + w1 * lin("e1", n, 3, c);
      total += y * y;
    }
  }
  CHECK(run(*b, x, st)[0][0] == Approx(total / 2).epsilon(1e-12));
  checkGradients(*b, x, st, 6);

  auto k = build(replaceAll(src, "l2.mixture %x", "l2.mixture(top_k = 1) %x"), {"d.x"});
  checkRefused(*k, {"lowered 0 of 4 ops; not lowered: 'l2.mixture' \"mix\" at ", "top_k routing"},
               true);
}

TEST_CASE("autodiff: checkpointed layers are recomputed with identical numbers", "[autodiff]") {
  auto plain = build(mlp(), {"mnist.images", "mnist.labels"});
  auto ckpt = build(mlp("autodiff<mode = reverse, checkpoint = [\"norm1\", \"act_1\"]>"),
                    {"mnist.images", "mnist.labels"});
  requireBuilt(*plain);
  requireBuilt(*ckpt);
  // A second copy of norm1's normalization and of the second gelu.
  unsigned tanhs = 0, sqrts = 0;
  ckpt->graph.walk([&](l1::TanhOp) { ++tanhs; });
  ckpt->graph.walk([&](l1::SqrtOp) { ++sqrts; });
  CHECK(tanhs == 3);
  CHECK(sqrts == 3);
  CHECK(ckpt->bodyOps() > plain->bodyOps());

  std::vector<Tensor> inputs = randomInputs(plain->graph, 14, 3);
  ref::StateEnv state = randomState(*plain, 15);
  SmallVector<Tensor> a = run(*plain, inputs, state);
  SmallVector<Tensor> c = run(*ckpt, inputs, state);
  REQUIRE(a.size() == c.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("result " << i);
    CHECK(a[i].data() == c[i].data());
  }
  checkGradients(*ckpt, inputs, state, 3);
}

TEST_CASE("autodiff: dropout(p > 0) draws one mask per step, and none in evaluation",
          "[autodiff][random]") {
  auto withDropout = [](const std::string &p) {
    return replaceAll(replaceAll(mlp(), "%a0 = l2.act(gelu) %n0 : tensor<5x8xf32>",
                                 "%g0 = l2.act(gelu) %n0 : tensor<5x8xf32>\n"
                                 "      %a0 = l2.dropout(" + p + ") %g0 : tensor<5x8xf32>"),
                      "%a1 = l2.act(gelu) %n1 : tensor<5x8xf32>",
                      "%g1 = l2.act(gelu) %n1 : tensor<5x8xf32>\n"
                      "      %a1 = l2.dropout(" + p + ") %g1 : tensor<5x8xf32>");
  };
  auto b = buildOk(withDropout("0.5"), {"mnist.images", "mnist.labels"});
  auto plain = buildOk(mlp(), {"mnist.images", "mnist.labels"});
  // One draw per dropout, each its own stream, both at the window's step.
  std::set<int64_t> streams;
  b->graph.walk([&](l1::RandomOp r) {
    streams.insert(r.getStream());
    auto counter = r.getCounter().getDefiningOp<l1::WindowReadOp>();
    REQUIRE(counter);
    CHECK(counter.getField() == "step");
  });
  CHECK(streams == std::set<int64_t>{0, 1});

  std::vector<Tensor> inputs = randomInputs(b->graph, 21, 3);
  ref::StateEnv state = randomState(*b, 22);
  // The mask is a function of the step: the gradient is that of a fixed
  // masked network, which finite differences see.
  checkGradients(*b, inputs, state);
  double atStep3 = lossOnly(*b, inputs, state);
  CHECK(lossOnly(*b, inputs, state) == atStep3);
  state.set("model_state", "step", Tensor::scalar(4));
  CHECK(lossOnly(*b, inputs, state) != atStep3);

  // Evaluation (training flag 0): the network without dropout, exactly.
  state.set("model_state", "training", Tensor::scalar(0));
  CHECK(lossOnly(*b, inputs, state) == lossOnly(*plain, inputs, state));

  // p = 0 is the identity: no draw at all.
  auto none = buildOk(withDropout("0.0"), {"mnist.images", "mnist.labels"});
  unsigned draws = 0;
  none->graph.walk([&](l1::RandomOp) { ++draws; });
  CHECK(draws == 0);
}

TEST_CASE("autodiff: convolutions as matmuls over unfolded windows", "[autodiff]") {
  // conv(in_ch, out_ch, kernel, stride, padding) on [N, C, H, W] (and [N, C, L])
  // against a direct loop, then finite differences.
  struct Case {
    int64_t cin, cout, k, stride, pad, h, w;
    bool oneD;
  };
  for (Case c : {Case{2, 3, 3, 1, 1, 4, 5, false}, Case{1, 2, 2, 2, 0, 5, 4, false},
                 Case{2, 2, 3, 2, 1, 1, 7, true}}) {
    int64_t ho = c.oneD ? 1 : (c.h + 2 * c.pad - c.k) / c.stride + 1;
    int64_t wo = (c.w + 2 * c.pad - c.k) / c.stride + 1;
    auto dims = [](std::vector<int64_t> v) {
      std::string s;
      for (int64_t d : v)
        s += std::to_string(d) + "x";
      return s + "f32";
    };
    std::vector<int64_t> in =
        c.oneD ? std::vector<int64_t>{c.cin, c.w} : std::vector<int64_t>{c.cin, c.h, c.w};
    std::vector<int64_t> out =
        c.oneD ? std::vector<int64_t>{c.cout, wo} : std::vector<int64_t>{c.cout, ho, wo};
    std::string layer = "l2.conv(" + std::to_string(c.cin) + ", " + std::to_string(c.cout) +
                        ", kernel = " + std::to_string(c.k) +
                        ", stride = " + std::to_string(c.stride) +
                        ", padding = " + std::to_string(c.pad) + ")";
    INFO(layer << " on " << dims(in));
    checkSingleLayer(layer, dims(in), dims(out), 2, [&](const Tensor &x, const ref::StateEnv &s) {
      Tensor wt = *s.lookup("model_state", "layer_weight");
      Tensor bias = *s.lookup("model_state", "layer_bias");
      int64_t kh = c.oneD ? 1 : c.k;
      double total = 0;
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t co = 0; co < c.cout; ++co)
          for (int64_t oy = 0; oy < ho; ++oy)
            for (int64_t ox = 0; ox < wo; ++ox) {
              double y = bias[co];
              for (int64_t ci = 0; ci < c.cin; ++ci)
                for (int64_t ky = 0; ky < kh; ++ky)
                  for (int64_t kx = 0; kx < c.k; ++kx) {
                    int64_t iy = c.oneD ? 0 : oy * c.stride + ky - c.pad;
                    int64_t ix = ox * c.stride + kx - c.pad;
                    if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w)
                      continue;
                    double xv = x[((n * c.cin + ci) * c.h + iy) * c.w + ix];
                    y += xv * wt[((co * c.cin + ci) * kh + ky) * c.k + kx];
                  }
              total += y * y;
            }
      return total / 2;
    });
  }
}


TEST_CASE("autodiff: a convolution stack keeps its activations channels last", "[autodiff]") {
  // conv -> relu -> max pool -> conv -> gelu -> flatten: between the two
  // convolutions every activation and its gradient stays [N, H, W, C]
  // (channels_last windows for the second convolution), and the layout
  // goes back to channels first only where the flatten reads it.
  auto stack = [](const std::string &between) {
    return program({"x : tensor<2x6x6xf32>", "y : tensor<1xui8>"}, "net", "!l3.dist<3>",
                   {"l3.divergence @ce(@net::@out, @d::@y) weight 1.0"}, 2,
                   "%x: tensor<2x2x6x6xf32>", R"(
      %c1 = l2.conv(2, 5, kernel = 3, stride = 1, padding = 1) %x as "c1" : tensor<2x2x6x6xf32>
      %r1 = l2.act(relu) %c1 : tensor<2x5x6x6xf32>
      )" + between + R"(
      %p1 = l2.pool(max, kernel = 2) %d1 : tensor<2x5x6x6xf32>
      %c2 = l2.conv(5, 4, kernel = 2, stride = 1, padding = 0) %p1 as "c2" : tensor<2x5x3x3xf32>
      %g2 = l2.act(gelu) %c2 : tensor<2x4x2x2xf32>
      %f = l2.flatten %g2 : tensor<2x4x2x2xf32>
      %o = l2.linear(16, 3) %f as "head" : tensor<2x16xf32>
      %p = l2.softmax %o : tensor<2x3xf32>
      l2.yield %p : tensor<2x3xf32>
)");
  };
  // A dropout of p = 0 is the identity, and takes channels first only: it
  // makes the same network compute channels first around it.
  auto last = buildOk(stack("%d1 = l2.act(relu) %r1 : tensor<2x5x6x6xf32>"), {"d.x", "d.y"});
  auto first = buildOk(stack("%d1 = l2.dropout(0.0) %r1 : tensor<2x5x6x6xf32>"), {"d.x", "d.y"});
  auto isActivation = [](l1::TransposeOp t) {
    ArrayRef<int64_t> s = cast<RankedTensorType>(t.getOperand().getType()).getShape();
    return s.size() == 4 && s[0] == 2 && (s[1] == 5 || s[3] == 5);
  };
  unsigned moved = 0, lastWindows = 0;
  last->graph.walk([&](l1::TransposeOp t) { moved += isActivation(t); });
  last->graph.walk([&](l1::UnfoldOp u) { lastWindows += u.getChannelsLast(); });
  last->graph.walk([&](l1::FoldOp f) { lastWindows += f.getChannelsLast(); });
  CHECK(moved == 0);
  CHECK(lastWindows == 2); // the second convolution's unfold and fold
  unsigned firstMoved = 0;
  first->graph.walk([&](l1::TransposeOp t) { firstMoved += isActivation(t); });
  CHECK(firstMoved > 0);

  // The same function either way (relu twice is relu), and its gradients
  // against finite differences.
  std::vector<Tensor> x = randomInputs(last->graph, 40, 3);
  ref::StateEnv state = randomState(*last, 41);
  SmallVector<Tensor> a = run(*last, x, state), b = run(*first, x, state);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("result " << i);
    REQUIRE(a[i].size() == b[i].size());
    for (int64_t j = 0; j < a[i].size(); ++j)
      CHECK(a[i][j] == Approx(b[i][j]).epsilon(1e-9).margin(1e-12));
  }
  checkGradients(*last, x, state, 10);
}
