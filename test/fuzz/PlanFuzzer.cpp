//===- PlanFuzzer.cpp - The runtime's plan-table reader -------------------===//
//
// Each input is a compiled program's metadata (synpl/Runtime/PlanFormat.h):
// a little-endian word W, then W int64 words of table, then the string
// blob (make_seeds.py cuts the seeds out of compiled examples). The harness
// hands them to the executor's reader as a compiled program's descriptor
// would, with one (never called) function per kernel and program record
// the header counts. Both arrays are allocated to their exact size, so any
// read past the table, the blob or the function arrays is a sanitizer
// report. When the reader accepts the tables, every string a record names
// is read to its NUL: the reader's promise is that each one is terminated
// inside the blob.
//
//===----------------------------------------------------------------------===//
#include "Runtime/ExecutorImpl.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

using namespace synpl::rt::exec;

namespace {
void neverCalled(void *const *, int64_t, int64_t) { __builtin_trap(); }

/// The header's count of section `s`, or 0 when the header or the count is
/// not one a compiled program could have.
int64_t count(const std::vector<int64_t> &table, int s) {
  if (table.size() < SYNPL_PLAN_HEADER_WORDS)
    return 0;
  const auto *h = reinterpret_cast<const synpl_plan_header *>(table.data());
  int64_t n = h->section[s][1];
  return n >= 0 && n <= 4096 ? n : 0;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 8)
    return 0;
  uint64_t words;
  std::memcpy(&words, data, 8);
  words = std::min<uint64_t>(words, (size - 8) / 8);
  std::vector<int64_t> table(words);
  if (words)
    std::memcpy(table.data(), data + 8, words * 8);
  size_t stringBytes = size - 8 - words * 8;
  std::unique_ptr<char[]> strings(new char[stringBytes ? stringBytes : 1]);
  std::memcpy(strings.get(), data + 8 + words * 8, stringBytes);

  int64_t kernels = count(table, SYNPL_PLAN_KERNELS),
          programs = count(table, SYNPL_PLAN_PROGRAMS);
  std::unique_ptr<void *[]> kernelFns(new void *[kernels ? kernels : 1]),
      programFns(new void *[programs ? programs : 1]);
  for (int64_t i = 0; i < kernels; ++i)
    kernelFns[i] = reinterpret_cast<void *>(&neverCalled);
  for (int64_t i = 0; i < programs; ++i)
    programFns[i] = reinterpret_cast<void *>(&neverCalled);

  synpl_plan_desc desc{};
  desc.table = table.data() ? table.data() : reinterpret_cast<const int64_t *>(data);
  desc.table_words = (int64_t)words;
  desc.strings = strings.get();
  desc.strings_size = (int64_t)stringBytes;
  desc.kernels = kernelFns.get();
  desc.num_kernels = kernels;
  desc.programs = programFns.get();
  desc.num_programs = programs;

  Plan p{};
  if (loadPlan(&desc, p) != SYNPL_RT_OK)
    return 0;
  size_t total = std::strlen(p.str(p.header->name));
  auto names = [&](const auto &section) {
    for (int64_t i = 0; i < section.size; ++i)
      total += std::strlen(p.str(section[i].name));
  };
  names(p.pools);
  names(p.slots);
  names(p.kernels);
  names(p.transfers);
  names(p.streams);
  names(p.events);
  names(p.ingests);
  names(p.reports);
  names(p.regions);
  names(p.programs);
  for (int64_t i = 0; i < p.ingestFields.size; ++i)
    total += std::strlen(p.str(p.ingestFields[i].path));
  for (int64_t i = 0; i < p.inits.size; ++i)
    if (p.inits[i].path >= 0)
      total += std::strlen(p.str(p.inits[i].path));
  for (int64_t i = 0; i < p.kernels.size; ++i)
    if (p.kernels[i].entry >= 0)
      total += std::strlen(p.str(p.kernels[i].entry));
  if (p.header->evaluate >= 0)
    total += std::strlen(p.str(p.header->evaluate));
  [[maybe_unused]] static volatile size_t sink;
  sink = total; // keeps the reads
  return 0;
}
