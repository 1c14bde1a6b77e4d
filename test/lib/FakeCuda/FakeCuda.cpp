//===- FakeCuda.cpp - A CUDA driver for tests, on the host -----------------===//
//
// Built as libcuda.so.1 (SONAME libcuda.so.1) in its own folder, so that
// LD_LIBRARY_PATH=<that folder> makes a compiled CUDA program load it
// instead of the NVIDIA driver. It implements the driver API subset the
// runtime calls (lib/Runtime/CudaDriver.h) on the host:
//   - device memory is malloc'ed host memory; copies are memcpy;
//   - streams run every operation when it is issued (synchronously), so
//     events are trivially complete; a stream being captured
//     (cuStreamBeginCapture) records its operations instead, into a graph
//     that cuGraphLaunch replays in order;
//   - cuModuleLoadData reads PTX text (its `.entry` names and parameter
//     counts) and refuses a cubin (CUDA_ERROR_NO_BINARY_FOR_GPU), which
//     exercises the runtime's PTX fallback; cuModuleGetFunction fails for a
//     name that is not an `.entry` of the loaded PTX;
//   - cuLaunchKernel runs the kernel's host fallback, registered by the
//     runtime through the test seam synpl_fake_cuda_register_host_kernel
//     (the contract of docs/runtime-cuda.md), on [0, INT64_MAX) (a
//     fallback clamps the range to its own); a kernel without one does
//     nothing.
// Env SYNPL_FAKE_CUDA, comma-separated:
//   nodevice        cuInit fails with CUDA_ERROR_NO_DEVICE
//   driver=<v>      cuDriverGetVersion (default 13000 = CUDA 13.0)
//   cc=<M.m>        the device's compute capability (default 9.0)
//   fail-launch=<n> the n-th cuLaunchKernel (from 1) fails with
//                   CUDA_ERROR_LAUNCH_FAILED
//   fail-alloc[=<n>] every (the n-th) cuMemAlloc fails with
//                   CUDA_ERROR_OUT_OF_MEMORY
//   fail-copy=<n>   the n-th cuMemcpy*Async fails with
//                   CUDA_ERROR_ILLEGAL_ADDRESS
//   async           a stream that waits for an event (cuStreamWaitEvent)
//                   holds its work from then on until something needs it
//                   (cuStreamSynchronize, a wait for an event recorded
//                   after it); other streams run theirs at once. Work the
//                   runtime forgot to order or to wait for then runs early,
//                   late or never, and the numbers change
//   no-capture      every operation issued into a stream capture fails
//                   with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
//   cubin-error=<r> a cubin load fails with CUresult r (default 209,
//                   CUDA_ERROR_NO_BINARY_FOR_GPU)
//   fail-pin        cuMemHostRegister fails with CUDA_ERROR_NOT_SUPPORTED
//   log=<file>      one line per driver call (handles numbered in creation
//                   order, no addresses), for tests to check
//
//===----------------------------------------------------------------------===//
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cctype>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

typedef int CUresult;
typedef int CUdevice;
typedef uint64_t CUdeviceptr;
typedef void (*HostKernelFn)(void *const *, int64_t, int64_t);

namespace {

enum : CUresult {
  SUCCESS = 0,
  ERROR_INVALID_VALUE = 1,
  ERROR_OUT_OF_MEMORY = 2,
  ERROR_NOT_INITIALIZED = 3,
  ERROR_NO_DEVICE = 100,
  ERROR_INVALID_DEVICE = 101,
  ERROR_INVALID_IMAGE = 200,
  ERROR_NO_BINARY_FOR_GPU = 209,
  ERROR_INVALID_PTX = 218,
  ERROR_UNSUPPORTED_PTX_VERSION = 222,
  ERROR_INVALID_HANDLE = 400,
  ERROR_NOT_FOUND = 500,
  ERROR_ILLEGAL_ADDRESS = 700,
  ERROR_LAUNCH_FAILED = 719,
  ERROR_NOT_SUPPORTED = 801,
  ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
};

const char *errorName(CUresult r) {
  switch (r) {
  case SUCCESS: return "CUDA_SUCCESS";
  case ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
  case ERROR_OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
  case ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
  case ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
  case ERROR_INVALID_DEVICE: return "CUDA_ERROR_INVALID_DEVICE";
  case ERROR_INVALID_IMAGE: return "CUDA_ERROR_INVALID_IMAGE";
  case ERROR_NO_BINARY_FOR_GPU: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
  case ERROR_INVALID_PTX: return "CUDA_ERROR_INVALID_PTX";
  case ERROR_UNSUPPORTED_PTX_VERSION: return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
  case ERROR_INVALID_HANDLE: return "CUDA_ERROR_INVALID_HANDLE";
  case ERROR_NOT_FOUND: return "CUDA_ERROR_NOT_FOUND";
  case ERROR_ILLEGAL_ADDRESS: return "CUDA_ERROR_ILLEGAL_ADDRESS";
  case ERROR_LAUNCH_FAILED: return "CUDA_ERROR_LAUNCH_FAILED";
  case ERROR_NOT_SUPPORTED: return "CUDA_ERROR_NOT_SUPPORTED";
  case ERROR_STREAM_CAPTURE_UNSUPPORTED: return "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
  default: return nullptr;
  }
}

/// A captured stream's operations, in order.
struct Graph {
  int id;
  std::vector<std::function<CUresult()>> ops;
};
struct Stream {
  int id;
  Graph *capture = nullptr;
  // `async`: the operations not run yet, and the counts issued and run.
  std::deque<std::function<CUresult()>> pending;
  uint64_t issued = 0, executed = 0;
  bool deferring = false; // since a cuStreamWaitEvent, until a sync
  CUresult error = 0; // the first failed operation's, reported at the sync
};
/// Complete once `src` has run its first `seq` operations (null: complete).
struct Event {
  int id;
  Stream *src = nullptr;
  uint64_t seq = 0;
};
struct Function {
  std::string name;
  int params = 0;
};
struct Module {
  std::map<std::string, int> entries; // .entry name -> parameter count
  std::vector<Function *> functions;
};

struct Fake {
  bool initialized = false;
  bool noDevice = false;
  int driver = 13000;
  int ccMajor = 9, ccMinor = 0;
  long failLaunch = -1, launches = 0;
  long failAlloc = -1, allocs = 0; // 0: every allocation
  long failCopy = -1, copies = 0;
  bool async = false;
  bool noCapture = false;
  FILE *log = nullptr;
  int cubinError = 209; // CUDA_ERROR_NO_BINARY_FOR_GPU
  bool failPin = false;
  int streams = 0, events = 0, graphs = 0;
  std::map<std::string, HostKernelFn> hostKernels;
  std::map<CUdeviceptr, size_t> memory;

  Fake() {
    const char *env = std::getenv("SYNPL_FAKE_CUDA");
    std::string s = env ? env : "";
    size_t pos = 0;
    while (pos <= s.size()) {
      size_t comma = s.find(',', pos);
      std::string opt = s.substr(pos, comma == std::string::npos ? std::string::npos
                                                                  : comma - pos);
      pos = comma == std::string::npos ? s.size() + 1 : comma + 1;
      if (opt.empty())
        continue;
      std::string key = opt.substr(0, opt.find('='));
      std::string value =
          opt.find('=') == std::string::npos ? "" : opt.substr(opt.find('=') + 1);
      if (key == "nodevice")
        noDevice = true;
      else if (key == "driver")
        driver = std::atoi(value.c_str());
      else if (key == "cc")
        std::sscanf(value.c_str(), "%d.%d", &ccMajor, &ccMinor);
      else if (key == "fail-launch")
        failLaunch = std::atol(value.c_str());
      else if (key == "fail-alloc")
        failAlloc = value.empty() ? 0 : std::atol(value.c_str());
      else if (key == "async")
        async = true;
      else if (key == "no-capture")
        noCapture = true;
      else if (key == "fail-copy")
        failCopy = std::atol(value.c_str());
      else if (key == "log")
        log = std::fopen(value.c_str(), "w");
      else if (key == "cubin-error")
        cubinError = std::atoi(value.c_str());
      else if (key == "fail-pin")
        failPin = true;
      else
        std::fprintf(stderr, "fake libcuda: unknown SYNPL_FAKE_CUDA option '%s'\n",
                     opt.c_str());
    }
  }
  void say(const char *fmt, ...) __attribute__((format(printf, 2, 3))) {
    if (!log)
      return;
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(log, fmt, ap);
    va_end(ap);
    std::fputc('\n', log);
    std::fflush(log);
  }
};

Fake &fake() {
  static Fake f;
  return f;
}

CUresult ready() {
  Fake &f = fake();
  if (!f.initialized)
    return ERROR_NOT_INITIALIZED;
  return SUCCESS;
}

void *host(CUdeviceptr p) { return reinterpret_cast<void *>((uintptr_t)p); }

/// Runs `s`'s pending operations until it has run `seq` of them.
CUresult runUntil(Stream *s, uint64_t seq) {
  while (s->executed < seq && !s->pending.empty()) {
    std::function<CUresult()> op = std::move(s->pending.front());
    s->pending.pop_front();
    ++s->executed;
    CUresult r = op();
    if (r && !s->error)
      s->error = r;
  }
  return s->error;
}

/// Runs a stream operation now (or, with `async`, when something waits for
/// it), or records it when the stream is captured.
CUresult issue(Stream *s, std::function<CUresult()> op) {
  if (s && s->capture) {
    if (fake().noCapture) {
      fake().say("capture: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED");
      return ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    s->capture->ops.push_back(std::move(op));
    return SUCCESS;
  }
  if (!s || !fake().async)
    return op();
  ++s->issued;
  if (!s->deferring && s->pending.empty()) {
    ++s->executed;
    CUresult r = op();
    if (r && !s->error)
      s->error = r;
    return SUCCESS;
  }
  s->pending.push_back(std::move(op));
  return SUCCESS;
}

/// Counts an async copy; the one SYNPL_FAKE_CUDA=fail-copy=<n> names fails.
bool copyFails(const char *what, size_t n) {
  Fake &f = fake();
  if (++f.copies != f.failCopy)
    return false;
  f.say("%s %zu: CUDA_ERROR_ILLEGAL_ADDRESS", what, n);
  return true;
}

/// The driver version that JIT-compiles PTX ISA `v` (70 = 7.0), as
/// synpl::cuda::driverVersionForPtx.
int driverForPtx(int v) {
  int major = v / 10, minor = v % 10;
  if (major <= 7)
    return 11000 + 10 * minor;
  if (major == 8)
    return 12000 + 10 * minor;
  return 13000 + 10 * minor;
}

/// `.entry name(` ... `)`: the names and their `.param` counts.
bool parsePtx(const char *ptx, Module &m, int &version) {
  std::string text(ptx);
  version = 0;
  size_t v = text.find(".version");
  if (v != std::string::npos) {
    int major = 0, minor = 0;
    if (std::sscanf(text.c_str() + v + 8, " %d.%d", &major, &minor) == 2)
      version = major * 10 + minor;
  }
  size_t pos = 0;
  while ((pos = text.find(".entry", pos)) != std::string::npos) {
    pos += 6;
    if (pos >= text.size() || !std::isspace((unsigned char)text[pos]))
      continue;
    while (pos < text.size() && std::isspace((unsigned char)text[pos]))
      ++pos;
    size_t end = text.find_first_of(" \t\r\n(", pos);
    if (end == std::string::npos)
      return false;
    std::string name = text.substr(pos, end - pos);
    int params = 0;
    size_t open = text.find('(', end), body = text.find('{', end);
    if (open != std::string::npos && open < body) {
      size_t close = text.find(')', open);
      for (size_t p = text.find(".param", open); p != std::string::npos && p < close;
           p = text.find(".param", p + 6))
        ++params;
    }
    m.entries[name] = params;
    pos = end;
  }
  return true;
}

} // namespace

#define EXPORT extern "C" __attribute__((visibility("default")))

// The test seam: the runtime registers each CUDA kernel's host fallback.
EXPORT void synpl_fake_cuda_register_host_kernel(const char *entry, HostKernelFn fn) {
  fake().hostKernels[entry] = fn;
  fake().say("register_host_kernel %s", entry);
}

EXPORT CUresult cuGetErrorName(CUresult r, const char **name) {
  *name = errorName(r);
  return *name ? SUCCESS : ERROR_INVALID_VALUE;
}

EXPORT CUresult cuInit(unsigned flags) {
  Fake &f = fake();
  f.say("cuInit %u", flags);
  if (f.noDevice)
    return ERROR_NO_DEVICE;
  f.initialized = true;
  return SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int *v) {
  *v = fake().driver;
  return SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *count) {
  if (CUresult r = ready())
    return r;
  *count = 1;
  return SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal) {
  if (CUresult r = ready())
    return r;
  if (ordinal != 0)
    return ERROR_INVALID_DEVICE;
  *d = 0;
  return SUCCESS;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice) {
  std::snprintf(name, (size_t)len, "Fake CUDA GPU");
  return SUCCESS;
}

EXPORT CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice) {
  if (attribute == 16) // multiprocessors: an H200's
    *value = 132;
  else if (attribute == 75)
    *value = fake().ccMajor;
  else if (attribute == 76)
    *value = fake().ccMinor;
  else
    return ERROR_INVALID_VALUE;
  return SUCCESS;
}

/// An H200's memory (what synplc's device query reads).
EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice) {
  *bytes = 150754820096ull;
  return SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(void **ctx, CUdevice) {
  if (CUresult r = ready())
    return r;
  static int context;
  *ctx = &context;
  fake().say("cuDevicePrimaryCtxRetain");
  return SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice) { return SUCCESS; }
EXPORT CUresult cuCtxSetCurrent(void *) { return SUCCESS; }

EXPORT CUresult cuCtxSynchronize() {
  fake().say("cuCtxSynchronize");
  return SUCCESS;
}

EXPORT CUresult cuMemGetInfo_v2(size_t *freeBytes, size_t *total) {
  size_t used = 0;
  for (auto &[p, n] : fake().memory)
    used += n;
  *total = (size_t)1 << 34; // 16 GiB
  *freeBytes = *total - used;
  return SUCCESS;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
  Fake &f = fake();
  if (CUresult r = ready())
    return r;
  ++f.allocs;
  if (f.failAlloc == 0 || f.failAlloc == f.allocs) {
    f.say("cuMemAlloc %zu: CUDA_ERROR_OUT_OF_MEMORY", bytes);
    return ERROR_OUT_OF_MEMORY;
  }
  void *m = std::aligned_alloc(256, (bytes + 255) & ~(size_t)255);
  if (!m)
    return ERROR_OUT_OF_MEMORY;
  *p = (CUdeviceptr)(uintptr_t)m;
  f.memory[*p] = bytes;
  f.say("cuMemAlloc %zu", bytes);
  return SUCCESS;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p) {
  Fake &f = fake();
  auto it = f.memory.find(p);
  if (it == f.memory.end())
    return ERROR_INVALID_VALUE;
  f.memory.erase(it);
  std::free(host(p));
  return SUCCESS;
}

EXPORT CUresult cuMemsetD8_v2(CUdeviceptr p, unsigned char v, size_t n) {
  std::memset(host(p), v, n);
  fake().say("cuMemsetD8 %zu 0x%02x", n, v);
  return SUCCESS;
}

EXPORT CUresult cuMemHostRegister_v2(void *, size_t bytes, unsigned flags) {
  if (fake().failPin) {
    fake().say("cuMemHostRegister %zu flags=%u: CUDA_ERROR_NOT_SUPPORTED", bytes, flags);
    return ERROR_NOT_SUPPORTED;
  }
  fake().say("cuMemHostRegister %zu flags=%u", bytes, flags);
  return SUCCESS;
}

EXPORT CUresult cuMemHostUnregister(void *) { return SUCCESS; }

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) {
  std::memcpy(host(dst), src, n);
  fake().say("cuMemcpyHtoD %zu", n);
  return SUCCESS;
}

EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) {
  std::memcpy(dst, host(src), n);
  fake().say("cuMemcpyDtoH %zu", n);
  return SUCCESS;
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n,
                                     Stream *s) {
  int id = s ? s->id : 0;
  return issue(s, [=] {
    if (copyFails("cuMemcpyHtoDAsync", n))
      return ERROR_ILLEGAL_ADDRESS;
    std::memcpy(host(dst), src, n);
    fake().say("cuMemcpyHtoDAsync %zu stream%d", n, id);
    return SUCCESS;
  });
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n,
                                     Stream *s) {
  int id = s ? s->id : 0;
  return issue(s, [=] {
    if (copyFails("cuMemcpyDtoHAsync", n))
      return ERROR_ILLEGAL_ADDRESS;
    std::memcpy(dst, host(src), n);
    fake().say("cuMemcpyDtoHAsync %zu stream%d", n, id);
    return SUCCESS;
  });
}

EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n,
                                     Stream *s) {
  int id = s ? s->id : 0;
  return issue(s, [=] {
    if (copyFails("cuMemcpyDtoDAsync", n))
      return ERROR_ILLEGAL_ADDRESS;
    std::memmove(host(dst), host(src), n);
    fake().say("cuMemcpyDtoDAsync %zu stream%d", n, id);
    return SUCCESS;
  });
}

EXPORT CUresult cuStreamCreate(Stream **s, unsigned flags) {
  if (CUresult r = ready())
    return r;
  *s = new Stream();
  (*s)->id = ++fake().streams;
  fake().say("cuStreamCreate stream%d flags=%u", (*s)->id, flags);
  return SUCCESS;
}

EXPORT CUresult cuStreamDestroy_v2(Stream *s) {
  delete s->capture;
  delete s;
  return SUCCESS;
}

EXPORT CUresult cuStreamSynchronize(Stream *s) {
  fake().say("cuStreamSynchronize stream%d", s ? s->id : 0);
  if (!s)
    return SUCCESS;
  CUresult r = runUntil(s, s->issued);
  s->deferring = false;
  s->error = SUCCESS;
  return r;
}

EXPORT CUresult cuStreamWaitEvent(Stream *s, Event *e, unsigned) {
  int id = s ? s->id : 0, ev = e->id;
  // The event as recorded now: its stream's work up to the record.
  Stream *src = e->src;
  uint64_t seq = e->seq;
  if (s && !s->capture && fake().async)
    s->deferring = true;
  return issue(s, [=] {
    fake().say("cuStreamWaitEvent stream%d event%d", id, ev);
    if (src)
      runUntil(src, seq);
    return SUCCESS;
  });
}

EXPORT CUresult cuEventCreate(Event **e, unsigned flags) {
  if (CUresult r = ready())
    return r;
  *e = new Event{++fake().events};
  fake().say("cuEventCreate event%d flags=%u", (*e)->id, flags);
  return SUCCESS;
}

EXPORT CUresult cuEventDestroy_v2(Event *e) {
  delete e;
  return SUCCESS;
}

EXPORT CUresult cuEventRecord(Event *e, Stream *s) {
  int id = s ? s->id : 0, ev = e->id;
  CUresult r = issue(s, [=] {
    fake().say("cuEventRecord event%d stream%d", ev, id);
    return SUCCESS;
  });
  bool counted = s && !s->capture && fake().async;
  e->src = counted ? s : nullptr;
  e->seq = counted ? s->issued : 0;
  return r;
}

EXPORT CUresult cuStreamBeginCapture_v2(Stream *s, int mode) {
  if (!s || s->capture)
    return ERROR_INVALID_VALUE;
  s->capture = new Graph{++fake().graphs, {}};
  fake().say("cuStreamBeginCapture stream%d mode=%d graph%d", s->id, mode,
             s->capture->id);
  return SUCCESS;
}

EXPORT CUresult cuStreamEndCapture(Stream *s, Graph **graph) {
  if (!s || !s->capture)
    return ERROR_INVALID_VALUE;
  *graph = s->capture;
  s->capture = nullptr;
  fake().say("cuStreamEndCapture stream%d graph%d (%zu operations)", s->id,
             (*graph)->id, (*graph)->ops.size());
  return SUCCESS;
}

EXPORT CUresult cuGraphInstantiateWithFlags(Graph **exec, Graph *graph,
                                            unsigned long long) {
  *exec = new Graph(*graph);
  fake().say("cuGraphInstantiate graph%d", graph->id);
  return SUCCESS;
}

EXPORT CUresult cuGraphLaunch(Graph *exec, Stream *s) {
  fake().say("cuGraphLaunch graph%d stream%d", exec->id, s ? s->id : 0);
  std::vector<std::function<CUresult()>> ops = exec->ops;
  return issue(s, [ops] {
    for (auto &op : ops)
      if (CUresult r = op())
        return r;
    return (CUresult)SUCCESS;
  });
}

EXPORT CUresult cuGraphExecDestroy(Graph *exec) {
  delete exec;
  return SUCCESS;
}

EXPORT CUresult cuGraphDestroy(Graph *graph) {
  delete graph;
  return SUCCESS;
}

/// cuModuleLoadData and cuModuleLoadDataEx: `log` (the JIT's error log
/// buffer, when given) receives a line on a PTX error.
static CUresult loadModule(const char *call, Module **m, const void *image, char *log,
                           size_t logSize) {
  Fake &f = fake();
  if (CUresult r = ready())
    return r;
  const char *bytes = static_cast<const char *>(image);
  if (!std::memcmp(bytes, "\x7f" "ELF", 4)) {
    // A cubin is for one architecture; say it is not this GPU's (or what
    // cubin-error says).
    const char *n = errorName(f.cubinError);
    f.say("%s cubin: %s", call, n ? n : "CUDA_ERROR_?");
    return f.cubinError;
  }
  Module *mod = new Module;
  int version = 0;
  if (!parsePtx(bytes, *mod, version) || mod->entries.empty()) {
    delete mod;
    f.say("%s ptx: CUDA_ERROR_INVALID_PTX", call);
    if (log && logSize)
      std::snprintf(log, logSize, "ptxas fatal   : fake driver: no .entry in the PTX\n");
    return ERROR_INVALID_PTX;
  }
  if (version && driverForPtx(version) > f.driver) {
    delete mod;
    f.say("%s ptx %d.%d: CUDA_ERROR_UNSUPPORTED_PTX_VERSION", call, version / 10,
          version % 10);
    return ERROR_UNSUPPORTED_PTX_VERSION;
  }
  f.say("%s ptx %d.%d (%zu entries)", call, version / 10, version % 10,
        mod->entries.size());
  *m = mod;
  return SUCCESS;
}

EXPORT CUresult cuModuleLoadData(Module **m, const void *image) {
  return loadModule("cuModuleLoadData", m, image, nullptr, 0);
}

EXPORT CUresult cuModuleLoadDataEx(Module **m, const void *image, unsigned numOptions,
                                   int *options, void **values) {
  char *log = nullptr;
  size_t logSize = 0;
  for (unsigned i = 0; i < numOptions; ++i) {
    if (options[i] == 5) // CU_JIT_ERROR_LOG_BUFFER
      log = static_cast<char *>(values[i]);
    if (options[i] == 6) // CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES
      logSize = reinterpret_cast<uintptr_t>(values[i]);
  }
  return loadModule("cuModuleLoadDataEx", m, image, log, logSize);
}

EXPORT CUresult cuModuleUnload(Module *m) {
  for (Function *fn : m->functions)
    delete fn;
  delete m;
  return SUCCESS;
}

EXPORT CUresult cuModuleGetFunction(Function **out, Module *m, const char *name) {
  auto it = m->entries.find(name);
  if (it == m->entries.end()) {
    fake().say("cuModuleGetFunction %s: CUDA_ERROR_NOT_FOUND", name);
    return ERROR_NOT_FOUND;
  }
  Function *fn = new Function{name, it->second};
  m->functions.push_back(fn);
  *out = fn;
  fake().say("cuModuleGetFunction %s", name);
  return SUCCESS;
}

EXPORT CUresult cuFuncSetAttribute(Function *fn, int attribute, int value) {
  fake().say("cuFuncSetAttribute %s %d=%d", fn->name.c_str(), attribute, value);
  return SUCCESS;
}

EXPORT CUresult cuLaunchKernel(Function *fn, unsigned gx, unsigned gy, unsigned gz,
                               unsigned bx, unsigned by, unsigned bz,
                               unsigned shared, Stream *s, void **params,
                               void **extra) {
  if (!fn || extra)
    return ERROR_INVALID_VALUE;
  // Every parameter is a buffer (a device pointer, here a host one); the
  // values are read now, as the driver does.
  std::vector<void *> args((size_t)fn->params);
  for (int i = 0; i < fn->params; ++i)
    std::memcpy(&args[i], params[i], sizeof(void *));
  std::string name = fn->name;
  int id = s ? s->id : 0;
  return issue(s, [=] {
    Fake &f = fake();
    ++f.launches;
    if (f.launches == f.failLaunch) {
      f.say("cuLaunchKernel %s: CUDA_ERROR_LAUNCH_FAILED", name.c_str());
      return (CUresult)ERROR_LAUNCH_FAILED;
    }
    auto it = f.hostKernels.find(name);
    f.say("cuLaunchKernel %s grid=(%u,%u,%u) block=(%u,%u,%u) shared=%u stream%d%s",
          name.c_str(), gx, gy, gz, bx, by, bz, shared, id,
          it == f.hostKernels.end() ? " (no host fallback: not run)" : "");
    if (it != f.hostKernels.end())
      it->second(args.data(), 0, INT64_MAX);
    return (CUresult)SUCCESS;
  });
}
