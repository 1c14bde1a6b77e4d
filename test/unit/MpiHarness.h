//===- MpiHarness.h - Tests that run themselves under mpirun ----*- C++ -*-===//
//
// The runtime's MPI and NCCL tests are one executable each that plays two
// parts: run by ctest it is the driver, which starts itself under `mpirun`
// (each rank then runs one scenario) and checks what the ranks printed and
// how they ended. This header has what both parts of both tests share: the
// check macro, the rank's place in the world, and the driver's launcher.
// Test-only; plain C++ (these executables link no test framework).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TEST_UNIT_MPIHARNESS_H
#define SYNPL_TEST_UNIT_MPIHARNESS_H

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/wait.h>
#include <utility>
#include <vector>

namespace synpl::test {

/// Checks that failed in this process (each EXPECT that fails adds one).
inline int failures = 0;

#define EXPECT(cond, ...)                                                      \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__,    \
                   #cond);                                                     \
      std::fprintf(stderr, __VA_ARGS__);                                       \
      std::fputc('\n', stderr);                                                \
      ++::synpl::test::failures;                                               \
    }                                                                          \
  } while (0)

/// A fresh folder under /tmp named after `prefix`.
inline std::string tempDir(const char *prefix) {
  std::string tmpl = std::string("/tmp/") + prefix + "-XXXXXX";
  if (!::mkdtemp(tmpl.data())) {
    std::perror("mkdtemp");
    std::exit(1);
  }
  return tmpl;
}

/// This process's rank and the world's size, as Open MPI's launcher says
/// (0 and 1 when no launcher started it).
inline int worldRank() {
  const char *s = std::getenv("OMPI_COMM_WORLD_RANK");
  return s ? std::atoi(s) : 0;
}
inline int worldSize() {
  const char *s = std::getenv("OMPI_COMM_WORLD_SIZE");
  return s ? std::atoi(s) : 1;
}

/// How a command ended and what it printed.
struct Outcome {
  int status = -1; ///< the exit status (-1: killed by a signal)
  std::string out; ///< stdout and stderr
  double seconds = 0;
};

/// Environment variables for a command (and, under mpirun, its ranks).
using Env = std::vector<std::pair<std::string, std::string>>;

inline Outcome runCommand(const std::string &cmd) {
  std::fprintf(stderr, "driver: %s\n", cmd.c_str());
  auto t0 = std::chrono::steady_clock::now();
  Outcome o;
  std::FILE *p = ::popen(cmd.c_str(), "r");
  if (!p)
    return o;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
    o.out.append(buf, n);
  int ws = ::pclose(p);
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  o.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
  return o;
}

/// `NAME='VALUE' ...` in front of a shell command.
inline std::string envPrefix(const Env &env) {
  std::string s;
  for (auto &[k, v] : env)
    s += k + "='" + v + "' ";
  return s;
}

/// `self args` under `launcher` (mpirun) on `np` ranks, `env` set for the
/// ranks (-x), within 120 s (timeout kills a hang).
inline Outcome mpirun(const std::string &launcher, int np, const std::string &self,
                      const std::string &args, const Env &env = {}) {
  std::string pass;
  for (auto &[k, v] : env)
    pass += " -x " + k;
  return runCommand(envPrefix(env) + "timeout 120 " + launcher +
                    " --allow-run-as-root --oversubscribe" + pass + " -np " +
                    std::to_string(np) + " " + self + " " + args + " 2>&1");
}

inline bool has(const Outcome &o, const std::string &text) {
  return o.out.find(text) != std::string::npos;
}

inline void show(const Outcome &o) {
  std::fprintf(stderr, "  exit %d after %.1f s; output:\n%s\n", o.status, o.seconds,
               o.out.c_str());
}

} // namespace synpl::test

#endif // SYNPL_TEST_UNIT_MPIHARNESS_H
