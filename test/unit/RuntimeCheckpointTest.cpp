//===- RuntimeCheckpointTest.cpp - The checkpoint file format -------------===//
//
// A checkpoint round-trips exactly; a truncated, damaged, foreign-format or
// future-version file is refused with a message naming the file and what is
// wrong, never half restored; a write to a folder that cannot take it fails
// with the path and the reason, and leaves no temporary file behind.
//
// A checksum only catches accidents: a file edited with its checksum
// recomputed (here: a good checkpoint's fields changed, then encoded again
// by the runtime's own encodeCheckpoint) must still be refused when its
// fields disagree with each other (position, loss) or with the program
// resuming it (the plan, the blocks' sizes, non-finite state), and the run
// that refuses it exits 1 without touching the file.
//
//===----------------------------------------------------------------------===//
#include "../../lib/Runtime/Internal.h"
#include "synpl/Runtime/PlanFormat.h"
#include "synpl/Runtime/Runtime.h"

#include "PlanTables.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace synpl::rt;

namespace {

Checkpoint sample() {
  Checkpoint c;
  c.fingerprint = 0x0123456789abcdefull;
  c.epoch = 2;
  c.batch = 17;
  c.globalStep = 953;
  c.stepsPerEpoch = 468;
  c.lossSum = 12.375;
  c.lossCount = 17;
  c.data = {7, 60000};
  c.blobs.push_back({3, {1, 2, 3, 4, 5}}); // odd length: padded in the file
  c.blobs.push_back({kRegionBlob | 1, std::vector<uint8_t>(16, 0xAB)});
  return c;
}

std::string tempDir() {
  char tmpl[] = "/tmp/synpl-ckpt-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  return tmpl;
}

bool exists(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

std::string lastError() { return synpl_rt_last_error(); }

} // namespace

TEST_CASE("checkpoint: encode and decode round-trip", "[runtime][checkpoint]") {
  Checkpoint c = sample();
  std::vector<uint8_t> bytes = encodeCheckpoint(c);
  CHECK(bytes.size() % 8 == 0);
  CHECK(std::memcmp(bytes.data(), "SYNCKPT1", 8) == 0);
  Checkpoint d;
  REQUIRE(decodeCheckpoint("f", bytes.data(), bytes.size(), d) == SYNPL_RT_OK);
  CHECK(d.fingerprint == c.fingerprint);
  CHECK(d.epoch == 2);
  CHECK(d.batch == 17);
  CHECK(d.globalStep == 953);
  CHECK(d.stepsPerEpoch == 468);
  CHECK(d.lossSum == 12.375);
  CHECK(d.lossCount == 17);
  CHECK(d.data == c.data);
  REQUIRE(d.blobs.size() == 2);
  CHECK(d.blobs[0].id == 3);
  CHECK(d.blobs[0].bytes == c.blobs[0].bytes);
  CHECK(d.blobs[1].id == (kRegionBlob | 1));
  CHECK(d.blobs[1].bytes == c.blobs[1].bytes);
  // Deterministic: the same state gives the same bytes.
  CHECK(encodeCheckpoint(d) == bytes);
}

TEST_CASE("checkpoint: damaged files are refused with the reason",
          "[runtime][checkpoint]") {
  std::vector<uint8_t> good = encodeCheckpoint(sample());
  Checkpoint d;
  SECTION("truncated at every length") {
    for (size_t n = 0; n < good.size(); ++n) {
      INFO("kept " << n << " of " << good.size() << " bytes");
      REQUIRE(decodeCheckpoint("ck", good.data(), n, d) != SYNPL_RT_OK);
      CHECK(lastError().rfind("ck: ", 0) == 0);
    }
  }
  SECTION("one flipped bit anywhere after the magic") {
    for (size_t i = 8; i < good.size(); i += 3) {
      std::vector<uint8_t> bad = good;
      bad[i] ^= 0x10;
      INFO("byte " << i);
      REQUIRE(decodeCheckpoint("ck", bad.data(), bad.size(), d) != SYNPL_RT_OK);
    }
    std::vector<uint8_t> bad = good;
    bad[40] ^= 1; // inside the fixed fields: only the checksum can tell
    REQUIRE(decodeCheckpoint("ck", bad.data(), bad.size(), d) != SYNPL_RT_OK);
    CHECK(lastError() == "ck: corrupt or truncated checkpoint (checksum mismatch)");
  }
  SECTION("not a checkpoint") {
    const char text[] = "epoch=1 loss=0.5\n";
    REQUIRE(decodeCheckpoint("ck", reinterpret_cast<const uint8_t *>(text),
                             sizeof text, d) != SYNPL_RT_OK);
    CHECK(lastError() == "ck: not a synplexum checkpoint (no SYNCKPT1 magic)");
  }
  SECTION("a later format version") {
    std::vector<uint8_t> bad = good;
    bad[8] = (uint8_t)(kCheckpointVersion + 1);
    REQUIRE(decodeCheckpoint("ck", bad.data(), bad.size(), d) != SYNPL_RT_OK);
    CHECK(lastError().find("checkpoint format version 2, this runtime reads version 1") !=
          std::string::npos);
  }
}

TEST_CASE("checkpoint: files are written atomically and read back",
          "[runtime][checkpoint]") {
  std::string dir = tempDir();
  std::string path = dir + "/run.ckpt";
  Checkpoint c = sample();
  REQUIRE(writeCheckpoint(path.c_str(), c) == SYNPL_RT_OK);
  CHECK_FALSE(exists(path + ".tmp"));
  // A second write replaces the first.
  c.batch = 18;
  c.globalStep = 954;
  REQUIRE(writeCheckpoint(path.c_str(), c) == SYNPL_RT_OK);
  Checkpoint d;
  REQUIRE(readCheckpoint(path.c_str(), d) == SYNPL_RT_OK);
  CHECK(d.batch == 18);
  CHECK(d.globalStep == 954);

  SECTION("a missing file") {
    std::string missing = dir + "/nope.ckpt";
    REQUIRE(readCheckpoint(missing.c_str(), d) != SYNPL_RT_OK);
    CHECK(lastError() == missing + ": cannot open checkpoint: No such file or directory");
  }
  SECTION("a folder that does not exist") {
    std::string bad = dir + "/no/such/folder/run.ckpt";
    REQUIRE(writeCheckpoint(bad.c_str(), c) != SYNPL_RT_OK);
    CHECK(lastError().find("cannot write checkpoint " + bad) == 0);
    CHECK(lastError().find("No such file or directory") != std::string::npos);
  }
  SECTION("a \"folder\" that is a file (unwritable even for root)") {
    std::string bad = path + "/run.ckpt";
    REQUIRE(writeCheckpoint(bad.c_str(), c) != SYNPL_RT_OK);
    CHECK(lastError() == "cannot write checkpoint " + bad + ": " + bad +
                             ".tmp: Not a directory");
  }
  SECTION("a read-only folder") {
    std::string ro = dir + "/ro";
    REQUIRE(::mkdir(ro.c_str(), 0555) == 0);
    std::string target = ro + "/run.ckpt";
    int32_t st = writeCheckpoint(target.c_str(), c);
    if (::geteuid() != 0) { // root writes anyway
      REQUIRE(st != SYNPL_RT_OK);
      CHECK(lastError().find("Permission denied") != std::string::npos);
    }
    ::unlink(target.c_str());
    ::rmdir(ro.c_str());
  }
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}

TEST_CASE("checkpoint: fields that disagree are refused despite a valid checksum",
          "[runtime][checkpoint]") {
  // sample() is consistent: epoch 2 (0-based) of 468 steps, batch 17, so
  // global step 2 * 468 + 17 = 953; 17 losses summed. Each section changes
  // what it names (and what must follow to keep every other field right),
  // then encodes it again: the checksum holds, the fields do not.
  Checkpoint c = sample();
  Checkpoint d;
  std::vector<uint8_t> good = encodeCheckpoint(c);
  REQUIRE(decodeCheckpoint("ck", good.data(), good.size(), d) == SYNPL_RT_OK);
  auto refused = [&](const Checkpoint &bad) {
    std::vector<uint8_t> bytes = encodeCheckpoint(bad);
    uint64_t sum;
    std::memcpy(&sum, bytes.data() + bytes.size() - 8, 8);
    REQUIRE(sum == fnv1a64(bytes.data(), bytes.size() - 8)); // a valid checksum
    REQUIRE(decodeCheckpoint("ck", bytes.data(), bytes.size(), d) != SYNPL_RT_OK);
    return lastError();
  };
  SECTION("a global step one past the position") {
    c.globalStep = 954;
    CHECK(refused(c) == "ck: inconsistent checkpoint: global step 954 disagrees with epoch 3, "
                        "batch 17 at 468 steps per epoch (step 953)");
  }
  SECTION("a global step one short of the position") {
    c.globalStep = 952;
    CHECK(refused(c) == "ck: inconsistent checkpoint: global step 952 disagrees with epoch 3, "
                        "batch 17 at 468 steps per epoch (step 953)");
  }
  SECTION("an epoch too large for its step") {
    c.epoch = std::numeric_limits<int64_t>::max() / 2;
    CHECK(refused(c) == "ck: inconsistent checkpoint: global step 953 disagrees with epoch " +
                            std::to_string(c.epoch + 1) +
                            ", batch 17 at 468 steps per epoch (step past 2^63)");
  }
  SECTION("a batch past the end of its epoch") {
    c.batch = 468;
    c.globalStep = 2 * 468 + 468;
    CHECK(refused(c) == "ck: inconsistent checkpoint: batch 468 is past the end of its epoch "
                        "of 468 steps (steps per epoch)");
  }
  SECTION("no steps per epoch") {
    c.stepsPerEpoch = 0;
    CHECK(refused(c) == "ck: inconsistent checkpoint: steps per epoch is 0, not positive");
  }
  SECTION("more losses than batches trained") {
    c.lossCount = 18;
    CHECK(refused(c) == "ck: inconsistent checkpoint: loss count 18 disagrees with batch 17 "
                        "(one loss per batch of the epoch trained, at most 17)");
  }
  SECTION("a negative loss count") {
    c.lossCount = -1;
    CHECK(refused(c) == "ck: inconsistent checkpoint: loss count -1 disagrees with batch 17 "
                        "(one loss per batch of the epoch trained, at most 17)");
  }
  SECTION("a loss sum that is not finite") {
    c.lossSum = std::numeric_limits<double>::quiet_NaN();
    CHECK(refused(c) == "ck: inconsistent checkpoint: loss sum is nan, not a finite number");
    c.lossSum = std::numeric_limits<double>::infinity();
    CHECK(refused(c) == "ck: inconsistent checkpoint: loss sum is inf, not a finite number");
    c.lossSum = -std::numeric_limits<double>::infinity();
    CHECK(refused(c) == "ck: inconsistent checkpoint: loss sum is -inf, not a finite number");
  }
}

namespace {

using synpl::test::hostKernel;
using synpl::test::runMain;
using synpl::test::str;
using synpl::test::TableBuilder;
using synpl::test::Tables;

/// One update: w += 0.5 (every element), loss = w[0].
void updateKernel(void *const *args, int64_t, int64_t) {
  float *w = static_cast<float *>(args[0]);
  for (int i = 0; i < 16; ++i)
    w[i] += 0.5f;
  *static_cast<float *>(args[1]) = w[0];
}

/// A program without data (one step per epoch) whose actor state has a
/// block of every float type and an integer one: w (16 f32, init ones,
/// updated), v (4 f64), hf (4 f16), bf (4 bf16), n (4 i32), loss (1 f32,
/// reported as "loss"); and a control region `counter` (not a queue).
/// `wElements` changes w's size: another program.
Tables resumablePlan(int64_t wElements = 16) {
  Tables t;
  TableBuilder tb;
  auto add = [&](int s, auto rec) { tb.add(s, rec); };
  add(SYNPL_PLAN_POOLS, synpl_plan_pool{str(t.strings, "state"), SYNPL_PLAN_POOL_PERSISTENT,
                                        SYNPL_PLAN_SPACE_HOST, 512, 64});
  add(SYNPL_PLAN_SLOTS,
      synpl_plan_slot{str(t.strings, "w"), 0, 0, 4 * wElements, SYNPL_PLAN_F32, wElements, 0});
  add(SYNPL_PLAN_SLOTS, synpl_plan_slot{str(t.strings, "v"), 0, 128, 32, SYNPL_PLAN_F64, 4, 0});
  add(SYNPL_PLAN_SLOTS, synpl_plan_slot{str(t.strings, "hf"), 0, 192, 8, SYNPL_PLAN_F16, 4, 0});
  add(SYNPL_PLAN_SLOTS, synpl_plan_slot{str(t.strings, "bf"), 0, 256, 8, SYNPL_PLAN_BF16, 4, 0});
  add(SYNPL_PLAN_SLOTS, synpl_plan_slot{str(t.strings, "n"), 0, 320, 16, SYNPL_PLAN_I32, 4, 0});
  add(SYNPL_PLAN_SLOTS, synpl_plan_slot{str(t.strings, "loss"), 0, 384, 4, SYNPL_PLAN_F32, 1, 0});
  add(SYNPL_PLAN_KERNELS, hostKernel(t.strings, "update", 0, 2, 0));
  add(SYNPL_PLAN_KERNEL_ARGS, synpl_plan_kernel_arg{0});
  add(SYNPL_PLAN_KERNEL_ARGS, synpl_plan_kernel_arg{5});
  add(SYNPL_PLAN_STREAMS, synpl_plan_stream{str(t.strings, "s0"), 0, 1});
  add(SYNPL_PLAN_STREAM_ENTRIES, synpl_plan_entry{SYNPL_PLAN_ENTRY_KERNEL, 0});
  add(SYNPL_PLAN_INITS, synpl_plan_init{SYNPL_PLAN_INIT_ONES, 0, 0, 0, 0, -1});
  add(SYNPL_PLAN_REPORTS, synpl_plan_report{str(t.strings, "loss"), 5});
  add(SYNPL_PLAN_REGIONS,
      synpl_plan_region{str(t.strings, "counter"), SYNPL_PLAN_ACCESS_RW, 8, 8, 0});
  tb.finish(t, str(t.strings, "resumable"));
  t.kernels = {reinterpret_cast<void *>(&updateKernel)};
  return t;
}

std::vector<uint8_t> fileBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

/// synpl_rt_main in a child process (a refused run ends with exit(1)):
/// its exit status (-1: it did not exit) and what it wrote to stderr.
using Outcome = synpl::test::Ended;
Outcome runForked(Tables &t, const std::vector<const char *> &args, const std::string &errPath) {
  return synpl::test::runMainInChild(t, args, errPath);
}

CheckpointBlob *blobOf(Checkpoint &c, uint64_t id) {
  for (CheckpointBlob &b : c.blobs)
    if (b.id == id)
      return &b;
  return nullptr;
}

} // namespace

TEST_CASE("checkpoint: resume refuses a checkpoint that disagrees with the program",
          "[runtime][checkpoint]") {
  std::string dir = tempDir();
  std::string good = dir + "/good.ckpt", bad = dir + "/bad.ckpt";
  Tables t = resumablePlan();
  // Two epochs of one step: epoch 2 (0-based) done, batch 0, global step 2.
  REQUIRE(runMain(t, {"prog", "--quiet", "--no-eval", "--epochs", "2", "--save-weights",
                      good.c_str()}) == 0);
  Checkpoint c;
  REQUIRE(readCheckpoint(good.c_str(), c) == SYNPL_RT_OK);
  REQUIRE(c.epoch == 2);
  REQUIRE(c.globalStep == 2);
  REQUIRE(c.stepsPerEpoch == 1);
  REQUIRE(c.blobs.size() == 7); // six slots, one region
  std::string errPath = dir + "/stderr";
  // The unedited checkpoint resumes (so each refusal below is its edit's).
  REQUIRE(runForked(t,
                    {"prog", "--quiet", "--no-eval", "--epochs", "3", "--resume", good.c_str(),
                     "--checkpoint", (dir + "/next.ckpt").c_str()},
                    errPath)
              .status == 0);

  // `c` edited, written with the runtime's encoder (a valid checksum), then
  // resumed with the same file as the run's checkpoint: refused with one
  // line and exit status 1, and the file is as it was. The line, less
  // "synpl: error: " and the newline.
  auto resume = [&](const Checkpoint &edited, std::vector<const char *> extra = {}) {
    REQUIRE(writeCheckpoint(bad.c_str(), edited) == SYNPL_RT_OK);
    std::vector<uint8_t> before = fileBytes(bad);
    std::vector<const char *> args = {"prog",   "--quiet",      "--no-eval",  "--epochs",
                                      "3",      "--resume",     bad.c_str(), "--checkpoint",
                                      bad.c_str()};
    args.insert(args.end(), extra.begin(), extra.end());
    Outcome o = runForked(t, args, errPath);
    CHECK(o.status == 1);
    CHECK(fileBytes(bad) == before);
    CHECK_FALSE(exists(bad + ".tmp"));
    const std::string prefix = "synpl: error: ";
    REQUIRE(o.err.rfind(prefix, 0) == 0);
    REQUIRE(o.err.size() > prefix.size());
    REQUIRE(o.err.back() == '\n');
    return o.err.substr(prefix.size(), o.err.size() - prefix.size() - 1);
  };
  const std::string f = bad + ": ";

  SECTION("(a) a global step that disagrees with the epoch and batch") {
    c.globalStep = 3;
    CHECK(resume(c) == f + "inconsistent checkpoint: global step 3 disagrees with epoch 3, "
                           "batch 0 at 1 steps per epoch (step 2)");
  }
  SECTION("(a) a batch inside the epoch, but not this run's epoch length") {
    c.stepsPerEpoch = 2;
    c.globalStep = 4;
    CHECK(resume(c) == f + "checkpoint was written by a run of 2 steps per epoch; this run "
                           "takes 1 (--steps, the data)");
  }
  SECTION("(a) an epoch past the run's end") {
    CHECK(resume(c, {"--epochs", "1"}) ==
          f + "checkpoint is in epoch 3, past this run's 1 epoch(s) (--epochs)");
  }
  SECTION("(b) a loss sum that is not finite") {
    c.lossSum = std::numeric_limits<double>::infinity();
    CHECK(resume(c) == f + "inconsistent checkpoint: loss sum is inf, not a finite number");
  }
  SECTION("(b) a NaN parameter (f32)") {
    float nan = std::numeric_limits<float>::quiet_NaN();
    std::memcpy(blobOf(c, 0)->bytes.data() + 5 * 4, &nan, 4);
    CHECK(resume(c) == f + "checkpoint holds a non-finite value in actor state w: nan at "
                           "element 5");
  }
  SECTION("(b) an infinite optimizer value (f64)") {
    double inf = std::numeric_limits<double>::infinity();
    std::memcpy(blobOf(c, 1)->bytes.data() + 2 * 8, &inf, 8);
    CHECK(resume(c) == f + "checkpoint holds a non-finite value in actor state v: inf at "
                           "element 2");
  }
  SECTION("(b) non-finite f16 and bf16 values") {
    uint16_t negInf = 0xFC00; // f16 -inf
    std::memcpy(blobOf(c, 2)->bytes.data() + 1 * 2, &negInf, 2);
    CHECK(resume(c) == f + "checkpoint holds a non-finite value in actor state hf: -inf at "
                           "element 1");
    c = Checkpoint();
    REQUIRE(readCheckpoint(good.c_str(), c) == SYNPL_RT_OK);
    uint16_t nan = 0x7FC0; // bf16 NaN
    std::memcpy(blobOf(c, 3)->bytes.data() + 3 * 2, &nan, 2);
    CHECK(resume(c) == f + "checkpoint holds a non-finite value in actor state bf: nan at "
                           "element 3");
  }
  SECTION("integer state is any bit pattern, and resumes") {
    std::memset(blobOf(c, 4)->bytes.data(), 0xFF, 16);
    REQUIRE(writeCheckpoint(bad.c_str(), c) == SYNPL_RT_OK);
    CHECK(runForked(t, {"prog", "--quiet", "--no-eval", "--epochs", "3", "--resume", bad.c_str()},
                    errPath)
              .status == 0);
  }
  SECTION("(c) a state block of the wrong size") {
    blobOf(c, 0)->bytes.resize(68);
    CHECK(resume(c) == f + "checkpoint holds 68 bytes of actor state w; this program's w is "
                           "64 bytes");
  }
  SECTION("(c) a control region of the wrong size") {
    blobOf(c, kRegionBlob | 0)->bytes.resize(16);
    CHECK(resume(c) == f + "checkpoint holds 16 bytes of control region counter; this "
                           "program's counter is 8 bytes");
  }
  SECTION("(c) a state block twice") {
    c.blobs.push_back(*blobOf(c, 0));
    CHECK(resume(c) == f + "checkpoint holds actor state w twice");
  }
  SECTION("(c) a missing state block") {
    c.blobs.erase(c.blobs.begin() + 1); // v
    CHECK(resume(c) == f + "checkpoint lacks actor state v");
  }
  SECTION("(c) a missing control region") {
    c.blobs.pop_back(); // counter (saved after the slots)
    CHECK(resume(c) == f + "checkpoint lacks control region counter");
  }
  SECTION("(c) a block the program does not have") {
    c.blobs.push_back({99, std::vector<uint8_t>(8, 0)});
    CHECK(resume(c) == f + "checkpoint holds a state block (id 99) this program does not have");
  }
  SECTION("(c) a data source the program does not read") {
    c.data = {3, 1000};
    CHECK(resume(c) == f + "checkpoint records 1 data sources, the program reads 0");
  }
  SECTION("(d) a foreign plan") {
    // Another program (w of 8 elements) writes a checkpoint of its own.
    Tables other = resumablePlan(/*wElements=*/8);
    std::string foreign = dir + "/foreign.ckpt";
    REQUIRE(runMain(other, {"prog", "--quiet", "--no-eval", "--epochs", "2", "--save-weights",
                            foreign.c_str()}) == 0);
    REQUIRE(readCheckpoint(foreign.c_str(), c) == SYNPL_RT_OK);
    std::string message = resume(c);
    CHECK(message.rfind(f + "checkpoint of another program (plan fingerprint ", 0) == 0);
    ::unlink(foreign.c_str());
  }
  SECTION("(d) an edited fingerprint") {
    c.fingerprint ^= 1;
    CHECK(resume(c).rfind(f + "checkpoint of another program (plan fingerprint ", 0) == 0);
  }
  ::unlink(good.c_str());
  ::unlink(bad.c_str());
  ::unlink((dir + "/next.ckpt").c_str());
  ::rmdir(dir.c_str());
}
