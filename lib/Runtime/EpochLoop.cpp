//===- EpochLoop.cpp - The training loop of epochs over a data set -------===//
//
// Executor::run: the loop of a program that reads IDX data (a program that
// reads text runs StreamLoop.cpp's instead). Each epoch trains on every
// batch of the training split in the epoch's order (capped by --steps),
// then evaluates on the test split (only the entries the `correct` report
// depends on, the state read-only) and prints
//
//   epoch=E loss=L test_accuracy=A samples_per_s=S
//
// Checkpoints (--checkpoint, --checkpoint-every N, --resume;
// ExecutorCheckpoint.cpp) are written every N update steps inside an epoch
// and at the end of every epoch (after its evaluation); --resume continues
// at the exact next batch.
//
// An epoch that ends with a non-finite mean loss or NaN or infinity in the
// actor state stops the run (exit status 1) before its evaluation, line
// and checkpoint (Finite.cpp; --check-finite names the kernel).
//
// SIGTERM and SIGINT (Signals.h) stop the run at the next safe point: after
// the training step in progress, with a checkpoint there (as a mid-epoch
// one), or, when the signal comes during an epoch's last step or its
// evaluation, at the end of that epoch (the evaluation is not cut short).
// The exit status is then 128 + the signal. See docs/training.md.
//
// In a data-parallel run (several ranks, ExecutorCollectives.cpp) every
// rank runs this loop over its shard of the data; the epoch line, the
// metrics, the checkpoints and the profile are rank 0's, its loss and
// accuracy the world's (summed over the ranks), and a stop signal stops
// every rank after the same step.
//
//===----------------------------------------------------------------------===//
#include "ExecutorImpl.h"
#include "Signals.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <string>

namespace synpl::rt::exec {

std::string orNone(double v, const char *format) {
  if (std::isnan(v))
    return "none";
  char text[64];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

int Executor::run() {
  if (planReadsText(p))
    return runStream();
  // Every ingest must agree on the number of batches per epoch.
  int64_t trainBatches = -1, testBatches = -1;
  bool hasTest = !ingests.empty();
  for (Ingest &g : ingests) {
    int64_t n = numBatches(g.train, g.desc->batch, g.desc->drop_last);
    trainBatches = trainBatches < 0 ? n : std::min(trainBatches, n);
    hasTest = hasTest && g.hasTest;
    if (g.hasTest) {
      int64_t t = numBatches(g.test, g.desc->batch, /*dropLast=*/false);
      testBatches = testBatches < 0 ? t : std::min(testBatches, t);
    }
  }
  if (trainBatches < 0)
    trainBatches = 1; // no data: one step per epoch (openData refused a split
                      // of fewer samples than one batch)
  int64_t steps = o.maxSteps > 0 ? std::min(o.maxSteps, trainBatches) : trainBatches;
  if (o.evalBatches > 0 && testBatches > 0)
    testBatches = std::min(testBatches, o.evalBatches);
  bool canEval = hasTest && correctReport >= 0 && testBatches > 0;
  // Resuming: the state as the checkpoint left it, then the run's length
  // (planned_steps follows this run's flags, like every other default).
  Checkpoint resumed;
  bool isResumed = !o.resumePath.empty();
  if (isResumed) {
    if (int32_t st = restoreCheckpoint(o.resumePath, steps, resumed)) {
      synpl_rt_check(st);
      return 1;
    }
    if (!o.quiet)
      std::fprintf(stderr, "synpl: resuming at epoch %" PRId64 ", batch %" PRId64
                           " (step %" PRId64 ") from %s\n",
                   resumed.epoch + 1, resumed.batch, resumed.globalStep,
                   o.resumePath.c_str());
  }
  fillPlannedSteps(steps * o.epochs);
  int64_t killAfter = killAfterSteps();
  // Samples per step of the world (a sharded ingest's global batch): the
  // progress, the metrics and the epoch line count the whole run's.
  int64_t samplesPerStep = ingests.empty() ? 1 : ingests[0].desc->batch * sampleScale();
  if (!o.metricsPath.empty() && lead())
    if (int32_t st = metrics.open(o.metricsPath, samplesPerStep)) {
      synpl_rt_check(st);
      return 1;
    }
  // (A program that reports `correct` but lacks its test files stopped in
  // openData.)
  if (!o.quiet && o.evaluate && !canEval)
    std::fprintf(stderr, "synpl: note: no evaluation (%s); test_accuracy=none\n",
                 correctReport < 0 ? "the program reports no `correct`"
                                   : "the program reads no data");

  synpl_rt_progress *progress =
      o.quiet ? nullptr
              : synpl_rt_progress_create((uint64_t)(steps * o.epochs),
                                         (uint64_t)samplesPerStep,
                                         o.progressInterval, 2);
  // A failed step ends the run with the runtime's one-line message.
  auto abandon = [&](int32_t status) {
    synpl_rt_progress_destroy(progress);
    synpl_rt_check(status);
    return 1;
  };
  double trainSecondsTotal = 0;
  int64_t globalStep = isResumed ? resumed.globalStep : 0;
  for (int64_t epoch = isResumed ? resumed.epoch + 1 : 1; epoch <= o.epochs; ++epoch) {
    for (Ingest &g : ingests) {
      Split &s = g.train;
      s.epoch = epoch;
      if (g.desc->shuffle)
        synpl_rt_epoch_permutation((uint64_t)g.desc->seed, (uint64_t)(epoch - 1),
                                   (uint32_t)s.samples, s.order.data());
    }
    double lossSum = 0;
    int64_t lossCount = 0;
    int64_t firstBatch = 0;
    if (isResumed && epoch == resumed.epoch + 1) {
      firstBatch = resumed.batch;
      lossSum = resumed.lossSum;
      lossCount = resumed.lossCount;
    }
    uint64_t t0 = nowNanos();
    metrics.beginEpoch(globalStep);
    // Each step's reports are read when it is retired: at once on the host,
    // later on a GPU whose next step is already on its way (runStep).
    Tally train;
    train.lossSum = lossSum;
    train.lossCount = lossCount;
    train.stepBase = globalStep;
    train.epoch = epoch;
    train.progress = progress;
    tally = &train;
    for (int64_t b = firstBatch; b < steps; ++b) {
      if (int32_t st = runStep(b, /*train=*/true))
        return abandon(st);
      ++globalStep;
      // Mid-epoch checkpoint (the epoch's last step is covered by the
      // end-of-epoch one below). A stop signal (Signals.h) takes one here
      // too, after every step but the epoch's last (that one stops after
      // the epoch's end, below). Both drain first: on a GPU the steps
      // launched so far finish and are retired before the state is read.
      bool checkpoint =
          o.checkpointEvery > 0 && globalStep % o.checkpointEvery == 0 && b + 1 < steps;
      int stopping = b + 1 < steps ? agreedStop(stopSignal()) : 0;
      if (checkpoint || stopping || globalStep == killAfter)
        if (int32_t st = drain())
          return abandon(st);
      if ((checkpoint || stopping) && !o.checkpointPath.empty())
        if (int32_t st = saveCheckpoint(o.checkpointPath, epoch - 1, b + 1, globalStep,
                                        steps, train.lossSum, train.lossCount))
          return abandon(st);
      if (globalStep == killAfter)
        std::raise(SIGKILL);
      if (stopping) {
        synpl_rt_progress_destroy(progress);
        return !lead() ? 128 + stopping : reportStop(stopping,
                          "step " + std::to_string(globalStep) + " (epoch " +
                              std::to_string(epoch) + ", batch " + std::to_string(b + 1) + ")",
                          o.checkpointPath);
      }
    }
    if (int32_t st = drain())
      return abandon(st);
    lossSum = train.lossSum;
    lossCount = train.lossCount;
    // An epoch that ends with NaN or infinity in its loss or the model's
    // state stops the run before its evaluation and checkpoint (Finite.cpp).
    if (int32_t st = checkEpochFinite(epoch, globalStep, lossSum, lossCount))
      return abandon(st);
    double trainSeconds = (nowNanos() - t0) / 1e9;
    trainSecondsTotal += trainSeconds;

    double accuracy = NAN, evalCorrect = 0, evalSeen = 0;
    if (canEval) {
      if (int32_t st = setTrainingMode(false))
        return abandon(st);
      Tally eval;
      eval.train = false;
      eval.stepBase = globalStep;
      eval.epoch = epoch;
      tally = &eval;
      int64_t seen = 0;
      for (int64_t b = 0; b < testBatches; ++b) {
        if (int32_t st = runStep(b, /*train=*/false))
          return abandon(st);
        seen += batchRows(ingests[0].test, ingests[0].desc->batch, b);
      }
      if (int32_t st = drain())
        return abandon(st);
      if (int32_t st = setTrainingMode(true))
        return abandon(st);
      evalCorrect = eval.correct;
      evalSeen = (double)seen;
    }
    // The world's epoch: every rank's losses and hits (one rank: its own).
    // Hits the plan reduced itself are the world's on every rank: each
    // adds its share.
    if (correctWorldFactor > 0)
      evalCorrect = evalCorrect * (double)correctWorldFactor / (double)ranks();
    double totals[4] = {lossSum, (double)lossCount, evalCorrect, evalSeen};
    if (int32_t st = sumOverRanks(totals, 4))
      return abandon(st);
    if (canEval)
      accuracy = totals[3] > 0 ? totals[2] / totals[3] : NAN;
    double epochLoss = totals[1] > 0 ? totals[0] / totals[1] : NAN;
    double samplesPerS =
        trainSeconds > 0 ? (steps - firstBatch) * samplesPerStep / trainSeconds : 0.0;
    if (lead()) {
      std::printf("epoch=%" PRId64 " loss=%s test_accuracy=%s samples_per_s=%.1f\n", epoch,
                  orNone(epochLoss, "%.6f").c_str(), orNone(accuracy, "%.4f").c_str(),
                  samplesPerS);
      metrics.epoch(epoch, globalStep, epochLoss, accuracy, samplesPerS);
      std::fflush(stdout);
    }
    if (!o.checkpointPath.empty())
      if (int32_t st = saveCheckpoint(o.checkpointPath, epoch, 0, globalStep, steps, 0, 0))
        return abandon(st);
    // A stop signal that came during the epoch's last step or its
    // evaluation stops here, the epoch done (its line printed, its
    // checkpoint written); in the last epoch the run ends as it would.
    if (int stopping = epoch < o.epochs ? agreedStop(stopSignal()) : 0) {
      synpl_rt_progress_destroy(progress);
      return !lead() ? 128 + stopping : reportStop(stopping,
                        "step " + std::to_string(globalStep) + " (end of epoch " +
                            std::to_string(epoch) + ")",
                        o.checkpointPath);
    }
  }
  if (!o.saveWeightsPath.empty())
    if (int32_t st = saveCheckpoint(o.saveWeightsPath, o.epochs, 0, globalStep, steps, 0, 0))
      return abandon(st);
  synpl_rt_progress_destroy(progress);
  if (o.profile && lead())
    printProfile(trainSecondsTotal, globalStep);
  return 0;
}

} // namespace synpl::rt::exec
