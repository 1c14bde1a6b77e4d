//===- TuneLaunch.cpp - Launch-configuration search of device kernels ------===//
//
// `--synpl-l0-tune-launch`: for each device kernel whose parallel RANGEs can
// be remapped, a search (synpl/Search/Search.h) over the mapping of its
// iteration space onto the launch and the block size, scored by a cost
// model of the chip's facts (synpl/Target/CudaTarget.h). The winner
// rewrites the RANGE kinds and the kernel's grid/block. docs/cuda-codegen.md
// describes the candidates and the model.
//
//===----------------------------------------------------------------------===//
#include "synpl/Conversion/Passes.h"

#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Search/Search.h"
#include "synpl/Target/CudaTarget.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace synpl {
#define GEN_PASS_DEF_L0TUNELAUNCH
#include "synpl/Conversion/Passes.h.inc"
} // namespace synpl

using namespace mlir;
using namespace synpl;
using namespace synpl::l0uop;

namespace {

/// One launch: the kind of each parallel RANGE (outermost first) and the
/// grid/block.
struct Launch {
  SmallVector<RangeKind, 2> kinds;
  std::array<int64_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  bool original = false;
};

/// What the cost model needs to know of a kernel.
struct KernelShape {
  SmallVector<RangeOp, 2> parallel; // outermost first
  SmallVector<int64_t, 2> trips;
  double bytes = 0; // global memory bytes moved
  double flops = 0; // arithmetic UOps executed
  unsigned registers = 0;
};

/// The parallel RANGEs of a remappable kernel (see the pass description),
/// or a reason it is not.
static FailureOr<KernelShape> analyze(KernelOp kernel, std::string &why) {
  Block &body = kernel.getBody().front();
  KernelShape shape;
  if (!kernel.getSharedArgs().empty()) {
    why = "it has shared buffers";
    return failure();
  }
  // The parallel RANGEs must open the body, one directly inside the other,
  // and close it: no code runs outside them.
  SmallVector<Operation *> ops = llvm::map_to_vector(body, [](Operation &op) {
    return &op;
  });
  size_t n = 0;
  while (n < ops.size()) {
    auto r = dyn_cast<RangeOp>(ops[n]);
    if (!r || !(r.getKind() != RangeKind::loop))
      break;
    shape.parallel.push_back(r);
    shape.trips.push_back(r.getTripCount());
    ++n;
  }
  if (shape.parallel.empty() || shape.parallel.size() > 2) {
    why = shape.parallel.empty()
              ? "its body does not open with a parallel RANGE"
              : "more than two nested parallel RANGEs";
    return failure();
  }
  for (size_t e = 0; e < shape.parallel.size(); ++e) {
    auto end = ops.size() > e ? dyn_cast<EndOp>(ops[ops.size() - 1 - e])
                              : EndOp();
    if (!end || end.getRange() != shape.parallel[e].getResult()) {
      why = "code runs outside its parallel RANGEs";
      return failure();
    }
  }
  // Trip products of the loops around each op, for bytes and flops.
  double outer = 1;
  for (int64_t t : shape.trips)
    outer *= double(t);
  SmallVector<double> loopTrips{outer};
  unsigned values = 0;
  for (size_t i = shape.parallel.size(); i + shape.parallel.size() < ops.size();
       ++i) {
    Operation *op = ops[i];
    if (isa<BarrierOp, WmmaOp, CustomOp>(op)) {
      why = "it has a " + op->getName().getStringRef().str();
      return failure();
    }
    if (auto r = dyn_cast<RangeOp>(op)) {
      if ((r.getKind() != RangeKind::loop)) {
        why = "a parallel RANGE is nested in a loop";
        return failure();
      }
      loopTrips.push_back(loopTrips.back() *
                          double(std::max<int64_t>(1, r.getTripCount())));
      continue;
    }
    if (isa<EndOp>(op)) {
      if (loopTrips.size() > 1)
        loopTrips.pop_back();
      continue;
    }
    if (isa<IfOp, EndIfOp, IndexOp, ConstOp>(op))
      continue;
    values += op->getNumResults();
    auto bytesOf = [](Type t) {
      if (auto v = dyn_cast<VectorType>(t))
        return double(v.getNumElements()) *
               double((v.getElementType().getIntOrFloatBitWidth() + 7) / 8);
      return t.isIntOrFloat() ? double((t.getIntOrFloatBitWidth() + 7) / 8)
                              : 8.0;
    };
    if (auto load = dyn_cast<LoadOp>(op))
      shape.bytes += loopTrips.back() * bytesOf(load.getType());
    else if (auto store = dyn_cast<StoreOp>(op))
      shape.bytes +=
          loopTrips.back() * bytesOf(store->getOperand(1).getType());
    else
      shape.flops += loopTrips.back() * (isa<MulAccOp>(op) ? 2.0 : 1.0);
  }
  // Register estimate: a base for indices and addresses plus a share of the
  // values the body defines (most die young).
  shape.registers = std::clamp<unsigned>(24 + values / 3, 24, 255);
  return shape;
}

static std::string describe(const Launch &l) {
  std::string s;
  llvm::raw_string_ostream os(s);
  for (auto [i, k] : llvm::enumerate(l.kinds))
    os << (i ? " x " : "") << stringifyRangeKind(k);
  os << " grid(" << l.grid[0] << "," << l.grid[1] << "," << l.grid[2]
     << ") block(" << l.block[0] << "," << l.block[1] << "," << l.block[2]
     << ")";
  if (l.original)
    os << " [as emitted]";
  return s;
}

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct L0TuneLaunchPass
    : public synpl::impl::L0TuneLaunchBase<L0TuneLaunchPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<cuda::CudaTarget> target = cuda::makeTarget(chip, smCount);
    if (!target) {
      module.emitError() << "unknown CUDA chip '" << chip
                         << "'; known: " << cuda::knownArchList();
      return signalPassFailure();
    }
    for (PlanOp plan : module.getOps<PlanOp>()) {
      SymbolTable planSymbols(plan);
      for (KernelOp kernel : plan.getOps<KernelOp>()) {
        if (kernel.getBody().front().empty() ||
            !kernel.isDeviceKernel(planSymbols))
          continue;
        std::string why;
        FailureOr<KernelShape> shape = analyze(kernel, why);
        if (failed(shape))
          continue; // kept as emitted
        if (failed(tune(kernel, *shape, *target)))
          return signalPassFailure();
      }
    }
  }

  LogicalResult tune(KernelOp kernel, const KernelShape &shape,
                     const cuda::CudaTarget &target) {
    const cuda::CudaArch &arch = *target.arch;
    Launch original;
    original.original = true;
    for (RangeOp r : shape.parallel)
      original.kinds.push_back(r.getKind());
    llvm::copy(kernel.getGrid(), original.grid.begin());
    llvm::copy(kernel.getBlock(), original.block.begin());

    search::SearchSpec<Launch> spec;
    spec.name = ("L0 launch @" + kernel.getSymName()).str();
    const SmallVector<int64_t> blockSizes = {32, 64, 128, 256, 512, 1024};
    spec.enumerate = [&](llvm::function_ref<bool(Launch)> yield) {
      if (!yield(original))
        return;
      if (shape.parallel.size() == 1) {
        int64_t t = shape.trips[0];
        for (int64_t b : blockSizes) {
          Launch l;
          l.kinds = {RangeKind::global_x};
          l.block = {b, 1, 1};
          l.grid = {ceilDiv(t, b), 1, 1};
          if (!yield(l))
            return;
        }
        return;
      }
      int64_t t1 = shape.trips[0], t2 = shape.trips[1];
      {
        Launch l; // one block per outer iteration, a thread per inner one
        l.kinds = {RangeKind::group_x, RangeKind::local_x};
        l.block = {t2, 1, 1};
        l.grid = {t1, 1, 1};
        if (!yield(l))
          return;
      }
      for (int64_t b : blockSizes) {
        Launch l; // rows on grid y, the inner range spread over x
        l.kinds = {RangeKind::group_y, RangeKind::global_x};
        l.block = {b, 1, 1};
        l.grid = {ceilDiv(t2, b), t1, 1};
        if (!yield(l))
          return;
      }
      for (int64_t bx : {32, 64, 128, 256})
        for (int64_t by : {2, 4, 8}) {
          Launch l; // 2-D tiles of threads
          l.kinds = {RangeKind::global_y, RangeKind::global_x};
          l.block = {bx, by, 1};
          l.grid = {ceilDiv(t2, bx), ceilDiv(t1, by), 1};
          if (!yield(l))
            return;
        }
    };
    spec.describe = describe;
    using Check = std::optional<std::string>;
    auto threadsOf = [](const Launch &l) {
      return l.block[0] * l.block[1] * l.block[2];
    };
    spec.filters.push_back(
        {"threads-per-block", [&](const Launch &l) -> Check {
           if (threadsOf(l) > int64_t(arch.maxThreadsPerBlock))
             return std::to_string(threadsOf(l)) + " threads per block > " +
                    std::to_string(arch.maxThreadsPerBlock);
           return std::nullopt;
         }});
    spec.filters.push_back(
        {"grid-limits", [&](const Launch &l) -> Check {
           if (l.grid[0] > int64_t(arch.maxGridX) ||
               l.grid[1] > int64_t(arch.maxGridYZ) ||
               l.grid[2] > int64_t(arch.maxGridYZ))
             return "grid (" + std::to_string(l.grid[0]) + "," +
                    std::to_string(l.grid[1]) + "," +
                    std::to_string(l.grid[2]) + ") exceeds the grid limits";
           return std::nullopt;
         }});
    spec.filters.push_back(
        {"registers", [&](const Launch &l) -> Check {
           int64_t need = int64_t(shape.registers) * threadsOf(l);
           if (need > int64_t(arch.registersPerSM))
             return "~" + std::to_string(shape.registers) +
                    " registers x " + std::to_string(threadsOf(l)) +
                    " threads > the SM's " +
                    std::to_string(arch.registersPerSM);
           return std::nullopt;
         }});
    spec.score = [&](const Launch &l) {
      // A roofline per SM: every block runs on one SM; an SM runs up to
      // `resident` blocks at once, so the grid takes `waves` rounds (the
      // last one costs as much as a full one: the tail). Within a round an
      // SM streams its blocks' bytes at its share of DRAM bandwidth and
      // issues their flops at its share of the FP32 peak, both derated when
      // too few warps are in flight to hide latency.
      int64_t threads = threadsOf(l);
      int64_t warpsPerBlock = ceilDiv(threads, arch.warpSize);
      int64_t blocks = std::max<int64_t>(1, l.grid[0] * l.grid[1] * l.grid[2]);
      int64_t byThreads =
          int64_t(arch.maxThreadsPerSM) / (warpsPerBlock * arch.warpSize);
      int64_t byRegs = int64_t(arch.registersPerSM) /
                       (int64_t(shape.registers) * warpsPerBlock *
                        arch.warpSize);
      int64_t resident = std::max<int64_t>(
          1, std::min({int64_t(arch.maxBlocksPerSM), byThreads, byRegs}));
      int64_t sms = target.smCount;
      int64_t waves = ceilDiv(blocks, sms * resident);
      // Blocks one SM runs at once (fewer than `resident` for small grids).
      int64_t perSM = std::min(resident, ceilDiv(blocks, sms));
      double work = 1;
      for (int64_t t : shape.trips)
        work *= double(t);
      // Warps with work (warps of masked threads only exit at once).
      double busyWarps = std::min<double>(
          double(warpsPerBlock),
          std::ceil(work / double(blocks) / arch.warpSize));
      double warpsInFlight = double(perSM) * busyWarps;
      double occupancy =
          warpsInFlight * arch.warpSize / double(arch.maxThreadsPerSM);
      // Per block: its share of the bytes; flops in whole warps (masked
      // lanes of a partly used warp still take issue slots).
      double perBlockWork = work / double(blocks);
      double bytesPerBlock = shape.bytes / double(blocks);
      double flopsPerBlock = shape.flops / work *
                             std::ceil(perBlockWork / arch.warpSize) *
                             arch.warpSize;
      // An SM's share of the bandwidth and of the peak, reached as more
      // warps hide the latency (saturating: 63% at 16 warps for memory,
      // at 4 for arithmetic).
      double smBandwidth = target.dramBytesPerSecond() / double(sms) *
                           (1 - std::exp(-warpsInFlight / 16.0));
      double smFlops = target.fp32FlopsPerSecond() / double(sms) *
                       (1 - std::exp(-warpsInFlight / 4.0));
      double memory = double(waves * perSM) * bytesPerBlock / smBandwidth;
      double compute = double(waves * perSM) * flopsPerBlock / smFlops;
      SmallVector<search::CostTerm> terms;
      terms.push_back({"time_us", std::max(memory, compute) * 1e6, 1});
      // Launching, scheduling and retiring warps costs even when they only
      // test their guard: ~10 ns per warp launched (a few cycles per warp
      // on the block scheduler), plus ~2 us per kernel launch.
      terms.push_back({"launch_us",
                       2.0 + 1e-2 * double(blocks * warpsPerBlock) /
                                 double(sms),
                       1});
      // Reported, not weighed: what the time is made of.
      terms.push_back({"memory_us", memory * 1e6, 0});
      terms.push_back({"compute_us", compute * 1e6, 0});
      terms.push_back({"waves", double(waves), 0});
      terms.push_back({"occupancy", occupancy, 0});
      return terms;
    };
    FailureOr<Launch> best = search::searchAndReport(kernel.getLoc(), spec);
    if (failed(best))
      return failure();
    for (auto [i, k] : llvm::enumerate(best->kinds)) {
      RangeOp r = shape.parallel[i];
      r.setKind(k);
    }
    kernel.setGrid(best->grid);
    kernel.setBlock(best->block);
    return success();
  }
};

} // namespace
