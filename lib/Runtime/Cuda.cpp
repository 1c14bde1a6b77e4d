//===- Cuda.cpp - The CUDA platform primitives ----------------------------===//
//
// Loading the driver API at run time: a compiled program links no CUDA
// library, so it builds and starts anywhere and says clearly when there is
// no driver, no GPU, or one too old for its kernels. Environment:
//   SYNPL_CUDA_DRIVER  the driver library to load (default libcuda.so.1).
// (The executor reads SYNPL_CUDA_SYNC and SYNPL_CUDA_GRAPHS.)
//
//===----------------------------------------------------------------------===//
#include "Cuda.h"
#include "Internal.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <string>
#include <dlfcn.h>

using namespace synpl::rt;

CudaDevice::~CudaDevice() {
  if (module && cuModuleUnload)
    cuModuleUnload(module);
  if (ctx && cuDevicePrimaryCtxRelease)
    cuDevicePrimaryCtxRelease(device);
  // The library stays loaded: the driver's own exit handlers may still run.
}

const char *CudaDevice::errorName(CUresult r) const {
  const char *name = nullptr;
  if (cuGetErrorName && cuGetErrorName(r, &name) == cu::SUCCESS && name)
    return name;
  static thread_local char buf[32];
  std::snprintf(buf, sizeof buf, "CUDA error %d", r);
  return buf;
}

int32_t CudaDevice::check(CUresult r, const char *fmt, ...) {
  if (r == cu::SUCCESS)
    return SYNPL_RT_OK;
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return fail(SYNPL_RT_ERR_DEVICE, "%s: %s", errorName(r), what);
}

namespace {
/// "12.4" from 12040.
struct Version {
  char text[16];
  explicit Version(int64_t v) {
    std::snprintf(text, sizeof text, "%d.%d", (int)(v / 1000),
                  (int)(v % 1000) / 10);
  }
};
} // namespace

int32_t CudaDevice::open(int64_t deviceArch, int64_t minDriver, int localRank) {
  const char *lib = std::getenv("SYNPL_CUDA_DRIVER");
  if (!lib || !*lib)
    lib = "libcuda.so.1";
  handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    return fail(SYNPL_RT_ERR_DEVICE,
                "no NVIDIA driver: cannot load %s (%s); this program's kernels "
                "run on a CUDA GPU",
                lib, why ? why : "not found");
  }
#define SYNPL_CUDA_BIND(member, symbol, ret, args)                             \
  member = reinterpret_cast<ret(*) args>(dlsym(handle, symbol));               \
  if (!member)                                                                 \
    return fail(SYNPL_RT_ERR_DEVICE,                                           \
                "the NVIDIA driver %s lacks %s (too old for this program)",    \
                lib, symbol);
  SYNPL_CUDA_DRIVER_FUNCTIONS(SYNPL_CUDA_BIND)
#undef SYNPL_CUDA_BIND
#define SYNPL_CUDA_BIND_OPTIONAL(member, symbol, ret, args)                    \
  member = reinterpret_cast<ret(*) args>(dlsym(handle, symbol));
  SYNPL_CUDA_OPTIONAL_FUNCTIONS(SYNPL_CUDA_BIND_OPTIONAL)
#undef SYNPL_CUDA_BIND_OPTIONAL
  registerHostKernel = reinterpret_cast<void (*)(const char *, synpl_host_kernel_fn)>(
      dlsym(handle, "synpl_fake_cuda_register_host_kernel"));

  CUresult r = cuInit(0);
  if (r == cu::ERROR_NO_DEVICE)
    return fail(SYNPL_RT_ERR_DEVICE,
                "no CUDA device: the NVIDIA driver found no GPU (cuInit: %s)",
                errorName(r));
  if (int32_t st = check(r, "cuInit: the NVIDIA driver did not start"))
    return st;
  int count = 0;
  r = cuDeviceGetCount(&count);
  if (r == cu::ERROR_NO_DEVICE || (r == cu::SUCCESS && count == 0))
    return fail(SYNPL_RT_ERR_DEVICE, "no CUDA device: the NVIDIA driver found no GPU");
  if (int32_t st = check(r, "cuDeviceGetCount"))
    return st;
  if (int32_t st = check(cuDriverGetVersion(&driverVersion), "cuDriverGetVersion"))
    return st;
  if (driverVersion < minDriver)
    return fail(SYNPL_RT_ERR_DEVICE,
                "driver supports CUDA %s; this program's PTX needs %s (update "
                "the NVIDIA driver)",
                Version(driverVersion).text, Version(minDriver).text);
  deviceCount = count;
  ordinal = localRank < 0 ? 0 : localRank % count;
  if (int32_t st = check(cuDeviceGet(&device, ordinal), "cuDeviceGet(%d)", ordinal))
    return st;
  if (cuDeviceGetName(name, sizeof name - 1, device) != cu::SUCCESS)
    std::snprintf(name, sizeof name, "GPU %d", ordinal);
  if (int32_t st = check(
          cuDeviceGetAttribute(&ccMajor, cu::DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                               device),
          "compute capability of %s", name))
    return st;
  if (int32_t st = check(
          cuDeviceGetAttribute(&ccMinor, cu::DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                               device),
          "compute capability of %s", name))
    return st;
  if (ccMajor * 10 + ccMinor < deviceArch)
    return fail(SYNPL_RT_ERR_DEVICE,
                "%s has compute capability %d.%d; this program's kernels need "
                "%d.%d (sm_%d) or newer",
                name, ccMajor, ccMinor, (int)(deviceArch / 10),
                (int)(deviceArch % 10), (int)deviceArch);
  if (int32_t st = check(cuDevicePrimaryCtxRetain(&ctx, device),
                         "cannot create a context on %s", name))
    return st;
  return check(cuCtxSetCurrent(ctx), "cannot use the context of %s", name);
}

int32_t CudaDevice::loadModule(const void *cubin, int64_t cubinSize,
                               const char *ptx) {
  // The cubin first; on any failure, the PTX when there is one (a cubin
  // for another architecture, or one the driver refuses for any reason).
  CUresult cubinResult = cu::SUCCESS;
  if (cubin && cubinSize > 0) {
    cubinResult = cuModuleLoadData(&module, cubin);
    if (cubinResult == cu::SUCCESS)
      return SYNPL_RT_OK;
    if (!ptx)
      return check(cubinResult, "cannot load the program's kernels (cubin) on %s and "
                                "the program carries no PTX to compile instead",
                   name);
  }
  if (!ptx)
    return fail(SYNPL_RT_ERR_DEVICE, "the program carries no kernels for %s", name);
  // The PTX through the driver's JIT, with its error log kept for the
  // message.
  char errorLog[4096] = {0};
  int options[] = {cu::JIT_ERROR_LOG_BUFFER, cu::JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {errorLog, reinterpret_cast<void *>(uintptr_t(sizeof(errorLog)))};
  CUresult r = cuModuleLoadDataEx(&module, ptx, 2, options, values);
  if (r == cu::SUCCESS)
    return SYNPL_RT_OK;
  errorLog[sizeof(errorLog) - 1] = 0;
  std::string log(errorLog);
  while (!log.empty() && (log.back() == '\n' || log.back() == ' '))
    log.pop_back();
  std::string cubinNote =
      cubinResult != cu::SUCCESS
          ? std::string(" (its cubin failed first: ") + errorName(cubinResult) + ")"
          : "";
  if (r == cu::ERROR_UNSUPPORTED_PTX_VERSION)
    return check(r, "the driver (CUDA %s) cannot compile this program's "
                    "PTX (update the NVIDIA driver)%s",
                 Version(driverVersion).text, cubinNote.c_str());
  return check(r, "cannot load the program's kernels (PTX) on %s%s%s%s", name,
               cubinNote.c_str(), log.empty() ? "" : "; the JIT says: ", log.c_str());
}

int32_t CudaDevice::function(const char *entry, const char *kernel,
                             int64_t sharedMem, CUfunction &out) {
  if (int32_t st = check(cuModuleGetFunction(&out, module, entry),
                         "kernel %s: no entry %s in the program's kernels",
                         kernel, entry))
    return st;
  // Above 48 KiB of dynamic shared memory a kernel must opt in.
  if (sharedMem > 48 * 1024)
    return check(cuFuncSetAttribute(out, cu::FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                    (int)sharedMem),
                 "kernel %s: %lld bytes of shared memory on %s", kernel,
                 (long long)sharedMem, name);
  return SYNPL_RT_OK;
}

int32_t CudaDevice::alloc(uint64_t bytes, const char *pool, CUdeviceptr &out) {
  CUresult r = cuMemAlloc(&out, (size_t)bytes);
  if (r == cu::ERROR_OUT_OF_MEMORY) {
    size_t freeBytes = 0, total = 0;
    cuMemGetInfo(&freeBytes, &total);
    return fail(SYNPL_RT_ERR_DEVICE,
                "device memory exhausted: pool %s needs %llu bytes, %s has "
                "%llu of %llu free (CUDA_ERROR_OUT_OF_MEMORY)",
                pool, (unsigned long long)bytes, name,
                (unsigned long long)freeBytes, (unsigned long long)total);
  }
  return check(r, "cannot allocate %llu bytes of device memory for pool %s",
               (unsigned long long)bytes, pool);
}
