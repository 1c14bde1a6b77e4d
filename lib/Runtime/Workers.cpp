//===- Workers.cpp - Fork-join worker pool for host kernels ---------------===//
//
// One job at a time. The caller writes the job, then opens it by storing a
// new epoch into `gate` (epoch << 33 | closed << 32 | joined). A worker that
// sees the new epoch joins by incrementing `joined` with a CAS that fails once
// the job is closed, so only joined workers ever read the job. The caller
// takes chunks like everyone else; when none are left it sets `closed`
// (fetch_or, which also tells it how many joined) and waits until that many
// have counted themselves `done`. A worker that wakes late finds the job
// closed and goes back to waiting: the caller never waits for a slow wake-up.
//
// Idle workers spin on `gate` for SYNPL_SPIN_US, then sleep on a condition
// variable; the caller notifies only when `sleepers` is non-zero (seq_cst
// store of the gate / seq_cst increment of sleepers: one of the two sides
// always sees the other).
//
// Workers start with the stop signals (SIGTERM, SIGINT, SIGHUP) blocked:
// the process's handlers for them (a training run's stop request,
// Signals.cpp) run on the threads that create pools, never in the middle
// of a worker's chunk.
//
//===----------------------------------------------------------------------===//

#include "Comm.h"
#include "Internal.h"
#include "Signals.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <pthread.h>
#include <sched.h>
#include <csignal>
#include <thread>

using namespace synpl::rt;

namespace {
constexpr uint64_t kClosed = uint64_t(1) << 32;
constexpr uint64_t kJoinedMask = kClosed - 1;
inline uint64_t epochOf(uint64_t gate) { return gate >> 33; }

// Set while a thread runs chunks: a nested parallel_for runs inline.
thread_local bool insideJob = false;
} // namespace

struct synpl_rt_workers {
  int32_t threads = 1; // participants, the caller included
  pthread_t *handles = nullptr;
  int32_t started = 0;

  // The job; written by the caller only while no worker is joined.
  synpl_rt_range_fn fn = nullptr;
  void *ctx = nullptr;
  int64_t n = 0;
  int64_t grain = 1;
  int64_t chunks = 0;

  alignas(kCacheLine) std::atomic<int64_t> nextChunk{0};
  alignas(kCacheLine) std::atomic<uint64_t> gate{kClosed};
  alignas(kCacheLine) std::atomic<uint32_t> done{0};
  alignas(kCacheLine) std::atomic<uint32_t> sleepers{0};
  std::atomic<bool> shutdown{false};
  std::mutex sleepMutex;
  std::condition_variable sleepCv;
  std::mutex dispatchMutex;
  uint64_t epoch = 0; // the caller's copy (under dispatchMutex)

  void runChunks() {
    insideJob = true;
    for (;;) {
      int64_t c = nextChunk.fetch_add(1, std::memory_order_relaxed);
      if (c >= chunks)
        break;
      int64_t begin = c * grain;
      int64_t end = n - begin < grain ? n : begin + grain;
      fn(ctx, begin, end);
    }
    insideJob = false;
  }

  void workerLoop() {
    const uint64_t spinNs = spinMicros() * 1000;
    uint64_t seen = 0;
    for (;;) {
      uint64_t g = gate.load(std::memory_order_acquire);
      if (epochOf(g) == seen) {
        // Spin, then sleep, until the next epoch or shutdown.
        uint64_t start = nowNanos();
        for (unsigned iter = 1;; ++iter) {
          cpuRelax();
          g = gate.load(std::memory_order_acquire);
          if (epochOf(g) != seen || shutdown.load(std::memory_order_relaxed))
            break;
          if ((iter & 255) == 0 && nowNanos() - start >= spinNs) {
            std::unique_lock<std::mutex> lock(sleepMutex);
            sleepers.fetch_add(1, std::memory_order_seq_cst);
            std::atomic_thread_fence(std::memory_order_seq_cst);
            while (epochOf(gate.load(std::memory_order_seq_cst)) == seen &&
                   !shutdown.load(std::memory_order_seq_cst))
              sleepCv.wait(lock);
            sleepers.fetch_sub(1, std::memory_order_relaxed);
            g = gate.load(std::memory_order_acquire);
            break;
          }
        }
        if (shutdown.load(std::memory_order_acquire))
          return;
        if (epochOf(g) == seen)
          continue;
      }
      seen = epochOf(g);
      // Join unless the caller has already closed this job.
      bool joined = false;
      while (epochOf(g) == seen && !(g & kClosed)) {
        if (gate.compare_exchange_weak(g, g + 1, std::memory_order_acq_rel,
                                       std::memory_order_acquire)) {
          joined = true;
          break;
        }
      }
      if (!joined)
        continue;
      runChunks();
      done.fetch_add(1, std::memory_order_release);
    }
  }

  void dispatch(int64_t total, int64_t chunkSize, synpl_rt_range_fn f,
                void *c) {
    std::lock_guard<std::mutex> serialize(dispatchMutex);
    fn = f;
    ctx = c;
    n = total;
    grain = chunkSize;
    chunks = (total + chunkSize - 1) / chunkSize;
    nextChunk.store(0, std::memory_order_relaxed);
    done.store(0, std::memory_order_relaxed);
    ++epoch;
    gate.store(epoch << 33, std::memory_order_seq_cst); // open, none joined
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (sleepers.load(std::memory_order_relaxed) != 0) {
      std::lock_guard<std::mutex> lock(sleepMutex);
      sleepCv.notify_all();
    }
    runChunks();
    uint64_t g = gate.fetch_or(kClosed, std::memory_order_acq_rel);
    uint32_t joined = uint32_t(g & kJoinedMask);
    for (unsigned iter = 1; done.load(std::memory_order_acquire) != joined;
         ++iter) {
      cpuRelax();
      if ((iter & 1023) == 0)
        sched_yield(); // an oversubscribed machine: let the worker run
    }
  }
};

namespace {

void *workerMain(void *arg) {
  static_cast<synpl_rt_workers *>(arg)->workerLoop();
  return nullptr;
}

int32_t defaultThreads() {
  const char *env = std::getenv("SYNPL_NUM_THREADS");
  if (env && *env) {
    char *end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (end && *end == '\0' && v > 0 && v <= 4096)
      return int32_t(v);
  }
  // The CPUs this process may run on (a launcher or taskset may bind it to
  // fewer than the machine has); several ranks of a run on one host share
  // them (Open MPI's local size; MPICH's; Slurm's tasks per node).
  unsigned hw = std::thread::hardware_concurrency();
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    hw = unsigned(CPU_COUNT(&set));
  bool bound = hw < std::thread::hardware_concurrency();
  int local = 0;
  if (!bound &&
      launcherInteger({"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"},
                      local) &&
      local > 1)
    hw = std::max(1u, hw / unsigned(local));
  return hw == 0 ? 1 : int32_t(hw > 4096 ? 4096 : hw);
}

void runInline(int64_t n, int64_t grain, synpl_rt_range_fn fn, void *ctx) {
  for (int64_t begin = 0; begin < n; begin += grain)
    fn(ctx, begin, n - begin < grain ? n : begin + grain);
}

} // namespace

extern "C" {

synpl_rt_workers *synpl_rt_workers_create(int32_t threads) {
  if (threads < 0 || threads > 4096) {
    fail(SYNPL_RT_ERR_INVALID, "workers: thread count %d is not in [0, 4096]",
         threads);
    return nullptr;
  }
  if (threads == 0)
    threads = defaultThreads();
  auto *w = new (std::nothrow) synpl_rt_workers();
  if (!w) {
    fail(SYNPL_RT_ERR_NOMEM, "workers: out of memory");
    return nullptr;
  }
  w->threads = threads;
  if (threads > 1) {
    w->handles = new (std::nothrow) pthread_t[threads - 1];
    if (!w->handles) {
      delete w;
      fail(SYNPL_RT_ERR_NOMEM, "workers: out of memory");
      return nullptr;
    }
    // The workers inherit the mask: the stop signals blocked.
    sigset_t stop, callers;
    sigemptyset(&stop);
    for (int sig : synpl::rt::exec::kStopSignals)
      sigaddset(&stop, sig);
    pthread_sigmask(SIG_BLOCK, &stop, &callers);
    for (int32_t i = 0; i < threads - 1; ++i) {
      int err = pthread_create(&w->handles[i], nullptr, workerMain, w);
      if (err != 0) {
        pthread_sigmask(SIG_SETMASK, &callers, nullptr);
        synpl_rt_workers_destroy(w);
        fail(SYNPL_RT_ERR_NOMEM, "workers: cannot start thread %d of %d: %s",
             i + 1, threads - 1, strerror(err));
        return nullptr;
      }
      ++w->started;
    }
    pthread_sigmask(SIG_SETMASK, &callers, nullptr);
  }
  return w;
}

void synpl_rt_workers_destroy(synpl_rt_workers *workers) {
  if (!workers)
    return;
  workers->shutdown.store(true, std::memory_order_seq_cst);
  {
    std::lock_guard<std::mutex> lock(workers->sleepMutex);
    workers->sleepCv.notify_all();
  }
  for (int32_t i = 0; i < workers->started; ++i)
    pthread_join(workers->handles[i], nullptr);
  delete[] workers->handles;
  delete workers;
}

int32_t synpl_rt_workers_count(const synpl_rt_workers *workers) {
  return workers ? workers->threads : 0;
}

synpl_rt_workers *synpl_rt_workers_default(void) {
  static synpl_rt_workers *pool = synpl_rt_workers_create(0);
  return pool;
}

void synpl_rt_parallel_for_grain(synpl_rt_workers *workers, int64_t n,
                                 int64_t grain, synpl_rt_range_fn fn,
                                 void *ctx) {
  if (n <= 0 || !fn)
    return;
  if (grain < 1)
    grain = 1;
  if (!workers || workers->threads <= 1 || n <= grain || insideJob) {
    runInline(n, grain, fn, ctx);
    return;
  }
  workers->dispatch(n, grain, fn, ctx);
}

void synpl_rt_parallel_for(synpl_rt_workers *workers, int64_t n,
                           synpl_rt_range_fn fn, void *ctx) {
  if (n <= 0 || !fn)
    return;
  if (!workers || workers->threads <= 1 || n == 1 || insideJob) {
    fn(ctx, 0, n);
    return;
  }
  int64_t chunks = int64_t(workers->threads) * 4;
  if (chunks > n)
    chunks = n;
  workers->dispatch(n, (n + chunks - 1) / chunks, fn, ctx);
}

} // extern "C"
