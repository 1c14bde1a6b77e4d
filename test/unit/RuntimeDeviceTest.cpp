//===- RuntimeDeviceTest.cpp - synpl_rt_main_device on a fake device ------===//
//
// The executor driving a device that runs each step whole (what
// synpl-ipu21-sim plugs in): the inits and the runtime's scalars reach it
// through write_slot, each step is one call with its mode, reports and
// checkpoints read it back through read_slot, and its failures end the run
// with its message.
//
//===----------------------------------------------------------------------===//
#include "synpl/Runtime/PlanFormat.h"
#include "synpl/Runtime/Runtime.h"

#include "PlanTables.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using synpl::test::bindTables;
using synpl::test::str;
using synpl::test::TableBuilder;
using synpl::test::Tables;

namespace {

/// Slots: 0 x (64 f32, init ones), 1 y (1 f32, reported as "loss"), 2 mode
/// (1 f32, init training_mode); one stream without entries; no kernels.
Tables devicePlan(bool withKernel = false) {
  Tables t;
  TableBuilder tb;
  auto add = [&](int s, auto rec) { tb.add(s, rec); };
  add(SYNPL_PLAN_POOLS, synpl_plan_pool{str(t.strings, "state"), SYNPL_PLAN_POOL_PERSISTENT,
                                        SYNPL_PLAN_SPACE_DEVICE, 512, 256});
  add(SYNPL_PLAN_SLOTS, synpl_plan_slot{str(t.strings, "x"), 0, 0, 256, SYNPL_PLAN_F32, 64, 0});
  add(SYNPL_PLAN_SLOTS, synpl_plan_slot{str(t.strings, "y"), 0, 256, 4, SYNPL_PLAN_F32, 1, 0});
  add(SYNPL_PLAN_SLOTS, synpl_plan_slot{str(t.strings, "mode"), 0, 320, 4, SYNPL_PLAN_F32, 1, 0});
  add(SYNPL_PLAN_STREAMS, synpl_plan_stream{str(t.strings, "chip"), 0, withKernel ? 1 : 0});
  if (withKernel) {
    synpl_plan_kernel k{};
    k.name = str(t.strings, "k");
    k.num_args = 1;
    k.iterations = 1;
    k.grain = 1;
    k.entry = -1;
    add(SYNPL_PLAN_KERNELS, k);
    add(SYNPL_PLAN_KERNEL_ARGS, synpl_plan_kernel_arg{1});
    add(SYNPL_PLAN_STREAM_ENTRIES, synpl_plan_entry{SYNPL_PLAN_ENTRY_KERNEL, 0});
    t.kernels = {reinterpret_cast<void *>(+[](void *const *, int64_t, int64_t) {})};
  }
  add(SYNPL_PLAN_INITS, synpl_plan_init{SYNPL_PLAN_INIT_ONES, 0, 0, 0, 0, -1});
  add(SYNPL_PLAN_INITS, synpl_plan_init{SYNPL_PLAN_INIT_TRAINING_MODE, 2, 0, 0, 0, -1});
  add(SYNPL_PLAN_REPORTS, synpl_plan_report{str(t.strings, "loss"), 1});
  tb.finish(t, str(t.strings, "device_plan"));
  return t;
}

/// A device whose step adds x's sum and the step count into y, and records
/// each call.
struct FakeDevice {
  std::map<int64_t, std::vector<uint8_t>> slots;
  std::vector<std::string> log;
  int64_t steps = 0;
  int failAtStep = 0; ///< 1-based; 0: never
  std::string error;

  static FakeDevice &of(void *ctx) { return *static_cast<FakeDevice *>(ctx); }
  synpl_rt_device device() {
    synpl_rt_device d{};
    d.ctx = this;
    d.name = "the fake device";
    d.write_slot = [](void *ctx, int64_t slot, const void *src, uint64_t bytes) -> int32_t {
      FakeDevice &f = of(ctx);
      const auto *b = static_cast<const uint8_t *>(src);
      f.slots[slot].assign(b, b + bytes);
      float first;
      std::memcpy(&first, src, sizeof first);
      f.log.push_back("write " + std::to_string(slot) + " " + std::to_string(int(first)));
      return SYNPL_RT_OK;
    };
    d.read_slot = [](void *ctx, int64_t slot, void *dst, uint64_t bytes) -> int32_t {
      FakeDevice &f = of(ctx);
      auto it = f.slots.find(slot);
      if (it == f.slots.end() || it->second.size() != bytes) {
        f.error = "slot " + std::to_string(slot) + " was never written";
        return SYNPL_RT_ERR_DEVICE;
      }
      std::memcpy(dst, it->second.data(), bytes);
      return SYNPL_RT_OK;
    };
    d.step = [](void *ctx, int32_t train) -> int32_t {
      FakeDevice &f = of(ctx);
      f.log.push_back(train ? "train" : "eval");
      if (++f.steps == f.failAtStep) {
        f.error = "the chip caught fire";
        return SYNPL_RT_ERR_DEVICE;
      }
      float sum = 0;
      const auto *x = reinterpret_cast<const float *>(f.slots[0].data());
      for (int i = 0; i < 64; ++i)
        sum += x[i];
      float y = sum + float(f.steps);
      f.slots[1].resize(4);
      std::memcpy(f.slots[1].data(), &y, 4);
      return SYNPL_RT_OK;
    };
    d.last_error = [](void *ctx) { return of(ctx).error.c_str(); };
    return d;
  }
};

/// The tables bound; a plan without kernels still passes a (empty) array.
void bindDeviceTables(Tables &t) {
  bindTables(t);
  if (!t.desc.kernels)
    t.desc.kernels = t.programs;
}

int runOn(Tables &t, FakeDevice &f, std::vector<const char *> args) {
  bindDeviceTables(t);
  synpl_rt_device d = f.device();
  std::vector<char *> argv;
  for (const char *a : args)
    argv.push_back(const_cast<char *>(a));
  argv.push_back(nullptr);
  return synpl_rt_main_device(int(args.size()), argv.data(), &t.desc, &d);
}

} // namespace

TEST_CASE("device: the inits go in, each step is one call, the report comes back",
          "[runtime][device]") {
  Tables t = devicePlan();
  FakeDevice f;
  char metrics[] = "/tmp/synpl-device-XXXXXX";
  int fd = ::mkstemp(metrics);
  REQUIRE(fd >= 0);
  ::close(fd);
  REQUIRE(runOn(t, f, {"prog", "--quiet", "--no-eval", "--epochs", "3", "--metrics", metrics}) ==
          0);
  // Inits first (x ones, the mode 1), then three training steps.
  REQUIRE(f.log.size() >= 5);
  CHECK(f.log[0] == "write 0 1");
  CHECK(f.log[1] == "write 2 1");
  CHECK(std::count(f.log.begin(), f.log.end(), "train") == 3);
  CHECK(std::count(f.log.begin(), f.log.end(), "eval") == 0);
  // The losses the executor read back: 64 + step.
  std::ifstream in(metrics);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("\"step\":1,\"epoch\":1,\"loss\":65") != std::string::npos);
  CHECK(text.find("\"step\":3,\"epoch\":3,\"loss\":67") != std::string::npos);
  std::remove(metrics);
}

TEST_CASE("device: a checkpoint reads the state from the device and a resume writes it back",
          "[runtime][device]") {
  char dir[] = "/tmp/synpl-device-ckpt-XXXXXX";
  REQUIRE(::mkdtemp(dir) != nullptr);
  std::string ckpt = std::string(dir) + "/c";
  Tables t = devicePlan();
  FakeDevice f;
  REQUIRE(runOn(t, f, {"prog", "--quiet", "--no-eval", "--epochs", "1", "--checkpoint",
                       ckpt.c_str()}) == 0);
  Tables again = devicePlan();
  FakeDevice g;
  REQUIRE(runOn(again, g, {"prog", "--quiet", "--no-eval", "--epochs", "2", "--resume",
                           ckpt.c_str()}) == 0);
  // The resumed run wrote the checkpoint's state (x and y, the mode) to
  // the device before its one remaining step.
  CHECK(std::count(g.log.begin(), g.log.end(), "train") == 1);
  CHECK(std::find(g.log.begin(), g.log.end(), "write 1 65") != g.log.end());
  std::remove(ckpt.c_str());
  ::rmdir(dir);
}

TEST_CASE("device: a failing step ends the run with the device's message",
          "[runtime][device]") {
  // The executor exits on a failed step: run it in a child, its stderr
  // through a file.
  char err[] = "/tmp/synpl-device-err-XXXXXX";
  int fd = ::mkstemp(err);
  REQUIRE(fd >= 0);
  std::fflush(nullptr);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(fd, 2);
    Tables t = devicePlan();
    FakeDevice f;
    f.failAtStep = 2;
    ::_exit(runOn(t, f, {"prog", "--quiet", "--no-eval", "--epochs", "3"}));
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  ::close(fd);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  std::ifstream in(err);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "synpl: error: the fake device, a training step: the chip caught fire\n");
  std::remove(err);
}

TEST_CASE("device: a plan with kernels of its own is refused", "[runtime][device]") {
  Tables t = devicePlan(/*withKernel=*/true);
  FakeDevice f;
  CHECK(runOn(t, f, {"prog", "--quiet"}) == 1);
  CHECK(std::string(synpl_rt_last_error()) ==
        "a plan run on the fake device has no kernels or transfers of its own; this one has 1 "
        "kernels and 0 transfers");
  CHECK(f.log.empty());
  synpl_rt_device incomplete{};
  incomplete.name = "half";
  bindDeviceTables(t);
  char prog[] = "prog";
  char *argv[] = {prog, nullptr};
  CHECK(synpl_rt_main_device(1, argv, &t.desc, &incomplete) == 1);
}
