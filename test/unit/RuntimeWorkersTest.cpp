//===- RuntimeWorkersTest.cpp - parallel_for on the worker pool ------------===//

#include "synpl/Runtime/Runtime.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <pthread.h>

namespace {

struct Coverage {
  std::vector<std::atomic<uint32_t>> hits;
  std::atomic<uint64_t> badRanges{0};
  explicit Coverage(int64_t n) : hits(size_t(n)) {
    for (auto &h : hits)
      h.store(0);
  }
  static void fn(void *ctx, int64_t begin, int64_t end) {
    auto *c = static_cast<Coverage *>(ctx);
    if (begin < 0 || end > int64_t(c->hits.size()) || begin >= end) {
      c->badRanges.fetch_add(1);
      return;
    }
    for (int64_t i = begin; i < end; ++i)
      c->hits[size_t(i)].fetch_add(1, std::memory_order_relaxed);
  }
  // Indices not hit exactly once.
  int64_t wrong() const {
    int64_t bad = 0;
    for (auto &h : hits)
      bad += h.load() != 1;
    return bad;
  }
};

struct Ranges {
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  static void fn(void *ctx, int64_t begin, int64_t end) {
    auto *r = static_cast<Ranges *>(ctx);
    std::lock_guard<std::mutex> lock(r->mutex);
    r->ranges.emplace_back(begin, end);
  }
};

void noop(void *, int64_t, int64_t) {}

struct Sum {
  std::atomic<int64_t> total{0};
  static void fn(void *ctx, int64_t begin, int64_t end) {
    int64_t s = 0;
    for (int64_t i = begin; i < end; ++i)
      s += i;
    static_cast<Sum *>(ctx)->total.fetch_add(s, std::memory_order_relaxed);
  }
};

} // namespace

TEST_CASE("runtime workers: every index exactly once", "[runtime][workers]") {
  for (int32_t threads : {1, 2, 3, 8}) {
    synpl_rt_workers *w = synpl_rt_workers_create(threads);
    REQUIRE(w);
    CHECK(synpl_rt_workers_count(w) == threads);
    for (int64_t n : {int64_t(0), int64_t(1), int64_t(2), int64_t(threads - 1),
                      int64_t(threads), int64_t(threads + 1), int64_t(7),
                      int64_t(33), int64_t(1000), int64_t(100003)}) {
      INFO("threads " << threads << ", n " << n);
      Coverage cov(n);
      synpl_rt_parallel_for(w, n, Coverage::fn, &cov);
      CHECK(cov.wrong() == 0);
      CHECK(cov.badRanges.load() == 0);
      Coverage covGrain(n);
      synpl_rt_parallel_for_grain(w, n, 16, Coverage::fn, &covGrain);
      CHECK(covGrain.wrong() == 0);
      CHECK(covGrain.badRanges.load() == 0);
    }
    synpl_rt_workers_destroy(w);
  }
}

TEST_CASE("runtime workers: many back-to-back and sleepy dispatches",
          "[runtime][workers]") {
  synpl_rt_workers *w = synpl_rt_workers_create(4);
  REQUIRE(w);
  constexpr int kDispatches = 20000;
  int64_t wrongTotals = 0;
  for (int d = 0; d < kDispatches; ++d) {
    int64_t n = 1 + d % 97;
    Sum sum;
    synpl_rt_parallel_for(w, n, Sum::fn, &sum);
    // The caller sees every worker's result once parallel_for returns.
    wrongTotals += sum.total.load(std::memory_order_relaxed) != n * (n - 1) / 2;
  }
  CHECK(wrongTotals == 0);
  // Workers fall asleep between these: each dispatch must wake them.
  for (int d = 0; d < 5; ++d) {
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    Coverage cov(5000);
    synpl_rt_parallel_for(w, 5000, Coverage::fn, &cov);
    CHECK(cov.wrong() == 0);
  }
  synpl_rt_workers_destroy(w);
}

TEST_CASE("runtime workers: grain chunks do not depend on the thread count",
          "[runtime][workers]") {
  std::vector<std::pair<int64_t, int64_t>> expected;
  for (int64_t b = 0; b < 1000; b += 64)
    expected.emplace_back(b, std::min<int64_t>(b + 64, 1000));
  for (int32_t threads : {1, 2, 5}) {
    INFO("threads " << threads);
    synpl_rt_workers *w = synpl_rt_workers_create(threads);
    REQUIRE(w);
    Ranges r;
    synpl_rt_parallel_for_grain(w, 1000, 64, Ranges::fn, &r);
    std::sort(r.ranges.begin(), r.ranges.end());
    CHECK(r.ranges == expected);
    // n <= grain: one inline call.
    Ranges one;
    synpl_rt_parallel_for_grain(w, 64, 64, Ranges::fn, &one);
    CHECK(one.ranges == std::vector<std::pair<int64_t, int64_t>>{{0, 64}});
    synpl_rt_workers_destroy(w);
  }
}

namespace {
struct Nested {
  synpl_rt_workers *workers;
  std::vector<std::unique_ptr<Coverage>> *inner;
  static void fn(void *ctx, int64_t begin, int64_t end) {
    auto *n = static_cast<Nested *>(ctx);
    for (int64_t i = begin; i < end; ++i)
      synpl_rt_parallel_for(n->workers, 50, Coverage::fn, (*n->inner)[size_t(i)].get());
  }
};
} // namespace

TEST_CASE("runtime workers: nested parallel_for runs inline",
          "[runtime][workers]") {
  synpl_rt_workers *w = synpl_rt_workers_create(3);
  REQUIRE(w);
  std::vector<std::unique_ptr<Coverage>> inner;
  for (int i = 0; i < 40; ++i)
    inner.push_back(std::make_unique<Coverage>(50));
  Nested nested{w, &inner};
  synpl_rt_parallel_for(w, 40, Nested::fn, &nested);
  int64_t wrong = 0;
  for (auto &c : inner)
    wrong += c->wrong();
  CHECK(wrong == 0);
  synpl_rt_workers_destroy(w);
}

TEST_CASE("runtime workers: concurrent callers are serialized",
          "[runtime][workers]") {
  synpl_rt_workers *w = synpl_rt_workers_create(3);
  REQUIRE(w);
  std::atomic<int64_t> wrong{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 2; ++t)
    callers.emplace_back([&] {
      for (int d = 0; d < 2000; ++d) {
        Sum sum;
        synpl_rt_parallel_for(w, 300, Sum::fn, &sum);
        wrong += sum.total.load() != 300 * 299 / 2;
      }
    });
  for (auto &c : callers)
    c.join();
  CHECK(wrong.load() == 0);
  synpl_rt_workers_destroy(w);
}

TEST_CASE("runtime workers: the pool's threads block SIGINT and SIGTERM",
          "[runtime][workers][signals]") {
  // A process's SIGINT / SIGTERM handlers (a training run's stop request)
  // run on the threads that create pools, never in a worker's chunk.
  sigset_t before, after;
  pthread_sigmask(SIG_BLOCK, nullptr, &before);
  synpl_rt_workers *w = synpl_rt_workers_create(4);
  REQUIRE(w);
  pthread_sigmask(SIG_BLOCK, nullptr, &after);
  CHECK(sigismember(&after, SIGINT) == sigismember(&before, SIGINT));
  CHECK(sigismember(&after, SIGTERM) == sigismember(&before, SIGTERM));
  struct Seen {
    std::mutex m;
    std::vector<std::pair<bool, bool>> blocked; // per chunk on a worker
    std::thread::id caller = std::this_thread::get_id();
  } seen;
  auto fn = [](void *ctx, int64_t, int64_t) {
    auto *s = static_cast<Seen *>(ctx);
    // Slow enough that the workers take chunks too.
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (std::this_thread::get_id() == s->caller)
      return;
    sigset_t mask;
    pthread_sigmask(SIG_BLOCK, nullptr, &mask);
    std::lock_guard<std::mutex> lock(s->m);
    s->blocked.push_back({sigismember(&mask, SIGINT) == 1, sigismember(&mask, SIGTERM) == 1});
  };
  for (int round = 0; round < 20 && seen.blocked.empty(); ++round)
    synpl_rt_parallel_for_grain(w, 64, 1, fn, &seen);
  synpl_rt_workers_destroy(w);
  REQUIRE_FALSE(seen.blocked.empty());
  for (auto [intBlocked, termBlocked] : seen.blocked) {
    CHECK(intBlocked);
    CHECK(termBlocked);
  }
}

TEST_CASE("runtime workers: thread count from SYNPL_NUM_THREADS",
          "[runtime][workers]") {
  const char *old = std::getenv("SYNPL_NUM_THREADS");
  std::string saved = old ? old : "";
  setenv("SYNPL_NUM_THREADS", "3", 1);
  synpl_rt_workers *w = synpl_rt_workers_create(0);
  REQUIRE(w);
  CHECK(synpl_rt_workers_count(w) == 3);
  synpl_rt_workers_destroy(w);
  setenv("SYNPL_NUM_THREADS", "zero", 1); // ignored: hardware concurrency
  w = synpl_rt_workers_create(0);
  REQUIRE(w);
  unsigned hw = std::thread::hardware_concurrency();
  CHECK(synpl_rt_workers_count(w) == int32_t(hw ? hw : 1));
  synpl_rt_workers_destroy(w);
  if (old)
    setenv("SYNPL_NUM_THREADS", saved.c_str(), 1);
  else
    unsetenv("SYNPL_NUM_THREADS");
  CHECK(synpl_rt_workers_create(-1) == nullptr);
  CHECK(synpl_rt_workers_default() != nullptr);
  CHECK(synpl_rt_workers_default() == synpl_rt_workers_default());
}

namespace {
// Busy for about `micros` per index, like a small kernel slice.
void busy(void *ctx, int64_t begin, int64_t end) {
  double micros = *static_cast<double *>(ctx) * double(end - begin);
  auto until = std::chrono::steady_clock::now() +
               std::chrono::duration<double, std::micro>(micros);
  while (std::chrono::steady_clock::now() < until) {
  }
}

double microsPerDispatch(synpl_rt_workers *w, int64_t n, int64_t grain,
                         synpl_rt_range_fn fn, void *ctx, int dispatches) {
  for (int d = 0; d < dispatches / 10; ++d) // warm up: workers spinning
    synpl_rt_parallel_for_grain(w, n, grain, fn, ctx);
  auto start = std::chrono::steady_clock::now();
  for (int d = 0; d < dispatches; ++d)
    synpl_rt_parallel_for_grain(w, n, grain, fn, ctx);
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now() - start)
             .count() /
         dispatches;
}
} // namespace

// Not an assertion: costs to watch, printed with the test output.
TEST_CASE("runtime workers: dispatch cost", "[runtime][workers][bench]") {
  synpl_rt_workers *w = synpl_rt_workers_create(0);
  REQUIRE(w);
  int32_t threads = synpl_rt_workers_count(w);
  // Empty body: the caller's own cost (it may take every chunk itself).
  double empty = microsPerDispatch(w, threads * 4, 1, noop, nullptr, 20000);
  // One 5 us slice per thread: ideal 5 us when every thread takes one.
  double slice = 5.0;
  double busyUs = microsPerDispatch(w, threads, 1, busy, &slice, 5000);
  // The same after an idle gap longer than the spin: workers are asleep.
  double asleep = 0;
  constexpr int kSleepy = 50;
  for (int d = 0; d < kSleepy; ++d) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    asleep += microsPerDispatch(w, threads, 1, busy, &slice, 1);
  }
  asleep /= kSleepy;
  std::printf("runtime workers (%d threads): empty parallel_for %.2f us; %d x 5 us "
              "slices %.2f us per dispatch (serial %.0f us, overhead %.2f us); "
              "after a 2 ms idle gap %.2f us\n",
              threads, empty, threads, busyUs, 5.0 * threads, busyUs - 5.0, asleep);
  std::fflush(stdout);
  synpl_rt_workers_destroy(w);
}

TEST_CASE("runtime kernel scratch: one aligned buffer per thread, grown and reused",
          "[runtime][workers][scratch]") {
  // On this thread: aligned, kept for smaller requests, grown for larger.
  auto *first = static_cast<char *>(synpl_rt_kernel_scratch(1000));
  REQUIRE(first);
  CHECK(reinterpret_cast<uintptr_t>(first) % 64 == 0);
  first[999] = 7;
  CHECK(synpl_rt_kernel_scratch(64) == first);
  CHECK(synpl_rt_kernel_scratch(0) == first);
  auto *grown = static_cast<char *>(synpl_rt_kernel_scratch(3 << 20));
  REQUIRE(grown);
  CHECK(reinterpret_cast<uintptr_t>(grown) % 64 == 0);
  grown[(3 << 20) - 1] = 1; // the whole request is writable
  CHECK(synpl_rt_kernel_scratch(1 << 20) == grown);

  // Threads running kernels at the same time never share a buffer: each
  // fills its own with its index, all wait until every one has written,
  // then each finds its own intact.
  constexpr int kThreads = 4;
  constexpr int64_t kWords = 1 << 16;
  std::atomic<int> written{0}, corrupted{0};
  std::vector<void *> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      auto *buf = static_cast<int64_t *>(synpl_rt_kernel_scratch(kWords * 8));
      for (int64_t i = 0; i < kWords; ++i)
        buf[i] = t;
      written.fetch_add(1);
      while (written.load() < kThreads)
        std::this_thread::yield();
      for (int64_t i = 0; i < kWords; ++i)
        if (buf[i] != t) {
          corrupted.fetch_add(1);
          break;
        }
      seen[t] = buf;
    });
  for (std::thread &t : threads)
    t.join();
  CHECK(corrupted.load() == 0);
  std::sort(seen.begin(), seen.end());
  CHECK(std::unique(seen.begin(), seen.end()) == seen.end());
}
