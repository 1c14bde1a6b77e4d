//===- IdxFuzzer.cpp - The runtime's IDX decoder (raw and gzip) -----------===//
//
// Each input is an IDX file, plain or gzip'd (the decoder tells them apart
// by their first bytes), read through the runtime's public loader from a
// file in memory-backed storage. A refusal sets the runtime's error; any
// crash, sanitizer report or hang is a finding.
//
//===----------------------------------------------------------------------===//
#include "synpl/Runtime/Runtime.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string path = [] {
    setenv("SYNPL_DATA_CACHE", "0", 1); // decode every input, cache nothing
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    return std::string(dir) + "/synpl-fuzz-idx-" + std::to_string(getpid()) + ".idx";
  }();
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  synpl_rt_idx idx;
  if (synpl_rt_idx_load(path.c_str(), &idx) == SYNPL_RT_OK)
    synpl_rt_idx_free(&idx);
  std::remove(path.c_str());
  return 0;
}
