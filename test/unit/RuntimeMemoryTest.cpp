//===- RuntimeMemoryTest.cpp - persistent / arena / pool regions ----------===//

#include "synpl/Runtime/Runtime.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {
bool aligned64(const void *p) { return (reinterpret_cast<uintptr_t>(p) & 63) == 0; }
std::string lastError() { return synpl_rt_last_error(); }
} // namespace

TEST_CASE("runtime arena: aligned bump allocation, exhaustion, bulk reset",
          "[runtime][region]") {
  synpl_rt_region *arena = synpl_rt_region_create_arena(1000);
  REQUIRE(arena);
  CHECK(synpl_rt_region_kind(arena) == SYNPL_RT_REGION_ARENA);
  CHECK(synpl_rt_region_capacity(arena) == 1024); // rounded up to 64
  CHECK(aligned64(synpl_rt_region_base(arena)));

  auto *a = static_cast<uint8_t *>(synpl_rt_region_alloc(arena, 1));
  auto *b = static_cast<uint8_t *>(synpl_rt_region_alloc(arena, 65));
  auto *c = static_cast<uint8_t *>(synpl_rt_region_alloc(arena, 64));
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(c);
  CHECK(aligned64(a));
  CHECK(aligned64(b));
  CHECK(aligned64(c));
  CHECK(a == synpl_rt_region_base(arena));
  CHECK(b == a + 64);  // 1 byte took a whole 64-byte line
  CHECK(c == b + 128); // 65 bytes took two
  CHECK(synpl_rt_region_used(arena) == 256);
  std::memset(a, 0xab, 1024); // the whole region is writable

  // 768 bytes left: 769 does not fit, 768 does, then nothing does.
  synpl_rt_clear_error();
  CHECK(synpl_rt_region_alloc(arena, 769) == nullptr);
  CHECK(synpl_rt_last_status() == SYNPL_RT_ERR_EXHAUSTED);
  CHECK(lastError() ==
        "arena region exhausted: 769 bytes requested, 768 of 1024 left");
  CHECK(synpl_rt_region_alloc(arena, 768) == c + 64);
  CHECK(synpl_rt_region_alloc(arena, 1) == nullptr);
  CHECK(synpl_rt_region_alloc(arena, UINT64_MAX) == nullptr);

  // free is a no-op for arenas; reset hands the same memory out again.
  CHECK(synpl_rt_region_free(arena, b) == SYNPL_RT_OK);
  CHECK(synpl_rt_region_used(arena) == 1024);
  CHECK(synpl_rt_region_reset(arena) == SYNPL_RT_OK);
  CHECK(synpl_rt_region_used(arena) == 0);
  CHECK(synpl_rt_region_alloc(arena, 64) == a);
  CHECK(synpl_rt_region_alloc(arena, 1) == b);
  synpl_rt_region_destroy(arena);
}

TEST_CASE("runtime persistent region: zeroed, no reset", "[runtime][region]") {
  synpl_rt_region *p = synpl_rt_region_create_persistent(1 << 20);
  REQUIRE(p);
  auto *w = static_cast<float *>(synpl_rt_region_alloc(p, 784 * 10 * 4));
  auto *bias = static_cast<float *>(synpl_rt_region_alloc(p, 10 * 4));
  REQUIRE(w);
  REQUIRE(bias);
  CHECK(aligned64(w));
  CHECK(aligned64(bias));
  bool zero = true;
  for (int i = 0; i < 7840; ++i)
    zero &= w[i] == 0.0f;
  CHECK(zero);
  CHECK(reinterpret_cast<uint8_t *>(bias) ==
        reinterpret_cast<uint8_t *>(w) + 31360); // 31360 is a multiple of 64
  CHECK(synpl_rt_region_reset(p) == SYNPL_RT_ERR_INVALID);
  CHECK(lastError() == "region_reset: only an arena region can be reset");
  CHECK(synpl_rt_region_used(p) == 31360 + 64);
  CHECK(synpl_rt_region_alloc(p, 1 << 20) == nullptr);
  CHECK(lastError().find("persistent region exhausted") == 0);
  synpl_rt_region_destroy(p);
}

TEST_CASE("runtime pool: fixed blocks, exhaustion, reuse, bad frees",
          "[runtime][region]") {
  synpl_rt_region *pool = synpl_rt_region_create_pool(100, 4);
  REQUIRE(pool);
  CHECK(synpl_rt_region_kind(pool) == SYNPL_RT_REGION_POOL);
  CHECK(synpl_rt_region_block_bytes(pool) == 128);
  CHECK(synpl_rt_region_capacity(pool) == 512);

  std::vector<uint8_t *> blocks;
  for (int i = 0; i < 4; ++i) {
    auto *blk = static_cast<uint8_t *>(synpl_rt_region_alloc(pool, 100));
    REQUIRE(blk);
    CHECK(aligned64(blk));
    std::memset(blk, i, 128);
    blocks.push_back(blk);
  }
  CHECK(std::set<uint8_t *>(blocks.begin(), blocks.end()).size() == 4);
  CHECK(synpl_rt_region_used(pool) == 512);
  synpl_rt_clear_error();
  CHECK(synpl_rt_region_alloc(pool, 1) == nullptr);
  CHECK(synpl_rt_last_status() == SYNPL_RT_ERR_EXHAUSTED);
  CHECK(lastError() == "pool region exhausted: all 4 blocks in use");

  // Blocks do not overlap: each kept its fill.
  for (int i = 0; i < 4; ++i)
    CHECK((blocks[i][0] == i && blocks[i][127] == i));

  // LIFO reuse: the last freed block comes back first.
  CHECK(synpl_rt_region_free(pool, blocks[2]) == SYNPL_RT_OK);
  CHECK(synpl_rt_region_free(pool, blocks[0]) == SYNPL_RT_OK);
  CHECK(synpl_rt_region_used(pool) == 256);
  CHECK(synpl_rt_region_alloc(pool, 128) == blocks[0]);
  CHECK(synpl_rt_region_alloc(pool, 0) == blocks[2]);
  CHECK(synpl_rt_region_alloc(pool, 1) == nullptr);

  // Larger than a block; pointers that are not blocks of this pool.
  CHECK(synpl_rt_region_free(pool, blocks[1]) == SYNPL_RT_OK);
  CHECK(synpl_rt_region_alloc(pool, 129) == nullptr);
  CHECK(lastError() == "pool region: 129 bytes requested, blocks are 128 bytes");
  int local = 0;
  CHECK(synpl_rt_region_free(pool, &local) == SYNPL_RT_ERR_INVALID);
  CHECK(synpl_rt_region_free(pool, blocks[3] + 1) == SYNPL_RT_ERR_INVALID);
  CHECK(lastError().find("is not a block of this pool") != std::string::npos);
  CHECK(synpl_rt_region_free(pool, nullptr) == SYNPL_RT_OK);
  CHECK(synpl_rt_region_reset(pool) == SYNPL_RT_ERR_INVALID);
  synpl_rt_region_destroy(pool);
}

TEST_CASE("runtime pool: the freelist under concurrent alloc/free",
          "[runtime][region]") {
  constexpr int kBlocks = 8;
  constexpr int kThreads = 4;
  constexpr int kRounds = 200000;
  synpl_rt_region *pool = synpl_rt_region_create_pool(64, kBlocks);
  REQUIRE(pool);
  std::atomic<int> doubleHandouts{0}, nulls{0}, badFrees{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        auto *blk = static_cast<std::atomic<uint32_t> *>(
            synpl_rt_region_alloc(pool, 64));
        if (!blk) { // 4 threads x 1 block each never exhaust 8 blocks
          nulls.fetch_add(1);
          continue;
        }
        // The block is ours alone: nobody else may stamp it meanwhile.
        uint32_t stamp = uint32_t(t) << 24 | uint32_t(r & 0xffffff);
        if (blk->exchange(stamp) != 0)
          doubleHandouts.fetch_add(1);
        for (int spin = 0; spin < (r & 7); ++spin)
          std::atomic_signal_fence(std::memory_order_seq_cst);
        if (blk->exchange(0) != stamp)
          doubleHandouts.fetch_add(1);
        if (synpl_rt_region_free(pool, blk) != SYNPL_RT_OK)
          badFrees.fetch_add(1);
      }
    });
  for (auto &th : threads)
    th.join();
  CHECK(doubleHandouts.load() == 0);
  CHECK(nulls.load() == 0);
  CHECK(badFrees.load() == 0);
  CHECK(synpl_rt_region_used(pool) == 0);
  // Every block is back on the list exactly once.
  std::set<void *> all;
  for (int i = 0; i < kBlocks; ++i)
    all.insert(synpl_rt_region_alloc(pool, 64));
  CHECK(all.size() == kBlocks);
  CHECK(all.count(nullptr) == 0);
  CHECK(synpl_rt_region_alloc(pool, 64) == nullptr);
  synpl_rt_region_destroy(pool);
}

TEST_CASE("runtime regions: bad sizes are errors, not crashes",
          "[runtime][region]") {
  CHECK(synpl_rt_region_create_arena(0) == nullptr);
  CHECK(synpl_rt_last_status() == SYNPL_RT_ERR_INVALID);
  CHECK(lastError() == "arena region: size must be positive");
  CHECK(synpl_rt_region_create_persistent(UINT64_MAX) == nullptr);
  CHECK(synpl_rt_region_create_pool(0, 4) == nullptr);
  CHECK(synpl_rt_region_create_pool(64, 0) == nullptr);
  CHECK(synpl_rt_region_create_pool(UINT64_MAX / 2, 4) == nullptr);
  CHECK(lastError().find("is too large") != std::string::npos);
  CHECK(synpl_rt_region_alloc(nullptr, 8) == nullptr);
  CHECK(synpl_rt_region_free(nullptr, nullptr) == SYNPL_RT_ERR_INVALID);
  synpl_rt_region_destroy(nullptr);
  CHECK(std::string(synpl_rt_status_name(SYNPL_RT_ERR_EXHAUSTED)) == "exhausted");
}
