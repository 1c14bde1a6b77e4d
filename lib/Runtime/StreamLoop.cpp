//===- StreamLoop.cpp - The training loop of a program that reads text ----===//
//
// A program whose data is a text file (an ingest of format text) trains
// for a number of update steps rather than epochs: the run's length is
// `--steps`, else the compiled `train loop<steps = n>`, else one pass over
// the training windows. Each step draws `batch` windows at random (the
// ingest's shuffled order; when a run outlasts one pass over the windows,
// the next pass takes a fresh order). Every `--report-every` steps (default
// a fifth of the run) and at the end it evaluates the validation split: the
// mean loss over a fixed set of validation windows (`--eval-batches`
// batches, default 20, the same windows every time), and prints
//
//   step=S loss=L val_loss=V tokens_per_s=T
//   done steps=S val_loss=V val_bits_per_byte=B tokens_per_s=T
//
// where L is the mean training loss since the previous line, V the
// validation loss in nats per token, B = V / ln 2 and T the tokens (window
// positions) trained per second of training (evaluation not counted).
// A value not measured (V and B under --no-eval) is `none`.
//
// Checkpoints (--checkpoint, --checkpoint-every N, --resume) hold the step
// reached as the position of a run of one epoch whose length is the run's
// step count, the loss accumulated since the last report line, and the
// state; the windows of a step are a function of the ingest's seed and the
// step, so a resumed run trains on what the uninterrupted one would and
// ends with the same state. A checkpoint at a step with a report line is
// written after the line.
//
// SIGTERM and SIGINT (Signals.h) stop the run after the step in progress
// (after its report line, when it has one: a validation is not cut short)
// with a checkpoint there, and the exit status 128 + the signal; one that
// comes during the last step lets the run end as it would.
//
// A sharded text ingest in a world of several ranks: each step is a
// global batch of ranks x `batch` windows of the pass's order, each rank
// its slice (Ingest.cpp's gather); a pass and the validation windows are
// counted in global batches, and the losses printed are the world's.
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

int Executor::runStream() {
  const Ingest &g0 = ingests[0];
  int64_t batch = g0.desc->batch;
  // The world's tokens per step (a sharded ingest: every rank's windows).
  int64_t tokensPerStep = batch * g0.train.fields[0].sampleBytes * sampleScale();
  int64_t perPass = std::max<int64_t>(1, numBatches(g0.train, batch, /*dropLast=*/true));
  for (const Ingest &g : ingests)
    perPass = std::min(perPass, numBatches(g.train, g.desc->batch, true));
  int64_t steps = o.maxSteps > 0 ? o.maxSteps : perPass;
  int64_t every = o.reportEvery > 0 ? o.reportEvery : std::max<int64_t>(1, steps / 5);
  bool canEval = o.evaluate && evalLoss;
  int64_t evalBatches = 0;
  if (canEval) {
    evalBatches = o.evalBatches > 0 ? o.evalBatches : 20;
    // The validation windows: one fixed random order, drawn once.
    for (Ingest &g : ingests) {
      if (!g.hasTest) {
        canEval = false;
        break;
      }
      Split &t = g.test;
      synpl_rt_epoch_permutation((uint64_t)g.desc->seed + 1, 0, (uint32_t)t.samples,
                                 t.order.data());
      evalBatches = std::min(evalBatches, numBatches(t, g.desc->batch, true));
    }
    canEval = canEval && evalBatches > 0;
  }
  // Resuming: the run is one epoch of `steps` steps.
  Checkpoint resumed;
  int64_t first = 0;
  if (!o.resumePath.empty()) {
    if (int32_t st = restoreCheckpoint(o.resumePath, steps, resumed)) {
      synpl_rt_check(st);
      return 1;
    }
    // A checkpoint of the finished run (epoch 1 done) leaves nothing to train.
    first = resumed.epoch >= 1 ? steps : resumed.batch;
    if (!o.quiet)
      std::fprintf(stderr, "synpl: resuming at step %" PRId64 " of %" PRId64 " from %s\n",
                   first, steps, o.resumePath.c_str());
  }
  fillPlannedSteps(steps);
  int64_t killAfter = killAfterSteps();
  if (!o.metricsPath.empty() && lead())
    if (int32_t st = metrics.open(o.metricsPath, batch * sampleScale())) {
      synpl_rt_check(st);
      return 1;
    }

  Tally train;
  train.epoch = 1;
  // Called between steps, with nothing in flight.
  auto validate = [&](double &out) -> int32_t {
    out = NAN;
    if (!canEval)
      return SYNPL_RT_OK;
    if (int32_t st = setTrainingMode(false))
      return st;
    Tally eval;
    eval.train = false;
    eval.stepBase = train.stepBase + train.retired;
    tally = &eval;
    for (int64_t b = 0; b < evalBatches; ++b)
      if (int32_t st = runStep(b, /*train=*/false))
        return st;
    if (int32_t st = drain())
      return st;
    if (int32_t st = setTrainingMode(true))
      return st;
    tally = &train;
    // The world's validation loss (a sharded ingest: every rank's windows).
    double sums[2] = {eval.lossSum, (double)eval.lossCount};
    if (int32_t st = sumOverRanks(sums, 2))
      return st;
    out = sums[1] > 0 ? sums[0] / sums[1] : NAN;
    return SYNPL_RT_OK;
  };
  auto abandon = [&](int32_t status) {
    synpl_rt_check(status);
    return 1;
  };
  tally = &train;
  train.stepBase = first; // steps are counted from the run's start
  // The loss since the last report line, as the checkpoint left it.
  train.lossSum = resumed.lossSum;
  train.lossCount = resumed.lossCount;
  double trainSeconds = 0, lastSum = 0;
  int64_t lastCount = 0;
  // The mean training loss since the last line, over the world's ranks.
  auto worldLoss = [&](double &out) -> int32_t {
    double sums[2] = {train.lossSum - lastSum, (double)(train.lossCount - lastCount)};
    if (int32_t st = sumOverRanks(sums, 2))
      return st;
    out = sums[1] > 0 ? sums[0] / sums[1] : NAN;
    return SYNPL_RT_OK;
  };
  uint64_t t0 = nowNanos();
  for (int64_t s = first; s < steps; ++s) {
    int64_t pass = s / perPass, b = s % perPass;
    if (b == 0 || s == first)
      for (Ingest &g : ingests) {
        g.train.epoch = pass + 1;
        if (g.desc->shuffle)
          synpl_rt_epoch_permutation((uint64_t)g.desc->seed, (uint64_t)pass,
                                     (uint32_t)g.train.samples, g.train.order.data());
      }
    if (int32_t st = runStep(b, /*train=*/true))
      return abandon(st);
    bool last = s + 1 == steps;
    if ((s + 1) % every == 0 && !last) {
      if (int32_t st = drain())
        return abandon(st);
      trainSeconds += (nowNanos() - t0) / 1e9;
      double val;
      if (int32_t st = validate(val))
        return abandon(st);
      double loss;
      if (int32_t st = worldLoss(loss))
        return abandon(st);
      lastSum = train.lossSum;
      lastCount = train.lossCount;
      double tokensPerS = trainSeconds > 0 ? (s + 1) * tokensPerStep / trainSeconds : 0.0;
      if (lead()) {
        std::printf("step=%" PRId64 " loss=%s val_loss=%s tokens_per_s=%.0f\n", s + 1,
                    orNone(loss, "%.4f").c_str(), orNone(val, "%.4f").c_str(), tokensPerS);
        metrics.eval(s + 1, loss, val, tokensPerS);
        std::fflush(stdout);
      }
      t0 = nowNanos();
    }
    // A checkpoint after the step's report line (its loss since the line is
    // then the line's own: none). A stop signal (Signals.h) takes one too,
    // after any step but the last (the run then ends as it would); both
    // drain first, so on a GPU every step launched is done and retired.
    bool checkpoint = o.checkpointEvery > 0 && (s + 1) % o.checkpointEvery == 0 && !last;
    int stopping = last ? 0 : agreedStop(stopSignal());
    if (checkpoint || stopping || s + 1 == killAfter) {
      if (int32_t st = drain())
        return abandon(st);
      if ((checkpoint || stopping) && !o.checkpointPath.empty())
        if (int32_t st = saveCheckpoint(o.checkpointPath, 0, s + 1, s + 1, steps,
                                        train.lossSum - lastSum, train.lossCount - lastCount))
          return abandon(st);
      if (s + 1 == killAfter)
        std::raise(SIGKILL);
      if (stopping)
        return !lead() ? 128 + stopping : reportStop(stopping,
                          "step " + std::to_string(s + 1) + " of " + std::to_string(steps),
                          o.checkpointPath);
    }
  }
  if (int32_t st = drain())
    return abandon(st);
  // The run's end: NaN or infinity in the model's state stops it before
  // its last lines and checkpoint (Finite.cpp).
  if (int32_t st = checkStateFinite("step " + std::to_string(steps) + " (the run's end)",
                                    "the run stops without writing its final checkpoint (its "
                                    "last checkpoint, if any, is unchanged)"))
    return abandon(st);
  trainSeconds += (nowNanos() - t0) / 1e9;
  double loss;
  if (int32_t st = worldLoss(loss))
    return abandon(st);
  double val;
  if (int32_t st = validate(val))
    return abandon(st);
  double tps = trainSeconds > 0 ? steps * tokensPerStep / trainSeconds : 0.0;
  if (lead()) {
    std::printf("step=%" PRId64 " loss=%s val_loss=%s tokens_per_s=%.0f\n", steps,
                orNone(loss, "%.4f").c_str(), orNone(val, "%.4f").c_str(), tps);
    std::printf("done steps=%" PRId64 " val_loss=%s val_bits_per_byte=%s tokens_per_s=%.0f\n",
                steps, orNone(val, "%.4f").c_str(),
                orNone(val / std::log(2.0), "%.3f").c_str(), tps);
    metrics.eval(steps, loss, val, tps);
    metrics.done(steps, val, tps);
    std::fflush(stdout);
  }
  // The run's end: the state after its last step (epoch 1 of 1 done).
  if (!o.checkpointPath.empty())
    if (int32_t st = saveCheckpoint(o.checkpointPath, 1, 0, steps, steps, 0, 0))
      return abandon(st);
  if (!o.saveWeightsPath.empty())
    if (int32_t st = saveCheckpoint(o.saveWeightsPath, 1, 0, steps, steps, 0, 0))
      return abandon(st);
  if (o.profile && lead())
    printProfile(trainSeconds, steps);
  return 0;
}

} // namespace synpl::rt::exec
