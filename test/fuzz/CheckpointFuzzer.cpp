//===- CheckpointFuzzer.cpp - The runtime's checkpoint reader -------------===//
//
// Each input is a checkpoint file. Its last word is made the checksum of
// the bytes before it (the format's FNV-1a), so that the fuzzer explores
// the fields behind the checksum instead of stopping at it; every field the
// reader trusts must still be checked.
//
//===----------------------------------------------------------------------===//
#include "Runtime/Internal.h"

#include <cstdint>
#include <cstring>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  if (bytes.size() >= 16 && bytes.size() % 8 == 0) {
    uint64_t sum = synpl::rt::fnv1a64(bytes.data(), bytes.size() - 8);
    std::memcpy(bytes.data() + bytes.size() - 8, &sum, 8);
  }
  synpl::rt::Checkpoint checkpoint;
  (void)synpl::rt::decodeCheckpoint("fuzz.ckpt", bytes.data(), bytes.size(), checkpoint);
  return 0;
}
