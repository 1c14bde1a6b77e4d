//===- TiledMatmulSearch.cpp - Choosing the tiles of a CUDA matmul -------===//
//
// The tile search of the tiled lowering: every block tile, warp (or
// thread) tile, k step and pipeline depth the kernel's shape and the chip
// allow, filtered by shared memory, registers and occupancy, scored by a
// roofline cost model of the chip (docs/cuda-matmul.md), ranked through the
// search driver.
//
//===----------------------------------------------------------------------===//
#include "TiledMatmulPlan.h"

#include "synpl/Search/Search.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

namespace synpl::l0tonvvm::tiled {

/// Model constants that CudaTarget.h does not state (docs/cuda-matmul.md):
/// shared-memory bandwidth per SM per clock (sm_80 .. sm_90), L2 -> SM
/// bandwidth relative to DRAM, the latency of a global load under load.
constexpr double kSharedBytesPerClock = 128;
constexpr double kL2OverDram = 3;
constexpr double kGlobalLatency = 0.8e-6;
constexpr double kIterationClocks = 150;
constexpr double kBarrierClocks = 50;

/// The SM clock, derived from the FP32 peak: 2 flops per FFMA lane per
/// clock, 64 lanes per SM on sm_80 and 128 on sm_86 .. sm_90 (CUDA C
/// Programming Guide, "Arithmetic Instructions").
static double smClockHz(const cuda::CudaTarget &t) {
  double lanes = t.arch->major == 8 && t.arch->minor == 0 ? 64 : 128;
  return t.arch->fp32Tflops * 1e12 / (t.arch->smCount * 2 * lanes);
}

/// Completes `c` (layouts, bytes, occupancy, time); the reason when it
/// does not fit the target.
static std::optional<std::string>
scoreConfig(const MatmulMatch &m, const cuda::CudaTarget &t, TileConfig &c) {
  const cuda::CudaArch &arch = *t.arch;
  bool mma = isMma(m.variant);
  bool tf32 = m.variant == Variant::MmaTf32;
  int64_t eb = m.variant == Variant::Mma16 ? 2 : 4;
  // Layouts: mma keeps the global contiguous dim contiguous in shared
  // memory (16-byte cp.async, ldmatrix or ldmatrix.trans); simt stores
  // [k][r] (the FFMA loop reads rows of r).
  auto layout = [&](const OperandPlan &op, int64_t rows, bool &kMajor,
                    int64_t &pitch, int64_t &bytes,
                    int64_t &vec) -> std::optional<std::string> {
    int64_t vecElems = 16 / eb;
    if (tf32) {
      // [r][k] always (ldmatrix has no 32-bit .trans): 16-byte copies when
      // k is contiguous, element copies that transpose otherwise.
      kMajor = false;
      vec = (op.kContig() && m.K % vecElems == 0 &&
             op.strideR % vecElems == 0 && op.base % vecElems == 0)
                ? vecElems
                : 1;
      pitch = c.bk + 4; // +16 bytes: odd 16B-chunk pitch
      bytes = rows * pitch * eb;
    } else if (mma) {
      kMajor = !op.kContig();
      if (!op.kContig() && !op.rContig())
        return std::string("an operand is contiguous along neither k nor its rows");
      int64_t contigExtent = op.kContig() ? m.K : (&op == &m.a ? m.M : m.N);
      int64_t otherStride = op.kContig() ? op.strideR : op.strideK;
      if (contigExtent % vecElems || otherStride % vecElems ||
          op.base % vecElems)
        return std::string("an operand's rows are not 16-byte aligned");
      vec = vecElems;
      pitch = (kMajor ? rows : c.bk) + 8; // +16 bytes: odd 16B-chunk pitch
      bytes = (kMajor ? c.bk : rows) * pitch * eb;
    } else {
      kMajor = true;
      int64_t extent = &op == &m.a ? m.M : m.N;
      vec = (op.rContig() && extent % vecElems == 0 &&
             op.strideK % vecElems == 0 && op.base % vecElems == 0)
                ? vecElems
                : 1;
      pitch = rows + 4;
      bytes = c.bk * pitch * eb;
    }
    return std::nullopt;
  };
  if (auto why = layout(m.a, c.bm, c.aKMajor, c.aPitch, c.aTileBytes, c.aVec))
    return why;
  if (auto why = layout(m.b, c.bn, c.bKMajor, c.bPitch, c.bTileBytes, c.bVec))
    return why;
  c.sharedBytes = c.stages * (c.aTileBytes + c.bTileBytes);
  if (c.sharedBytes > arch.maxSharedPerBlock)
    return std::to_string(c.sharedBytes) + " B of shared memory > the " +
           std::to_string(arch.maxSharedPerBlock) + " a block may have";
  if (c.threads > arch.maxThreadsPerBlock)
    return std::to_string(c.threads) + " threads per block";
  // Every thread issues the same number of copies per stage.
  auto chunks = [&](int64_t rows, int64_t vec) { return rows * c.bk / vec; };
  if (chunks(c.bm, c.aVec) % c.threads || chunks(c.bn, c.bVec) % c.threads)
    return std::string("the tile's copies do not divide among the threads");
  // Registers: accumulators, operand registers (mma: two k steps of
  // fragments, the current and the prefetched), ~40 for addresses and loop
  // state.
  int64_t acc = mma ? c.wm * c.wn / 32 : c.wm * c.wn;
  int64_t frag = mma ? 2 * (c.wm / 16 * 4 + c.wn / 8 * 2) : c.wm + c.wn;
  // Each copy a thread issues per stage keeps an address live.
  int64_t copies = chunks(c.bm, c.aVec) / c.threads +
                   chunks(c.bn, c.bVec) / c.threads;
  c.regs = acc + frag + copies + 40;
  // A margin below the limit: ptxas spilled the tf32 64x64 warp tile with
  // element copies at an estimate of 250.
  if (c.regs > int64_t(arch.maxRegistersPerThread) - 8)
    return "~" + std::to_string(c.regs) + " registers per thread";
  int64_t regsPerBlock = ((c.regs + 7) / 8 * 8) * c.threads;
  c.blocksPerSM = std::min<int64_t>(
      {arch.maxBlocksPerSM, arch.maxThreadsPerSM / c.threads,
       arch.registersPerSM / regsPerBlock,
       arch.sharedPerSM / (c.sharedBytes + 1024)});
  if (c.blocksPerSM < 1)
    return std::string("not one block fits an SM");
  // Time (docs/cuda-matmul.md, "Cost model"): a block runs kTiles
  // iterations; one iteration is bound by the busiest SM resource (tensor
  // or FFMA pipe, shared-memory bandwidth, L2 -> SM bandwidth), shared by
  // the blocksPerSM co-resident blocks, or by the global-load latency the
  // (stages - 1) tiles in flight must cover. Blocks run in waves over the
  // SMs.
  double clock = smClockHz(t);
  int64_t tilesM = (m.M + c.bm - 1) / c.bm, tilesN = (m.N + c.bn - 1) / c.bn;
  int64_t kTiles = (m.K + c.bk - 1) / c.bk;
  double flopsK = 2.0 * c.bm * c.bn * c.bk;
  double smFlops =
      tf32  ? t.arch->tensorTf32Tflops * 1e12 / t.arch->smCount
      : mma ? t.tensorFlopsPerSecond() / t.smCount
            : t.fp32FlopsPerSecond() / t.smCount;
  double computeK = flopsK / smFlops;
  // FFMA issue slots are shared with the shared-memory loads of the
  // operands (TM/4 + TN/4 ld.shared.v4 per k) and ~2 address/loop ops.
  if (!mma)
    computeK *= (c.wm * c.wn + (c.wm + c.wn) / 4.0 + 2) / double(c.wm * c.wn);
  double warps = double(c.threads) / 32;
  // Shared bytes per k tile: mma warps read their A rows and B columns
  // (ldmatrix); a simt warp (16 x 2 threads) reads 2 TM-float A pieces and
  // 16 TN-float B pieces per k (lanes with the same piece share the read);
  // the copies write both tiles once.
  double readK = mma ? warps * (c.wm + c.wn) * eb * c.bk
                     : warps * (2 * c.wm + 16 * c.wn) * eb * c.bk;
  double writeK = double(c.bm + c.bn) * c.bk * eb;
  double smemK = (readK + writeK) / (kSharedBytesPerClock * clock);
  double l2K = writeK / (kL2OverDram * t.dramBytesPerSecond() / t.smCount);
  // Fewer than 8 warps per SM leave tensor/FFMA issue slots idle.
  double issue = std::min(1.0, 0.5 + warps * c.blocksPerSM / 16.0);
  double busyK = std::max({computeK, smemK, l2K}) * c.blocksPerSM / issue;
  double latencyK = kGlobalLatency / double(c.stages - 1);
  // Each iteration also pays its barrier; simt also the first shared loads
  // after it before the math restarts (mma prefetches them across it).
  double iteration = std::max(busyK, latencyK) +
                     (mma ? kBarrierClocks : kIterationClocks) / clock;
  int64_t outBytes = 4; // at most one f32 per element, typically
  double epilogue = double(c.bm * c.bn * outBytes) * c.blocksPerSM /
                    (t.dramBytesPerSecond() / t.smCount);
  double block = kTiles * iteration + kGlobalLatency + epilogue;
  int64_t concurrent = t.smCount * c.blocksPerSM;
  int64_t waves = (tilesM * tilesN + concurrent - 1) / concurrent;
  c.seconds = waves * block;
  return std::nullopt;
}

/// The tile search, through the project's search driver: every candidate
/// shape is enumerated, the target's limits filter it (scoreConfig's
/// reasons), the cost model scores it, and the driver keeps the best
/// `keep`, best first. Estimates within 0.1% count as equal (the score is
/// the time on a 0.1% grid); then the earlier -- smaller -- candidate wins.
/// With `report`, the report goes to --synpl-search-report.
SmallVector<TileConfig> rankTiles(const MatmulMatch &m,
                                         const cuda::CudaTarget &t,
                                         llvm::StringRef kernelName,
                                         unsigned keep, bool report) {
  struct Candidate {
    TileConfig c;
    unsigned index = 0;
  };
  search::SearchSpec<Candidate> spec;
  spec.name = ("L0 tiles @" + kernelName).str();
  bool mmaVariant = isMma(m.variant);
  spec.enumerate = [&](llvm::function_ref<bool(Candidate)> yield) {
    unsigned index = 0;
    auto offer = [&](const TileConfig &c) { return yield({c, index++}); };
    if (mmaVariant) {
      bool tf32 = m.variant == Variant::MmaTf32;
      for (int64_t bm : {64, 128, 256})
        for (int64_t bn : {64, 128, 256})
          for (int64_t bk : tf32 ? std::initializer_list<int64_t>{16, 32}
                                 : std::initializer_list<int64_t>{32, 64})
            for (auto [wm, wn] : {std::pair<int64_t, int64_t>{32, 32}, {64, 32},
                                  {32, 64}, {64, 64}})
              for (int64_t stages : {2, 3, 4, 5}) {
                if (bm % wm || bn % wn)
                  continue;
                int64_t warps = (bm / wm) * (bn / wn);
                if (warps != 4 && warps != 8)
                  continue;
                TileConfig c;
                c.bm = bm, c.bn = bn, c.bk = bk, c.wm = wm, c.wn = wn;
                c.stages = stages;
                c.threads = warps * 32;
                if (!offer(c))
                  return;
              }
      return;
    }
    for (int64_t tm : {4, 8})
      for (int64_t tn : {4, 8})
        for (int64_t bk : {8, 16})
          for (int64_t stages : {2, 3, 4}) {
            TileConfig c;
            c.wm = tm, c.wn = tn, c.bm = 16 * tm, c.bn = 16 * tn;
            c.bk = bk, c.stages = stages, c.threads = 256;
            if (!offer(c))
              return;
          }
  };
  spec.filters.push_back(
      {"fits-" + t.arch->chip(), [&](const Candidate &k) {
         TileConfig c = k.c;
         return scoreConfig(m, t, c);
       }});
  spec.score = [&](const Candidate &k) {
    TileConfig c = k.c;
    (void)scoreConfig(m, t, c);
    double grid = std::log(1.001);
    SmallVector<search::CostTerm> terms;
    terms.push_back({"time_us",
                     std::exp(std::round(std::log(c.seconds * 1e6) / grid) * grid),
                     1});
    // Reported, not weighed.
    terms.push_back({"registers", double(c.regs), 0});
    terms.push_back({"blocks_per_sm", double(c.blocksPerSM), 0});
    terms.push_back({"shared_kib", double(c.sharedBytes) / 1024, 0});
    return terms;
  };
  spec.describe = [&](const Candidate &k) {
    const TileConfig &c = k.c;
    return llvm::formatv("{0}x{1}x{2}, {3} {4}x{5}, {6} stages", c.bm, c.bn,
                         c.bk, mmaVariant ? "warps of" : "threads of", c.wm,
                         c.wn, c.stages)
        .str();
  };
  spec.tieBreakKey = [](const Candidate &k) {
    return llvm::formatv("{0,8}", k.index).str();
  };
  search::SearchOptions options;
  options.reportTop = std::max(keep, 5u);
  search::SearchResult<Candidate> result = search::search(spec, options);
  SmallVector<TileConfig> ranked;
  for (const Candidate &k : result.top) {
    TileConfig c = k.c;
    (void)scoreConfig(m, t, c);
    ranked.push_back(c);
  }
  if (report)
    search::recordSearchReport(std::move(result.report));
  return ranked;
}

} // namespace synpl::l0tonvvm::tiled
