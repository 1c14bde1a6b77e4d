/* RuntimeCAbiTest.c - the runtime's header is C and the library links alone.
 *
 * Built as C11 and linked against SynplRuntime only (no MLIR, no LLVM; the
 * C++ driver adds libstdc++): what a compiled training program does. Exits non-zero on the
 * first failed check. */
#include "synpl/Runtime/Runtime.h"

#include <stdio.h>
#include <string.h>

static int failures = 0;
#define EXPECT(cond)                                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__,  \
              __LINE__, #cond, synpl_rt_last_error());                         \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

static void square(void *ctx, int64_t begin, int64_t end) {
  int64_t *out = (int64_t *)ctx;
  for (int64_t i = begin; i < end; ++i)
    out[i] = i * i;
}

int main(void) {
  synpl_rt_region *arena = synpl_rt_region_create_arena(4096);
  EXPECT(arena != NULL);
  int64_t *squares = (int64_t *)synpl_rt_region_alloc(arena, 100 * sizeof(int64_t));
  EXPECT(squares != NULL && ((uintptr_t)squares & 63) == 0);

  synpl_rt_workers *workers = synpl_rt_workers_create(2);
  EXPECT(workers != NULL);
  synpl_rt_parallel_for(workers, 100, square, squares);
  int ok = 1;
  for (int64_t i = 0; i < 100; ++i)
    ok &= squares[i] == i * i;
  EXPECT(ok);
  synpl_rt_workers_destroy(workers);

  synpl_rt_queue *q = synpl_rt_queue_create(2, sizeof(uint64_t), SYNPL_RT_QUEUE_SPSC);
  uint64_t in = 42, out = 0;
  EXPECT(synpl_rt_queue_push(q, &in) == SYNPL_RT_OK);
  EXPECT(synpl_rt_queue_pop(q, &out) == SYNPL_RT_OK && out == 42);
  synpl_rt_queue_destroy(q);

  synpl_rt_idx idx;
  EXPECT(synpl_rt_idx_load("/nonexistent/t10k-labels-idx1-ubyte.gz", &idx) ==
         SYNPL_RT_ERR_IO);
  EXPECT(strcmp(synpl_rt_last_error(), "/nonexistent/t10k-labels-idx1-ubyte.gz: "
                                       "cannot open: No such file or directory") == 0);
  synpl_rt_region_destroy(arena);
  if (failures == 0)
    printf("runtime C ABI: ok\n");
  return failures == 0 ? 0 : 1;
}
