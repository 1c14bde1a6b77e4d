/*===- PlanFormat.h - The metadata tables of a compiled program ---*- C -*-===*\
 *
 * The spec's "Binary Structure": a compiled program is one object holding
 * the control code, the kernels and the metadata the runtime binds them
 * with (memory layout table, stream and schedule descriptors). The
 * compiler (--synpl-convert-l0-plan-to-llvm) writes these tables as
 * read-only globals; the runtime's executor (synpl_rt_main) reads them.
 *
 * Layout: `synpl_plan_desc` points at (and gives the size of)
 *  - `table`: an array of int64_t words. Word 0..SYNPL_PLAN_HEADER_WORDS-1
 *    are the header (magic, version, name, pipeline depth, the training
 *    loop's defaults, then one (offset, count) pair per section, offsets in
 *    words from the start of the table);
 *    each section is an array of the fixed-size records below (every field
 *    an int64_t, so a section can be read as an array of its struct).
 *  - `strings`: NUL-terminated names and paths; records hold byte offsets.
 *    The blob ends with a NUL, so every offset inside it names a string.
 *  - `kernels`: one function pointer per kernel record, in record order,
 *    with the ABI void(void *const *args, i64 begin, i64 end): args holds
 *    the kernel's num_args buffer pointers (inputs, then outputs) and
 *    [begin, end) is a chunk of its split range. A CUDA kernel's entry is
 *    its host fallback when one was compiled (null otherwise); a fallback
 *    clamps `end` to its range, so [0, INT64_MAX) runs all of it.
 *  - `programs`: one function pointer per control program, with the ABI
 *    void(ptr region0, ...) (regions in the program record's order).
 *  - `device_ptx` / `device_cubin`: the CUDA kernels' module, as PTX text
 *    (NUL-terminated; the size does not count the NUL) and, when ptxas
 *    assembled it at compile time, as a cubin for `device_arch`; null and
 *    0 when absent. The runtime loads the cubin first and falls back to the
 *    PTX (the driver's JIT) on a GPU the cubin does not run on.
 * The compiler and the runtime share this header; the version changes
 * whenever a record does.
\*===----------------------------------------------------------------------===*/
#ifndef SYNPL_RUNTIME_PLANFORMAT_H
#define SYNPL_RUNTIME_PLANFORMAT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SYNPL_PLAN_MAGIC 0x314e414c504e5953ll /* "SYNPLAN1" little-endian */
#define SYNPL_PLAN_VERSION 8
/* The most buffers one kernel binds: the executor passes a kernel's
 * arguments in a fixed array of this many pointers (a CUDA launch's 2 KiB
 * of parameters fit the driver's 4 KiB). The L0 verifier rejects a kernel
 * with more, and the L1 -> L0 emission splits kernels to stay within it. */
#define SYNPL_PLAN_MAX_KERNEL_ARGS 256

/* Sections, in header order. */
enum synpl_plan_section {
  SYNPL_PLAN_POOLS = 0,
  SYNPL_PLAN_SLOTS,
  SYNPL_PLAN_KERNELS,
  SYNPL_PLAN_KERNEL_ARGS,
  SYNPL_PLAN_TRANSFERS,
  SYNPL_PLAN_STREAMS,
  SYNPL_PLAN_STREAM_ENTRIES,
  SYNPL_PLAN_EVENTS,
  SYNPL_PLAN_SYNCS,
  SYNPL_PLAN_INITS,
  SYNPL_PLAN_INGESTS,
  SYNPL_PLAN_INGEST_FIELDS,
  SYNPL_PLAN_REPORTS,
  SYNPL_PLAN_REGIONS,
  SYNPL_PLAN_PROGRAMS,
  SYNPL_PLAN_PROGRAM_REGIONS,
  SYNPL_PLAN_COLLECTIVES,
  SYNPL_PLAN_COLLECTIVE_SLOTS,
  SYNPL_PLAN_NUM_SECTIONS
};

typedef struct synpl_plan_header {
  int64_t magic;
  int64_t version;
  int64_t name;           /* string: the plan's (system's) name */
  int64_t pipeline_depth;
  /* The training loop (l1.schedule / l0uop.plan); the command line
   * overrides each. */
  int64_t epochs;           /* default --epochs; 0: 1 */
  int64_t checkpoint_every; /* default --checkpoint-every; 0: epoch ends only */
  int64_t evaluate;         /* string: the test split's file-name prefix
                               (replaces `train`; "none": no evaluation);
                               -1: "t10k" */
  int64_t device_arch;      /* the CUDA kernels' compute capability x 10
                               (80: sm_80); 0: the plan has no CUDA kernel */
  int64_t min_driver;       /* the cuDriverGetVersion() the kernels' PTX needs
                               (11000: CUDA 11.0); 0: no CUDA kernel */
  int64_t steps;            /* default --steps (update steps per epoch at
                               most); 0: the whole training split */
  int64_t ranks;            /* the processes the plan was placed on (data
                               parallel replicas, one per rank); 1: one
                               process. A plan with ranks > 1 runs alone or
                               under mpirun with any number of ranks: each
                               rank trains on its slice of a global batch of
                               (ranks at run time) x the ingest's batch, and
                               its collectives combine the ranks' work.
                               A plan with a sharded slot (tensor
                               parallel) runs on exactly `ranks` ranks */
  int64_t section[SYNPL_PLAN_NUM_SECTIONS][2]; /* (word offset, count) */
} synpl_plan_header;
#define SYNPL_PLAN_HEADER_FIXED_WORDS 11
#define SYNPL_PLAN_HEADER_WORDS \
  (SYNPL_PLAN_HEADER_FIXED_WORDS + 2 * SYNPL_PLAN_NUM_SECTIONS)

/* Pool kinds and memory spaces: the l0uop enums' values. */
#define SYNPL_PLAN_POOL_PERSISTENT 0
#define SYNPL_PLAN_POOL_ARENA 1
#define SYNPL_PLAN_POOL_FREELIST 2
#define SYNPL_PLAN_SPACE_HOST 0
#define SYNPL_PLAN_SPACE_DEVICE 1

typedef struct synpl_plan_pool {
  int64_t name;
  int64_t kind;
  int64_t space;
  int64_t capacity; /* bytes */
  int64_t align;
} synpl_plan_pool;

/* Element types of slots. */
#define SYNPL_PLAN_F32 0
#define SYNPL_PLAN_F64 1
#define SYNPL_PLAN_F16 2
#define SYNPL_PLAN_BF16 3
#define SYNPL_PLAN_I8 4
#define SYNPL_PLAN_U8 5
#define SYNPL_PLAN_I16 6
#define SYNPL_PLAN_I32 7
#define SYNPL_PLAN_I64 8
#define SYNPL_PLAN_I1 9
#define SYNPL_PLAN_OTHER 10

typedef struct synpl_plan_slot {
  int64_t name;
  int64_t pool;     /* index */
  int64_t offset;   /* bytes into the pool; -1: placed at run time */
  int64_t size;     /* bytes */
  int64_t element;  /* SYNPL_PLAN_F32, ... */
  int64_t elements; /* element count */
  int64_t shard_rows; /* 0: the slot holds the whole tensor. > 0 (tensor
                         parallel): the slot holds this rank's block of a
                         tensor `ranks` times larger, viewed as shard_rows
                         rows: with w = elements / shard_rows, the full
                         tensor is shard_rows x (ranks x w), row-major, and
                         rank r holds columns [r*w, (r+1)*w) of each row.
                         Inits fill it with that block of the full tensor's
                         values; checkpoints and weight files hold the
                         full tensor */
} synpl_plan_slot;

/* Where a kernel runs. */
#define SYNPL_PLAN_TARGET_HOST 0
#define SYNPL_PLAN_TARGET_CUDA 1

typedef struct synpl_plan_kernel {
  int64_t name;
  int64_t first_arg;  /* index into KERNEL_ARGS */
  int64_t num_args;   /* inputs, then outputs */
  int64_t num_inputs;
  int64_t iterations; /* the host function's split range: parallel_for over
                         [0, iterations); 0: a CUDA kernel without one */
  int64_t grain;      /* 1: the split range in several chunks per thread (load
                         balance); > 1: every chunk costs a fixed setup (a
                         tiled matmul packs its right operand), so one chunk
                         per thread, of at least `grain` iterations */
  int64_t target;     /* SYNPL_PLAN_TARGET_* */
  int64_t entry;      /* string: the PTX .entry of a CUDA kernel; -1: host */
  int64_t grid[3];    /* CUDA launch: blocks per grid */
  int64_t block[3];   /* threads per block */
  int64_t shared_mem; /* dynamic shared memory bytes per block */
} synpl_plan_kernel;

typedef struct synpl_plan_kernel_arg {
  int64_t slot;
} synpl_plan_kernel_arg;

/* Directions: the l0uop enum's values. */
#define SYNPL_PLAN_H2D 0
#define SYNPL_PLAN_D2H 1
#define SYNPL_PLAN_D2D 2
#define SYNPL_PLAN_H2H 3

typedef struct synpl_plan_transfer {
  int64_t name;
  int64_t src; /* slot */
  int64_t dst; /* slot */
  int64_t bytes;
  int64_t direction;
} synpl_plan_transfer;

typedef struct synpl_plan_stream {
  int64_t name;
  int64_t first_entry; /* index into STREAM_ENTRIES */
  int64_t num_entries;
} synpl_plan_stream;

#define SYNPL_PLAN_ENTRY_KERNEL 0
#define SYNPL_PLAN_ENTRY_TRANSFER 1
#define SYNPL_PLAN_ENTRY_COLLECTIVE 2

typedef struct synpl_plan_entry {
  int64_t kind;  /* SYNPL_PLAN_ENTRY_* */
  int64_t index; /* kernel or transfer */
} synpl_plan_entry;

typedef struct synpl_plan_event {
  int64_t name;
} synpl_plan_event;

#define SYNPL_PLAN_SYNC_RECORD 0
#define SYNPL_PLAN_SYNC_WAIT 1

typedef struct synpl_plan_sync {
  int64_t kind;   /* record: after `entry`; wait: before `entry` */
  int64_t event;  /* index */
  int64_t stream; /* index */
  int64_t entry;  /* position in the stream's entry list */
} synpl_plan_sync;

/* Init kinds: the l0uop enum's values. */
#define SYNPL_PLAN_INIT_ZEROS 0
#define SYNPL_PLAN_INIT_ONES 1
#define SYNPL_PLAN_INIT_CONSTANT 2
#define SYNPL_PLAN_INIT_KAIMING 3
#define SYNPL_PLAN_INIT_XAVIER 4
#define SYNPL_PLAN_INIT_UNIFORM 5
#define SYNPL_PLAN_INIT_NORMAL 6
#define SYNPL_PLAN_INIT_DECODE_IDX 7
/* One f32: the update steps the run will take (epochs x batches per epoch,
 * after drop_last and --steps); filled once the data is open. */
#define SYNPL_PLAN_INIT_PLANNED_STEPS 8
/* One f32: 1 while the runtime trains, 0 while it evaluates (what a tensor
 * graph computes "in training only", such as dropout's mask, reads it). */
#define SYNPL_PLAN_INIT_TRAINING_MODE 9
/* One f32: this process's rank (0 when it runs alone); a tensor-parallel
 * graph's kernels read it to take their rank's block of a tensor. */
#define SYNPL_PLAN_INIT_RANK 10

typedef struct synpl_plan_init {
  int64_t kind;
  int64_t slot;
  int64_t fan_in;  /* 0: none */
  int64_t seed;
  int64_t value;   /* constant: the f64's bits */
  int64_t path;    /* string, -1: none */
} synpl_plan_init;

#define SYNPL_PLAN_FORMAT_IDX 0
/* The bytes of a plain-text file, served as windows (Text.cpp). */
#define SYNPL_PLAN_FORMAT_TEXT 1

typedef struct synpl_plan_ingest {
  int64_t name;
  int64_t format;
  int64_t batch;
  int64_t shuffle;
  int64_t drop_last;
  int64_t seed;
  int64_t first_field; /* index into INGEST_FIELDS */
  int64_t num_fields;
  int64_t stride;      /* text: bytes between window starts (>= 1) */
  int64_t sharded;     /* 1: `batch` is one rank's slice: step i of an epoch
                          reads samples [(i N + r) batch, (i N + r + 1) batch)
                          of the epoch's order on rank r of N (every rank
                          draws the same order); 0: every rank reads the
                          whole batch */
} synpl_plan_ingest;

typedef struct synpl_plan_ingest_field {
  int64_t slot;
  int64_t path;    /* string */
  int64_t classes; /* > 0: every value must lie in [0, classes) */
  int64_t magic;   /* the IDX magic the file must have: 0x0000TTNN, TT the
                      slot's element type, NN = 1 + the sample's non-unit
                      dimensions (a [batch, 1] label slot reads a 1-D file);
                      text: 0 */
  int64_t shift;   /* text: the field's offset in the window, 0 or 1 */
} synpl_plan_ingest_field;

typedef struct synpl_plan_report {
  int64_t name; /* string: the metric */
  int64_t slot;
} synpl_plan_report;

/* Region access: the l0ctl enum's values. The program pops from `ro`
 * queues (the runtime feeds them) and pushes into `wo` queues (the runtime
 * drains them). */
#define SYNPL_PLAN_ACCESS_RO 0
#define SYNPL_PLAN_ACCESS_RW 1
#define SYNPL_PLAN_ACCESS_WO 2

typedef struct synpl_plan_region {
  int64_t name;
  int64_t access;
  int64_t size;
  int64_t align;
  int64_t queue_entry; /* descriptor bytes of a queue region; 0: not a queue */
} synpl_plan_region;

typedef struct synpl_plan_program {
  int64_t name;
  int64_t first_region; /* index into PROGRAM_REGIONS */
  int64_t num_regions;
} synpl_plan_program;

typedef struct synpl_plan_program_region {
  int64_t region;
} synpl_plan_program_region;

/* Collectives: the l0uop enums' values. A collective is a stream entry
 * across every rank of the run (the world): it starts where its stream
 * reaches it and is complete before the entry at `complete_before` (an
 * index into STREAM_ENTRIES, later in the same stream; -1: before the
 * next entry). No entry in between touches its slots (the L0 verifier's
 * L0.3). Slots: all_reduce and broadcast work in place on each listed
 * slot (a bucket); all_gather and reduce_scatter take (source,
 * destination) pairs, the destination (gather) or the source (scatter)
 * `ranks at run time` times the other's elements. */
#define SYNPL_PLAN_ALL_REDUCE 0
#define SYNPL_PLAN_ALL_GATHER 1
#define SYNPL_PLAN_REDUCE_SCATTER 2
#define SYNPL_PLAN_BROADCAST 3
#define SYNPL_PLAN_REDUCE_SUM 0
#define SYNPL_PLAN_REDUCE_MEAN 1
#define SYNPL_PLAN_REDUCE_MAX 2
#define SYNPL_PLAN_REDUCE_MIN 3

typedef struct synpl_plan_collective {
  int64_t name;
  int64_t kind;            /* SYNPL_PLAN_ALL_REDUCE, ... */
  int64_t reduce;          /* SYNPL_PLAN_REDUCE_*; all_reduce, reduce_scatter */
  int64_t root;            /* broadcast: the rank that sends; else 0 */
  int64_t first_slot;      /* index into COLLECTIVE_SLOTS */
  int64_t num_slots;
  int64_t complete_before; /* entry index; -1: blocking */
} synpl_plan_collective;

typedef struct synpl_plan_collective_slot {
  int64_t slot;
} synpl_plan_collective_slot;

typedef struct synpl_plan_desc {
  const int64_t *table;
  int64_t table_words;      /* words in `table`, the header's included */
  const char *strings;
  int64_t strings_size;     /* bytes in `strings`; its last byte is a NUL */
  void *const *kernels;
  int64_t num_kernels;      /* entries in `kernels`: one per kernel record */
  void *const *programs;
  int64_t num_programs;     /* entries in `programs`: one per program record */
  const char *device_ptx;   /* the CUDA kernels' PTX, NUL-terminated; null */
  int64_t device_ptx_size;  /* bytes, not counting the NUL */
  const void *device_cubin; /* ptxas's cubin of that PTX; null */
  int64_t device_cubin_size;
} synpl_plan_desc;

/* The executor: parses the command line (--epochs N, --data DIR, ...),
 * binds the plan and trains. Returns the process exit status. */
int synpl_rt_main(int argc, char **argv, const synpl_plan_desc *plan);

/* A device the executor trains on in place of the plan's kernels: a
 * machine (or a simulator of one) that runs the whole step itself. The
 * plan then holds only the host's side of the program (pools, slots,
 * inits, ingests, reports and one stream with no entries); the executor
 * does everything else as for a compiled program (the command line, the
 * data and its order, inits, the epoch loop, evaluation, reports,
 * checkpoints, non-finite checks) and talks to the device through these
 * calls, one thread at a time. Each returns SYNPL_RT_OK or a status, the
 * message then from last_error. */
typedef struct synpl_rt_device {
  void *ctx;
  const char *name; /* in messages: "the ipu21 simulator" */
  /* Host -> device: the `bytes` bytes of slot `slot` (an init's fill, a
   * restored checkpoint's state, a batch an ingest gathered for the next
   * step, a runtime-filled scalar such as planned_steps). */
  int32_t (*write_slot)(void *ctx, int64_t slot, const void *src, uint64_t bytes);
  /* Device -> host: slot `slot`'s current bytes (a report after a step,
   * the state for a checkpoint, --save-weights or a finite check). */
  int32_t (*read_slot)(void *ctx, int64_t slot, void *dst, uint64_t bytes);
  /* One step on the batches written since the last: a training step
   * (train != 0), or an evaluation step that leaves the state as it is. */
  int32_t (*step)(void *ctx, int32_t train);
  /* Why the last call failed (one line). */
  const char *(*last_error)(void *ctx);
} synpl_rt_device;

/* synpl_rt_main on `device`: the plan must have no kernels. */
int synpl_rt_main_device(int argc, char **argv, const synpl_plan_desc *plan,
                         const synpl_rt_device *device);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SYNPL_RUNTIME_PLANFORMAT_H */
