//===- Report.cpp - Failure exit and training progress lines --------------===//

#include "Internal.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <unistd.h>

using namespace synpl::rt;

namespace {

void writeAll(int fd, const char *data, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, data, len);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return; // nowhere left to report to
    }
    data += n;
    len -= size_t(n);
  }
}

// h:mm:ss
void formatDuration(char *buf, size_t cap, double seconds) {
  if (!(seconds >= 0) || seconds > 1e9) {
    std::snprintf(buf, cap, "?");
    return;
  }
  uint64_t s = uint64_t(seconds + 0.5);
  std::snprintf(buf, cap, "%llu:%02llu:%02llu", (unsigned long long)(s / 3600),
                (unsigned long long)(s / 60 % 60), (unsigned long long)(s % 60));
}

} // namespace

struct synpl_rt_progress {
  uint64_t total = 0, samplesPerStep = 0;
  uint64_t intervalNs = 0;
  int32_t fd = 2;
  uint64_t startNs = 0, lastNs = 0;
  bool printed = false;
};

namespace {
char worldPrefix[64];
void (*worldEnd)(int) = nullptr;
} // namespace

void synpl::rt::setRunWorld(const char *prefix, void (*endWorld)(int)) {
  std::snprintf(worldPrefix, sizeof worldPrefix, "%s", prefix ? prefix : "");
  worldEnd = endWorld;
}

const char *synpl::rt::errorPrefix() { return worldPrefix; }

extern "C" {

void synpl_rt_check(int32_t status) {
  if (status == SYNPL_RT_OK)
    return;
  char line[1200];
  const char *msg = synpl_rt_last_error();
  int len = std::snprintf(line, sizeof(line), "synpl: error: %s%s\n", worldPrefix,
                          *msg ? msg : synpl_rt_status_name(status));
  if (len > int(sizeof(line)) - 1)
    len = int(sizeof(line)) - 1;
  writeAll(2, line, size_t(len));
  if (worldEnd)
    worldEnd(1); // does not return
  std::exit(1);
}

uint64_t synpl_rt_progress_format(char *buf, uint64_t cap, uint64_t step,
                                  uint64_t total_steps,
                                  uint64_t samples_per_step, double loss,
                                  double elapsed_s) {
  if (!buf || cap == 0)
    return 0;
  double pct = total_steps ? 100.0 * double(step) / double(total_steps) : 0.0;
  double rate = elapsed_s > 0 ? double(step) * double(samples_per_step) / elapsed_s
                              : 0.0;
  char elapsed[32], eta[32];
  formatDuration(elapsed, sizeof(elapsed), elapsed_s);
  if (step > 0 && elapsed_s > 0 && total_steps >= step)
    formatDuration(eta, sizeof(eta),
                   elapsed_s / double(step) * double(total_steps - step));
  else
    std::snprintf(eta, sizeof(eta), "?");
  int len = std::snprintf(
      buf, size_t(cap), "step %llu/%llu (%.1f%%)  loss %.6f  %.0f samples/s  "
                        "elapsed %s  eta %s",
      (unsigned long long)step, (unsigned long long)total_steps, pct, loss, rate,
      elapsed, eta);
  if (len < 0)
    return 0;
  return uint64_t(len) < cap ? uint64_t(len) : cap - 1;
}

synpl_rt_progress *synpl_rt_progress_create(uint64_t total_steps,
                                            uint64_t samples_per_step,
                                            double interval_s, int32_t fd) {
  if (!(interval_s >= 0) || fd < 0) {
    fail(SYNPL_RT_ERR_INVALID, "progress: bad interval or descriptor");
    return nullptr;
  }
  auto *p = new (std::nothrow) synpl_rt_progress();
  if (!p) {
    fail(SYNPL_RT_ERR_NOMEM, "progress: out of memory");
    return nullptr;
  }
  p->total = total_steps;
  p->samplesPerStep = samples_per_step;
  p->intervalNs = uint64_t(interval_s * 1e9);
  p->fd = fd;
  p->startNs = p->lastNs = nowNanos();
  return p;
}

void synpl_rt_progress_destroy(synpl_rt_progress *progress) { delete progress; }

int32_t synpl_rt_progress_step(synpl_rt_progress *p, uint64_t step, double loss) {
  if (!p)
    return 0;
  uint64_t now = nowNanos();
  bool last = step >= p->total;
  if (!last && p->printed && now - p->lastNs < p->intervalNs)
    return 0;
  if (!last && !p->printed && now - p->startNs < p->intervalNs)
    return 0;
  char line[256];
  uint64_t len = synpl_rt_progress_format(line, sizeof(line) - 1, step, p->total,
                                          p->samplesPerStep, loss,
                                          double(now - p->startNs) * 1e-9);
  line[len++] = '\n';
  writeAll(p->fd, line, size_t(len));
  p->lastNs = now;
  p->printed = true;
  return 1;
}

} // extern "C"
