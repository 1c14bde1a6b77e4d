//===- HostSystem.h - The machine synplc runs on, as an l1.system -*- C++ -*-===//
//
// The embedded default target of `synplc`: with no `--system FILE`, the L2 ->
// L1 placement search places the program on the machine the compiler runs
// on, described from what the OS reports (cores, memory, storage).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TARGET_HOSTSYSTEM_H
#define SYNPL_TARGET_HOSTSYSTEM_H

#include "synpl/Target/CudaDevices.h"

#include <cstdint>
#include <string>
#include <vector>

namespace synpl::host {

/// What the OS reports about this machine.
struct HostFacts {
  unsigned cores = 1;          ///< online logical CPUs
  uint64_t memoryBytes = 0;    ///< MemTotal of /proc/meminfo (0: unknown)
  bool rotationalStorage = false; ///< the root file system's disk spins
  std::string isa = "x86_64";  ///< the host architecture (l1 isa name)
  /// The CUDA devices the driver reports (cuda::detectDevices), those of a
  /// known architecture only; each becomes a node `gpu_<i>`.
  std::vector<cuda::CudaDevice> gpus;
  /// Why there is no GPU (no driver, no device, ...), for `synplc -v`.
  std::string noGpuReason;
};

/// Reads the facts of this machine (never fails: unknowns get defaults).
HostFacts detectHostFacts();

/// The l1.system of `facts` as MLIR text:
///   l1.system @host {
///     l1.node @ssd_0 storage
///     l1.node @ram_0 memory {capacity = "<MemTotal>"}
///     l1.node @cpu_0 compute {isa = "x86_64", cores = <n>}
///     l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
///     l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
///   }
/// The node names are the spec's (`ssd_0`, `ram_0`, `cpu_0`), so a .syn data
/// binding `@ ssd_0` resolves on any machine. Bandwidths are nominal (a
/// SATA/NVMe SSD's sequential read, or 200MB/s for a spinning disk; one
/// socket's DRAM bandwidth): the placement search only compares them.
/// Each GPU adds
///     l1.node @gpu_<i> compute {isa = "cuda", arch = "sm_90", sm = 132,
///                               vram = "<MiB>MiB"}
///     l1.edge @cpu_0 <-> @gpu_<i> bandwidth "25GB/s"
/// (a PCIe 4.0 x16 link's practical rate).
std::string hostSystemText(const HostFacts &facts);

/// A nominal device of architecture `chip` (the reference part's SM count
/// and memory): what `synplc --target=cuda` adds to this machine's system
/// when it has no GPU of its own, to compile for one elsewhere.
cuda::CudaDevice nominalDevice(const cuda::CudaArch &arch);

} // namespace synpl::host

#endif // SYNPL_TARGET_HOSTSYSTEM_H
