/*===- FullDisk.c - A disk that fills up, for the fault-injection tests ---===*
 *
 * Preloaded (LD_PRELOAD) into a training program, this makes the files whose
 * path contains $SYNPL_FULL_DISK_MATCH behave like files on a full disk:
 * after $SYNPL_FULL_DISK_AFTER bytes (default 0) written to one of them,
 * write() writes what still fits and then fails with ENOSPC, as write(2)
 * does when a filesystem fills. Every other file is untouched. Test-only;
 * never installed.
 *
 *===----------------------------------------------------------------------===*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define MAX_FDS 4096

static unsigned char full[MAX_FDS];
static unsigned long long written[MAX_FDS];

static int matches(const char *path) {
  const char *match = getenv("SYNPL_FULL_DISK_MATCH");
  return path && match && *match && strstr(path, match) != NULL;
}

static unsigned long long allowance(void) {
  const char *after = getenv("SYNPL_FULL_DISK_AFTER");
  return after ? strtoull(after, NULL, 10) : 0;
}

static int track(int fd, const char *path) {
  if (fd >= 0 && fd < MAX_FDS) {
    full[fd] = (unsigned char)matches(path);
    written[fd] = 0;
  }
  return fd;
}

#define OPEN_WRAPPER(name)                                                     \
  int name(const char *path, int flags, ...) {                                 \
    static int (*real)(const char *, int, ...);                                \
    if (!real)                                                                 \
      real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, #name);         \
    mode_t mode = 0;                                                           \
    if (flags & (O_CREAT | O_TMPFILE)) {                                       \
      va_list ap;                                                              \
      va_start(ap, flags);                                                     \
      mode = (mode_t)va_arg(ap, int);                                          \
      va_end(ap);                                                              \
    }                                                                          \
    return track(real(path, flags, mode), path);                               \
  }
OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)

#define OPENAT_WRAPPER(name)                                                   \
  int name(int dirfd, const char *path, int flags, ...) {                      \
    static int (*real)(int, const char *, int, ...);                           \
    if (!real)                                                                 \
      real = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, #name);    \
    mode_t mode = 0;                                                           \
    if (flags & (O_CREAT | O_TMPFILE)) {                                       \
      va_list ap;                                                              \
      va_start(ap, flags);                                                     \
      mode = (mode_t)va_arg(ap, int);                                          \
      va_end(ap);                                                              \
    }                                                                          \
    return track(real(dirfd, path, flags, mode), path);                        \
  }
OPENAT_WRAPPER(openat)
OPENAT_WRAPPER(openat64)

ssize_t write(int fd, const void *buf, size_t count) {
  static ssize_t (*real)(int, const void *, size_t);
  if (!real)
    real = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
  if (fd < 0 || fd >= MAX_FDS || !full[fd])
    return real(fd, buf, count);
  unsigned long long limit = allowance();
  unsigned long long room = written[fd] < limit ? limit - written[fd] : 0;
  if (room == 0) {
    errno = ENOSPC;
    return -1;
  }
  ssize_t n = real(fd, buf, count < room ? count : (size_t)room);
  if (n > 0)
    written[fd] += (unsigned long long)n;
  return n;
}

int close(int fd) {
  static int (*real)(int);
  if (!real)
    real = (int (*)(int))dlsym(RTLD_NEXT, "close");
  if (fd >= 0 && fd < MAX_FDS)
    full[fd] = 0;
  return real(fd);
}
