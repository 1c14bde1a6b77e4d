//===- Phases.h - The compiler's phases, L3 down to LLVM ---------*- C++ -*-===//
//
// One enum of the layers a program passes through and one builder of the
// passes between any two of them, as IREE's Pipelines.h does for its
// phases. synplc's --compile-from / --compile-to (and --emit), the
// `synpl-pipeline` registered for synpl-opt and the C API all map onto it;
// no tool adds a lowering pass by name.
//
//   l3 --synpl-l3-to-l2--> l2 --synpl-l2-to-l1--> l1 --(emission, packing)-->
//   l0 --(CUDA: device kernels to PTX)--> device --(ptxas, codegen)--> llvm
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_PIPELINES_PHASES_H
#define SYNPL_PIPELINES_PHASES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <optional>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace synpl {

/// Where a program is: after phase P, every op of the layers above P is
/// lowered.
enum class Phase {
  L3,     ///< the spec: what to train
  L2,     ///< with the method the L3 -> L2 search chose
  L1,     ///< placed on a system by the L2 -> L1 search
  L0,     ///< one l0uop.plan (memory plan, kernels, streams, control)
  Device, ///< the plan with its device kernels compiled (CUDA: gpu.binary)
  LLVM,   ///< LLVM dialect: kernels, control code and the plan's tables
};

/// `l3`, `l2`, `l1`, `l0`, `device`, `llvm`.
llvm::StringRef phaseName(Phase phase);
std::optional<Phase> parsePhase(llvm::StringRef name);
/// The phase names, comma-separated (for diagnostics and --help).
std::string phaseNames();

/// The layer `module` is at: L0 when it holds an l0uop.plan, L1 when it
/// holds placed ops (actors, stages, tensor graphs), L2 when it holds an
/// l2.methods, else L3.
Phase detectPhase(mlir::ModuleOp module);

/// Where the kernels run. IPU21: the device phase lowers the plan to an
/// ipu21.graph (--synpl-convert-l0uop-to-ipu21), the sink's last phase; it
/// has no llvm phase.
enum class KernelTarget { Host, Cuda, IPU21 };

struct PhaseOptions : public mlir::PassPipelineOptions<PhaseOptions> {
  Option<std::string> from{*this, "from",
                           llvm::cl::desc("The phase the input is at (l3, l2, "
                                          "l1, l0, device)"),
                           llvm::cl::init("l3")};
  Option<std::string> to{*this, "to",
                         llvm::cl::desc("The phase to stop after (l2, l1, l0, "
                                        "device, llvm)"),
                         llvm::cl::init("llvm")};
  Option<std::string> target{
      *this, "target",
      llvm::cl::desc("Where the kernels run: host, cuda (the plan's device "
                     "kernels to PTX in the device phase) or ipu21 (the plan to "
                     "an ipu21 graph in the device phase, the last)"),
      llvm::cl::init("host")};
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("With target=cuda: the GPU "
                                          "architecture (sm_80, ..., sm_90a)"),
                           llvm::cl::init("sm_80")};
  Option<std::string> ipuArch{*this, "ipu-arch",
                              llvm::cl::desc("With target=ipu21: the IPU (ipu21, ipu2)"),
                              llvm::cl::init("ipu21")};
  Option<unsigned> smCount{
      *this, "sm-count",
      llvm::cl::desc("With target=cuda: the device's SMs for the launch "
                     "search (0: the chip's reference part)"),
      llvm::cl::init(0)};
  Option<bool> hostKernels{
      *this, "host-kernels",
      llvm::cl::desc("With target=cuda: also compile each device kernel for "
                     "the host (a fallback the test driver runs)"),
      llvm::cl::init(false)};
  Option<std::string> ptxas{
      *this, "ptxas",
      llvm::cl::desc("With target=cuda: assemble the PTX with this ptxas "
                     "(--synpl-cuda-assemble) and embed the cubin too (empty: "
                     "PTX only)"),
      llvm::cl::init("")};
  Option<bool> executable{
      *this, "executable",
      llvm::cl::desc("In the llvm phase, lower the plan to the binary's "
                     "tables and a main() calling the runtime (what synplc "
                     "links); false keeps the plan as data"),
      llvm::cl::init(true)};
  Option<bool> summary{
      *this, "summary",
      llvm::cl::desc("Remark the L0 plan's kernel, slot and pool counts"),
      llvm::cl::init(false)};
  Option<double> hotShare{
      *this, "hot-share",
      llvm::cl::desc("In the llvm phase, the host kernels that take this share of the "
                     "step's estimated time get the full optimization level, the rest "
                     "light-level (--synpl-l0-kernel-effort; 1: all full)"),
      llvm::cl::init(0.99)};
  Option<std::string> updateSharding{
      *this, "update-sharding",
      llvm::cl::desc("The L2 -> L1 placement's update sharding of data-parallel replicas "
                     "(auto, on, off; --synpl-l2-to-l1's update-sharding)"),
      llvm::cl::init("auto")};
  Option<std::string> graphIsa{
      *this, "graph-isa",
      llvm::cl::desc("The isa the L2 -> L1 placement must put the tensor graph on "
                     "(--synpl-l2-to-l1's graph-isa; empty: any)"),
      llvm::cl::init("")};
  Option<unsigned> lightLevel{
      *this, "light-level",
      llvm::cl::desc("The optimization level (0-3) of the host kernels outside hot-share"),
      llvm::cl::init(1)};
};

/// Adds to `pm` the passes that take a program at phase `from` to phase
/// `to` (nothing when they are equal). Fails, with a message in `error`,
/// for a bad option (a phase name, a target, an unknown chip) or `to`
/// above `from`.
mlir::LogicalResult buildPhasePipeline(mlir::OpPassManager &pm,
                                       const PhaseOptions &options,
                                       std::string &error);

/// The same with the phases and target given directly.
mlir::LogicalResult buildPhasePipeline(mlir::OpPassManager &pm, Phase from,
                                       Phase to, KernelTarget target,
                                       const PhaseOptions &options,
                                       std::string &error);

/// Registers `synpl-pipeline{from=... to=... target=...}`.
void registerPhasePipeline();

} // namespace synpl

#endif // SYNPL_PIPELINES_PHASES_H
