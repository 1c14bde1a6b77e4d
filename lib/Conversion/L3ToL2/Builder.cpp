//===- Builder.cpp - Writing an L3 -> L2 candidate as l2.methods ----------===//
//
// Each architecture of the grammar (Grammar.cpp) becomes a real
// `l2.methods` op: a chain, conv stack or transformer over the batched
// input, then a head that produces the output domain (a linear layer, then
// softmax for distributions and l2.reshape for outputs that are not
// vectors). A hinted architecture (#[l2::infer(...)]) is built from its
// text (InferHint.cpp).
//
//===----------------------------------------------------------------------===//
#include "L3ToL2.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l3tol2;

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
  unsigned fc = 0, norms = 0, attns = 0, convs = 0, embeds = 0;

  StringAttr label(StringRef prefix, unsigned &counter) {
    return b.getStringAttr(prefix + Twine(++counter));
  }

  RankedTensorType typeOf(ArrayRef<int64_t> lead, int64_t width) {
    SmallVector<int64_t> shape(lead);
    shape.push_back(width);
    return RankedTensorType::get(shape, p.inElement);
  }

  /// The hidden stages over the (batched) input, in place on `x`; returns
  /// the width of the last.
  int64_t hiddenStages(Value &x, ArrayRef<int64_t> lead) {
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
    return cur;
  }

  /// The hidden stages and a head of `headWidth` (a recurrent cell's body);
  /// `pool` flattens a sequence before the head, `softmax` ends in softmax.
  Value build(Value input, int64_t headWidth, bool pool, bool softmax) {
    Value x = input;
    SmallVector<int64_t> lead{batch};
    if (p.sequence)
      lead.push_back(p.inShape[0]);
    int64_t cur = hiddenStages(x, lead);
    return head(x, lead, cur, headWidth, pool, softmax);
  }

  /// A feed-forward chain and the output head.
  Value buildChain(Value input) {
    Value x = input;
    SmallVector<int64_t> lead{batch};
    if (p.sequence)
      lead.push_back(p.inShape[0]);
    int64_t cur = hiddenStages(x, lead);
    return outputHead(x, lead, cur);
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

  /// The output head of a non-recurrent model: its output domain's shape.
  Value outputHead(Value x, SmallVector<int64_t> lead, int64_t cur) {
    x = head(x, lead, cur, p.outWidth, p.poolSequence, p.softmax);
    if (p.reshapeOut) {
      SmallVector<int64_t> shape{batch};
      shape.append(p.outShape);
      x = l2::ReshapeOp::create(b, loc, RankedTensorType::get(shape, p.inElement), x,
                                p.outShape, nullptr, nullptr);
    }
    return x;
  }

  /// conv(3, stride 1, padding 1) / act / pool(max, 2) stages, flatten, an
  /// optional hidden linear / act, the head.
  Value buildConv(Value input) {
    Value x = input;
    ArrayRef<int64_t> img = p.image;
    int64_t ch = img[0], h = img[1], w = img[2];
    auto imageType = [&](int64_t c) {
      return RankedTensorType::get({batch, c, h, w}, p.inElement);
    };
    if (p.addChannel)
      x = l2::ReshapeOp::create(b, loc, imageType(ch), x, ArrayRef<int64_t>{ch, h, w},
                                nullptr, nullptr);
    for (int64_t c : arch.channels) {
      x = l2::ConvOp::create(b, loc, imageType(c), x, ch, c, 3, 1, 1, label("conv", convs),
                             nullptr);
      x = l2::ActOp::create(b, loc, imageType(c), x, arch.act, nullptr, nullptr);
      ch = c;
      if (h % 2 == 0 && w % 2 == 0 && h >= 2 && w >= 2) {
        h /= 2, w /= 2;
        x = l2::PoolOp::create(b, loc, imageType(c), x, l2::PoolKind::max, 2, nullptr,
                               nullptr);
      }
    }
    int64_t cur = ch * h * w;
    x = l2::FlattenOp::create(b, loc, typeOf({batch}, cur), x, nullptr, nullptr);
    for (int64_t width : arch.hidden) {
      x = l2::LinearOp::create(b, loc, typeOf({batch}, width), x, cur, width,
                               label("fc", fc), nullptr);
      x = l2::ActOp::create(b, loc, typeOf({batch}, width), x, arch.act, nullptr, nullptr);
      cur = width;
    }
    return outputHead(x, {batch}, cur);
  }

  /// embed(vocab, dim, positions: T), then per block
  /// x + attn(norm(x)) and x + linear(4d, d)(gelu(linear(d, 4d)(norm(x)))),
  /// a final norm and the head (pre-norm, as GPT-2).
  Value buildTransformer(Value input) {
    int64_t t = p.inShape[0], d = arch.dim;
    RankedTensorType seq = RankedTensorType::get({batch, t, d}, b.getF32Type());
    RankedTensorType wide = RankedTensorType::get({batch, t, 4 * d}, b.getF32Type());
    Value x = l2::EmbedOp::create(b, loc, seq, input, p.vocab, d, b.getI64IntegerAttr(t),
                                  label("embed", embeds), nullptr);
    auto norm = [&](Value v) {
      return l2::NormOp::create(b, loc, seq, v, l2::NormKind::layer, nullptr,
                                label("norm", norms), nullptr);
    };
    for (int64_t k = 0; k < arch.blocks; ++k) {
      Value a = l2::AttnOp::create(b, loc, seq, norm(x), arch.heads, d, p.causal,
                                   label("attn", attns), nullptr);
      x = l2::AddOp::create(b, loc, seq, x, a, nullptr, nullptr);
      Value m = l2::LinearOp::create(b, loc, wide, norm(x), d, 4 * d, label("fc", fc), nullptr);
      m = l2::ActOp::create(b, loc, wide, m, l2::ActFn::gelu, nullptr, nullptr);
      m = l2::LinearOp::create(b, loc, seq, m, 4 * d, d, label("fc", fc), nullptr);
      x = l2::AddOp::create(b, loc, seq, x, m, nullptr, nullptr);
    }
    x = norm(x);
    RankedTensorType outType = RankedTensorType::get({batch, t, p.outWidth}, b.getF32Type());
    if (p.poolSequence) {
      x = l2::FlattenOp::create(b, loc, RankedTensorType::get({batch, t * d}, b.getF32Type()),
                                x, nullptr, nullptr);
      outType = RankedTensorType::get({batch, p.outWidth}, b.getF32Type());
      d = t * d;
    }
    x = l2::LinearOp::create(b, loc, outType, x, d, p.outWidth, label("fc", fc), nullptr);
    if (p.softmax)
      x = l2::SoftmaxOp::create(b, loc, outType, x, nullptr, nullptr);
    if (p.reshapeOut) {
      SmallVector<int64_t> shape{batch};
      shape.append(p.outShape);
      x = l2::ReshapeOp::create(b, loc, RankedTensorType::get(shape, b.getF32Type()), x,
                                p.outShape, nullptr, nullptr);
    }
    return x;
  }
};
} // namespace

FailureOr<l2::MethodsOp> synpl::l3tol2::buildMethods(OpBuilder &builder, Location loc,
                                                     StringRef name, const Problem &p,
                                                     const Choice &choice) {
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
  if (choice.arch.hinted) {
    FailureOr<Value> built = buildHintedInfer(builder, loc, *choice.arch.hinted->tree, input);
    if (failed(built)) {
      methods.erase();
      return failure();
    }
    out = *built;
  } else if (choice.arch.family == Family::Conv) {
    out = chain.buildConv(input);
  } else if (choice.arch.family == Family::Transformer) {
    out = chain.buildTransformer(input);
  } else if (p.autoregressive) {
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
    out = chain.buildChain(input);
  }
  builder.setInsertionPointToEnd(block);
  l2::YieldOp::create(builder, loc, ValueRange{out});
  return methods;
}
