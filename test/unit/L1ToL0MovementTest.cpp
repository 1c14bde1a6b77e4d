//===- L1ToL0MovementTest.cpp - Movement and window ops index correctly ---===//
//
// Random L1 tensor graphs of reshape / transpose / broadcast chains at ranks
// 1 to 6, mixed with elementwise ops (inlined into their readers) and axis
// reductions (materialized, then read through more movement), are lowered
// with --synpl-l1-to-l0; the kernels run in the plain UOp evaluator and
// every output must equal the reference interpreter's, element for element,
// with no access outside a buffer. A reshape of a transpose or a broadcast
// splits its index with DIV and MOD; a wrong stride or extent there moves
// elements, which the comparison sees. The window ops (unfold, fold) of a
// convolution are checked the same way at random kernels, strides and
// paddings in one and two spatial dimensions, and batched matmuls over
// transposed operands (attention's) also on the host, JIT-compiled.
//
//===----------------------------------------------------------------------===//
#include "synpl/Conversion/Passes.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Reference/L1Interpreter.h"

#include "HostJit.h"
#include "TestContext.h"
#include "UOpEvaluator.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/TargetSelect.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace mlir;
using namespace synpl;
using synpl::ref::ElementType;
using synpl::ref::Tensor;
using synpl::test::UOpEvaluator;

namespace {

using Shape = std::vector<int64_t>;

std::string tensorType(const Shape &s) {
  std::string t = "tensor<";
  for (int64_t d : s)
    t += std::to_string(d) + "x";
  return t + "f32>";
}

int64_t numel(const Shape &s) {
  return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>());
}

/// Builds one random graph as L1 text.
class ChainBuilder {
public:
  explicit ChainBuilder(unsigned seed) : rng(seed) {}

  std::string build(Shape &inputShape, std::vector<std::string> &trace) {
    Shape s = randomShape(1 + pick(4), 5);
    inputShape = s;
    std::string v = "%x";
    int steps = 3 + pick(6);
    for (int i = 0; i < steps; ++i) {
      int kind = pick(6);
      if (kind == 0 && s.size() >= 2)
        v = transpose(v, s);
      else if (kind == 1 && numel(s) * 3 <= kMaxElements && s.size() < 6)
        v = broadcast(v, s);
      else if (kind == 2)
        v = unary(v, s);
      else if (kind == 3 && s.size() >= 2)
        v = reduce(v, s);
      else
        v = reshape(v, s);
      trace.push_back(last);
    }
    // Read the chain's end inside a compute kernel, and return it as is
    // (a copy kernel through whatever views end the chain).
    std::string sum = fresh();
    body << "  " << sum << " = l1.add " << v << ", " << v << " : " << tensorType(s) << ", "
         << tensorType(s) << " -> " << tensorType(s) << "\n";
    std::ostringstream os;
    os << "l1.system @s {\n  l1.node @ram_0 memory {capacity = \"1GB\"}\n"
       << "  l1.node @cpu_0 compute {isa = \"x86_64\"}\n"
       << "  l1.edge @ram_0 <-> @cpu_0 bandwidth \"50GB/s\"\n}\n";
    os << "l1.tensor_graph @g on @cpu_0 then @ret compute(%x: " << tensorType(inputShape)
       << ") {\n"
       << body.str() << "  l1.return " << v << ", " << sum << " : " << tensorType(s) << ", "
       << tensorType(s) << "\n}\n";
    std::string buf = "!l1.buf<@ram_0, " + tensorType(s) + ">";
    os << "l1.stage @ret on @cpu_0 process(%a: " << buf << ", %b: " << buf << ") {\n"
       << "  l1.drop %a : " << buf << "\n  l1.drop %b : " << buf << "\n  l1.end\n}\n"
       << "l1.pipeline @train = @g\nl1.pipeline @back = @ret\n"
       << "l1.schedule pipelines [@train, @back] actors [] pipeline_depth 1\n";
    return os.str();
  }

private:
  static constexpr int64_t kMaxElements = 2048;
  std::mt19937 rng;
  std::ostringstream body;
  unsigned counter = 0;
  std::string last;

  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); }
  std::string fresh() { return "%v" + std::to_string(counter++); }

  Shape randomShape(int rank, int maxDim) {
    Shape s;
    for (int i = 0; i < rank; ++i)
      s.push_back(1 + pick(maxDim));
    return s;
  }

  void emit(const std::string &v, const std::string &op, const Shape &from, const Shape &to) {
    std::ostringstream line;
    line << "  " << v << " = " << op << " : " << tensorType(from) << " -> " << tensorType(to);
    last = line.str();
    body << last << "\n";
  }

  std::string transpose(const std::string &in, Shape &s) {
    std::vector<int64_t> perm(s.size());
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    Shape out;
    for (int64_t p : perm)
      out.push_back(s[p]);
    std::string v = fresh(), attr;
    for (size_t i = 0; i < perm.size(); ++i)
      attr += (i ? ", " : "") + std::to_string(perm[i]);
    emit(v, "l1.transpose " + in + " perm [" + attr + "]", s, out);
    s = out;
    return v;
  }

  /// Either widens a unit dimension or inserts a new one.
  std::string broadcast(const std::string &in, Shape &s) {
    Shape out;
    std::vector<int64_t> dims;
    auto unit = std::find(s.begin(), s.end(), 1);
    if (unit != s.end() && pick(2) == 0) {
      out = s;
      out[unit - s.begin()] = 2 + pick(2);
      for (size_t i = 0; i < s.size(); ++i)
        dims.push_back(i);
    } else {
      size_t at = pick(s.size() + 1);
      for (size_t i = 0; i <= s.size(); ++i) {
        if (i == at)
          out.push_back(2 + pick(2));
        if (i < s.size()) {
          dims.push_back(out.size());
          out.push_back(s[i]);
        }
      }
    }
    std::string v = fresh(), attr;
    for (size_t i = 0; i < dims.size(); ++i)
      attr += (i ? ", " : "") + std::to_string(dims[i]);
    emit(v, "l1.broadcast " + in + " dims [" + attr + "]", s, out);
    s = out;
    return v;
  }

  /// A random factorization of the element count, rank 1 to 6.
  std::string reshape(const std::string &in, Shape &s) {
    std::vector<int64_t> primes;
    int64_t n = numel(s);
    for (int64_t p = 2; p * p <= n; ++p)
      while (n % p == 0)
        primes.push_back(p), n /= p;
    if (n > 1)
      primes.push_back(n);
    int rank = 1 + pick(6);
    Shape out(rank, 1);
    for (int64_t p : primes)
      out[pick(rank)] *= p;
    std::string v = fresh();
    emit(v, "l1.reshape " + in, s, out);
    s = out;
    return v;
  }

  std::string unary(const std::string &in, Shape &s) {
    std::string v = fresh();
    const char *ops[] = {"l1.neg", "l1.tanh", "l1.abs"};
    emit(v, std::string(ops[pick(3)]) + " " + in, s, s);
    return v;
  }

  std::string reduce(const std::string &in, Shape &s) {
    int64_t axis = pick(s.size());
    Shape out = s;
    out.erase(out.begin() + axis);
    std::string v = fresh();
    emit(v, "l1.reduce_sum " + in + " axis " + std::to_string(axis), s, out);
    s = out;
    return v;
  }
};

} // namespace

namespace {

/// The plan of `text` run in the UOp evaluator against the reference: every
/// graph output equal, no access outside a buffer. Returns how many of its
/// kernels split an index with DIV.
int checkAgainstReference(MLIRContext *ctx, const std::string &text,
                          const std::vector<Tensor> &inputs) {
  INFO(text);
  std::string errors;
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &d) {
    errors += d.str() + "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, ctx);
  INFO(errors);
  REQUIRE(module);
  REQUIRE(succeeded(verify(*module)));
  auto graph = *module->getOps<l1::TensorGraphOp>().begin();
  ref::StateEnv state;
  auto outs = ref::interpretTensorGraph(graph, inputs, state);
  REQUIRE(succeeded(outs));
  PassManager pm(ctx);
  pm.addPass(createL1ToL0());
  REQUIRE(succeeded(pm.run(*module)));
  auto plan = *module->getOps<l0uop::PlanOp>().begin();
  REQUIRE(succeeded(verify(plan)));
  UOpEvaluator eval;
  eval.allocate(plan);
  for (size_t i = 0; i < inputs.size(); ++i)
    eval.memory["g.in" + std::to_string(i)] = inputs[i].data();
  int divides = 0;
  for (l0uop::KernelOp kernel : UOpEvaluator::firstStreamKernels(plan)) {
    bool div = false;
    kernel.walk([&](l0uop::DivOp) { div = true; });
    divides += div;
    eval.run(kernel);
  }
  CHECK(eval.outOfBounds == 0);
  for (size_t i = 0; i < outs->size(); ++i) {
    const Tensor &expected = (*outs)[i];
    Tensor actual(expected.getElementType(), expected.getShape(),
                  eval.memory["g.out" + std::to_string(i)]);
    // tanh is built from f32 constants (~1e-7 relative).
    ref::Comparison c = ref::compare(actual, expected, 1e-6, 1e-7);
    INFO("output " << i << ": " << c.message);
    CHECK(c.ok);
  }
  return divides;
}

std::string listOf(const Shape &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

} // namespace

TEST_CASE("L1ToL0: chains of reshape, transpose and broadcast at ranks 1 to 6 read the "
          "elements the reference reads",
          "[l1tol0][movement]") {
  auto ctx = synpl::test::makeContext();
  int checked = 0, divModKernels = 0;
  for (unsigned seed = 1; seed <= 150; ++seed) {
    ChainBuilder builder(seed);
    Shape inShape;
    std::vector<std::string> trace;
    std::string text = builder.build(inShape, trace);
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    Tensor x(ElementType::f32(), inShape);
    for (double &v : x.data())
      v = static_cast<float>(u(rng));
    divModKernels += checkAgainstReference(ctx.get(), text, {x});
    ++checked;
  }
  CHECK(checked == 150);
  // The generator must reach the DIV/MOD path, or the test checks nothing new.
  CHECK(divModKernels > 20);
}


TEST_CASE("L1ToL0: a layout copy with rows longer than a block splits them into blocks of "
          "lanes",
          "[l1tol0][movement]") {
  // [N, 7, 7, 64] moved to [N, 64, 7, 7] and flattened to rows of 3136 for a
  // matmul: the copy kernel's rows run as 4 blocks of 784 lanes. A row of
  // 1031 (a prime: no divisor from 32 to 1024) keeps the one-lane blocks.
  auto ctx = synpl::test::makeContext();
  struct Case {
    Shape in;
    std::string perm;
    int64_t row, block;
  };
  for (const Case &c : {Case{{2, 7, 7, 64}, "[0, 3, 1, 2]", 3136, 784},
                        Case{{2, 1, 1031}, "[0, 2, 1]", 1031, 1}}) {
    Shape moved = c.in.size() == 4 ? Shape{c.in[0], c.in[3], c.in[1], c.in[2]}
                                   : Shape{c.in[0], c.in[2], c.in[1]};
    std::string x = tensorType(c.in), t = tensorType(moved);
    std::string rows = "tensor<2x" + std::to_string(c.row) + "xf32>";
    std::string w = "tensor<" + std::to_string(c.row) + "x4xf32>";
    std::ostringstream os;
    os << "l1.system @s {\n  l1.node @ram_0 memory {capacity = \"1GB\"}\n"
       << "  l1.node @cpu_0 compute {isa = \"x86_64\"}\n"
       << "  l1.edge @ram_0 <-> @cpu_0 bandwidth \"50GB/s\"\n}\n"
       << "l1.tensor_graph @g on @cpu_0 then @ret compute(%x: " << x << ", %w: " << w << ") {\n"
       << "  %t = l1.transpose %x perm " << c.perm << " : " << x << " -> " << t << "\n"
       << "  %r = l1.reshape %t : " << t << " -> " << rows << "\n"
       << "  %y = l1.matmul %r, %w : " << rows << ", " << w << " -> tensor<2x4xf32>\n"
       << "  l1.return %y : tensor<2x4xf32>\n}\n"
       << "l1.stage @ret on @cpu_0 process(%a: !l1.buf<@ram_0, tensor<2x4xf32>>) {\n"
       << "  l1.drop %a : !l1.buf<@ram_0, tensor<2x4xf32>>\n  l1.end\n}\n"
       << "l1.pipeline @train = @g\nl1.pipeline @back = @ret\n"
       << "l1.schedule pipelines [@train, @back] actors [] pipeline_depth 1\n";
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    Tensor xs(ElementType::f32(), c.in), ws(ElementType::f32(), {c.row, 4});
    for (Tensor *tensor : {&xs, &ws})
      for (double &v : tensor->data())
        v = static_cast<float>(u(rng));
    INFO("row " << c.row);
    checkAgainstReference(ctx.get(), os.str(), {xs, ws});
    OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(os.str(), ctx.get());
    REQUIRE(m);
    PassManager pm(ctx.get());
    pm.addPass(createL1ToL0());
    REQUIRE(succeeded(pm.run(*m)));
    int64_t copyBlock = 0;
    m->walk([&](l0uop::KernelOp k) {
      if (StringRef(k.getSymName()).ends_with("_copy"))
        copyBlock = k.getBlock()[0];
    });
    CHECK(copyBlock == c.block);
  }
}

TEST_CASE("L1ToL0: unfold and fold kernels compute the reference's windows", "[l1tol0][window]") {
  // Half the trials channels first ([N, C, I...] and windows [N, O..., C,
  // K...]), half channels last ([N, I..., C], windows [N, O..., K..., C]).
  auto ctx = synpl::test::makeContext();
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int checked = 0;
  for (int trial = 0; trial < 80; ++trial) {
    bool last = trial >= 40;
    int spatial = 1 + trial % 2;
    int64_t n = pick(1, 3), c = pick(1, 3);
    Shape sizes, kernel, stride, padding;
    for (int d = 0; d < spatial; ++d) {
      kernel.push_back(pick(1, 4));
      stride.push_back(pick(1, 3));
      padding.push_back(pick(0, 2));
      sizes.push_back(std::max<int64_t>(pick(2, 7), kernel.back() - 2 * padding.back()));
    }
    Shape in{n}, windows{n};
    if (!last)
      in.push_back(c);
    in.insert(in.end(), sizes.begin(), sizes.end());
    if (last)
      in.push_back(c);
    for (int d = 0; d < spatial; ++d)
      windows.push_back((sizes[d] + 2 * padding[d] - kernel[d]) / stride[d] + 1);
    if (!last)
      windows.push_back(c);
    windows.insert(windows.end(), kernel.begin(), kernel.end());
    if (last)
      windows.push_back(c);
    std::string attrs = " kernel [" + listOf(kernel) + "] stride [" + listOf(stride) +
                        "] padding [" + listOf(padding) + "]" + (last ? " channels_last" : "");
    std::string x = tensorType(in), p = tensorType(windows);
    // unfold, a computation on the windows, and fold of both the windows
    // read back through a reshape (a convolution's backward) and a scaled
    // copy; unfold's windows and fold's sums are both outputs.
    std::string flat = "tensor<" + std::to_string(numel(windows)) + "xf32>";
    std::ostringstream body;
    body << "  %p = l1.unfold %x" << attrs << " : " << x << " -> " << p << "\n"
         << "  %t = l1.tanh %p : " << p << " -> " << p << "\n"
         << "  %r = l1.reshape %t : " << p << " -> " << flat << "\n"
         << "  %r2 = l1.reshape %r : " << flat << " -> " << p << "\n"
         << "  %f = l1.fold %r2" << attrs << " : " << p << " -> " << x << "\n";
    std::vector<std::string> results{"%p", "%f"}, types{p, x};
    if (last) {
      // The same windows and sums channels first, the channel moved: x
      // moved to [N, C, I...], unfolded and its windows moved back; the
      // windows moved to [N, O..., C, K...], folded and the sums moved
      // back. The reference must agree with itself (below), the kernels
      // with the reference.
      Shape first{n, c}, firstWindows(windows.begin(), windows.begin() + 1 + spatial);
      first.insert(first.end(), sizes.begin(), sizes.end());
      firstWindows.push_back(c);
      firstWindows.insert(firstWindows.end(), kernel.begin(), kernel.end());
      auto perm = [](const std::vector<int64_t> &v) {
        return "[" + listOf(Shape(v.begin(), v.end())) + "]";
      };
      std::vector<int64_t> toFirst{0, spatial + 1}, fromFirst{0}, windowsToFirst{0},
          windowsFromFirst{0};
      for (int d = 0; d < spatial; ++d) {
        toFirst.push_back(1 + d);
        fromFirst.push_back(2 + d);
        windowsToFirst.push_back(1 + d);
        windowsFromFirst.push_back(1 + d);
      }
      fromFirst.push_back(1);
      windowsToFirst.push_back(1 + 2 * spatial);
      for (int d = 0; d < spatial; ++d) {
        windowsToFirst.push_back(1 + spatial + d);
        windowsFromFirst.push_back(2 + spatial + d);
      }
      windowsFromFirst.push_back(1 + spatial);
      std::string xf = tensorType(first), pf = tensorType(firstWindows);
      std::string plain = " kernel [" + listOf(kernel) + "] stride [" + listOf(stride) +
                          "] padding [" + listOf(padding) + "]";
      body << "  %xf = l1.transpose %x perm " << perm(toFirst) << " : " << x << " -> " << xf << "\n"
           << "  %pf = l1.unfold %xf" << plain << " : " << xf << " -> " << pf << "\n"
           << "  %q = l1.transpose %pf perm " << perm(windowsFromFirst) << " : " << pf << " -> "
           << p << "\n"
           << "  %pp = l1.transpose %r2 perm " << perm(windowsToFirst) << " : " << p << " -> " << pf
           << "\n"
           << "  %ff = l1.fold %pp" << plain << " : " << pf << " -> " << xf << "\n"
           << "  %g = l1.transpose %ff perm " << perm(fromFirst) << " : " << xf << " -> " << x
           << "\n";
      results.insert(results.end(), {"%q", "%g"});
      types.insert(types.end(), {p, x});
    }
    std::ostringstream os;
    os << "l1.system @s {\n  l1.node @ram_0 memory {capacity = \"1GB\"}\n"
       << "  l1.node @cpu_0 compute {isa = \"x86_64\"}\n"
       << "  l1.edge @ram_0 <-> @cpu_0 bandwidth \"50GB/s\"\n}\n"
       << "l1.tensor_graph @g on @cpu_0 then @ret compute(%x: " << x << ") {\n"
       << body.str() << "  l1.return ";
    for (size_t i = 0; i < results.size(); ++i)
      os << (i ? ", " : "") << results[i];
    os << " : ";
    for (size_t i = 0; i < types.size(); ++i)
      os << (i ? ", " : "") << types[i];
    os << "\n}\nl1.stage @ret on @cpu_0 process(";
    for (size_t i = 0; i < types.size(); ++i)
      os << (i ? ", " : "") << "%a" << i << ": !l1.buf<@ram_0, " << types[i] << ">";
    os << ") {\n";
    for (size_t i = 0; i < types.size(); ++i)
      os << "  l1.drop %a" << i << " : !l1.buf<@ram_0, " << types[i] << ">\n";
    os << "  l1.end\n}\n"
       << "l1.pipeline @train = @g\nl1.pipeline @back = @ret\n"
       << "l1.schedule pipelines [@train, @back] actors [] pipeline_depth 1\n";
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    Tensor t(ElementType::f32(), in);
    for (double &v : t.data())
      v = static_cast<float>(u(rng));
    checkAgainstReference(ctx.get(), os.str(), {t});
    if (last) {
      OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(os.str(), ctx.get());
      REQUIRE(m);
      ref::StateEnv state;
      auto outs = ref::interpretTensorGraph(*m->getOps<l1::TensorGraphOp>().begin(), {t}, state);
      REQUIRE(succeeded(outs));
      CHECK((*outs)[0].data() == (*outs)[2].data());
      CHECK((*outs)[1].data() == (*outs)[3].data());
    }
    ++checked;
  }
  CHECK(checked == 80);
}

TEST_CASE("L1ToL0: batched matmuls over transposed operands compute the reference's "
          "products, in the UOp evaluator and on the host",
          "[l1tol0][matmul]") {
  // Attention's forms: [b..., m, k] x [b..., k, n] with one or two batch
  // dimensions, the operands read through transposes of their buffers
  // ([N, T, h, e] seen as [N, h, T, e], and as [N, h, e, T]).
  auto ctx = synpl::test::makeContext();
  MLIRContext &jitCtx = *ctx;
  jitCtx.appendDialectRegistry([] {
    DialectRegistry r;
    registerHostCodegen(r);
    return r;
  }());
  jitCtx.loadAllAvailableDialects();
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  std::mt19937 rng(11);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 12; ++trial) {
    int64_t n = pick(1, 3), t = pick(1, 9), h = pick(1, 3), e = pick(1, 17);
    bool twoBatch = trial % 2 == 0;
    Shape in{n, t, h, e};
    Shape qShape{n, h, t, e}, kShape{n, h, e, t}, out{n, h, t, t};
    std::string inT = tensorType(in), qT = tensorType(qShape), kT = tensorType(kShape);
    std::string outT = tensorType(out);
    std::ostringstream body;
    body << "  %qt = l1.transpose %q perm [0, 2, 1, 3] : " << inT << " -> " << qT << "\n"
         << "  %kt = l1.transpose %k perm [0, 2, 3, 1] : " << inT << " -> " << kT << "\n";
    std::string lhs = "%qt", rhs = "%kt", lT = qT, rT = kT, resT = outT;
    if (!twoBatch) {
      // One batch dimension: the heads folded into it (a reshape of the
      // transpose, which a copy kernel stores first).
      Shape q3{n * h, t, e}, k3{n * h, e, t}, o3{n * h, t, t};
      body << "  %q3 = l1.reshape %qt : " << qT << " -> " << tensorType(q3) << "\n"
           << "  %k3 = l1.reshape %kt : " << kT << " -> " << tensorType(k3) << "\n";
      lhs = "%q3", rhs = "%k3", lT = tensorType(q3), rT = tensorType(k3), resT = tensorType(o3);
    }
    body << "  %r = l1.matmul " << lhs << ", " << rhs << " : " << lT << ", " << rT << " -> "
         << resT << "\n";
    std::ostringstream os;
    os << "l1.system @s {\n  l1.node @ram_0 memory {capacity = \"1GB\"}\n"
       << "  l1.node @cpu_0 compute {isa = \"x86_64\"}\n"
       << "  l1.edge @ram_0 <-> @cpu_0 bandwidth \"50GB/s\"\n}\n"
       << "l1.tensor_graph @g on @cpu_0 then @ret compute(%q: " << inT << ", %k: " << inT
       << ") {\n"
       << body.str() << "  l1.return %r : " << resT << "\n}\n"
       << "l1.stage @ret on @cpu_0 process(%a: !l1.buf<@ram_0, " << resT << ">) {\n"
       << "  l1.drop %a : !l1.buf<@ram_0, " << resT << ">\n  l1.end\n}\n";
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    Tensor q(ElementType::f32(), in), k(ElementType::f32(), in);
    for (double &v : q.data())
      v = static_cast<float>(u(rng));
    for (double &v : k.data())
      v = static_cast<float>(u(rng));
    INFO("trial " << trial);
    checkAgainstReference(ctx.get(), os.str(), {q, k});
    // The host lowering (register-tiled when the shapes allow).
    Tensor want;
    std::vector<float> got = synpl::test::runGraphOnHost(jitCtx, os.str(), {q, k}, &want);
    Tensor actual(want.getElementType(), want.getShape(),
                  std::vector<double>(got.begin(), got.end()));
    ref::Comparison c = ref::compare(actual, want, 1e-5, 1e-6);
    INFO("host: " << c.message);
    CHECK(c.ok);
  }
}
