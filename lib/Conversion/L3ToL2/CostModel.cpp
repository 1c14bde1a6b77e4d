//===- CostModel.cpp - The L3 -> L2 cost model ------------------------------===//
//
// The spec: "Cost model scores without lowering to L1: param count, FLOPs
// per step, memory high-water mark, known convergence priors."
//
// Every term is in the same unit, doublings (log2): the resource terms are
// log2 of the resource, and a prior of weight w is "worth doubling the model
// w times". A candidate's cost is the weighted sum (lower wins). The
// resources come from l2::estimateResources of the verified candidate; the
// priors are heuristics, documented with their reasons in docs/l3-to-l2.md.
//
//===----------------------------------------------------------------------===//
#include "L3ToL2.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace synpl;
using namespace synpl::l3tol2;
using synpl::search::CostTerm;

namespace {
// Resource weights (per doubling).
constexpr double kParamsWeight = 1.0;
constexpr double kFlopsWeight = 1.0;
constexpr double kMemoryWeight = 0.5;
// Priors (in doublings).
/// Per halving of a hidden width below the capacity target.
constexpr double kCapacityPrior = 4.0;
/// Per stage short of the target depth min(depth(n), kUsefulPlainDepth).
constexpr double kDepthPrior = 4.0;
/// Plain (non-residual) chains stop gaining from depth beyond this many
/// stages; each further plain stage costs kDegradationPrior.
constexpr int64_t kUsefulPlainDepth = 4;
constexpr double kDegradationPrior = 1.0;
/// Hidden stages without normalisation.
constexpr double kNoNormPrior = 1.0;
/// A sequence model whose hidden stages never mix positions (no attention)
/// sees one position at a time.
constexpr double kContextPrior = 4.0;
/// relu instead of gelu in a chain; gelu instead of relu in a conv stack.
constexpr double kReluPrior = 0.25;
/// Conv stacks: the first stage's channel target, doubled per stage.
constexpr int64_t kConvBaseChannels = 32;
/// Transformers: residual pre-norm blocks keep gaining from depth; the
/// depth prior asks for the blocks depth(n) allows, up to this many.
constexpr int64_t kUsefulBlocks = 12;
/// Per doubling of the batch away from kReferenceBatch.
constexpr double kBatchPrior = 0.5;
constexpr int64_t kReferenceBatch = 128;
} // namespace

int64_t synpl::l3tol2::capacityTarget(const Problem &p) {
  if (p.maxWidth < 1)
    return 1;
  int64_t need = std::max<int64_t>((p.inFeatures + 3) / 4, p.outWidth);
  int64_t target = static_cast<int64_t>(llvm::PowerOf2Ceil(static_cast<uint64_t>(need)));
  int64_t cap = p.maxWidth >= 1
                    ? int64_t(1) << llvm::Log2_64(static_cast<uint64_t>(p.maxWidth))
                    : 1;
  return std::min(target, cap);
}

/// Relative steps to converge of an update chain, in doublings: adam with
/// warmup and cosine decay is the reference (0).
static double updatePrior(Attribute method, bool scheduled = false) {
  return llvm::TypeSwitch<Attribute, double>(method)
      .Case([&](l2::ScheduleAttr s) { return updatePrior(s.getInner(), true); })
      .Case([&](l2::GradientClipAttr g) { return updatePrior(g.getInner(), scheduled); })
      .Case([&](l2::EmaAttr e) { return updatePrior(e.getInner(), scheduled); })
      .Case([&](l2::PerParamAttr p) { return updatePrior(p.getOthers(), scheduled); })
      .Case([&](l2::AdamAttr) { return scheduled ? 0.0 : 0.5; })
      .Case([&](l2::MuonAttr) { return scheduled ? 0.25 : 0.75; })
      .Case([&](l2::LionAttr) { return scheduled ? 0.5 : 1.0; })
      .Case([&](l2::SgdAttr) { return scheduled ? 1.0 : 1.5; })
      .Default([](Attribute) { return 1.0; });
}

static double log2Of(uint64_t v) { return std::log2(static_cast<double>(v) + 1.0); }

static double deficit(int64_t target, int64_t w) {
  return w < target && w > 0
             ? std::log2(static_cast<double>(target) / static_cast<double>(w))
             : 0.0;
}

static int64_t pow2Floor(int64_t v) {
  return v >= 1 ? int64_t(1) << llvm::Log2_64(static_cast<uint64_t>(v)) : 1;
}

int64_t synpl::l3tol2::convChannelTarget(const Problem &p, int64_t stage) {
  int64_t target = kConvBaseChannels << std::min<int64_t>(stage, 20);
  return std::min(target, pow2Floor(p.maxWidth));
}

int64_t synpl::l3tol2::convFlatFeatures(const Problem &p, const Architecture &arch) {
  if (p.image.size() != 3 || arch.channels.empty())
    return p.inFeatures;
  int64_t h = p.image[1], w = p.image[2];
  for (size_t i = 0; i < arch.channels.size(); ++i)
    if (h >= 2 && w >= 2 && h % 2 == 0 && w % 2 == 0)
      h /= 2, w /= 2;
  return arch.channels.back() * h * w;
}

int64_t synpl::l3tol2::transformerDimTarget(const Problem &p) {
  int64_t need = std::max<int64_t>((p.vocab + 3) / 4, p.outWidth);
  int64_t target = static_cast<int64_t>(llvm::PowerOf2Ceil(static_cast<uint64_t>(need)));
  return std::min(target, pow2Floor(p.maxWidth / 4));
}

SmallVector<CostTerm> synpl::l3tol2::scoreChoice(const Problem &p, const Choice &c,
                                                 const l2::ResourceEstimate &est) {
  const Architecture &arch = c.arch;
  int64_t batch = std::max<int64_t>(batchOf(c.sample), 1);
  bool hinted = static_cast<bool>(arch.hinted);
  Family family = arch.family;

  // Capacity: the useful depth asks for useful - 1 hidden stages of at
  // least the target width. A narrower one loses log2(target / w); a missing
  // one leaves the function a single map into the output's width, so it
  // counts as a hidden stage of the output width.
  double capacity = 0, depth = 0;
  int64_t stages = arch.depth() + p.extraStages;
  if (hinted) {
    // One architecture: the priors compare nothing.
  } else if (family == Family::Transformer) {
    // Every block is dim wide; depth(n) states how many blocks are wanted.
    capacity = static_cast<double>(arch.blocks) * deficit(transformerDimTarget(p), arch.dim);
    int64_t wanted = std::min(maxTransformerBlocks(p), kUsefulBlocks);
    depth = kDepthPrior * static_cast<double>(std::max<int64_t>(0, wanted - arch.blocks));
  } else {
    int64_t useful = std::min(p.maxDepth, kUsefulPlainDepth);
    int64_t target = capacityTarget(p);
    if (family == Family::Conv) {
      for (auto [i, ch] : llvm::enumerate(arch.channels))
        capacity += deficit(convChannelTarget(p, static_cast<int64_t>(i)), ch);
      // The hidden linear reads the flattened feature map.
      Problem head = p;
      head.inFeatures = convFlatFeatures(p, arch);
      target = capacityTarget(head);
    }
    for (int64_t w : arch.hidden)
      capacity += deficit(target, w);
    for (int64_t missing = useful - stages; missing > 0; --missing)
      capacity += deficit(target, std::max<int64_t>(p.outWidth, 1));
    // Depth: stages short of the useful depth, and plain stages past it.
    depth = kDepthPrior * static_cast<double>(std::max<int64_t>(0, useful - stages));
    if (!arch.residual && stages > kUsefulPlainDepth)
      depth += kDegradationPrior * static_cast<double>(stages - kUsefulPlainDepth);
  }

  bool chain = family == Family::Chain && !hinted;
  bool hasHidden = !arch.hidden.empty();
  bool disfavouredAct = family == Family::Conv
                            ? arch.act == l2::ActFn::gelu
                            : chain && hasHidden && arch.act == l2::ActFn::relu;
  double batchDoublings =
      std::fabs(std::log2(static_cast<double>(batch) / static_cast<double>(kReferenceBatch)));

  SmallVector<CostTerm> terms;
  terms.push_back({"params", log2Of(est.params), kParamsWeight});
  terms.push_back({"flops/example", log2Of(est.flopsPerStep / static_cast<uint64_t>(batch)),
                   kFlopsWeight});
  terms.push_back({"memory", log2Of(est.totalBytes()), kMemoryWeight});
  terms.push_back({"capacity-prior", capacity, kCapacityPrior});
  terms.push_back({"depth-prior", depth, 1.0});
  terms.push_back({"norm-prior", chain && hasHidden && !arch.norm ? 1.0 : 0.0, kNoNormPrior});
  terms.push_back({"act-prior", !hinted && disfavouredAct ? 1.0 : 0.0, kReluPrior});
  terms.push_back({"context-prior",
                   chain && p.sequence && !p.poolSequence && !arch.attention ? 1.0 : 0.0,
                   kContextPrior});
  terms.push_back({"batch-prior", batchDoublings, kBatchPrior});
  terms.push_back({"update-prior", updatePrior(c.update), 1.0});
  return terms;
}
