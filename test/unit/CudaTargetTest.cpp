//===- CudaTargetTest.cpp - The CUDA target facts and the host system ----===//
#include "synpl/Target/CudaTarget.h"
#include "synpl/Target/HostSystem.h"
#include "TestContext.h"

#include "synpl/Dialect/L1/L1Ops.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <catch2/catch.hpp>

using namespace synpl;

TEST_CASE("cuda: every known arch has consistent limits", "[cuda][target]") {
  for (const cuda::CudaArch &a : cuda::knownArchs()) {
    INFO(a.name.str());
    CHECK(cuda::lookupArch(a.name) == &a);
    CHECK(a.maxSharedPerBlock <= a.sharedPerSM);
    CHECK(a.staticSharedPerBlock <= a.maxSharedPerBlock);
    CHECK(a.maxThreadsPerBlock <= a.maxThreadsPerSM);
    CHECK(a.minDriverVersion == cuda::driverVersionForPtx(a.ptxVersion));
    CHECK(a.ptxFeatures() == "+ptx" + std::to_string(a.ptxVersion));
  }
  CHECK(cuda::lookupArch("sm_75") == nullptr);
  CHECK(cuda::knownArchList() == "sm_80, sm_86, sm_89, sm_90, sm_90a");
}

TEST_CASE("cuda: a device runs the newest known arch not newer than it",
          "[cuda][target]") {
  CHECK(cuda::chipForCapability(7, 5) == "");
  CHECK(cuda::chipForCapability(8, 0) == "sm_80");
  CHECK(cuda::chipForCapability(8, 6) == "sm_86");
  CHECK(cuda::chipForCapability(8, 7) == "sm_86"); // Orin
  CHECK(cuda::chipForCapability(8, 9) == "sm_89");
  CHECK(cuda::chipForCapability(9, 0) == "sm_90"); // never sm_90a
  CHECK(cuda::chipForCapability(10, 0) == "sm_90"); // Blackwell JITs sm_90 PTX
  CHECK(cuda::driverVersionForPtx(70) == 11000);
  CHECK(cuda::driverVersionForPtx(78) == 11080);
  CHECK(cuda::driverVersionForPtx(80) == 12000);
}

TEST_CASE("host system: GPUs become verified cuda nodes with an edge to the CPU",
          "[cuda][target]") {
  host::HostFacts facts;
  facts.cores = 16;
  facts.memoryBytes = 128ull << 30;
  cuda::CudaDevice h200;
  h200.name = "NVIDIA H200";
  h200.major = 9;
  h200.smCount = 132;
  h200.memoryBytes = 150754820096ull;
  h200.chip = "sm_90";
  facts.gpus = {h200, host::nominalDevice(*cuda::lookupArch("sm_80"))};
  std::string text = host::hostSystemText(facts);
  CHECK(text.find("l1.node @gpu_0 compute {isa = \"cuda\", arch = \"sm_90\", "
                  "sm = 132, vram = \"143771MiB\"}") != std::string::npos);
  CHECK(text.find("l1.node @gpu_1 compute {isa = \"cuda\", arch = \"sm_80\", "
                  "sm = 108, vram = \"81920MiB\"}") != std::string::npos);
  CHECK(text.find("l1.edge @cpu_0 <-> @gpu_1 bandwidth \"25GB/s\"") !=
        std::string::npos);
  auto ctx = test::makeContext();
  mlir::OwningOpRef<mlir::ModuleOp> m =
      mlir::parseSourceString<mlir::ModuleOp>(text, ctx.get());
  REQUIRE(m);
  CHECK(mlir::succeeded(mlir::verify(*m)));
}
