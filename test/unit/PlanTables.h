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

/// Collects records per section, then lays out the table.
struct TableBuilder {
  std::vector<std::vector<int64_t>> sections =
      std::vector<std::vector<int64_t>>(SYNPL_PLAN_NUM_SECTIONS);
  std::vector<int64_t> recordWords =
      std::vector<int64_t>(SYNPL_PLAN_NUM_SECTIONS, 1);

  template <typename R> void add(int section, const R &rec) {
    const int64_t *w = reinterpret_cast<const int64_t *>(&rec);
    sections[section].insert(sections[section].end(), w, w + sizeof(rec) / 8);
    recordWords[section] = sizeof(rec) / 8;
  }
  /// `t.words`: the header (magic, version, `name`, pipeline depth 1, the
  /// default evaluation split), then every section.
  void finish(Tables &t, int64_t name) const {
    t.words.assign(SYNPL_PLAN_HEADER_WORDS, 0);
    t.header().magic = SYNPL_PLAN_MAGIC;
    t.header().version = SYNPL_PLAN_VERSION;
    t.header().name = name;
    t.header().pipeline_depth = 1;
    t.header().evaluate = -1;
    for (int s = 0; s < SYNPL_PLAN_NUM_SECTIONS; ++s) {
      t.header().section[s][0] = t.words.size();
      t.header().section[s][1] = sections[s].size() / recordWords[s];
      t.words.insert(t.words.end(), sections[s].begin(), sections[s].end());
    }
  }
};

/// synpl_rt_main over `t` with the command line `args` (args[0] the name).
inline int runMain(Tables &t, std::vector<const char *> args) {
  t.desc.table = t.words.data();
  t.desc.strings = t.strings.data();
  t.desc.kernels = t.kernels.data();
  t.desc.programs = t.programs;
  std::vector<char *> argv;
  for (const char *a : args)
    argv.push_back(const_cast<char *>(a));
  argv.push_back(nullptr);
  return synpl_rt_main((int)args.size(), argv.data(), &t.desc);
}

} // namespace synpl::test

#endif // SYNPL_TEST_UNIT_PLANTABLES_H
