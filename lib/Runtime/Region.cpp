//===- Region.cpp - Persistent, arena and pool memory regions -------------===//
//
// The three strategies of the memory planner (spec, L1 -> L0 Pass 1). Region
// memory is an anonymous private mapping: page aligned, zero on first touch
// (persistent state starts at zero without a memset pass).
//
// Pool: a Treiber stack of block indices. The `next` links live in a side
// array of atomics, not in the blocks, so a thread that reads a stale head
// never reads user data, and the head carries a 32-bit tag bumped on every
// successful exchange so a stale head cannot be reinstalled (ABA).
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>
#include <sys/mman.h>

using namespace synpl::rt;

struct synpl_rt_region {
  int32_t kind = 0;
  uint8_t *base = nullptr;
  uint64_t capacity = 0; // bytes of the mapping in use
  uint64_t mapped = 0;   // bytes mapped (capacity rounded to pages)

  // Persistent and arena: the bump offset.
  alignas(kCacheLine) std::atomic<uint64_t> offset{0};

  // Pool.
  uint64_t blockBytes = 0;
  uint32_t blockCount = 0;
  std::atomic<uint32_t> *next = nullptr; // next[i]: block under i in the stack
  alignas(kCacheLine) std::atomic<uint64_t> head{0}; // tag << 32 | index
  alignas(kCacheLine) std::atomic<uint64_t> inUse{0};
};

namespace {

constexpr uint64_t kPage = 4096;

synpl_rt_region *createRegion(int32_t kind, uint64_t bytes, const char *what) {
  if (bytes == 0) {
    fail(SYNPL_RT_ERR_INVALID, "%s region: size must be positive", what);
    return nullptr;
  }
  if (bytes > (uint64_t(1) << 56)) {
    fail(SYNPL_RT_ERR_INVALID, "%s region: size %llu bytes is too large", what,
         (unsigned long long)bytes);
    return nullptr;
  }
  uint64_t mapped = (bytes + kPage - 1) & ~(kPage - 1);
  void *mem = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    fail(SYNPL_RT_ERR_NOMEM, "%s region: cannot map %llu bytes: %s", what,
         (unsigned long long)bytes, strerror(errno));
    return nullptr;
  }
  auto *r = new (std::nothrow) synpl_rt_region();
  if (!r) {
    munmap(mem, mapped);
    fail(SYNPL_RT_ERR_NOMEM, "%s region: out of memory", what);
    return nullptr;
  }
  r->kind = kind;
  r->base = static_cast<uint8_t *>(mem);
  r->capacity = bytes;
  r->mapped = mapped;
  return r;
}

constexpr uint32_t kEmpty = UINT32_MAX;

inline uint64_t packHead(uint32_t tag, uint32_t index) {
  return (uint64_t(tag) << 32) | index;
}

void *bumpAlloc(synpl_rt_region *r, uint64_t bytes) {
  uint64_t need;
  if (!roundUpAlign(bytes, need))
    need = UINT64_MAX;
  uint64_t cur = r->offset.load(std::memory_order_relaxed);
  do {
    if (need > r->capacity - cur) {
      fail(SYNPL_RT_ERR_EXHAUSTED,
           "%s region exhausted: %llu bytes requested, %llu of %llu left",
           r->kind == SYNPL_RT_REGION_ARENA ? "arena" : "persistent",
           (unsigned long long)bytes, (unsigned long long)(r->capacity - cur),
           (unsigned long long)r->capacity);
      return nullptr;
    }
  } while (!r->offset.compare_exchange_weak(cur, cur + need,
                                            std::memory_order_relaxed));
  return r->base + cur;
}

void *poolAlloc(synpl_rt_region *r, uint64_t bytes) {
  if (bytes > r->blockBytes) {
    fail(SYNPL_RT_ERR_INVALID,
         "pool region: %llu bytes requested, blocks are %llu bytes",
         (unsigned long long)bytes, (unsigned long long)r->blockBytes);
    return nullptr;
  }
  uint64_t head = r->head.load(std::memory_order_acquire);
  for (;;) {
    uint32_t index = uint32_t(head);
    if (index == kEmpty) {
      fail(SYNPL_RT_ERR_EXHAUSTED, "pool region exhausted: all %u blocks in use",
           r->blockCount);
      return nullptr;
    }
    // A stale `index` (popped and pushed meanwhile) reads a stale link, but
    // the tag makes the exchange below fail in that case.
    uint32_t below = r->next[index].load(std::memory_order_relaxed);
    if (r->head.compare_exchange_weak(head,
                                      packHead(uint32_t(head >> 32) + 1, below),
                                      std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
      r->inUse.fetch_add(1, std::memory_order_relaxed);
      return r->base + uint64_t(index) * r->blockBytes;
    }
  }
}

int32_t poolFree(synpl_rt_region *r, void *ptr) {
  auto *p = static_cast<uint8_t *>(ptr);
  uint64_t total = uint64_t(r->blockCount) * r->blockBytes;
  if (p < r->base || p >= r->base + total ||
      uint64_t(p - r->base) % r->blockBytes != 0)
    return fail(SYNPL_RT_ERR_INVALID,
                "pool region: %p is not a block of this pool", ptr);
  uint32_t index = uint32_t(uint64_t(p - r->base) / r->blockBytes);
  r->inUse.fetch_sub(1, std::memory_order_relaxed);
  uint64_t head = r->head.load(std::memory_order_relaxed);
  do {
    r->next[index].store(uint32_t(head), std::memory_order_relaxed);
  } while (!r->head.compare_exchange_weak(
      head, packHead(uint32_t(head >> 32) + 1, index),
      std::memory_order_release, std::memory_order_relaxed));
  return SYNPL_RT_OK;
}

} // namespace

extern "C" {

synpl_rt_region *synpl_rt_region_create_persistent(uint64_t bytes) {
  uint64_t rounded;
  if (!roundUpAlign(bytes, rounded))
    rounded = UINT64_MAX;
  return createRegion(SYNPL_RT_REGION_PERSISTENT, rounded, "persistent");
}

synpl_rt_region *synpl_rt_region_create_arena(uint64_t bytes) {
  uint64_t rounded;
  if (!roundUpAlign(bytes, rounded))
    rounded = UINT64_MAX;
  return createRegion(SYNPL_RT_REGION_ARENA, rounded, "arena");
}

synpl_rt_region *synpl_rt_region_create_pool(uint64_t block_bytes,
                                             uint64_t block_count) {
  uint64_t rounded;
  if (block_bytes == 0 || block_count == 0) {
    fail(SYNPL_RT_ERR_INVALID,
         "pool region: block size and block count must be positive");
    return nullptr;
  }
  if (!roundUpAlign(block_bytes, rounded) || block_count >= kEmpty ||
      rounded > (uint64_t(1) << 56) / block_count) {
    fail(SYNPL_RT_ERR_INVALID, "pool region: %llu blocks of %llu bytes is too large",
         (unsigned long long)block_count, (unsigned long long)block_bytes);
    return nullptr;
  }
  synpl_rt_region *r =
      createRegion(SYNPL_RT_REGION_POOL, rounded * block_count, "pool");
  if (!r)
    return nullptr;
  r->blockBytes = rounded;
  r->blockCount = uint32_t(block_count);
  r->next = new (std::nothrow) std::atomic<uint32_t>[block_count];
  if (!r->next) {
    synpl_rt_region_destroy(r);
    fail(SYNPL_RT_ERR_NOMEM, "pool region: out of memory");
    return nullptr;
  }
  // Stack order: block 0 on top, so a fresh pool hands out ascending blocks.
  for (uint32_t i = 0; i < r->blockCount; ++i)
    r->next[i].store(i + 1 < r->blockCount ? i + 1 : kEmpty,
                     std::memory_order_relaxed);
  r->head.store(packHead(0, 0), std::memory_order_release);
  return r;
}

void synpl_rt_region_destroy(synpl_rt_region *region) {
  if (!region)
    return;
  if (region->base)
    munmap(region->base, region->mapped);
  delete[] region->next;
  delete region;
}

void *synpl_rt_region_alloc(synpl_rt_region *region, uint64_t bytes) {
  if (!region) {
    fail(SYNPL_RT_ERR_INVALID, "region_alloc: null region");
    return nullptr;
  }
  if (region->kind == SYNPL_RT_REGION_POOL)
    return poolAlloc(region, bytes);
  return bumpAlloc(region, bytes);
}

int32_t synpl_rt_region_free(synpl_rt_region *region, void *ptr) {
  if (!region)
    return fail(SYNPL_RT_ERR_INVALID, "region_free: null region");
  if (region->kind != SYNPL_RT_REGION_POOL || !ptr)
    return SYNPL_RT_OK;
  return poolFree(region, ptr);
}

int32_t synpl_rt_region_reset(synpl_rt_region *region) {
  if (!region)
    return fail(SYNPL_RT_ERR_INVALID, "region_reset: null region");
  if (region->kind != SYNPL_RT_REGION_ARENA)
    return fail(SYNPL_RT_ERR_INVALID,
                "region_reset: only an arena region can be reset");
  region->offset.store(0, std::memory_order_release);
  return SYNPL_RT_OK;
}

int32_t synpl_rt_region_kind(const synpl_rt_region *region) {
  return region ? region->kind : -1;
}

void *synpl_rt_region_base(const synpl_rt_region *region) {
  return region ? region->base : nullptr;
}

uint64_t synpl_rt_region_capacity(const synpl_rt_region *region) {
  return region ? region->capacity : 0;
}

uint64_t synpl_rt_region_used(const synpl_rt_region *region) {
  if (!region)
    return 0;
  if (region->kind == SYNPL_RT_REGION_POOL)
    return region->inUse.load(std::memory_order_relaxed) * region->blockBytes;
  return region->offset.load(std::memory_order_relaxed);
}

uint64_t synpl_rt_region_block_bytes(const synpl_rt_region *region) {
  return region && region->kind == SYNPL_RT_REGION_POOL ? region->blockBytes
                                                         : 0;
}

} // extern "C"
