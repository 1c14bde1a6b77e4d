//===- Signals.cpp - SIGTERM, SIGINT, SIGHUP stop a run gracefully -------===//
//
// The stop flag and its handlers (Signals.h). The handler is async-signal
// safe: a lock-free atomic exchange, and for a second signal sigaction and
// raise. It masks all three signals while it runs, so on one thread the
// handlers never interleave; the worker threads block them
// (Workers.cpp), so they are handled by the thread that trains.
//
//===----------------------------------------------------------------------===//
#include "Signals.h"

#include <atomic>
#include <cerrno>
#include <cstdio>

namespace synpl::rt::exec {

namespace {

std::atomic<int> stopRequested{0};
static_assert(std::atomic<int>::is_always_lock_free,
              "the stop flag is written by a signal handler");

extern "C" void onStopSignal(int sig) {
  int saved = errno;
  int none = 0;
  if (!stopRequested.compare_exchange_strong(none, sig)) {
    // A second signal while stopping: its default action, now. It is
    // masked while this handler runs, so it is delivered, and ends the
    // process, as the handler returns.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, nullptr);
    raise(sig);
  }
  errno = saved;
}

} // namespace

StopSignals::StopSignals() {
  stopRequested.store(0);
  struct sigaction sa {};
  sa.sa_handler = onStopSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : kStopSignals)
    sigaddset(&sa.sa_mask, sig);
  // Interrupted reads and writes (data, checkpoints, progress) resume.
  sa.sa_flags = SA_RESTART;
  for (int i = 0; i < kNumStopSignals; ++i) {
    if (sigaction(kStopSignals[i], nullptr, &previous[i]) != 0)
      continue;
    if (!(previous[i].sa_flags & SA_SIGINFO) && previous[i].sa_handler == SIG_IGN)
      continue; // ignored when the run started: stays ignored
    installed[i] = sigaction(kStopSignals[i], &sa, nullptr) == 0;
  }
}

StopSignals::~StopSignals() {
  for (int i = 0; i < kNumStopSignals; ++i)
    if (installed[i])
      sigaction(kStopSignals[i], &previous[i], nullptr);
}

bool StopSignals::handles(int sig) const {
  for (int i = 0; i < kNumStopSignals; ++i)
    if (kStopSignals[i] == sig)
      return installed[i];
  return false;
}

int stopSignal() { return stopRequested.load(std::memory_order_relaxed); }

std::string signalName(int sig) {
  if (sig == SIGTERM)
    return "SIGTERM";
  if (sig == SIGINT)
    return "SIGINT";
  if (sig == SIGHUP)
    return "SIGHUP";
  return "signal " + std::to_string(sig);
}

int reportStop(int sig, const std::string &where, const std::string &checkpointPath) {
  std::string name = signalName(sig);
  if (checkpointPath.empty())
    std::fprintf(stderr,
                 "synpl: stopped by %s after %s; no checkpoint configured (--checkpoint "
                 "FILE keeps the state)\n",
                 name.c_str(), where.c_str());
  else
    std::fprintf(stderr,
                 "synpl: stopped by %s after %s; checkpoint written to %s; resume with "
                 "--resume %s\n",
                 name.c_str(), where.c_str(), checkpointPath.c_str(),
                 checkpointPath.c_str());
  std::fflush(stderr);
  return 128 + sig;
}

} // namespace synpl::rt::exec
