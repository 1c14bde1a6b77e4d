//===- Metrics.cpp - --metrics FILE: the run's numbers as JSON lines ------===//

#include "ExecutorImpl.h"

#include <cerrno>
#include <cmath>
#include <cstring>

namespace synpl::rt::exec {

namespace {
/// A JSON number, or null for NaN and infinities (JSON has neither).
void number(char *buf, size_t cap, double v, const char *format = "%.9g") {
  if (std::isfinite(v))
    std::snprintf(buf, cap, format, v);
  else
    std::snprintf(buf, cap, "null");
}
} // namespace

MetricsLog::~MetricsLog() {
  if (file)
    std::fclose(file);
}

int32_t MetricsLog::open(const std::string &path, int64_t samples) {
  file = std::fopen(path.c_str(), "a");
  if (!file)
    return fail(SYNPL_RT_ERR_IO, "--metrics %s: %s", path.c_str(), std::strerror(errno));
  samplesPerStep = samples > 0 ? samples : 1;
  startNs = epochNs = nowNanos();
  return SYNPL_RT_OK;
}

void MetricsLog::line(const char *text) {
  std::fputs(text, file);
  std::fputc('\n', file);
  std::fflush(file);
}

void MetricsLog::beginEpoch(int64_t firstStep) {
  epochNs = nowNanos();
  epochFirstStep = firstStep;
}

void MetricsLog::step(int64_t step, int64_t epoch, double loss) {
  if (!file)
    return;
  uint64_t now = nowNanos();
  double epochSeconds = (now - epochNs) * 1e-9;
  double rate = epochSeconds > 0
                    ? double(step - epochFirstStep) * double(samplesPerStep) / epochSeconds
                    : NAN;
  char l[32], r[32], text[256];
  number(l, sizeof(l), loss);
  number(r, sizeof(r), rate, "%.1f");
  std::snprintf(text, sizeof(text),
                "{\"kind\":\"step\",\"step\":%lld,\"epoch\":%lld,\"loss\":%s,"
                "\"samples_per_s\":%s,\"time_s\":%.3f}",
                (long long)step, (long long)epoch, l, r, (now - startNs) * 1e-9);
  line(text);
}

void MetricsLog::epoch(int64_t epoch, int64_t step, double loss, double accuracy,
                       double samplesPerS) {
  if (!file)
    return;
  char l[32], a[32], r[32], text[320];
  number(l, sizeof(l), loss);
  number(a, sizeof(a), accuracy);
  number(r, sizeof(r), samplesPerS, "%.1f");
  std::snprintf(text, sizeof(text),
                "{\"kind\":\"epoch\",\"epoch\":%lld,\"step\":%lld,\"loss\":%s,"
                "\"test_accuracy\":%s,\"samples_per_s\":%s,\"time_s\":%.3f}",
                (long long)epoch, (long long)step, l, a, r, (nowNanos() - startNs) * 1e-9);
  line(text);
}

void MetricsLog::eval(int64_t step, double loss, double valLoss, double tokensPerS) {
  if (!file)
    return;
  char l[32], v[32], r[32], text[320];
  number(l, sizeof(l), loss);
  number(v, sizeof(v), valLoss);
  number(r, sizeof(r), tokensPerS, "%.1f");
  std::snprintf(text, sizeof(text),
                "{\"kind\":\"eval\",\"step\":%lld,\"loss\":%s,\"val_loss\":%s,"
                "\"tokens_per_s\":%s,\"time_s\":%.3f}",
                (long long)step, l, v, r, (nowNanos() - startNs) * 1e-9);
  line(text);
}

void MetricsLog::done(int64_t steps, double valLoss, double tokensPerS) {
  if (!file)
    return;
  char v[32], b[32], r[32], text[320];
  number(v, sizeof(v), valLoss);
  number(b, sizeof(b), valLoss / std::log(2.0));
  number(r, sizeof(r), tokensPerS, "%.1f");
  std::snprintf(text, sizeof(text),
                "{\"kind\":\"done\",\"step\":%lld,\"val_loss\":%s,\"val_bits_per_byte\":%s,"
                "\"tokens_per_s\":%s,\"time_s\":%.3f}",
                (long long)steps, v, b, r, (nowNanos() - startNs) * 1e-9);
  line(text);
}

} // namespace synpl::rt::exec
