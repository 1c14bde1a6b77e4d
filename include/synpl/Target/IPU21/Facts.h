//===- Facts.h - Facts of the Graphcore IPU the ipu21 sink targets -*- C++ -*-===//
//
// One definition per hardware fact (plain data, no MLIR): the chip's tile
// count and memory, its memory map, the workers, the matrix unit (AMP), the
// exchange and the sync. The lowering builds its `#ipu21.target` attribute
// from these, the planner scores with them and the BSP simulator charges
// cycles with them; nothing else spells a number of the chip.
//
// Every figure is tagged as the fact sheet the project keeps tags it:
//   [V] verified from a primary source (Graphcore's code, docs or recorded
//       output), [S] secondary (a third party, reverse-engineered),
//   [D] derived from other facts, [GAP] not public (a placeholder).
// The source follows the tag; docs/ipu21.md lists them all in one table.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TARGET_IPU21_FACTS_H
#define SYNPL_TARGET_IPU21_FACTS_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace synpl::ipu21 {

/// The facts of one IPU generation. Field comments give the tag and source.
struct Facts {
  /// "ipu2" (GC200, Bow) or "ipu21" (the FP8-capable Mk2 of the C600 card).
  /// A Bow reports version=ipu2 [V] (tessellate-ipu, "IPU Peak Flops"
  /// notebook); poplibs enables FP8 AMP only for __IPU_ARCH_VERSION__ >= 21
  /// [V] (poplibs lib/poplin/codelets/inlineAssemblerConv.hpp).
  std::string arch;
  /// Tiles per IPU: 1472 [V] (a Poplar profile read back in
  /// ipu_tensorflow_addons saved_model_tool/converter/autograph/profile_test.py).
  int64_t tiles = 1472;
  /// SRAM bytes per tile: 638976 = 624 KiB [V] (same profile); 1472 × 638976
  /// = 940572672 bytes per IPU [V].
  int64_t bytesPerTile = 638976;
  /// A tile memory element (TMEM_ELEMSIZE): 16 KiB, 39 per tile [V/D]
  /// (poplibs include/poplibs_support/TileConstants.hpp before fd84c3a4).
  /// Instruction fetch and a data access cannot share one element at once.
  int64_t elementBytes = 16384;
  /// The tile's SRAM address span [sramBase, sramEnd) = 0x4C000–0xE8000
  /// (638976 bytes) [S] (osmarks/ipu-stack crates/ipu-target/src/memory.rs).
  int64_t sramBase = 0x4C000, sramEnd = 0xE8000;
  /// Region 0, the only executable one, ends at 0x80000 (208 KiB); region 1,
  /// 0x80000–0xE8000 (416 KiB), interleaves element pairs [S] (same file).
  /// ld128 works only in an interleaved region [V] (ISA ld128).
  int64_t execEnd = 0x80000, interleavedBegin = 0x80000;
  /// Worker contexts per tile: 6 (CTXT_WORKERS) [V] (TileConstants.hpp),
  /// issued round-robin, one worker instruction every 6 cycles [D] (poplibs
  /// estimators multiply worker cycles by numWorkerContexts,
  /// lib/poplin/PerformanceEstimation.hpp).
  int64_t workers = 6;
  /// Clock: C600 (ipu21) ≈ 1.49 GHz [D from S] (280 TFLOPS FP16 ÷ (1472 ×
  /// 128), bytedance/ByteMLPerf backends/IPU/README.md); GC200 1.33 GHz [V]
  /// (the profile above); Bow 1.85 GHz [V] (tessellate-ipu notebook).
  double clockHz = 1.49e9;
  /// The data path is 64 bits wide: f32v2 and f16v4 vector ops [V] (ISA),
  /// getDataPathWidth() in bits [V] (poplibs lib/popops/Fill.cpp), 64 [D].
  int64_t vectorBytes = 8;
  /// AMP multiply-accumulates per tile per cycle: FP16 64 (= 128 FLOP) [D]
  /// (tessellate-ipu's peak = clock × tiles × 128), FP32 16 [D] (IPU-POD64's
  /// 3.994 PF FP32; poplibs' f32sisov2amp loop, 8 cycles per 8-in × 16-out).
  int64_t ampF16MacsPerCycle = 64, ampF32MacsPerCycle = 16;
  /// The all-tile FP16 ConvPartial1x1 [N,16]×[16,16] costs ≈ 331 + 4·N cycles
  /// per tile, launch and weight load included [D] (a least-squares fit of
  /// the Bow microbenchmark in the tessellate-ipu notebook, 128 points).
  int64_t ampCallOverheadCycles = 331, ampCyclesPer16x16Row = 4;
  /// The AMP consumes 16 input channels per pass: inChansPerGroup =
  /// convInputLoadElems × 4 with 4 half (2 float) load elements [V]
  /// (poplibs tests/poplin/codelets/ConvPartial1x1Out.cpp, TileConstants.hpp).
  int64_t ampInChansF16 = 16, ampInChansF32 = 8;
  /// numConvUnits is 16 on IPU2/IPU21 [V] (same test): 16 output channels
  /// per pass.
  int64_t ampOutChans = 16;
  /// Each further 16×16 weight block of one AMP call reloads the
  /// coefficients: 512 bytes through ld128putcs at 16 bytes per cycle = 32
  /// cycles [D] (ISA ld128putcs; the worker relaunch it also needs is
  /// [GAP] and not charged).
  int64_t ampBlockReloadCycles = 32;
  // FP8 AMP throughput per cycle is [GAP]: FP8 is costed as FP16 (16-channel
  // passes at 4 cycles per row), an upper bound on its cycles.

  /// Elementwise supervisor vertex overhead: 11 cycles [V] (poplibs
  /// lib/popops/PerformanceEstimation.cpp).
  int64_t supervisorOverheadCycles = 11;
  /// Local copy: 8 bytes per cycle (getMemcpyBytesPerCycle) [S] (osmarks
  /// ipu-stack, measured on a C600).
  int64_t memcpyBytesPerCycle = 8;
  /// Exchange: 4 bytes per cycle per tile [V] (poplibs' exchangeBytesPerCycle
  /// before 148a5413; lib/popnn/PoolPlan.cpp history) [S] (osmarks
  /// crates/ipu-codegen/src/cost.rs records 4 for ipu21).
  int64_t exchangeBytesPerCycle = 4;
  /// Tiles per shared exchange bus: 2 [V] (poplibs
  /// lib/popops/ExchangeEstimator.cpp asserts getTilesPerSharedExchangeBus()
  /// == 2); sending the same data to both tiles of a pair doubles the receive
  /// rate the planner assumes [V] (lib/poplin/ExchangeEstimator.hpp).
  int64_t tilesPerExchangeBus = 2;
  /// The cost of one BSP sync: NOT PUBLIC [GAP] (poplibs models it as
  /// Target::getMaxIPUSyncDelay(), lib/popops/reduction/ReductionPlan.cpp).
  /// 600 cycles is a placeholder [S] (osmarks ipu-stack, per exchange phase,
  /// citing getGlobalSyncCycles).
  int64_t syncCycles = 600;
  /// Host link bandwidth: PCIe Gen4 x16, 64 GB/s [S] (thecharlieblake.co.uk
  /// /ipus, GC200); the C600's own figure [GAP].
  double hostBytesPerSecond = 64e9;
  /// $REPEAT_COUNT is a 16-bit register: an `rpt` runs at most 65535 times
  /// [V] (ISA rpt); getRptCountMax()'s exact value [GAP].
  int64_t rptCountMax = 65535;
  /// FP8 AMP (f8v8hihov4amp) exists only on ipu21 [V] (poplibs
  /// inlineAssemblerConv.hpp; FP8 tests are IPU21-only in
  /// include/poplibs_support/TestDevice.hpp).
  bool fp8Amp = false;

  /// Bytes of region 0 (executable) and region 1 (interleaved).
  int64_t execBytes() const { return execEnd - sramBase; }
  int64_t interleavedBytes() const { return sramEnd - interleavedBegin; }
  /// FP16 AMP peak of the whole chip, FLOP per cycle.
  int64_t peakF16FlopsPerCycle() const { return 2 * ampF16MacsPerCycle * tiles; }
};

// The two generations differ only in their name, their clock and whether the
// AMP takes FP8; every other fact is Facts' default. Header-only, so that a
// planner reads the facts without linking the simulator.

/// The C600 card's IPU (ipu21): FP8 AMP, ~1.49 GHz.
inline Facts ipu21Facts() {
  Facts f;
  f.arch = "ipu21";
  f.fp8Amp = true;
  f.clockHz = 1.49e9;
  return f;
}

/// A GC200 / Bow IPU (ipu2) at `clockHz` (1.33e9 GC200, 1.85e9 Bow).
inline Facts ipu2Facts(double clockHz = 1.33e9) {
  Facts f;
  f.arch = "ipu2";
  f.fp8Amp = false;
  f.clockHz = clockHz;
  return f;
}

/// The facts of the architecture named `arch` ("ipu21", "ipu2"); nullopt for
/// another name.
inline std::optional<Facts> factsFor(std::string_view arch) {
  if (arch == "ipu21")
    return ipu21Facts();
  if (arch == "ipu2")
    return ipu2Facts();
  return std::nullopt;
}

} // namespace synpl::ipu21

#endif // SYNPL_TARGET_IPU21_FACTS_H
