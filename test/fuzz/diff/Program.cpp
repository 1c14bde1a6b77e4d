//===- Program.cpp - Recipes of random L1 graphs, built with OpBuilder ----===//
#include "Program.h"

#include "synpl/Dialect/L1/L1Ops.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace mlir;
using namespace synpl;
using namespace synpl::difffuzz;

const char *synpl::difffuzz::opName(OpKind kind) {
  static const char *names[] = {
      "add", "sub", "mul", "div", "max", "min", "exp", "log", "sqrt", "reciprocal",
      "tanh", "cos", "abs", "sign", "neg", "matmul", "scale", "broadcast", "transpose",
      "reshape", "unfold", "fold", "reduce_sum", "reduce_mean", "reduce_max", "cmp",
      "select", "cast", "one_hot", "gather", "scatter_add", "random", "const"};
  return names[int(kind)];
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

int64_t Program::size(int dim) const {
  const DimNode &n = dims[dim];
  switch (n.kind) {
  case DimNode::Sym:
    return syms[n.a];
  case DimNode::Lit:
    return n.lit;
  case DimNode::Prod: {
    int64_t a = size(n.a), b = size(n.b);
    return a <= 0 || b <= 0 || a > (int64_t(1) << 30) / b ? -1 : a * b;
  }
  case DimNode::Conv: {
    int64_t i = size(n.a);
    int64_t span = i + 2 * n.p - n.k;
    return i <= 0 || span < 0 ? -1 : span / n.s + 1;
  }
  }
  return -1;
}

SmallVector<int64_t> Program::shape(int v) const {
  SmallVector<int64_t> s;
  for (int d : spec(v).shape)
    s.push_back(size(d));
  return s;
}

int64_t Program::elements(int v) const {
  int64_t n = 1;
  for (int64_t d : shape(v)) {
    if (d <= 0 || n > (int64_t(1) << 40) / d)
      return -1;
    n *= d;
  }
  return n;
}

int Program::intern(DimNode node) {
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] == node)
      return int(i);
  dims.push_back(node);
  return int(dims.size() - 1);
}

namespace {
/// The factors of a dimension node, as a sorted list of leaf nodes.
void factors(const Program &p, int dim, std::vector<int> &out) {
  const DimNode &n = p.dims[dim];
  if (n.kind == DimNode::Prod) {
    factors(p, n.a, out);
    factors(p, n.b, out);
    return;
  }
  // Equal leaves are interned, so the index identifies them.
  out.push_back(dim);
}
} // namespace

bool Program::sameShape(const std::vector<int> &a, const std::vector<int> &b) const {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i])
      continue;
    std::vector<int> fa, fb;
    factors(*this, a[i], fa);
    factors(*this, b[i], fb);
    std::sort(fa.begin(), fa.end());
    std::sort(fb.begin(), fb.end());
    // Literal 1 factors change nothing.
    auto one = [&](int d) { return dims[d].kind == DimNode::Lit && dims[d].lit == 1; };
    fa.erase(std::remove_if(fa.begin(), fa.end(), one), fa.end());
    fb.erase(std::remove_if(fb.begin(), fb.end(), one), fb.end());
    if (fa != fb)
      return false;
  }
  return true;
}

std::vector<int> Program::useCounts() const {
  std::vector<int> uses(numValues(), 0);
  for (const Step &s : steps)
    for (int o : s.operands)
      ++uses[o];
  return uses;
}

std::string Program::summary() const {
  std::string s = std::to_string(inputs.size()) + " inputs, " + std::to_string(steps.size()) +
                  " ops:";
  for (const Step &st : steps)
    s += std::string(" ") + opName(st.kind);
  return s;
}

//===----------------------------------------------------------------------===//
// Building
//===----------------------------------------------------------------------===//

namespace {

Type elementType(MLIRContext *ctx, Elem e) {
  switch (e) {
  case Elem::F32:
    return Float32Type::get(ctx);
  case Elem::I1:
    return IntegerType::get(ctx, 1);
  case Elem::UI8:
    return IntegerType::get(ctx, 8, IntegerType::Unsigned);
  }
  return {};
}

/// Creates one step's op (operands already built) or null.
Operation *buildStep(OpBuilder &b, Location loc, const Step &s, Type type,
                     ArrayRef<Value> in) {
  auto i64s = [&](size_t from, size_t n) {
    return b.getDenseI64ArrayAttr(ArrayRef<int64_t>(s.ints).slice(from, n));
  };
  auto axisAttr = [&]() -> IntegerAttr {
    return s.ints.empty() || s.ints[0] < 0 ? IntegerAttr() : b.getI64IntegerAttr(s.ints[0]);
  };
  switch (s.kind) {
  case OpKind::Add: return l1::AddOp::create(b, loc, type, in[0], in[1]);
  case OpKind::Sub: return l1::SubOp::create(b, loc, type, in[0], in[1]);
  case OpKind::Mul: return l1::MulOp::create(b, loc, type, in[0], in[1]);
  case OpKind::Div: return l1::DivOp::create(b, loc, type, in[0], in[1]);
  case OpKind::Max: return l1::MaxOp::create(b, loc, type, in[0], in[1]);
  case OpKind::Min: return l1::MinOp::create(b, loc, type, in[0], in[1]);
  case OpKind::Exp: return l1::ExpOp::create(b, loc, type, in[0]);
  case OpKind::Log: return l1::LogOp::create(b, loc, type, in[0]);
  case OpKind::Sqrt: return l1::SqrtOp::create(b, loc, type, in[0]);
  case OpKind::Reciprocal: return l1::ReciprocalOp::create(b, loc, type, in[0]);
  case OpKind::Tanh: return l1::TanhOp::create(b, loc, type, in[0]);
  case OpKind::Cos: return l1::CosOp::create(b, loc, type, in[0]);
  case OpKind::Abs: return l1::AbsOp::create(b, loc, type, in[0]);
  case OpKind::Sign: return l1::SignOp::create(b, loc, type, in[0]);
  case OpKind::Neg: return l1::NegOp::create(b, loc, type, in[0]);
  case OpKind::Matmul: return l1::MatmulOp::create(b, loc, type, in[0], in[1]);
  case OpKind::Scale: return l1::ScaleOp::create(b, loc, type, in[0], in[1]);
  case OpKind::Broadcast:
    return l1::BroadcastOp::create(b, loc, type, in[0],
                                   s.ints.empty() ? DenseI64ArrayAttr() : i64s(0, s.ints.size()));
  case OpKind::Transpose:
    return l1::TransposeOp::create(b, loc, type, in[0], i64s(0, s.ints.size()));
  case OpKind::Reshape: return l1::ReshapeOp::create(b, loc, type, in[0]);
  case OpKind::Unfold:
  case OpKind::Fold: {
    size_t d = (s.ints.size() - 1) / 3;
    bool last = s.ints.back() != 0;
    if (s.kind == OpKind::Unfold)
      return l1::UnfoldOp::create(b, loc, type, in[0], i64s(0, d), i64s(d, d), i64s(2 * d, d),
                                  last ? b.getUnitAttr() : UnitAttr());
    return l1::FoldOp::create(b, loc, type, in[0], i64s(0, d), i64s(d, d), i64s(2 * d, d),
                              last ? b.getUnitAttr() : UnitAttr());
  }
  case OpKind::ReduceSum: return l1::ReduceSumOp::create(b, loc, type, in[0], axisAttr());
  case OpKind::ReduceMean: return l1::ReduceMeanOp::create(b, loc, type, in[0], axisAttr());
  case OpKind::ReduceMax: return l1::ReduceMaxOp::create(b, loc, type, in[0], axisAttr());
  case OpKind::Cmp:
    return l1::CmpOp::create(b, loc, type, l1::CmpPredicate(s.ints[0]), in[0], in[1]);
  case OpKind::Select: return l1::SelectOp::create(b, loc, type, in[0], in[1], in[2]);
  case OpKind::Cast: return l1::CastOp::create(b, loc, type, in[0]);
  case OpKind::OneHot: return l1::OneHotOp::create(b, loc, type, in[0], uint64_t(s.ints[0]));
  case OpKind::Gather: return l1::GatherOp::create(b, loc, type, in[0], in[1]);
  case OpKind::ScatterAdd: return l1::ScatterAddOp::create(b, loc, type, in[0], in[1]);
  case OpKind::Random:
    return l1::RandomOp::create(b, loc, type, in[0], uint64_t(s.ints[0]), uint64_t(s.ints[1]));
  case OpKind::Const:
    return l1::ConstOp::create(b, loc, type, b.getF64FloatAttr(s.value));
  }
  return nullptr;
}

} // namespace

void synpl::difffuzz::buildSystem(ModuleOp module, bool cuda, int64_t cores, bool storage) {
  MLIRContext *ctx = module.getContext();
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  Location loc = UnknownLoc::get(ctx);
  auto system = l1::SystemOp::create(b, loc, "fuzz");
  system.getBody().push_back(new Block);
  OpBuilder in = OpBuilder::atBlockEnd(&system.getBody().front());
  l1::NodeOp::create(in, loc, "ram_0", l1::NodeKind::memory, in.getStringAttr("4GB"), {}, {},
                     {}, {}, {});
  l1::NodeOp::create(in, loc, "cpu_0", l1::NodeKind::compute, {}, in.getStringAttr("x86_64"),
                     {}, cores > 1 ? in.getI64IntegerAttr(cores) : IntegerAttr(), {}, {});
  l1::EdgeOp::create(in, loc, "ram_0", "cpu_0", true, "50GB/s", {});
  if (storage) {
    l1::NodeOp::create(in, loc, "ssd_0", l1::NodeKind::storage, {}, {}, {}, {}, {}, {});
    l1::EdgeOp::create(in, loc, "ssd_0", "ram_0", false, "2GB/s", {});
  }
  if (cuda) {
    l1::NodeOp::create(in, loc, "gpu_0", l1::NodeKind::compute, {}, in.getStringAttr("cuda"),
                       in.getStringAttr("16GB"), {}, in.getI64IntegerAttr(108), {});
    l1::EdgeOp::create(in, loc, "cpu_0", "gpu_0", true, "32GB/s", {});
  }
}

bool synpl::difffuzz::buildGraph(ModuleOp module, const Program &p, StringRef name,
                                 const SizeLimits &limits, BuiltGraph &out, std::string &why,
                                 StringRef node) {
  MLIRContext *ctx = module.getContext();
  // Shapes first: every size positive, every tensor within the limits.
  for (int v = 0; v < p.numValues(); ++v) {
    const ValueSpec &s = p.spec(v);
    if (int(s.shape.size()) > limits.maxRank) {
      why = "value " + std::to_string(v) + " has rank " + std::to_string(s.shape.size());
      return false;
    }
    int64_t n = p.elements(v);
    if (n <= 0 || n > limits.maxElements) {
      why = "value " + std::to_string(v) + " has " + std::to_string(n) + " elements";
      return false;
    }
  }
  for (const Step &s : p.steps)
    if (s.kind == OpKind::Matmul) {
      SmallVector<int64_t> lhs = p.shape(s.operands[0]), rhs = p.shape(s.operands[1]);
      int64_t flops = p.elements(s.operands[0]) * rhs.back();
      if (flops > limits.maxMatmulFlops) {
        why = "a matmul of " + std::to_string(flops) + " multiply-adds";
        return false;
      }
    }

  auto typeOf = [&](int v) -> RankedTensorType {
    return RankedTensorType::get(p.shape(v), elementType(ctx, p.spec(v).elem));
  };
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  std::string sink = (name + "_sink").str();
  Location loc = NameLoc::get(StringAttr::get(ctx, name));
  auto graph = l1::TensorGraphOp::create(b, loc, name, node, b.getArrayAttr({}),
                                         FlatSymbolRefAttr::get(ctx, sink));
  Block *body = new Block;
  graph.getBody().push_back(body);
  std::vector<Value> values;
  for (size_t i = 0; i < p.inputs.size(); ++i)
    values.push_back(body->addArgument(typeOf(int(i)), loc));
  OpBuilder gb = OpBuilder::atBlockEnd(body);
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const Step &s = p.steps[i];
    SmallVector<Value, 3> in;
    for (int o : s.operands)
      in.push_back(values[o]);
    int v = int(p.inputs.size() + i);
    Location at = NameLoc::get(StringAttr::get(ctx, "v" + std::to_string(v)));
    Operation *op = buildStep(gb, at, s, typeOf(v), in);
    values.push_back(op->getResult(0));
  }
  std::vector<int> uses = p.useCounts();
  SmallVector<Value> results;
  SmallVector<int> resultIds;
  for (int v = 0; v < p.numValues(); ++v)
    if (uses[v] == 0) {
      results.push_back(values[v]);
      resultIds.push_back(v);
    }
  l1::ReturnOp::create(gb, loc, results);

  auto stage = l1::StageOp::create(b, loc, sink, node, b.getArrayAttr({}));
  Block *sb = new Block;
  stage.getBody().push_back(sb);
  OpBuilder s = OpBuilder::atBlockEnd(sb);
  // A GPU's results stay in its memory; a CPU's are in the host's.
  auto ram = FlatSymbolRefAttr::get(ctx, node == "gpu_0" ? "gpu_0" : "ram_0");
  for (Value r : results)
    l1::DropOp::create(s, loc, sb->addArgument(l1::BufType::get(ctx, ram, cast<RankedTensorType>(r.getType())), loc));
  l1::EndOp::create(s, loc);

  // The input ranges, for the reproducer file and --check.
  SmallVector<Attribute> ranges;
  for (const InputSpec &in : p.inputs)
    ranges.push_back(b.getDenseF64ArrayAttr({in.lo, in.hi}));
  NamedAttrList all;
  if (auto old = module->getAttrOfType<DictionaryAttr>("difffuzz.inputs"))
    all.append(old.getValue());
  all.set(name, b.getArrayAttr(ranges));

  auto fail = [&](const std::string &reason) {
    stage.erase();
    graph.erase();
    why = reason;
    return false;
  };
  {
    std::string diags;
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &d) {
      if (diags.empty())
        diags = d.str();
      return success();
    });
    if (failed(verify(graph)) || failed(verify(stage)))
      return fail("the verifier refused it: " + diags);
  }
  GraphBounds bounds;
  std::vector<Bound> args;
  for (const InputSpec &in : p.inputs)
    args.push_back({in.lo, in.hi, 0});
  if (!bounds.run(graph, args, why))
    return fail(why);
  module->setAttr("difffuzz.inputs", all.getDictionary(ctx));
  out.graph = graph;
  out.values.clear();
  for (Value v : values)
    out.values.push_back(*bounds.lookup(v));
  out.results.clear();
  for (Value r : results)
    out.results.push_back(*bounds.lookup(r));
  return true;
}

std::vector<std::pair<double, double>>
synpl::difffuzz::inputRanges(ModuleOp module, l1::TensorGraphOp graph) {
  std::vector<std::pair<double, double>> ranges;
  ArrayAttr recorded;
  if (auto all = module->getAttrOfType<DictionaryAttr>("difffuzz.inputs"))
    recorded = all.getAs<ArrayAttr>(graph.getSymName());
  for (auto [i, arg] : llvm::enumerate(graph.getEntry().getArguments())) {
    if (recorded && i < recorded.size())
      if (auto pair = dyn_cast<DenseF64ArrayAttr>(recorded[i]))
        if (pair.size() == 2) {
          ranges.push_back({pair[0], pair[1]});
          continue;
        }
    bool fp = isa<FloatType>(cast<RankedTensorType>(arg.getType()).getElementType());
    ranges.push_back(fp ? std::make_pair(-1.0, 1.0) : std::make_pair(0.0, 7.0));
  }
  return ranges;
}

std::vector<ref::Tensor>
synpl::difffuzz::drawInputs(l1::TensorGraphOp graph,
                            ArrayRef<std::pair<double, double>> ranges, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<ref::Tensor> inputs;
  for (auto [arg, range] : llvm::zip(graph.getEntry().getArguments(), ranges)) {
    auto type = cast<RankedTensorType>(arg.getType());
    auto et = *ref::ElementType::get(type.getElementType());
    ref::Tensor t(et, type.getShape());
    auto [lo, hi] = range;
    if (et.isFloat()) {
      std::uniform_real_distribution<double> d(lo, hi);
      for (double &v : t.data())
        v = double(float(std::clamp(d(rng), lo, hi)));
    } else {
      // (An interval without an integer, as a reduced program's input may
      // inherit, gives its lower end.)
      int64_t a = int64_t(std::ceil(lo)), b = std::max(a, int64_t(std::floor(hi)));
      std::uniform_int_distribution<int64_t> d(a, b);
      for (double &v : t.data())
        v = double(d(rng));
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

bool synpl::difffuzz::resultBounds(l1::TensorGraphOp graph,
                                   ArrayRef<std::pair<double, double>> ranges,
                                   std::vector<Bound> &out, std::string &why) {
  GraphBounds bounds;
  std::vector<Bound> args;
  for (auto [lo, hi] : ranges)
    args.push_back({lo, hi, 0});
  if (!bounds.run(graph, args, why))
    return false;
  out.clear();
  for (Value r : graph.getEntry().getTerminator()->getOperands())
    out.push_back(*bounds.lookup(r));
  return true;
}
