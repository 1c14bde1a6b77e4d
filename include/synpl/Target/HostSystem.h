//===- HostSystem.h - The machine synplc runs on, as an l1.system -*- C++ -*-===//
//
// The embedded default target of `synplc`: with no `--system FILE`, the L2 ->
// L1 placement search places the program on the machine the compiler runs
// on, described from what the OS reports (cores, memory, storage).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TARGET_HOSTSYSTEM_H
#define SYNPL_TARGET_HOSTSYSTEM_H

#include <cstdint>
#include <string>

namespace synpl::host {

/// What the OS reports about this machine.
struct HostFacts {
  unsigned cores = 1;          ///< online logical CPUs
  uint64_t memoryBytes = 0;    ///< MemTotal of /proc/meminfo (0: unknown)
  bool rotationalStorage = false; ///< the root file system's disk spins
  std::string isa = "x86_64";  ///< the host architecture (l1 isa name)
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
std::string hostSystemText(const HostFacts &facts);

} // namespace synpl::host

#endif // SYNPL_TARGET_HOSTSYSTEM_H
