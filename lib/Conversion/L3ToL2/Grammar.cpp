//===- Grammar.cpp - The L3 -> L2 architecture grammar ---------------------===//
//
// The spec: "From depth(3) + sequential: 3-layer chain. Width search over
// powers-of-2 up to width(n). If causal, only causal attention. If
// autoregressive, add feedback edges." The grammar below is that sentence:
// a chain of stages, hidden widths non-increasing powers of two, with or
// without norm(layer), gelu or relu, sequential or residual where widths
// agree; self-attention for sequence inputs; a recurrent feedback loop for
// autoregressive models. It is enumerated and counted, never materialized.
//
//===----------------------------------------------------------------------===//
#include "L3ToL2.h"

#include "synpl/Search/Search.h"
#include "synpl/Support/Units.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

using namespace mlir;
using namespace synpl;
using namespace synpl::l3tol2;

//===----------------------------------------------------------------------===//
// What the model fixes
//===----------------------------------------------------------------------===//

namespace {
struct Example {
  SmallVector<int64_t> shape;
  Type element;
};
} // namespace

/// One example of a non-sequence domain as a tensor; std::nullopt for
/// domains without a fixed tensor view (tables, sequences).
static std::optional<Example> plainExample(Type domain) {
  if (auto tensor = dyn_cast<RankedTensorType>(domain))
    return Example{SmallVector<int64_t>(tensor.getShape()), tensor.getElementType()};
  if (auto dist = dyn_cast<l3::DistType>(domain))
    return Example{{dist.getNumClasses()}, Float32Type::get(domain.getContext())};
  if (auto scalar = dyn_cast<l3::ScalarType>(domain))
    return Example{{}, scalar.getDtype()};
  return std::nullopt;
}

static FailureOr<Problem> unsupported(l3::ModelOp model, const Twine &why) {
  search::SearchFailure failure;
  failure.kind = search::SearchFailure::Kind::NoCandidates;
  failure.boundary = ("L3->L2 @" + model.getSymName()).str();
  failure.reason = ("not supported: " + why).str();
  (void)search::emitSearchFailure(model, failure);
  return mlir::failure();
}

FailureOr<Problem> synpl::l3tol2::analyzeModel(l3::ModelOp model,
                                                SymbolTableCollection &symbols) {
  Problem p;
  p.model = model;
  if (std::optional<StringRef> group = model.getEquivariantGroup())
    return unsupported(model, "equivariant(" + *group +
                                  "): no architecture of the L3->L2 grammar (chains of "
                                  "linear, attn, norm and act stages) is equivariant to '" +
                                  *group + "'; drop the property or add an equivariant "
                                           "form to the grammar");
  Type in = model.resolveInDomain(symbols);
  if (!in)
    return unsupported(model, "the input domain of @" + model.getSymName() +
                                  " does not resolve");
  std::string inText;
  llvm::raw_string_ostream(inText) << in;

  if (auto seq = dyn_cast<l3::SequenceType>(in)) {
    if (!seq.isBounded())
      return unsupported(model, "input " + inText + " has no max_len");
    std::optional<Example> elem = plainExample(seq.getElementDomain());
    if (!elem || elem->shape.size() != 1 || !isa<FloatType>(elem->element))
      return unsupported(model, "input " + inText +
                                    ": the grammar reads sequences of float feature "
                                    "vectors (token ids would need embed(vocab, dim), "
                                    "and the domain gives no vocabulary)");
    p.sequence = true;
    p.inShape = {seq.getMaxLen(), elem->shape[0]};
    p.inElement = elem->element;
    p.inFeatures = elem->shape[0];
  } else if (std::optional<Example> ex = plainExample(in)) {
    if (ex->shape.empty())
      return unsupported(model, "input " + inText +
                                    " is a single value; the grammar's first stage, "
                                    "linear, needs a feature dimension");
    if (!isa<FloatType>(ex->element))
      return unsupported(model, "input " + inText +
                                    " holds integers; the grammar's stages compute on "
                                    "floats (ids would need embed(vocab, dim), and the "
                                    "domain gives no vocabulary)");
    p.inShape = ex->shape;
    p.inElement = ex->element;
    uint64_t features = 1;
    for (int64_t d : ex->shape)
      features = saturatingMul(features, static_cast<uint64_t>(d));
    if (features > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()))
      return unsupported(model, "input " + inText + " has too many features for a linear stage");
    p.inFeatures = static_cast<int64_t>(features);
  } else {
    return unsupported(model, "input " + inText +
                                  " has no fixed tensor view (tables are not in the grammar)");
  }

  Type out = model.getOutDomain();
  std::string outText;
  llvm::raw_string_ostream(outText) << out;
  auto setOut = [&](const Example &ex, bool dist) -> bool {
    if (ex.shape.size() != 1 || !isa<FloatType>(ex.element))
      return false;
    p.outShape = ex.shape;
    p.outElement = ex.element;
    p.outWidth = ex.shape[0];
    p.softmax = dist;
    return true;
  };
  if (auto seq = dyn_cast<l3::SequenceType>(out)) {
    std::optional<Example> elem = plainExample(seq.getElementDomain());
    if (!p.sequence || !seq.isBounded() || seq.getMaxLen() != p.inShape[0] || !elem ||
        !setOut(*elem, isa<l3::DistType>(seq.getElementDomain())))
      return unsupported(model, "output " + outText +
                                    ": the grammar maps a sequence input position by "
                                    "position to a sequence of the same length, of float "
                                    "vectors or dist(n)");
    p.outShape.insert(p.outShape.begin(), seq.getMaxLen());
  } else if (std::optional<Example> ex = plainExample(out);
             !ex || !setOut(*ex, isa<l3::DistType>(out))) {
    return unsupported(model, "output " + outText +
                                  ": the grammar's heads produce dist(n) or a float "
                                  "vector tensor(f, [m])");
  } else {
    p.poolSequence = p.sequence;
  }

  if (std::optional<int64_t> d = model.getDepthLimit()) {
    p.maxDepth = *d;
    p.depthBounded = true;
  }
  if (std::optional<int64_t> w = model.getWidthLimit()) {
    p.maxWidth = *w;
    p.widthBounded = true;
  }
  p.causal = model.isCausal();
  p.autoregressive = model.isAutoregressive();
  if (p.autoregressive) {
    // Feedback: the output is the next input, so it must be one.
    // The output is fed back as the next input: the chain is the cell of an
    // l2.recurrent over the input sequence.
    if (!p.sequence)
      return unsupported(model, "autoregressive: the grammar feeds a sequence back "
                                "(l2.recurrent over the input sequence); input " +
                                    inText + " is not one");
    p.sameAsInput = !p.softmax && p.outShape == p.inShape && p.outElement == p.inElement;
    p.extraStages = p.sameAsInput ? 0 : 1;
  }
  return p;
}

//===----------------------------------------------------------------------===//
// The architecture grammar
//===----------------------------------------------------------------------===//

std::string Architecture::str() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "depth " << depth();
  if (!hidden.empty()) {
    os << " [";
    llvm::interleave(hidden, os, "-");
    os << "]";
    os << (norm ? " norm" : " no-norm") << " " << l2::stringifyActFn(act);
    if (attention)
      os << " attn";
    if (residual)
      os << " residual";
  }
  return s;
}

/// The powers of two the width search tries, widest first.
static SmallVector<int64_t> widthSteps(const Problem &p) {
  SmallVector<int64_t> widths;
  if (p.maxWidth < 1)
    return widths;
  int64_t top = int64_t(1) << llvm::Log2_64(static_cast<uint64_t>(p.maxWidth));
  int64_t low = std::min(kGrammarMinWidth, top);
  for (int64_t w = top; w >= low; w /= 2)
    widths.push_back(w);
  return widths;
}

static uint64_t binomial(uint64_t n, uint64_t k) {
  if (k > n)
    return 0;
  k = std::min(k, n - k);
  long double r = 1;
  for (uint64_t i = 1; i <= k; ++i)
    r = r * static_cast<long double>(n - k + i) / static_cast<long double>(i);
  if (r >= 1.8e19L)
    return std::numeric_limits<uint64_t>::max();
  return static_cast<uint64_t>(r + 0.5L);
}

uint64_t synpl::l3tol2::countArchitectures(const Problem &p) {
  uint64_t k = widthSteps(p).size();
  uint64_t total = 0;
  for (int64_t d = 1; d <= p.chainDepth(); ++d) {
    if (d == 1) {
      total = saturatingAdd(total, 1);
      continue;
    }
    uint64_t m = d - 1;
    // Non-increasing sequences of m widths out of k: multisets.
    uint64_t seqs = k ? binomial(k + m - 1, m) : 0;
    // Those with an equal neighbour pair (a residual block fits).
    uint64_t withPair = m >= 2 ? seqs - binomial(k, m) : 0;
    uint64_t archs = saturatingMul(saturatingAdd(seqs, withPair), 4);
    if (p.sequence && d >= 3)
      archs = saturatingAdd(archs, saturatingMul(k, 8)); // uniform attn: x residual
    total = saturatingAdd(total, archs);
  }
  return total;
}

namespace {
struct ArchEnumerator {
  const Problem &p;
  llvm::function_ref<bool(const Architecture &)> yield;
  SmallVector<int64_t> widths;
  Architecture arch;

  bool emitVariants() {
    bool hasPair = false;
    for (size_t i = 1; i < arch.hidden.size(); ++i)
      hasPair |= arch.hidden[i] == arch.hidden[i - 1];
    for (bool norm : {true, false})
      for (l2::ActFn act : {l2::ActFn::gelu, l2::ActFn::relu})
        for (bool residual : {false, true}) {
          if (residual && !hasPair)
            continue;
          arch.norm = norm;
          arch.act = act;
          arch.residual = residual;
          if (!yield(arch))
            return false;
        }
    return true;
  }

  /// Non-increasing width sequences: the next width is at most the last.
  bool widthsFrom(size_t remaining, size_t minIndex) {
    if (remaining == 0)
      return emitVariants();
    for (size_t i = minIndex; i < widths.size(); ++i) {
      arch.hidden.push_back(widths[i]);
      bool more = widthsFrom(remaining - 1, i);
      arch.hidden.pop_back();
      if (!more)
        return false;
    }
    return true;
  }

  void run() {
    widths = widthSteps(p);
    for (int64_t d = 1; d <= p.chainDepth(); ++d) {
      arch = Architecture();
      if (d == 1) {
        if (!yield(arch))
          return;
        continue;
      }
      if (!widthsFrom(d - 1, 0))
        return;
      if (p.sequence && d >= 3) {
        // Self-attention blocks between a projection and the head.
        for (int64_t w : widths) {
          arch.hidden.assign(d - 1, w);
          arch.attention = true;
          if (!emitVariants())
            return;
        }
        arch.attention = false;
      }
    }
  }
};
} // namespace

void synpl::l3tol2::enumerateArchitectures(
    const Problem &problem, llvm::function_ref<bool(const Architecture &)> yield) {
  ArchEnumerator{problem, yield, {}, {}}.run();
}

//===----------------------------------------------------------------------===//
// Writing a candidate as l2.methods
//===----------------------------------------------------------------------===//

int64_t synpl::l3tol2::batchOf(Attribute sample) { return l2::sampleBatch(sample); }

namespace {
struct ChainBuilder {
  OpBuilder &b;
  Location loc;
  const Problem &p;
  const Architecture &arch;
  int64_t batch;
  unsigned fc = 0, norms = 0, attns = 0;

  StringAttr label(StringRef prefix, unsigned &counter) {
    return b.getStringAttr(prefix + Twine(++counter));
  }

  RankedTensorType typeOf(ArrayRef<int64_t> lead, int64_t width) {
    SmallVector<int64_t> shape(lead);
    shape.push_back(width);
    return RankedTensorType::get(shape, p.inElement);
  }

  /// The hidden stages and a head of `headWidth` over the (batched) input;
  /// `pool` flattens a sequence before the head, `softmax` ends in softmax.
  Value build(Value input, int64_t headWidth, bool pool, bool softmax) {
    Value x = input;
    SmallVector<int64_t> lead{batch};
    if (p.sequence)
      lead.push_back(p.inShape[0]);
    if (!p.sequence && p.inShape.size() >= 2)
      x = l2::FlattenOp::create(b, loc, typeOf(lead, p.inFeatures), x, nullptr, nullptr);
    int64_t cur = p.inFeatures;
    for (auto [i, w] : llvm::enumerate(arch.hidden)) {
      RankedTensorType type = typeOf(lead, w);
      Value y;
      if (arch.attention && i > 0)
        y = l2::AttnOp::create(b, loc, type, x, w >= 64 ? w / 64 : 1, w, p.causal,
                               label("attn", attns), nullptr);
      else
        y = l2::LinearOp::create(b, loc, type, x, cur, w, label("fc", fc), nullptr);
      if (arch.norm)
        y = l2::NormOp::create(b, loc, type, y, l2::NormKind::layer, nullptr,
                               label("norm", norms), nullptr);
      y = l2::ActOp::create(b, loc, type, y, arch.act, nullptr, nullptr);
      if (arch.residual && i > 0 && cur == w)
        y = l2::AddOp::create(b, loc, type, x, y, nullptr, nullptr);
      x = y;
      cur = w;
    }
    return head(x, lead, cur, headWidth, pool, softmax);
  }

  Value head(Value x, SmallVector<int64_t> lead, int64_t cur, int64_t width, bool pool,
             bool softmax) {
    if (pool) {
      int64_t flat = p.inShape[0] * cur;
      lead = {batch};
      x = l2::FlattenOp::create(b, loc, typeOf(lead, flat), x, nullptr, nullptr);
      cur = flat;
    }
    RankedTensorType outType = typeOf(lead, width);
    x = l2::LinearOp::create(b, loc, outType, x, cur, width, label("fc", fc), nullptr);
    if (softmax)
      x = l2::SoftmaxOp::create(b, loc, outType, x, nullptr, nullptr);
    return x;
  }
};
} // namespace

l2::MethodsOp synpl::l3tol2::buildMethods(OpBuilder &builder, Location loc, StringRef name,
                                          const Problem &p, const Choice &choice) {
  int64_t batch = batchOf(choice.sample);
  auto methods = l2::MethodsOp::create(builder, loc, builder.getStringAttr(name),
                                       FlatSymbolRefAttr::get(l3::ModelOp(p.model).getSymNameAttr()),
                                       choice.sample, choice.backward, choice.update);
  SmallVector<int64_t> inShape{batch};
  inShape.append(p.inShape);
  auto inType = RankedTensorType::get(inShape, p.inElement);
  Block *block = new Block();
  methods.getInfer().push_back(block);
  Value input = block->addArgument(inType, loc);

  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(block);
  ChainBuilder chain{builder, loc, p, choice.arch, batch};
  Value out;
  if (p.autoregressive) {
    // The feedback edge: the cell maps the sequence to its continuation,
    // which is fed back as the next step's input, max_len times.
    auto rec = l2::RecurrentOp::create(builder, loc, inType, input,
                                       builder.getI64IntegerAttr(p.inShape[0]), nullptr,
                                       nullptr, builder.getStringAttr("feedback"));
    Block *cell = new Block();
    rec.getCell().push_back(cell);
    Value state = cell->addArgument(inType, loc);
    OpBuilder::InsertionGuard cellGuard(builder);
    builder.setInsertionPointToEnd(cell);
    Value next = chain.build(state, p.inShape.back(), /*pool=*/false, /*softmax=*/false);
    l2::YieldOp::create(builder, loc, ValueRange{next});
    out = rec.getResult();
    if (!p.sameAsInput) {
      // The output is not the fed-back sequence itself: a head reads it.
      builder.setInsertionPointAfter(rec);
      out = chain.head(out, {batch, p.inShape[0]}, p.inShape.back(), p.outWidth,
                       p.poolSequence, p.softmax);
    }
  } else {
    out = chain.build(input, p.outWidth, p.poolSequence, p.softmax);
  }
  builder.setInsertionPointToEnd(block);
  l2::YieldOp::create(builder, loc, ValueRange{out});
  return methods;
}
