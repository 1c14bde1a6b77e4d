//===- Scratch.cpp - Per-thread scratch memory of host kernels ------------===//
//
// A tiled matmul keeps its packed panels and the accumulators waiting
// between k blocks in arrays of up to a few MiB. On the stack they would
// crash a thread that has less of it (a small `ulimit -s`, a JVM or musl
// thread calling into an embedded program); here each thread has one
// buffer, grown to the largest request it has seen and reused by every
// kernel it runs afterwards (a kernel runs one chunk at a time per thread,
// so no two users of a thread's buffer overlap). The buffer goes with its
// thread.
//
//===----------------------------------------------------------------------===//

#include "synpl/Runtime/Runtime.h"

#include <cstdio>
#include <cstdlib>

namespace {

struct ThreadScratch {
  void *data = nullptr;
  uint64_t bytes = 0;
  ~ThreadScratch() { std::free(data); }
};

thread_local ThreadScratch scratch;

/// Buffers grow in steps of 64 KiB: a run of slightly larger requests
/// does not reallocate each time.
constexpr uint64_t kStep = uint64_t(64) << 10;

} // namespace

extern "C" void *synpl_rt_kernel_scratch(int64_t bytes) {
  uint64_t want = bytes > 0 ? uint64_t(bytes) : 1;
  if (want <= scratch.bytes)
    return scratch.data;
  uint64_t size = (want + kStep - 1) / kStep * kStep;
  // Page-aligned: the kernels' arrays start at 64-byte offsets in it, and
  // a fresh buffer's first touch faults whole pages in.
  void *data = std::aligned_alloc(4096, size);
  if (!data) {
    std::fprintf(stderr,
                 "synpl runtime: out of memory for a kernel's scratch arrays "
                 "(%llu bytes on this thread)\n",
                 static_cast<unsigned long long>(size));
    std::abort();
  }
  std::free(scratch.data);
  scratch.data = data;
  scratch.bytes = size;
  return data;
}
