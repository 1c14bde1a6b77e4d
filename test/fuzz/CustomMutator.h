//===- CustomMutator.h - libFuzzer's custom mutator hook ---------*- C++ -*-===//
//
// The glue the .syn, MLIR and pipeline targets share: three inputs in four
// go to a structure-aware mutator (SynMutator.h, MlirMutator.h); the rest,
// and any input it cannot read, to libFuzzer's own byte mutations.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TEST_FUZZ_CUSTOMMUTATOR_H
#define SYNPL_TEST_FUZZ_CUSTOMMUTATOR_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

namespace synpl::fuzz {

/// What LLVMFuzzerCustomMutator returns, with `mutate(text, seed)` the
/// structure-aware mutation ("" when it does not apply).
template <typename Mutate>
size_t customMutate(uint8_t *data, size_t size, size_t maxSize, unsigned seed, Mutate mutate) {
  if (seed % 4 != 0) {
    std::string out = mutate(std::string(reinterpret_cast<const char *>(data), size), seed);
    if (!out.empty() && out.size() <= maxSize) {
      std::memcpy(data, out.data(), out.size());
      return out.size();
    }
  }
  return LLVMFuzzerMutate(data, size, maxSize);
}

} // namespace synpl::fuzz

#endif // SYNPL_TEST_FUZZ_CUSTOMMUTATOR_H
