//===- RuntimeQueueTest.cpp - bounded descriptor rings --------------------===//
//
// Worker threads only record what they saw; every assertion runs on the
// main thread after the join (Catch2 is not thread-safe).

#include "synpl/Runtime/Runtime.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace {
struct Desc {
  uint64_t seq;
  uint64_t check; // seq * odd constant: a torn copy shows up
  uint32_t producer;
  uint32_t pad;
};
constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
} // namespace

TEST_CASE("runtime queue: capacity and FIFO order, single thread",
          "[runtime][queue]") {
  for (int32_t mode : {SYNPL_RT_QUEUE_SPSC, SYNPL_RT_QUEUE_MPMC}) {
    INFO("mode " << mode);
    synpl_rt_queue *q = synpl_rt_queue_create(3, sizeof(Desc), mode);
    REQUIRE(q);
    CHECK(synpl_rt_queue_capacity(q) == 3);
    Desc d{};
    CHECK(synpl_rt_queue_try_pop(q, &d) == 0);
    for (uint64_t round = 0; round < 5; ++round) { // wraps the ring
      for (uint64_t i = 0; i < 3; ++i) {
        Desc in{round * 10 + i, (round * 10 + i) * kMul, 0, 0};
        CHECK(synpl_rt_queue_try_push(q, &in) == 1);
      }
      Desc extra{99, 99 * kMul, 0, 0};
      CHECK(synpl_rt_queue_try_push(q, &extra) == 0); // full: not stored
      CHECK(synpl_rt_queue_size(q) == 3);
      for (uint64_t i = 0; i < 3; ++i) {
        REQUIRE(synpl_rt_queue_try_pop(q, &d) == 1);
        CHECK(d.seq == round * 10 + i);
        CHECK(d.check == d.seq * kMul);
      }
      CHECK(synpl_rt_queue_try_pop(q, &d) == 0);
      CHECK(synpl_rt_queue_size(q) == 0);
    }
    synpl_rt_queue_destroy(q);
  }
}

TEST_CASE("runtime queue: SPSC, 1e6 descriptors across two threads",
          "[runtime][queue]") {
  constexpr uint64_t kItems = 1000000;
  for (bool blocking : {true, false}) {
    INFO((blocking ? "blocking push/pop" : "try_push/try_pop"));
    synpl_rt_queue *q = synpl_rt_queue_create(64, sizeof(Desc), SYNPL_RT_QUEUE_SPSC);
    REQUIRE(q);
    std::atomic<int> pushErrors{0};
    std::thread producer([&] {
      for (uint64_t i = 0; i < kItems; ++i) {
        Desc d{i, i * kMul, 0, 0};
        if (blocking) {
          if (synpl_rt_queue_push(q, &d) != SYNPL_RT_OK)
            pushErrors.fetch_add(1);
        } else {
          while (!synpl_rt_queue_try_push(q, &d))
            std::this_thread::yield();
        }
      }
    });
    uint64_t outOfOrder = 0, torn = 0, popErrors = 0;
    for (uint64_t i = 0; i < kItems; ++i) {
      Desc d{};
      if (blocking) {
        if (synpl_rt_queue_pop(q, &d) != SYNPL_RT_OK)
          ++popErrors;
      } else {
        while (!synpl_rt_queue_try_pop(q, &d))
          std::this_thread::yield();
      }
      outOfOrder += d.seq != i;
      torn += d.check != d.seq * kMul;
    }
    producer.join();
    Desc d{};
    CHECK(synpl_rt_queue_try_pop(q, &d) == 0); // nothing duplicated
    CHECK(pushErrors.load() == 0);
    CHECK(popErrors == 0);
    CHECK(outOfOrder == 0);
    CHECK(torn == 0);
    synpl_rt_queue_destroy(q);
  }
}

TEST_CASE("runtime queue: MPMC, 3 producers and 2 consumers",
          "[runtime][queue]") {
  constexpr uint32_t kProducers = 3, kConsumers = 2;
  constexpr uint64_t kPerProducer = 200000;
  synpl_rt_queue *q = synpl_rt_queue_create(16, sizeof(Desc), SYNPL_RT_QUEUE_MPMC);
  REQUIRE(q);
  std::vector<std::atomic<uint8_t>> seen(kProducers * kPerProducer);
  for (auto &s : seen)
    s.store(0);
  std::atomic<uint64_t> torn{0}, fifoBroken{0}, errors{0};
  std::vector<std::thread> threads;
  for (uint32_t p = 0; p < kProducers; ++p)
    threads.emplace_back([&, p] {
      for (uint64_t i = 0; i < kPerProducer; ++i) {
        Desc d{i, i * kMul, p, 0};
        if (synpl_rt_queue_push(q, &d) != SYNPL_RT_OK)
          errors.fetch_add(1);
      }
    });
  for (uint32_t c = 0; c < kConsumers; ++c)
    threads.emplace_back([&] {
      uint64_t last[kProducers];
      for (auto &l : last)
        l = UINT64_MAX;
      Desc d{};
      // Runs until close() and drained.
      while (synpl_rt_queue_pop(q, &d) == SYNPL_RT_OK) {
        if (d.producer >= kProducers || d.seq >= kPerProducer ||
            d.check != d.seq * kMul) {
          torn.fetch_add(1);
          continue;
        }
        // One consumer sees each producer's descriptors in push order.
        if (last[d.producer] != UINT64_MAX && d.seq <= last[d.producer])
          fifoBroken.fetch_add(1);
        last[d.producer] = d.seq;
        seen[d.producer * kPerProducer + d.seq].fetch_add(1);
      }
    });
  for (uint32_t p = 0; p < kProducers; ++p)
    threads[p].join();
  synpl_rt_queue_close(q);
  for (uint32_t c = 0; c < kConsumers; ++c)
    threads[kProducers + c].join();
  uint64_t lost = 0, duplicated = 0;
  for (auto &s : seen) {
    lost += s.load() == 0;
    duplicated += s.load() > 1;
  }
  CHECK(errors.load() == 0);
  CHECK(torn.load() == 0);
  CHECK(fifoBroken.load() == 0);
  CHECK(lost == 0);
  CHECK(duplicated == 0);
  synpl_rt_queue_destroy(q);
}

TEST_CASE("runtime queue: close wakes a blocked consumer and drains",
          "[runtime][queue]") {
  for (int32_t mode : {SYNPL_RT_QUEUE_SPSC, SYNPL_RT_QUEUE_MPMC}) {
    INFO("mode " << mode);
    synpl_rt_queue *q = synpl_rt_queue_create(4, sizeof(uint64_t), mode);
    REQUIRE(q);
    std::vector<uint64_t> got;
    int32_t endStatus = -1;
    std::thread consumer([&] {
      uint64_t v;
      int32_t st;
      while ((st = synpl_rt_queue_pop(q, &v)) == SYNPL_RT_OK)
        got.push_back(v);
      endStatus = st;
    });
    // Let the consumer go to sleep (past the spin phase) before each push.
    for (uint64_t v = 1; v <= 3; ++v) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      CHECK(synpl_rt_queue_push(q, &v) == SYNPL_RT_OK);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    synpl_rt_queue_close(q);
    consumer.join();
    CHECK(got == std::vector<uint64_t>{1, 2, 3});
    CHECK(endStatus == SYNPL_RT_ERR_CLOSED);
    uint64_t v = 7;
    CHECK(synpl_rt_queue_push(q, &v) == SYNPL_RT_ERR_CLOSED);
    CHECK(synpl_rt_queue_try_push(q, &v) == 0);
    synpl_rt_queue_destroy(q);
  }
}

TEST_CASE("runtime queue: a full queue blocks the producer until a pop",
          "[runtime][queue]") {
  synpl_rt_queue *q = synpl_rt_queue_create(2, sizeof(uint32_t), SYNPL_RT_QUEUE_SPSC);
  REQUIRE(q);
  uint32_t v = 1;
  REQUIRE(synpl_rt_queue_try_push(q, &v) == 1);
  REQUIRE(synpl_rt_queue_try_push(q, &v) == 1);
  std::atomic<bool> pushed{false};
  std::thread producer([&] {
    uint32_t w = 2;
    synpl_rt_queue_push(q, &w);
    pushed.store(true);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  bool pushedEarly = pushed.load();
  uint32_t out = 0;
  REQUIRE(synpl_rt_queue_try_pop(q, &out) == 1);
  producer.join();
  CHECK_FALSE(pushedEarly);
  CHECK(pushed.load());
  CHECK(synpl_rt_queue_size(q) == 2);
  synpl_rt_queue_destroy(q);
}

TEST_CASE("runtime queue: bad parameters", "[runtime][queue]") {
  CHECK(synpl_rt_queue_create(0, 8, SYNPL_RT_QUEUE_SPSC) == nullptr);
  CHECK(std::string(synpl_rt_last_error()) ==
        "queue: capacity 0 is not in [1, 2^30]");
  CHECK(synpl_rt_queue_create(8, 0, SYNPL_RT_QUEUE_SPSC) == nullptr);
  CHECK(synpl_rt_queue_create(8, 8, 7) == nullptr);
  CHECK(std::string(synpl_rt_last_error()) == "queue: unknown mode 7");
}
