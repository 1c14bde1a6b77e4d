//===- HostSystem.cpp - The machine synplc runs on, as an l1.system -------===//
#include "synpl/Target/HostSystem.h"

#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

namespace synpl::host {

namespace {

uint64_t readMemTotal() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemTotal:")
      return kib * 1024;
  return 0;
}

/// Whether the block device holding `/` spins (sysfs `queue/rotational` of
/// the disk, or of the partition's parent).
bool rootIsRotational() {
  struct stat st;
  if (::stat("/", &st) != 0)
    return false;
  std::ostringstream base;
  base << "/sys/dev/block/" << major(st.st_dev) << ":" << minor(st.st_dev);
  for (const char *rel : {"/queue/rotational", "/../queue/rotational"}) {
    std::ifstream f(base.str() + rel);
    int v;
    if (f >> v)
      return v == 1;
  }
  return false;
}

} // namespace

HostFacts detectHostFacts() {
  HostFacts f;
  long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  f.cores = n > 0 ? (unsigned)n : 1;
  f.memoryBytes = readMemTotal();
  f.rotationalStorage = rootIsRotational();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  f.isa = triple.getArch() == llvm::Triple::x86_64 ? "x86_64"
                                                   : triple.getArchName().str();
  for (cuda::CudaDevice &d : cuda::detectDevices(&f.noGpuReason)) {
    if (d.chip.empty()) {
      f.noGpuReason = d.name + " (compute capability " +
                      std::to_string(d.major) + "." + std::to_string(d.minor) +
                      ") is older than every architecture the CUDA sink "
                      "emits for (" + cuda::knownArchList() + ")";
      continue;
    }
    f.gpus.push_back(d);
  }
  return f;
}

std::string hostSystemText(const HostFacts &facts) {
  std::string text;
  llvm::raw_string_ostream os(text);
  // Whole MiB: exact, and the unit parser's form.
  uint64_t mib = facts.memoryBytes ? facts.memoryBytes >> 20 : 4096;
  os << "l1.system @host {\n"
     << "  l1.node @ssd_0 storage\n"
     << "  l1.node @ram_0 memory {capacity = \"" << mib << "MiB\"}\n"
     << "  l1.node @cpu_0 compute {isa = \"" << facts.isa
     << "\", cores = " << facts.cores << "}\n"
     << "  l1.edge @ssd_0 -> @ram_0 bandwidth \""
     << (facts.rotationalStorage ? "200MB/s" : "2GB/s") << "\"\n"
     << "  l1.edge @ram_0 <-> @cpu_0 bandwidth \"50GB/s\"\n";
  for (size_t i = 0; i < facts.gpus.size(); ++i) {
    const cuda::CudaDevice &d = facts.gpus[i];
    uint64_t vram = std::max<uint64_t>(d.memoryBytes >> 20, 1);
    os << "  l1.node @gpu_" << i << " compute {isa = \"cuda\", arch = \""
       << d.chip << "\"";
    if (d.smCount)
      os << ", sm = " << d.smCount;
    os << ", vram = \"" << vram << "MiB\"}\n"
       << "  l1.edge @cpu_0 <-> @gpu_" << i << " bandwidth \"25GB/s\"\n";
  }
  os << "}\n";
  return text;
}

cuda::CudaDevice nominalDevice(const cuda::CudaArch &arch) {
  cuda::CudaDevice d;
  d.name = arch.part.str();
  d.major = arch.major;
  d.minor = arch.minor;
  d.smCount = arch.smCount;
  d.memoryBytes = uint64_t(arch.vramGB) << 30;
  d.chip = arch.name.str();
  return d;
}

} // namespace synpl::host
