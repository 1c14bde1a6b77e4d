//===- TextFuzzer.cpp - The runtime's plain-text decoder ------------------===//
//
// Each input is a text file behind three bytes that choose the ingest: the
// window N (1..64 bytes), the stride between window starts (1..16) and the
// batch (1..8). Both splits of the file are decoded as a `format "text"`
// ingest with a field at shift 0 and one at shift 1 (the model's inputs
// and the next bytes), and every batch of each split, the padded last one
// included, is gathered into slots of exactly the ingest's size: a window
// read past the file's bytes or a batch written past its slot is a
// sanitizer report. A refusal (a split shorter than one window) sets the
// runtime's error.
//
//===----------------------------------------------------------------------===//
#include "Runtime/ExecutorImpl.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

using namespace synpl::rt::exec;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string path = [] {
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    return std::string(dir) + "/synpl-fuzz-text-" + std::to_string(getpid()) + ".txt";
  }();
  if (size < 3)
    return 0;
  const int64_t window = data[0] % 64 + 1, stride = data[1] % 16 + 1,
                batch = data[2] % 8 + 1;
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    return 0;
  std::fwrite(data + 3, 1, size - 3, f);
  std::fclose(f);

  // The tables of one text ingest: two byte slots of `batch` windows.
  static const char strings[] = "text\0inputs\0targets";
  synpl_plan_pool pool{0, SYNPL_PLAN_POOL_ARENA, SYNPL_PLAN_SPACE_HOST, 2 * window * batch, 64};
  synpl_plan_slot slots[2] = {
      {5, 0, 0, window * batch, SYNPL_PLAN_U8, window * batch, 0},
      {12, 0, window * batch, window * batch, SYNPL_PLAN_U8, window * batch, 0}};
  synpl_plan_ingest_field fields[2] = {{0, 0, 0, 0, 0}, {1, 0, 0, 0, 1}};
  synpl_plan_ingest ingest{0, SYNPL_PLAN_FORMAT_TEXT, batch, 1, 0, 7, 0, 2, stride, /*sharded=*/0};
  Plan p{};
  p.strings = strings;
  p.stringsBytes = sizeof strings;
  p.pools = {&pool, 1};
  p.slots = {slots, 2};
  p.ingestFields = {fields, 2};
  p.ingests = {&ingest, 1};

  for (bool validation : {false, true}) {
    Split split;
    if (openTextSplit(p, ingest, path, validation, split) != SYNPL_RT_OK)
      continue;
    // Exactly the slots' bytes, so that ASan sees a write past either.
    std::vector<std::unique_ptr<uint8_t[]>> buffers;
    std::vector<uint8_t *> addr;
    for (int s = 0; s < 2; ++s) {
      buffers.emplace_back(new uint8_t[slots[s].size]);
      addr.push_back(buffers.back().get());
    }
    for (int64_t b = 0; b * batch < split.samples; ++b)
      gather(split, batch, b, addr);
  }
  std::remove(path.c_str());
  return 0;
}
