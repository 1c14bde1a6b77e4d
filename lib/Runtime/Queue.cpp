//===- Queue.cpp - Bounded descriptor rings (queue_push / queue_pop) -------===//
//
// SPSC: Lamport's ring. The producer owns `tail`, the consumer `head`; each
// keeps a cached copy of the other's index on its own cache line and reloads
// it (acquire) only when the ring looks full/empty. A slot is written before
// the release store that publishes it and read before the release store that
// gives it back, so no descriptor is lost, torn or duplicated.
//
// MPMC: Vyukov's bounded queue. Each slot carries a sequence number: `pos`
// when free for the producer that claims position pos, `pos + 1` when it holds
// that producer's descriptor, `pos + capacity` when consumed. Positions are
// 64-bit and never wrap, so any capacity works (slot = pos % capacity).
//
// Blocking push/pop spin on the non-blocking path for SYNPL_SPIN_US, then
// sleep on a condition variable. A successful operation wakes sleepers only
// when the waiter count says there are some: the seq_cst fence after the
// publishing store and the seq_cst increment + fence before the waiter's
// re-check make it impossible for both sides to miss each other.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <new>

using namespace synpl::rt;

namespace {
struct alignas(kCacheLine) ProducerSide {
  std::atomic<uint64_t> tail{0}; // SPSC: next position to write
  uint64_t headCache = 0;        // SPSC: producer's view of head
  std::atomic<uint64_t> enqueue{0}; // MPMC: next position to claim
};
struct alignas(kCacheLine) ConsumerSide {
  std::atomic<uint64_t> head{0}; // SPSC: next position to read
  uint64_t tailCache = 0;        // SPSC: consumer's view of tail
  std::atomic<uint64_t> dequeue{0}; // MPMC: next position to claim
};
} // namespace

struct synpl_rt_queue {
  int32_t mode = SYNPL_RT_QUEUE_SPSC;
  uint32_t capacity = 0;
  uint32_t descBytes = 0;
  uint32_t stride = 0;  // bytes per slot (MPMC: sequence number + descriptor)
  uint8_t *slots = nullptr;

  ProducerSide prod;
  ConsumerSide cons;

  alignas(kCacheLine) std::atomic<uint32_t> waiters{0};
  std::atomic<bool> closed{false};
  std::mutex mutex;
  std::condition_variable cv;

  uint8_t *slot(uint64_t pos) const {
    return slots + (pos % capacity) * uint64_t(stride);
  }
  std::atomic<uint64_t> &seq(uint64_t pos) const {
    return *reinterpret_cast<std::atomic<uint64_t> *>(slot(pos));
  }
  uint8_t *payload(uint64_t pos) const {
    return mode == SYNPL_RT_QUEUE_MPMC ? slot(pos) + sizeof(uint64_t)
                                       : slot(pos);
  }
};

namespace {

bool trySpscPush(synpl_rt_queue *q, const void *desc) {
  uint64_t t = q->prod.tail.load(std::memory_order_relaxed);
  if (t - q->prod.headCache >= q->capacity) {
    q->prod.headCache = q->cons.head.load(std::memory_order_acquire);
    if (t - q->prod.headCache >= q->capacity)
      return false;
  }
  std::memcpy(q->payload(t), desc, q->descBytes);
  q->prod.tail.store(t + 1, std::memory_order_release);
  return true;
}

bool trySpscPop(synpl_rt_queue *q, void *desc) {
  uint64_t h = q->cons.head.load(std::memory_order_relaxed);
  if (h == q->cons.tailCache) {
    q->cons.tailCache = q->prod.tail.load(std::memory_order_acquire);
    if (h == q->cons.tailCache)
      return false;
  }
  std::memcpy(desc, q->payload(h), q->descBytes);
  q->cons.head.store(h + 1, std::memory_order_release);
  return true;
}

bool tryMpmcPush(synpl_rt_queue *q, const void *desc) {
  uint64_t pos = q->prod.enqueue.load(std::memory_order_relaxed);
  for (;;) {
    uint64_t s = q->seq(pos).load(std::memory_order_acquire);
    int64_t dif = int64_t(s - pos);
    if (dif == 0) {
      if (q->prod.enqueue.compare_exchange_weak(pos, pos + 1,
                                                std::memory_order_relaxed))
        break;
    } else if (dif < 0) {
      return false; // the slot still holds the descriptor of pos - capacity
    } else {
      pos = q->prod.enqueue.load(std::memory_order_relaxed);
    }
  }
  std::memcpy(q->payload(pos), desc, q->descBytes);
  q->seq(pos).store(pos + 1, std::memory_order_release);
  return true;
}

bool tryMpmcPop(synpl_rt_queue *q, void *desc) {
  uint64_t pos = q->cons.dequeue.load(std::memory_order_relaxed);
  for (;;) {
    uint64_t s = q->seq(pos).load(std::memory_order_acquire);
    int64_t dif = int64_t(s - (pos + 1));
    if (dif == 0) {
      if (q->cons.dequeue.compare_exchange_weak(pos, pos + 1,
                                                std::memory_order_relaxed))
        break;
    } else if (dif < 0) {
      return false; // not yet written
    } else {
      pos = q->cons.dequeue.load(std::memory_order_relaxed);
    }
  }
  std::memcpy(desc, q->payload(pos), q->descBytes);
  q->seq(pos).store(pos + q->capacity, std::memory_order_release);
  return true;
}

bool tryPush(synpl_rt_queue *q, const void *desc) {
  return q->mode == SYNPL_RT_QUEUE_MPMC ? tryMpmcPush(q, desc)
                                        : trySpscPush(q, desc);
}
bool tryPop(synpl_rt_queue *q, void *desc) {
  return q->mode == SYNPL_RT_QUEUE_MPMC ? tryMpmcPop(q, desc)
                                        : trySpscPop(q, desc);
}

// Whether a push / pop could make progress now (a hint for sleepers).
bool canPush(synpl_rt_queue *q) {
  if (q->mode == SYNPL_RT_QUEUE_MPMC) {
    uint64_t pos = q->prod.enqueue.load(std::memory_order_relaxed);
    return int64_t(q->seq(pos).load(std::memory_order_acquire) - pos) >= 0;
  }
  return q->prod.tail.load(std::memory_order_relaxed) -
             q->cons.head.load(std::memory_order_acquire) <
         q->capacity;
}
bool canPop(synpl_rt_queue *q) {
  if (q->mode == SYNPL_RT_QUEUE_MPMC) {
    uint64_t pos = q->cons.dequeue.load(std::memory_order_relaxed);
    return int64_t(q->seq(pos).load(std::memory_order_acquire) - (pos + 1)) >= 0;
  }
  return q->prod.tail.load(std::memory_order_acquire) !=
         q->cons.head.load(std::memory_order_relaxed);
}

// After a successful push or pop: wake sleepers on the other side, if any.
void wakeWaiters(synpl_rt_queue *q) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (q->waiters.load(std::memory_order_relaxed) != 0) {
    std::lock_guard<std::mutex> lock(q->mutex);
    q->cv.notify_all();
  }
}

template <typename TryOp, typename Ready>
int32_t blockingOp(synpl_rt_queue *q, bool isPush, TryOp tryOp, Ready ready) {
  const uint64_t spinNs = spinMicros() * 1000;
  uint64_t start = 0;
  for (unsigned iter = 0;; ++iter) {
    if (isPush && q->closed.load(std::memory_order_acquire))
      return SYNPL_RT_ERR_CLOSED;
    if (tryOp()) {
      wakeWaiters(q);
      return SYNPL_RT_OK;
    }
    if (q->closed.load(std::memory_order_acquire)) {
      // A descriptor pushed before close() is still delivered.
      if (!isPush && tryOp()) {
        wakeWaiters(q);
        return SYNPL_RT_OK;
      }
      return SYNPL_RT_ERR_CLOSED;
    }
    if (iter == 0) {
      start = nowNanos();
    } else if ((iter & 63) == 0 && nowNanos() - start >= spinNs) {
      std::unique_lock<std::mutex> lock(q->mutex);
      q->waiters.fetch_add(1, std::memory_order_seq_cst);
      std::atomic_thread_fence(std::memory_order_seq_cst);
      while (!ready() && !q->closed.load(std::memory_order_acquire))
        q->cv.wait(lock);
      q->waiters.fetch_sub(1, std::memory_order_relaxed);
      start = nowNanos(); // woken: spin afresh before sleeping again
      continue;
    }
    cpuRelax();
  }
}

} // namespace

extern "C" {

synpl_rt_queue *synpl_rt_queue_create(uint32_t capacity,
                                      uint32_t descriptor_bytes, int32_t mode) {
  if (capacity == 0 || capacity > (1u << 30)) {
    fail(SYNPL_RT_ERR_INVALID, "queue: capacity %u is not in [1, 2^30]",
         capacity);
    return nullptr;
  }
  if (descriptor_bytes == 0 || descriptor_bytes > (1u << 16)) {
    fail(SYNPL_RT_ERR_INVALID,
         "queue: descriptor size %u bytes is not in [1, 65536]",
         descriptor_bytes);
    return nullptr;
  }
  if (mode != SYNPL_RT_QUEUE_SPSC && mode != SYNPL_RT_QUEUE_MPMC) {
    fail(SYNPL_RT_ERR_INVALID, "queue: unknown mode %d", mode);
    return nullptr;
  }
  auto *q = new (std::nothrow) synpl_rt_queue();
  if (!q) {
    fail(SYNPL_RT_ERR_NOMEM, "queue: out of memory");
    return nullptr;
  }
  q->mode = mode;
  q->capacity = capacity;
  q->descBytes = descriptor_bytes;
  uint32_t header = mode == SYNPL_RT_QUEUE_MPMC ? sizeof(uint64_t) : 0;
  q->stride = (header + descriptor_bytes + 7u) & ~7u;
  uint64_t bytes = uint64_t(q->stride) * capacity;
  q->slots = static_cast<uint8_t *>(alignedAlloc(bytes));
  if (!q->slots) {
    delete q;
    fail(SYNPL_RT_ERR_NOMEM, "queue: cannot allocate %llu bytes",
         (unsigned long long)bytes);
    return nullptr;
  }
  std::memset(q->slots, 0, bytes);
  if (mode == SYNPL_RT_QUEUE_MPMC)
    for (uint64_t i = 0; i < capacity; ++i)
      new (q->slot(i)) std::atomic<uint64_t>(i);
  return q;
}

void synpl_rt_queue_destroy(synpl_rt_queue *queue) {
  if (!queue)
    return;
  alignedFree(queue->slots);
  delete queue;
}

int32_t synpl_rt_queue_try_push(synpl_rt_queue *queue, const void *desc) {
  if (queue->closed.load(std::memory_order_relaxed) || !tryPush(queue, desc))
    return 0;
  wakeWaiters(queue);
  return 1;
}

int32_t synpl_rt_queue_try_pop(synpl_rt_queue *queue, void *desc) {
  if (!tryPop(queue, desc))
    return 0;
  wakeWaiters(queue);
  return 1;
}

int32_t synpl_rt_queue_push(synpl_rt_queue *queue, const void *desc) {
  return blockingOp(
      queue, /*isPush=*/true, [&] { return tryPush(queue, desc); },
      [&] { return canPush(queue); });
}

int32_t synpl_rt_queue_pop(synpl_rt_queue *queue, void *desc) {
  return blockingOp(
      queue, /*isPush=*/false, [&] { return tryPop(queue, desc); },
      [&] { return canPop(queue); });
}

void synpl_rt_queue_close(synpl_rt_queue *queue) {
  queue->closed.store(true, std::memory_order_seq_cst);
  std::lock_guard<std::mutex> lock(queue->mutex);
  queue->cv.notify_all();
}

uint32_t synpl_rt_queue_size(const synpl_rt_queue *queue) {
  uint64_t in, out;
  if (queue->mode == SYNPL_RT_QUEUE_MPMC) {
    out = queue->cons.dequeue.load(std::memory_order_acquire);
    in = queue->prod.enqueue.load(std::memory_order_acquire);
  } else {
    out = queue->cons.head.load(std::memory_order_acquire);
    in = queue->prod.tail.load(std::memory_order_acquire);
  }
  if (in <= out)
    return 0;
  return in - out > queue->capacity ? queue->capacity : uint32_t(in - out);
}

uint32_t synpl_rt_queue_capacity(const synpl_rt_queue *queue) {
  return queue->capacity;
}

} // extern "C"
