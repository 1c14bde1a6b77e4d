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

#include <algorithm>
#include <atomic>
#include <cmath>
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
  add(SYNPL_PLAN_SLOTS, synpl_plan_slot{str(t.strings, "x"), 0, 0, 256, SYNPL_PLAN_F32, 64, 0});
  add(SYNPL_PLAN_SLOTS, synpl_plan_slot{str(t.strings, "y"), 0, 256, 4, SYNPL_PLAN_F32, 1, 0});
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
    add(SYNPL_PLAN_SLOTS, synpl_plan_slot{str(t.strings, "h"), 0, 320, 4, SYNPL_PLAN_F32, 1, 0});
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

using synpl::test::bindTables;
using synpl::test::runDesc;
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

/// How synpl_rt_main ended in a child process (PlanTables.h), its stderr
/// through a file in `dir`.
using synpl::test::Ended;
Ended runInChild(Tables &t, const std::vector<const char *> &args, const std::string &dir,
                 int ignored = 0) {
  return synpl::test::runMainInChild(t, args, dir + "/stderr", ignored);
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
  // The descriptor's sizes bound everything the reader touches.
  auto refused = [](Tables &t, const char *what) {
    CHECK(runMain(t, {"prog", "--quiet"}) == 1);
    CHECK(std::string(synpl_rt_last_error()) ==
          std::string("the program's plan tables are corrupt: ") + what);
  };
  SECTION("a section past the end of the table") {
    Tables t = buildPlan();
    t.header().section[SYNPL_PLAN_SLOTS][1] = (int64_t)t.words.size();
    refused(t, "section bounds");
  }
  SECTION("a section count that overflows its offset") {
    Tables t = buildPlan();
    t.header().section[SYNPL_PLAN_POOLS][1] = INT64_MAX;
    refused(t, "section bounds");
  }
  SECTION("a table cut short") {
    Tables t = buildPlan();
    bindTables(t);
    t.desc.table_words = SYNPL_PLAN_HEADER_WORDS - 1;
    CHECK(runDesc(t.desc, {"prog", "--quiet"}) == 1);
    CHECK(std::string(synpl_rt_last_error()) ==
          "the program's plan tables are corrupt: a table shorter than its header");
  }
  SECTION("a program of plan format 5, whose descriptor had no sizes: the version, not a "
          "crash") {
    Tables t = buildPlan();
    t.header().version = 5;
    // Format 5's descriptor: the four arrays' pointers, then the device
    // module; the fields where format 6 keeps sizes held pointers.
    struct V5Desc {
      const int64_t *table;
      const char *strings;
      void *const *kernels;
      void *const *programs;
      const char *ptx;
      int64_t ptxSize;
      const void *cubin;
      int64_t cubinSize;
    } v5{t.words.data(), t.strings.c_str(), t.kernels.data(), t.programs, nullptr, 0, nullptr,
         0};
    synpl_plan_desc desc{};
    static_assert(sizeof v5 <= sizeof desc, "format 5's descriptor is the smaller");
    std::memcpy(&desc, &v5, sizeof v5);
    CHECK(runDesc(desc, {"prog", "--quiet"}) == 1);
    CHECK(std::string(synpl_rt_last_error()) ==
          "the program's plan tables have version 5, this runtime reads version " +
              std::to_string(SYNPL_PLAN_VERSION) + " (relink with a matching runtime)");
  }
  SECTION("a name outside the string blob") {
    Tables t = buildPlan();
    t.record<synpl_plan_slot>(SYNPL_PLAN_SLOTS, 0)->name = 1 << 20;
    refused(t, "a slot name outside the string blob");
  }
  SECTION("a string blob without its final NUL") {
    Tables t = buildPlan();
    bindTables(t);
    t.desc.strings_size -= 1; // the last name's characters, not its NUL
    CHECK(runDesc(t.desc, {"prog", "--quiet"}) == 1);
    CHECK(std::string(synpl_rt_last_error()) ==
          "the program's plan tables are corrupt: a string blob that does not end with a NUL");
  }
  SECTION("kernel functions for another number of kernels") {
    Tables t = buildPlan();
    t.kernels.pop_back();
    refused(t, "kernel functions for a different number of kernels");
  }
  SECTION("a slot offset that overflows its pool's bounds") {
    Tables t = buildPlan();
    t.record<synpl_plan_slot>(SYNPL_PLAN_SLOTS, 1)->offset = INT64_MAX - 1;
    refused(t, "slot outside its pool");
  }
  SECTION("a slot with more elements than bytes") {
    Tables t = buildPlan();
    auto *slot = t.record<synpl_plan_slot>(SYNPL_PLAN_SLOTS, 1);
    slot->elements = slot->size / 4 + 1;
    refused(t, "a slot's elements that do not fit its bytes");
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

  SECTION("SIGTERM or SIGHUP with a checkpoint file: a checkpoint there, exit status 128 + "
          "the signal") {
    for (auto [sig, name] : {std::pair<int, std::string>{SIGTERM, "SIGTERM"}, {SIGHUP, "SIGHUP"}}) {
      Tables t = signalPlan(2, {sig});
      Ended e = runInChild(t, {"prog", "--quiet", "--no-eval", "--epochs", "5", "--checkpoint",
                               ckpt.c_str()},
                           dir);
      CHECK(e.status == 128 + sig);
      CHECK(e.err == "synpl: stopped by " + name + " after step 2 (end of epoch 2); checkpoint "
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

// Non-finite numbers (lib/Runtime/Finite.cpp).
TEST_CASE("finite: the first NaN or infinity of a float slot's values",
          "[runtime][finite]") {
  using synpl::rt::firstNonFinite;
  using synpl::rt::nonFiniteName;
  double v = 0;
  std::vector<float> f(3000, 1.0f);
  CHECK(firstNonFinite(f.data(), SYNPL_PLAN_F32, 3000, &v) == -1);
  f[2999] = -INFINITY;
  f[2500] = INFINITY;
  CHECK(firstNonFinite(f.data(), SYNPL_PLAN_F32, 3000, &v) == 2500);
  CHECK(std::string(nonFiniteName(v)) == "inf");
  f[1024] = -NAN; // the first of the second block; its sign is not printed
  CHECK(firstNonFinite(f.data(), SYNPL_PLAN_F32, 3000, &v) == 1024);
  CHECK(std::string(nonFiniteName(v)) == "nan");
  CHECK(firstNonFinite(f.data(), SYNPL_PLAN_F32, 1024, &v) == -1); // the count bounds it
  f[3] = 3.4e38f;                                                   // large, finite
  CHECK(firstNonFinite(f.data(), SYNPL_PLAN_F32, 1024, &v) == -1);

  std::vector<double> d(10, 0.0);
  d[7] = -INFINITY;
  CHECK(firstNonFinite(d.data(), SYNPL_PLAN_F64, 10, &v) == 7);
  CHECK(std::string(nonFiniteName(v)) == "-inf");

  // f16: exponent 0x7C00; bf16: 0x7F80. The largest finite values are not
  // caught; infinities and NaNs are, with their kind.
  uint16_t h[] = {0x3C00, 0x7BFF, 0xFBFF, 0xFC00, 0x7E00};
  CHECK(firstNonFinite(h, SYNPL_PLAN_F16, 3, &v) == -1);
  CHECK(firstNonFinite(h, SYNPL_PLAN_F16, 5, &v) == 3);
  CHECK(std::string(nonFiniteName(v)) == "-inf");
  CHECK(firstNonFinite(h + 4, SYNPL_PLAN_F16, 1, &v) == 0);
  CHECK(std::string(nonFiniteName(v)) == "nan");
  uint16_t b[] = {0x3F80, 0x7F7F, 0x7FC1, 0x7F80};
  CHECK(firstNonFinite(b, SYNPL_PLAN_BF16, 2, &v) == -1);
  CHECK(firstNonFinite(b, SYNPL_PLAN_BF16, 4, &v) == 2);
  CHECK(std::string(nonFiniteName(v)) == "nan");
  CHECK(firstNonFinite(b + 3, SYNPL_PLAN_BF16, 1, &v) == 0);
  CHECK(std::string(nonFiniteName(v)) == "inf");

  // Integers hold no NaN, whatever their bits.
  std::vector<int32_t> ints(8, -1);
  CHECK(firstNonFinite(ints.data(), SYNPL_PLAN_I32, 8, &v) == -1);
  CHECK(firstNonFinite(ints.data(), SYNPL_PLAN_I64, 4, &v) == -1);
}

namespace {

std::atomic<int> zeroCalls{0}, poisonCalls{0};
int nanLossAtCall = 0;   ///< zeroNaN: the call (1-based) that writes NaN
int poisonAtCall = 0;    ///< poison: the call that writes inf into x[5]

/// y[0] = 0, or NaN at call nanLossAtCall.
void zeroNaNKernel(void *const *args, int64_t, int64_t) {
  *static_cast<float *>(args[0]) = ++zeroCalls == nanLossAtCall ? NAN : 0.0f;
}

/// After the sum: n (i32) = all ones (never a NaN: an integer); x[5] = inf
/// at call poisonAtCall.
void poisonKernel(void *const *args, int64_t, int64_t) {
  std::memset(args[0], 0xFF, 4 * sizeof(int32_t));
  if (++poisonCalls == poisonAtCall)
    static_cast<float *>(args[1])[5] = INFINITY;
}

/// buildPlan's zero and sum, then poison(-> n, x); x, y, n all actor state.
Tables finitePlan(int nanLossAt, int poisonAt) {
  Tables t;
  TableBuilder tb;
  auto add = [&](int s, auto rec) { tb.add(s, rec); };
  add(SYNPL_PLAN_POOLS, synpl_plan_pool{str(t.strings, "state"), SYNPL_PLAN_POOL_PERSISTENT,
                                        SYNPL_PLAN_SPACE_HOST, 512, 256});
  add(SYNPL_PLAN_SLOTS, synpl_plan_slot{str(t.strings, "x"), 0, 0, 256, SYNPL_PLAN_F32, 64, 0});
  add(SYNPL_PLAN_SLOTS, synpl_plan_slot{str(t.strings, "y"), 0, 256, 4, SYNPL_PLAN_F32, 1, 0});
  add(SYNPL_PLAN_SLOTS, synpl_plan_slot{str(t.strings, "n"), 0, 320, 16, SYNPL_PLAN_I32, 4, 0});
  add(SYNPL_PLAN_KERNELS, hostKernel(str(t.strings, "zero"), 0, 1, 0, 1));
  add(SYNPL_PLAN_KERNELS, hostKernel(str(t.strings, "sum"), 1, 2, 1, 64));
  add(SYNPL_PLAN_KERNELS, hostKernel(str(t.strings, "poison"), 3, 2, 0, 1));
  for (int64_t slot : {1, 0, 1, 2, 0})
    add(SYNPL_PLAN_KERNEL_ARGS, synpl_plan_kernel_arg{slot});
  add(SYNPL_PLAN_STREAMS, synpl_plan_stream{str(t.strings, "s0"), 0, 3});
  for (int64_t k : {0, 1, 2})
    add(SYNPL_PLAN_STREAM_ENTRIES, synpl_plan_entry{SYNPL_PLAN_ENTRY_KERNEL, k});
  add(SYNPL_PLAN_INITS, synpl_plan_init{SYNPL_PLAN_INIT_ONES, 0, 0, 0, 0, -1});
  add(SYNPL_PLAN_REPORTS, synpl_plan_report{str(t.strings, "loss"), 1});
  tb.finish(t, str(t.strings, "finite_plan"));
  t.kernels = {reinterpret_cast<void *>(&zeroNaNKernel), reinterpret_cast<void *>(&sumKernel),
               reinterpret_cast<void *>(&poisonKernel)};
  zeroCalls = 0;
  poisonCalls = 0;
  nanLossAtCall = nanLossAt;
  poisonAtCall = poisonAt;
  return t;
}

} // namespace

// Without data an epoch is one step: step 3 is epoch 3's only batch, and
// the end of epoch 2 wrote the last checkpoint.
TEST_CASE("executor: a non-finite loss or state stops the run, and --check-finite names the "
          "kernel",
          "[runtime][executor][finite]") {
  std::string dir = tempDir();
  std::string ckpt = dir + "/run.ckpt";
  auto lastCheckpointStep = [&] {
    synpl::rt::Checkpoint c;
    REQUIRE(synpl::rt::readCheckpoint(ckpt.c_str(), c) == SYNPL_RT_OK);
    return c.globalStep;
  };
  const std::string stops = "the run stops (its last checkpoint, if any, is unchanged)";
  const std::string hint =
      "; rerun with --check-finite to name the first kernel that wrote a non-finite value\n";
  std::vector<const char *> args = {"prog", "--quiet", "--no-eval", "--epochs", "5",
                                    "--threads", "1", "--checkpoint", ckpt.c_str()};
  auto withFlag = [&] {
    std::vector<const char *> a = args;
    a.push_back("--check-finite");
    return a;
  };

  // The plan of finitePlan(nanLossAt, poisonAt) stops at step 3 with
  // `without` on stderr, and with --check-finite with `with`; either way the
  // checkpoint of the end of epoch 2 is the last one.
  auto stopsAtStep3 = [&](int nanLossAt, int poisonAt, const std::string &without,
                          const std::string &with) {
    Tables t = finitePlan(nanLossAt, poisonAt);
    Ended e = runInChild(t, args, dir);
    CHECK(e.status == 1);
    CHECK(e.err == without);
    CHECK(lastCheckpointStep() == 2);
    ::unlink(ckpt.c_str());
    t = finitePlan(nanLossAt, poisonAt);
    e = runInChild(t, withFlag(), dir);
    CHECK(e.status == 1);
    CHECK(e.err == with);
    CHECK(lastCheckpointStep() == 2);
  };
  SECTION("a NaN loss: the step, and with the flag, the kernel that wrote it") {
    stopsAtStep3(3, 0,
                 "synpl: error: step 3 (epoch 3, batch 1): the loss is nan; training "
                 "diverged; " + stops + hint,
                 "synpl: error: step 3 (epoch 3, batch 1): kernel zero wrote nan to slot y "
                 "at element 0; " + stops + "\n");
  }
  SECTION("infinity in the state after the loss: the epoch's end, before its checkpoint") {
    // The flag names the kernel; the integer slot it wrote first (all ones)
    // is not a NaN.
    stopsAtStep3(0, 3,
                 "synpl: error: epoch 3 (step 3): actor state x holds inf at element 5; "
                 "the run stops without writing the epoch's checkpoint (its last "
                 "checkpoint, if any, is unchanged)" + hint,
                 "synpl: error: step 3 (epoch 3, batch 1): kernel poison wrote inf to slot "
                 "x at element 5; " + stops + "\n");
  }
  SECTION("finite numbers: the flag changes nothing") {
    Tables t = finitePlan(0, 0);
    Ended e = runInChild(t, withFlag(), dir);
    CHECK(e.status == 0);
    CHECK(e.err.empty());
    CHECK(lastCheckpointStep() == 5);
  }
  ::unlink(ckpt.c_str());
  ::rmdir(dir.c_str());
}

namespace {

constexpr int64_t kBig = 300000; ///< f32 values: scanned by the worker pool
std::atomic<int> fillCalls{0};

/// big = ones; at the second call, -inf at 230000 and 160000 and NaN at
/// 80000 (in three chunks of a parallel scan on 4 threads: the lowest index
/// is the first, whichever chunk is done first).
void fillKernel(void *const *args, int64_t, int64_t) {
  float *big = static_cast<float *>(args[0]);
  std::fill(big, big + kBig, 1.0f);
  if (++fillCalls == 2) {
    big[230000] = -INFINITY;
    big[160000] = -INFINITY;
    big[80000] = NAN;
  }
}

} // namespace

TEST_CASE("executor: --check-finite names the first element of a large slot on any "
          "number of threads",
          "[runtime][executor][finite]") {
  for (const char *threads : {"1", "4"}) {
    INFO("threads " << threads);
    Tables t;
    TableBuilder tb;
    tb.add(SYNPL_PLAN_POOLS, synpl_plan_pool{str(t.strings, "state"),
                                             SYNPL_PLAN_POOL_PERSISTENT, SYNPL_PLAN_SPACE_HOST,
                                             kBig * 4, 256});
    tb.add(SYNPL_PLAN_SLOTS,
           synpl_plan_slot{str(t.strings, "big"), 0, 0, kBig * 4, SYNPL_PLAN_F32, kBig, 0});
    tb.add(SYNPL_PLAN_KERNELS, hostKernel(str(t.strings, "fill"), 0, 1, 0, 1));
    tb.add(SYNPL_PLAN_KERNEL_ARGS, synpl_plan_kernel_arg{0});
    tb.add(SYNPL_PLAN_STREAMS, synpl_plan_stream{str(t.strings, "s0"), 0, 1});
    tb.add(SYNPL_PLAN_STREAM_ENTRIES, synpl_plan_entry{SYNPL_PLAN_ENTRY_KERNEL, 0});
    tb.finish(t, str(t.strings, "big_plan"));
    t.kernels = {reinterpret_cast<void *>(&fillKernel)};
    fillCalls = 0;
    std::string dir = tempDir();
    Ended e = runInChild(t, {"prog", "--quiet", "--no-eval", "--epochs", "3", "--threads",
                             threads, "--check-finite"},
                         dir);
    CHECK(e.status == 1);
    CHECK(e.err == "synpl: error: step 2 (epoch 2, batch 1): kernel fill wrote nan to slot big "
                   "at element 80000; the run stops (its last checkpoint, if any, is "
                   "unchanged)\n");
    // Without the flag: the end of epoch 2 finds it in the state.
    fillCalls = 0;
    e = runInChild(t, {"prog", "--quiet", "--no-eval", "--epochs", "3", "--threads", threads},
                   dir);
    CHECK(e.status == 1);
    CHECK(e.err.find("synpl: error: epoch 2 (step 2): actor state big holds nan at element "
                     "80000; ") == 0);
    ::rmdir(dir.c_str());
  }
}
