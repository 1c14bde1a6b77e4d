//===- RuntimeExecutorTest.cpp - synpl_rt_main on hand-built tables -------===//
//
// The executor binds metadata tables written by the compiler. Here the
// tables are built by hand (PlanFormat.h) around C++ "kernels", so the
// test sees exactly what the executor hands a kernel: the slot addresses
// after the inits, the chunks of the split range, one step per epoch when
// there is no data. Corrupt tables must be refused with a message, never
// crash.
//
//===----------------------------------------------------------------------===//
#include "synpl/Runtime/PlanFormat.h"
#include "synpl/Runtime/Runtime.h"

#include "../../lib/Runtime/Internal.h"
#include "../../lib/Runtime/Signals.h"
#include "PlanTables.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

std::atomic<int> calls{0};
std::atomic<int64_t> covered{0};
float seenX[64];
std::mutex yMutex;

/// y[0] = sum(x[begin..end)) over chunks (atomic add of the chunk sums).
void sumKernel(void *const *args, int64_t begin, int64_t end) {
  const float *x = static_cast<const float *>(args[0]);
  float *y = static_cast<float *>(args[1]);
  float s = 0;
  for (int64_t i = begin; i < end; ++i) {
    s += x[i];
    seenX[i] = x[i];
  }
  {
    std::lock_guard<std::mutex> lock(yMutex);
    *y += s;
  }
  covered += end - begin;
  ++calls;
}

/// The value a `planned_steps` slot held when the kernel ran.
float seenHorizon = -1;
void peekKernel(void *const *args, int64_t, int64_t) {
  seenHorizon = *static_cast<const float *>(args[0]);
}

/// y[0] = 0 (runs first in the stream).
void zeroKernel(void *const *args, int64_t, int64_t) {
  *static_cast<float *>(args[0]) = 0;
}

using synpl::test::str;
using synpl::test::TableBuilder;
using synpl::test::Tables;

/// A host kernel record (no CUDA entry, no launch).
synpl_plan_kernel hostKernel(int64_t name, int64_t firstArg, int64_t numArgs,
                             int64_t numInputs, int64_t iterations, int64_t grain = 1) {
  synpl_plan_kernel k{};
  k.name = name;
  k.first_arg = firstArg;
  k.num_args = numArgs;
  k.num_inputs = numInputs;
  k.iterations = iterations;
  k.grain = grain;
  k.target = SYNPL_PLAN_TARGET_HOST;
  k.entry = -1;
  return k;
}

/// One persistent pool; x (64 f32, init ones) and y (1 f32, reported as
/// "loss"); kernels zero(y) then sum(x -> y) over 64 iterations; one stream.
/// With `horizon`, also h (1 f32, init planned_steps) read by a third
/// kernel, peek(h).
Tables buildPlan(bool horizon = false, int64_t sumGrain = 1) {
  Tables t;
  TableBuilder tb;
  auto add = [&](int s, auto rec) { tb.add(s, rec); };
  add(SYNPL_PLAN_POOLS, synpl_plan_pool{str(t.strings, "state"), SYNPL_PLAN_POOL_PERSISTENT,
                                        SYNPL_PLAN_SPACE_HOST, 512, 256});
  add(SYNPL_PLAN_SLOTS, synpl_plan_slot{str(t.strings, "x"), 0, 0, 256, SYNPL_PLAN_F32, 64});
  add(SYNPL_PLAN_SLOTS, synpl_plan_slot{str(t.strings, "y"), 0, 256, 4, SYNPL_PLAN_F32, 1});
  add(SYNPL_PLAN_KERNELS, hostKernel(str(t.strings, "zero"), 0, 1, 0, 1));
  add(SYNPL_PLAN_KERNELS, hostKernel(str(t.strings, "sum"), 1, 2, 1, 64, sumGrain));
  add(SYNPL_PLAN_KERNEL_ARGS, synpl_plan_kernel_arg{1});
  add(SYNPL_PLAN_KERNEL_ARGS, synpl_plan_kernel_arg{0});
  add(SYNPL_PLAN_KERNEL_ARGS, synpl_plan_kernel_arg{1});
  add(SYNPL_PLAN_STREAMS, synpl_plan_stream{str(t.strings, "s0"), 0, horizon ? 3 : 2});
  add(SYNPL_PLAN_STREAM_ENTRIES, synpl_plan_entry{SYNPL_PLAN_ENTRY_KERNEL, 0});
  add(SYNPL_PLAN_STREAM_ENTRIES, synpl_plan_entry{SYNPL_PLAN_ENTRY_KERNEL, 1});
  add(SYNPL_PLAN_INITS, synpl_plan_init{SYNPL_PLAN_INIT_ONES, 0, 0, 0, 0, -1});
  if (horizon) {
    add(SYNPL_PLAN_SLOTS, synpl_plan_slot{str(t.strings, "h"), 0, 320, 4, SYNPL_PLAN_F32, 1});
    add(SYNPL_PLAN_KERNELS, hostKernel(str(t.strings, "peek"), 3, 1, 1, 1));
    add(SYNPL_PLAN_KERNEL_ARGS, synpl_plan_kernel_arg{2});
    add(SYNPL_PLAN_STREAM_ENTRIES, synpl_plan_entry{SYNPL_PLAN_ENTRY_KERNEL, 2});
    add(SYNPL_PLAN_INITS, synpl_plan_init{SYNPL_PLAN_INIT_PLANNED_STEPS, 2, 0, 0, 0, -1});
  }
  add(SYNPL_PLAN_REPORTS, synpl_plan_report{str(t.strings, "loss"), 1});
  int64_t name = str(t.strings, "test_plan");

  tb.finish(t, name);
  t.kernels = {reinterpret_cast<void *>(&zeroKernel), reinterpret_cast<void *>(&sumKernel)};
  if (horizon)
    t.kernels.push_back(reinterpret_cast<void *>(&peekKernel));
  return t;
}

using synpl::test::runMain;

// Stop signals (Signals.h): a kernel that raises signals in the middle of
// a step, as a scheduler's SIGTERM or a Ctrl-C would arrive.
std::atomic<int> signalCalls{0};
int signalAtCall = 0;          ///< the call (1-based) that raises; 0: none
std::vector<int> signalsToRaise;
struct sigaction seenTerm {}, seenInt {}; ///< the dispositions while it ran

/// zeroKernel, plus the signals.
void signalKernel(void *const *args, int64_t, int64_t) {
  *static_cast<float *>(args[0]) = 0;
  sigaction(SIGTERM, nullptr, &seenTerm);
  sigaction(SIGINT, nullptr, &seenInt);
  if (++signalCalls == signalAtCall)
    for (int s : signalsToRaise)
      raise(s);
}

Tables signalPlan(int atCall, std::vector<int> signals) {
  Tables t = buildPlan();
  t.kernels[0] = reinterpret_cast<void *>(&signalKernel);
  signalCalls = 0;
  signalAtCall = atCall;
  signalsToRaise = std::move(signals);
  return t;
}

std::string tempDir() {
  char tmpl[] = "/tmp/synpl-stop-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  return tmpl;
}

bool exists(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

/// How synpl_rt_main ended in a child process (SIGTERM and SIGINT at their
/// default actions, or `ignored` ignored, as a shell would start it).
struct Ended {
  int status = -1;  ///< the exit status; -1: killed
  int signal = 0;   ///< the signal that killed it
  std::string err;  ///< what it wrote to stderr
};
Ended runInChild(Tables &t, const std::vector<const char *> &args, const std::string &dir,
                 int ignored = 0) {
  std::string errPath = dir + "/stderr";
  std::fflush(nullptr);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::signal(SIGTERM, ignored == SIGTERM ? SIG_IGN : SIG_DFL);
    std::signal(SIGINT, ignored == SIGINT ? SIG_IGN : SIG_DFL);
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
  REQUIRE(::waitpid(pid, &ws, 0) == pid);
  Ended e;
  if (WIFEXITED(ws))
    e.status = WEXITSTATUS(ws);
  if (WIFSIGNALED(ws))
    e.signal = WTERMSIG(ws);
  std::ifstream in(errPath, std::ios::binary);
  e.err.assign(std::istreambuf_iterator<char>(in), {});
  ::unlink(errPath.c_str());
  return e;
}

std::atomic<int> testHandlerCalls{0};
void testHandler(int) { ++testHandlerCalls; }

} // namespace

TEST_CASE("executor: kernels see the inits and cover their split range",
          "[runtime][executor]") {
  Tables t = buildPlan();
  calls = 0;
  covered = 0;
  std::memset(seenX, 0, sizeof seenX);
  REQUIRE(runMain(t, {"prog", "--quiet", "--no-eval", "--epochs", "3", "--threads", "2"}) == 0);
  // One step per epoch without data; every index of [0, 64) once per step.
  CHECK(covered.load() == 3 * 64);
  CHECK(calls.load() >= 3);
  for (float v : seenX)
    CHECK(v == 1.0f); // init ones
}

TEST_CASE("executor: a kernel with a grain runs one chunk per thread",
          "[runtime][executor]") {
  // The sum kernel's 64 iterations over 2 threads: 2 chunks per step of 32
  // (grain 5), or of 40 and 24 (grain 40); without a grain, more chunks.
  for (auto [grain, perStep] : {std::pair<int64_t, int>{5, 2}, {40, 2}, {64, 1}}) {
    INFO("grain " << grain);
    Tables t = buildPlan(/*horizon=*/false, grain);
    calls = 0;
    covered = 0;
    REQUIRE(runMain(t, {"prog", "--quiet", "--no-eval", "--epochs", "3", "--threads", "2"}) == 0);
    CHECK(covered.load() == 3 * 64);
    CHECK(calls.load() == 3 * perStep);
  }
}

TEST_CASE("executor: planned_steps holds the run's length",
          "[runtime][executor]") {
  // Without data an epoch is one step: the run takes `--epochs` steps.
  Tables t = buildPlan(/*horizon=*/true);
  seenHorizon = -1;
  REQUIRE(runMain(t, {"prog", "--quiet", "--no-eval", "--epochs", "5"}) == 0);
  CHECK(seenHorizon == 5.0f);
  seenHorizon = -1;
  REQUIRE(runMain(t, {"prog", "--quiet", "--no-eval", "--epochs", "2", "--steps", "7"}) == 0);
  CHECK(seenHorizon == 2.0f); // --steps caps the batches, it never adds any

  SECTION("a planned_steps slot that is not one f32 is refused") {
    Tables bad = buildPlan(/*horizon=*/true);
    bad.record<synpl_plan_slot>(SYNPL_PLAN_SLOTS, 2)->element = SYNPL_PLAN_I32;
    CHECK(runMain(bad, {"prog", "--quiet"}) == 1);
    CHECK(std::string(synpl_rt_last_error()).find("planned_steps") != std::string::npos);
  }
}

TEST_CASE("executor: corrupt tables are refused with a message",
          "[runtime][executor]") {
  SECTION("bad magic") {
    Tables t = buildPlan();
    t.words[0] = 42;
    CHECK(runMain(t, {"prog", "--quiet"}) == 1);
    CHECK(std::string(synpl_rt_last_error()).find("bad magic") != std::string::npos);
  }
  SECTION("another version") {
    Tables t = buildPlan();
    t.words[1] = SYNPL_PLAN_VERSION + 1;
    CHECK(runMain(t, {"prog", "--quiet"}) == 1);
    CHECK(std::string(synpl_rt_last_error()).find("version") != std::string::npos);
  }
  SECTION("a kernel argument outside the slots") {
    Tables t = buildPlan();
    t.record<synpl_plan_kernel_arg>(SYNPL_PLAN_KERNEL_ARGS, 2)->slot = 99;
    CHECK(runMain(t, {"prog", "--quiet"}) == 1);
    CHECK(std::string(synpl_rt_last_error()).find("kernel argument") != std::string::npos);
  }
  SECTION("a slot outside its pool") {
    Tables t = buildPlan();
    t.record<synpl_plan_slot>(SYNPL_PLAN_SLOTS, 1)->offset = 4096;
    CHECK(runMain(t, {"prog", "--quiet"}) == 1);
    CHECK(std::string(synpl_rt_last_error()).find("slot outside its pool") != std::string::npos);
  }
  SECTION("a stream past the entries") {
    Tables t = buildPlan();
    t.record<synpl_plan_stream>(SYNPL_PLAN_STREAMS, 0)->num_entries = 7;
    CHECK(runMain(t, {"prog", "--quiet"}) == 1);
  }
  SECTION("a kernel grain below 1") {
    Tables t = buildPlan();
    t.record<synpl_plan_kernel>(SYNPL_PLAN_KERNELS, 1)->grain = 0;
    CHECK(runMain(t, {"prog", "--quiet"}) == 1);
    CHECK(std::string(synpl_rt_last_error()).find("kernel") != std::string::npos);
  }
  SECTION("a missing kernel function") {
    Tables t = buildPlan();
    t.kernels[1] = nullptr;
    CHECK(runMain(t, {"prog", "--quiet"}) == 1);
  }
}

TEST_CASE("executor: bad options exit 2, --help exits 0", "[runtime][executor]") {
  Tables t = buildPlan();
  CHECK(runMain(t, {"prog", "--epochs", "zero"}) == 2);
  CHECK(runMain(t, {"prog", "--what"}) == 2);
  CHECK(runMain(t, {"prog", "--steps"}) == 2);
}

// Without data an epoch is one step, so every step here is its epoch's
// last: a signal in it stops the run after the epoch (the epoch loop's
// mid-epoch stops are test/Runtime/stop-signal.test's).
TEST_CASE("executor: SIGTERM or SIGINT in a step stops the run after it",
          "[runtime][executor][signals]") {
  std::string dir = tempDir();
  std::string ckpt = dir + "/run.ckpt";

  SECTION("SIGTERM with a checkpoint file: a checkpoint there, exit status 143") {
    Tables t = signalPlan(2, {SIGTERM});
    Ended e = runInChild(t, {"prog", "--quiet", "--no-eval", "--epochs", "5", "--checkpoint",
                             ckpt.c_str()},
                         dir);
    CHECK(e.status == 143);
    CHECK(e.err == "synpl: stopped by SIGTERM after step 2 (end of epoch 2); checkpoint "
                   "written to " + ckpt + "; resume with --resume " + ckpt + "\n");
    synpl::rt::Checkpoint c;
    REQUIRE(synpl::rt::readCheckpoint(ckpt.c_str(), c) == SYNPL_RT_OK);
    CHECK(c.epoch == 2);
    CHECK(c.batch == 0);
    CHECK(c.globalStep == 2);
    CHECK_FALSE(exists(ckpt + ".tmp"));
    // It resumes: the three steps left.
    Tables resumed = signalPlan(0, {});
    CHECK(runMain(resumed, {"prog", "--quiet", "--no-eval", "--epochs", "5", "--resume",
                            ckpt.c_str()}) == 0);
    CHECK(signalCalls.load() == 3);
  }
  SECTION("SIGINT without a checkpoint file: exit status 130, the line says so") {
    Tables t = signalPlan(3, {SIGINT});
    Ended e = runInChild(t, {"prog", "--quiet", "--no-eval", "--epochs", "5"}, dir);
    CHECK(e.status == 130);
    CHECK(e.err == "synpl: stopped by SIGINT after step 3 (end of epoch 3); no checkpoint "
                   "configured (--checkpoint FILE keeps the state)\n");
  }
  SECTION("in the last epoch's last step the run ends as it would") {
    Tables t = signalPlan(5, {SIGTERM});
    Ended e = runInChild(t, {"prog", "--quiet", "--no-eval", "--epochs", "5", "--checkpoint",
                             ckpt.c_str()},
                         dir);
    CHECK(e.status == 0);
    CHECK(e.err.empty());
    synpl::rt::Checkpoint c;
    REQUIRE(synpl::rt::readCheckpoint(ckpt.c_str(), c) == SYNPL_RT_OK);
    CHECK(c.epoch == 5);
  }
  SECTION("a second signal while stopping: its default action, at once") {
    for (std::vector<int> twice : {std::vector<int>{SIGTERM, SIGTERM}, {SIGINT, SIGTERM}}) {
      Tables t = signalPlan(2, twice);
      Ended e = runInChild(t, {"prog", "--quiet", "--no-eval", "--epochs", "5",
                               "--checkpoint", ckpt.c_str()},
                           dir);
      CHECK(e.status == -1);
      CHECK(e.signal == SIGTERM);
      CHECK(e.err.empty());
      // The last checkpoint is epoch 1's, whole: epoch 2 never ended.
      synpl::rt::Checkpoint c;
      REQUIRE(synpl::rt::readCheckpoint(ckpt.c_str(), c) == SYNPL_RT_OK);
      CHECK(c.globalStep == 1);
      CHECK_FALSE(exists(ckpt + ".tmp"));
    }
  }
  SECTION("a signal the process ignored stays ignored") {
    Tables t = signalPlan(2, {SIGINT});
    Ended e = runInChild(t, {"prog", "--quiet", "--no-eval", "--epochs", "5"}, dir, SIGINT);
    CHECK(e.status == 0);
    CHECK(e.err.empty());
  }
  ::unlink(ckpt.c_str());
  ::rmdir(dir.c_str());
}

TEST_CASE("executor: the stop handlers are installed only while synpl_rt_main runs",
          "[runtime][executor][signals]") {
  struct sigaction oldTerm {}, oldInt {}, test {}, ignore {}, now {};
  test.sa_handler = testHandler;
  sigemptyset(&test.sa_mask);
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  REQUIRE(sigaction(SIGTERM, &test, &oldTerm) == 0);
  REQUIRE(sigaction(SIGINT, &ignore, &oldInt) == 0);
  testHandlerCalls = 0;

  // The runtime used as a library installs nothing.
  synpl_rt_workers *w = synpl_rt_workers_create(2);
  REQUIRE(w);
  synpl_rt_workers_destroy(w);
  sigaction(SIGTERM, nullptr, &now);
  CHECK(now.sa_handler == &testHandler);

  // While the run runs: the runtime's SIGTERM handler; SIGINT (ignored
  // before) still ignored, so raising it changes nothing.
  Tables t = signalPlan(2, {SIGINT});
  CHECK(runMain(t, {"prog", "--quiet", "--no-eval", "--epochs", "3"}) == 0);
  CHECK(signalCalls.load() == 3);
  CHECK(seenTerm.sa_handler != &testHandler);
  CHECK(seenTerm.sa_handler != SIG_DFL);
  CHECK(seenTerm.sa_handler != SIG_IGN);
  CHECK(seenInt.sa_handler == SIG_IGN);
  // After it: the dispositions it found.
  sigaction(SIGTERM, nullptr, &now);
  CHECK(now.sa_handler == &testHandler);
  sigaction(SIGINT, nullptr, &now);
  CHECK(now.sa_handler == SIG_IGN);

  SECTION("StopSignals: the flag, then the previous handler back") {
    {
      synpl::rt::exec::StopSignals stop;
      CHECK(stop.handles(SIGTERM));
      CHECK_FALSE(stop.handles(SIGINT));
      CHECK(synpl::rt::exec::stopSignal() == 0);
      raise(SIGTERM);
      CHECK(synpl::rt::exec::stopSignal() == SIGTERM);
    }
    sigaction(SIGTERM, nullptr, &now);
    CHECK(now.sa_handler == &testHandler);
    CHECK(testHandlerCalls.load() == 0);
    // The next run starts with the flag clear.
    synpl::rt::exec::StopSignals again;
    CHECK(synpl::rt::exec::stopSignal() == 0);
  }
  sigaction(SIGTERM, &oldTerm, nullptr);
  sigaction(SIGINT, &oldInt, nullptr);
}
