//===- Error.cpp - Thread-local last error, shared helpers ----------------===//

#include "Internal.h"

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <time.h>

namespace {
// One line per thread; long paths are cut, never overflowed.
thread_local char lastMessage[1024];
thread_local int32_t lastStatus;
} // namespace

namespace synpl::rt {

int32_t fail(int32_t status, const char *fmt, ...) {
  // Formatted aside first: callers wrap the last error in a new one
  // (fail(st, "...: %s", synpl_rt_last_error())), which reads the buffer
  // being written.
  char message[sizeof(lastMessage)];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(message, sizeof(message), fmt, args);
  va_end(args);
  std::memcpy(lastMessage, message, sizeof(lastMessage));
  lastStatus = status;
  return status;
}

int32_t failErrno(const char *path, const char *what, int err) {
  char buf[256];
  // GNU strerror_r returns the message pointer (maybe not into buf).
  const char *text = strerror_r(err, buf, sizeof(buf));
  return fail(SYNPL_RT_ERR_IO, "%s: %s: %s", path, what, text);
}

void *alignedAlloc(uint64_t bytes, uint64_t alignment) {
  void *p = nullptr;
  if (bytes == 0)
    bytes = alignment;
  if (bytes > SIZE_MAX || posix_memalign(&p, alignment, bytes) != 0)
    return nullptr;
  return p;
}

void alignedFree(void *p) { std::free(p); }

uint64_t spinMicros() {
  static const uint64_t micros = [] {
    const char *env = std::getenv("SYNPL_SPIN_US");
    if (env && *env) {
      char *end = nullptr;
      unsigned long long v = std::strtoull(env, &end, 10);
      if (end && *end == '\0' && v <= 1000000)
        return uint64_t(v);
    }
    return uint64_t(100);
  }();
  return micros;
}

uint64_t nowNanos() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

} // namespace synpl::rt

extern "C" {

const char *synpl_rt_last_error(void) { return lastMessage; }

int32_t synpl_rt_last_status(void) { return lastStatus; }

void synpl_rt_clear_error(void) {
  lastMessage[0] = '\0';
  lastStatus = SYNPL_RT_OK;
}

const char *synpl_rt_status_name(int32_t status) {
  switch (status) {
  case SYNPL_RT_OK:
    return "ok";
  case SYNPL_RT_ERR_INVALID:
    return "invalid argument";
  case SYNPL_RT_ERR_IO:
    return "i/o error";
  case SYNPL_RT_ERR_FORMAT:
    return "bad data";
  case SYNPL_RT_ERR_NOMEM:
    return "out of memory";
  case SYNPL_RT_ERR_EXHAUSTED:
    return "exhausted";
  case SYNPL_RT_ERR_CLOSED:
    return "closed";
  case SYNPL_RT_ERR_DEVICE:
    return "device error";
  case SYNPL_RT_ERR_COMM:
    return "communication error";
  default:
    return "unknown status";
  }
}

} // extern "C"
