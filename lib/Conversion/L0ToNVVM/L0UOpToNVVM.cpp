//===- L0UOpToNVVM.cpp - CUDA codegen of l0uop kernels -----------------------===//
//
// Each device kernel of a plan becomes an `nvvm.kernel` llvm.func in the
// plan's gpu.module (the contract: docs/cuda-codegen.md). The flat UOps are
// rebuilt by the host lowering's KernelBuilder walk, whose target hooks
// CudaKernelBuilder overrides: parallel RANGEs read the thread/block
// registers under a guard, BARRIER is bar.sync (splitting a guard that
// masks threads of a block), shared buffers live in the dynamic shared
// array, the math UOps take the fast PTX forms (CudaKernelBuilder.cpp), and
// WMMA runs on the tensor cores (CudaTensorCores.cpp). This file is the
// pass: it builds the kernels in a scratch module, so a failure leaves the
// input untouched, and takes matmul-shaped kernels to TiledMatmul.cpp.
//
//===----------------------------------------------------------------------===//
#include "synpl/Conversion/Passes.h"

#include "CudaKernelBuilder.h"
#include "TiledMatmul.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Target/CudaTarget.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include "llvm/Support/MathExtras.h"

namespace synpl {
#define GEN_PASS_DEF_CONVERTL0UOPTONVVM
#include "synpl/Conversion/Passes.h.inc"
} // namespace synpl

using namespace mlir;
using namespace synpl;
using namespace synpl::l0uop;
using namespace synpl::l0tollvm;
using namespace synpl::l0tonvvm;

namespace {

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// `<plan>_<kernel>` with every char outside [A-Za-z0-9_] replaced by `_`.
static std::string entryName(StringRef plan, StringRef kernel) {
  std::string s = (plan + "_" + kernel).str();
  for (char &c : s)
    if (!llvm::isAlnum(c) && c != '_')
      c = '_';
  return s;
}

struct ConvertL0UOpToNVVMPass
    : public synpl::impl::ConvertL0UOpToNVVMBase<ConvertL0UOpToNVVMPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    OpPassManager pm(ModuleOp::getOperationName());
    buildKernelLLVMPipeline(pm);
    pm.getDependentDialects(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    std::optional<cuda::CudaTarget> target = cuda::makeTarget(chip);
    if (!target) {
      module.emitError() << "unknown CUDA chip '" << chip
                         << "'; known: " << cuda::knownArchList();
      return signalPassFailure();
    }
    CudaOptions cudaOptions{&*target, fastMath, tensorCores};

    struct Built {
      KernelOp kernel;
      std::string entry;
      std::optional<l0tonvvm::TiledLaunch> tiled;
      int64_t sharedBytes = 0;
    };
    SmallVector<NotLowered> failures;
    unsigned total = 0;
    // One scratch module per plan: the plan's gpu.module to be.
    SmallVector<std::pair<PlanOp, OwningOpRef<ModuleOp>>> scratches;
    SmallVector<SmallVector<Built>> builtPerPlan;
    SymbolTable moduleSymbols(module);
    // User kernels on the device (#[l0::kernel("k.ptx")]): no UOps to
    // lower; their entry is the file's (--synpl-cuda-link-user-kernels adds
    // the PTX to the binary). Host code cannot run there.
    SmallVector<KernelOp> userDeviceKernels;
    for (PlanOp plan : module.getOps<PlanOp>()) {
      SymbolTable planSymbols(plan);
      for (KernelOp kernel : plan.getOps<KernelOp>()) {
        auto format = kernel->getAttrOfType<StringAttr>("custom_format");
        if (!format || kernel->hasAttr("device_entry") || kernel->hasAttr("host_entry") ||
            !kernel.isDeviceKernel(planSymbols))
          continue;
        ++total;
        if (format.getValue() != "ptx") {
          failures.push_back({kernel, "its user kernel is host code (" +
                                          format.getValue().str() +
                                          ") but its buffers are in device memory; give "
                                          "a PTX kernel (.ptx) for a CUDA placement"});
          continue;
        }
        const cuda::CudaArch &arch = *target->arch;
        ArrayRef<int64_t> grid = kernel.getGrid(), block = kernel.getBlock();
        if (block[0] * block[1] * block[2] > int64_t(arch.maxThreadsPerBlock) ||
            grid[0] > int64_t(arch.maxGridX) || grid[1] > int64_t(arch.maxGridYZ) ||
            grid[2] > int64_t(arch.maxGridYZ)) {
          failures.push_back({kernel, "its user kernel's launch exceeds " + chip +
                                          "'s limits (" +
                                          std::to_string(arch.maxThreadsPerBlock) +
                                          " threads per block, grid (" +
                                          std::to_string(arch.maxGridX) + ", " +
                                          std::to_string(arch.maxGridYZ) + ", " +
                                          std::to_string(arch.maxGridYZ) + "))"});
          continue;
        }
        userDeviceKernels.push_back(kernel);
      }
    }
    for (PlanOp plan : module.getOps<PlanOp>()) {
      SymbolTable planSymbols(plan);
      SmallVector<KernelOp> kernels;
      for (KernelOp kernel : plan.getOps<KernelOp>())
        if (!kernel->hasAttr("device_entry") && !kernel->hasAttr("host_entry") &&
            !kernel.getBody().front().empty() &&
            kernel.isDeviceKernel(planSymbols)) {
          if (kernel.getOptLevel()) {
            ++total;
            failures.push_back({kernel, "opt_level is a host code generation hint; the "
                                        "device kernels are compiled at one level"});
            continue;
          }
          kernels.push_back(kernel);
        }
      if (kernels.empty())
        continue;
      std::string moduleName = (plan.getSymName() + "_cuda").str();
      if (moduleSymbols.lookup(moduleName)) {
        failures.push_back(
            {plan, "symbol @" + moduleName + " already exists in the module"});
        continue;
      }
      OwningOpRef<ModuleOp> scratch = ModuleOp::create(module.getLoc());
      bool anyShared = false;
      llvm::StringSet<> names;
      SmallVector<Built> built;
      // Kernels with the same code share one entry (lowered once).
      KernelsByCode byCode;
      for (KernelOp kernel : kernels) {
        total += kernel.getBody().front().getOperations().size() + 1;
        if (std::optional<size_t> same =
                shareKernels ? byCode.findOrAdd(kernel, planSymbols, built.size())
                             : std::nullopt) {
          Built copy = built[*same];
          copy.kernel = kernel;
          built.push_back(std::move(copy));
          continue;
        }
        std::string base = entryName(plan.getSymName(), kernel.getSymName());
        std::string name = base;
        for (unsigned n = 1; !names.insert(name).second; ++n)
          name = base + "_" + std::to_string(n);
        Built entry{kernel, name, std::nullopt, 0};
        l0tonvvm::TiledMatmulOptions tiledOptions;
        tiledOptions.tensorCores = tensorCores;
        tiledOptions.allowTf32 = tf32;
        FailureOr<std::optional<l0tonvvm::TiledLaunch>> tiled =
            l0tonvvm::buildTiledMatmul(kernel, name, *target,
                                       *scratch->getBody(), tiledOptions);
        if (failed(tiled)) {
          failures.push_back({kernel, "the tiled matmul lowering failed"});
          continue;
        }
        if (*tiled) {
          entry.tiled = *tiled;
          entry.sharedBytes = (*tiled)->sharedBytes;
        } else {
          CudaKernelBuilder builder(kernel, name, planSymbols, failures,
                                    cudaOptions);
          entry.sharedBytes = builder.buildKernel(*scratch);
          if (entry.sharedBytes > 0)
            anyShared = true;
        }
        // The launch must be one the chip can run.
        {
          ArrayRef<int64_t> grid = entry.tiled ? ArrayRef<int64_t>(entry.tiled->grid)
                                               : kernel.getGrid();
          ArrayRef<int64_t> block = entry.tiled
                                        ? ArrayRef<int64_t>(entry.tiled->block)
                                        : kernel.getBlock();
          const cuda::CudaArch &arch = *target->arch;
          int64_t threads = block[0] * block[1] * block[2];
          if (threads > int64_t(arch.maxThreadsPerBlock))
            failures.push_back(
                {kernel, "its block of " + std::to_string(threads) +
                             " threads exceeds the " +
                             std::to_string(arch.maxThreadsPerBlock) +
                             " threads per block of " + chip});
          else if (grid[0] > int64_t(arch.maxGridX) ||
                   grid[1] > int64_t(arch.maxGridYZ) ||
                   grid[2] > int64_t(arch.maxGridYZ))
            failures.push_back(
                {kernel, "its grid (" + std::to_string(grid[0]) + ", " +
                             std::to_string(grid[1]) + ", " +
                             std::to_string(grid[2]) + ") exceeds " + chip +
                             "'s grid limits (" +
                             std::to_string(arch.maxGridX) + ", " +
                             std::to_string(arch.maxGridYZ) + ", " +
                             std::to_string(arch.maxGridYZ) + ")"});
        }
        if (entry.sharedBytes > int64_t(target->arch->maxSharedPerBlock))
          failures.push_back(
              {kernel, "its shared buffers need " +
                           std::to_string(entry.sharedBytes) +
                           " bytes of shared memory; " + chip +
                           " allows at most " +
                           std::to_string(target->arch->maxSharedPerBlock) +
                           " per block"});
        built.push_back(std::move(entry));
      }
      // (The tiled lowering may have declared the array already.)
      if (anyShared && !SymbolTable::lookupSymbolIn(*scratch, kSharedArray)) {
        OpBuilder b(ctx);
        b.setInsertionPointToStart(scratch->getBody());
        LLVM::GlobalOp::create(
            b, module.getLoc(), LLVM::LLVMArrayType::get(b.getI8Type(), 0),
            /*isConstant=*/false, LLVM::Linkage::External, kSharedArray,
            Attribute(), /*alignment=*/kSharedAlign, /*addrSpace=*/3);
      }
      scratches.push_back({plan, std::move(scratch)});
      builtPerPlan.push_back(std::move(built));
    }
    if (!failures.empty()) {
      reportNotLowered(total, failures);
      return signalPassFailure();
    }

    // Finish with the upstream conversions, in the scratch modules.
    for (auto &entry : scratches) {
      PlanOp plan = entry.first;
      ModuleOp scratch = *entry.second;
      PassManager pm(ctx, ModuleOp::getOperationName());
      buildKernelLLVMPipeline(pm);
      bool pipelineFailed = failed(pm.run(scratch));
      scratch->walk([&](Operation *op) {
        if (op == scratch.getOperation() ||
            isa<LLVM::LLVMDialect, NVVM::NVVMDialect>(op->getDialect()))
          return;
        failures.push_back(
            {op, "the upstream LLVM conversions left it unconverted"});
      });
      if (pipelineFailed && failures.empty())
        failures.push_back({plan, "the upstream LLVM conversions failed"});
    }
    if (!failures.empty()) {
      reportNotLowered(std::max<unsigned>(total, failures.size()), failures);
      return signalPassFailure();
    }

    // Commit: one gpu.module per plan, then the kernels' launch attributes.
    OpBuilder b(ctx);
    for (KernelOp kernel : userDeviceKernels)
      kernel->setAttr("device_entry", kernel->getAttr("custom_kernel"));
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    b.getUnitAttr());
    auto nvvmTarget = NVVM::NVVMTargetAttr::get(
        ctx, /*optLevel=*/2, "nvptx64-nvidia-cuda", target->arch->chip(),
        target->arch->ptxFeatures());
    for (auto [index, entry] : llvm::enumerate(scratches)) {
      auto &[plan, scratch] = entry;
      b.setInsertionPointToEnd(module.getBody());
      auto gpuModule = gpu::GPUModuleOp::create(
          b, plan.getLoc(), (plan.getSymName() + "_cuda").str(),
          b.getArrayAttr({nvvmTarget}));
      Block &dest = gpuModule.getBodyRegion().front();
      for (Operation &op : llvm::make_early_inc_range(*scratch->getBody()))
        op.moveBefore(&dest, dest.end());
      for (Built &k : builtPerPlan[index]) {
        KernelOp kernel = k.kernel;
        kernel->setAttr("device_entry", b.getStringAttr(k.entry));
        if (k.tiled) {
          kernel.setGrid(k.tiled->grid);
          kernel.setBlock(k.tiled->block);
        }
        kernel.setSharedMem(k.sharedBytes);
        if (keepUops) {
          // The kept UOps are the host fallback only. A tiled kernel's
          // launch need not cover their parallel RANGEs (L0.1): they become
          // loops, which the host runs alike.
          if (k.tiled)
            for (RangeOp range : kernel.getBody().front().getOps<RangeOp>())
              range.setKind(RangeKind::loop);
          continue;
        }
        Block &body = kernel.getBody().front();
        for (Operation &op : body)
          op.dropAllReferences();
        while (!body.empty())
          body.back().erase();
      }
    }
  }
};

} // namespace
