//===- HostSystem.cpp - The machine synplc runs on, as an l1.system -------===//
#include "synpl/Target/HostSystem.h"

#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

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
     << "  l1.edge @ram_0 <-> @cpu_0 bandwidth \"50GB/s\"\n"
     << "}\n";
  return text;
}

} // namespace synpl::host
