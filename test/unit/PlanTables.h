//===- PlanTables.h - Hand-built plan tables for runtime tests --*- C++ -*-===//
//
// The metadata tables of include/synpl/Runtime/PlanFormat.h, built in a test
// the way --synpl-convert-l0-plan-to-llvm writes them, so the executor can
// be run without the compiler.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TEST_UNIT_PLANTABLES_H
#define SYNPL_TEST_UNIT_PLANTABLES_H

#include "synpl/Runtime/PlanFormat.h"

#include <cstdint>
#include <string>
#include <vector>

namespace synpl::test {

struct Tables {
  std::vector<int64_t> words;
  std::string strings;
  std::vector<void *> kernels;
  void *programs[1] = {nullptr};
  synpl_plan_desc desc{};
  synpl_plan_header &header() {
    return *reinterpret_cast<synpl_plan_header *>(words.data());
  }
  template <typename R> R *record(int section, int64_t i) {
    return reinterpret_cast<R *>(words.data() + header().section[section][0]) + i;
  }
};

/// Appends `s` (NUL-terminated) to `strings`; its byte offset.
inline int64_t str(std::string &strings, const char *s) {
  int64_t off = strings.size();
  strings += s;
  strings.push_back('\0');
  return off;
}

} // namespace synpl::test

#endif // SYNPL_TEST_UNIT_PLANTABLES_H
