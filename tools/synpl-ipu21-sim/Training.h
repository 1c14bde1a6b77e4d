//===- Training.h - A training program's steps under the executor -*- C++ -*-===//
//
// A program file with a host side (Program::hostTable) is a whole training
// program: the runtime's executor (synpl_rt_main_device) runs its epoch
// loop, data, inits, evaluation, reports and checkpoints exactly as for a
// compiled host program, and this simulator is its device. Slot S is
// tensor S: an ingest's batch is queued for the StreamIn of stream S, a
// report is read from the last StreamOut of stream S, every other slot is
// written and read as its tensor.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TOOLS_IPU21_SIM_TRAINING_H
#define SYNPL_TOOLS_IPU21_SIM_TRAINING_H

#include "synpl/Target/IPU21/Program.h"
#include "synpl/Target/IPU21/Simulator.h"

#include <deque>
#include <map>
#include <string>
#include <vector>

namespace synpl::ipu21::sim {

/// Values queued per host stream, each item one StreamIn's.
using StreamQueues = std::map<std::string, std::deque<std::vector<double>>, std::less<>>;
/// A stream source that takes each stream's items from `queues` in order
/// (false: that stream has none left).
Simulator::StreamSource queuedSource(StreamQueues &queues);

/// How the steps went, for the summary after the run.
struct TrainingSummary {
  int64_t trainSteps = 0, evalSteps = 0;
  int64_t trainCycles = 0, evalCycles = 0;
};

/// Runs the executor over `program`'s host side on `sim` with the command
/// line `args` (args[0] the program's name in messages); returns its exit
/// status (0: the run ended).
int runTraining(const Program &program, Simulator &sim, const std::vector<std::string> &args,
                TrainingSummary &summary);

} // namespace synpl::ipu21::sim

#endif // SYNPL_TOOLS_IPU21_SIM_TRAINING_H
