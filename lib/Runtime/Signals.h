//===- Signals.h - SIGTERM, SIGINT, SIGHUP stop a run gracefully -*- C++ -*-===//
//
// A training executable asked to stop (SIGTERM from a scheduler, SIGINT
// from Ctrl-C, SIGHUP from a closed terminal) finishes the training step in progress, writes a checkpoint
// there when the run has a checkpoint file, says so in one line on stderr
// and exits with status 128 + the signal (143, 130, 129). The handlers only set
// a flag; the training loops (EpochLoop.cpp, StreamLoop.cpp) read it
// between steps. A second signal while stopping takes the signal's default
// action at once (the process dies of it): a checkpoint being written then
// is FILE.tmp, and FILE, renamed over only once complete, still holds the
// previous checkpoint. See docs/training.md, "Stopping a run".
//
// The handlers are installed only by synpl_rt_main, around the executor's
// run, and the previous dispositions are restored when it returns: the
// runtime used as a library installs nothing. A signal the process ignored
// when the run started (SIG_IGN: `nohup`, a background job of a script)
// stays ignored. Internal to lib/Runtime (and its unit tests).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_RUNTIME_SIGNALS_H
#define SYNPL_RUNTIME_SIGNALS_H

#include <csignal>
#include <string>

namespace synpl::rt::exec {

/// The signals that stop a run.
constexpr int kStopSignals[] = {SIGTERM, SIGINT, SIGHUP};
constexpr int kNumStopSignals = sizeof(kStopSignals) / sizeof(kStopSignals[0]);

/// SIGTERM, SIGINT and SIGHUP handlers for the object's lifetime (one at a time in
/// a process); the destructor restores the dispositions it replaced. The
/// stop flag starts clear.
class StopSignals {
public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals &) = delete;
  StopSignals &operator=(const StopSignals &) = delete;
  /// Whether `sig` (one of kStopSignals) has the stop handler now (false
  /// where it was ignored and stays so).
  bool handles(int sig) const;

private:
  struct sigaction previous[kNumStopSignals];
  bool installed[kNumStopSignals] = {};
};

/// The signal that asked the run to stop (one of kStopSignals), or 0: one
/// atomic load, read by the training loops between steps.
int stopSignal();

/// "SIGTERM", "SIGINT", "SIGHUP" (else "signal N").
std::string signalName(int sig);

/// The end of a run stopped by `sig`, once the state is saved: one line on
/// stderr,
///   synpl: stopped by SIGTERM after WHERE; checkpoint written to FILE; resume with --resume FILE
/// (without a checkpoint file: `...; no checkpoint configured (--checkpoint
/// FILE keeps the state)`); returns the exit status, 128 + `sig`.
int reportStop(int sig, const std::string &where, const std::string &checkpointPath);

} // namespace synpl::rt::exec

#endif // SYNPL_RUNTIME_SIGNALS_H
