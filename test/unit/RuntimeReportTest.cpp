//===- RuntimeReportTest.cpp - failure exit and progress lines ------------===//

#include "synpl/Runtime/Runtime.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {
std::string drain(int fd) {
  std::string out;
  char buf[512];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0)
    out.append(buf, size_t(n));
  return out;
}
} // namespace

TEST_CASE("runtime check: a failure exits 1 with the message",
          "[runtime][report]") {
  synpl_rt_check(SYNPL_RT_OK); // returns
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 2);
    synpl_rt_idx idx;
    synpl_rt_check(synpl_rt_idx_load("/nonexistent/train-images-idx3-ubyte.gz", &idx));
    _exit(0); // not reached
  }
  close(fds[1]);
  std::string err = drain(fds[0]);
  close(fds[0]);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(err == "synpl: error: /nonexistent/train-images-idx3-ubyte.gz: cannot "
               "open: No such file or directory\n");
}

TEST_CASE("runtime progress: line format", "[runtime][report]") {
  char buf[256];
  uint64_t len = synpl_rt_progress_format(buf, sizeof(buf), 120, 9375, 128,
                                          0.4312, 9.0);
  std::string line = buf;
  CHECK(line == "step 120/9375 (1.3%)  loss 0.431200  1707 samples/s  elapsed "
                "0:00:09  eta 0:11:34");
  CHECK(len == line.size());
  synpl_rt_progress_format(buf, sizeof(buf), 0, 10, 64, 2.302585, 0.0);
  CHECK(std::string(buf) ==
        "step 0/10 (0.0%)  loss 2.302585  0 samples/s  elapsed 0:00:00  eta ?");
  CHECK(synpl_rt_progress_format(buf, 10, 120, 9375, 128, 0.4312, 9.0) == 9);
  CHECK(std::string(buf) == "step 120/");
}

TEST_CASE("runtime progress: every step, or only the last within the interval",
          "[runtime][report]") {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  synpl_rt_progress *every = synpl_rt_progress_create(3, 32, 0.0, fds[1]);
  REQUIRE(every);
  for (uint64_t s = 1; s <= 3; ++s)
    CHECK(synpl_rt_progress_step(every, s, 1.0 / double(s)) == 1);
  synpl_rt_progress_destroy(every);
  synpl_rt_progress *slow = synpl_rt_progress_create(5, 32, 1000.0, fds[1]);
  REQUIRE(slow);
  for (uint64_t s = 1; s <= 4; ++s)
    CHECK(synpl_rt_progress_step(slow, s, 0.5) == 0);
  CHECK(synpl_rt_progress_step(slow, 5, 0.25) == 1);
  synpl_rt_progress_destroy(slow);
  close(fds[1]);
  std::string out = drain(fds[0]);
  close(fds[0]);
  // Four lines: steps 1, 2, 3 of the first, step 5 of the second.
  size_t lines = 0;
  for (char c : out)
    lines += c == '\n';
  CHECK(lines == 4);
  CHECK(out.rfind("step 1/3 (33.3%)  loss 1.000000  ", 0) == 0);
  CHECK(out.find("\nstep 3/3 (100.0%)  loss 0.333333  ") != std::string::npos);
  CHECK(out.find("\nstep 5/5 (100.0%)  loss 0.250000  ") != std::string::npos);
  CHECK(out.find("step 4/5") == std::string::npos);
  CHECK(synpl_rt_progress_create(1, 1, -1.0, 2) == nullptr);
}
