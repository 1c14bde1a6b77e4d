//===- RuntimeCudaTest.cpp - synpl_rt_main on CUDA tables, fake driver ----===//
//
// The executor's CUDA path on hand-built tables (plan format v3) and the
// fake driver (test/lib/FakeCuda, loaded through SYNPL_CUDA_DRIVER): a host
// input copied to a device slot, a CUDA kernel whose host fallback is a C++
// function, the result copied back and reported. Tables a GPU could not run
// are refused with a message, never a crash.
//
//===----------------------------------------------------------------------===//
#include "synpl/Runtime/PlanFormat.h"
#include "synpl/Runtime/Runtime.h"

#include "PlanTables.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int64_t covered = 0;
float lastSum = -1;

/// y[0] = sum(x[0..64)): the CUDA kernel's host fallback; the fake driver
/// calls it with [0, INT64_MAX), so it clamps to its range like the
/// compiled fallbacks.
void sumFallback(void *const *args, int64_t begin, int64_t end) {
  if (end > 64)
    end = 64;
  const float *x = static_cast<const float *>(args[0]);
  float *y = static_cast<float *>(args[1]);
  float s = 0;
  for (int64_t i = begin; i < end; ++i)
    s += x[i];
  *y = s;
  lastSum = s;
  covered += end - begin;
}

const char kPtx[] = ".version 7.0\n.target sm_80\n.address_size 64\n"
                    ".visible .entry test_sum(\n\t.param .u64 a,\n\t.param .u64 b\n)\n"
                    "{\n\tret;\n}\n";

using synpl::test::str;
using synpl::test::TableBuilder;
using synpl::test::Tables;

/// Pools: host (x: 64 f32 init ones, y: 1 f32 reported as "loss") and
/// device (xd, yd). Stream: h2d x -> xd, CUDA kernel sum(xd -> yd), d2h
/// yd -> y.
Tables buildPlan() {
  Tables t;
  TableBuilder tb;
  auto add = [&](int s, auto rec) { tb.add(s, rec); };
  add(SYNPL_PLAN_POOLS, synpl_plan_pool{str(t.strings, "host"), SYNPL_PLAN_POOL_PERSISTENT,
                                        SYNPL_PLAN_SPACE_HOST, 512, 256});
  add(SYNPL_PLAN_POOLS, synpl_plan_pool{str(t.strings, "dev"), SYNPL_PLAN_POOL_PERSISTENT,
                                        SYNPL_PLAN_SPACE_DEVICE, 512, 256});
  add(SYNPL_PLAN_SLOTS, synpl_plan_slot{str(t.strings, "x"), 0, 0, 256, SYNPL_PLAN_F32, 64, 0});
  add(SYNPL_PLAN_SLOTS, synpl_plan_slot{str(t.strings, "y"), 0, 256, 4, SYNPL_PLAN_F32, 1, 0});
  add(SYNPL_PLAN_SLOTS, synpl_plan_slot{str(t.strings, "xd"), 1, 0, 256, SYNPL_PLAN_F32, 64, 0});
  add(SYNPL_PLAN_SLOTS, synpl_plan_slot{str(t.strings, "yd"), 1, 256, 4, SYNPL_PLAN_F32, 1, 0});
  synpl_plan_kernel k{};
  k.name = str(t.strings, "sum");
  k.first_arg = 0;
  k.num_args = 2;
  k.num_inputs = 1;
  k.iterations = 64;
  k.grain = 1;
  k.target = SYNPL_PLAN_TARGET_CUDA;
  k.entry = str(t.strings, "test_sum");
  k.grid[0] = k.grid[1] = k.grid[2] = 1;
  k.block[0] = 64;
  k.block[1] = k.block[2] = 1;
  add(SYNPL_PLAN_KERNELS, k);
  add(SYNPL_PLAN_KERNEL_ARGS, synpl_plan_kernel_arg{2});
  add(SYNPL_PLAN_KERNEL_ARGS, synpl_plan_kernel_arg{3});
  add(SYNPL_PLAN_TRANSFERS,
      synpl_plan_transfer{str(t.strings, "up"), 0, 2, 256, SYNPL_PLAN_H2D});
  add(SYNPL_PLAN_TRANSFERS,
      synpl_plan_transfer{str(t.strings, "down"), 3, 1, 4, SYNPL_PLAN_D2H});
  add(SYNPL_PLAN_STREAMS, synpl_plan_stream{str(t.strings, "s0"), 0, 3});
  add(SYNPL_PLAN_STREAM_ENTRIES, synpl_plan_entry{SYNPL_PLAN_ENTRY_TRANSFER, 0});
  add(SYNPL_PLAN_STREAM_ENTRIES, synpl_plan_entry{SYNPL_PLAN_ENTRY_KERNEL, 0});
  add(SYNPL_PLAN_STREAM_ENTRIES, synpl_plan_entry{SYNPL_PLAN_ENTRY_TRANSFER, 1});
  add(SYNPL_PLAN_INITS, synpl_plan_init{SYNPL_PLAN_INIT_ONES, 0, 0, 0, 0, -1});
  add(SYNPL_PLAN_REPORTS, synpl_plan_report{str(t.strings, "loss"), 1});
  int64_t name = str(t.strings, "cuda_plan");

  tb.finish(t, name);
  t.header().device_arch = 80;
  t.header().min_driver = 11000;
  t.kernels = {reinterpret_cast<void *>(&sumFallback)};
  t.desc.device_ptx = kPtx;
  t.desc.device_ptx_size = sizeof kPtx - 1;
  return t;
}

using synpl::test::runMain;

bool lastErrorHas(const char *what) {
  return std::string(synpl_rt_last_error()).find(what) != std::string::npos;
}

struct FakeDriver {
  FakeDriver() { setenv("SYNPL_CUDA_DRIVER", SYNPL_FAKE_CUDA_LIB, 1); }
  ~FakeDriver() { unsetenv("SYNPL_CUDA_DRIVER"); }
};

} // namespace

TEST_CASE("cuda executor: device slots, transfers and a CUDA kernel on the fake driver",
          "[runtime][cuda]") {
  FakeDriver fake;
  Tables t = buildPlan();
  covered = 0;
  lastSum = -1;
  REQUIRE(runMain(t, {"prog", "--quiet", "--no-eval", "--epochs", "3"}) == 0);
  // Three steps (no data: one per epoch); the fallback ran on the device
  // copy of x (ones) each time, whole.
  CHECK(covered == 3 * 64);
  CHECK(lastSum == 64.0f);

  SECTION("without graphs, the same") {
    covered = 0;
    REQUIRE(runMain(t, {"prog", "--quiet", "--no-eval", "--epochs", "3",
                        "--no-cuda-graphs"}) == 0);
    CHECK(covered == 3 * 64);
  }
}

TEST_CASE("cuda executor: tables a GPU cannot run are refused with a message",
          "[runtime][cuda]") {
  FakeDriver fake;
  SECTION("CUDA kernels without their module") {
    Tables t = buildPlan();
    t.desc.device_ptx = nullptr;
    t.desc.device_ptx_size = 0;
    CHECK(runMain(t, {"prog", "--quiet"}) == 1);
    CHECK(lastErrorHas("CUDA kernels without their module"));
  }
  SECTION("a header without the device architecture") {
    Tables t = buildPlan();
    t.header().device_arch = 0;
    CHECK(runMain(t, {"prog", "--quiet"}) == 1);
    CHECK(lastErrorHas("CUDA kernels without their module"));
  }
  SECTION("an empty launch") {
    Tables t = buildPlan();
    t.record<synpl_plan_kernel>(SYNPL_PLAN_KERNELS, 0)->block[0] = 0;
    CHECK(runMain(t, {"prog", "--quiet"}) == 1);
    CHECK(lastErrorHas("CUDA kernel launch"));
  }
  SECTION("a kernel target the runtime does not know") {
    Tables t = buildPlan();
    t.record<synpl_plan_kernel>(SYNPL_PLAN_KERNELS, 0)->target = 7;
    CHECK(runMain(t, {"prog", "--quiet"}) == 1);
    CHECK(lastErrorHas("kernel"));
  }
  SECTION("a CUDA kernel reading a host slot") {
    Tables t = buildPlan();
    t.record<synpl_plan_kernel_arg>(SYNPL_PLAN_KERNEL_ARGS, 0)->slot = 0;
    CHECK(runMain(t, {"prog", "--quiet"}) == 1);
    CHECK(lastErrorHas("kernel sum runs on the GPU but its buffer x is in host pool host"));
  }
  SECTION("an entry the PTX does not define") {
    Tables t = buildPlan();
    t.strings.replace(t.strings.find("test_sum"), 8, "test_nop");
    CHECK(runMain(t, {"prog", "--quiet"}) == 1);
    CHECK(lastErrorHas("CUDA_ERROR_NOT_FOUND: kernel sum: no entry test_nop"));
  }
  SECTION("a sync outside its stream") {
    Tables t = buildPlan();
    // The stream entries' words read as one sync record: (1, 0, 0, 0), a
    // wait on event 0, and the plan has no event.
    t.header().section[SYNPL_PLAN_SYNCS][0] = t.header().section[SYNPL_PLAN_STREAM_ENTRIES][0];
    t.header().section[SYNPL_PLAN_SYNCS][1] = 1;
    CHECK(runMain(t, {"prog", "--quiet"}) == 1);
    CHECK(lastErrorHas("sync"));
  }
}

TEST_CASE("cuda executor: no driver library", "[runtime][cuda]") {
  setenv("SYNPL_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  Tables t = buildPlan();
  CHECK(runMain(t, {"prog", "--quiet"}) == 1);
  CHECK(lastErrorHas("no NVIDIA driver: cannot load /nonexistent/libcuda.so.1"));
  unsetenv("SYNPL_CUDA_DRIVER");
}
