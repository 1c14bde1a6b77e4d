//===- DeviceQuery.cpp - The CUDA devices of the machine synplc runs on ---===//
//
// Asks the driver API (libcuda.so.1, opened with dlopen so that the compiler
// builds and runs on machines without it) for each device's name, compute
// capability, SM count and memory: the GPU nodes of synplc's default
// system. Declares the few driver entry points it calls by hand: no CUDA
// header is needed at build time.
//
//===----------------------------------------------------------------------===//
#include "synpl/Target/CudaDevices.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

using namespace synpl::cuda;

namespace {
using CUresult = int;
using CUdevice = int;
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;

template <typename Fn> Fn lookup(void *lib, const char *name) {
  return reinterpret_cast<Fn>(::dlsym(lib, name));
}
} // namespace

std::vector<CudaDevice> synpl::cuda::detectDevices(std::string *why) {
  std::vector<CudaDevice> devices;
  auto say = [&](const std::string &s) {
    if (why)
      *why = s;
    return devices;
  };
  if (const char *env = std::getenv("SYNPL_CUDA_DETECT");
      env && std::strcmp(env, "0") == 0)
    return say("SYNPL_CUDA_DETECT=0");
  void *lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return say("no NVIDIA driver (libcuda.so.1 not found)");
  auto cuInit = lookup<CUresult (*)(unsigned)>(lib, "cuInit");
  auto cuDeviceGetCount = lookup<CUresult (*)(int *)>(lib, "cuDeviceGetCount");
  auto cuDeviceGet = lookup<CUresult (*)(CUdevice *, int)>(lib, "cuDeviceGet");
  auto cuDeviceGetName =
      lookup<CUresult (*)(char *, int, CUdevice)>(lib, "cuDeviceGetName");
  auto cuDeviceGetAttribute =
      lookup<CUresult (*)(int *, int, CUdevice)>(lib, "cuDeviceGetAttribute");
  auto cuDeviceTotalMem =
      lookup<CUresult (*)(size_t *, CUdevice)>(lib, "cuDeviceTotalMem_v2");
  int count = 0;
  if (!cuInit || !cuDeviceGetCount || !cuDeviceGet || !cuDeviceGetName ||
      !cuDeviceGetAttribute || !cuDeviceTotalMem) {
    ::dlclose(lib);
    return say("libcuda.so.1 lacks the device query entry points");
  }
  if (CUresult r = cuInit(0)) {
    ::dlclose(lib);
    return say("cuInit failed (CUDA error " + std::to_string(r) + ")");
  }
  if (cuDeviceGetCount(&count) || count == 0) {
    ::dlclose(lib);
    return say("the driver reports no CUDA device");
  }
  for (int i = 0; i < count; ++i) {
    CUdevice dev;
    if (cuDeviceGet(&dev, i))
      continue;
    CudaDevice d;
    d.ordinal = (unsigned)i;
    char name[256] = {0};
    if (!cuDeviceGetName(name, sizeof name - 1, dev))
      d.name = name;
    int v = 0;
    if (!cuDeviceGetAttribute(&v, kAttrComputeCapabilityMajor, dev))
      d.major = (unsigned)v;
    if (!cuDeviceGetAttribute(&v, kAttrComputeCapabilityMinor, dev))
      d.minor = (unsigned)v;
    if (!cuDeviceGetAttribute(&v, kAttrMultiprocessorCount, dev))
      d.smCount = (unsigned)v;
    size_t bytes = 0;
    if (!cuDeviceTotalMem(&bytes, dev))
      d.memoryBytes = bytes;
    d.chip = chipForCapability(d.major, d.minor);
    devices.push_back(d);
  }
  // The driver stays loaded: unloading it under a live context is unsafe.
  return devices;
}
