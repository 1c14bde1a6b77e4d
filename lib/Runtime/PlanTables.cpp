//===- PlanTables.cpp - Binding and checking a compiled plan's tables ------===//
//
// The executor's first step: the metadata tables a compiled program embeds
// (synpl/Runtime/PlanFormat.h) bound into typed sections, and every record
// checked before anything runs: indices in range, sizes that fit their
// pools, kernels with a function or a CUDA launch. A corrupt table is a
// one-line error naming what is wrong, never a crash.
//
//===----------------------------------------------------------------------===//
#include "ExecutorImpl.h"
#include "Internal.h"
#include "synpl/Runtime/PlanFormat.h"

#include <cinttypes>
#include <cstring>

using namespace synpl::rt;

namespace synpl::rt::exec {

int32_t badTable(const char *what) {
  return fail(SYNPL_RT_ERR_FORMAT, "the program's plan tables are corrupt: %s",
              what);
}

/// Binds section `s` of the header: its records must lie inside the table
/// (`words` words), after the header.
template <typename T>
int32_t bindSection(const int64_t *table, int64_t words,
                    const synpl_plan_header *h, int s, Section<T> &out) {
  constexpr int64_t recordWords = sizeof(T) / sizeof(int64_t);
  int64_t off = h->section[s][0], count = h->section[s][1];
  if (off < SYNPL_PLAN_HEADER_WORDS || off > words || count < 0 ||
      count > (words - off) / recordWords)
    return badTable("section bounds");
  out.data = reinterpret_cast<const T *>(table + off);
  out.size = count;
  return SYNPL_RT_OK;
}

namespace {

/// Every string a record names lies inside the blob (-1 where the format
/// allows "none").
int32_t checkStrings(const Plan &p) {
  auto ok = [&](int64_t off) { return off >= 0 && off < p.stringsBytes; };
  auto okOrNone = [&](int64_t off) { return off == -1 || ok(off); };
  auto named = [&](const auto &section, const char *what) {
    for (int64_t i = 0; i < section.size; ++i)
      if (!ok(section[i].name))
        return badTable(what);
    return (int32_t)SYNPL_RT_OK;
  };
  if (!ok(p.header->name) || !okOrNone(p.header->evaluate))
    return badTable("a header string outside the string blob");
  // The first failing section sets the message.
  if (named(p.pools, "a pool name outside the string blob") ||
      named(p.slots, "a slot name outside the string blob") ||
      named(p.kernels, "a kernel name outside the string blob") ||
      named(p.transfers, "a transfer name outside the string blob") ||
      named(p.streams, "a stream name outside the string blob") ||
      named(p.events, "an event name outside the string blob") ||
      named(p.ingests, "an ingest name outside the string blob") ||
      named(p.reports, "a metric name outside the string blob") ||
      named(p.regions, "a region name outside the string blob") ||
      named(p.programs, "a program name outside the string blob") ||
      named(p.collectives, "a collective name outside the string blob"))
    return SYNPL_RT_ERR_FORMAT;
  for (int64_t i = 0; i < p.kernels.size; ++i)
    if (!okOrNone(p.kernels[i].entry))
      return badTable("a CUDA entry name outside the string blob");
  for (int64_t i = 0; i < p.inits.size; ++i)
    if (!okOrNone(p.inits[i].path))
      return badTable("an init's path outside the string blob");
  for (int64_t i = 0; i < p.ingestFields.size; ++i)
    if (!ok(p.ingestFields[i].path))
      return badTable("an ingest field's path outside the string blob");
  return SYNPL_RT_OK;
}

/// [first, first + count) lies inside [0, size), without overflow.
bool inRange(int64_t first, int64_t count, int64_t size) {
  return first >= 0 && count >= 0 && first <= size && count <= size - first;
}

bool powerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/// A split slot's record (shard_rows > 0, PlanFormat.h), after the slot's
/// other fields: a plan of several ranks, whole rows of a size the runtime
/// knows, a full tensor whose bytes fit an int64_t. The messages name the
/// slot: a bad split is the placement's, to be found in the plan listing.
int32_t checkShard(const Plan &p, const synpl_plan_slot &s) {
  const char *name = p.str(s.name);
  if (s.shard_rows < 0)
    return fail(SYNPL_RT_ERR_FORMAT,
                "the program's plan tables are corrupt: slot %s has shard_rows %" PRId64
                ", below 0",
                name, s.shard_rows);
  if (s.shard_rows == 0)
    return SYNPL_RT_OK;
  if (p.header->ranks < 2)
    return fail(SYNPL_RT_ERR_FORMAT,
                "the program's plan tables are corrupt: slot %s is split across ranks "
                "(shard_rows %" PRId64 ") in a plan placed on one process (header ranks 1)",
                name, s.shard_rows);
  if (s.elements == 0 || s.elements % s.shard_rows != 0)
    return fail(SYNPL_RT_ERR_FORMAT,
                "the program's plan tables are corrupt: split slot %s holds %" PRId64
                " elements, not a positive multiple of its shard_rows %" PRId64,
                name, s.elements, s.shard_rows);
  if (s.element == SYNPL_PLAN_OTHER)
    return fail(SYNPL_RT_ERR_FORMAT,
                "the program's plan tables are corrupt: split slot %s has no element type "
                "the runtime knows the size of",
                name);
  if (s.elements * elementBytes(s.element) > INT64_MAX / p.header->ranks)
    return fail(SYNPL_RT_ERR_FORMAT,
                "the program's plan tables are corrupt: split slot %s's full tensor (%" PRId64
                " ranks x %" PRId64 " elements) is too large",
                name, p.header->ranks, s.elements);
  return SYNPL_RT_OK;
}

/// The collectives (after the slots and the stream entries): kind and
/// reduction known, slots in range (pairs for all_gather and
/// reduce_scatter, of one element type, reducible ones where reduced), a
/// broadcast's root among the planned ranks, and a complete_before that is
/// -1 or a later entry of the stream of each entry that names it.
int32_t checkCollectives(const Plan &p) {
  auto in = [](int64_t i, int64_t n) { return i >= 0 && i < n; };
  for (int64_t c = 0; c < p.collectives.size; ++c) {
    const synpl_plan_collective &col = p.collectives[c];
    if (!in(col.kind, SYNPL_PLAN_BROADCAST + 1))
      return badTable("a collective of an unknown kind");
    if (!in(col.reduce, SYNPL_PLAN_REDUCE_MIN + 1))
      return badTable("a collective with an unknown reduction");
    bool pairs = col.kind == SYNPL_PLAN_ALL_GATHER || col.kind == SYNPL_PLAN_REDUCE_SCATTER;
    bool reduces = col.kind == SYNPL_PLAN_ALL_REDUCE || col.kind == SYNPL_PLAN_REDUCE_SCATTER;
    if (!inRange(col.first_slot, col.num_slots, p.collectiveSlots.size) || col.num_slots < 1)
      return badTable("a collective's slots outside COLLECTIVE_SLOTS");
    if (pairs && col.num_slots % 2)
      return badTable("an all_gather or reduce_scatter whose slots are not (source, "
                      "destination) pairs (an odd count)");
    if (col.kind == SYNPL_PLAN_BROADCAST ? !in(col.root, p.header->ranks) : col.root != 0)
      return badTable("a collective's root outside the planned ranks");
    int64_t element = -1;
    for (int64_t i = 0; i < col.num_slots; ++i) {
      int64_t slot = p.collectiveSlots[col.first_slot + i].slot;
      if (!in(slot, p.slots.size))
        return badTable("a collective slot");
      const synpl_plan_slot &s = p.slots[slot];
      if (element >= 0 && s.element != element)
        return badTable("a collective's slots of different element types");
      element = s.element;
      if (reduces && s.element != SYNPL_PLAN_F32 && s.element != SYNPL_PLAN_F64 &&
          s.element != SYNPL_PLAN_I32 && s.element != SYNPL_PLAN_I64)
        return badTable("an all_reduce or reduce_scatter of a slot that is not f32, f64, "
                        "i32 or i64");
    }
  }
  // complete_before lies after every entry that names the collective, in
  // that entry's stream (so a collective that completes later is named by
  // one stream only).
  for (int64_t s = 0; s < p.streams.size; ++s) {
    const synpl_plan_stream &sr = p.streams[s];
    int64_t end = sr.first_entry + sr.num_entries;
    for (int64_t e = sr.first_entry; e < end; ++e) {
      const synpl_plan_entry &en = p.entries[e];
      if (en.kind != SYNPL_PLAN_ENTRY_COLLECTIVE)
        continue;
      int64_t before = p.collectives[en.index].complete_before;
      if (before != -1 && !(before > e && before < end))
        return badTable("a collective's complete_before that is not a later entry of its "
                        "stream");
    }
  }
  return SYNPL_RT_OK;
}

} // namespace

/// Reads and checks the tables: every section inside the table, every index
/// in range, every string offset inside the string blob (which ends with a
/// NUL, so each names a terminated string), sizes and offsets that fit
/// their pools without overflow, one function per kernel and program.
int32_t loadPlan(const synpl_plan_desc *desc, Plan &p) {
  if (!desc || !desc->table)
    return badTable("missing descriptor");
  // The magic and the version first: in every version of the format the
  // descriptor starts with the table and the table with these two words,
  // so a program built for another runtime is told so before the
  // descriptor's later fields, whose layout may differ, are read. (Format
  // 5 kept the string blob's pointer where `table_words` is now: read as a
  // number it is never below 2.)
  if (desc->table_words < 2)
    return badTable("a table shorter than its header");
  const auto *h = reinterpret_cast<const synpl_plan_header *>(desc->table);
  if (h->magic != SYNPL_PLAN_MAGIC)
    return badTable("bad magic");
  if (h->version != SYNPL_PLAN_VERSION)
    return fail(SYNPL_RT_ERR_FORMAT,
                "the program's plan tables have version %" PRId64
                ", this runtime reads version %d (relink with a matching "
                "runtime)",
                h->version, SYNPL_PLAN_VERSION);
  if (!desc->strings || !desc->kernels || !desc->programs)
    return badTable("missing descriptor");
  if (desc->table_words < SYNPL_PLAN_HEADER_WORDS)
    return badTable("a table shorter than its header");
  if (desc->strings_size < 1 || desc->strings[desc->strings_size - 1] != '\0')
    return badTable("a string blob that does not end with a NUL");
  p.desc = desc;
  p.header = h;
  p.strings = desc->strings;
  p.stringsBytes = desc->strings_size;
  const int64_t *t = desc->table;
  const int64_t w = desc->table_words;
  int32_t st = SYNPL_RT_OK;
  st |= bindSection(t, w, h, SYNPL_PLAN_POOLS, p.pools);
  st |= bindSection(t, w, h, SYNPL_PLAN_SLOTS, p.slots);
  st |= bindSection(t, w, h, SYNPL_PLAN_KERNELS, p.kernels);
  st |= bindSection(t, w, h, SYNPL_PLAN_KERNEL_ARGS, p.kernelArgs);
  st |= bindSection(t, w, h, SYNPL_PLAN_TRANSFERS, p.transfers);
  st |= bindSection(t, w, h, SYNPL_PLAN_STREAMS, p.streams);
  st |= bindSection(t, w, h, SYNPL_PLAN_STREAM_ENTRIES, p.entries);
  st |= bindSection(t, w, h, SYNPL_PLAN_EVENTS, p.events);
  st |= bindSection(t, w, h, SYNPL_PLAN_SYNCS, p.syncs);
  st |= bindSection(t, w, h, SYNPL_PLAN_INITS, p.inits);
  st |= bindSection(t, w, h, SYNPL_PLAN_INGESTS, p.ingests);
  st |= bindSection(t, w, h, SYNPL_PLAN_INGEST_FIELDS, p.ingestFields);
  st |= bindSection(t, w, h, SYNPL_PLAN_REPORTS, p.reports);
  st |= bindSection(t, w, h, SYNPL_PLAN_REGIONS, p.regions);
  st |= bindSection(t, w, h, SYNPL_PLAN_PROGRAMS, p.programs);
  st |= bindSection(t, w, h, SYNPL_PLAN_PROGRAM_REGIONS, p.programRegions);
  st |= bindSection(t, w, h, SYNPL_PLAN_COLLECTIVES, p.collectives);
  st |= bindSection(t, w, h, SYNPL_PLAN_COLLECTIVE_SLOTS, p.collectiveSlots);
  if (st != SYNPL_RT_OK)
    return SYNPL_RT_ERR_FORMAT;
  if (p.kernels.size != desc->num_kernels)
    return badTable("kernel functions for a different number of kernels");
  if (p.programs.size != desc->num_programs)
    return badTable("program functions for a different number of programs");
  if (int32_t st = checkStrings(p))
    return st;
  auto in = [](int64_t i, int64_t n) { return i >= 0 && i < n; };
  if (h->epochs < 0 || h->checkpoint_every < 0 || h->steps < 0 ||
      h->device_arch < 0 || h->min_driver < 0)
    return badTable("a negative training-loop default");
  if (h->ranks < 1 || h->ranks > INT32_MAX)
    return badTable("a header's ranks outside [1, 2^31)");
  for (int64_t i = 0; i < p.pools.size; ++i) {
    const synpl_plan_pool &pool = p.pools[i];
    if (pool.capacity < 0 || !powerOfTwo(pool.align) ||
        !in(pool.kind, SYNPL_PLAN_POOL_FREELIST + 1) ||
        !in(pool.space, SYNPL_PLAN_SPACE_DEVICE + 1))
      return badTable("pool");
  }
  for (int64_t i = 0; i < p.slots.size; ++i) {
    const synpl_plan_slot &s = p.slots[i];
    if (!in(s.pool, p.pools.size) || s.size <= 0 || s.offset < -1)
      return badTable("slot pool");
    if (!in(s.element, SYNPL_PLAN_OTHER + 1) || s.elements < 0 ||
        s.elements > s.size / elementBytes(s.element))
      return badTable("a slot's elements that do not fit its bytes");
    const synpl_plan_pool &pool = p.pools[s.pool];
    if (s.offset >= 0 && !inRange(s.offset, s.size, pool.capacity))
      return badTable("slot outside its pool");
    if (s.offset < 0 && pool.kind != SYNPL_PLAN_POOL_FREELIST)
      return badTable("unplaced slot outside a freelist pool");
    if (int32_t st = checkShard(p, s))
      return st;
  }
  bool hasCuda = false;
  for (int64_t k = 0; k < p.kernels.size; ++k) {
    const synpl_plan_kernel &kr = p.kernels[k];
    bool cuda = kr.target == SYNPL_PLAN_TARGET_CUDA;
    hasCuda |= cuda;
    if (!inRange(kr.first_arg, kr.num_args, p.kernelArgs.size) ||
        kr.num_args > SYNPL_PLAN_MAX_KERNEL_ARGS || kr.num_inputs < 0 ||
        kr.num_inputs > kr.num_args ||
        (kr.target != SYNPL_PLAN_TARGET_HOST && !cuda) || kr.grain < 1)
      return badTable("kernel");
    if (!cuda && (kr.iterations < 1 || !desc->kernels[k]))
      return badTable("host kernel without a function");
    if (cuda && (kr.entry < 0 || kr.shared_mem < 0 || kr.grid[0] < 1 ||
                 kr.grid[1] < 1 || kr.grid[2] < 1 || kr.block[0] < 1 ||
                 kr.block[1] < 1 || kr.block[2] < 1 ||
                 (desc->kernels[k] && kr.iterations < 1)))
      return badTable("CUDA kernel launch");
    for (int64_t a = 0; a < kr.num_args; ++a)
      if (!in(p.kernelArgs[kr.first_arg + a].slot, p.slots.size))
        return badTable("kernel argument");
  }
  for (int64_t i = 0; i < p.transfers.size; ++i) {
    const synpl_plan_transfer &tx = p.transfers[i];
    if (!in(tx.src, p.slots.size) || !in(tx.dst, p.slots.size) || tx.bytes < 0 ||
        !in(tx.direction, SYNPL_PLAN_H2H + 1) || tx.bytes > p.slots[tx.src].size || tx.bytes > p.slots[tx.dst].size)
      return badTable("transfer");
  }
  for (int64_t s = 0; s < p.streams.size; ++s) {
    const synpl_plan_stream &sr = p.streams[s];
    if (!inRange(sr.first_entry, sr.num_entries, p.entries.size))
      return badTable("stream");
  }
  for (int64_t e = 0; e < p.entries.size; ++e) {
    const synpl_plan_entry &en = p.entries[e];
    if (!in(en.kind, SYNPL_PLAN_ENTRY_COLLECTIVE + 1) ||
        !in(en.index, en.kind == SYNPL_PLAN_ENTRY_KERNEL     ? p.kernels.size
                      : en.kind == SYNPL_PLAN_ENTRY_TRANSFER ? p.transfers.size
                                                             : p.collectives.size))
      return badTable("stream entry");
  }
  if (int32_t st = checkCollectives(p))
    return st;
  for (int64_t i = 0; i < p.inits.size; ++i) {
    if (!in(p.inits[i].slot, p.slots.size) || !in(p.inits[i].kind, SYNPL_PLAN_INIT_RANK + 1))
      return badTable("init");
    // The runtime's scalars: one f32 of this process (a split slot is a
    // block of a larger tensor).
    const synpl_plan_slot &s = p.slots[p.inits[i].slot];
    int64_t kind = p.inits[i].kind;
    if ((kind == SYNPL_PLAN_INIT_PLANNED_STEPS || kind == SYNPL_PLAN_INIT_TRAINING_MODE ||
         kind == SYNPL_PLAN_INIT_RANK) &&
        (s.element != SYNPL_PLAN_F32 || s.elements != 1 || s.size < 4 || s.shard_rows != 0))
      return badTable(kind == SYNPL_PLAN_INIT_PLANNED_STEPS
                          ? "planned_steps init of a slot that is not one f32"
                      : kind == SYNPL_PLAN_INIT_TRAINING_MODE
                          ? "training_mode init of a slot that is not one f32"
                          : "rank init of a slot that is not one f32");
  }
  for (int64_t i = 0; i < p.ingests.size; ++i) {
    const synpl_plan_ingest &g = p.ingests[i];
    if (!inRange(g.first_field, g.num_fields, p.ingestFields.size) ||
        g.num_fields < 1 || g.batch < 1 ||
        (g.format != SYNPL_PLAN_FORMAT_IDX && g.format != SYNPL_PLAN_FORMAT_TEXT) ||
        g.stride < 1)
      return badTable("ingest");
    if (g.sharded != 0 && g.sharded != 1)
      return badTable("an ingest's sharded flag that is not 0 or 1");
  }
  for (int64_t i = 0; i < p.ingestFields.size; ++i)
    if (!in(p.ingestFields[i].slot, p.slots.size) || p.ingestFields[i].shift < 0 ||
        p.ingestFields[i].shift > 1)
      return badTable("ingest field");
  for (int64_t i = 0; i < p.reports.size; ++i)
    if (!in(p.reports[i].slot, p.slots.size) ||
        p.slots[p.reports[i].slot].element != SYNPL_PLAN_F32)
      return badTable("report");
  for (int64_t i = 0; i < p.regions.size; ++i) {
    const synpl_plan_region &r = p.regions[i];
    if (r.size < 0 || !powerOfTwo(r.align) || !in(r.access, SYNPL_PLAN_ACCESS_WO + 1) ||
        r.queue_entry < 0)
      return badTable("region");
  }
  for (int64_t i = 0; i < p.programs.size; ++i) {
    const synpl_plan_program &pr = p.programs[i];
    if (!inRange(pr.first_region, pr.num_regions, p.programRegions.size) ||
        pr.num_regions > 8 || !desc->programs[i])
      return badTable("program");
    for (int64_t r = 0; r < pr.num_regions; ++r)
      if (!in(p.programRegions[pr.first_region + r].region, p.regions.size))
        return badTable("program region");
  }
  if (p.header->pipeline_depth < 1 || p.streams.size < 1)
    return badTable("no stream");
  if (hasCuda != (p.header->device_arch > 0) ||
      (hasCuda && !desc->device_ptx && !desc->device_cubin))
    return badTable("CUDA kernels without their module");
  for (int64_t i = 0; i < p.syncs.size; ++i) {
    const synpl_plan_sync &sy = p.syncs[i];
    if (!in(sy.kind, SYNPL_PLAN_SYNC_WAIT + 1) || !in(sy.event, p.events.size) ||
        !in(sy.stream, p.streams.size) ||
        !in(sy.entry, p.streams[sy.stream].num_entries))
      return badTable("sync");
  }
  return SYNPL_RT_OK;
}

} // namespace synpl::rt::exec

int64_t synpl::rt::elementBytes(int64_t element) {
  switch (element) {
  case SYNPL_PLAN_F64:
  case SYNPL_PLAN_I64:
    return 8;
  case SYNPL_PLAN_F32:
  case SYNPL_PLAN_I32:
    return 4;
  case SYNPL_PLAN_F16:
  case SYNPL_PLAN_BF16:
  case SYNPL_PLAN_I16:
    return 2;
  default:
    return 1;
  }
}

