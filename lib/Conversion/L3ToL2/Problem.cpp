//===- Problem.cpp - What an l3.model fixes for the L3 -> L2 search -------===//
//
// Reads a verified l3.model: the input and output domains as tensors, the
// family of architectures the grammar builds for them (feed-forward chains,
// conv stacks for images under equivariant(translation), decoder-only
// transformers for token sequences), and the bounds (depth, width) and
// temporal properties (causal, autoregressive). A model the grammar has no
// architecture for fails here with NoCandidates(not supported: <why>).
//
//===----------------------------------------------------------------------===//
#include "L3ToL2.h"

#include "synpl/Search/Search.h"
#include "synpl/Support/Units.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

using namespace mlir;
using namespace synpl;
using namespace synpl::l3tol2;

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

static std::string text(Type type) {
  std::string s;
  llvm::raw_string_ostream(s) << type;
  return s;
}

static std::string shapeText(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(shape, os);
  os << "]";
  return s;
}

/// The image view of a translation-equivariant model's input: [H, W] gets a
/// channel dimension, [C, H, W] is channels-first as it is.
static LogicalResult imageView(Problem &p, l3::ModelOp model, const std::string &inText) {
  auto refuse = [&](const Twine &why) {
    (void)unsupported(model, "equivariant(translation) with input " + inText + ": " + why);
    return failure();
  };
  if (p.sequence)
    return refuse("the grammar's translation-equivariant stages are 2-D convolutions over "
                  "an image tensor, not a sequence");
  if (!isa<FloatType>(p.inElement))
    return refuse("convolutions compute on floats");
  ArrayRef<int64_t> s = p.inShape;
  if (s.size() == 2) {
    p.image = {1, s[0], s[1]};
    p.addChannel = true;
  } else if (s.size() == 3) {
    // Channels-last images ([32, 32, 3]) would need a transpose, which L2
    // does not have: a small last dimension under a large first one is
    // refused rather than read as 32 channels of a 32 x 3 image.
    if (s[2] <= 4 && s[0] > 4)
      return refuse("it looks channels-last ([H, W, C]); the grammar reads images "
                    "channels-first, [C, H, W]");
    p.image = {s[0], s[1], s[2]};
  } else {
    return refuse("the grammar convolves images of two spatial dimensions, [H, W] or "
                  "channels-first [C, H, W]; this input has " +
                  Twine(s.size()) + " dimensions");
  }
  p.family = Family::Conv;
  return success();
}

FailureOr<Problem> synpl::l3tol2::analyzeModel(l3::ModelOp model,
                                                SymbolTableCollection &symbols) {
  Problem p;
  p.model = model;
  std::optional<StringRef> group = model.getEquivariantGroup();
  if (group && *group != "translation")
    return unsupported(model, "equivariant(" + *group +
                                  "): no architecture of the L3->L2 grammar (chains of "
                                  "linear, attn, norm and act stages; conv stacks, which are "
                                  "equivariant to translation) is equivariant to '" +
                                  *group + "'; drop the property or add an equivariant "
                                           "form to the grammar");
  Type in = model.resolveInDomain(symbols);
  if (!in)
    return unsupported(model, "the input domain of @" + model.getSymName() +
                                  " does not resolve");
  std::string inText = text(in);

  if (auto seq = dyn_cast<l3::SequenceType>(in)) {
    if (!seq.isBounded())
      return unsupported(model, "input " + inText + " has no max_len");
    std::optional<Example> elem = plainExample(seq.getElementDomain());
    if (elem && elem->shape.empty() && isa<IntegerType>(elem->element)) {
      // Token ids: a decoder-only transformer over their vocabulary.
      unsigned bits = cast<IntegerType>(elem->element).getWidth();
      if (bits > 16)
        return unsupported(model, "input " + inText + ": token ids of " + Twine(bits) +
                                      " bits give no vocabulary the grammar can embed "
                                      "(embed(vocab, dim) needs ids of at most 16 bits)");
      p.family = Family::Transformer;
      p.sequence = true;
      p.inShape = {seq.getMaxLen()};
      p.inElement = elem->element;
      p.vocab = int64_t(1) << bits;
      p.inFeatures = p.vocab;
    } else if (!elem || elem->shape.size() != 1 || !isa<FloatType>(elem->element)) {
      return unsupported(model, "input " + inText +
                                    ": the grammar reads sequences of float feature "
                                    "vectors or of integer token ids (scalar(u8), ...)");
    } else {
      p.sequence = true;
      p.inShape = {seq.getMaxLen(), elem->shape[0]};
      p.inElement = elem->element;
      p.inFeatures = elem->shape[0];
    }
  } else if (std::optional<Example> ex = plainExample(in)) {
    if (ex->shape.empty())
      return unsupported(model, "input " + inText +
                                    " is a single value; the grammar's first stage, "
                                    "linear, needs a feature dimension");
    if (!isa<FloatType>(ex->element))
      return unsupported(model, "input " + inText +
                                    " holds integers; the grammar's stages compute on "
                                    "floats (token ids are read as sequence(scalar(u8), n))");
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
  if (group && failed(imageView(p, model, inText)))
    return failure();

  Type out = model.getOutDomain();
  std::string outText = text(out);
  if (auto seq = dyn_cast<l3::SequenceType>(out)) {
    std::optional<Example> elem = plainExample(seq.getElementDomain());
    if (!p.sequence || !seq.isBounded() || seq.getMaxLen() != p.inShape[0] || !elem ||
        elem->shape.size() != 1 || !isa<FloatType>(elem->element))
      return unsupported(model, "output " + outText +
                                    ": the grammar maps a sequence input position by "
                                    "position to a sequence of the same length, of float "
                                    "vectors or dist(n)");
    p.outShape = {seq.getMaxLen(), elem->shape[0]};
    p.outElement = elem->element;
    p.outWidth = elem->shape[0];
    p.softmax = isa<l3::DistType>(seq.getElementDomain());
  } else if (std::optional<Example> ex = plainExample(out)) {
    if (!isa<FloatType>(ex->element))
      return unsupported(model, "output " + outText +
                                    ": the grammar's heads compute floats (a linear "
                                    "layer); integer outputs are not in the grammar");
    uint64_t count = 1;
    for (int64_t d : ex->shape)
      count = saturatingMul(count, static_cast<uint64_t>(d));
    if (count > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()))
      return unsupported(model, "output " + outText + " " + shapeText(ex->shape) +
                                    " has too many elements for a linear head");
    p.outShape = ex->shape;
    p.outElement = ex->element;
    p.outWidth = static_cast<int64_t>(count);
    p.softmax = isa<l3::DistType>(out);
    p.reshapeOut = ex->shape.size() != 1;
    p.poolSequence = p.sequence;
  } else {
    return unsupported(model, "output " + outText +
                                  " has no fixed tensor view (tables are not in the grammar)");
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
  if (p.family == Family::Transformer) {
    // A decoder-only transformer is autoregressive by construction: it is
    // trained on every prefix at once (teacher forcing) and generates by
    // feeding its output back; its attention is causal either way.
    p.causal = p.causal || p.autoregressive;
    p.autoregressive = false;
  } else if (p.autoregressive) {
    // The output is fed back as the next input: the chain is the cell of an
    // l2.recurrent over the input sequence.
    if (!p.sequence)
      return unsupported(model, "autoregressive: the grammar feeds a sequence back "
                                "(l2.recurrent over the input sequence); input " +
                                    inText + " is not one");
    if (p.reshapeOut)
      return unsupported(model, "autoregressive: output " + outText +
                                    " is not a vector the recurrent cell can produce");
    p.sameAsInput = !p.softmax && p.outShape == p.inShape && p.outElement == p.inElement;
    p.extraStages = p.sameAsInput ? 0 : 1;
  }
  return p;
}
