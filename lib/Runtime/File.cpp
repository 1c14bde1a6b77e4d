//===- File.cpp - Storage to RAM reads ------------------------------------===//
//
// Whole-file reads with a pread loop (EINTR and short reads handled), or a
// private read-only mapping prefaulted with MAP_POPULATE and advised
// MADV_SEQUENTIAL. Every failure names the file and gives errno's text.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace synpl::rt;

namespace {

/// Opens `path` read-only and checks it is a regular file.
int32_t openRegular(const char *path, int &fd, uint64_t &size) {
  if (!path)
    return fail(SYNPL_RT_ERR_INVALID, "file read: null path");
  do
    // O_NONBLOCK: a FIFO must not hang the open; regular reads ignore it.
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  while (fd < 0 && errno == EINTR);
  if (fd < 0)
    return failErrno(path, "cannot open", errno);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    return failErrno(path, "cannot stat", err);
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return fail(SYNPL_RT_ERR_IO, "%s: not a regular file", path);
  }
  size = uint64_t(st.st_size);
  return SYNPL_RT_OK;
}

/// Reads exactly `bytes` at `offset`; `got` says how many arrived before EOF.
int32_t preadAll(int fd, const char *path, uint64_t offset, uint8_t *dst,
                 uint64_t bytes, uint64_t &got) {
  got = 0;
  while (got < bytes) {
    // Linux transfers at most 0x7ffff000 bytes per call.
    size_t chunk = size_t(bytes - got < (uint64_t(1) << 30) ? bytes - got
                                                            : uint64_t(1) << 30);
    ssize_t n = pread(fd, dst + got, chunk, off_t(offset + got));
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return failErrno(path, "read failed", errno);
    }
    if (n == 0)
      break; // EOF
    got += uint64_t(n);
  }
  return SYNPL_RT_OK;
}

} // namespace

int synpl::rt::writeAll(int fd, const uint8_t *p, uint64_t n) {
  while (n) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return errno;
    }
    p += w;
    n -= (uint64_t)w;
  }
  return 0;
}

extern "C" {

int32_t synpl_rt_file_size(const char *path, uint64_t *size) {
  if (!size)
    return fail(SYNPL_RT_ERR_INVALID, "file size: null output");
  int fd;
  int32_t st = openRegular(path, fd, *size);
  if (st == SYNPL_RT_OK)
    close(fd);
  return st;
}

int32_t synpl_rt_file_read(const char *path, synpl_rt_buffer *out) {
  if (!out)
    return fail(SYNPL_RT_ERR_INVALID, "file read: null output");
  *out = synpl_rt_buffer{};
  int fd;
  uint64_t size;
  if (int32_t st = openRegular(path, fd, size))
    return st;
  auto *data = static_cast<uint8_t *>(alignedAlloc(size));
  if (!data) {
    close(fd);
    return fail(SYNPL_RT_ERR_NOMEM, "%s: cannot allocate %llu bytes", path,
                (unsigned long long)size);
  }
  uint64_t got;
  int32_t st = preadAll(fd, path, 0, data, size, got);
  close(fd);
  if (st == SYNPL_RT_OK && got != size)
    st = fail(SYNPL_RT_ERR_IO, "%s: file shrank while reading (%llu of %llu bytes)",
              path, (unsigned long long)got, (unsigned long long)size);
  if (st != SYNPL_RT_OK) {
    alignedFree(data);
    return st;
  }
  out->data = data;
  out->size = size;
  return SYNPL_RT_OK;
}

int32_t synpl_rt_file_map(const char *path, synpl_rt_buffer *out) {
  if (!out)
    return fail(SYNPL_RT_ERR_INVALID, "file map: null output");
  *out = synpl_rt_buffer{};
  int fd;
  uint64_t size;
  if (int32_t st = openRegular(path, fd, size))
    return st;
  if (size == 0) {
    close(fd);
    out->mapped = 1;
    return SYNPL_RT_OK;
  }
  void *mem = mmap(nullptr, size_t(size), PROT_READ, MAP_PRIVATE | MAP_POPULATE,
                   fd, 0);
  int err = errno;
  close(fd);
  if (mem == MAP_FAILED)
    return failErrno(path, "cannot map", err);
  madvise(mem, size_t(size), MADV_SEQUENTIAL);
  out->data = static_cast<uint8_t *>(mem);
  out->size = size;
  out->mapped = 1;
  return SYNPL_RT_OK;
}

void synpl_rt_buffer_release(synpl_rt_buffer *buffer) {
  if (!buffer)
    return;
  if (buffer->mapped) {
    if (buffer->data)
      munmap(buffer->data, size_t(buffer->size));
  } else {
    alignedFree(buffer->data);
  }
  *buffer = synpl_rt_buffer{};
}

int32_t synpl_rt_dma_ssd_to_ram(const char *path, uint64_t offset, void *dst,
                                uint64_t bytes) {
  if (!dst && bytes != 0)
    return fail(SYNPL_RT_ERR_INVALID, "%s: read into a null buffer",
                path ? path : "(null)");
  int fd;
  uint64_t size;
  if (int32_t st = openRegular(path, fd, size))
    return st;
  uint64_t got;
  int32_t st = preadAll(fd, path, offset, static_cast<uint8_t *>(dst), bytes, got);
  close(fd);
  if (st == SYNPL_RT_OK && got != bytes)
    st = fail(SYNPL_RT_ERR_FORMAT,
              "%s: truncated: %llu bytes wanted at offset %llu, file has %llu",
              path, (unsigned long long)bytes, (unsigned long long)offset,
              (unsigned long long)size);
  return st;
}

} // extern "C"
