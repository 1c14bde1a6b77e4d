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

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

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

/// Points `t.desc` at the tables (the string blob NUL-terminated).
inline void bindTables(Tables &t) {
  t.desc.table = t.words.data();
  t.desc.table_words = (int64_t)t.words.size();
  if (t.strings.empty() || t.strings.back() != '\0')
    t.strings.push_back('\0');
  t.desc.strings = t.strings.data();
  t.desc.strings_size = (int64_t)t.strings.size();
  t.desc.kernels = t.kernels.data();
  t.desc.num_kernels = (int64_t)t.kernels.size();
  t.desc.programs = t.programs;
  t.desc.num_programs = t.header().section[SYNPL_PLAN_PROGRAMS][1];
}

/// synpl_rt_main over `desc` with the command line `args` (args[0] the name).
inline int runDesc(const synpl_plan_desc &desc, std::vector<const char *> args) {
  std::vector<char *> argv;
  for (const char *a : args)
    argv.push_back(const_cast<char *>(a));
  argv.push_back(nullptr);
  return synpl_rt_main((int)args.size(), argv.data(), &desc);
}

/// synpl_rt_main over `t` with the command line `args` (args[0] the name).
inline int runMain(Tables &t, std::vector<const char *> args) {
  bindTables(t);
  return runDesc(t.desc, std::move(args));
}

/// How synpl_rt_main over `t` ended in a child process (a refused run ends
/// with exit(1); a signal may kill it). SIGTERM, SIGINT and SIGHUP are at their
/// default actions, or `ignored` ignored, as a shell would start it; stdout
/// is discarded and stderr captured through the file `errPath`.
struct Ended {
  int status = -1;  ///< the exit status; -1: it did not exit
  int signal = 0;   ///< the signal that killed it
  std::string err;  ///< what it wrote to stderr
};
inline Ended runMainInChild(Tables &t, const std::vector<const char *> &args,
                            const std::string &errPath, int ignored = 0) {
  Ended e;
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) {
    e.err = "fork failed";
    return e;
  }
  if (pid == 0) {
    std::signal(SIGTERM, ignored == SIGTERM ? SIG_IGN : SIG_DFL);
    std::signal(SIGINT, ignored == SIGINT ? SIG_IGN : SIG_DFL);
    std::signal(SIGHUP, ignored == SIGHUP ? SIG_IGN : SIG_DFL);
    int err = ::open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int null = ::open("/dev/null", O_WRONLY);
    if (err < 0 || null < 0)
      ::_exit(99);
    ::dup2(err, 2);
    ::dup2(null, 1);
    int rc = runMain(t, args);
    std::fflush(nullptr);
    ::_exit(rc);
  }
  int ws = 0;
  if (::waitpid(pid, &ws, 0) != pid) {
    e.err = "waitpid failed";
    return e;
  }
  if (WIFEXITED(ws))
    e.status = WEXITSTATUS(ws);
  if (WIFSIGNALED(ws))
    e.signal = WTERMSIG(ws);
  std::ifstream in(errPath, std::ios::binary);
  e.err.assign(std::istreambuf_iterator<char>(in), {});
  ::unlink(errPath.c_str());
  return e;
}

} // namespace synpl::test

#endif // SYNPL_TEST_UNIT_PLANTABLES_H
