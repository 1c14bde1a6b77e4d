//===- Phases.cpp - The compiler's phases, L3 down to LLVM ----------------===//
#include "synpl/Pipelines/Phases.h"

#include "synpl/Conversion/Passes.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Dialect/L2/L2Ops.h"
#include "synpl/Pipelines/Pipelines.h"
#include "synpl/Target/CudaTarget.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

using synpl::Phase;

namespace {
constexpr Phase kPhases[] = {Phase::L3, Phase::L2,     Phase::L1,
                             Phase::L0, Phase::Device, Phase::LLVM};
} // namespace

llvm::StringRef synpl::phaseName(Phase phase) {
  switch (phase) {
  case Phase::L3:
    return "l3";
  case Phase::L2:
    return "l2";
  case Phase::L1:
    return "l1";
  case Phase::L0:
    return "l0";
  case Phase::Device:
    return "device";
  case Phase::LLVM:
    return "llvm";
  }
  llvm_unreachable("a phase");
}

std::optional<synpl::Phase> synpl::parsePhase(llvm::StringRef name) {
  for (Phase p : kPhases)
    if (phaseName(p) == name)
      return p;
  return std::nullopt;
}

std::string synpl::phaseNames() {
  std::string names;
  for (Phase p : kPhases)
    names += (names.empty() ? "" : ", ") + phaseName(p).str();
  return names;
}

synpl::Phase synpl::detectPhase(ModuleOp module) {
  bool l2 = false;
  for (Operation &op : module.getBody()->getOperations()) {
    if (isa<l0uop::PlanOp>(op))
      return Phase::L0;
    if (isa<l1::ActorOp, l1::StageOp, l1::TensorGraphOp>(op))
      return Phase::L1;
    l2 |= isa<l2::MethodsOp>(op);
  }
  return l2 ? Phase::L2 : Phase::L3;
}

LogicalResult synpl::buildPhasePipeline(OpPassManager &pm, Phase from, Phase to,
                                        KernelTarget target,
                                        const PhaseOptions &options,
                                        std::string &error) {
  if (to < from) {
    error = ("cannot compile from " + phaseName(from) + " up to " + phaseName(to) +
             ": the phases run " + phaseNames())
                .str();
    return failure();
  }
  if (target == KernelTarget::Cuda && !cuda::lookupArch(options.chip)) {
    error = "chip '" + options.chip.getValue() + "': the CUDA sink emits for " +
            cuda::knownArchList();
    return failure();
  }
  // The boundary crossed into each phase.
  auto crosses = [&](Phase p) { return from < p && p <= to; };
  if (target == KernelTarget::IPU21 && crosses(Phase::LLVM)) {
    error = "the ipu21 sink ends at the device phase (an ipu21 graph; synpl-translate "
            "--synpl-ipu21-to-program writes its program file): there is no llvm phase";
    return failure();
  }
  if (crosses(Phase::L2))
    pm.addPass(createL3ToL2());
  if (crosses(Phase::L1)) {
    L2ToL1Options l2l1;
    l2l1.updateSharding = options.updateSharding.getValue();
    l2l1.graphIsa = options.graphIsa.getValue();
    pm.addPass(createL2ToL1(l2l1));
  }
  HostPipelineOptions host;
  host.summary = options.summary.getValue();
  host.hotShare = options.hotShare.getValue();
  host.lightLevel = options.lightLevel.getValue();
  host.executable = options.executable.getValue();
  if (crosses(Phase::L0))
    buildHostEmissionPipeline(pm, host);
  if (crosses(Phase::Device) && target == KernelTarget::IPU21) {
    ConvertL0UOpToIPU21Options ipu;
    ipu.arch = options.ipuArch.getValue();
    pm.addPass(createConvertL0UOpToIPU21(ipu));
  }
  if (crosses(Phase::Device) && target == KernelTarget::Cuda) {
    CudaKernelPipelineOptions cuda;
    cuda.chip = options.chip.getValue();
    cuda.smCount = options.smCount.getValue();
    cuda.keepUops = options.hostKernels.getValue();
    buildCudaKernelPipeline(pm, cuda);
  }
  if (crosses(Phase::LLVM)) {
    if (target == KernelTarget::Cuda)
      host.ptxas = options.ptxas.getValue();
    buildHostCodegenPipeline(pm, host);
  }
  return success();
}

LogicalResult synpl::buildPhasePipeline(OpPassManager &pm,
                                        const PhaseOptions &options,
                                        std::string &error) {
  std::optional<Phase> from = parsePhase(options.from);
  std::optional<Phase> to = parsePhase(options.to);
  if (!from || !to) {
    error = "unknown phase '" + (from ? options.to : options.from).getValue() +
            "' (the phases: " + phaseNames() + ")";
    return failure();
  }
  std::optional<KernelTarget> target =
      llvm::StringSwitch<std::optional<KernelTarget>>(options.target)
          .Case("host", KernelTarget::Host)
          .Case("cuda", KernelTarget::Cuda)
          .Case("ipu21", KernelTarget::IPU21)
          .Default(std::nullopt);
  if (!target) {
    error = "unknown target '" + options.target.getValue() + "' (host, cuda or ipu21)";
    return failure();
  }
  return buildPhasePipeline(pm, *from, *to, *target, options, error);
}

void synpl::registerPhasePipeline() {
  registerPassPipeline(
      "synpl-pipeline",
      "The compiler's phases from one layer to another: from=<phase> "
      "to=<phase> over l3, l2, l1, l0, device, llvm (target=host|cuda|ipu21, "
      "chip=...)",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        PhaseOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        std::string error;
        if (failed(buildPhasePipeline(pm, options, error)))
          return errorHandler("synpl-pipeline: " + error);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> handler) {
        handler(PhaseOptions());
      });
}
