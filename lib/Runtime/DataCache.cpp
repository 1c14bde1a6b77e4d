//===- DataCache.cpp - Decoded data files kept for the next run ------------===//
//
// Inflating a gzip'd data set is most of a program's start-up (the 26 MB
// Fashion-MNIST images take ~150 ms; a training step takes ~3 ms). A
// gzip'd IDX file of at least kMinBytes decoded bytes is therefore kept,
// decoded, in the cache folder -- $SYNPL_CACHE_DIR/data, else
// $XDG_CACHE_HOME/synpl/data, else ~/.cache/synpl/data; SYNPL_DATA_CACHE=0
// turns it off -- and a later run maps the entry instead of reading and
// inflating the file: start-up no longer grows with the data set.
//
// An entry is named by a hash of the source's identity and holds it in its
// header: path, device, inode, size, modification and status-change times
// (nanoseconds; the status-change time cannot be set back by a user) and
// the gzip trailer (CRC-32 and length of the data). An entry is used only
// when all of them match the file as it is now, and its layout (the IDX
// header fields, then the data in host order at a page boundary) checks
// out against its own size. Entries are written whole or not at all (a
// temporary, then rename). The cache can make a start faster, never a
// result different: anything that does not match falls back to the file.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace synpl::rt {

namespace {

/// Decoded files smaller than this inflate faster than the cache pays back.
constexpr uint64_t kMinBytes = 1 << 20;
/// The data of an entry starts here (a page: mapped data stays aligned).
constexpr uint64_t kDataOffset = 4096;
constexpr char kMagic[16] = "synpl-data-v1";

} // namespace

/// What identifies a source file's contents, and what an entry records.
struct DataCacheSource::Header {
  char magic[16];
  uint64_t dev, ino, size, mtimeNs, ctimeNs;
  uint8_t trailer[8];
  // The decoded IDX.
  uint32_t idxMagic, type, ndims, pad;
  uint32_t dims[SYNPL_RT_IDX_MAX_DIMS];
  uint64_t elements, bytes;
  char path[3072]; // longer paths are not cached
};
static_assert(sizeof(DataCacheSource::Header) <= kDataOffset,
              "the entry header fits before the data");

namespace {
using Header = DataCacheSource::Header;

uint64_t hashBytes(const void *data, uint64_t n) {
  const auto *p = static_cast<const uint8_t *>(data);
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint64_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string cacheFolder() {
  if (const char *off = std::getenv("SYNPL_DATA_CACHE"); off && std::strcmp(off, "0") == 0)
    return "";
  std::string dir;
  if (const char *d = std::getenv("SYNPL_CACHE_DIR"); d && *d)
    dir = d;
  else if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x)
    dir = std::string(x) + "/synpl";
  else if (const char *h = std::getenv("HOME"); h && *h)
    dir = std::string(h) + "/.cache/synpl";
  else
    return "";
  return dir + "/data";
}

/// mkdir -p; false when the folder cannot be made.
bool makeFolders(const std::string &dir) {
  for (size_t at = 1; at <= dir.size(); ++at) {
    if (at != dir.size() && dir[at] != '/')
      continue;
    std::string prefix = dir.substr(0, at);
    if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
      return false;
  }
  struct stat st;
  return stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

/// The identity of `path` as it is now (false: not a cacheable file).
bool identify(const char *path, Header &h) {
  std::memset(&h, 0, sizeof(h));
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  char real[PATH_MAX];
  if (!realpath(path, real))
    return false;
  if (std::strlen(real) >= sizeof(h.path))
    return false;
  std::strncpy(h.path, real, sizeof(h.path) - 1);
  int fd = open(real, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  struct stat st;
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 18 &&
            pread(fd, h.trailer, 8, st.st_size - 8) == 8;
  uint8_t gzMagic[2] = {0, 0};
  ok = ok && pread(fd, gzMagic, 2, 0) == 2 && gzMagic[0] == 0x1f && gzMagic[1] == 0x8b;
  close(fd);
  if (!ok)
    return false;
  h.dev = uint64_t(st.st_dev);
  h.ino = uint64_t(st.st_ino);
  h.size = uint64_t(st.st_size);
  h.mtimeNs = uint64_t(st.st_mtim.tv_sec) * 1000000000ull + uint64_t(st.st_mtim.tv_nsec);
  h.ctimeNs = uint64_t(st.st_ctim.tv_sec) * 1000000000ull + uint64_t(st.st_ctim.tv_nsec);
  return true;
}

/// The fields of the source's identity, compared and hashed together.
bool sameSource(const Header &a, const Header &b) {
  return std::memcmp(a.magic, b.magic, sizeof(a.magic)) == 0 && a.dev == b.dev &&
         a.ino == b.ino && a.size == b.size && a.mtimeNs == b.mtimeNs &&
         a.ctimeNs == b.ctimeNs && std::memcmp(a.trailer, b.trailer, 8) == 0 &&
         std::strncmp(a.path, b.path, sizeof(a.path)) == 0;
}

std::string entryOf(const std::string &dir, const Header &h) {
  uint64_t key = hashBytes(h.path, std::strlen(h.path));
  const uint64_t parts[] = {h.dev, h.ino, h.size, h.mtimeNs, h.ctimeNs};
  key ^= hashBytes(parts, sizeof(parts)) * 31 + hashBytes(h.trailer, 8);
  char name[40];
  std::snprintf(name, sizeof(name), "/%016llx.idx", (unsigned long long)key);
  return dir + name;
}

} // namespace

DataCacheSource::DataCacheSource(const char *path) : folder(cacheFolder()) {
  auto now = std::make_unique<Header>();
  if (folder.empty() || !identify(path, *now))
    return;
  entry = entryOf(folder, *now);
  identity = std::move(now);
}

DataCacheSource::~DataCacheSource() = default;

bool DataCacheSource::load(uint32_t expectedMagic, synpl_rt_idx *out) const {
  if (!identity)
    return false;
  int fd = open(entry.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  Header h;
  struct stat st;
  bool ok = fstat(fd, &st) == 0 && pread(fd, &h, sizeof(h), 0) == ssize_t(sizeof(h)) &&
            sameSource(h, *identity) && h.ndims >= 1 && h.ndims <= SYNPL_RT_IDX_MAX_DIMS &&
            h.bytes > 0 && uint64_t(st.st_size) == kDataOffset + h.bytes &&
            (!expectedMagic || h.idxMagic == expectedMagic);
  uint64_t elements = 1;
  for (uint32_t d = 0; ok && d < h.ndims; ++d)
    elements *= h.dims[d];
  ok = ok && elements == h.elements;
  void *map = MAP_FAILED;
  if (ok)
    map = mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED)
    return false;
  std::memset(out, 0, sizeof(*out));
  out->data = static_cast<uint8_t *>(map) + kDataOffset;
  out->elements = h.elements;
  out->bytes = h.bytes;
  out->magic = h.idxMagic;
  out->type = h.type;
  out->ndims = h.ndims;
  std::memcpy(out->dims, h.dims, sizeof(h.dims));
  out->mapped = 1;
  return true;
}

void DataCacheSource::store(const synpl_rt_idx &idx) const {
  if (!identity || idx.bytes < kMinBytes || !makeFolders(folder))
    return;
  Header h = *identity;
  h.idxMagic = idx.magic;
  h.type = idx.type;
  h.ndims = idx.ndims;
  std::memcpy(h.dims, idx.dims, sizeof(h.dims));
  h.elements = idx.elements;
  h.bytes = idx.bytes;
  // The header, padded to the data's page.
  std::vector<uint8_t> head(kDataOffset, 0);
  std::memcpy(head.data(), &h, sizeof(h));
  std::string tmp = entry + ".tmp." + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return;
  bool ok = writeAll(fd, head.data(), head.size()) == 0 &&
            writeAll(fd, idx.data, idx.bytes) == 0;
  ok = close(fd) == 0 && ok;
  if (!ok || rename(tmp.c_str(), entry.c_str()) != 0)
    unlink(tmp.c_str());
}

void dataCacheRelease(synpl_rt_idx *idx) {
  munmap(idx->data - kDataOffset, size_t(kDataOffset + idx->bytes));
}

} // namespace synpl::rt
