//===- Oracle.h - Graphs through the reference and the targets --*- C++ -*-===//
//
// The differential fuzzer's oracle. Each graph of a module (Program.h's
// buildGraph) runs:
//
//   * through the reference interpreter (double precision, op by op:
//     synpl/Reference/L1Interpreter.h) — the expected numbers;
//   * through the host target (a graph on the CPU): the host pipeline's emission half (fusion
//     across reshapes, split reductions, L1 -> L0, memory packing) then,
//     for each tile choice the lowering offers (`tile-lanes` x
//     `tile-rows`, and untiled), --synpl-convert-l0uop-to-llvm,
//     JIT-compiled with the executable's optimisation
//     (synpl::host::optimizeForHost) and run as the runtime runs a plan:
//     every pool one aligned allocation, slots at their packed offsets,
//     transient memory NaN before it is written, the streams' kernels and
//     transfers in order, each kernel split over 1 or 2 threads of the
//     runtime's own worker pool exactly as the executor splits it.
//
//   * through the IPU target (the same host plan, --synpl-convert-l0uop-to-
//     ipu21 for each arch and tile count, the graph translated to a
//     program and run on the BSP simulator of synpl/Target/IPU21), with
//     --targets=ipu21;
//   * through the CUDA target (a graph on the GPU): the same emission,
//     then the CUDA kernel pipeline (block-reduce, the launch search,
//     l0uop -> NVVM) for each configuration, every device kernel run over
//     its whole launch on the SIMT interpreter of test/unit/NvvmSim.h.
//
// Every element of every result must lie within the result's error bound
// (Bounds.h) of the reference; integer results must be equal. Many
// programs go into one module and are compiled together: they share no
// values, so each is still checked alone.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TEST_FUZZ_DIFF_ORACLE_H
#define SYNPL_TEST_FUZZ_DIFF_ORACLE_H

#include "Bounds.h"

#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Reference/L1Interpreter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"

#include <functional>

#include <map>
#include <string>
#include <vector>

namespace synpl::difffuzz {

namespace detail {
struct Launch;
} // namespace detail

/// Collects the error diagnostics of a context while alive (their text,
/// one per line; `file:line:col: ` before those located in a source file).
struct Diagnostics {
  explicit Diagnostics(mlir::MLIRContext *ctx)
      : handler(ctx, [this](mlir::Diagnostic &d) {
          if (d.getSeverity() != mlir::DiagnosticSeverity::Error)
            return mlir::success();
          std::string where;
          if (auto file = llvm::dyn_cast<mlir::FileLineColLoc>(d.getLocation()))
            where = (file.getFilename().str() + ":" + std::to_string(file.getLine()) + ":" +
                     std::to_string(file.getColumn()) + ": ");
          text += (text.empty() ? "" : "\n") + where + d.str();
          return mlir::success();
        }) {}
  std::string text;
  mlir::ScopedDiagnosticHandler handler;
};

/// A value the oracle stores into a plan slot before the launch that first
/// reads the slot (or before the first launch).
struct Feed {
  std::string slot;
  ref::Tensor value;
  bool atStart = false;
};

/// A slot whose contents must match the reference: read right after the
/// launch that last writes it (or after the whole step).
struct Want {
  std::string slot;
  /// What it is, for a finding (`result #2`, `state @w1`).
  std::string what;
  ref::Tensor value;
  /// Per element: the bound on |computed - value| (integers: must be equal
  /// where it is 0; infinite: not compared, counted in OracleStats).
  ref::Tensor err;
  bool atEnd = false;
};

/// Everything one unit (a generated graph, or a training step) puts into a
/// plan and expects out of it.
struct StepCase {
  /// The graph's symbol, or the training program's name.
  std::string name;
  std::vector<Feed> feeds;
  std::vector<Want> wants;
};

/// One way of lowering and running the host code.
struct HostConfig {
  unsigned tileLanes = 16, tileRows = 6; // tileLanes 0: untiled
  int threads = 1;
  std::string str() const;
};

/// One way of lowering the device kernels of a GPU graph (the CUDA kernel
/// pipeline's options), whose NVVM functions then run on the SIMT
/// interpreter (test/unit/NvvmSim.h).
struct CudaConfig {
  std::string chip = "sm_80";
  bool fastMath = true, blockReduce = true, tuneLaunch = true;
  std::string str() const;
};

/// One way of lowering a host plan's kernels onto an IPU
/// (--synpl-convert-l0uop-to-ipu21), run on the BSP simulator.
struct Ipu21Config {
  std::string arch = "ipu21";
  int64_t tiles = 0; // 0: all of the chip's
  std::string str() const;
};

struct OracleOptions {
  std::vector<int> threads = {1, 2};
  /// (lanes, rows) of the tiled matmul lowering; (0, 0) untiled.
  std::vector<std::pair<unsigned, unsigned>> tiles = {{16, 6}, {8, 3}, {0, 0}};
  /// Which targets a CPU-placed module runs on: the host JIT, and the
  /// same plan lowered to the IPU simulator.
  bool host = true, ipu21 = false;
  std::vector<Ipu21Config> ipu21Configs = {Ipu21Config(), Ipu21Config{"ipu2", 16}};
  /// For graphs on a GPU.
  std::vector<CudaConfig> cuda = {CudaConfig(), CudaConfig{"sm_90", false, false, false}};
  /// Passed to --synpl-l1-to-l0's `test-plant-miscompile` (empty: none).
  std::string plant;
  /// Seed of the input values.
  uint64_t inputSeed = 1;
};

/// Something a graph did wrong.
struct Finding {
  /// Refused: a compile error that names a resource the target lacks (a
  /// `[resource]` placement error, or the tile search's `'tile-memory'
  /// rejected` all candidates: a batch too large for the tiles asked for),
  /// which is the right answer, not a bug; counted apart.
  enum Kind { Mismatch, CompileError, RunError, ReferenceError, Refused } kind = Mismatch;
  /// The graph's symbol (empty: the whole module, e.g. a compile error).
  std::string graph;
  /// The host configuration it happened under (empty: all of them).
  std::string config;
  std::string message;
  static const char *kindName(Kind k);
};

/// Whether `f` happened on the GPU path (a CUDA configuration, or a
/// training program's compile for the GPU).
bool onGpu(const Finding &f);

/// The synpl-diff-fuzz options that re-create the configuration `f`
/// happened under (`narrow`: the options narrowed to it): a host tile and
/// thread count, an IPU (the same host plan), or the GPU.
std::string reproduceFlags(const Finding &f, const OracleOptions &narrow);

struct OracleStats {
  int64_t graphs = 0, runs = 0, elements = 0, kernels = 0, refused = 0;
  /// Elements compared against no bound: a training step's elements whose
  /// running bound is infinite (RunningBounds.h), counted, not checked.
  int64_t unbounded = 0;
};

class Oracle {
public:
  explicit Oracle(OracleOptions options) : options(std::move(options)) {}

  /// Checks every tensor graph of `module` (not modified) and returns
  /// what went wrong; empty when every graph agrees everywhere.
  std::vector<Finding> check(mlir::ModuleOp module);

  /// Compiles `module` (an L1 program, not modified) for every target its
  /// placement allows and checks `cases` on each.
  std::vector<Finding> checkCases(mlir::ModuleOp module, const std::vector<StepCase> &cases);

  const OracleStats &stats() const { return totals; }
  /// Checks from now on under `o` (the totals carry on).
  void setOptions(OracleOptions o) { options = std::move(o); }

private:
  using Launch = detail::Launch;
  std::vector<StepCase> reference(mlir::ModuleOp module, std::vector<Finding> &findings);
  void checkHost(mlir::ModuleOp l0, const std::vector<StepCase> &cases,
                 std::vector<Finding> &findings);
  void checkCuda(mlir::ModuleOp l0, const std::vector<StepCase> &cases,
                 std::vector<Finding> &findings);
  void checkIpu21(mlir::ModuleOp l0, const std::vector<StepCase> &cases,
                  std::vector<Finding> &findings);
  /// Compares one slot's contents with the reference.
  void compare(const StepCase &c, const Want &w, const ref::Tensor &got,
               const std::string &config, std::vector<Finding> &findings);
  /// Runs the plan's streams with `resolve` filling in each kernel's code;
  /// compares the results.
  void runPlan(l0uop::PlanOp plan, const std::vector<StepCase> &cases,
               const std::string &config,
               const std::function<std::string(l0uop::KernelOp, Launch &)> &resolve,
               int threads, std::vector<Finding> &findings);

  OracleOptions options;
  OracleStats totals;
};

} // namespace synpl::difffuzz

#endif // SYNPL_TEST_FUZZ_DIFF_ORACLE_H
