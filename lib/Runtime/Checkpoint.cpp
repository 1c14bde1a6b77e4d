//===- Checkpoint.cpp - Training checkpoints: write atomically, read checked ===//
//
// A checkpoint is everything a run needs to continue at the exact next
// batch: where it stopped (epoch, batch within the epoch, global step, the
// epoch's running loss), the data order (each ingest's shuffle seed and
// sample count: the epoch permutation is a function of seed and epoch, see
// Dataset.cpp), and the bytes of every actor-state slot and control region.
// The plan's fingerprint ties it to one compiled program.
//
// File layout (little-endian, all fields 8 bytes):
//   magic "SYNCKPT1", format version, plan fingerprint,
//   epoch (0-based, the epoch in progress), batch within it, global step,
//   steps per epoch, loss sum (f64 bits), loss count,
//   data words n, then n words (per ingest: seed, sample count),
//   blob count m, then m times (id, byte size, bytes padded to 8),
//   FNV-1a 64 of every byte before it.
// The trailing checksum makes a truncated or damaged file an error, never
// state silently half restored. It cannot tell a file edited (or written
// by a broken runtime) with its checksum recomputed, so the fields are also
// checked against each other: the steps per epoch are positive, the batch
// lies inside the epoch, the global step is epoch * steps per epoch + batch,
// the loss count is at most the batch (one loss per batch of the epoch
// trained) and the loss sum is finite. The executor checks the rest against
// the program (ExecutorCheckpoint.cpp).
//
// Writing is atomic: FILE.tmp is written and fsync'd, renamed over FILE,
// and the directory fsync'd, so a crash (or SIGKILL) at any point leaves
// either the old checkpoint or the new one.
//
//===----------------------------------------------------------------------===//
#include "Internal.h"

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace synpl::rt;

namespace {

constexpr uint64_t kMagic = 0x3154504b434e5953ull; // "SYNCKPT1" little-endian
constexpr uint64_t kFixedWords = 9;                // magic .. loss count

struct Writer {
  std::vector<uint8_t> bytes;
  void word(uint64_t v) {
    uint8_t b[8];
    std::memcpy(b, &v, 8);
    bytes.insert(bytes.end(), b, b + 8);
  }
  void raw(const uint8_t *p, uint64_t n) {
    bytes.insert(bytes.end(), p, p + n);
    bytes.resize((bytes.size() + 7) & ~uint64_t(7), 0);
  }
};

struct Reader {
  const uint8_t *p;
  uint64_t size, at = 0;
  bool word(uint64_t &v) {
    if (size - at < 8)
      return false;
    std::memcpy(&v, p + at, 8);
    at += 8;
    return true;
  }
  bool raw(std::vector<uint8_t> &out, uint64_t n) {
    uint64_t padded = (n + 7) & ~uint64_t(7);
    if (n > size || padded > size - at)
      return false;
    out.assign(p + at, p + at + n);
    at += padded;
    return true;
  }
};

std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// The position and the loss fields, checked against each other (the
/// epoch printed 1-based, as the resume line says it).
int32_t checkFields(const char *path, const Checkpoint &c) {
  if (c.stepsPerEpoch < 1)
    return fail(SYNPL_RT_ERR_FORMAT,
                "%s: inconsistent checkpoint: steps per epoch is %" PRId64 ", not positive", path,
                c.stepsPerEpoch);
  if (c.batch >= c.stepsPerEpoch)
    return fail(SYNPL_RT_ERR_FORMAT,
                "%s: inconsistent checkpoint: batch %" PRId64
                " is past the end of its epoch of %" PRId64 " steps (steps per epoch)",
                path, c.batch, c.stepsPerEpoch);
  __int128 step = (__int128)c.epoch * c.stepsPerEpoch + c.batch;
  if (step != c.globalStep)
    return fail(SYNPL_RT_ERR_FORMAT,
                "%s: inconsistent checkpoint: global step %" PRId64
                " disagrees with epoch %" PRId64 ", batch %" PRId64 " at %" PRId64
                " steps per epoch (step %s)",
                path, c.globalStep, c.epoch + 1, c.batch, c.stepsPerEpoch,
                step <= INT64_MAX ? std::to_string((int64_t)step).c_str() : "past 2^63");
  if (c.lossCount < 0 || c.lossCount > c.batch)
    return fail(SYNPL_RT_ERR_FORMAT,
                "%s: inconsistent checkpoint: loss count %" PRId64 " disagrees with batch %" PRId64
                " (one loss per batch of the epoch trained, at most %" PRId64 ")",
                path, c.lossCount, c.batch, c.batch);
  if (!std::isfinite(c.lossSum))
    return fail(SYNPL_RT_ERR_FORMAT,
                "%s: inconsistent checkpoint: loss sum is %g, not a finite number", path,
                c.lossSum);
  return SYNPL_RT_OK;
}

} // namespace

uint64_t synpl::rt::fnv1a64(const void *data, uint64_t bytes, uint64_t h) {
  const uint8_t *p = static_cast<const uint8_t *>(data);
  for (uint64_t i = 0; i < bytes; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

std::vector<uint8_t> synpl::rt::encodeCheckpoint(const Checkpoint &c) {
  Writer w;
  w.word(kMagic);
  w.word(kCheckpointVersion);
  w.word(c.fingerprint);
  w.word((uint64_t)c.epoch);
  w.word((uint64_t)c.batch);
  w.word((uint64_t)c.globalStep);
  w.word((uint64_t)c.stepsPerEpoch);
  uint64_t lossBits;
  std::memcpy(&lossBits, &c.lossSum, 8);
  w.word(lossBits);
  w.word((uint64_t)c.lossCount);
  w.word(c.data.size());
  for (uint64_t v : c.data)
    w.word(v);
  w.word(c.blobs.size());
  for (const CheckpointBlob &b : c.blobs) {
    w.word(b.id);
    w.word(b.bytes.size());
    w.raw(b.bytes.data(), b.bytes.size());
  }
  w.word(fnv1a64(w.bytes.data(), w.bytes.size()));
  return std::move(w.bytes);
}

int32_t synpl::rt::decodeCheckpoint(const char *path, const uint8_t *bytes,
                                    uint64_t size, Checkpoint &c) {
  if (size < 8 || std::memcmp(bytes, "SYNCKPT1", 8) != 0)
    return fail(SYNPL_RT_ERR_FORMAT,
                "%s: not a synplexum checkpoint (no SYNCKPT1 magic)", path);
  Reader r{bytes, size};
  uint64_t magic, version;
  if (!r.word(magic) || !r.word(version))
    return fail(SYNPL_RT_ERR_FORMAT, "%s: truncated checkpoint (%" PRIu64 " bytes)", path, size);
  if (version != kCheckpointVersion)
    return fail(SYNPL_RT_ERR_FORMAT,
                "%s: checkpoint format version %" PRIu64 ", this runtime reads version %" PRIu64,
                path, version, kCheckpointVersion);
  // The checksum first: every later field is trusted only when it holds.
  if (size < (kFixedWords + 3) * 8 || size % 8)
    return fail(SYNPL_RT_ERR_FORMAT, "%s: truncated checkpoint (%" PRIu64 " bytes)", path, size);
  uint64_t stored;
  std::memcpy(&stored, bytes + size - 8, 8);
  if (stored != fnv1a64(bytes, size - 8))
    return fail(SYNPL_RT_ERR_FORMAT,
                "%s: corrupt or truncated checkpoint (checksum mismatch)", path);
  r.size = size - 8;
  uint64_t w[kFixedWords - 2];
  for (uint64_t &v : w)
    r.word(v);
  c.fingerprint = w[0];
  c.epoch = (int64_t)w[1];
  c.batch = (int64_t)w[2];
  c.globalStep = (int64_t)w[3];
  c.stepsPerEpoch = (int64_t)w[4];
  std::memcpy(&c.lossSum, &w[5], 8);
  c.lossCount = (int64_t)w[6];
  uint64_t n;
  bool ok = r.word(n) && n <= (r.size - r.at) / 8;
  c.data.assign(ok ? n : 0, 0);
  for (uint64_t i = 0; ok && i < n; ++i)
    ok = r.word(c.data[i]);
  uint64_t m = 0;
  ok = ok && r.word(m) && m <= (r.size - r.at) / 16;
  c.blobs.clear();
  for (uint64_t i = 0; ok && i < m; ++i) {
    CheckpointBlob b;
    uint64_t len;
    ok = r.word(b.id) && r.word(len) && r.raw(b.bytes, len);
    if (ok)
      c.blobs.push_back(std::move(b));
  }
  if (!ok || r.at != r.size || c.epoch < 0 || c.batch < 0 || c.globalStep < 0)
    return fail(SYNPL_RT_ERR_FORMAT, "%s: malformed checkpoint (fields disagree with its size)",
                path);
  return checkFields(path, c);
}

int32_t synpl::rt::writeCheckpoint(const char *path, const Checkpoint &c) {
  std::vector<uint8_t> bytes = encodeCheckpoint(c);
  std::string tmp = std::string(path) + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return fail(SYNPL_RT_ERR_IO, "cannot write checkpoint %s: %s: %s", path, tmp.c_str(),
                std::strerror(errno));
  int err = writeAll(fd, bytes.data(), bytes.size());
  if (!err && ::fsync(fd) != 0)
    err = errno;
  if (::close(fd) != 0 && !err)
    err = errno;
  if (err) {
    ::unlink(tmp.c_str());
    return fail(SYNPL_RT_ERR_IO, "cannot write checkpoint %s: %s: %s", path, tmp.c_str(),
                std::strerror(err));
  }
  if (::rename(tmp.c_str(), path) != 0) {
    err = errno;
    ::unlink(tmp.c_str());
    return fail(SYNPL_RT_ERR_IO, "cannot write checkpoint %s: rename from %s: %s", path,
                tmp.c_str(), std::strerror(err));
  }
  // The rename is durable once the directory entry is.
  std::string dir = directoryOf(path);
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return SYNPL_RT_OK;
}

int32_t synpl::rt::readCheckpoint(const char *path, Checkpoint &c) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail(SYNPL_RT_ERR_IO, "%s: cannot open checkpoint: %s", path, std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(SYNPL_RT_ERR_IO, "%s: cannot read checkpoint: not a regular file", path);
  }
  std::vector<uint8_t> bytes((size_t)st.st_size);
  uint64_t got = 0;
  while (got < bytes.size()) {
    ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    got += (uint64_t)n;
  }
  ::close(fd);
  if (got != bytes.size())
    return fail(SYNPL_RT_ERR_IO, "%s: cannot read checkpoint: short read", path);
  return decodeCheckpoint(path, bytes.data(), bytes.size(), c);
}
