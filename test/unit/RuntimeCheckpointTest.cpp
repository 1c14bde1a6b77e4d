//===- RuntimeCheckpointTest.cpp - The checkpoint file format -------------===//
//
// A checkpoint round-trips exactly; a truncated, damaged, foreign-format or
// future-version file is refused with a message naming the file and what is
// wrong, never half restored; a write to a folder that cannot take it fails
// with the path and the reason, and leaves no temporary file behind.
//
//===----------------------------------------------------------------------===//
#include "../../lib/Runtime/Internal.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <string>

#include <sys/stat.h>
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
  c.globalStep = 954;
  REQUIRE(writeCheckpoint(path.c_str(), c) == SYNPL_RT_OK);
  Checkpoint d;
  REQUIRE(readCheckpoint(path.c_str(), d) == SYNPL_RT_OK);
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
