//===- Grammar.cpp - The L3 -> L2 architecture grammar ---------------------===//
//
// The spec: "From depth(3) + sequential: 3-layer chain. Width search over
// powers-of-2 up to width(n). If causal, only causal attention. If
// autoregressive, add feedback edges." The grammar below is that sentence:
// a chain of stages, hidden widths non-increasing powers of two, with or
// without norm(layer), gelu or relu, sequential or residual where widths
// agree; self-attention for sequence inputs; a recurrent feedback loop for
// autoregressive models. Images under equivariant(translation) get conv /
// act / pool stacks and token sequences decoder-only transformers
// (docs/l3-to-l2.md). It is enumerated and counted, never materialized.
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
// The architecture grammar
//===----------------------------------------------------------------------===//

int64_t Architecture::depth() const {
  switch (family) {
  case Family::Chain:
    return static_cast<int64_t>(hidden.size()) + 1;
  case Family::Conv:
    return static_cast<int64_t>(channels.size() + hidden.size()) + 1;
  case Family::Transformer:
    // embed, then per block attn and the MLP's two linears, then the head.
    return 2 + 3 * blocks;
  }
  return 0;
}

std::string Architecture::str() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (hinted) {
    os << "infer hint";
    return s;
  }
  switch (family) {
  case Family::Chain:
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
    break;
  case Family::Conv:
    os << "depth " << depth() << " conv [";
    llvm::interleave(channels, os, "-");
    os << "] " << l2::stringifyActFn(act);
    if (!hidden.empty())
      os << " fc " << hidden.front();
    break;
  case Family::Transformer:
    os << "depth " << depth() << " transformer dim " << dim << " blocks " << blocks
       << " heads " << heads;
    break;
  }
  return s;
}

/// The powers of two from `low` up to `cap`, widest first.
static SmallVector<int64_t> powersOfTwo(int64_t cap, int64_t low) {
  SmallVector<int64_t> widths;
  if (cap < 1)
    return widths;
  int64_t top = int64_t(1) << llvm::Log2_64(static_cast<uint64_t>(cap));
  low = std::min(low, top);
  for (int64_t w = top; w >= low; w /= 2)
    widths.push_back(w);
  return widths;
}

/// The powers of two the width search tries, widest first.
static SmallVector<int64_t> widthSteps(const Problem &p) {
  return powersOfTwo(p.maxWidth, kGrammarMinWidth);
}

int64_t synpl::l3tol2::poolableStages(const Problem &p) {
  int64_t h = p.image.size() == 3 ? p.image[1] : 0, w = p.image.size() == 3 ? p.image[2] : 0;
  int64_t n = 0;
  while (h >= 2 && w >= 2 && h % 2 == 0 && w % 2 == 0) {
    h /= 2, w /= 2;
    ++n;
  }
  return n;
}

SmallVector<int64_t> synpl::l3tol2::transformerDims(const Problem &p) {
  // The block's MLP is 4 * dim wide, and width(n) bounds it.
  return powersOfTwo(p.maxWidth / 4, kGrammarMinWidth);
}

int64_t synpl::l3tol2::maxTransformerBlocks(const Problem &p) {
  return std::max<int64_t>(0, (p.maxDepth - 2) / 3);
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

/// Chains of depth 1 to D = chainDepth: one of depth 1; for each deeper d,
/// m = d - 1 hidden widths, a non-increasing sequence of the k width steps
/// (C(k + m - 1, m) multisets), those with an equal neighbour pair again
/// with a residual block, each with 4 activation/normalization choices, and
/// for a sequence input from d = 3 on, 8 uniform-attention variants per
/// width. In closed form (so that depth(10^10) costs no more than
/// depth(3)), by the hockey-stick identity
///   sum_{m=1..M} C(k + m - 1, m) = C(k + M, M) - 1,   M = D - 1.
static uint64_t countChains(const Problem &p) {
  int64_t depth = p.chainDepth();
  if (depth < 1)
    return 0;
  uint64_t k = widthSteps(p).size();
  uint64_t total = 1; // depth 1
  if (depth == 1 || k == 0)
    return total;
  uint64_t m = static_cast<uint64_t>(depth - 1);
  // All non-increasing sequences over m = 1..M, and those of m >= 2.
  uint64_t seqs = binomial(k + m, k);
  seqs = seqs == std::numeric_limits<uint64_t>::max() ? seqs : seqs - 1;
  uint64_t seqsFrom2 = seqs == std::numeric_limits<uint64_t>::max() ? seqs : seqs - k;
  // Of those, the strictly decreasing ones (no equal pair): C(k, m).
  uint64_t strict = 0;
  for (uint64_t i = 2; i <= std::min(m, k); ++i)
    strict = saturatingAdd(strict, binomial(k, i));
  uint64_t withPair =
      seqsFrom2 == std::numeric_limits<uint64_t>::max() ? seqsFrom2 : seqsFrom2 - strict;
  total = saturatingAdd(total, saturatingMul(saturatingAdd(seqs, withPair), 4));
  if (p.sequence && m >= 2)
    total = saturatingAdd(total, saturatingMul(saturatingMul(k, 8), m - 1));
  return total;
}

/// Conv stacks: n stages (1 <= n <= max(1, poolable stages)), the first
/// stage's channels c (a width step), doubling or constant per stage (one
/// choice when n = 1 or c is the widest step), with or without one hidden
/// linear (a width step), relu or gelu.
static uint64_t countConvs(const Problem &p) {
  uint64_t k = widthSteps(p).size();
  int64_t maxConv = std::max<int64_t>(1, poolableStages(p));
  uint64_t total = 0;
  for (int64_t n = 1; n <= maxConv && n + 1 <= p.maxDepth; ++n) {
    uint64_t channelSeqs = n > 1 && k ? 2 * k - 1 : k;
    uint64_t heads = 1 + (n + 2 <= p.maxDepth ? k : 0);
    total = saturatingAdd(total, saturatingMul(saturatingMul(channelSeqs, heads), 2));
  }
  return total;
}

uint64_t synpl::l3tol2::countArchitectures(const Problem &p) {
  switch (p.family) {
  case Family::Chain:
    return countChains(p);
  case Family::Conv:
    return countConvs(p);
  case Family::Transformer:
    return saturatingMul(transformerDims(p).size(),
                         static_cast<uint64_t>(maxTransformerBlocks(p)));
  }
  return 0;
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

  void chains() {
    for (int64_t d = 1; d <= p.chainDepth(); ++d) {
      arch = Architecture();
      if (d == 1) {
        if (!yield(arch))
          return;
        continue;
      }
      if (widths.empty()) // nothing deeper than one stage, at any depth bound
        return;
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

  void convs() {
    int64_t maxConv = std::max<int64_t>(1, poolableStages(p));
    int64_t top = widths.empty() ? 0 : widths.front();
    for (int64_t n = 1; n <= maxConv && n + 1 <= p.maxDepth; ++n)
      for (int64_t first : widths)
        for (int64_t growth : {2, 1}) {
          if (growth == 2 && (n == 1 || first == top))
            continue; // the same channels as growth 1
          arch = Architecture();
          arch.family = Family::Conv;
          for (int64_t i = 0, c = first; i < n; ++i, c = std::min(top, c * growth))
            arch.channels.push_back(c);
          SmallVector<int64_t> hiddens{0};
          if (n + 2 <= p.maxDepth)
            hiddens.append(widths.begin(), widths.end());
          for (int64_t h : hiddens)
            for (l2::ActFn act : {l2::ActFn::relu, l2::ActFn::gelu}) {
              arch.hidden.clear();
              if (h)
                arch.hidden.push_back(h);
              arch.act = act;
              if (!yield(arch))
                return;
            }
        }
  }

  void transformers() {
    for (int64_t blocks = 1; blocks <= maxTransformerBlocks(p); ++blocks)
      for (int64_t dim : transformerDims(p)) {
        arch = Architecture();
        arch.family = Family::Transformer;
        arch.dim = dim;
        arch.blocks = blocks;
        arch.heads = std::max<int64_t>(1, dim / kTransformerHeadDim);
        arch.norm = true;
        if (!yield(arch))
          return;
      }
  }

  void run() {
    widths = widthSteps(p);
    switch (p.family) {
    case Family::Chain:
      return chains();
    case Family::Conv:
      return convs();
    case Family::Transformer:
      return transformers();
    }
  }
};
} // namespace

void synpl::l3tol2::enumerateArchitectures(
    const Problem &problem, llvm::function_ref<bool(const Architecture &)> yield) {
  ArchEnumerator{problem, yield, {}, {}}.run();
}
